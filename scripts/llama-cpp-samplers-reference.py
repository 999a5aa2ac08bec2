#!/usr/bin/env python3
"""llama.cpp's own samplers (DRY, XTC, top-n-sigma, dynamic temperature, mirostat 1 and 2,
adaptive-p, and common_sampler_init's default chain) on stories260K's logits: the reference
the tests hold our sampling chain to. Not part of the test command's set-up (llama-cpp-python
builds llama.cpp from source, about 15 minutes on 2 cores). Run by hand and commit what it
writes:
    python3 -m venv /tmp/lcpp-venv
    /tmp/lcpp-venv/bin/pip install llama-cpp-python==0.3.36 gguf==0.19.0 numpy==2.4.6
    /tmp/lcpp-venv/bin/python scripts/llama-cpp-samplers-reference.py \\
        stories260K.bin tok512.bin tests/fixtures/samplers
(llama-cpp-python 0.3.36 vendors llama.cpp 0c1e57098.) The llama2.c checkpoint is converted
to an f32 GGUF in a temporary folder by scripts/llama2c-to-gguf.py, run by the Python in
$GGUF_PYTHON (default: this one), which needs the `gguf` package; its sha256 is recorded.

Written to OUT_DIR/llama-cpp.json: the prompt, its ids (`llama_tokenize`, with BOS), and
cases. Each case is llama.cpp's float32 logits at one position of the prompt, the history
(the prompt's ids up to and including that position, fed to the chain with
`llama_sampler_accept` first, as llama.cpp's server feeds the prompt, so that penalties and
DRY see it), the knobs (by our names, values as text) and what the chain left in
`llama_token_data_array` after `llama_sampler_apply`: the ids still in it whose logit is not
-inf (`kept`), the softmax of their logits in float64 (`probs`, whatever the samplers left in
`.p`), and the selected id where the chain draws (mirostat and adaptive-p draw inside
`apply`; the other cases stop before `dist`, so `selected` is null). Every RNG sampler gets
seed 0. Two cases are draws instead: the selected ids counted over seeds 0..n-1, a fresh
chain per seed whose every sampler (XTC and dist alike) gets that seed.

`chain` says which samplers run:
- "alone": only those of the listed knobs (DRY; XTC; top-n-sigma; temp_ext(temperature,
  dynatemp_range, dynatemp_exponent); temp(temperature, 1 if absent) then mirostat;
  adaptive-p), min_keep 0;
- "llama.cpp": common_sampler_init's chain with common's defaults (temp 0.8, top_k 40,
  top_p 0.95, min_p 0.05, typical_p 1, penalties 64/1/0/0, DRY off (multiplier 0, base 1.75,
  allowed 2, last 64, breakers \\n : " *), top-n-sigma -1, XTC 0/0.1, dynatemp 0/1,
  min_keep 0) overridden by the knobs, in its default order penalties, dry, top_n_sigma,
  top_k, typ_p, top_p, min_p, xtc, temperature (temp_ext); the disabled ones are llama.cpp's
  empty samplers. Then dist (the draws only), adaptive_p when adaptive_p_target is listed, or
  with mirostat only temp then mirostat (m = 100).
"""
import ctypes
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_cpp_ref import llama_logits, vocab_only_model  # noqa: E402

# Repeats itself (so DRY has something to find) across DRY's default breakers ':' and ' "'
# (so that clearing them changes the penalty). 46 tokens with BOS.
PROMPT = ('Once upon a time, there was a little girl. She said: "I like to play." '
          'Once upon a time, there was a little girl. She said: "I like to')
LAST = 45  # ' to' (next: ' play' repeats, its run capped at 4 by the ' "' breaker)
MID = 33   # ' little' (next: ' g' repeats the 9-token run ' Once' .. ' little')
SEED = 0
DRAWS = 4000
DEFAULT_BREAKERS = ["\n", ":", "\"", "*"]

