# en: the panels area (see ../en/page.ftl for the conventions): compare, beam search, the KV
# cache and inside the step, speculative decoding, quantization, batching, the constraint.
# The English is the page's own (the e2e tests read it); figures arrive formatted.

## Shared

panel-bytes = { $n } bytes

## Same θ, different config

compare-note = Identical weights, different configuration: each column is its own sequence and KV cache of the one loaded model, from the transcript's prompt; their newest tokens go through the model as one pass. Parameters are the model; configuration is how you run it.
compare-preset = Preset
compare-choose = choose a preset…
compare-preset-terse-wild = terse and deterministic (greedy) against wild and creative (T = 1.5, top-p 0.98)
compare-preset-profiles = hf against llama.cpp with identical knobs (their orders disagree)
compare-preset-k-vs-p = top-k 40 against top-p 0.9 (rigid against adaptive set size)
compare-preset-samplers-2026 = the samplers of 2026 in llama.cpp's chain: repetition penalty 1.3, DRY 0.8, XTC 0.5, mirostat 2 (τ = 3)
compare-preset-constrained = the same prompt without and with a JSON Schema (a story character)
compare-start = Start
compare-step = Step all
compare-step-10 = Step all ×10
compare-add = Add a column
compare-column-knobs = Column { $n } knobs
compare-remove = Remove column { $n }
compare-from = From
compare-columns = — { $n } columns; knobs that differ: { $knobs }
compare-none = none
compare-off = off
compare-column = Column { $n }
compare-stats = { $tokens } tokens, Σ log p { $logp }; next: entropy { $entropy } nats over { $kept } kept tokens
compare-top-label = column { $n } next-token distribution

## Beam search

beam-tree-caption = the tree: every prefix kept or pruned, Σ log p at each node
beam-tree-region = the beam tree, scrollable
beam-early-stopping = early stopping
beam-use = Use beam search
beam-step = Step the beams
beam-restart = Restart
beam-example = Example: { $prompt }, { $steps } steps
beam-hyp = score { $score } (log p { $logp }): { $text }
beam-hyp-ended = score { $score } (log p { $logp }, ended): { $text }
beam-compare = After { $depth } tokens: best beam log p = { $best }; greedy path log p = { $greedy }
beam-compare-better = After { $depth } tokens: best beam log p = { $best }; greedy path log p = { $greedy } — the beam found a likelier sequence than greedy
beam-greedy = Greedy: { $text }
beam-greedy-pruned = Greedy (its first { $n } tokens are in the tree; then beam search pruned it: the dashed row under the tree): { $text }
beam-best = Best beam (in the transcript): { $text }
beam-count = { $nodes } nodes; grey dashed: pruned; ringed: finished
beam-count-done = { $nodes } nodes, search finished; grey dashed: pruned; ringed: finished

## The KV cache

