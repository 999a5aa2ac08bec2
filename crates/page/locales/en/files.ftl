# A model file's refusals, a download's and the loading's, as the engine (`decoding-engine`'s
# errors), the page's download rules (`remote::http`) and the worker write them in English:
# `i18n::readback` reads a message back against these templates (each exactly the English the
# code writes, held by `i18n/tests_files.rs`) and writes it again in the page's language.
# A `$why` is itself read back; a `$list` is read back item by item (", " between them).

## The download (`remote::http::DownloadError`, the worker's `download.rs` and `store.rs`)
file-dl-not-found = { $url }: not found (HTTP 404)
file-dl-refused = { $url }: refused (HTTP { $status }): the file is gated (its licence must be accepted on the hub, which this page cannot do) or private; download it yourself and load it from your files
file-dl-status = { $url }: HTTP { $status }
file-dl-html = { $url } is an HTML page, not a model file (a hub link to a file's page says /blob/; its file is at /resolve/)
file-dl-over-budget = { $name } is { $bytes } bytes: more than the page's memory budget of { $limit } bytes
file-dl-wrong-size = { $name } is { $got } bytes where the list says { $want }: not the file it names
file-dl-wrong-hash = { $name }'s sha256 is { $got }, not the list's { $want }: the file is not the one it names (or was damaged)
file-dl-bad-range = { $url }: the server answered a range that does not start where the download stopped ({ $range })
file-dl-quota = the browser's storage has { $free } bytes free of its quota of { $quota }: { $name } needs { $need }
file-dl-dropped = { $url }: the connection dropped { $tries } times (the last at byte { $at }): { $why }
file-dl-cancelled = the download was cancelled
file-dl-check = { $name }: { $why } (read from its first bytes: the rest was not downloaded)
file-dl-storage = { $name } could not be written to the browser's storage ({ $why }); free space by deleting kept models
file-dl-storage-figures = { $why }; it holds { $usage } bytes of its quota of { $quota }
file-dl-body-ended = the body ended at byte { $at }
file-dl-unreadable = { $name } was downloaded but cannot be read back from the browser's storage
file-store-unavailable = the browser's storage is not available ({ $why })
file-store-unopenable = { $name } cannot be opened in the browser's storage ({ $why })

## Which files make a model (`formats::source::SourceError`)
file-src-none = no file was given
file-src-too-many = { $count } files were given: a model is one file (GGUF), two (a llama2.c checkpoint and its tokenizer) or three (a Hugging Face model.safetensors, config.json and tokenizer)
file-src-read = { $name } could not be read: { $why }
file-src-checkpoint-alone = { $name } is a llama2.c checkpoint: give its tokenizer too (tokenizer.bin, or tokenizer.json)
file-src-not-gguf = { $name } is not a GGUF file: it does not start with GGUF's magic bytes "GGUF" (it starts with { $start })
file-src-gguf-not-alone = { $name } is a GGUF file, which carries its own tokenizer: give it alone
file-src-hf-incomplete = { $name } is a Hugging Face checkpoint: give it with its config.json and its tokenizer (tokenizer.json, or a llama2.c tokenizer.bin), the three together
file-src-tokenizer-alone = { $name } is a tokenizer: give the model's checkpoint with it
file-src-not-one-model = these files are not one model ({ $found }): give a GGUF file alone, a llama2.c checkpoint (.bin) with its tokenizer, or a Hugging Face model.safetensors with its config.json and tokenizer.json

## The model as a whole (`model::ModelError`) and the worker's loading
file-model-checkpoint = model: { $why }
file-model-tokenizer = tokenizer: { $why }
file-model-gguf = GGUF: { $why }
file-model-hf = Hugging Face checkpoint: { $why }
file-model-chat = chat: { $why }
file-model-empty-prompt = the prompt is empty and this model's vocabulary starts no prompt with BOS: give it some text to start from
file-model-prompt-long = the prompt is { $tokens } tokens but the model's context holds { $seq }
file-open-failed = { $name } could not be opened: { $why }
file-kept = { $why }; the current model is kept
file-own-instead = { $why }; the page's own model is loaded instead
file-weights-failed = the { $precision } weights could not be opened: { $why }; still running { $current }
file-gpu-unavailable = the GPU asked for is not available ({ $why }); running on the CPU

## GGUF (`formats::gguf::GgufError`)
file-gguf-magic = not a GGUF file: it starts with { $found }, not "GGUF"
file-gguf-version = GGUF version { $version } is not supported (version 3 is; 2 is read as 3)
file-gguf-truncated = the GGUF file ends at byte { $len } inside { $what } (at byte { $at })
file-gguf-count = { $what } = { $value } cannot fit in a file of { $len } bytes
file-gguf-value-type = metadata { $key } has type { $kind }, which GGUF does not define
file-gguf-value = metadata { $key }: { $why }
file-gguf-missing = the metadata lacks { $key }
file-gguf-tensor = tensor { $name }: { $why }
file-gguf-read = the GGUF file could not be read: { $why }
file-gguf-tensor-type = tensor { $name } has type { $kind }, which this reader does not load (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K are)
file-gguf-architecture = general.architecture is { $arch }; "llama" and "qwen2" models are read
file-gguf-too-large = the GGUF file is { $bytes } bytes, over the memory budget of { $limit } bytes (its weights are held at no less than that)
file-gguf-missing-tensor = the model's tensors are missing { $name }

## llama2.c checkpoints (`formats::llama2c::CheckpointError`) and their headers (`config::ConfigError`)
file-ckpt-empty = checkpoint is empty (0 bytes)
file-ckpt-short = checkpoint is { $len } bytes, shorter than the { $header }-byte header
file-ckpt-wrong-size = file is { $actual } bytes, header implies { $expected }
file-ckpt-read = reading the checkpoint failed at byte { $offset }: { $why }
file-ckpt-magic = magic { $magic } is not llama2.c's 0x616b3432 ("ak42"), and the file is not a legacy header either
file-ckpt-version = llama2.c checkpoint version { $version } is not supported (legacy float32 files have no version; version 2 is Q8_0)
file-ckpt-shared = shared_classifier byte is { $value } (must be 0 or 1)
file-ckpt-group = group size { $group } must be at least 1
file-ckpt-group-divide = group size { $group } does not divide tensor { $tensor } ({ $len } weights a layer)
file-ckpt-non-finite = tensor { $tensor } has a non-finite value ({ $value }) at element { $index }
file-cfg-range = header field { $field } = { $value } is out of range (must be { $rule })
file-cfg-dim-heads = dim { $dim } is not divisible by n_heads { $heads }
file-cfg-heads-kv = n_heads { $heads } is not divisible by n_kv_heads { $kv }
file-cfg-odd-head = head_size { $size } (dim / n_heads) must be even for rotary embeddings
file-cfg-float = { $field } is { $value }; it must be { $rule }
file-budget-over = { $what } would need { $bytes } at seq_len { $seq }; the limit is { $limit }
file-budget-overflow = { $what } of this header does not fit in 64 bits

## Hugging Face checkpoints (`formats::hf::HfError`)
file-hf-config-large = config.json is { $bytes } bytes; a model's config is at most { $limit }
file-hf-config-json = config.json is not JSON: { $why }
file-hf-missing = config.json lacks { $key }
file-hf-value = config.json's { $key } is { $value }; { $why }
file-hf-architecture = config.json describes { $arch }; LlamaForCausalLM and Qwen2ForCausalLM (model_type "llama", "qwen2") are read
file-hf-not-safetensors = not a safetensors file: { $why }
file-hf-header-large = the safetensors header is { $bytes } bytes, over the { $limit } a model's tensor table needs
file-hf-safetensors = safetensors: { $why }
file-hf-missing-tensor = the safetensors file lacks tensor { $name }
file-hf-dtype = tensor { $name } has dtype { $dtype }, which this reader does not load (F32, F16 and BF16 are)
file-hf-too-large = the safetensors file is { $bytes } bytes, over the memory budget of { $limit } bytes (its weights are held at no less than that)

## Tokenizers (`tokenizer::TokenizerError`) and chat templates (`tokenizer::chat::ChatError`)
file-tok-empty = tokenizer file is empty
file-tok-truncated = tokenizer.bin is truncated: { $what } of piece { $id } runs past the end of the file ({ $len } bytes)
file-tok-piece-length = tokenizer.bin piece { $id } has an invalid length { $len }
file-tok-piece-long = tokenizer.bin piece { $id } is { $len } bytes, longer than the file's max_token_length { $max }
file-tok-max-length = tokenizer.bin max_token_length { $value } is out of range (must be 1..={ $max })
file-tok-utf8 = tokenizer.bin piece { $id } is not valid UTF-8 (bytes { $bytes })
file-tok-score = tokenizer.bin piece { $id } has a non-finite score { $score }
file-tok-duplicate = tokenizer.bin piece { $id } { $piece } repeats piece { $first }
file-tok-vocab = the tokenizer has { $tokenizer } tokens but the model's vocabulary has { $model }
file-tok-json = tokenizer.json could not be read: { $why }
file-tok-not-tokenizer = the tokenizer file is neither a tokenizer.json (it does not start with '{"{"}') nor a llama2.c tokenizer.bin (a binary table); it starts with { $start }
file-tok-file-large = the tokenizer file is { $bytes } bytes; the limit is { $limit } ({ $limitbytes } bytes)
file-tok-too-many = tokenizer.json has { $count } tokens; the limit is { $max }
file-tok-token-long = tokenizer.json token { $id } is { $len } bytes, longer than { $max }
file-tok-special = the tokenizer has no { $which } token
file-tok-encode = encoding failed: { $why }
file-tok-pre = tokenizer.ggml.pre is { $pre }, a pre-tokenizer this reader does not know (it reads { $known })
file-tok-merge = tokenizer.ggml.merges entry { $rank } ({ $merge }) is not two tokens of the vocabulary
file-tok-bpe = the BPE vocabulary could not be built: { $why }
file-tok-unknown-id = token id { $id } is outside the vocabulary (size { $vocab })
file-chat-none = this model's file carries no chat template (GGUF's tokenizer.chat_template)
file-chat-unreadable = this model's file has a chat template, but it could not be read: { $why }
file-chat-large = the chat template is { $bytes } bytes; the limit is { $max }
file-chat-render = the chat template could not be rendered: { $why }
file-chat-rendered-large = the chat template renders { $bytes } bytes for one message; the limit is { $max }

