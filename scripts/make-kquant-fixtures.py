#!/usr/bin/env python3
"""k-quant GGUF test files quantized by llama.cpp's own quantizer, which the
set-up compiles from llama.cpp's source on PyPI: no model file is committed.

    make-kquant-fixtures.py MODEL_DIR OUT_DIR            (scripts/make-fixtures.sh runs this)
    make-kquant-fixtures.py --reference MODEL_DIR REF_DIR   (by hand, with llama-cpp-python)

The model: a seeded random Llama (dim 256, hidden 256, 2 layers, 4 heads / 1 K/V head,
stories260K's 512-token vocabulary, tied classifier: every row a multiple of 256, as k-quants
need), quantized as Q4_K_M (Q4_K and Q6_K across layers), Q5_K_M and Q6_K.

Set-up mode writes OUT_DIR/kq-<type>.gguf. It downloads the llama-cpp-python 0.3.36 source
from PyPI (sha256 checked), compiles only ggml's `ggml-quants.c` into a library kept in the
fixtures' virtual environment, quantizes each matrix with `quantize_row_q{4,5,6}_K_ref` (what
`llama_model_quantize` calls when no importance matrix is given: ggml-quants.c
`quantize_q4_K`), chooses each tensor's type by llama.cpp's rule (`tensor_types` below) and
writes the file in the order llama.cpp writes it. The file must be byte for byte the one
llama.cpp wrote: its SHA-256 is checked against tests/fixtures/kquant/SHA256SUMS.

Reference mode (run once, by hand: llama-cpp-python builds llama.cpp, about 15 minutes on
2 cores; or its source's `llama_cpp` package on PYTHONPATH with LLAMA_CPP_LIB_PATH naming a
`libllama.so` built from the same sdist's vendor/llama.cpp) writes the F32 model with the `gguf` package, quantizes it with
`llama_model_quantize`, and commits to REF_DIR what the tests compare with: SHA256SUMS (the
files llama.cpp wrote) and kq-<type>.logits, llama.cpp's next-token logits (float32,
little-endian, 512 a position) at every position of PROMPT, with a float32 KV cache and flash
attention off (its f16 rounding of V is llama.cpp's attention, not the k-quants' products):

    python3 -m venv /tmp/lcpp-venv
    /tmp/lcpp-venv/bin/pip install llama-cpp-python==0.3.36 gguf==0.19.0 numpy==2.4.6
    /tmp/lcpp-venv/bin/python scripts/make-kquant-fixtures.py --reference \\
        assets/models/stories260K tests/fixtures/kquant
"""
import ctypes
import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama2c_gguf import (  # noqa: E402
    LAYER_NAMES, add_llama_metadata, finish, read_llama2c, read_tokenizer, tiny_weights,
    write_gguf)

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests/fixtures/kquant"
# BOS, then stories260K's ids of "Once upon a time, there was a little" (tests/gguf.rs' TOKENS)
PROMPT = [1, 403, 407, 261, 378, 432, 383, 409, 261, 498, 20, 7]
# llama.h's llama_ftype values, and each one's base tensor type (llama-quant.cpp
# `llama_ftype_get_default_type`)
FTYPES = {"q4_k_m": (15, Q.Q4_K), "q5_k_m": (17, Q.Q5_K), "q6_k": (18, Q.Q6_K)}

SDIST = ("https://files.pythonhosted.org/packages/ec/e9/"
         "e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/"
         "llama_cpp_python-0.3.36.tar.gz")
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
GGML = "llama_cpp_python-0.3.36/vendor/llama.cpp/ggml/"
GGML_SOURCES = ["src/ggml-quants.c", "src/ggml-quants.h", "src/ggml-common.h", "src/ggml-impl.h",
                "src/ggml-cpu/ggml-cpu-impl.h"]
# ggml-quants.c calls these from ggml.c only on paths the _ref quantizers never take
SHIMS = r"""
#include <stdio.h>
#include <stdlib.h>
#define NOT_HERE(f) { fprintf(stderr, "ggml-quants shim: %s is not built\n", f); abort(); }
void ggml_abort(const char *file, int line, const char *fmt, ...) {
    fprintf(stderr, "ggml_abort at %s:%d\n", file, line); abort(); }
size_t ggml_row_size(int type, long long ne) NOT_HERE("ggml_row_size")
size_t ggml_type_size(int type) NOT_HERE("ggml_type_size")
const char *ggml_type_name(int type) NOT_HERE("ggml_type_name")
"""


def model(model_dir):
    """(shape, float32 weights in llama2.c's layout, pieces, scores) of the test model."""
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
    return shape, w, pieces, scores


def tensor_types(name, n_layers):
    """{tensor name: type} as llama.cpp's `llama_tensor_get_type` (llama-quant.cpp, 0.3.36)
    chooses for a Llama without an importance matrix: the tied classifier (token_embd) is
    Q6_K; under Q4_K_M and Q5_K_M, attn_v and ffn_down are Q6_K in the layers
    `use_more_bits` picks; every other matrix is the file type's base type."""
    base = FTYPES[name][1]

    def use_more_bits(i, n):
        return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2

    types = {"token_embd.weight": Q.Q6_K}
    for short in LAYER_NAMES.values():
        if short.endswith("_norm"):
            continue  # vectors stay F32
        for l in range(n_layers):
            more = short in ("attn_v", "ffn_down") and name != "q6_k" and use_more_bits(l, n_layers)
            types[f"blk.{l}.{short}.weight"] = Q.Q6_K if more else base
    return types


