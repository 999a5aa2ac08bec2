#!/usr/bin/env python3
"""llama.cpp's own grammar sampler on stories260K: greedy decoding (temperature 0) under GBNF
grammars, the reference the tests hold our constraint stage to, token for token. Not part of
the test command's set-up (llama-cpp-python builds llama.cpp from source, about 15 minutes on
2 cores). Run by hand and commit what it writes:
    python3 -m venv /tmp/lcpp-venv
    /tmp/lcpp-venv/bin/pip install llama-cpp-python==0.3.36 gguf==0.19.0 numpy==2.4.6
    /tmp/lcpp-venv/bin/python scripts/llama-cpp-grammar-reference.py \\
        stories260K.bin tok512.bin tests/fixtures/grammar
(llama-cpp-python 0.3.36 vendors llama.cpp 0c1e57098.) The llama2.c checkpoint is converted
to an f32 GGUF by scripts/llama2c-to-gguf.py (as scripts/llama-cpp-samplers-reference.py
does); its sha256 is recorded.

For each case: llama-cpp-python's `Llama.generate` with `temp=0` and a `LlamaGrammar` from
the GBNF text, whose chain is penalties (repeat 1: none), llama.cpp's grammar sampler
(`llama_sampler_init_grammar`, its own GBNF engine, not llguidance), then greedy; one thread
and an f32 KV cache. Generation stops at EOS (which the grammar allows only where the text
is complete) or after `max_tokens`. Written to OUT_DIR/llama-cpp.json: the prompt's ids
(with BOS), the generated ids (EOS included when generated) and their text.
"""
import hashlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "samplers_ref", Path(__file__).resolve().parent / "llama-cpp-samplers-reference.py")
samplers_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(samplers_ref)

# (name, prompt, GBNF, max tokens): alternatives, character classes, repetition.
CASES = [
    ("yes or no", "Once upon a time", 'root ::= " " ("yes" | "no") "."\n', 8),
    ("a date", "Lily was born on",
     'root ::= " " [0-9]{4} "-" [0-1] [0-9] "-" [0-3] [0-9] "."\n', 16),
    ("two names", "Once upon a time, there were",
     'root ::= " " name " and " name "."\nname ::= [A-Z] [a-z]+\n', 24),
    ("a list", "Lily liked",
     'root ::= item{2,3}\nitem ::= "\\n- " [a-z]+ ("," | ".")\n', 32),
    ("words to a full stop", "The cat",
     'root ::= (" " word)+ "."\nword ::= [a-z]+ | "big" | "red"\n', 32),
    ("a character", "Tom had a dog named",
     'root ::= "{\\"name\\": \\"" [A-Z] [a-z]+ "\\", \\"age\\": " [1-9] [0-9]? ", '
     '\\"pet\\": \\"" ("dog" | "cat" | "bird") "\\"}"\n', 40),
    ("not a quote", "She said",
     'root ::= " \\"" [^"\\n]+ "\\"" ([.!?])?\n', 32),
]


def main():
    from llama_cpp import Llama, LlamaGrammar
    model_bin, tok_bin, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    out_dir.mkdir(parents=True, exist_ok=True)
    result = {"peer": "llama.cpp 0c1e57098 via llama-cpp-python 0.3.36 (its grammar sampler)",
              "model": "stories260K, f32 GGUF from scripts/llama2c-to-gguf.py", "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        gguf = samplers_ref.to_gguf(model_bin, tok_bin, tmp)
        result["gguf_sha256"] = hashlib.sha256(gguf.read_bytes()).hexdigest()
        llm = Llama(model_path=str(gguf), n_ctx=512, n_threads=1, n_threads_batch=1,
                    type_k=0, type_v=0, verbose=False, seed=0)
        eos = llm.token_eos()
        for name, prompt, gbnf, max_tokens in CASES:
            grammar = LlamaGrammar.from_string(gbnf, verbose=False)
            ids = llm.tokenize(prompt.encode(), add_bos=True)
            out = []
            llm.reset()
            for tok in llm.generate(ids, temp=0.0, repeat_penalty=1.0, grammar=grammar):
                out.append(tok)
                if tok == eos or len(out) >= max_tokens:
                    break
            text = llm.detokenize([t for t in out if t != eos]).decode(errors="replace")
            print(f"{name:24} {len(out):>3} tokens {text!r}")
            result["cases"].append({"name": name, "prompt": prompt, "prompt_ids": ids,
                                    "grammar": gbnf, "max_tokens": max_tokens,
                                    "tokens": out, "text": text})
    (out_dir / "llama-cpp.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out_dir / 'llama-cpp.json'}")


if __name__ == "__main__":
    main()
