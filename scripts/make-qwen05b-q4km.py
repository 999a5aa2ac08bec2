#!/usr/bin/env python3
"""A file the size of the ones people download, for the page's size check by hand: a seeded
random model of Qwen2.5-0.5B's shape and metadata (qwen2, hidden 896, intermediate 4864, 24
layers, 14 query / 2 K/V heads, vocabulary 151,936, tied, θ 1,000,000,
ε 1e-6, context 32,768, a ChatML template), written as F32 GGUF by the `gguf` package, then
quantized to Q4_K_M by llama.cpp's own `llama_model_quantize` (about 400 MB). Not part of
any test: the files are hundreds of MB. Run with the venv of make-kquant-fixtures.py --reference:

    /tmp/lcpp-venv/bin/python scripts/make-qwen05b-q4km.py OUT_DIR [1.5b]

With `1.5b`, Qwen2.5-1.5B's shape instead (hidden 1536, intermediate 8960, 28 layers,
12 / 2 heads): about 1 GB as Q4_K_M, held as its own blocks (0.94 GB); with the KV cache at
the page's context of 4,096 (235 MB) and a prefill chunk's activations it fits the page's
1.5 GiB (2026-12-07: loads in about 10 s in headless Chromium and decodes; natively 1.05x
the file's size resident). Before prefill ran in chunks the page refused it at 1.51 GiB.

Run by hand without building llama-cpp-python: its sdist's `llama_cpp` package on PYTHONPATH
and LLAMA_CPP_LIB_PATH naming the folder of a `libllama.so` built from its vendor/llama.cpp
(a venv with gguf, numpy, tokenizers, safetensors, diskcache, jinja2).

The vocabulary is make-arch-fixtures.py's 420 trained byte-level BPE tokens padded with
distinct normal tokens to 151,936 (a real file's count; the padding is never produced by
the merges).
"""
import ctypes
import sys
from pathlib import Path

import gguf
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("arch", Path(__file__).parent / "make-arch-fixtures.py")
arch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(arch)

SHAPE = dict(dim=896, hidden=4864, layers=24, heads=14, kv_heads=2, vocab=151936,
             seq_len=32768, shared=True, rope_theta=1000000.0, rms_eps=1e-6)
if sys.argv[2:] == ["1.5b"]:
    SHAPE.update(dim=1536, hidden=8960, layers=28, heads=12, kv_heads=2)


def main():
    import llama_cpp
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    tokens, merges, types = arch.vocab_of(arch.bpe_tokenizer())
    pad = SHAPE["vocab"] - len(tokens)
    tokens = tokens + [f"<pad_{i}>" for i in range(pad)]
    types = types + [gguf.TokenType.NORMAL] * pad
    rng = np.random.default_rng(5)
    d, h, kv = SHAPE["dim"], SHAPE["hidden"], SHAPE["kv_heads"] * SHAPE["dim"] // SHAPE["heads"]
    r = lambda *s: (rng.standard_normal(s, dtype=np.float32) * 0.02)
    t = {"token_embd.weight": r(SHAPE["vocab"], d), "output_norm.weight": np.ones(d, np.float32)}
    for l in range(SHAPE["layers"]):
        p = f"blk.{l}."
        t.update({p + "attn_norm.weight": np.ones(d, np.float32), p + "ffn_norm.weight": np.ones(d, np.float32),
                  p + "attn_q.weight": r(d, d), p + "attn_k.weight": r(kv, d), p + "attn_v.weight": r(kv, d),
                  p + "attn_q.bias": r(d), p + "attn_k.bias": r(kv), p + "attn_v.bias": r(kv),
                  p + "attn_output.weight": r(d, d), p + "ffn_gate.weight": r(h, d),
                  p + "ffn_up.weight": r(h, d), p + "ffn_down.weight": r(d, h)})
    name = "qwen15b" if sys.argv[2:] == ["1.5b"] else "qwen05b"
    f32 = out_dir / f"{name}-f32.gguf"
    arch.write_gguf(f32, "qwen2", SHAPE, t, (tokens, merges, types), "qwen2",
                    {"add_chat_template": arch.CHATML, "add_add_bos_token": False})
    del t
    out = out_dir / f"{name}-q4_k_m.gguf"
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = 15  # LLAMA_FTYPE_MOSTLY_Q4_K_M
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(str(f32).encode(), str(out).encode(), ctypes.byref(params))
    if rc != 0:
        raise SystemExit(f"llama_model_quantize: {rc}")
    f32.unlink()
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
