#!/usr/bin/env python3
"""llama.cpp's own tokenizer and forward pass on the architecture fixtures that
make-arch-fixtures.py writes at set-up: the reference the tests hold our BPE
vocabularies, Qwen2 and Llama 3 RoPE to. Not part of the test command's set-up (llama-cpp-python
builds llama.cpp from source, about 15 minutes on 2 cores). Run by hand after the set-up and
commit what it writes:
    python3 -m venv /tmp/lcpp-venv
    /tmp/lcpp-venv/bin/pip install llama-cpp-python==0.3.36 gguf==0.19.0 numpy==2.4.6
    /tmp/lcpp-venv/bin/python scripts/llama-cpp-arch-reference.py assets/models/fixtures/arch tests/fixtures/arch

Written to OUT_DIR/llama-cpp.json, for each file its sha256 (the tests check that the set-up
wrote the same file) and:
- bpe-<pre>.gguf: the ids `llama_tokenize` gives expected.json's text (no BOS, special
  tokens not parsed), and the ids of the ChatML text with <|im_start|> / <|im_end|> parsed
  as special tokens;
- qwen2.gguf, llama3-rope.gguf: llama.cpp's logits (float32 weights and KV cache) at every
  position of expected.json's tokens; for qwen2.gguf also llama.cpp's rendering of its chat
  template for one user message (`llama_chat_apply_template`).
"""
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_cpp_ref import llama_logits, vocab_only_model  # noqa: E402

CHAT_USER = "Hi there!"
CHAT = "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n"


def tokenize(llama_cpp, path, text, special):
    model = vocab_only_model(llama_cpp, path)
    vocab = llama_cpp.llama_model_get_vocab(model)
    raw = text.encode()
    out = (llama_cpp.llama_token * (len(raw) + 8))()
    n = llama_cpp.llama_tokenize(vocab, raw, len(raw), out, len(out), False, special)
    if n < 0:
        raise SystemExit(f"llama_tokenize failed on {path}: {n}")
    ids = list(out[:n])
    llama_cpp.llama_model_free(model)
    return ids


def chat_apply(llama_cpp, path, user):
    """llama.cpp's own rendering of the file's chat template (`llama_chat_apply_template`,
    which recognises the template and applies its C++ version) for one user message, the
    assistant's turn opened."""
    import ctypes
    model = vocab_only_model(llama_cpp, path)
    tmpl = llama_cpp.llama_model_chat_template(model, None)
    msgs = (llama_cpp.llama_chat_message * 1)()
    msgs[0].role, msgs[0].content = b"user", user.encode()
    buf = ctypes.create_string_buffer(4096)
    n = llama_cpp.llama_chat_apply_template(tmpl, msgs, 1, True, buf, len(buf))
    llama_cpp.llama_model_free(model)
    if n < 0:
        raise SystemExit(f"llama_chat_apply_template failed on {path}: {n}")
    return buf.raw[:n].decode()


def main():
    import llama_cpp
    fixtures, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    expected = json.loads((fixtures / "expected.json").read_text())
    result = {"llama_cpp_python": llama_cpp.__version__, "chat_text": CHAT, "files": {}}
    for path in sorted(fixtures.glob("*.gguf")):
        entry = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        if path.name.startswith("bpe-") and path.name != "bpe-unknown.gguf":
            entry["ids"] = tokenize(llama_cpp, path, expected["text"], False)
            entry["chat_ids"] = tokenize(llama_cpp, path, CHAT, True)
        elif path.name in ("qwen2.gguf", "llama3-rope.gguf"):
            entry["logits"] = llama_logits(llama_cpp, path, expected["tokens"]).tolist()
            if path.name == "qwen2.gguf":
                entry["chat_user"] = CHAT_USER
                entry["chat_rendered"] = chat_apply(llama_cpp, path, CHAT_USER)
        else:
            continue
        result["files"][path.name] = entry
    (out_dir / "llama-cpp.json").write_text(json.dumps(result) + "\n")
    print(f"wrote {out_dir / 'llama-cpp.json'}")


if __name__ == "__main__":
    main()