kv-waiting-model = Waiting for the model…
kv-sharing = K/V head { $kv } ← query heads { $queries }
kv-grid-caption = the cache: one row per layer, one cell per cached position
kv-positions = { $n } of { $seq } positions: the prompt's { $prompt } tokens and { $cached } of the { $generated } generated
kv-positions-waiting = { $n } of { $seq } positions: the prompt's { $prompt } tokens and { $cached } of the { $generated } generated (the newest token enters the cache when the next one is computed: its K and V come from the step that reads it)
kv-gqa = Grouped-query attention: { $heads } query heads share { $kv } K/V heads ({ $ratio }× fewer keys and values than one per head).
kv-formula-caption = bytes = 2 × n × N_layers × d_kv × bytes/elem (the 2 is K and V; float32 = 4 bytes)
kv-per-token = per token
kv-used = used
kv-allocated = allocated
kv-without-gqa = without GQA
kv-engine = (engine: { $bytes } bytes)
kv-weights-row = weights ({ $precision })
kv-weights = { $weights } bytes; with the allocated cache { $total } bytes.
kv-cache-f32 = The cache is float32 like the weights.
kv-cache-quantized = Quantization here changes the weights only: K and V stay float32, so at long contexts the cache, not the weights, dominates (llama.cpp can also store it in 8 bits: --cache-type-k q8_0).
kv-compare-heading = With the cache, and without
kv-compare-hint = Each step with the cache computes Q, K, V for the new token only and attends to n cached keys: O(n·d). Without it, the whole prefix runs again: O(n²·d). Here "without" re-runs the n-token prefix as one batch on a fresh sequence, its keys and values thrown away after the step.
kv-measure = Measure on this backend
kv-measuring = Measuring on this backend…
kv-col-cached-ms = ms/token, cached
kv-col-naive-ms = ms/token, no cache
kv-col-ratio = ratio
kv-col-cached-macs = multiply-adds, cached
kv-col-naive-macs = multiply-adds, no cache
kv-compare-region = the cache comparison, scrollable
kv-col-read = bytes a cached step reads
kv-col-model-ms = bandwidth model, ms
kv-col-over-model = cached / model
kv-bandwidth = The model: a cached step reads every weight and the K and V of n positions (2 × n × layers × d_kv × 4 bytes, the formula above), so it takes at least those bytes ÷ the read bandwidth, { $gbs } GB/s, measured here by reading the model's own weights on the engine's threads. Near 1× a step waits on memory; far above, on arithmetic or the hand-off to threads.
kv-bandwidth-gpu = On the GPU backend no bandwidth model is drawn (the CPU's bandwidth does not bound it).
kv-calc-bad-batch = { $text } is not a batch size (1 to { $most })
kv-calc-bad-positions = { $text } is not a context length (1 to { $most })
kv-calc-heading = Calculator
kv-calc-model = Model
kv-calc-loaded = { $name } ({ $kind }; loaded on this page)
kv-calc-positions = Context length n
kv-calc-batch = Batch size B
kv-calc-precision = Precision
kv-calc-f32 = float32 (4 bytes)
kv-calc-f16 = float16 / bfloat16 (2 bytes)
kv-calc-int8 = int8 (1 byte)
kv-calc-formula = { $name }: 2 × { $n } × { $layers } layers × { $d_kv } (d_kv = { $kv_heads } K/V heads × { $head_dim }) × { $bytes } = { $total } bytes =
kv-calc-sharing = sharing
kv-calc-kv-heads = K/V heads
kv-calc-cache = cache
kv-calc-mha-this = MHA (one K/V per query head; this model)
kv-calc-mha = MHA (one K/V per query head)
kv-calc-this-model = { $kind } (this model)
kv-calc-mqa-this = MQA (one K/V for all; this model)
kv-calc-mqa = MQA (one K/V for all)
kv-calc-weights-heading = Weights against the cache of a batch
kv-calc-weights = weights ({ $params } parameters × { $bytes })
kv-calc-cache-batch = KV cache × B = { $batch }
kv-calc-crossover = The cache is { $share } % of weights + cache here. With B = { $batch } the caches outweigh the weights from n = { $n } on (B × 2 × n × N_layers × d_kv elements > { $params } parameters): at long n, and more so with many sequences, the cache dominates inference memory.

## Inside the step

inside-heading = Inside the step
inside-hint = Each decode step computes Q, K, V for the new token only, appends its K and V, and attends against the cache: one query per head against n cached keys. The probe records the weights the step's own pass used, and the residual stream after each layer.
inside-stop = Stop probing
inside-show = Show the new token's attention and the logit lens
inside-probing = Probing the newest step…
inside-cost = The token at position { $pos } ({ $token }) attends to n = { $n } cached positions:
inside-cost-dots = { $n } dot products of size { $size } per head
inside-cost-total = , × { $heads } heads × { $layers } layers = { $macs } multiply-adds for the scores, as many again to mix the values; n grows by one each step.
inside-recorded-step = Recorded in this step's own forward pass; probe and lens { $ms } ms.
inside-recorded-probe = Recorded by one probed pass over the sequence (the view opened after the step, or a rewind); probe and lens { $ms } ms.
inside-readout = layer { $layer }, head { $head } (K/V head { $kv }): { $weight } of its attention on { $token } at position { $pos }
inside-grid-summary = attention of the token at position { $pos } over { $n } cached positions, { $layers } layers × { $heads } heads ({ $kv } K/V heads)
inside-grid-summary-last = attention of the token at position { $pos } over { $n } cached positions (the last { $cols } drawn), { $layers } layers × { $heads } heads ({ $kv } K/V heads)
inside-grid-note = Each row is one query head's softmax weights over the cached positions (shade ∝ √weight, so small weights still show); heads that read the same K/V head (grouped-query attention: { $per } per K/V head) sit together. Arrow keys move the readout.
inside-grid-last = The last { $cols } of { $n } positions are drawn.
inside-position = position { $pos }
inside-lens-cell = layer { $layer } at position { $pos }: { $token } with p = { $p }
inside-final = L{ $layer } (final)
inside-lens-heading = The logit lens
inside-lens-note = The raw logit lens: the final norm and classifier applied to intermediate layers, which the model was not trained for.
inside-lens-cells = Each cell: that layer's most likely next token after the column's token, and its probability (T = 1); the top row is the model's own distribution.
inside-lens-region = the logit lens, layer by position
inside-after = after →
inside-lens-last = After { $token } (position { $pos }): each layer's distribution, and KL(p_final ‖ p_layer) in nats
inside-col-layer = layer
inside-col-kl = KL to final
inside-col-top = most likely

## Speculative decoding

spec-kind-accepted = accepted draft
spec-kind-resampled = resampled from max(0, p − q)
spec-kind-target = the model's own token
spec-kind-bonus = bonus token from p
spec-draft = Draft
spec-draft-q8 = quant:q8 — the same weights in 8 bits
spec-draft-q4 = quant:q4 — the same weights in 4 bits
spec-draft-exit = exit:{ $k } — the first { $k } of { $layers } layers
spec-draft-ngram-1 = ngram:1 — prompt lookup, last token
spec-draft-ngram = ngram:{ $n } — prompt lookup, last { $n } tokens
spec-gamma = γ (drafted a cycle)
spec-rule = Rule
spec-rule-rejection = rejection: accept with min(1, p/q)
spec-rule-match = match: keep drafts equal to the model's own token
spec-start = Start from the prompt
spec-one = One cycle
spec-ten = 10 cycles
spec-empty = Start a run: the draft proposes γ tokens, the model checks them all in one forward pass of γ + 1 rows.
spec-what-exit = Its first layers are the model's own, so it writes into the model's KV cache: no second cache, no prefill of its own (the verify pass then runs those positions through every layer).
spec-what-quant = The same learned weights, quantized: its own KV cache on the CPU, kept in step with the accepted text.
spec-what-ngram = Prompt lookup proposes the tokens that followed the last occurrence of the context's last tokens; it has no distribution, so q is one-hot on its token.
spec-note = { $draft }, γ = { $gamma }, rule { $rule }. { $what } The knobs as they were at Start apply to p and q.
spec-note-greedy = { $draft }, γ = { $gamma }, rule { $rule } (greedy: a draft is kept while it is the model's argmax). { $what } The knobs as they were at Start apply to p and q.
spec-chip-title = cycle { $cycle }: { $kind }
spec-rejected-title = the rejected draft
spec-accepted = accepted
spec-rejected = rejected
spec-resampled = resampled
spec-target = model's token
spec-bonus = bonus
spec-forbidden = rejected: the constraint forbids this draft (p = 0 under its mask)
spec-same = { $verdict }: the model's token is the same
spec-another = { $verdict }: the model's token is another
spec-accept = { $verdict }: P(accept) = min(1, p/q) = min(1, { $p }/{ $q }) = { $chance }
spec-overlap-note = (the chance a draft from q is accepted here)
spec-cycle = Cycle { $n }: { $drafted } drafted, { $accepted } accepted, then { $next }
spec-drafted = Drafted:
spec-bars = Bars: p (the model) above, q (the draft) below; the dark part is min(p, q); where p is longer, the rest is the residual max(0, p − q) a rejection resamples from. ▸: the drafted token.
spec-speed = { $speed }× plain decoding's speed
spec-speed-slower = { $speed }× plain decoding's speed: slower here (the draft and the wider verify pass cost more than the passes saved on a model this small)
spec-stats = Running statistics
spec-cycles = cycles (verify passes)
spec-drafts-accepted = drafts accepted
spec-alpha = α = mean Σ min(p, q)
spec-per-pass = tokens per verify pass
spec-saved = model passes saved
spec-wall = wall clock on this backend
spec-acceptance = { $accepted } of { $drafted } ({ $share } %)
spec-per-call = { $measured } measured; (1 − α^(γ+1)) / (1 − α) = { $formula } (positions taken as independent)
spec-saved-tokens = { $saved } of { $emitted } tokens needed no pass of their own
spec-wall-times = { $spec } ms a token speculative, { $plain } ms plain: { $verdict }

## Quantization

quant-running = Running the four precisions…
quant-note = The same weights θ stored four ways: the representation changes, not the learned values. After the transcript's { $position } tokens, each precision's next-token distribution (softmax of its logits, before the sampling chain), on the CPU in this page's worker, each with its own KV cache. q8 and q4 round the activations to int8 too, per group, once a matrix (as llama.cpp does, in groups of 32 or more; a matrix whose rows start inside a group, like stories260K's w2, rounds each row with one scale), and multiply int8 × int8; norms stay f32. Under q8's and q4's KL: the same weights with f32 activations.
quant-dequantized = This file is itself q8: its "f32" is the dequantized weights.
quant-dequantized-file = This file holds its own blocks ({ $types }): its "f32" is those weights dequantized, and the four precisions are made from it; its own row is last.
quant-file = the file's blocks ({ $types })
quant-current = (the transcript's)
quant-decode-title = median of 5 rounds after warm-up steps; the middle three { $low }–{ $high } ms
quant-rate = { $rate } tokens/s · { $low }–{ $high }
quant-f32-acts-title = the same weights with f32 activations
quant-f32-acts = f32 acts:
quant-same = same
quant-differs = differs (id { $id })
quant-table-region = the four precisions, scrollable
quant-caption = Weight bytes, one measured decode step, and the distribution against f32's
quant-col-precision = precision
quant-col-bytes = weight bytes
quant-col-smaller = smaller
quant-col-decode = decode step (CPU)
quant-col-shape-title = random weights of llama2.c's 15M shape, made by the worker: a model that leaves the cache
quant-col-shape = decode step, 15M shape
quant-col-kl = KL(p_f32 ‖ p), nats
quant-col-top = top token vs f32
quant-shape-note = The 15M shape's column: random weights of llama2.c's 15M shape ({ $bytes } at f32), made by the worker for this measurement, a decode step at position { $position } (median of 5 rounds; the middle three).
quant-shape-cached = This model's weights fit in the CPU's caches, where a step never waits on memory; the 15M shape's do not, so its column shows what fewer bytes buy.
quant-row-region = a weight row before and after, scrollable
quant-row-caption = { $row }: its first weights, before and after
quant-row-error = Largest error over the whole row: f16 { $f16 }, q8 { $q8 }, q4 { $q4 }. The row touches { $q8_groups } q8 groups and { $q4_groups } q4 groups.
quant-row-error-straddles = Largest error over the whole row: f16 { $f16 }, q8 { $q8 }, q4 { $q4 }. The row touches { $q8_groups } q8 groups and { $q4_groups } q4 groups: it starts inside a group (groups run over the flattened matrix, as llama2.c's export writes them), and every one of its weights counts with its own group's scale.

## Batching and the two regimes

batch-lanes-heading = B sequences, one pass
batch-lanes-note = Each lane is the prompt with its own seed (lane 0 has the page's seed, so it is the transcript's own text) and its own KV cache; every step is one forward pass over B rows — one token of each lane — reading each weight matrix once for all of them.
batch-size = Batch size B
batch-tokens = Tokens a lane
batch-run = Run lanes
batch-step = Step all lanes
batch-lane-seed = lane { $lane } · seed { $seed }
batch-stopped = stopped
batch-lanes-summary = { $batch } lanes: prefill of { $batch } × { $prompt } prompt rows in one pass ({ $prefill } ms), then { $passes } passes of ≤ { $batch } rows, { $pass } ms a pass — { $rate } tokens/s for all lanes together.
batch-tp-heading = Throughput against batch size, and the roofline
batch-tp-note = Measured here, now, on the running backend: B prompts of { $prompt } tokens prefilled as one pass, then { $gen } decode passes of B rows, each batch size repeated (the median, and the middle half of the runs). The worker also measures this machine's ceilings with the engine's own kernels: decode's product streaming a matrix the size of the weights, and a batched product inside the cache.
batch-measure = Measure B = 1, 2, 4, 8, 16
batch-measuring = Measuring on this backend…
batch-split-heading = Where a decoded token's time goes on this GPU
batch-split-note = A GPU runs a decode step as a queue of kernels. Each launch costs time of its own, whatever the kernel does; the lesson's "decode is bandwidth-bound" holds only once those launches are cheap beside the kernels' weight reads. With GPU timestamps around each kernel, the worker splits 16 decode steps' wall time into the kernels' GPU time and the rest.
batch-split-measure = Time the GPU's kernels
batch-split-waiting = Timing 16 decode steps…
batch-why-little-cached = Little gain here ({ $gain }×, within the runs' spread or under 1.3×): the weights ({ $bytes }) sit in the CPU's caches, so a pass does not wait on memory and there is no read for B rows to share. Batching pays where one weight read from memory serves many rows — a model whose weights do not fit in the caches, or a GPU.
batch-why-little = Little gain here ({ $gain }×, within the runs' spread or under 1.3×) on the { $backend } backend.
batch-why-gain-cached = The weights ({ $bytes }) sit in the CPU's caches, so no pass waits on memory for them: the decode gain here comes from each weight row read once for all B rows and from spreading each pass's fixed costs (the layers' loops, the norms, the hand-offs between cores) over B rows.
batch-why-gain = The weights ({ $bytes }) do not fit in the caches: every pass reads them from memory, and B rows share each read — the decode gain comes from sharing weight reads.
batch-measured-on = Measured on { $model } ({ $bytes }).
batch-model-15m = random weights of the 15M shape (dim 288, 6 layers, vocabulary 32,000), made by the worker for this measurement
batch-tp-summary = Decode { $first } → { $last } tokens/s from B = 1 to B = { $batch } ({ $gain }×) on the { $backend } backend; prefill { $prefill_first } → { $prefill_last } (its one pass already had many rows).
batch-col-runs = runs
batch-col-prefill = prefill tokens/s (middle half)
batch-col-decode = decode tokens/s (middle half)
batch-under-measured = A measured point lies above the measured roof: the roof was under-measured (the machine was busy while it was probed), so it is not drawn. Measure again.
batch-below = below
batch-above = above
batch-peaks = This machine, measured by the worker ({ $threads } thread) with the engine's own kernels: decode's product streams { $bandwidth } GB/s over { $buffer } (the size of this model's weights), the batched product computes { $flops }; ridge { $ridge } FLOP/byte. Decode at B = 1 does { $intensity } FLOP per byte moved — { $side } the ridge; prefill's one pass of many rows does { $prefill }.
batch-machine-heading = This model on this machine
batch-split-none = Not measured here: { $why }. Without GPU timestamps the step's wall time cannot be split into the kernels' time and the launches'.
batch-split-summary = A decode step (one row, { $tokens } timed) took { $wall } on the wall: the GPU was busy in its { $kernels } kernels for { $busy } ({ $busy_share } %), and { $overhead } ({ $overhead_share } %) went to launching them, the barriers between them and reading the logits back.
batch-launch-bound = Launch-bound: decode here waits on launches, not on memory. The lesson's "decode is bandwidth-bound" holds only once launches are cheap beside the kernels (fewer, fused dispatches; larger models).
batch-kernel-bound = The kernels' own time dominates: launches are cheap beside them here, so decode's speed is the kernels' (on a software adapter the "GPU" is this CPU, and its kernels are CPU code).
batch-launch-even = Launches and kernels take about equal shares (neither by 1.3×): cheaper launches and faster kernels would both show.
batch-col-kernel = kernel
batch-col-dispatches = dispatches a token
batch-col-gpu-time = GPU µs a token
batch-col-share = share of GPU time
batch-real-heading = The lesson's point at real scale (computed, not measured)
batch-h100-title = Llama-2-7B (fp16) on an H100
batch-real-scale = At real scale: Llama-2-7B in fp16 reads { $weights } of weights, and its cache at 512 positions ({ $all } in all), for every decode step. On an H100 (989 TFLOP/s, 3.35 TB/s: ridge { $ridge } FLOP/byte) one sequence does { $intensity } FLOP per byte, so the memory holds it to about { $rate } tokens/s at { $flops } — { $share } % of the arithmetic. Only about { $rows } rows sharing each weight read reach the ridge; a 512-token prefill is far past it.
batch-serve-heading = Continuous against static batching
batch-serve-note = A seeded trace of requests (different prompt and output lengths, arriving over time) through B slots on the real engine. Static: a new batch only when the whole last one has finished. Continuous (Orca's iteration-level scheduling, as vLLM does it): at every step finished requests leave and waiting ones take the free slots, their prefill joining the step.
batch-slots = Slots
batch-requests = Requests
batch-trace-seed = Trace seed
batch-simulate = Simulate serving
batch-serve-verdict = The same { $tokens } tokens (each request's own, as alone): continuous batching needed { $continuous } passes where static needed { $static } ({ $fewer } % fewer), keeping the slots { $full } % full against { $static_full } %. { $wall }
batch-serve-not-faster = In wall time it is not faster here: on this backend a pass costs in proportion to its rows (one thread computes every row, and a small model's weights sit in cache), so fewer, fuller passes do the same work. Its wall-clock gain comes where a pass costs about the same whatever its rows — a model whose weight reads dominate, or the GPU.
batch-serve-faster = Fuller passes share each pass's fixed costs and weight reads, so it is faster in wall time too.
batch-serve-columns = Each column is one step; a step with no request is not a pass.
batch-serve-stats = { $tokens } tokens in { $passes } passes ({ $per_pass } tokens a pass), slots { $occupied } % occupied, { $rate } tokens/s; time to first token { $ttft } ms, { $per_token } ms a token after it (means over requests)

## The constraint

constraint-heading = Constraint
constraint-hint = Structured output is one more stage of the chain: a mask that keeps only the tokens that can continue the text inside a regex, a JSON Schema or a grammar (compiled once per prompt by llguidance, in the worker).
constraint-presets = Presets:
constraint-preset-title = Prompt: { $prompt }
constraint-preset-yes-no = yes or no
constraint-preset-date = a date (regex)
constraint-preset-character = a story character (JSON Schema)
constraint-preset-list = a list (GBNF grammar)
constraint-kind = Kind
constraint-kind-none = none (off)
constraint-kind-regex = regex
constraint-kind-json-schema = JSON Schema
constraint-kind-grammar = GBNF grammar (llama.cpp)
constraint-kind-lark = Lark grammar (llguidance)
constraint-apply = Apply
constraint-source = Constraint source
constraint-help = Ctrl+Enter applies. GBNF as llama.cpp writes it: root ::= "yes" | "no".
constraint-z = Σ p over allowed
constraint-allowed = allowed tokens
constraint-allowed-of = { $allowed } of { $vocab }
constraint-mask-time = mask time
constraint-position = position
constraint-forbidden = ✕ constraint
constraint-pq-caption = The model's most likely tokens: p entering the stage, q after the mask (bars on a square-root scale)
constraint-col-token = token
constraint-caption-none = The constraint allows no token here: generation stops rather than sample from nothing.
constraint-caption-all = Z_t = { $z }: the model already puts all its probability on text the constraint allows; the mask changes nothing here (q = p over { $allowed } allowed tokens).
constraint-caption-agrees = Z_t = { $z }: the model agrees with the constraint; { $removed }% of its probability was on forbidden tokens, and q = p / Z_t raises each allowed token by { $factor }×.
constraint-caption-removes = Z_t = { $z }: the constraint removes { $removed }% of the model's probability; q = p / Z_t scales each of the { $allowed } allowed tokens by { $factor }×, so the text follows what the model thought less likely.
constraint-caption-fights = Z_t = { $z }: the constraint is fighting the model. { $removed }% of its probability was on tokens the constraint forbids, and q = p / Z_t scales what it thought nearly impossible by { $factor }×: the text stays valid but goes where the model would not (of { $vocab } tokens, { $allowed } allowed). A prompt that sets up the format raises Z_t.
