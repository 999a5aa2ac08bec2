#!/usr/bin/env python3
"""The size rules the code keeps, checked on every test run (scripts/test.sh):

- no source file over 600 lines (Rust, WGSL, JavaScript, CSS, shell, Python);
- no Rust function over 90 lines, except a view (a Leptos component, or a function that
  returns `impl IntoView`), which may take 120;
- ARCHITECTURE.md at most 1,500 words.

A function's length runs from its `fn` line to its closing brace. Prints every breach with
its place and exits 1 if there is one.
"""
import re
import subprocess
import sys
from pathlib import Path

FILE_LINES = 600
FN_LINES = 90
VIEW_LINES = 120
ARCH_WORDS = 1500
SOURCE = (".rs", ".wgsl", ".js", ".mjs", ".css", ".sh", ".py", ".html")

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")


def tracked(root):
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
    return [root / p for p in out.stdout.decode().split("\0") if p]


def strip(line):
    """The line without its string and char literals and its // comment (braces in them do
    not count)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def functions(lines):
    """(name, first line, length, is_view) of every fn with a body."""
    found = []
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        name = m.group(7)
        attrs = " ".join(lines[max(0, i - 4):i])
        depth, j, opened, signature = 0, i, False, ""
        while j < len(lines):
            code = strip(lines[j])
            if not opened:
                signature += code
            for ch in code:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if not opened and code.rstrip().endswith(";"):
                break  # a declaration without a body (a trait's)
            if opened and depth <= 0:
                break
            j += 1
        if opened:
            view = "#[component]" in attrs or "IntoView" in signature
            found.append((name, i + 1, j - i + 1, view))
        i += 1
    return found


def main():
    root = Path(__file__).resolve().parent.parent
    breaches = []
    for path in tracked(root):
        rel = path.relative_to(root)
        if path.suffix not in SOURCE or not path.is_file() or rel.parts[0] in ("fuzz",) and "corpus" in rel.parts:
            continue
        text = path.read_text(errors="replace").splitlines()
        if len(text) > FILE_LINES:
            breaches.append(f"{rel}: {len(text)} lines (at most {FILE_LINES})")
        if path.suffix == ".rs":
            for name, at, n, view in functions(text):
                limit = VIEW_LINES if view else FN_LINES
                if n > limit:
                    kind = "view" if view else "function"
                    breaches.append(f"{rel}:{at}: {kind} {name} is {n} lines (at most {limit})")
    words = len((root / "ARCHITECTURE.md").read_text().split())
    if words > ARCH_WORDS:
        breaches.append(f"ARCHITECTURE.md: {words} words (at most {ARCH_WORDS})")
    for b in breaches:
        print(b)
    if breaches:
        print(f"check-sizes: {len(breaches)} breach(es) of the size rules")
        return 1
    print("check-sizes: every file, function and view within its size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
