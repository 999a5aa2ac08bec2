#!/usr/bin/env python3
"""The vocabularies and architectures of the GGUF and Hugging Face files people download,
written by llama.cpp's `gguf` package and Hugging Face's `tokenizers` and `safetensors`
(PyPI), with their float64 reference from hf_reference.py. No downloads.

    make-arch-fixtures.py OUT_DIR

Written to OUT_DIR:

- bpe-<pre>.gguf for pre = gpt-2, smollm, llama-bpe, qwen2: a seeded random Llama (dim 64,
  2 layers, tied) whose vocabulary is a GPT-2 byte-level BPE (`tokenizer.ggml.model = gpt2`:
  tokens, merges, token types, the `pre` name) trained by `tokenizers` on TRAIN; special
  tokens <|endoftext|>, <|im_start|>, <|im_end|> (CONTROL). The same weights and vocabulary
  in each; only the pre-tokenizer differs. bpe-unknown.gguf names a pre-tokenizer nobody
  has ("no-such-pre"), to be refused.
- qwen2.gguf: `general.architecture = qwen2` (llama.cpp's LLM_ARCH_QWEN2): Q/K/V biases,
  untied classifier, θ 1,000,000, ε 1e-6, trained context 32,768, Q and K in Hugging Face's
  rotate-half order (the converter does not permute them: llama.cpp runs qwen2 with NEOX
  RoPE), pre `qwen2`, a ChatML `tokenizer.chat_template`, add_bos_token false.
- llama3-rope.gguf: a Llama with `rope_freqs.weight`, the per-frequency factors that
  convert_hf_to_gguf.py writes for `rope_scaling.rope_type = llama3` (here factor 8, low 1,
  high 4, original context 32, so that they act within the 16 positions tested).
- hf-qwen2/ and hf-llama3-rope/: the same two models as Hugging Face checkpoints
  (config.json of Qwen2ForCausalLM / LlamaForCausalLM with `rope_scaling`,
  model.safetensors F32, tokenizer.json).
- small-bpe.gguf: the vocabulary (pre `qwen2`) on the smallest working model (dim 32, one
  layer, Q8_0): the GGUF fuzzer's seed fuzz/corpus/gguf/seed-small-bpe.
- unsupported-arch.gguf (`general.architecture = phi3`), unsupported-type.gguf (a Q2_K
  tensor), unsupported-rope.gguf (YaRN scaling), unsupported-scale.gguf (a RoPE scale with
  no type: linear to llama.cpp) and unsupported-bias.gguf (Wo's bias): refused by name.
- expected.json: the test text and the ids `tokenizers` gives it; for qwen2 and llama3-rope
  the tokens run and hf_reference.py's float64 logits at every position (and llama3-rope's
  without its factors, to show they matter).

The ids llama.cpp's own tokenizer gives each bpe-<pre>.gguf, and llama.cpp's logits on
qwen2.gguf and llama3-rope.gguf, are in tests/fixtures/arch/llama-cpp.json, with the
sha256 of the files they were read from (scripts/llama-cpp-arch-reference.py, by hand:
llama.cpp is not built by the set-up).
"""
import json
import sys
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q
from safetensors.numpy import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hf_reference import hf_forward, hf_tensors, llama3_rope_factors  # noqa: E402
from llama2c_gguf import finish, tiny_weights  # noqa: E402

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TRAIN = [
    "Once upon a time, there was a little robot who lived by the sea.",
    "It's 2026: the robot counted 12345 shells, 3.14 times a day!",
    "The café was naïve — señor Müller's résumé said déjà vu.",
    "Emoji: 🙂 😀 👍🏽 and tabs\tand newlines\n\nend. THE END'S HERE.",
    "  spaces   between    words, and ümlauts: Äpfel, Öl, Übung.",
]
# Spaces (runs, leading, trailing), digits (runs longer than 3), punctuation, newlines,
# contractions in both cases, accents and emoji (one with a skin-tone modifier).
TEST_TEXT = ("Hello world! It's 2026: 1234567 apples, 3.14 pies.\n\n"
             "Naïve café, déjà vu — señor Müller's résumé 😀👍🏽\n"
             "\tTabs  and   spaces   \nTHE END'S here.  ")
PRES = ["gpt-2", "smollm", "llama-bpe", "qwen2"]
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
# Hugging Face names → GGUF names (llama.cpp's tensor map for LLM_ARCH_LLAMA / QWEN2).
GGUF_NAMES = {
    "input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
    "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate",
    "mlp.down_proj": "ffn_down", "mlp.up_proj": "ffn_up",
}


def bpe_tokenizer():
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(TRAIN * 4, trainer)
    return tk


