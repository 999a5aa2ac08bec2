#!/usr/bin/env python3
"""config.json files as Hugging Face's transformers itself writes them, for the reader's
tests (`crates/engine/tests/hf.rs`): run by hand, once a transformers version, and
committed with that version in the folder's name (the test command does not install
transformers).

    python3 -m venv /tmp/tf && /tmp/tf/bin/pip install transformers==5.25.0
    /tmp/tf/bin/python scripts/make-hf-configs.py tests/fixtures/hf-config

writes OUT/transformers-<version>/ with, for the tiny Llama of make-hf-fixtures.py (hidden
64, 2 layers, 4 heads, 2 KV heads, vocabulary 512, context 64, rms_norm_eps 1e-6):

- plain.json: rope_theta 500,000 (Llama 3's base), no scaling. transformers 4 writes it at
  the top level beside "rope_scaling": null; transformers 5 inside "rope_parameters".
- llama3.json: the same base with Llama 3's scaling (factor 8, low_freq_factor 1,
  high_freq_factor 4, original_max_position_embeddings 40: of the 8
  frequency pairs, one is kept, one smoothed and six divided by 8).
- yarn.json: YaRN scaling (factor 4 over 40 positions), which the engine refuses by name.
- qwen2.json: a Qwen2Config of the same shape at rope_theta 1,000,000 (Qwen2's base).

Each is `save_pretrained`'s config.json, unchanged. The call is the same for both
generations: transformers 5 turns the `rope_theta` and `rope_scaling` arguments into its
`rope_parameters` (modeling_rope_utils.py, convert_rope_params_to_dict).
"""
import json
import sys
import tempfile
from pathlib import Path

import transformers
from transformers import LlamaConfig, Qwen2Config

SHAPE = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
             rms_norm_eps=1e-6, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 40}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 40}


def saved(config):
    with tempfile.TemporaryDirectory() as d:
        config.save_pretrained(d)
        return (Path(d) / "config.json").read_text()


def main():
    out = Path(sys.argv[1]) / f"transformers-{transformers.__version__}"
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "plain.json": LlamaConfig(**SHAPE, rope_theta=500000.0, rope_scaling=None),
        "llama3.json": LlamaConfig(**SHAPE, rope_theta=500000.0, rope_scaling=dict(LLAMA3)),
        "yarn.json": LlamaConfig(**SHAPE, rope_theta=500000.0, rope_scaling=dict(YARN)),
        "qwen2.json": Qwen2Config(**SHAPE, rope_theta=1000000.0),
    }
    for name, config in files.items():
        (out / name).write_text(saved(config))
    json.loads((out / "plain.json").read_text())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
