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
  the reference a loader of it must match. The same for BF16, Q4_1, Q5_0 and Q5_1
  (tiny-bf16.gguf …), which gguf quantizes too.
- small-q8_0.gguf, the fuzzer's seed; small-chat.gguf, the same with a chat template.
- blocks-<type>.bin and blocks-<type>.f32: random blocks of each type a GGUF reader takes
  (the f16 scales finite), and what `gguf.quants.dequantize` makes of them (little-endian
  float32): the reference of our block decoders, block by block, for the k-quants too
  (which gguf dequantizes but does not quantize).

Only numpy and gguf are used (the reading and writing are in scripts/llama2c_gguf.py).
"""
import sys
from pathlib import Path

import gguf
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
    for name, qtype in [("f32", Q.F32), ("f16", Q.F16), ("q8_0", Q.Q8_0), ("q4_0", Q.Q4_0),
                        ("bf16", Q.BF16), ("q4_1", Q.Q4_1), ("q5_0", Q.Q5_0), ("q5_1", Q.Q5_1)]:
        deq = write_gguf(out_dir / f"tiny-{name}.gguf", tiny, tw, pieces, scores, qtype)
        write_llama2c(out_dir / f"tiny-{name}-deq.bin", tiny, deq)
    # The fuzzer's seed (fuzz/corpus/gguf/seed-small-q8_0): as small as a working file gets.
    small = dict(dim=32, hidden=32, layers=1, heads=2, kv_heads=1, vocab=cfg["vocab"],
                 seq_len=8, shared=True)
    sw = tiny_weights(small, seed=3)
    del sw["wcls"]
    write_gguf(out_dir / "small-q8_0.gguf", small, sw, pieces, scores, Q.Q8_0)
    # A SentencePiece vocabulary with a chat template (Llama 2's [INST] form): our llama2.c
    # encoder would read its <s> and [INST] as text, so chat is refused for it.
    write_gguf(out_dir / "small-chat.gguf", small, sw, pieces, scores, Q.Q8_0,
               chat_template="{{ bos_token }}[INST] {{ messages[0]['content'] }} [/INST]")
    write_blocks(out_dir)
    print(f"wrote GGUF fixtures to {out_dir}")


# Byte offsets of each block's f16 fields (ggml-common.h), set to finite values.
F16_FIELDS = {Q.Q8_0: [0], Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2],
              Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}


def write_blocks(out_dir, blocks=64):
    rng = np.random.default_rng(7)
    for qtype in [Q.F16, Q.BF16, *F16_FIELDS]:
        size = gguf.constants.GGML_QUANT_SIZES[qtype][1]
        raw = rng.integers(0, 256, size=(blocks, size), dtype=np.uint8)
        if qtype in (Q.F16, Q.BF16):
            # numbers, not NaN or infinity: random float32 values' high halves, or f16s
            x = rng.standard_normal(blocks).astype(np.float32) * 3
            raw = (x.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8).reshape(blocks, 2) \
                if qtype == Q.BF16 else x.astype(np.float16).view(np.uint8).reshape(blocks, 2)
        for at in F16_FIELDS.get(qtype, []):
            d = rng.uniform(-0.5, 0.5, size=blocks).astype(np.float16)
            d[0] = 0.0  # a block whose scale is 0
            raw[:, at:at + 2] = d.view(np.uint8).reshape(blocks, 2)
        values = gguf.quants.dequantize(raw, qtype).astype("<f4")
        name = qtype.name.lower()
        (out_dir / f"blocks-{name}.bin").write_bytes(raw.tobytes())
        (out_dir / f"blocks-{name}.f32").write_bytes(values.tobytes())


if __name__ == "__main__":
    main()
