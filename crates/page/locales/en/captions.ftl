# en: the captions area (see ../en/page.ftl for the conventions).
# The lesson track's captions: a message a sentence, or a branch of one; the code joins them with a space (none in Chinese). Their numbers arrive formatted and are drawn as the caption's figures, wherever the message puts them.

## Units of the captions' figures

caption-unit-rate = { $rate } tokens/s
caption-unit-bytes = { $bytes } bytes

## §1 The generation loop

caption-loop = Each step forwards the context — { $context } tokens now — to logits z at its last position. With the KV cache (§4) only the newest token goes through the layers; the other { $cached } are read from the cache. Then p̂ = softmax(z/T), a token is selected and appended. The last step drew { $piece } with p̂ = { $last_prob }; the next draws from { $kept } tokens, the most likely { $top } at { $next_top }. No loss, no gradient: θ is only read.

## §2 Decoding strategies

caption-greedy-vs-beam-better = Greedy takes the argmax each step, and its sequence has Σ log p = { $greedy_logprob }; beam search (k = { $width }) keeps the best prefixes and finds Σ log p = { $beam_logprob } over the same { $depth } tokens: a more probable sequence that greedy's first choices ruled out. Locally greedy ≠ globally optimal.
caption-greedy-vs-beam-same = Greedy takes the argmax each step, and its sequence has Σ log p = { $greedy_logprob }; beam search (k = { $width }) keeps the best prefixes and finds Σ log p = { $beam_logprob } over the same { $depth } tokens: here beam search found nothing more probable than greedy's own path. Locally greedy is globally optimal on this prompt; it need not be.
caption-beam-bland-beam = Beam search (k = { $width }) wrote { $tokens } tokens at a mean −log p̂ of { $beam_surprisal } nats a token.
caption-beam-bland-beam-loop = Beam search (k = { $width }) wrote { $tokens } tokens at a mean −log p̂ of { $beam_surprisal } nats a token, and a { $loop_period }-token phrase repeats { $loop_repeats } times.
caption-beam-bland-samples = Two samples from the same prompt at T = 1 (seeds 0 and 1): { $sample_surprisal_a } and { $sample_surprisal_b } nats a token.
caption-beam-bland-bland = The highest-probability sequence is the most predictable one, generic: good for closed tasks, bland for open ones.
caption-beam-bland-not = Here the beam's text is about as surprising as the samples', so this prompt does not show the blandness.
caption-tail-fat = Sampling draws y ~ p̂. Here the { $tail_tokens } tokens outside the top 10 hold { $tail_mass } of the mass: each unlikely, together not negligible — the tail that occasionally yields an incoherent pick, and what top-k, top-p and min-p cut.
caption-tail-thin = Sampling draws y ~ p̂. Here the { $tail_tokens } tokens outside the top 10 hold { $tail_mass } of the mass: the model is confident at this position, so the tail hardly matters here; it does where the distribution is flat.

## §3 Temperature, top-k, top-p, penalties

