# en: the transcript area (see ../en/page.ftl for the conventions): the prompt, the controls,
# the transcript, the distribution, the knobs, the chain, the shortcuts' help, the panels' shell.

## The panels' headings (Panel::title) and their Show/Hide button

panel-title-prompt = Prompt
panel-title-dist = Next-token distribution
panel-title-lesson-knobs = Decoding knobs
panel-title-knobs = More knobs
panel-title-chain = Sampling chain
panel-title-beam = Beam search
panel-title-kv = KV cache
panel-title-inside = Inside the step
panel-title-toy = Toy logits
panel-title-quant = Quantization
panel-title-spec = Speculative decoding
panel-title-batch = Batching and the two regimes
panel-title-compare = Same θ, different config
panel-title-taxonomy = The complete inference taxonomy
panel-title-lesson = Lesson track
panel-show = Show
panel-hide = Hide

## The page's regions

layout-no-worker = cannot start the engine worker: { $error }
layout-skip = Skip to the controls
layout-generation = Generation
layout-knobs = Decoding knobs
layout-more-views = More views
events-unreadable = unreadable message from the engine: { $error }
events-no-distribution = no distribution to reveal against yet

## The prompt, the controls and the transcript

transcript-prompt = Prompt
transcript-run-prompt = Run prompt
transcript-loop-warning = Repetition loop: the { $period }-token phrase { $phrase } repeats { $repeats } times in a row in the last { $window } tokens. Greedy decoding tends to loop; try sampling, a repetition penalty or no-repeat-n-gram.
transcript-chat-title = Render the prompt as one user message through the chat template the model's file carries, the assistant's turn opened: what an instruct model was trained to see
transcript-chat = Chat
transcript-controls = Generation controls
transcript-step-title = Step one token (n)
transcript-step = Step
transcript-run-title = Run / pause (p)
transcript-run = Run
transcript-pause = Pause
transcript-rewind-title = Rewind one token (b)
transcript-rewind = Rewind
transcript-reset-title = Reset to the prompt (x)
transcript-reset = Reset
transcript-beam-mirror = Beam search: the chips are the best beam so far (the tree is in the beam panel). Step grows every beam by one token; Rewind takes the tree one level back.
transcript-token-id = token { $id }
transcript-prompt-reads-chat = The prompt as the model reads it, { $n } tokens, through the chat template:
transcript-prompt-reads-bos = The prompt as the model reads it, { $n } tokens (BOS first):
transcript-prompt-reads-no-bos = The prompt as the model reads it, { $n } tokens (this vocabulary adds no BOS):
transcript-generated = generated tokens
transcript-chip-label = { $shown }: token { $n } { $piece }, model probability { $p }{ $drawn }, rank { $rank }
transcript-chip-drawn = , drawn with probability { $p }
transcript-chip-p-title = model p (→ drawn p) and rank
transcript-drawn-from = Token { $n } was drawn from:
transcript-kept-strip = Tokens kept at each step (the set each token was drawn from): now { $last }; between { $min } and { $max } over the last { $steps } steps.
transcript-prefill = prefill { $tokens } tokens in { $ms } ms
transcript-decode = decode { $total } ms/token = forward pass { $forward } ms + sampling chain { $chain } ms (means of the last { $steps } steps, { $rate } tokens/s)
transcript-decode-under-clock = decode under the browser clock's 0.1 ms per token (last { $steps } steps)
transcript-last-run = last run: { $n } tokens in { $ms } ms = { $rate } tokens/s
transcript-memory-engine = Memory (wasm, peak): engine
transcript-memory-page = , page
transcript-memory-in-use = ; in use: engine { $engine }, page { $page }
transcript-stop-eos = Stopped: the model ended the story (token { $token }).
transcript-stop-max = Stopped: max tokens ({ $max }).
transcript-stop-sequence = Stopped: stop sequence { $stop } appeared.
transcript-stop-context = Stopped: the context is full ({ $n } tokens).
transcript-stop-constraint-complete = Stopped: the constraint is complete (the text is an instance; nothing may follow).
transcript-stop-constraint-unsatisfiable = Stopped: the constraint allows no token here, not even the end.
transcript-file-too-big = { $file }: { $bytes } bytes, a transcript file is at most { $max }
transcript-unreadable = the file could not be read
transcript-other-model = this transcript was made with { $model } ({ $params } parameters); the page has { $loaded } loaded: load that model first
transcript-export = Export transcript (JSON)
transcript-load = Load a transcript

## The next-token distribution and the toy logits

