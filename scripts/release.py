#!/usr/bin/env python3
"""Trunk's post-build hook (Trunk.toml): stamps the page's release into its files, so that
the service worker (www/sw.js) keeps the page and its engine together.

The release is a hash of every file the page is made of (names and contents; the model
fixtures under models/fixtures/ are test files, not the page's). It is written into
index.html (`<meta name="decoding-release">`) and into sw.js (`VERSION`, and `FILES`, the
files the service worker keeps for offline use). A new build that changes any file changes
sw.js, which is how a browser learns of the update.

Usage: release.py [DIR] (default: $TRUNK_STAGING_DIR).
"""
import hashlib
import json
import os
import sys
from pathlib import Path

SKIP_DIRS = ("models/fixtures/",)
SKIP_FILES = ("sw.js",)


def files(root):
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(SKIP_DIRS) and rel not in SKIP_FILES and not rel.startswith("."):
            out.append(rel)
    return out


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
    listed = files(root)
    h = hashlib.sha256()
    for rel in listed:
        h.update(rel.encode() + b"\0" + hashlib.sha256((root / rel).read_bytes()).digest())
    version = h.hexdigest()[:16]
    index = root / "index.html"
    html = index.read_text()
    stamp = '<meta name="decoding-release" content="dev" />'
    if stamp not in html:
        sys.exit(f"release.py: {index} has no {stamp}")
    index.write_text(html.replace(stamp, f'<meta name="decoding-release" content="{version}" />'))
    sw = root / "sw.js"
    js = sw.read_text()
    for marker in ("const VERSION = 'dev';", "const FILES = [];"):
        if marker not in js:
            sys.exit(f"release.py: {sw} has no {marker}")
    kept = listed
    js = js.replace("const VERSION = 'dev';", f"const VERSION = '{version}';")
    js = js.replace("const FILES = [];", f"const FILES = {json.dumps(kept)};")
    sw.write_text(js)
    print(f"release {version}: {len(kept)} files kept by the service worker")


if __name__ == "__main__":
    main()