# common_params_sampling's defaults (common/common.h), by our knob names.
COMMON = {
    "temperature": "0.8", "top_k": "40", "top_p": "0.95", "min_p": "0.05", "typical_p": "1",
    "repetition_penalty": "1", "frequency_penalty": "0", "presence_penalty": "0",
    "penalty_window": "64", "dry_multiplier": "0", "dry_base": "1.75",
    "dry_allowed_length": "2", "dry_penalty_last_n": "64", "top_n_sigma": "-1",
    "xtc_probability": "0", "xtc_threshold": "0.1", "dynatemp_range": "0",
    "dynatemp_exponent": "1", "mirostat": "0", "mirostat_tau": "5", "mirostat_eta": "0.1",
    "adaptive_p_decay": "0.9",
}

DRY = {"dry_multiplier": "0.8", "dry_base": "1.75", "dry_allowed_length": "2",
       "dry_penalty_last_n": "64"}
LC = {"profile": "llama.cpp"}

# (name, position, chain, knobs); draws: (name, position, chain, knobs) counted over seeds.
CASES = [
    ("dry alone", LAST, "alone", DRY),
    ("dry alone at ' little'", MID, "alone", DRY),
    ("dry alone multiplier 2 allowed 1", LAST, "alone",
     {**DRY, "dry_multiplier": "2", "dry_allowed_length": "1"}),
    ("dry alone no breakers", LAST, "alone", {**DRY, "dry_sequence_breaker": ["none"]}),
    ("dry alone breakers \\n only", LAST, "alone", {**DRY, "dry_sequence_breaker": ["\\n"]}),
    ("dry alone last 8", LAST, "alone", {**DRY, "dry_penalty_last_n": "8"}),
    ("dry alone no breakers last 30", LAST, "alone",
     {**DRY, "dry_penalty_last_n": "30", "dry_sequence_breaker": ["none"]}),
    ("xtc alone t 0.1", LAST, "alone", {"xtc_probability": "1", "xtc_threshold": "0.1"}),
    ("xtc alone t 0.05", LAST, "alone", {"xtc_probability": "1", "xtc_threshold": "0.05"}),
    ("top_n_sigma alone 1", LAST, "alone", {"top_n_sigma": "1"}),
    ("top_n_sigma alone 0.5", LAST, "alone", {"top_n_sigma": "0.5"}),
    ("dynatemp alone exponent 1", LAST, "alone",
     {"temperature": "0.8", "dynatemp_range": "0.5", "dynatemp_exponent": "1"}),
    ("dynatemp alone exponent 2", LAST, "alone",
     {"temperature": "0.8", "dynatemp_range": "0.5", "dynatemp_exponent": "2"}),
    ("mirostat 1 first step", LAST, "alone",
     {"temperature": "1", "mirostat": "1", "mirostat_tau": "5", "mirostat_eta": "0.1",
      "mirostat_m": "100"}),
    ("mirostat 2 first step tau 3", LAST, "alone",
     {"temperature": "1", "mirostat": "2", "mirostat_tau": "3", "mirostat_eta": "0.1"}),
    ("mirostat 2 first step tau 5", LAST, "alone",
     {"temperature": "1", "mirostat": "2", "mirostat_tau": "5", "mirostat_eta": "0.1"}),
    ("adaptive_p first step target 0.3", LAST, "alone",
     {"adaptive_p_target": "0.3", "adaptive_p_decay": "0.9"}),
    ("adaptive_p first step target 0.1", LAST, "alone",
     {"adaptive_p_target": "0.1", "adaptive_p_decay": "0.9"}),
    ("llama.cpp chain", LAST, "llama.cpp", LC),
    ("llama.cpp chain + dry 0.8", LAST, "llama.cpp", {**LC, "dry_multiplier": "0.8"}),
    ("llama.cpp chain + dry 0.8 at ' little'", MID, "llama.cpp", {**LC, "dry_multiplier": "0.8"}),
    ("llama.cpp chain + top_n_sigma 1", LAST, "llama.cpp", {**LC, "top_n_sigma": "1"}),
    ("llama.cpp chain + top_n_sigma 0.25", LAST, "llama.cpp", {**LC, "top_n_sigma": "0.25"}),
    ("llama.cpp chain min_p 0", LAST, "llama.cpp", {**LC, "min_p": "0"}),
    ("llama.cpp chain + xtc 1 0.1", LAST, "llama.cpp",
     {**LC, "xtc_probability": "1", "xtc_threshold": "0.1"}),
    ("llama.cpp chain + dynatemp 0.5", LAST, "llama.cpp", {**LC, "dynatemp_range": "0.5"}),
    ("llama.cpp chain + mirostat 2 tau 5", LAST, "llama.cpp",
     {**LC, "mirostat": "2", "mirostat_tau": "5"}),
    ("llama.cpp chain + adaptive_p 0.3", LAST, "llama.cpp", {**LC, "adaptive_p_target": "0.3"}),
    ("llama.cpp chain + penalties", LAST, "llama.cpp",
     {**LC, "repetition_penalty": "1.3", "frequency_penalty": "0.2", "presence_penalty": "0.1"}),
    ("llama.cpp chain + typical_p 0.9", LAST, "llama.cpp", {**LC, "typical_p": "0.9"}),
    ("llama.cpp chain greedy", LAST, "llama.cpp", {**LC, "temperature": "0"}),
]
DRAW_CASES = [
    ("xtc 0.5 draws", LAST, "alone", {"xtc_probability": "0.5", "xtc_threshold": "0.1"}),
    ("llama.cpp chain draws", LAST, "llama.cpp", LC),
]


