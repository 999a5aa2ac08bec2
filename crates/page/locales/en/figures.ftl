# The words drawn inside the page's figures (the charts, their exports): titles, axes, legends,
# tooltips. Numbers arrive formatted for the language; names (top-k, min(p, q), p, q, B, n, θ,
# FLOP, KV, P1, D1) stay as they are.

## The next-token distribution
fig-dist-step-title = Next-token distribution at step { $step }: entropy { $entropy } nats, { $kept } tokens kept
fig-dist-toy-title = Toy distribution: entropy { $entropy } nats
fig-probability = probability
fig-probability-log = probability (log scale)
fig-token-ranked = token (most likely first)
fig-final-p = final p
fig-chosen = chosen
fig-p-before-removal = p before removal
fig-top-p-sum = top-p's running sum
fig-top-p-p = top-p's p

## The sampling chain's stages, the compared columns
fig-chain-title = The sampling chain, stage by stage
fig-stage-title = { $stage } ({ $setting }): { $kept } kept
fig-token = token
fig-probability-sqrt = probability (square-root scale)
fig-before = before
fig-after = after
fig-neutral = Neutral here (no change): { $stages }
fig-states-title = { $stage } over the steps
fig-step = step
fig-value = value
fig-columns-title = Same θ, different config — differing knobs: { $knobs }
fig-none = none
fig-column-title = Column { $column } ({ $knobs })
fig-defaults = defaults
fig-column-summary = { $tokens } tokens; next: entropy { $entropy } nats over { $kept } kept tokens

## The beam tree
fig-beam-title = Beam tree: { $nodes } nodes over { $depth } levels (Σ log p beside each)
fig-beam-depth = depth → (tokens generated)
fig-beam-collapsed = … { $levels } earlier levels (their best path is the transcript's start)
fig-beam-greedy-tip = greedy's token { $n }: { $piece } — cumulative log p { $cum } (pruned from the beam)
fig-beam-node-tip = { $piece } — log p { $logp }, cumulative { $cum } ({ $status })
fig-beam-the-prompt = the prompt
fig-beam-prompt = prompt
fig-status-root = root
fig-status-beam = beam
fig-status-pruned = pruned
fig-status-finished = finished
fig-status-unfinished = unfinished

## The KV cache
fig-kv-title = The KV cache
fig-kv-grid-title = The KV cache: { $n } of { $context } positions, { $layers } layers
fig-kv-bytes-title = KV cache: 2 × n × { $layers } layers × { $dim } × 4 bytes; n = { $n } holds { $bytes } bytes
fig-kv-x = positions cached n
fig-bytes = bytes
fig-this-sequence = this sequence

## Speculative decoding, quantization
fig-spec-title = Speculative cycle { $cycle }: { $accepted } of { $drafted } drafted tokens accepted (α = { $alpha })
fig-draft-title = Draft { $draft }: { $piece }, Σ min(p, q) = { $overlap }
fig-residual = residual { $residual }
fig-p-model = p (the model)
fig-q-draft = q (the draft)
fig-quant-title = The same θ at four precisions, position { $position }

## Batching: throughput, the roofline, the serving timelines
fig-sweep-title = Batching and the two regimes
fig-tp-title = Tokens per second against batch size B ({ $backend })
fig-tp-x = batch size B (log₂)
fig-tp-y = tokens / s
fig-prefill = prefill
fig-decode = decode
fig-tp-tip = B = { $b }: { $phase } { $rate } tokens/s
fig-roof-machine-title = Roofline of this machine: ridge { $ridge } FLOP/byte
fig-roof-x = arithmetic intensity, FLOP per byte (log)
fig-roof-y = FLOP / s (log)
fig-roof-tip = { $point }: { $intensity } FLOP/byte, { $flops } ({ $share } % of the roof there)
fig-roof-prefill = prefill at B (P…)
fig-roof-decode = decode at B (D…)
fig-roof-above = A measured point lies above the measured roof: the roof was under-measured, so it is not drawn.
fig-ridge = ridge { $ridge }
fig-serve-title = Serving { $requests } requests through { $slots } slots
fig-timeline-title = { $policy }, { $slots } slots: { $passes } passes, occupancy { $occupancy } %
fig-policy-continuous = continuous
fig-policy-static = static
fig-request = request
fig-request-tip = request { $id }: { $prompt }-token prompt, { $made } of { $asked } tokens; arrived at step { $arrival }, admitted { $admitted }, finished { $finished }
fig-waiting = waiting
fig-prefill-joins = prefill (joins a step)
