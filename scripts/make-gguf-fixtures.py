#!/usr/bin/env python3
"""GGUF test files written by llama.cpp's own `gguf` package (PyPI), not by our code.

    make-gguf-fixtures.py MODEL_DIR OUT_DIR

MODEL_DIR holds stories260K.bin and tok512.bin (llama2.c files). Written to OUT_DIR:

- stories260K.gguf: stories260K's weights (F32) with its tokenizer as GGUF metadata
  (`tokenizer.ggml.model = llama`: SentencePiece pieces with "▁", scores, token types).
- tiny.bin: a seeded random Llama (dim 64, hidden 128, 2 layers, 4 heads / 2 K/V heads,
  vocab 512, context 64, untied classifier) in llama2.c's float32 format, and the same
  weights as tiny-f32.gguf, tiny-f16.gguf, tiny-q8_0.gguf, tiny-q4_0.gguf (every matrix in
  that type; norms F32 as llama.cpp writes them), each with tiny-<type>-deq.bin: the
  llama2.c float32 file of what that GGUF's tensors dequantize to (gguf.quants.dequantize),
  the reference a loader of it must match.

Only numpy and gguf are used (the reading and writing are in scripts/llama2c_gguf.py).
"""
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama2c_gguf import read_llama2c, read_tokenizer, tiny_weights, write_gguf, write_llama2c  # noqa: E402


def main():
    model_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg, w = read_llama2c(model_dir / "stories260K.bin")
    pieces, scores = read_tokenizer(model_dir / "tok512.bin", cfg["vocab"])
    write_gguf(out_dir / "stories260K.gguf", cfg, w, pieces, scores, Q.F32)
    tiny = dict(dim=64, hidden=128, layers=2, heads=4, kv_heads=2, vocab=cfg["vocab"],
                seq_len=64, shared=False)
    tw = tiny_weights(tiny)
    write_llama2c(out_dir / "tiny.bin", tiny, tw)
    for name, qtype in [("f32", Q.F32), ("f16", Q.F16), ("q8_0", Q.Q8_0), ("q4_0", Q.Q4_0)]:
        deq = write_gguf(out_dir / f"tiny-{name}.gguf", tiny, tw, pieces, scores, qtype)
        write_llama2c(out_dir / f"tiny-{name}-deq.bin", tiny, deq)
    # The fuzzer's seed (fuzz/corpus/gguf/seed-small-q8_0): as small as a working file gets.
    small = dict(dim=32, hidden=32, layers=1, heads=2, kv_heads=1, vocab=cfg["vocab"],
                 seq_len=8, shared=True)
    sw = tiny_weights(small, seed=3)
    del sw["wcls"]
    write_gguf(out_dir / "small-q8_0.gguf", small, sw, pieces, scores, Q.Q8_0)
    print(f"wrote GGUF fixtures to {out_dir}")


if __name__ == "__main__":
    main()
