#!/usr/bin/env python3
"""k-quant GGUF fixtures written by llama.cpp's own quantizer, and llama.cpp's logits on them
(issue 36). Not part of the test command's set-up: llama-cpp-python builds llama.cpp from
source (about 15 minutes on 2 cores). Run once, by hand, and commit what it writes:

    python3 -m venv /tmp/lcpp-venv
    /tmp/lcpp-venv/bin/pip install llama-cpp-python==0.3.36 gguf==0.19.0 numpy==2.4.6
    /tmp/lcpp-venv/bin/python scripts/make-kquant-fixtures.py assets/models/stories260K tests/fixtures/kquant

Written to OUT_DIR:

- kq-<type>.gguf for Q4_K_M, Q5_K_M and Q6_K: a seeded random Llama (dim 256, hidden 256,
  2 layers, 4 heads / 1 K/V head, stories260K's 512-token vocabulary, tied classifier:
  every row a multiple of 256, as k-quants need) written as F32 by the `gguf` package, then
  quantized by `llama_model_quantize` (Q4_K_M mixes Q4_K and Q6_K across layers).
- kq-<type>.logits: llama.cpp's next-token logits (float32, little-endian, 512 a position)
  at every position of PROMPT, read with `logits_all`.
- SHA256SUMS: the files' digests, which the tests check.
"""
import ctypes
import hashlib
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama2c_gguf import read_llama2c, read_tokenizer, tiny_weights, write_gguf  # noqa: E402
from llama_cpp_ref import llama_logits  # noqa: E402

# BOS, then stories260K's ids of "Once upon a time, there was a little" (tests/gguf.rs' TOKENS)
PROMPT = [1, 403, 407, 261, 378, 432, 383, 409, 261, 498, 20, 7]
# llama.h's llama_ftype values
FTYPES = {"q4_k_m": 15, "q5_k_m": 17, "q6_k": 18}


def main():
    import llama_cpp

    model_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg, _ = read_llama2c(model_dir / "stories260K.bin")
    pieces, scores = read_tokenizer(model_dir / "tok512.bin", cfg["vocab"])
    shape = dict(dim=256, hidden=256, layers=2, heads=4, kv_heads=1, vocab=cfg["vocab"],
                 seq_len=64, shared=True)
    w = tiny_weights(shape, seed=11)
    del w["wcls"]
    # weights of std 0.06 (tiny_weights' 0.2 × 0.3, about 1/√dim, as a trained model's
    # init): at 0.2 the random model amplifies every rounding through its layers, and
    # llama.cpp's own int8 activations alone move its log-probabilities by ~10 %
    for k in ["token_embedding", "wq", "wk", "wv", "wo", "w1", "w2", "w3"]:
        w[k] = (w[k] * 0.3).astype(np.float32)
    f32 = out_dir / "kq-f32.gguf"
    write_gguf(f32, shape, w, pieces, scores, Q.F32)
    sums = []
    for name, ftype in FTYPES.items():
        out = out_dir / f"kq-{name}.gguf"
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = ftype
        params.nthread = 1
        rc = llama_cpp.llama_model_quantize(str(f32).encode(), str(out).encode(), ctypes.byref(params))
        if rc != 0:
            raise SystemExit(f"llama_model_quantize {name}: {rc}")
        logits = llama_logits(llama_cpp, out, PROMPT)
        (out_dir / f"kq-{name}.logits").write_bytes(logits.tobytes())
        for p in (out, out_dir / f"kq-{name}.logits"):
            sums.append(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}")
    f32.unlink()
    (out_dir / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    print(f"wrote k-quant fixtures to {out_dir}")


if __name__ == "__main__":
    main()
