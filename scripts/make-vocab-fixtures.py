#!/usr/bin/env python3
"""Vocabularies the size of the ones people download, for timing the constraint's mask
(`decoding-explorer bench --mask --mask-vocab FILE`): trained by Hugging Face's `tokenizers`
(PyPI) on a fixed corpus, each on the smallest working model (dim 16, one layer) written by
llama.cpp's `gguf` package. No downloads.

    make-vocab-fixtures.py OUT_DIR

- spm-32000.gguf: Llama 2's shape of vocabulary: SentencePiece-style BPE (`tokenizer.ggml.model
  = llama`, "▁" for a space, byte fallback `<0x00>`…`<0xFF>`), 32,000 tokens: <unk>, <s>,
  </s>, the 256 bytes, then the merges.
- bpe-49152.gguf: SmolLM's: GPT-2 byte-level BPE (`tokenizer.ggml.model = gpt2`, pre
  `smollm`), 49,152 tokens with <|endoftext|>, <|im_start|>, <|im_end|> (CONTROL).

The corpus is the Python source of numpy (pinned in requirements-fixtures.txt, so the same
text everywhere): code and English comments, about 15 MB.
"""
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import importlib.util  # noqa: E402

from llama2c_gguf import tiny_weights, write_gguf as write_spm  # noqa: E402
from gguf import GGMLQuantizationType as Q  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "arch", Path(__file__).resolve().parent / "make-arch-fixtures.py")
arch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(arch)


def corpus():
    root = Path(np.__file__).parent
    for p in sorted(root.rglob("*.py")):
        yield p.read_text(encoding="utf-8", errors="replace")


def shape(vocab):
    return dict(dim=16, hidden=32, layers=1, heads=2, kv_heads=2, vocab=vocab, seq_len=64,
                shared=True, rope_theta=10000.0, rms_eps=1e-5)


def spm_32000(out):
    tk = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    base = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=32000, special_tokens=base, show_progress=False)
    tk.train_from_iterator(corpus(), trainer)
    n = tk.get_vocab_size()
    assert n == 32000, n
    # llama2.c's spelling of the pieces (a space for "▁"), which write_gguf turns back.
    pieces = [tk.id_to_token(i).replace("\u2581", " ") for i in range(n)]
    pieces[1], pieces[2] = "\n<s>\n", "\n</s>\n"
    scores = [-float(i) for i in range(n)]
    cfg = shape(n)
    w = tiny_weights(cfg, seed=5)
    write_spm(out / "spm-32000.gguf", cfg, w, [p.encode() for p in pieces], scores, Q.F32)


def bpe_49152(out):
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=49152, special_tokens=arch.SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tk.train_from_iterator(corpus(), trainer)
    n = tk.get_vocab_size()
    assert n == 49152, n
    cfg = shape(n)
    w = tiny_weights(cfg, seed=6)
    del w["wcls"]
    t = arch.hf_tensors(cfg, w)
    arch.write_gguf(out / "bpe-49152.gguf", "llama", cfg, arch.gguf_tensors(cfg, t, False),
                    arch.vocab_of(tk), "smollm")


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    spm_32000(out)
    bpe_49152(out)
    for f in sorted(out.glob("*.gguf")):
        print(f"wrote {f} ({f.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