## A transcript file read back (`export::transcript`) and the toy logits (`page::toy`)
file-transcript-large = a transcript of { $bytes } bytes: the page reads at most { $max }
file-transcript-not = not a transcript file: { $why }
file-transcript-format = { $format } version { $version } is not a transcript this page writes ({ $ours } version 1)
file-transcript-tokens = { $count } tokens: at most 4,096
file-toy-row = row { $id } is not one of the { $count } logits (0..{ $end })
file-toy-not-row = { $value } is not a row number
file-toy-not-finite = { $value } is not a finite number
file-toy-count = type between 1 and { $max } logits (got { $count })

## Why "auto" chose a backend (`backend::choose`)
file-backend-auto = auto, measured: { $list }; { $why } ({ $reason })
file-backend-ms = { $backend } { $ms } ms a token
file-backend-failed = { $backend } failed ({ $why })
file-backend-runs = { $backend } runs it
file-backend-cpu-faster = the CPU is faster for this model
file-backend-gpu-faster = the GPU is faster for this model
file-backend-cpu-chosen = the CPU backend was chosen
file-backend-gpu-on = WebGPU on { $adapter }
file-backend-lost = the GPU device was lost: { $why }
file-backend-gpu-error = GPU error: { $why }

## A model's link or name, and a hub repository's listing (`remote`)
file-link-empty = name a model: one of the list, a URL or a Hugging Face repository
file-link-long = { $length } characters: a model's link is at most { $max }
file-link-urls = { $count } URLs: a model is one to three files
file-link-not-url = { $value } is not a URL
file-link-http = { $url }: the page downloads over https only (or from its own server)
file-link-unknown = { $value } is not a model of the list ({ $keys }), a file's https URL or a Hugging Face repository (owner/name)
file-hub-listing-large = { $repo }: the hub's listing is over { $max } bytes
file-hub-listing-json = { $repo }: the hub's listing is not a list of files ({ $why })
file-hub-sharded = { $repo } holds its weights in several safetensors files (model-00001-of-…): the page reads one model.safetensors
file-hub-none = { $repo } has no GGUF file and no model.safetensors with its config.json and tokenizer.json at its top: name a file's URL instead

## The worker's notes in the panels
file-split-cpu = the page runs on the CPU backend, which launches no GPU kernels (choose WebGPU in the header)
file-quant-row = w2 (the MLP's down projection), layer 0, row { $row }
