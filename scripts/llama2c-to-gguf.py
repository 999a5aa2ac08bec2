#!/usr/bin/env python3
"""A legacy llama2.c checkpoint and tokenizer.bin as a GGUF file (f32 or Q8_0), for timing
llama.cpp on the same weights as ours (scripts/bench-quantized.sh, issue 12). Needs the
`gguf` and `numpy` packages from PyPI.

    llama2c-to-gguf.py model.bin tokenizer.bin out.gguf [f32|q8_0]

The tensors get llama.cpp's LLaMA names (token_embd, blk.N.attn_q, ffn_gate = w1,
ffn_down = w2, ffn_up = w3, output_norm, and output unless shared). llama2.c's RoPE rotates adjacent pairs,
as llama.cpp's LLaMA rope does, so wq and wk go in unpermuted (llama.cpp's own
convert-llama2c-to-ggml does the same). Quantization is gguf-py's Q8_0 (groups of 32, fp16
scale): GGML's, not llama2.c's export, so the two q8 files hold the same weights in their
own formats.
"""
import struct
import sys

import numpy as np
import gguf


def read_checkpoint(path):
    raw = open(path, "rb").read()
    dim, hidden, layers, heads, kv_heads, vocab, seq = struct.unpack("<7i", raw[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    kv_dim = dim * kv_heads // heads
    f = np.frombuffer(raw, dtype="<f4", offset=28)
    at = 0

    def take(*shape):
        nonlocal at
        n = int(np.prod(shape))
        t = f[at : at + n].reshape(shape)
        at += n
        return t

    w = {"emb": take(vocab, dim), "rms_att": take(layers, dim), "wq": take(layers, dim, dim),
         "wk": take(layers, kv_dim, dim), "wv": take(layers, kv_dim, dim),
         "wo": take(layers, dim, dim), "rms_ffn": take(layers, dim),
         "w1": take(layers, hidden, dim), "w2": take(layers, dim, hidden),
         "w3": take(layers, hidden, dim), "rms_final": take(dim)}
    take(seq, dim // heads // 2)
    take(seq, dim // heads // 2)
    w["wcls"] = None if shared else take(vocab, dim)
    cfg = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
               vocab=vocab, seq=seq)
    return cfg, w


def read_tokenizer(path, vocab):
    raw = open(path, "rb").read()
    at = 4
    pieces, scores = [], []
    for _ in range(vocab):
        score, n = struct.unpack("<fi", raw[at : at + 8])
        at += 8
        pieces.append(raw[at : at + n].decode("utf-8", "replace"))
        at += n
        scores.append(score)
    return pieces, scores


def main():
    model, tok, out = sys.argv[1:4]
    kind = sys.argv[4] if len(sys.argv) > 4 else "q8_0"
    qtype = {"f32": gguf.GGMLQuantizationType.F32, "q8_0": gguf.GGMLQuantizationType.Q8_0}[kind]
    cfg, w = read_checkpoint(model)
    pieces, scores = read_tokenizer(tok, cfg["vocab"])
    wr = gguf.GGUFWriter(out, "llama")
    wr.add_name("random llama2.c weights")
    wr.add_context_length(cfg["seq"])
    wr.add_embedding_length(cfg["dim"])
    wr.add_block_count(cfg["layers"])
    wr.add_feed_forward_length(cfg["hidden"])
    wr.add_head_count(cfg["heads"])
    wr.add_head_count_kv(cfg["kv_heads"])
    wr.add_rope_dimension_count(cfg["dim"] // cfg["heads"])
    wr.add_layer_norm_rms_eps(1e-5)
    wr.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if kind == "q8_0" else gguf.LlamaFileType.ALL_F32)
    wr.add_tokenizer_model("llama")
    types = []
    for i, p in enumerate(pieces):
        if i == 0:
            types.append(gguf.TokenType.UNKNOWN)
        elif i in (1, 2):
            types.append(gguf.TokenType.CONTROL)
        elif p.startswith("<0x") and p.endswith(">") and len(p) == 6:
            types.append(gguf.TokenType.BYTE)
        else:
            types.append(gguf.TokenType.NORMAL)
    wr.add_token_list([p.encode("utf-8") for p in pieces])
    wr.add_token_scores(scores)
    wr.add_token_types(types)
    wr.add_bos_token_id(1)
    wr.add_eos_token_id(2)
    wr.add_unk_token_id(0)

    def matrix(name, t):
        t = np.ascontiguousarray(t, dtype=np.float32)
        if qtype == gguf.GGMLQuantizationType.F32:
            wr.add_tensor(name, t)
        else:
            wr.add_tensor(name, gguf.quants.quantize(t, qtype), raw_dtype=qtype)

    matrix("token_embd.weight", w["emb"])
    for i in range(cfg["layers"]):
        wr.add_tensor(f"blk.{i}.attn_norm.weight", np.ascontiguousarray(w["rms_att"][i]))
        matrix(f"blk.{i}.attn_q.weight", w["wq"][i])
        matrix(f"blk.{i}.attn_k.weight", w["wk"][i])
        matrix(f"blk.{i}.attn_v.weight", w["wv"][i])
        matrix(f"blk.{i}.attn_output.weight", w["wo"][i])
        wr.add_tensor(f"blk.{i}.ffn_norm.weight", np.ascontiguousarray(w["rms_ffn"][i]))
        matrix(f"blk.{i}.ffn_gate.weight", w["w1"][i])
        matrix(f"blk.{i}.ffn_down.weight", w["w2"][i])
        matrix(f"blk.{i}.ffn_up.weight", w["w3"][i])
    wr.add_tensor("output_norm.weight", np.ascontiguousarray(w["rms_final"]))
    # A shared classifier is left out: llama.cpp then ties it to token_embd, read once.
    if w["wcls"] is not None:
        matrix("output.weight", w["wcls"])
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


if __name__ == "__main__":
    main()
