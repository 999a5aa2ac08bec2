# The class area: the class round's panel, the classroom's room, the taxonomy's table and badges
# (see page.ftl for the conventions). The English is what the page shows: the tests select by it.

## The class round's panel

class-heading = Class round: guess the next token
class-no-score = No round scored yet: the class guesses, Reveal shows the model's distribution, Draw takes the model's token.
class-score = Score: the class's top guess was the token on { $class } of { $rounds }, the model's top-1 on { $model } of { $rounds }; the class beat the model's top-1 on { $beat } of { $rounds }.
class-last = Last round: the model drew { $drawn }; the class's top guess was { $top }.
class-last-p = Last round: the model drew { $drawn } (p { $p }); the class's top guess was { $top }.
class-tally-label = The class's guesses for the next token (a tally: cat ×5, dog ×3)
class-reveal = Reveal
class-draw = Draw the model's token
class-chart-caption = The class's guesses against the model's distribution (T = 1), on the same tokens: every guessed token and the model's five most likely (bars on a square-root scale); q is what the next step draws from under the knobs, ✕ where a stage removed the token
class-col-token = token
class-col-class = class c
class-col-model = model p
class-col-rank = rank
class-col-q = q under the knobs
class-share = { $percent }% ({ $count })
class-dropped = No token for: { $guesses } (not counted).
class-guesses = guesses
class-cross-entropy = cross-entropy H(c, p)
class-model-entropy = the model's entropy H(p)
class-nats = { $value } nats
class-reading = Encoding the class's guesses costs the model { $ce } nats a token against { $hp } for its own samples; { $kl } of them is the KL, the price of the class not guessing in the model's proportions (the class's own spread, H(c), is { $hc }).

## Why a round could not be drawn

class-err-bad-guess = "{ $guess }": a guess is at most { $max } characters, without control characters
class-err-bad-count = "{ $count }": a count is a whole number from 1 to { $max }
class-err-too-many = { $total } guesses: a round takes at most { $max }
class-err-text-moved = the text moved on before the guesses were read: reveal again
class-err-not-finite = the model's logits are not finite
class-err-no-token = no guess stands for a token: nothing to reveal
class-err-outside-vocab = a guess's token is outside the model's vocabulary

## The classroom's room

room-qr-label = QR code of { $address }
room-students-open = Students open
room-type-code = or type the code
room-count-one = Round { $round }: { $students } student in, { $guessed } guessed
room-count-other = Round { $round }: { $students } students in, { $guessed } guessed
room-err-vocab = The classroom server reads guesses with a vocabulary of { $vocab } tokens, this page's model has { $mine }: start it with the page's model.
room-err-create = cannot create a room: { $why }
room-err-other-tab = This room is open in another tab: it is presented there.
room-err-closed = The room closed: { $reason }
room-err-moved = The text moved on before the tally came: the round opens again.
room-err-no-guess = No guess has arrived yet: the round opens again.
room-err-no-token = No guess stands for a token of this model ({ $guesses }): the round opens again.
room-err-code = { $code } is not a room's code ({ $length } of { $alphabet })

## The taxonomy: the lesson's table, the badges' legend

taxonomy-caption = Lesson 10, section 6, with what this page shows in each row
taxonomy-col-at-inference = At inference
taxonomy-col-category = Category
taxonomy-col-on-page = On this page
taxonomy-addition = — this page's addition
taxonomy-separator = ,{ " " }
taxonomy-meaning-learned = learned by training, frozen at inference: θ never changes
taxonomy-meaning-config = chosen by whoever runs the model: how θ is run
taxonomy-meaning-state = produced while running, thrown away after: transient
taxonomy-row-parameters = Parameters θ
taxonomy-row-shaping = Temperature, top-k, top-p, penalties
taxonomy-row-strategy = Strategy (greedy/beam/sampling), beam width k
taxonomy-row-limits = Max tokens, stop sequences
taxonomy-row-state = Logits, probabilities, KV cache
taxonomy-row-serving = Precision, draft and γ, batch size, backend (section 5)
taxonomy-cell-parameters = [LEARNED], frozen — never change
taxonomy-cell-shaping = [CONFIG] (shape sampling)
taxonomy-cell-strategy = [CONFIG]
taxonomy-cell-limits = [CONFIG]
taxonomy-cell-state = [STATE]
taxonomy-cell-serving = [CONFIG]

## What the page has in each row: the knobs

taxonomy-knob-top-k = Top-k
taxonomy-knob-top-p = Top-p (nucleus)
taxonomy-knob-min-p = Min-p
taxonomy-knob-typical-p = Typical-p
taxonomy-knob-repetition-penalty = Repetition penalty
taxonomy-knob-frequency-penalty = Frequency penalty
taxonomy-knob-presence-penalty = Presence penalty
taxonomy-knob-penalty-window = Penalty window
taxonomy-knob-no-repeat-ngram = No-repeat n-gram
taxonomy-knob-logit-bias = Logit bias
taxonomy-knob-temperature = Temperature T
taxonomy-knob-dynatemp-range = Dynamic temperature range
taxonomy-knob-dynatemp-exponent = Dynamic temperature exponent
taxonomy-knob-dry-multiplier = DRY multiplier
taxonomy-knob-dry-base = DRY base
taxonomy-knob-dry-allowed-length = DRY allowed length
taxonomy-knob-dry-penalty-last-n = DRY window
taxonomy-knob-dry-sequence-breaker = DRY sequence breakers
taxonomy-knob-top-n-sigma = Top-nσ
taxonomy-knob-xtc-probability = XTC probability
taxonomy-knob-xtc-threshold = XTC threshold
taxonomy-knob-epsilon-cutoff = ε-sampling
taxonomy-knob-eta-cutoff = η-sampling
taxonomy-knob-top-h = Top-H
taxonomy-knob-mirostat = Mirostat
taxonomy-knob-mirostat-tau = Mirostat τ
taxonomy-knob-mirostat-eta = Mirostat η
taxonomy-knob-mirostat-m = Mirostat m
taxonomy-knob-adaptive-p-target = Adaptive-p target
taxonomy-knob-adaptive-p-decay = Adaptive-p decay
taxonomy-knob-constraint = Constraint
taxonomy-knob-max-tokens = Max tokens
taxonomy-knob-stop = Stop sequences
taxonomy-knob-seed = Seed
taxonomy-knob-profile = Profile
taxonomy-knob-order = Chain order
taxonomy-knob-strategy = Strategy
taxonomy-knob-beams = Beam width k
taxonomy-knob-length-penalty = Length penalty
taxonomy-knob-early-stopping = Early stopping
taxonomy-knob-num-return = Sequences returned

## What the page has in each row: its other quantities, controls and panels

taxonomy-item-model-summary = the model card: parameters, shapes
taxonomy-item-model-file = the checkpoint file (θ)
taxonomy-item-model-link = a model by link: the list, a URL or a hub repository (θ)
taxonomy-item-tokenizer-file = the tokenizer (fixed BPE)
taxonomy-item-config-file = config.json: the architecture θ was trained in (shapes, RoPE base, ε)
taxonomy-item-quant-weights = a weight row before and after
taxonomy-item-calc-model = a model's shapes (calculator)
taxonomy-item-backend-select = backend
taxonomy-item-precision-select = weights' precision
taxonomy-item-threads-select = the engine's threads
taxonomy-item-spec-draft = draft
taxonomy-item-spec-gamma = γ (tokens drafted)
taxonomy-item-spec-rule = acceptance rule
taxonomy-item-batch-size = batch size B
taxonomy-item-calc-batch = batch size (calculator)
taxonomy-item-calc-bytes = bytes per element (calculator)
taxonomy-item-serve-slots = serving slots
taxonomy-item-serve-requests = requests in the trace
taxonomy-item-serve-seed = the trace's seed
taxonomy-item-cmp-columns = the compared configurations
taxonomy-item-batch-tokens = tokens per lane
taxonomy-item-prompt = the prompt (the context so far)
taxonomy-item-transcript = the transcript
taxonomy-item-dist-chart = the next-token distribution
taxonomy-item-timings = timings
taxonomy-item-memory = memory
taxonomy-item-chain-charts = each stage's distribution
taxonomy-item-stage-states = the stages' state over the steps
taxonomy-item-constraint-mask = the constraint's mask: Z_t, allowed tokens, its time
taxonomy-item-beam-tree = the beam tree
taxonomy-item-kv-grid = the KV cache
taxonomy-item-att-grid = the new token's attention over the cache
taxonomy-item-lens-grid = the logit lens, layer by layer
taxonomy-item-calc-positions = cached positions n (calculator)
taxonomy-item-cache-compare = the cache comparison's timings
taxonomy-item-toy-logits = toy logits
taxonomy-item-toy-history = toy history
taxonomy-item-quant-table = the four precisions' distributions
taxonomy-item-spec-run = the speculative run
taxonomy-item-batch-results = lanes, throughput, timelines
taxonomy-item-cmp-view = the compared columns' text and distributions
taxonomy-item-lesson-caption = the lesson step's live numbers