def to_gguf(model_bin, tok_bin, tmp):
    """stories260K as an f32 GGUF by scripts/llama2c-to-gguf.py (a fixed file name: the
    writer puts the stem in general.name)."""
    out = Path(tmp) / "stories260K-f32.gguf"
    python = os.environ.get("GGUF_PYTHON", sys.executable)
    script = Path(__file__).resolve().parent / "llama2c-to-gguf.py"
    subprocess.run([python, str(script), str(model_bin), str(tok_bin), str(out), "f32"], check=True)
    return out


def tokenize(llama_cpp, vocab, text):
    raw = text.encode()
    out = (llama_cpp.llama_token * (len(raw) + 8))()
    n = llama_cpp.llama_tokenize(vocab, raw, len(raw), out, len(out), True, False)
    if n < 0:
        raise SystemExit(f"llama_tokenize failed: {n}")
    return list(out[:n])


def piece(llama_cpp, vocab, token):
    buf = ctypes.create_string_buffer(64)
    n = llama_cpp.llama_token_to_piece(vocab, token, buf, len(buf), 0, True)
    return buf.raw[:n].decode(errors="replace")


def breakers(knobs):
    """The DRY breakers as C strings: common's defaults unless listed; "none" clears them;
    the text's two-character escape \\n is a newline (llama.cpp's string_process_escapes)."""
    listed = knobs.get("dry_sequence_breaker")
    if listed is None:
        return [b.encode() for b in DEFAULT_BREAKERS]
    if listed == ["none"]:
        return []
    return [b.replace("\\n", "\n").encode() for b in listed]


