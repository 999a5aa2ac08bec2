"""Hugging Face's layout and forward pass in numpy, float64: the independent reference of the
Hugging Face and GGUF fixtures (make-hf-fixtures.py, make-arch-fixtures.py).

`hf_forward` is modeling_llama.py's LlamaForCausalLM (rotate_half over the permuted Q/K,
repeat_kv), with modeling_qwen2.py's Q/K/V biases when the state dict has them and
Llama 3's RoPE frequencies (`rope_factors`: each inverse frequency divided by its factor, as
transformers' `_compute_llama3_parameters` and llama.cpp's `rope_freqs.weight` do).
"""
import math

import numpy as np


def permute(w, n_heads, dim1, dim2):
    """convert_llama_weights_to_hf.py's permute (torch's view / transpose(1, 2) in numpy)."""
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


def hf_tensors(cfg, w):
    """llama2.c-layout weights as LlamaForCausalLM's state dict (float32)."""
    d, kv = cfg["dim"], cfg["kv_heads"] * cfg["dim"] // cfg["heads"]
    t = {"model.embed_tokens.weight": w["token_embedding"], "model.norm.weight": w["rms_final"]}
    for l in range(cfg["layers"]):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"] = w["rms_att"][l]
        t[p + "self_attn.q_proj.weight"] = permute(w["wq"][l], cfg["heads"], d, d)
        t[p + "self_attn.k_proj.weight"] = permute(w["wk"][l], cfg["kv_heads"], kv, d)
        t[p + "self_attn.v_proj.weight"] = w["wv"][l]
        t[p + "self_attn.o_proj.weight"] = w["wo"][l]
        t[p + "post_attention_layernorm.weight"] = w["rms_ffn"][l]
        t[p + "mlp.gate_proj.weight"] = w["w1"][l]
        t[p + "mlp.down_proj.weight"] = w["w2"][l]
        t[p + "mlp.up_proj.weight"] = w["w3"][l]
    if not cfg["shared"]:
        t["lm_head.weight"] = w["wcls"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in t.items()}


def llama3_rope_factors(cfg, scaling):
    """convert_hf_to_gguf.py's `rope_freqs` for `rope_type = llama3` (conversion/llama.py,
    `generate_extra_tensors`): 1 for short wavelengths, `factor` for long ones, smoothed
    between."""
    hs = cfg["dim"] // cfg["heads"]
    base = cfg.get("rope_theta", 10000.0)
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    out = []
    for freq in 1.0 / (base ** (np.arange(0, hs, 2, dtype=np.float32) / hs)):
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def hf_forward(cfg, t, tokens):
    """LlamaForCausalLM's (or Qwen2ForCausalLM's, with biases) forward in float64 over
    `tokens`: logits at every position."""
    t = {k: v.astype(np.float64) for k, v in t.items()}
    d, H, KV = cfg["dim"], cfg["heads"], cfg["kv_heads"]
    hs, n, eps = d // H, len(tokens), cfg.get("rms_eps", 1e-5)
    inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (np.arange(0, hs, 2) / hs))
    if cfg.get("rope_factors") is not None:
        inv = inv / np.asarray(cfg["rope_factors"], dtype=np.float64)
    ang = np.outer(np.arange(n), inv)
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))

    def rotate_half(x):
        return np.concatenate([-x[..., hs // 2:], x[..., : hs // 2]], -1)

    def rope(x):  # (n, heads, hs)
        return x * cos[:, None, :] + rotate_half(x) * sin[:, None, :]

    def norm(x, w):
        return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))

    x = t["model.embed_tokens.weight"][tokens]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    for l in range(cfg["layers"]):
        p = lambda part: t[f"model.layers.{l}.{part}.weight"]
        b = lambda part: t.get(f"model.layers.{l}.{part}.bias", 0.0)
        h = norm(x, p("input_layernorm"))
        q = rope((h @ p("self_attn.q_proj").T + b("self_attn.q_proj")).reshape(n, H, hs))
        k = rope((h @ p("self_attn.k_proj").T + b("self_attn.k_proj")).reshape(n, KV, hs))
        v = (h @ p("self_attn.v_proj").T + b("self_attn.v_proj")).reshape(n, KV, hs)
        k, v = np.repeat(k, H // KV, axis=1), np.repeat(v, H // KV, axis=1)  # repeat_kv
        s = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(hs) + mask
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        x = x + np.einsum("hqk,khd->qhd", a, v).reshape(n, d) @ p("self_attn.o_proj").T
        h = norm(x, p("post_attention_layernorm"))
        g = h @ p("mlp.gate_proj").T
        x = x + ((g / (1 + np.exp(-g))) * (h @ p("mlp.up_proj").T)) @ p("mlp.down_proj").T
    x = norm(x, t["model.norm.weight"])
    head = t["lm_head.weight"] if "lm_head.weight" in t else t["model.embed_tokens.weight"]
    return (x @ head.T).tolist()