caption-temperature = p̂(T) = softmax(z/T) on z = [2, 1, 0.1]: the top token's mass is { $t1 } at T = 1, { $t05 } at T = 0.5 (sharper) and { $t2 } at T = 2 (flatter). Same weights, reweighted reading.
caption-temperature-erratum = (The lesson says ≈ 0.84 at T = 0.5: that is an error in the lesson.)
# Top-k's clause, then top-p's (which begins with its own "; ").
caption-topk-fixed = Over { $steps } steps top-k 40 kept exactly { $k_min } tokens at every step (a fixed k)
caption-topk-range = Over { $steps } steps top-k 40 kept between { $k_min } and { $k_max } tokens (fewer only where the chain had fewer left)
caption-topp-adapts = ; top-p 0.9 kept between { $p_min } and { $p_max }: narrow when one token dominates, wide when the distribution is flat.
caption-topp-steady = ; top-p 0.9 kept between { $p_min } and { $p_max }: on this text the model's confidence hardly varied, so neither did top-p's set.
caption-penalty-loop = Greedy alone: a { $loop_period }-token phrase repeats { $loop_repeats } times.
caption-penalty-no-loop = Greedy alone: no loop (repeats: { $loop_repeats }).
caption-penalty-penalized-loop = Greedy with a repetition penalty of 1.3 (recent tokens' logits divided or multiplied by 1.3): repeats { $penalized_repeats } times.
caption-penalty-penalized-no-loop = Greedy with a repetition penalty of 1.3 (recent tokens' logits divided or multiplied by 1.3): no repeated phrase (repeats: { $penalized_repeats }).
caption-penalty-curbed = The penalty curbed the loop.
caption-penalty-nothing = No loop for the penalty to curb on this prompt.

## §4 The KV cache, prefill and decode, KV memory

caption-kv-cache-clear = Measured at n = { $n }: with the cache a step costs { $cached_ms } ({ $cached_macs } multiply-adds), re-running the prefix { $naive_ms } ({ $naive_macs }): { $ratio } the time. Past keys and values never change, so they are kept.
caption-kv-cache-unclear = Measured at n = { $n }: with the cache a step costs { $cached_ms } ({ $cached_macs } multiply-adds), re-running the prefix { $naive_ms } ({ $naive_macs }): { $ratio } the time: at this length the prefix is too short for the difference to show on this machine, though the arithmetic grows as n² against n.
caption-prefill-decode-measured = On random weights of the 15M shape ({ $weight_bytes } of f32 weights, made by the worker for this measurement: a 1 MB model like stories260K stays in the cache beside the core, where decode never waits on memory), a { $prompt_tokens }-token prompt, then { $gen_tokens } tokens, each timed { $reps } times (median, and the middle half of the runs): prefill ran the prompt as one pass of many rows at { $prefill_rate } ({ $prefill_low }–{ $prefill_high }); decode ran one pass a token against the cache at { $decode_rate } ({ $decode_low }–{ $decode_high }): { $ratio }.
caption-prefill-decode-roofline = The roofline of this machine's measured peaks (ridge { $ridge } FLOP a byte) puts decode at { $decode_intensity } and prefill at { $prefill_intensity } FLOP a byte and predicts { $predicted }.
caption-prefill-decode-regime = Prefill is compute-bound (each layer's weights, read once, serve all the prompt's rows), decode bandwidth-bound (each weight read serves one row).
caption-prefill-decode-within-spread = On this load the two are within their spread: no regime is claimed.
caption-prefill-decode-same-side = Prefill is clearly faster, but on this machine's measured roof both phases sit on the same side of the ridge: no regime is claimed.
caption-prefill-decode-short-of-roof = Prefill is clearly faster, but by far less than the roof predicts: no regime is claimed.
caption-kv-memory = bytes = 2 × n × N_layers × d × bytes/elem: this model at n = { $n } holds 2 × { $n2 } × { $layers } × { $kv_dim } × 4 (float32) = { $bytes }.
caption-kv-memory-presets = { $mha_model } at n = 4,096 in { $elem_bytes } (the calculator below): { $l2_bytes }; { $gqa_model } shares each K/V head among { $group } query heads: { $gqa_bytes } instead of { $gqa_mha_bytes }; MQA (one K/V head) would take { $mha_model } { $mqa_bytes }.

## §5 Speculative decoding, quantization, batching

caption-speculative = A q8 draft proposed γ = { $gamma } tokens a cycle; the target verified them in one pass of γ + 1 rows, accepting with measured α = { $alpha }: { $tokens_per_call } tokens per target call, against (1 − α^(γ+1))/(1 − α) = { $formula }. The output distribution is the target's, exactly.
caption-quantization = The same θ stored in { $f32_bytes } (f32), { $q8_bytes } (8-bit) and { $q4_bytes } (4-bit); here KL(p_f32 ‖ p_q8) = { $kl_q8 } and KL(p_f32 ‖ p_q4) = { $kl_q4 } nats. The representation of θ changes, not its learned values.
caption-quantization-shape = A decode step on the 15M shape's random weights ({ $shape_f32_bytes } at f32: a model that leaves the cache) took { $shape_f32_ms } at f32, { $shape_q8_ms } at q8, { $shape_q4_ms } at q4 and { $shape_f16_ms } at f16.
caption-quantization-ratio = q8 reads { $bytes_ratio } fewer bytes than f32 and ran { $speed_ratio } as fast:
caption-quantization-shorter-wait = where a decode step waits on memory, fewer bytes are a shorter wait (on the loaded model, whose weights stay in the cache, q8 is not faster).
caption-quantization-fast-in-cache = q8 is clearly faster on the loaded model too, whose weights stay in the cache, so the saving in bytes is not told apart from the int8 arithmetic: no saving is claimed.
caption-quantization-not-apart = on this load the steps are not clearly apart, so no saving is claimed.
caption-quantization-f16 = f16 halves the bytes but ran slower: the page's WebAssembly has no half-precision arithmetic, so each weight is widened to f32 as it is read.
# The batch sizes' rates, a list (its items joined with a comma).
caption-batching = Decode with B sequences a pass (each timed { $reps } times; median, and the middle half of the runs): { $rates }. B = { $b_most } gave { $gain } the tokens of B = 1.
caption-batching-rate = B = { $b } { $rate } ({ $low }–{ $high })
caption-batching-amortizes = Each pass read the weights once for every row: batching amortizes the weight reads that bound decode.
caption-batching-little-gain = Little gain here: this model's weights stay in the CPU's cache, so a pass does not wait on memory and there is no read to amortize. On Llama-2-7B on an H100 (the roofline below) decode at B = 1 sits far under the ridge: there batching pays.

## §6 The same θ, the taxonomy

caption-same-theta-wild = The same { $params } parameters [LEARNED], two configurations [CONFIG]: greedy's tokens were drawn with mean −log p̂ = { $surprise_a } nats (always the most likely: terse and deterministic), T = 1.5 with top-p 0.98's with { $surprise_b } (wild). Parameters are the model; configuration is how you run it.
caption-same-theta-similar = The same { $params } parameters [LEARNED], two configurations [CONFIG]: greedy's tokens were drawn with mean −log p̂ = { $surprise_a } nats (always the most likely: terse and deterministic), T = 1.5 with top-p 0.98's with { $surprise_b }. Here the two configurations wrote similarly predictable text; the difference shows over longer runs.
caption-taxonomy = Every quantity on this page is one of three: { $learned } [LEARNED] (θ, frozen), { $config } [CONFIG] (chosen) and { $state } [STATE] (transient). Training writes, inference reads.

## What a caption waits for ("Waiting for …")

lesson-waiting = Waiting for { $what }…
caption-wait-transcript = the transcript
caption-wait-distribution = the distribution
caption-wait-token = a generated token
caption-wait-beam = the beam tree
caption-wait-beam-tokens = the beam's tokens
caption-wait-columns = the columns
caption-wait-columns-steps = the columns' steps
caption-wait-column = a column
caption-wait-step = a step
caption-wait-toy-logits = the toy logits
caption-wait-toy = the toy distribution
caption-wait-measurement = the measurement
caption-wait-a-measurement = a measurement
caption-wait-length = a measured length
caption-wait-b1 = the measurement at B = 1
caption-wait-batches = every batch size
caption-wait-batch = a batch size
caption-wait-peaks = the machine's peaks
caption-wait-model = the model
caption-wait-spec = the speculative run
caption-wait-cycle = a cycle
caption-wait-precisions = the four precisions
caption-wait-shape = the 15M shape's decode steps

## The class checks' questions (each step's `check`)

lesson-question-loop = Greedy (T = 0) writes the model's favourite every time; sampling draws from the whole distribution. Guess the next word: would greedy write yours, and how likely would a sample be to?
lesson-question-temperature = At T = 0.5 the favourites take more of the mass, at T = 1.5 the tail takes more. Guess the next word, then compare your guess's p (T = 1) with its q at T = 0.5.
lesson-question-topk-topp = Top-p 0.9 keeps the fewest tokens whose probabilities add up to 0.9. Guess the next word: is it in the kept set, or cut (✕ top_p)?
lesson-question-penalty = Greedy has fallen into a loop. Guess the next token: the model is surer of the loop each time round. Then set a repetition penalty (1.3) and watch q.