def samplers(llama_cpp, vocab, n_vocab, chain, knobs, seed, draw):
    """The samplers (fresh, in order) of a case's chain; `draw`: end the llama.cpp chain with
    dist (or XTC alone with dist)."""
    k = dict(COMMON, **knobs) if chain == "llama.cpp" else knobs
    f = lambda name: float(k[name])  # noqa: E731
    i = lambda name: int(k[name])  # noqa: E731

    def dry():
        bs = breakers(k)
        arr = (ctypes.c_char_p * max(len(bs), 1))(*bs)
        return llama_cpp.llama_sampler_init_dry(vocab, f("dry_multiplier"), f("dry_base"),
                                                i("dry_allowed_length"), i("dry_penalty_last_n"),
                                                arr, len(bs))

    def mirostat():
        out = [llama_cpp.llama_sampler_init_temp(f("temperature") if "temperature" in k else 1.0)]
        if k["mirostat"] == "1":
            m = i("mirostat_m") if "mirostat_m" in k else 100
            out.append(llama_cpp.llama_sampler_init_mirostat(n_vocab, seed, f("mirostat_tau"),
                                                             f("mirostat_eta"), m))
        else:
            out.append(llama_cpp.llama_sampler_init_mirostat_v2(seed, f("mirostat_tau"),
                                                                f("mirostat_eta")))
        return out

    if chain == "alone":
        if "mirostat" in k:
            return mirostat()
        if "dry_multiplier" in k:
            return [dry()]
        if "xtc_probability" in k:
            out = [llama_cpp.llama_sampler_init_xtc(f("xtc_probability"), f("xtc_threshold"), 0, seed)]
            return out + ([llama_cpp.llama_sampler_init_dist(seed)] if draw else [])
        if "top_n_sigma" in k:
            return [llama_cpp.llama_sampler_init_top_n_sigma(f("top_n_sigma"))]
        if "dynatemp_range" in k:
            return [llama_cpp.llama_sampler_init_temp_ext(f("temperature"), f("dynatemp_range"),
                                                          f("dynatemp_exponent"))]
        if "adaptive_p_target" in k:
            return [llama_cpp.llama_sampler_init_adaptive_p(f("adaptive_p_target"),
                                                            f("adaptive_p_decay"), seed)]
        raise SystemExit(f"no sampler for {knobs}")
    if k["mirostat"] != "0":
        return mirostat()
    out = [
        llama_cpp.llama_sampler_init_penalties(n_vocab, i("penalty_window"), f("repetition_penalty"),
                                               f("frequency_penalty"), f("presence_penalty")),
        dry(),
        llama_cpp.llama_sampler_init_top_n_sigma(f("top_n_sigma")),
        llama_cpp.llama_sampler_init_top_k(i("top_k")),
        llama_cpp.llama_sampler_init_typical(f("typical_p"), 0),
        llama_cpp.llama_sampler_init_top_p(f("top_p"), 0),
        llama_cpp.llama_sampler_init_min_p(f("min_p"), 0),
        llama_cpp.llama_sampler_init_xtc(f("xtc_probability"), f("xtc_threshold"), 0, seed),
        llama_cpp.llama_sampler_init_temp_ext(f("temperature"), f("dynatemp_range"),
                                              f("dynatemp_exponent")),
    ]
    if "adaptive_p_target" in k:
        out.append(llama_cpp.llama_sampler_init_adaptive_p(f("adaptive_p_target"),
                                                           f("adaptive_p_decay"), seed))
    elif draw:
        out.append(llama_cpp.llama_sampler_init_dist(seed))
    return out


def run_chain(llama_cpp, vocab, n_vocab, chain, knobs, logits, history, seed, draw=False):
    """Applies a fresh chain (history accepted first) to the logits; returns the surviving
    (id, logit) pairs in the array's order and the selected id (None without a draw)."""
    ch = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    for s in samplers(llama_cpp, vocab, n_vocab, chain, knobs, seed, draw):
        llama_cpp.llama_sampler_chain_add(ch, s)
    for t in history:
        llama_cpp.llama_sampler_accept(ch, t)
    data = (llama_cpp.llama_token_data * n_vocab)()
    for t in range(n_vocab):
        data[t].id, data[t].logit, data[t].p = t, float(logits[t]), 0.0
    cur = llama_cpp.llama_token_data_array(
        data=ctypes.cast(data, llama_cpp.llama_token_data_p), size=n_vocab, selected=-1, sorted=False)
    llama_cpp.llama_sampler_apply(ch, ctypes.byref(cur))
    # cur.data may have moved forward (XTC drops the top of the sorted array that way)
    out = [(cur.data[j].id, cur.data[j].logit) for j in range(cur.size)]
    selected = cur.data[cur.selected].id if 0 <= cur.selected < cur.size else None
    llama_cpp.llama_sampler_free(ch)
    return out, selected