dist-coin = coin { $coin }
dist-summary = { $kept } of { $total } tokens kept. Most likely: { $top }. Chosen with this seed: { $chosen } (rank { $rank }).
dist-entropy = Entropy H = { $h } nats; exp(H) = { $effective } effective tokens; { $kept } of { $total } tokens kept
dist-cut = top-p (p = { $p }) kept { $kept } and removed a tail of mass { $mass }
dist-chart-note = The { $n } most likely of { $total } tokens, sorted; grey: removed by a stage (their probability before removal).
dist-cut-note = Line: top-p's running sum of the probabilities it saw, most likely first (0 at the bottom, 1 at the top); dashed: p. Tokens past the crossing are removed.
dist-show-top = Show the top { $n }
dist-show-all = Show every token
dist-rows = tokens by probability
dist-removed-by = removed by { $stage }
dist-cum-title = top-p's running sum of the probabilities it saw, down to this token
dist-coin-cdf = The coin { $coin } on the cumulative distribution: the sampler walks the tokens in id order adding their probability, and the first token at which the sum passes the coin is drawn: { $token } (id { $id }).
dist-scale = Scale
dist-probability = probability
dist-log-probability = log-probability
dist-toy-hint = Type logits z (the lesson's example is 2, 1, 0.1); every knob above acts on them as on the model's. The history lists rows already "generated" (0 is z₁), for the penalties and no-repeat-n-gram.
dist-toy-logits = Logits z =
dist-toy-history = History (rows)
dist-toy-history-example = e.g. 0, 0
dist-toy-caption = softmax(z / T) at the lesson's three temperatures (no other knob)
dist-toy-note = At T = 0.5 the lesson's text gives the top token ≈ 0.84; softmax gives 0.864 (e⁴ / (e⁴ + e² + e^0.2)): an error in the lesson. 0.659 at T = 1 and 0.502 at T = 2 are as printed.

## The knobs: every knob's label and help (KNOBS, by name), the profile and the strategy

knob-default-title = the profile's own default for a knob you left unset; set it to change it
knob-default-of = default of { $profile }
knob-value = { $knob } value
knob-strategy-sample = sampling
knob-strategy-greedy = greedy
knob-strategy-beam = beam search
knob-profile-lesson = only what you set
knob-profile-llama-cpp = default chain
knob-label-top-k = Top-k
knob-help-top-k = keep the k most likely tokens; 0 = off
knob-label-top-p = Top-p (nucleus)
knob-help-top-p = keep the smallest set with mass ≥ p, in (0, 1]; 1 = off
knob-label-min-p = Min-p
knob-help-min-p = drop tokens below p × the top probability, in [0, 1]
knob-label-typical-p = Typical-p
knob-help-typical-p = locally typical mass, in (0, 1]; 1 = off
knob-label-repetition-penalty = Repetition penalty
knob-help-repetition-penalty = CTRL, > 0: seen tokens' positive logits ÷, negative ×; 1 = off
knob-label-frequency-penalty = Frequency penalty
knob-help-frequency-penalty = subtract count × α from seen tokens' logits
knob-label-presence-penalty = Presence penalty
knob-help-presence-penalty = subtract α from seen tokens' logits
knob-label-penalty-window = Penalty window
knob-help-penalty-window = how many recent tokens the penalties see; 0 = all
knob-label-no-repeat-ngram = No-repeat n-gram
knob-help-no-repeat-ngram = ban tokens that would repeat an n-gram; 0 = off
knob-label-logit-bias = Logit bias
knob-help-logit-bias = ID:VALUE added to a token's logit, comma-separated or repeated (2:-100 bans EOS)
knob-label-temperature = Temperature T
knob-help-temperature = softmax(z / T), ≥ 0; 0 = greedy, 1 = the model's distribution
knob-label-dynatemp-range = Dynamic temperature range
knob-help-dynatemp-range = llama.cpp's: T moves in [T − range, T + range] with the entropy; 0 = off
knob-label-dynatemp-exponent = Dynamic temperature exponent
knob-help-dynatemp-exponent = llama.cpp's: T = min + (max − min) × (H / ln n)^exponent
knob-label-dry-multiplier = DRY multiplier
knob-help-dry-multiplier = penalise tokens that extend a repeat: multiplier × base^(length − allowed), ≥ 0; 0 = off (llama.cpp's)
knob-label-dry-base = DRY base
knob-help-dry-base = how fast the penalty grows with the repeat's length, ≥ 1 (llama.cpp's 1.75)
knob-label-dry-allowed-length = DRY allowed length
knob-help-dry-allowed-length = repeats up to this long go unpenalised (llama.cpp's 2)
knob-label-dry-penalty-last-n = DRY window
knob-help-dry-penalty-last-n = how many recent tokens DRY scans; 0 = off (llama.cpp's 64)
knob-label-dry-sequence-breaker = DRY sequence breakers
knob-help-dry-sequence-breaker = text that ends a repeat, ≤ 40 bytes each, \n for a newline; repeated; none = no breakers
knob-label-top-n-sigma = Top-nσ
knob-help-top-n-sigma = keep logits within n standard deviations of the largest; ≤ 0 = off (llama.cpp's -1)
knob-label-xtc-probability = XTC probability
knob-help-xtc-probability = chance per step that XTC removes the top choices; 0 = off (llama.cpp's)
knob-label-xtc-threshold = XTC threshold
knob-help-xtc-threshold = tokens at or above this probability are the top choices, in [0, 1]; above 0.5 XTC does nothing
knob-label-epsilon-cutoff = ε-sampling
knob-help-epsilon-cutoff = HF's: drop tokens with probability below ε, in [0, 1); 0 = off
knob-label-eta-cutoff = η-sampling
knob-help-eta-cutoff = HF's: drop tokens below min(ε, √ε·e^−H), in [0, 1); 0 = off
knob-label-top-h = Top-H
knob-help-top-h = HF's: the top tokens whose entropy terms sum to ≤ h × H (of the top 100), in (0, 1]; 0 = off
knob-label-mirostat = Mirostat
knob-help-mirostat = 0 = off, 1 or 2: mirostat's version, replacing the chain (llama.cpp's)
knob-label-mirostat-tau = Mirostat τ
knob-help-mirostat-tau = the target surprise in bits, > 0 (llama.cpp's default 5)
knob-label-mirostat-eta = Mirostat η
knob-help-mirostat-eta = the learning rate of μ, in (0, 1] (llama.cpp's default 0.1)
knob-label-mirostat-m = Mirostat m
knob-help-mirostat-m = version 1: how many top tokens estimate Zipf's exponent, ≥ 2 (llama.cpp's 100)
knob-label-adaptive-p-target = Adaptive-p target
knob-help-adaptive-p-target = the probability the chosen tokens should have on average, in [0, 1]; negative = off (llama.cpp's -1)
knob-label-adaptive-p-decay = Adaptive-p decay
knob-help-adaptive-p-decay = how much of the average each step keeps, in [0, 0.99] (llama.cpp's 0.9)
knob-label-constraint = Constraint
knob-help-constraint = KIND:SOURCE, KIND one of regex, json_schema, grammar (GBNF) or lark: only tokens that keep the text inside the language stay (none = off)
knob-label-max-tokens = Max tokens
knob-help-max-tokens = stop after this many new tokens
knob-label-stop = Stop sequences
knob-help-stop = stop when the generated text contains this; one per line or repeated
knob-label-seed = Seed
knob-help-seed = the coin's seed: same seed, same tokens
knob-label-profile = Profile
knob-help-profile = lesson, hf, llama.cpp or openai: whose stage order, boundary rules and defaults to follow
knob-label-order = Chain order
knob-help-order = the chain's stages in order, comma-separated
knob-label-strategy = Strategy
knob-help-strategy = sample, greedy or beam
knob-label-beams = Beam width k
knob-help-beams = hypotheses kept at each step, 1..=16
knob-label-length-penalty = Length penalty
knob-help-length-penalty = Hugging Face's: score = sum_logprobs / length^length_penalty
knob-label-early-stopping = Early stopping
knob-help-early-stopping = stop as soon as k hypotheses have finished (true) or when no beam can beat them
knob-label-num-return = Sequences returned
knob-help-num-return = how many finished sequences to return (≤ beam width)

## The sampling chain

chain-mini = { $stage }: { $kept } tokens kept, { $removed } removed; grey bars before the stage, blue after (square-root scale)
chain-hint = Stages run top to bottom. Drag a stage, or use ↑ ↓, to reorder; the profile sets the default order and the boundary rules. Each stage's chart:
chain-replaced-by = replaced by { $stage }
chain-off = off
chain-default-of = { $setting } (default of { $profile })
chain-kept = { $kept } kept
chain-kept-removed = { $kept } kept, −{ $removed }
chain-move-earlier = Move { $stage } earlier
chain-move-later = Move { $stage } later
chain-states-title = The stages' state over the steps
chain-states-heading = State over the steps

## The keyboard shortcuts' help (SHORTCUT_HELP, by key)

help-close = Close
shortcut-or = or
shortcut-step = step one token (one beam level in beam search)
shortcut-run = run / pause
shortcut-rewind = rewind one token
shortcut-reset = reset to the prompt
shortcut-temperature = focus the temperature slider (then ← → to move it)
shortcut-top-k = focus top-k
shortcut-scale = switch probability / log-probability
shortcut-lesson = the lesson track's next / previous step (opens it)
shortcut-tab = move between controls
shortcut-help = show this help
shortcut-escape = close this help; leave a text field

## Saving a chart (export-what-<name>: each caller's chart, its English its `what`)

export-group = Export { $what }
export-svg-label = Export SVG of { $what }
export-png-label = Export PNG of { $what }
export-svg = Export SVG
export-what-kv = the KV cache
export-what-chain = the stage charts
export-what-stage-states = the stages' state over the steps
export-what-throughput = throughput and the roofline
export-what-serving = the serving timelines
export-what-spec = the last cycle's p and q
export-what-quant = the four precisions
export-what-beam-tree = the beam tree
export-what-compare = the compared columns
export-what-distribution = the next-token distribution
export-what-toy = the toy distribution
