#!/usr/bin/env python3
"""llama.cpp's own token ids for SentencePiece GGUF vocabularies with their special tokens
written in the text (`<s>`, `</s>`, as a chat template renders them): the reference the
tests hold `Tokenizer::encode_chat` to (llama.cpp's `parse_special`: a special token's text
is that token, each run of text between them encoded on its own, a space put before a run
that follows a special token). Not part of the test command's set-up: it needs llama.cpp's
`llama-tokenize`, built from the llama.cpp that llama-cpp-python 0.3.36 vendors on PyPI
(`cmake -B build && cmake --build build --target llama-tokenize`, a few minutes). Run by hand
after the set-up and commit what it writes:

    scripts/llama-cpp-spm-reference.py path/to/llama-tokenize tests/fixtures/arch

Written to OUT_DIR/llama-cpp-spm.json: llama-tokenize's version line, and for each file its
sha256 (the tests check that the set-up wrote the same file) and, for each text, the ids
with the BOS llama.cpp adds (`ids`) and without it (`ids_no_bos`, `--no-bos`).
"""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ["assets/models/fixtures/gguf/small-chat.gguf", "assets/models/fixtures/vocab/spm-32000.gguf"]
TEXTS = [
    "<s>[INST] Hi [/INST]",
    "[INST] Hi [/INST]",
    "A</s>B",
    "<s>A</s>B",
    "<s>[INST] Once upon a time </s><s>[INST] there was </s>",
    "x <s>y</s> z",
]


def ids(tool, model, text, bos):
    args = [tool, "-m", str(model), "-p", text, "--ids", "--log-disable"]
    if not bos:
        args.append("--no-bos")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    tool, out_dir = sys.argv[1], Path(sys.argv[2])
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stderr.strip().splitlines()[0]
    files = {}
    for rel in FILES:
        path = ROOT / rel
        files[Path(rel).name] = {
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "texts": [{"text": t, "ids": ids(tool, path, t, True), "ids_no_bos": ids(tool, path, t, False)}
                      for t in TEXTS],
        }
    out = {"llama_cpp": f"llama-tokenize {version} (vendored by llama-cpp-python 0.3.36)", "files": files}
    (out_dir / "llama-cpp-spm.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
