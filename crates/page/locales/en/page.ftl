# The page's words in English (the source: every id the code asks for is here).
# Numbers arrive formatted for the language (i18n::number); names of things stay as they are.

## The header

app-title = Decoding Explorer
starting-engine = Starting the engine…
loading-model = Loading the model…
load-figures = { $loaded } of { $total }
backend-label = Backend
backend-auto = auto
backend-gpu = WebGPU
backend-gpu-unavailable = WebGPU (unavailable: running on the CPU)
backend-cpu = CPU
weights-label = Weights
weights-title = How the weight matrices are stored: quantization changes the representation of θ, not its learned values (the norms stay f32)
weights-f32 = f32: 32 bits a weight
weights-f16 = f16: 16 bits a weight (IEEE half)
weights-q8 = q8: int8 + a float32 scale per group
weights-q4 = q4: 4 bits + a float32 scale per 32
weights-ggml = ggml: the file's own blocks
threads-label = Threads
threads-auto = auto (timed)
threads-badge = CPU threads: { $n } · { $why }
threads-timed = { $n } in { $ms } ms
threads-short-measured = timed
threads-why-measured = The fewest threads within 10 % of the fastest, timed at start-up on the engine's own product: { $timed }
threads-short-chosen = your choice
threads-why-chosen = The count you chose; "auto" times them again
threads-short-not-isolated = page not cross-origin isolated
threads-why-not-isolated = One thread: the page was served without the COOP/COEP headers that make it cross-origin isolated, so the browser gives it no shared memory (README: "Threads in the page")
threads-short-no-shared-memory = no shared memory
threads-why-no-shared-memory = One thread: this browser has no shared WebAssembly memory
threads-short-one-core = one processor
threads-why-one-core = One thread: the browser reports one processor
threads-short-failed = threads failed
threads-why-failed = One thread: the others could not start ({ $message })
model-summary = { $name }: { $params } parameters, { $layers } layers, dim { $dim }, { $heads } query / { $kv } K/V heads, vocab { $vocab }, context { $context }
model-trained-context = (of the file's { $trained }, as llama.cpp runs at its n_ctx)
model-source = { $architecture } from { $format }, RoPE base { $rope }, RMSNorm ε { $eps }
model-tensors = tensors in the file: { $types }
model-weights = weights { $precision }: { $bytes } bytes ({ $human })
card-next = ; { $next }
load-model = Load a model…
lesson-track = Lesson track
class-round = Class round
class-round-title = Predict, then reveal: the next token is hidden until the class's guesses are drawn against the model's distribution
presenter-mode = Presenter mode
dark-theme = Dark theme
dark-theme-title = Dark or light colours (without a choice in the link, the system's)
language-label = Language
shortcuts = Keyboard shortcuts
engine-stopped = The engine stopped ({ $why }). Nothing you set is lost: the address bar holds the prompt, the knobs and the tokens.
reload = Reload
dismiss = Dismiss
link-problems = The link had values this page cannot use, so their defaults are shown: { $problems }
footer = stories260K: Andrej Karpathy's tinyllamas (MIT), trained on TinyStories (Eldan & Li, 2023; CDLA-Sharing-1.0). Lesson 10 — Inference in Depth. Press ? for keyboard shortcuts.

## Load a model

picker-model-file = Model (GGUF, llama2.c .bin, or model.safetensors)
picker-tokenizer-file = Tokenizer (tokenizer.json or llama2.c's tokenizer.bin, for either)
picker-config-file = Config (for safetensors: config.json)
picker-load = Load
picker-or-drop = or drop the file(s) on the page
choose-file-first = choose a model file first
by-link-list = A model from the list
by-link-download = Download and load
by-link-url = or a URL (GGUF, llama2.c, or a Hugging Face repository: owner/name)
by-link-load = Load
# The list's models (`remote::catalogue`), one label a key: what each is.
listed-stories260K = stories260K (the page's own model, from the hub)
listed-stories15M = stories15M (TinyStories, 15M parameters)
listed-stories110M = stories110M (TinyStories, 110M parameters)
listed-SmolLM2-135M-Instruct = SmolLM2-135M-Instruct (a chat model, 135M parameters; GGUF, Q4_K_M)
listed-Qwen2_5-0_5B-Instruct = Qwen2.5-0.5B-Instruct (a chat model, 0.5B parameters; GGUF, Q8_0)
in-this-folder = In this folder:
folder-unreadable = The folder's models could not be read: { $why }
fetching = Fetching…
fetching-file = Fetching { $file }
cancel = Cancel
kept-none = No model is kept in this browser yet.
kept-some = Kept in this browser (they load with no network):
kept-space = The browser's storage for this page: { $used } used of { $quota }.
kept-partial = (stopped part way: loading it resumes the download)
kept-load = Load
kept-delete = Delete

## The lesson track

lesson-heading = Lesson 10, §{ $section } — { $title }
lesson-position = step { $n } of { $total }
lesson-previous = ← Previous
lesson-next = Next →
lesson-check = Class check
lesson-check-title = A round of the class guessing the next token, where a guess teaches this step
lesson-check-question = Class check: { $question }
lesson-close = Close the lesson track
step-loop = The generation loop
step-greedy-vs-beam = Greedy is not the sequence optimum
step-beam-bland = Beam search is bland on open text
step-tail = Sampling's heavy tail
step-temperature = Temperature on the toy logits [2, 1, 0.1]
step-topk-topp = Top-k is rigid, top-p adapts
step-penalty = Penalties curb a loop
step-kv-cache = The KV cache: O(n·d) a step instead of O(n²·d)
step-prefill-decode = Prefill against decode
step-kv-memory = KV memory: 2 × n × N_layers × d × bytes, and GQA/MQA
step-speculative = Speculative decoding
step-quantization = Quantization
step-batching = Batching
step-same-theta = Same θ, different config
step-taxonomy = The complete inference taxonomy
