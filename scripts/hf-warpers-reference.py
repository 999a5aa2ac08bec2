#!/usr/bin/env python3
"""Hugging Face transformers' own logits warpers (EpsilonLogitsWarper, EtaLogitsWarper,
TopHLogitsWarper, and for the order cases TemperatureLogitsWarper, TopKLogitsWarper and
TopPLogitsWarper) on realistic 512-wide float32 rows: the reference the tests hold our
`epsilon_cutoff`, `eta_cutoff`, `top_h` and `profile = hf` stages to. Not part of the test
command's set-up (torch's Linux wheel is a CUDA build, about 3 GB with its nvidia
dependencies; it runs on CPU, no GPU needed). Run by hand and commit what it writes:
    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch==2.15.0 transformers==5.25.0 numpy==2.4.6
    /tmp/hfvenv/bin/python scripts/hf-warpers-reference.py tests/fixtures/samplers/hf.json

Written with transformers 5.25.0, torch 2.15.0 (2.15.0+cu132 run on CPU), numpy 2.4.6,
Python 3.11.7; the versions are recorded in the JSON's "peer".

Rows (float32, vocab 512, drawn with numpy's default_rng; fixed seeds, so the file is the
same on every run):
- row 0: normal * 3, seed 20251 (top token p 0.17, entropy 3.4 nats);
- row 1, flat: normal * 1, seed 20252 (top token p 0.020, entropy 5.75 nats);
- row 2, peaked: normal * 3, seed 20253 (one outlier: top token p 0.84, entropy 1.06 nats);
- if tests/fixtures/samplers/llama-cpp.json (the llama.cpp sampler fixture) exists when this
  runs, the distinct "logits" rows of width >= 64 of its "cases" are added as
  "llama-cpp row N"; the committed hf.json was written before that file existed.

Cases, each row: epsilon_cutoff 3e-4, 1e-3, 0.02; eta_cutoff 3e-4, 2e-3, 0.02; top_h 0.3,
0.5, 0.9; "hf chain": the warpers built directly in `GenerationMixin._get_logits_processor`'s
order (temperature -> top_h -> top_k -> top_p -> min_p -> typical -> epsilon -> eta) with
temperature 0.7, top_h 0.5, top_k 50, top_p 0.9, epsilon 1e-3, eta 2e-3,
min_tokens_to_keep = 1, applied in sequence; and "hf chain no top_h", the same without top_h
(so that top_k and top_p cut). Each warper gets a (1, V) float32 tensor, as `_sample` does.

Each case: "kept", the ids whose output logit is finite (the warpers write -inf elsewhere),
and "probs", the float64 softmax of the output over the kept ids, [id, p] sorted by id.

The script writes nothing (and exits non-zero) if any case has a token within 1e-6 (relative) of a cutoff
(probability vs epsilon / eta, cumulative entropy vs top_h * H, cumulative probability vs
1 - top_p, a tie at the k-th logit), measured in float64 on each warper's own input: there
float32 rounding could flip the decision. It prints each case's kept count and margin.
"""
import json
import sys
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import (
    EpsilonLogitsWarper,
    EtaLogitsWarper,
    TemperatureLogitsWarper,
    TopHLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

VOCAB = 512
BOUNDARY = 1e-6
LLAMA_CPP = Path(__file__).resolve().parent.parent / "tests/fixtures/samplers/llama-cpp.json"


def rows():
    out = []
    z = np.random.default_rng(20251).standard_normal(VOCAB) * 3.0
    out.append(("row 0", z.astype(np.float32)))
    z = np.random.default_rng(20252).standard_normal(VOCAB) * 1.0
    out.append(("row 1", z.astype(np.float32)))
    z = np.random.default_rng(20253).standard_normal(VOCAB) * 3.0
    out.append(("row 2", z.astype(np.float32)))
    if LLAMA_CPP.exists():
        seen = set()
        data = json.loads(LLAMA_CPP.read_text())
        for case in data.get("cases", []) if isinstance(data, dict) else []:
            logits = case.get("logits") if isinstance(case, dict) else None
            if not logits or len(logits) < 64:
                continue
            key = tuple(logits)
            if key in seen:
                continue
            seen.add(key)
            out.append((f"llama-cpp row {len(seen) - 1}", np.array(logits, dtype=np.float32)))
    return out


def softmax64(x):
    x = np.asarray(x, dtype=np.float64)
    fin = np.isfinite(x)
    p = np.zeros_like(x)
    e = np.exp(x[fin] - x[fin].max())
    p[fin] = e / e.sum()
    return p


def rel(a, b):
    return float(np.min(np.abs(np.asarray(a) - b)) / abs(b))


# Margins: how far (relative) the warper's nearest decision sits from its cutoff, float64.
def margin_cutoff(x, cutoff):
    p = softmax64(x)
    return rel(p[np.isfinite(x)], cutoff)


def margin_eta(x, eps):
    p = softmax64(x)
    fin = np.isfinite(x) & (p > 0)
    h = -np.sum(p[fin] * np.log(p[fin]))
    eta = min(eps, np.sqrt(eps) * np.exp(-h))
    return rel(p[np.isfinite(x)], eta)


def margin_top_h(x, top_h):
    top = np.sort(np.asarray(x, dtype=np.float64))[::-1][:100]
    top = top[np.isfinite(top)]
    q = softmax64(top)
    q = q[q > 0]
    terms = -q * np.log(q)
    return rel(np.cumsum(terms), top_h * terms.sum())


def margin_top_k(x, k):
    s = np.sort(np.asarray(x, dtype=np.float64))[::-1]
    if len(s) <= k or not np.isfinite(s[k]):
        return float("inf")
    return float(abs(s[k - 1] - s[k]) / max(abs(s[k - 1]), 1e-30))


def margin_top_p(x, top_p):
    fin = np.isfinite(x)
    p = np.sort(softmax64(x)[fin])
    return rel(np.cumsum(p), 1.0 - top_p)


def warper(kind, value):
    if kind == "temperature":
        return TemperatureLogitsWarper(value), None
    if kind == "top_h":
        return TopHLogitsWarper(top_h=value), lambda x: margin_top_h(x, value)
    if kind == "top_k":
        return TopKLogitsWarper(top_k=value, min_tokens_to_keep=1), lambda x: margin_top_k(x, value)
    if kind == "top_p":
        return TopPLogitsWarper(top_p=value, min_tokens_to_keep=1), lambda x: margin_top_p(x, value)
    if kind == "epsilon_cutoff":
        return EpsilonLogitsWarper(epsilon=value, min_tokens_to_keep=1), lambda x: margin_cutoff(x, value)
    if kind == "eta_cutoff":
        return EtaLogitsWarper(epsilon=value, min_tokens_to_keep=1, device="cpu"), lambda x: margin_eta(x, value)
    raise ValueError(kind)


def run(logits, stages):
    """Apply the warpers in order to a (1, V) float32 tensor; returns the float32 output and
    the smallest boundary margin over the stages."""
    scores = torch.from_numpy(logits.copy()).unsqueeze(0)
    input_ids = torch.zeros((1, 1), dtype=torch.long)
    margin = float("inf")
    for kind, text in stages:
        value = int(text) if kind == "top_k" else float(text)
        w, m = warper(kind, value)
        if m is not None:
            margin = min(margin, m(scores[0].numpy()))
        scores = w(input_ids, scores)
        assert scores.dtype == torch.float32
    return scores[0].numpy(), margin


SINGLE = [
    ("epsilon", "epsilon_cutoff", ["3e-4", "1e-3", "0.02"], ["0.0003", "0.001", "0.02"]),
    ("eta", "eta_cutoff", ["3e-4", "2e-3", "0.02"], ["0.0003", "0.002", "0.02"]),
    ("top_h", "top_h", ["0.3", "0.5", "0.9"], ["0.3", "0.5", "0.9"]),
]
CHAIN = [("temperature", "0.7"), ("top_h", "0.5"), ("top_k", "50"), ("top_p", "0.9"),
         ("epsilon_cutoff", "0.001"), ("eta_cutoff", "0.002")]


def main():
    out_path = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/samplers/hf.json")
    torch.set_num_threads(1)
    specs = []
    for row_name, logits in rows():
        for label, knob, shown, values in SINGLE:
            for s, v in zip(shown, values):
                specs.append((f"{label} {s} {row_name}", logits, {knob: v}, [(knob, v)]))
        specs.append((f"hf chain {row_name}", logits,
                       {"profile": "hf", **dict(CHAIN)}, CHAIN))
        no_h = [st for st in CHAIN if st[0] != "top_h"]
        specs.append((f"hf chain no top_h {row_name}", logits,
                       {"profile": "hf", **dict(no_h)}, no_h))

    cases, bad = [], []
    for name, logits, knobs, stages in specs:
        y, margin = run(logits, stages)
        kept = np.flatnonzero(np.isfinite(y))
        p = softmax64(y)
        cases.append({
            "name": name,
            "logits": [float(v) for v in logits],
            "knobs": knobs,
            "kept": [int(i) for i in kept],
            "probs": [[int(i), float(p[i])] for i in kept],
        })
        flag = "  <-- within 1e-6 of a cutoff" if margin < BOUNDARY else ""
        print(f"{name:32s} kept {len(kept):4d}  margin {margin:.3e}{flag}")
        if margin < BOUNDARY:
            bad.append(name)
    if bad:
        raise SystemExit(f"cases on a boundary, change the seed: {bad}")

    peer = f"transformers {transformers.__version__}, torch {torch.__version__.split('+')[0]}"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    body = ",\n".join("  " + json.dumps(c) for c in cases)  # one case a line
    out_path.write_text(f'{{\n "peer": {json.dumps(peer)},\n "cases": [\n{body}\n ]\n}}\n')
    print(f"{len(cases)} cases -> {out_path} ({peer})")


if __name__ == "__main__":
    main()
