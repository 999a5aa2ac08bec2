"""llama2.c files read by their documented layout (karpathy/llama2.c run.c
`read_checkpoint`, tokenizer.py `export`) and written as GGUF by llama.cpp's own `gguf`
package (PyPI): shared by scripts/make-gguf-fixtures.py and make-hf-fixtures.py (the test
files) and scripts/llama2c-to-gguf.py (the benchmark's llama.cpp input).

llama2.c's RoPE rotates adjacent pairs, as llama.cpp's LLaMA rope does, so wq and wk go in
unpermuted (llama.cpp's own convert-llama2c-to-ggml does the same). Quantization is
gguf-py's (groups of 32, fp16 scale).
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


def tiny_weights(cfg, seed=7):
    """Seeded random Llama weights of `cfg`'s shape in llama2.c's layout (and its unused
    RoPE tables, still in the format)."""
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
    pos = np.arange(cfg["seq_len"])[:, None]
    freq = 1.0 / (10000.0 ** (np.arange(0, hs, 2) / hs))
    w["freq_cis_real"] = np.cos(pos * freq).astype(np.float32)
    w["freq_cis_imag"] = np.sin(pos * freq).astype(np.float32)
    return w


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


def add_llama_metadata(out, cfg, pieces, scores):
    """The hyperparameters and SentencePiece vocabulary of a llama2.c model as GGUF keys, in
    the order write_gguf has always written them."""
    out.add_context_length(cfg["seq_len"])
    out.add_embedding_length(cfg["dim"])
    out.add_block_count(cfg["layers"])
    out.add_feed_forward_length(cfg["hidden"])
    out.add_head_count(cfg["heads"])
    out.add_head_count_kv(cfg["kv_heads"])
    out.add_rope_dimension_count(cfg["dim"] // cfg["heads"])
    out.add_rope_freq_base(cfg.get("rope_theta", 10000.0))
    out.add_layer_norm_rms_eps(cfg.get("rms_eps", 1e-5))
    out.add_vocab_size(cfg["vocab"])
    tokens, types = gguf_tokens(pieces)
    out.add_tokenizer_model("llama")
    out.add_token_list(tokens)
    out.add_token_scores(scores)
    out.add_token_types(types)
    out.add_bos_token_id(1)
    out.add_eos_token_id(2)
    out.add_unk_token_id(0)


def finish(out):
    """Writes the GGUFWriter's header, keys and tensors, and closes the file."""
    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()


def write_gguf(path, cfg, w, pieces, scores, qtype, chat_template=None):
    """The weights as a GGUF file, every matrix in `qtype` (with `chat_template` as
    tokenizer.chat_template); returns the dequantized weights (what a reader must load) in
    llama2.c's layout."""
    out = gguf.GGUFWriter(str(path), "llama")
    out.add_name(Path(path).stem)
    file_type = {Q.F32: gguf.LlamaFileType.ALL_F32, Q.F16: gguf.LlamaFileType.MOSTLY_F16,
                 Q.Q8_0: gguf.LlamaFileType.MOSTLY_Q8_0, Q.Q4_0: gguf.LlamaFileType.MOSTLY_Q4_0,
                 Q.BF16: gguf.LlamaFileType.MOSTLY_BF16, Q.Q4_1: gguf.LlamaFileType.MOSTLY_Q4_1,
                 Q.Q5_0: gguf.LlamaFileType.MOSTLY_Q5_0, Q.Q5_1: gguf.LlamaFileType.MOSTLY_Q5_1}
    out.add_file_type(file_type[qtype])
    add_llama_metadata(out, cfg, pieces, scores)
    if chat_template is not None:
        out.add_chat_template(chat_template)
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
    finish(out)
    return deq