def ggml_quantizer():
    """ggml-quants.c from llama.cpp's source on PyPI, compiled once into the virtual
    environment this runs in."""
    lib = Path(sys.prefix) / "ggml-quants-0.3.36.so"
    if not lib.exists():
        print(f"kquant: downloading llama.cpp's source ({SDIST.rsplit('/', 1)[1]}) from PyPI")
        raw = urllib.request.urlopen(SDIST, timeout=300).read()
        got = hashlib.sha256(raw).hexdigest()
        if got != SDIST_SHA256:
            raise SystemExit(f"kquant: {SDIST} has sha256 {got}, not {SDIST_SHA256}")
        with tempfile.TemporaryDirectory() as tmp, tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            headers = [m.name[len(GGML):] for m in tar.getmembers()
                       if m.isfile() and m.name.startswith(GGML + "include/")]
            for f in headers + GGML_SOURCES:
                dest = Path(tmp, f)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(tar.extractfile(GGML + f).read())
            Path(tmp, "shims.c").write_text(SHIMS)
            # ISO C: no contraction into FMA, so the rounding is the C source's everywhere
            subprocess.run(["cc", "-O2", "-std=c11", "-ffp-contract=off", "-fPIC", "-shared",
                            "-I", f"{tmp}/include", "-I", f"{tmp}/src",
                            f"{tmp}/src/ggml-quants.c", f"{tmp}/shims.c", "-lm",
                            "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib))


def quantize(lib, arr, qtype):
    """`arr` (rows × n, float32) quantized by ggml's reference quantizer of `qtype`."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    rows, n = arr.shape
    src = np.ascontiguousarray(arr, dtype=np.float32)
    dst = np.zeros((rows, n // block * size), dtype=np.uint8)
    fn = getattr(lib, f"quantize_row_{qtype.name.lower()[:-1]}K_ref")
    fn(src.ctypes.data_as(ctypes.c_void_p), dst.ctypes.data_as(ctypes.c_void_p),
       ctypes.c_int64(src.size))
    return dst


def write_quantized(path, name, shape, w, pieces, scores, lib):
    """The k-quant file as llama_model_quantize writes it from write_gguf's F32 file: the
    input's keys, then general.quantization_version and general.file_type; the tensors in
    the loader's order (name order, then by layer)."""
    out = gguf.GGUFWriter(str(path), "llama")
    out.add_name("kq-f32")
    add_llama_metadata(out, shape, pieces, scores)
    out.add_quantization_version(gguf.GGML_QUANT_VERSION)
    out.add_file_type(FTYPES[name][0])
    tensors = {"token_embd.weight": w["token_embedding"], "output_norm.weight": w["rms_final"]}
    for key, short in LAYER_NAMES.items():
        for l in range(shape["layers"]):
            tensors[f"blk.{l}.{short}.weight"] = w[key][l]
    types = tensor_types(name, shape["layers"])

    def order(t):
        return (int(t.split(".")[1]) if t.startswith("blk.") else -1, t)

    for t in sorted(tensors, key=order):
        arr = np.ascontiguousarray(tensors[t], dtype=np.float32)
        if t in types:
            out.add_tensor(t, quantize(lib, arr, types[t]), raw_dtype=types[t])
        else:
            out.add_tensor(t, arr)
    finish(out)


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def set_up(model_dir, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    shape, w, pieces, scores = model(model_dir)
    lib = ggml_quantizer()
    sums = dict(l.split()[::-1] for l in (REFERENCE / "SHA256SUMS").read_text().splitlines())
    for name in FTYPES:
        path = out_dir / f"kq-{name}.gguf"
        write_quantized(path, name, shape, w, pieces, scores, lib)
        if sha256(path) != sums[path.name]:
            path.unlink()
            raise SystemExit(f"kquant: {path.name} is not the file llama.cpp's "
                             f"llama_model_quantize wrote ({REFERENCE}/SHA256SUMS)")
    print(f"kquant: wrote {', '.join(FTYPES)} to {out_dir}, each the file llama.cpp wrote")


def reference(model_dir, ref_dir):
    import llama_cpp
    from llama_cpp_ref import llama_logits

    ref_dir.mkdir(parents=True, exist_ok=True)
    shape, w, pieces, scores = model(model_dir)
    sums = []
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp, "kq-f32.gguf")
        write_gguf(f32, shape, w, pieces, scores, Q.F32)
        for name, (ftype, _) in FTYPES.items():
            out = Path(tmp, f"kq-{name}.gguf")
            params = llama_cpp.llama_model_quantize_default_params()
            params.ftype = ftype
            params.nthread = 1
            rc = llama_cpp.llama_model_quantize(str(f32).encode(), str(out).encode(),
                                                ctypes.byref(params))
            if rc != 0:
                raise SystemExit(f"llama_model_quantize {name}: {rc}")
            logits = ref_dir / f"kq-{name}.logits"
            # flash attention off: its f16 rounding of V is not the matrix products'
            logits.write_bytes(llama_logits(llama_cpp, out, PROMPT, exact_attention=True).tobytes())
            sums += [f"{sha256(p)}  {p.name}" for p in (out, logits)]
    (ref_dir / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    print(f"wrote llama.cpp's k-quant references to {ref_dir}")


if __name__ == "__main__":
    if sys.argv[1] == "--reference":
        reference(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        set_up(Path(sys.argv[1]), Path(sys.argv[2]))
