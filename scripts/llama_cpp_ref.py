"""llama.cpp's own answers through llama-cpp-python (pinned 0.3.36, built from source, by
hand: not part of the test set-up), for the scripts that write committed references
(make-kquant-fixtures.py --reference, llama-cpp-arch-reference.py)."""
import numpy as np


def llama_logits(llama_cpp, path, prompt, exact_attention=False):
    """llama.cpp's logits (float32) at every position of `prompt`. Without the CPU's extra buffer types
    (`use_extra_bufts = false`): with them, this VM's AMX/repacked k-quant kernels crash
    (a segmentation fault in `eval`), so the reference is ggml's plain CPU kernels.

    `exact_attention`: flash attention off. llama.cpp's default ("auto") runs the CPU's flash
    attention, which rounds V (and Q) to f16 (`ggml_compute_forward_flash_attn_ext_f16`): the
    attention output of one key is V rounded (-0.857627 comes out -0.857422), a 2 % change of
    a small random model's centred log-probabilities that hides the matrix products' own."""
    mp = llama_cpp.llama_model_default_params()
    mp.use_extra_bufts = False
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), mp)
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_threads, cp.n_threads_batch = 64, 64, 1, 1
    # a float32 KV cache (llama.cpp's default is f16), as ours is
    cp.type_k = cp.type_v = 0  # GGML_TYPE_F32
    if exact_attention:
        cp.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    ctx = llama_cpp.llama_init_from_model(model, cp)
    batch = llama_cpp.llama_batch_init(len(prompt), 0, 1)
    batch.n_tokens = len(prompt)
    for i, t in enumerate(prompt):
        batch.token[i], batch.pos[i], batch.n_seq_id[i] = t, i, 1
        batch.seq_id[i][0], batch.logits[i] = 0, True
    if llama_cpp.llama_decode(ctx, batch) != 0:
        raise SystemExit(f"llama_decode failed on {path}")
    n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))
    rows = [np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, i), shape=(n_vocab,)).copy()
            for i in range(len(prompt))]
    llama_cpp.llama_batch_free(batch)
    llama_cpp.llama_free(ctx)
    llama_cpp.llama_model_free(model)
    return np.asarray(rows, dtype="<f4")


def vocab_only_model(llama_cpp, path):
    """llama.cpp's model of `path` with its vocabulary only (no weights read)."""
    mp = llama_cpp.llama_model_default_params()
    mp.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), mp)
    if not model:
        raise SystemExit(f"llama.cpp refused {path}")
    return model