def vocab_of(tk):
    """The vocabulary as GGUF holds it: tokens by id (byte-level strings), merges as
    "left right", token types."""
    model = json.loads(tk.to_str())["model"]
    tokens = [tk.id_to_token(i) for i in range(tk.get_vocab_size())]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    types = [gguf.TokenType.CONTROL if t in SPECIALS else gguf.TokenType.NORMAL for t in tokens]
    return tokens, merges, types


def gguf_tensors(cfg, t, neox):
    """A Hugging Face state dict under GGUF's names. A `llama` file holds Q and K in
    llama.cpp's interleaved order (convert_hf_to_gguf.py permutes them back); a `qwen2`
    file keeps Hugging Face's (`neox`)."""
    hs = cfg["dim"] // cfg["heads"]

    def unpermute(m, heads):
        return m.reshape(heads, 2, hs // 2, -1).transpose(0, 2, 1, 3).reshape(heads * hs, -1)

    out = {"token_embd.weight": t["model.embed_tokens.weight"],
           "output_norm.weight": t["model.norm.weight"]}
    if "lm_head.weight" in t:
        out["output.weight"] = t["lm_head.weight"]
    for l in range(cfg["layers"]):
        for hf, short in GGUF_NAMES.items():
            for kind in ["weight", "bias"]:
                v = t.get(f"model.layers.{l}.{hf}.{kind}")
                if v is None:
                    continue
                if not neox and short in ("attn_q", "attn_k"):
                    heads = cfg["heads"] if short == "attn_q" else cfg["kv_heads"]
                    v = unpermute(v.reshape(heads * hs, -1), heads).reshape(v.shape)
                out[f"blk.{l}.{short}.{kind}"] = v
    return out


def write_gguf(path, arch, cfg, tensors, vocab, pre, extra=None, qtype=Q.F32, raw=None):
    tokens, merges, types = vocab
    out = gguf.GGUFWriter(str(path), arch)
    out.add_name(Path(path).stem)
    out.add_file_type(gguf.LlamaFileType.ALL_F32 if qtype == Q.F32 else gguf.LlamaFileType.MOSTLY_Q8_0)
    out.add_context_length(cfg["seq_len"])
    out.add_embedding_length(cfg["dim"])
    out.add_block_count(cfg["layers"])
    out.add_feed_forward_length(cfg["hidden"])
    out.add_head_count(cfg["heads"])
    out.add_head_count_kv(cfg["kv_heads"])
    out.add_rope_dimension_count(cfg["dim"] // cfg["heads"])
    out.add_rope_freq_base(cfg["rope_theta"])
    out.add_layer_norm_rms_eps(cfg["rms_eps"])
    out.add_vocab_size(cfg["vocab"])
    out.add_tokenizer_model("gpt2")
    out.add_tokenizer_pre(pre)
    out.add_token_list(tokens)
    out.add_token_types(types)
    out.add_token_merges(merges)
    eot = tokens.index("<|endoftext|>")
    out.add_bos_token_id(eot)
    out.add_eos_token_id(eot)
    for key, value in (extra or {}).items():
        getattr(out, key)(value)
    for name, v in tensors.items():
        if name in (raw or {}):
            out.add_tensor(name, v, raw_dtype=raw[name])
            continue
        v = np.ascontiguousarray(v, dtype=np.float32)
        if v.ndim == 2 and qtype != Q.F32:
            out.add_tensor(name, gguf.quants.quantize(v, qtype), raw_dtype=qtype)
        else:
            out.add_tensor(name, v)
    finish(out)


def hf_config(cfg, arch, eot, **more):
    c = {"architectures": [arch], "model_type": "qwen2" if arch.startswith("Qwen2") else "llama",
         "hidden_size": cfg["dim"], "intermediate_size": cfg["hidden"],
         "num_hidden_layers": cfg["layers"], "num_attention_heads": cfg["heads"],
         "num_key_value_heads": cfg["kv_heads"], "vocab_size": cfg["vocab"],
         "max_position_embeddings": cfg["seq_len"], "hidden_act": "silu",
         "rms_norm_eps": cfg["rms_eps"], "rope_theta": cfg["rope_theta"],
         "tie_word_embeddings": cfg["shared"], "bos_token_id": eot, "eos_token_id": eot,
         "torch_dtype": "float32"}
    c.update(more)
    return c


def write_hf(out, config, tensors, tk):
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()},
              str(out / "model.safetensors"), {"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2))
    tk.save(str(out / "tokenizer.json"))


def main():
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    tk = bpe_tokenizer()
    vocab = vocab_of(tk)
    eot = tk.token_to_id("<|endoftext|>")
    base = dict(dim=64, hidden=128, layers=2, heads=4, kv_heads=2, vocab=tk.get_vocab_size(),
                seq_len=64, shared=True, rope_theta=10000.0, rms_eps=1e-5)
    w = tiny_weights(base, seed=21)
    del w["wcls"]
    t = hf_tensors(base, w)
    for pre in PRES + ["no-such-pre"]:
        name = "unknown" if pre == "no-such-pre" else pre
        write_gguf(out_dir / f"bpe-{name}.gguf", "llama", base, gguf_tensors(base, t, False),
                   vocab, pre)
    # The fuzzer's seed (fuzz/corpus/gguf/seed-small-bpe): the vocabulary on the smallest
    # working model (dim 32, one layer, Q8_0).
    small = dict(base, dim=32, hidden=32, layers=1, heads=2, kv_heads=1, seq_len=8)
    sw = tiny_weights(small, seed=25)
    del sw["wcls"]
    write_gguf(out_dir / "small-bpe.gguf", "llama", small,
               gguf_tensors(small, hf_tensors(small, sw), False), vocab, "qwen2", qtype=Q.Q8_0)
    # What stays unsupported, to be refused by name: an architecture (phi3) and a tensor
    # type (Q2_K: 84 bytes of a 256-weight block, zeros).
    bt = gguf_tensors(base, t, False)
    write_gguf(out_dir / "unsupported-arch.gguf", "phi3", base, bt, vocab, "gpt-2")
    write_gguf(out_dir / "unsupported-rope.gguf", "llama", base, bt, vocab, "gpt-2",
               {"add_rope_scaling_type": gguf.RopeScalingType.YARN, "add_rope_scaling_factor": 4.0})
    write_gguf(out_dir / "unsupported-scale.gguf", "llama", base, bt, vocab, "gpt-2",
               {"add_rope_scaling_factor": 2.0})
    write_gguf(out_dir / "unsupported-bias.gguf", "llama", base,
               dict(bt, **{"blk.0.attn_output.bias": np.ones(base["dim"], np.float32)}),
               vocab, "gpt-2")
    bt["blk.0.ffn_extra.weight"] = np.zeros((1, 84), dtype=np.uint8)
    write_gguf(out_dir / "unsupported-type.gguf", "llama", base, bt, vocab, "gpt-2",
               raw={"blk.0.ffn_extra.weight": Q.Q2_K})
    ids = tk.encode(TEST_TEXT, add_special_tokens=False).ids
    tokens = [eot] + ids[:15]
    expected = {"text": TEST_TEXT, "tokenizers_ids": ids, "tokens": tokens}

    # Qwen2: biases on Q, K, V; untied; Qwen2's θ and ε.
    # (and Qwen2.5's trained context, 32,768: the engine runs it at 4,096, as llama.cpp runs
    # a model at the n_ctx chosen at load)
    qcfg = dict(base, shared=False, rope_theta=1000000.0, rms_eps=1e-6, seq_len=32768)
    qw = tiny_weights(qcfg, seed=22)
    qt = hf_tensors(qcfg, qw)
    rng = np.random.default_rng(23)
    kv = qcfg["kv_heads"] * qcfg["dim"] // qcfg["heads"]
    for l in range(qcfg["layers"]):
        for part, n in [("q_proj", qcfg["dim"]), ("k_proj", kv), ("v_proj", kv)]:
            qt[f"model.layers.{l}.self_attn.{part}.bias"] = (rng.standard_normal(n) * 0.5).astype(np.float32)
    write_gguf(out_dir / "qwen2.gguf", "qwen2", qcfg, gguf_tensors(qcfg, qt, True), vocab,
               "qwen2", {"add_chat_template": CHATML, "add_add_bos_token": False})
    write_hf(out_dir / "hf-qwen2", hf_config(qcfg, "Qwen2ForCausalLM", eot), qt, tk)
    expected["qwen2_logits"] = hf_forward(qcfg, qt, tokens)

    # Llama 3's RoPE frequencies.
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 32}
    lcfg = dict(base, rope_theta=10000.0, rms_eps=1e-5)
    factors = llama3_rope_factors(lcfg, scaling)
    lt = hf_tensors(lcfg, tiny_weights(lcfg, seed=24))
    lg = gguf_tensors(lcfg, lt, False)
    lg["rope_freqs.weight"] = factors
    write_gguf(out_dir / "llama3-rope.gguf", "llama", lcfg, lg, vocab, "llama-bpe")
    write_hf(out_dir / "hf-llama3-rope",
             hf_config(lcfg, "LlamaForCausalLM", eot, rope_scaling=scaling), lt, tk)
    expected["rope_factors"] = factors.tolist()
    expected["llama3_rope_logits"] = hf_forward(dict(lcfg, rope_factors=factors), lt, tokens)
    expected["llama3_rope_logits_without_factors"] = hf_forward(lcfg, lt, tokens)
    (out_dir / "expected.json").write_text(json.dumps(expected))
    print(f"wrote architecture fixtures to {out_dir}")


if __name__ == "__main__":
    main()
