#!/usr/bin/env python3
"""Hugging Face Llama test checkpoints written by Hugging Face's own packages (PyPI:
`safetensors` for the weights, `tokenizers` for tokenizer.json), not by our code.

    make-hf-fixtures.py MODEL_DIR OUT_DIR

MODEL_DIR holds stories260K.bin and tok512.bin. Each folder written to OUT_DIR holds a
config.json (transformers' LlamaConfig keys), model.safetensors and tokenizer.json:

- stories260K/: stories260K's weights in F32, Q and K permuted to Hugging Face's rotate-half
  order as transformers' convert_llama_weights_to_hf.py does; tokenizer.json: tok512's
  pieces as a `tokenizers` BPE model with byte fallback, merges ranked by the merged piece's
  score (transformers' SentencePieceExtractor), and LlamaConverter's "▁" normalizer and
  decoder.
- tiny-f32/, tiny-f16/, tiny-bf16/: the seeded random Llama of make-gguf-fixtures.py
  (GQA 4/2, untied classifier), every tensor in that dtype; tiny-<dtype>-deq.bin beside
  them is the llama2.c float32 file of what the dtype holds (the reference).
- theta/: the same weights with rope_theta 100,000 and rms_norm_eps 1e-6 (F32), and
  theta.gguf (llama.cpp's gguf package, llama.rope.freq_base 100000, epsilon 1e-6); the
  same weights' logits at θ 500,000, plain and with Llama 3's scaling, for the configs
  transformers 4 and 5 write (tests/fixtures/hf-config).
- bytelevel/: a GPT-2 style byte-level BPE tokenizer trained by `tokenizers` on a few
  sentences, with a random Llama of its vocabulary (tied embeddings, rope_theta 100,000,
  BF16).

expected.json holds what a reader must reproduce, from the numpy forward pass of
hf_reference.py, written in Hugging Face's convention (rotate_half over the permuted Q/K, repeat_kv,
modeling_llama.py's order) in float64: the logits at every position of fixed tokens for
tiny.bin's weights at θ 10,000 / ε 1e-5 (a check of this reference against the llama2.c
file), for theta/ and for bytelevel/; and for bytelevel/ some texts with the ids
`tokenizers` encodes them to.
"""
import json
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q
from safetensors.numpy import save_file
from safetensors import TensorSpec, serialize_file
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama2c_gguf import read_llama2c, read_tokenizer, tiny_weights, write_gguf, write_llama2c  # noqa: E402
from hf_reference import hf_forward, hf_tensors  # noqa: E402






def to_bf16_bits(a):
    """float32 → bfloat16 (round to nearest even), as uint16 bits."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, dtype):
    """The state dict in `dtype`; returns what the file holds, as float32."""
    if dtype == "bf16":
        # numpy has no bfloat16: the bits go to the writer as a TensorSpec named bfloat16,
        # as safetensors.numpy does for numpy's own dtypes.
        bits = {k: to_bf16_bits(v) for k, v in tensors.items()}
        specs = {k: TensorSpec(dtype="bfloat16", shape=v.shape, data_ptr=v.ctypes.data,
                               data_len=v.nbytes) for k, v in bits.items()}
        serialize_file(specs, str(path), metadata={"format": "pt"})
        return {k: from_bf16_bits(v) for k, v in bits.items()}
    np_dtype = {"f32": np.float32, "f16": np.float16}[dtype]
    held = {k: v.astype(np_dtype) for k, v in tensors.items()}
    save_file(held, str(path), {"format": "pt"})
    return {k: v.astype(np.float32) for k, v in held.items()}


def llama2c_of(cfg, t, w):
    """The state dict back in llama2.c's layout (Q/K unpermuted by the inverse index)."""
    d, kv, hs = cfg["dim"], cfg["kv_heads"] * cfg["dim"] // cfg["heads"], cfg["dim"] // cfg["heads"]

    def unpermute(m, heads):
        return m.reshape(heads, 2, hs // 2, -1).transpose(0, 2, 1, 3).reshape(heads * hs, -1)

    L = range(cfg["layers"])
    g = lambda part: np.stack([t[f"model.layers.{l}.{part}.weight"] for l in L])
    out = dict(w)
    out.update(token_embedding=t["model.embed_tokens.weight"], rms_final=t["model.norm.weight"],
               rms_att=g("input_layernorm"), rms_ffn=g("post_attention_layernorm"),
               wq=np.stack([unpermute(t[f"model.layers.{l}.self_attn.q_proj.weight"], cfg["heads"]) for l in L]),
               wk=np.stack([unpermute(t[f"model.layers.{l}.self_attn.k_proj.weight"], cfg["kv_heads"]) for l in L]),
               wv=g("self_attn.v_proj"), wo=g("self_attn.o_proj"),
               w1=g("mlp.gate_proj"), w2=g("mlp.down_proj"), w3=g("mlp.up_proj"))
    if not cfg["shared"]:
        out["wcls"] = t["lm_head.weight"]
    return out




def config_json(cfg, dtype, bos=1, eos=2, name=None):
    return {
        "_name_or_path": name or "", "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": cfg["dim"], "intermediate_size": cfg["hidden"],
        "num_hidden_layers": cfg["layers"], "num_attention_heads": cfg["heads"],
        "num_key_value_heads": cfg["kv_heads"], "vocab_size": cfg["vocab"],
        "max_position_embeddings": cfg["seq_len"], "hidden_act": "silu",
        "rms_norm_eps": cfg.get("rms_eps", 1e-5), "rope_theta": cfg.get("rope_theta", 10000.0),
        "rope_scaling": None, "attention_bias": False, "mlp_bias": False,
        "tie_word_embeddings": cfg["shared"], "bos_token_id": bos, "eos_token_id": eos,
        "torch_dtype": {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[dtype],
    }


def sentencepiece_tokenizer(pieces, scores):
    """tok512 as tokenizer.json: transformers' LlamaConverter's layout, built by tokenizers."""
    names = ["<unk>", "<s>", "</s>"]
    vocab = {}
    for i, p in enumerate(pieces):
        text = names[i] if i < 3 else p.decode("utf-8", errors="replace").replace(" ", "\u2581")
        vocab.setdefault(text, i)
    score = {p: scores[i] for p, i in vocab.items()}
    merges = []
    for piece, s in score.items():
        local = [(piece[:k], piece[k:], s) for k in range(1, len(piece))
                 if piece[:k] in vocab and piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges = [(l, r) for l, r, _ in sorted(merges, key=lambda m: m[2], reverse=True)]
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True,
                              fuse_unk=True))
    tk.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                          normalizers.Replace(" ", "\u2581")])
    tk.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                    decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tk.add_special_tokens(names)
    return tk


