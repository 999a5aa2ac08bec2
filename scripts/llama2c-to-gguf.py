#!/usr/bin/env python3
"""A legacy llama2.c checkpoint and tokenizer.bin as a GGUF file (f32 or Q8_0), for timing
llama.cpp on the same weights as ours (scripts/bench-quantized.sh). Needs the
`gguf` and `numpy` packages from PyPI; the conversion is scripts/llama2c_gguf.py's (shared
with the test files of scripts/make-gguf-fixtures.py).

    llama2c-to-gguf.py model.bin tokenizer.bin out.gguf [f32|q8_0]

The tensors get llama.cpp's LLaMA names (token_embd, blk.N.attn_q, ffn_gate = w1,
ffn_down = w2, ffn_up = w3, output_norm, and output unless shared: llama.cpp then ties it to
token_embd, read once).
"""
import sys
from pathlib import Path

from gguf import GGMLQuantizationType as Q

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama2c_gguf import read_llama2c, read_tokenizer, write_gguf  # noqa: E402


def main():
    model, tok, out = sys.argv[1:4]
    kind = sys.argv[4] if len(sys.argv) > 4 else "q8_0"
    qtype = {"f32": Q.F32, "q8_0": Q.Q8_0}[kind]
    cfg, w = read_llama2c(model)
    pieces, scores = read_tokenizer(tok, cfg["vocab"])
    write_gguf(out, cfg, w, pieces, scores, qtype)


if __name__ == "__main__":
    main()
