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

Only numpy and gguf are used: the llama2.c files are read here by their documented layout
(karpathy/llama2.c run.c `read_checkpoint`, tokenizer.py `export`).
"""
import struct
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q


def read_llama2c(path):
    """(config dict, {name: array}) of a legacy llama2.c float32 checkpoint."""
    raw = Path(path).read_bytes()
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack("<7i", raw[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    hs = dim // heads
    kv_dim = kv_heads * hs
    data = np.frombuffer(raw, dtype="<f4", offset=28)
    shapes = [
        ("token_embedding", (vocab, dim)),
        ("rms_att", (layers, dim)),
        ("wq", (layers, dim, dim)),
        ("wk", (layers, kv_dim, dim)),
        ("wv", (layers, kv_dim, dim)),
        ("wo", (layers, dim, dim)),
        ("rms_ffn", (layers, dim)),
        ("w1", (layers, hidden, dim)),
        ("w2", (layers, dim, hidden)),
        ("w3", (layers, hidden, dim)),
        ("rms_final", (dim,)),
        ("freq_cis_real", (seq_len, hs // 2)),
        ("freq_cis_imag", (seq_len, hs // 2)),
    ]
    if not shared:
        shapes.append(("wcls", (vocab, dim)))
    out, at = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        out[name] = data[at : at + n].reshape(shape).copy()
        at += n
    cfg = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
               vocab=vocab, seq_len=seq_len, shared=shared)
    return cfg, out


def write_llama2c(path, cfg, w):
    """A legacy llama2.c float32 checkpoint (negative vocab: its own classifier)."""
    vocab = cfg["vocab"] if cfg["shared"] else -cfg["vocab"]
    header = struct.pack("<7i", cfg["dim"], cfg["hidden"], cfg["layers"], cfg["heads"],
                         cfg["kv_heads"], vocab, cfg["seq_len"])
    order = ["token_embedding", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2",
             "w3", "rms_final", "freq_cis_real", "freq_cis_imag"]
    if not cfg["shared"]:
        order.append("wcls")
    with open(path, "wb") as f:
        f.write(header)
        for name in order:
            f.write(np.ascontiguousarray(w[name], dtype="<f4").tobytes())


def read_tokenizer(path, vocab):
    """llama2.c tokenizer.bin: max length, then (score f32, length i32, bytes) per token."""
    raw = Path(path).read_bytes()
    at = 4
    pieces, scores = [], []
    for _ in range(vocab):
        score, n = struct.unpack("<fi", raw[at : at + 8])
        at += 8
        pieces.append(raw[at : at + n])
        at += n
        scores.append(score)
    return pieces, scores


def gguf_tokens(pieces):
    """SentencePiece pieces as GGUF stores them ("▁" for a space) and their token types."""
    tokens, types = [], []
    for i, p in enumerate(pieces):
        text = p.decode("utf-8", errors="replace")
        if i == 0:
            types.append(gguf.TokenType.UNKNOWN)
        elif i in (1, 2):
            types.append(gguf.TokenType.CONTROL)
        elif len(text) == 6 and text.startswith("<0x") and text.endswith(">"):
            types.append(gguf.TokenType.BYTE)
        else:
            types.append(gguf.TokenType.NORMAL)
        tokens.append(text if i < 3 else text.replace(" ", "\u2581"))
    # llama2.c writes BOS/EOS as "\n<s>\n" and "\n</s>\n"; SentencePiece names them so.
    tokens[0], tokens[1], tokens[2] = "<unk>", "<s>", "</s>"
    return tokens, types


# GGUF tensor names (llama.cpp's LLM_ARCH_LLAMA) by llama2.c tensor.
LAYER_NAMES = {
    "rms_att": "attn_norm", "wq": "attn_q", "wk": "attn_k", "wv": "attn_v",
    "wo": "attn_output", "rms_ffn": "ffn_norm", "w1": "ffn_gate", "w2": "ffn_down",
    "w3": "ffn_up",
}


def write_gguf(path, cfg, w, pieces, scores, qtype):
    """The weights as a GGUF file, every matrix in `qtype`; returns the dequantized weights
    (what a reader must load) in llama2.c's layout."""
    out = gguf.GGUFWriter(str(path), "llama")
    out.add_name(Path(path).stem)
    out.add_context_length(cfg["seq_len"])
    out.add_embedding_length(cfg["dim"])
    out.add_block_count(cfg["layers"])
    out.add_feed_forward_length(cfg["hidden"])
    out.add_head_count(cfg["heads"])
    out.add_head_count_kv(cfg["kv_heads"])
    out.add_rope_dimension_count(cfg["dim"] // cfg["heads"])
    out.add_rope_freq_base(10000.0)
    out.add_layer_norm_rms_eps(1e-5)
    out.add_vocab_size(cfg["vocab"])
    tokens, types = gguf_tokens(pieces)
    out.add_tokenizer_model("llama")
    out.add_token_list(tokens)
    out.add_token_scores(scores)
    out.add_token_types(types)
    out.add_bos_token_id(1)
    out.add_eos_token_id(2)
    deq = dict(w)

    def put(name, arr, key=None):
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if arr.ndim == 1 or qtype == Q.F32:
            out.add_tensor(name, arr)
            back = arr
        else:
            q = gguf.quants.quantize(arr, qtype)
            out.add_tensor(name, q, raw_dtype=qtype)
            back = gguf.quants.dequantize(q, qtype).reshape(arr.shape)
        return back

    deq["token_embedding"] = put("token_embd.weight", w["token_embedding"])
    for key, short in LAYER_NAMES.items():
        deq[key] = np.stack([put(f"blk.{l}.{short}.weight", w[key][l]) for l in range(cfg["layers"])])
    deq["rms_final"] = put("output_norm.weight", w["rms_final"])
    if not cfg["shared"]:
        deq["wcls"] = put("output.weight", w["wcls"])
    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()
    return deq


def tiny_weights(cfg, seed=7):
    rng = np.random.default_rng(seed)
    d, h, l, kv = cfg["dim"], cfg["hidden"], cfg["layers"], cfg["kv_heads"] * cfg["dim"] // cfg["heads"]
    hs = cfg["dim"] // cfg["heads"]
    r = lambda *s: (rng.standard_normal(s) * 0.2).astype(np.float32)
    w = {
        "token_embedding": r(cfg["vocab"], d),
        "rms_att": (1 + 0.1 * rng.standard_normal((l, d))).astype(np.float32),
        "wq": r(l, d, d), "wk": r(l, kv, d), "wv": r(l, kv, d), "wo": r(l, d, d),
        "rms_ffn": (1 + 0.1 * rng.standard_normal((l, d))).astype(np.float32),
        "w1": r(l, h, d), "w2": r(l, d, h), "w3": r(l, h, d),
        "rms_final": (1 + 0.1 * rng.standard_normal(d)).astype(np.float32),
        "wcls": r(cfg["vocab"], d),
    }
    # llama2.c's RoPE tables (unused by run.c since 2023, still in the format).
    pos = np.arange(cfg["seq_len"])[:, None]
    freq = 1.0 / (10000.0 ** (np.arange(0, hs, 2) / hs))
    w["freq_cis_real"] = np.cos(pos * freq).astype(np.float32)
    w["freq_cis_imag"] = np.sin(pos * freq).astype(np.float32)
    return w


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
    print(f"wrote GGUF fixtures to {out_dir} (gguf {gguf.__version__ if hasattr(gguf, '__version__') else '?'})")


if __name__ == "__main__":
    main()