BYTE_TEXTS = [
    "Once upon a time, there was a little robot.",
    "The café was naïve — 42 apples, 7 pears!",
    "Emoji: 🙂 and a tab\tand a newline\nend.",
    "  two leading spaces and ümlauts: Äpfel, Öl, Übung.",
]


def bytelevel_tokenizer():
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(BYTE_TEXTS * 4 + ["the little robot saw the sea and the sun"] * 8, trainer)
    return tk


def llama3_factors(hs, theta, factor, low, high, old):
    """What divides each pair's frequency under Llama 3's scaling, from transformers'
    `_compute_llama3_parameters` (modeling_rope_utils.py): wavelengths shorter than
    old/high kept, longer than old/low divided by `factor`, those between smoothed."""
    inv = 1.0 / theta ** (np.arange(0, hs, 2) / hs)
    wavelen = 2 * np.pi / inv
    scaled = np.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    mid = ~(wavelen < old / high) & ~(wavelen > old / low)
    scaled = np.where(mid, (1 - smooth) * scaled / factor + smooth * scaled, scaled)
    return (inv / scaled).tolist()


def write_folder(out, cfg, w, dtype, tokenizer, bos=1, eos=2):
    out.mkdir(parents=True, exist_ok=True)
    held = write_safetensors(out / "model.safetensors", hf_tensors(cfg, w), dtype)
    config = config_json(cfg, dtype, bos, eos, name=out.name)
    (out / "config.json").write_text(json.dumps(config, indent=2))
    tokenizer.save(str(out / "tokenizer.json"))
    return held


def main():
    model_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg, w = read_llama2c(model_dir / "stories260K.bin")
    pieces, scores = read_tokenizer(model_dir / "tok512.bin", cfg["vocab"])
    sp = sentencepiece_tokenizer(pieces, scores)
    write_folder(out_dir / "stories260K", cfg, w, "f32", sp)

    tiny = dict(dim=64, hidden=128, layers=2, heads=4, kv_heads=2, vocab=cfg["vocab"],
                seq_len=64, shared=False)
    tw = tiny_weights(tiny)
    write_llama2c(out_dir / "tiny.bin", tiny, tw)
    for dtype in ["f32", "f16", "bf16"]:
        held = write_folder(out_dir / f"tiny-{dtype}", tiny, tw, dtype, sp)
        write_llama2c(out_dir / f"tiny-{dtype}-deq.bin", tiny, llama2c_of(tiny, held, tw))

    tokens = [1, 5, 100, 200, 300, 400, 50, 7, 260, 33]
    expected = {"tokens": tokens,
                "tiny_logits": hf_forward(tiny, hf_tensors(tiny, tw), tokens)}
    theta = dict(tiny, rope_theta=100000.0, rms_eps=1e-6)
    held = write_folder(out_dir / "theta", theta, tw, "f32", sp)
    write_gguf(out_dir / "theta" / "theta.gguf", theta, tw, pieces, scores, Q.F32)
    expected["theta_logits"] = hf_forward(theta, held, tokens)
    # The configs transformers 4 and 5 write (tests/fixtures/hf-config, make-hf-configs.py)
    # over theta/'s weights: θ 500,000, plain and with Llama 3's scaling.
    base5 = dict(theta, rope_theta=500000.0)
    expected["theta5_logits"] = hf_forward(base5, held, tokens)
    factors = llama3_factors(tiny["dim"] // tiny["heads"], 500000.0, 8.0, 1.0, 4.0, 40.0)
    expected["llama3_logits"] = hf_forward(dict(base5, rope_factors=factors), held, tokens)

    bl = bytelevel_tokenizer()
    eot = bl.token_to_id("<|endoftext|>")
    small = dict(dim=32, hidden=64, layers=2, heads=4, kv_heads=2, vocab=bl.get_vocab_size(),
                 seq_len=128, shared=True, rope_theta=100000.0, rms_eps=1e-6)
    sw = tiny_weights(small, seed=11)
    del sw["wcls"]
    held = write_folder(out_dir / "bytelevel", small, sw, "bf16", bl, bos=eot, eos=eot)
    texts = [{"text": s, "ids": bl.encode(s, add_special_tokens=False).ids} for s in BYTE_TEXTS]
    expected["bytelevel_texts"] = texts
    expected["bytelevel_tokens"] = [eot] + texts[0]["ids"]
    expected["bytelevel_logits"] = hf_forward(small, held, expected["bytelevel_tokens"])
    (out_dir / "expected.json").write_text(json.dumps(expected))
    print(f"wrote Hugging Face fixtures to {out_dir}")


if __name__ == "__main__":
    main()
