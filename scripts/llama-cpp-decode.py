#!/usr/bin/env python3
"""Decode tokens/s of llama.cpp (through llama-cpp-python from PyPI) on a GGUF file: greedy
from BOS for N tokens, one token a call, as scripts/bench-quantized.sh times the other
programs. Prints the rate. Python's per-token overhead is included (small against a 110M
model's step).

    llama-cpp-decode.py model.gguf threads tokens
"""
import sys
import time

from llama_cpp import Llama


def main():
    path, threads, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    llm = Llama(model_path=path, n_ctx=max(n + 8, 64), n_threads=threads,
                n_threads_batch=threads, n_batch=64, verbose=False)
    tokens = [1]
    llm.eval(tokens)
    t0 = time.perf_counter()
    for _ in range(n):
        tok = int(llm.sample(temp=0.0))
        llm.eval([tok])
    dt = time.perf_counter() - t0
    print(f"{n / dt:.2f}")


if __name__ == "__main__":
    main()