def f32(x):
    """A float32 as the shortest decimal that reads back to it."""
    return float(str(np.float32(x)))


def main():
    import llama_cpp
    model_bin, tok_bin, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        gguf = to_gguf(model_bin, tok_bin, tmp)
        sha = hashlib.sha256(gguf.read_bytes()).hexdigest()
        model = vocab_only_model(llama_cpp, gguf)
        vocab = llama_cpp.llama_model_get_vocab(model)
        n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        ids = tokenize(llama_cpp, vocab, PROMPT)
        rows = llama_logits(llama_cpp, gguf, ids)
    print(f"gguf sha256 {sha}; prompt {len(ids)} tokens, vocab {n_vocab}")
    for pos in (MID, LAST):
        print(f"  position {pos}: {piece(llama_cpp, vocab, ids[pos])!r}")

    result = {"peer": "llama.cpp 0c1e57098 via llama-cpp-python 0.3.36",
              "model": "stories260K, f32 GGUF from scripts/llama2c-to-gguf.py",
              "gguf_sha256": sha, "prompt": PROMPT, "prompt_ids": ids, "cases": []}
    print(f"{'case':42} {'pos':>3} {'kept':>4} {'selected':>8}  top survivors (id p)")
    for name, pos, chain, knobs in CASES:
        logits, history = rows[pos], ids[: pos + 1]
        kept, selected = run_chain(llama_cpp, vocab, n_vocab, chain, knobs, logits, history, SEED)
        kept = [(t, l) for t, l in kept if l != -np.inf]
        ls = np.array([l for _, l in kept], dtype=np.float64)
        p = np.exp(ls - ls.max())
        p /= p.sum()
        probs = sorted((t, float(f"{q:.12g}")) for (t, _), q in zip(kept, p))
        top = sorted(zip(p, (t for t, _ in kept)), reverse=True)[:4]
        print(f"{name:42} {pos:>3} {len(kept):>4} {str(selected):>8}  "
              + " ".join(f"{t}:{q:.3f}" for q, t in top))
        if chain == "alone" and "dry_multiplier" in knobs:
            hit = [(t, float(logits[t]) - l) for t, l in kept if l != logits[t]]
            print("      DRY penalised: " + (", ".join(
                f"{t} {piece(llama_cpp, vocab, t)!r} by {d:.6g}" for t, d in hit) or "nothing"))
        result["cases"].append({
            "name": name, "position": pos, "logits": [f32(x) for x in logits],
            "history": history, "chain": chain, "knobs": knobs,
            "kept": sorted(t for t, _ in kept), "probs": [[t, q] for t, q in probs],
            "selected": selected})
    for name, pos, chain, knobs in DRAW_CASES:
        logits, history = rows[pos], ids[: pos + 1]
        counts = {}
        for seed in range(DRAWS):
            _, selected = run_chain(llama_cpp, vocab, n_vocab, chain, knobs, logits, history, seed,
                                    draw=True)
            counts[selected] = counts.get(selected, 0) + 1
        print(f"{name:42} {pos:>3} {len(counts):>4} {'draws':>8}  "
              + " ".join(f"{t}:{c}" for t, c in sorted(counts.items(), key=lambda x: -x[1])[:6]))
        result["cases"].append({
            "name": name, "position": pos, "logits": [f32(x) for x in logits],
            "history": history, "chain": chain, "knobs": knobs,
            "draws": {"n": DRAWS, "counts": sorted([t, c] for t, c in counts.items())}})
    llama_cpp.llama_model_free(model)

    for case in result["cases"]:  # the text reads back to llama.cpp's float32 logits
        assert np.array_equal(np.array(case["logits"], dtype=np.float32), rows[case["position"]])
    (out_dir / "llama-cpp.json").write_text(json.dumps(result, separators=(",", ":")) + "\n")
    print(f"wrote {out_dir / 'llama-cpp.json'}")


if __name__ == "__main__":
    main()
