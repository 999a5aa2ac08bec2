# zh-CN：面板区域（约定见 ../en/page.ftl）：对比、束搜索、KV 缓存与一步之内、推测解码、量化、批处理、约束。
# 数字已按语言格式化；专有名称（GQA、MQA、KV、Q8_0、f32 等）保持原样。

## 通用

panel-bytes = { $n } 字节

## 同一 θ，不同配置

compare-note = 权重相同，配置不同：每一列都是同一个已加载模型的独立序列和 KV 缓存，从生成记录的提示词出发；各列最新的词元作为一次前向传播一起送入模型。参数就是模型；配置是你运行它的方式。
compare-preset = 预设
compare-choose = 选择一个预设…
compare-preset-terse-wild = 简洁而确定（贪心）对比 奔放而有创意（T = 1.5，top-p 0.98）
compare-preset-profiles = hf 对比 llama.cpp，旋钮相同（二者的顺序不同）
compare-preset-k-vs-p = top-k 40 对比 top-p 0.9（固定的集合大小对比自适应的集合大小）
compare-preset-samplers-2026 = llama.cpp 采样链中 2026 年的采样器：重复惩罚 1.3、DRY 0.8、XTC 0.5、mirostat 2（τ = 3）
compare-preset-constrained = 同一个提示词，不加与加上 JSON Schema（一个故事角色）
compare-start = 开始
compare-step = 全部单步
compare-step-10 = 全部单步 ×10
compare-add = 添加一列
compare-column-knobs = 第 { $n } 列的旋钮
compare-remove = 删除第 { $n } 列
compare-from = 起点
compare-columns = —— 共 { $n } 列；取值不同的旋钮：{ $knobs }
compare-none = 无
compare-off = 关闭
compare-column = 第 { $n } 列
compare-stats = { $tokens } 个词元，Σ log p { $logp }；下一步：熵 { $entropy } nats，保留 { $kept } 个词元
compare-top-label = 第 { $n } 列下一个词元的分布

## 束搜索

beam-tree-caption = 搜索树：每个保留或剪枝的前缀，各节点标出 Σ log p
beam-tree-region = 束搜索树，可滚动
beam-early-stopping = 提前停止
beam-use = 使用束搜索
beam-step = 束前进一步
beam-restart = 重新开始
beam-example = 示例：{ $prompt }，{ $steps } 步
beam-hyp = 得分 { $score }（log p { $logp }）：{ $text }
beam-hyp-ended = 得分 { $score }（log p { $logp }，已结束）：{ $text }
beam-compare = { $depth } 个词元之后：最佳束 log p = { $best }；贪心路径 log p = { $greedy }
beam-compare-better = { $depth } 个词元之后：最佳束 log p = { $best }；贪心路径 log p = { $greedy } —— 束搜索找到了比贪心更可能的序列
beam-greedy = 贪心：{ $text }
beam-greedy-pruned = 贪心（它的前 { $n } 个词元在树中；之后被束搜索剪掉：即树下方的虚线行）：{ $text }
beam-best = 最佳束（即生成记录中的）：{ $text }
beam-count = { $nodes } 个节点；灰色虚线：已剪枝；带圈：已完成
beam-count-done = { $nodes } 个节点，搜索已结束；灰色虚线：已剪枝；带圈：已完成

## KV 缓存

kv-waiting-model = 正在等待模型…
kv-sharing = K/V 头 { $kv } ← 查询头 { $queries }
kv-grid-caption = 缓存：每层一行，每个已缓存位置一格
kv-positions = { $seq } 个位置中的 { $n } 个：提示词的 { $prompt } 个词元，以及生成的 { $generated } 个中的 { $cached } 个
kv-positions-waiting = { $seq } 个位置中的 { $n } 个：提示词的 { $prompt } 个词元，以及生成的 { $generated } 个中的 { $cached } 个（最新的词元要到计算下一个词元时才进入缓存：它的 K 和 V 来自读取它的那一步）
kv-gqa = 分组查询注意力：{ $heads } 个查询头共享 { $kv } 个 K/V 头（键和值比每头一份少 { $ratio }×）。
kv-formula-caption = 字节数 = 2 × n × N_layers × d_kv × 每元素字节数（2 表示 K 和 V；float32 = 4 字节）
kv-per-token = 每个词元
kv-used = 已用
kv-allocated = 已分配
kv-without-gqa = 不用 GQA
kv-engine = （引擎：{ $bytes } 字节）
kv-weights-row = 权重（{ $precision }）
kv-weights = { $weights } 字节；加上已分配的缓存共 { $total } 字节。
kv-cache-f32 = 缓存和权重一样是 float32。
kv-cache-quantized = 这里的量化只改变权重：K 和 V 仍是 float32，所以在长上下文时占主导的是缓存而不是权重（llama.cpp 也可以用 8 位存储缓存：--cache-type-k q8_0）。
kv-compare-heading = 用缓存与不用缓存
kv-compare-hint = 用缓存时，每一步只为新词元计算 Q、K、V，并与 n 个已缓存的键做注意力：O(n·d)。不用缓存时，整个前缀要重新运行：O(n²·d)。这里的“不用缓存”是把 n 个词元的前缀作为一批在一个新序列上重新运行，这一步之后丢弃其键和值。
kv-measure = 在此后端上测量
kv-measuring = 正在此后端上测量…
kv-col-cached-ms = 毫秒/词元，有缓存
kv-col-naive-ms = 毫秒/词元，无缓存
kv-col-ratio = 比值
kv-col-cached-macs = 乘加次数，有缓存
kv-col-naive-macs = 乘加次数，无缓存
kv-compare-region = 缓存对比，可滚动
kv-col-read = 一个带缓存的步骤读取的字节
kv-col-model-ms = 带宽模型，毫秒
kv-col-over-model = 带缓存 / 模型
kv-bandwidth = 模型：一个带缓存的步骤要读取全部权重以及 n 个位置的 K 和 V（2 × n × 层数 × d_kv × 4 字节，即上面的公式），所以至少需要这些字节 ÷ 读取带宽，{ $gbs } GB/s，这里在引擎的线程上读取模型自己的权重测得。接近 1× 时步骤在等内存；远高于它时在等算术或线程间的交接。
kv-bandwidth-gpu = 在 GPU 后端上不画带宽模型（CPU 的带宽不限制它）。
kv-calc-bad-batch = { $text } 不是有效的批大小（1 到 { $most }）
kv-calc-bad-positions = { $text } 不是有效的上下文长度（1 到 { $most }）
kv-calc-heading = 计算器
kv-calc-model = 模型
kv-calc-loaded = { $name }（{ $kind }；本页已加载）
kv-calc-positions = 上下文长度 n
kv-calc-batch = 批大小 B
kv-calc-precision = 精度
kv-calc-f32 = float32（4 字节）
kv-calc-f16 = float16 / bfloat16（2 字节）
kv-calc-int8 = int8（1 字节）
kv-calc-formula = { $name }：2 × { $n } × { $layers } 层 × { $d_kv }（d_kv = { $kv_heads } 个 K/V 头 × { $head_dim }）× { $bytes } = { $total } 字节 =
kv-calc-sharing = 共享方式
kv-calc-kv-heads = K/V 头数
kv-calc-cache = 缓存
kv-calc-mha-this = MHA（每个查询头一份 K/V；本模型）
kv-calc-mha = MHA（每个查询头一份 K/V）
kv-calc-this-model = { $kind }（本模型）
kv-calc-mqa-this = MQA（所有头共用一份 K/V；本模型）
kv-calc-mqa = MQA（所有头共用一份 K/V）
kv-calc-weights-heading = 权重与一批序列的缓存对比
kv-calc-weights = 权重（{ $params } 个参数 × { $bytes }）
kv-calc-cache-batch = KV 缓存 × B = { $batch }
kv-calc-crossover = 在这里缓存占权重加缓存的 { $share } %。当 B = { $batch } 时，从 n = { $n } 起各序列的缓存超过权重（B × 2 × n × N_layers × d_kv 个元素 > { $params } 个参数）：在长的 n 下，序列越多越是如此，推理内存由缓存主导。

## 一步之内

inside-heading = 一步之内
inside-hint = 每个解码步只为新词元计算 Q、K、V，追加它的 K 和 V，再对缓存做注意力：每个头一个查询，对 n 个已缓存的键。探针记录这一步自己的前向传播所用的权重，以及每层之后的残差流。
inside-stop = 停止探测
inside-show = 显示新词元的注意力和 logit 透镜
inside-probing = 正在探测最新的一步…
inside-cost = 位置 { $pos } 的词元（{ $token }）对 n = { $n } 个已缓存位置做注意力：
inside-cost-dots = 每个头 { $n } 次长度为 { $size } 的点积
inside-cost-total = ，× { $heads } 个头 × { $layers } 层 = { $macs } 次乘加用于计算分数，混合值还要同样多；n 每步增加一。
inside-recorded-step = 记录自这一步自己的前向传播；探针和透镜用时 { $ms } ms。
inside-recorded-probe = 记录自对整个序列的一次探测传播（视图是在这一步之后打开的，或发生了回退）；探针和透镜用时 { $ms } ms。
inside-readout = 第 { $layer } 层，第 { $head } 个头（K/V 头 { $kv }）：它的注意力有 { $weight } 落在位置 { $pos } 的 { $token } 上
inside-grid-summary = 位置 { $pos } 的词元在 { $n } 个已缓存位置上的注意力，{ $layers } 层 × { $heads } 个头（{ $kv } 个 K/V 头）
inside-grid-summary-last = 位置 { $pos } 的词元在 { $n } 个已缓存位置上的注意力（只画出最后 { $cols } 个），{ $layers } 层 × { $heads } 个头（{ $kv } 个 K/V 头）
inside-grid-note = 每一行是一个查询头在已缓存位置上的 softmax 权重（颜色深浅 ∝ √权重，小权重也看得见）；读取同一个 K/V 头的查询头排在一起（分组查询注意力：每个 K/V 头 { $per } 个）。方向键可移动读数。
inside-grid-last = 只画出 { $n } 个位置中的最后 { $cols } 个。
inside-position = 位置 { $pos }
inside-lens-cell = 第 { $layer } 层，位置 { $pos }：{ $token }，p = { $p }
inside-final = L{ $layer }（最终层）
inside-lens-heading = logit 透镜
inside-lens-note = 原始 logit 透镜：把最终的归一化和分类器套用到中间层上，而模型并没有为此训练过。
inside-lens-cells = 每一格：该层在这一列词元之后最可能的下一个词元，及其概率（T = 1）；最上面一行是模型自己的分布。
inside-lens-region = logit 透镜，按层与位置
inside-after = 之后 →
inside-lens-last = 在 { $token }（位置 { $pos }）之后：每一层的分布，以及 KL(p_final ‖ p_layer)，单位 nats
inside-col-layer = 层
inside-col-kl = 与最终层的 KL
inside-col-top = 最可能的

## 推测解码

spec-kind-accepted = 被接受的草稿
spec-kind-resampled = 从 max(0, p − q) 重新采样
spec-kind-target = 模型自己的词元
spec-kind-bonus = 来自 p 的奖励词元
spec-draft = 草稿
spec-draft-q8 = quant:q8 —— 同样的权重，8 位
spec-draft-q4 = quant:q4 —— 同样的权重，4 位
spec-draft-exit = exit:{ $k } —— { $layers } 层中的前 { $k } 层
spec-draft-ngram-1 = ngram:1 —— 提示词查找，最后一个词元
spec-draft-ngram = ngram:{ $n } —— 提示词查找，最后 { $n } 个词元
spec-gamma = γ（每轮起草数）
spec-rule = 规则
spec-rule-rejection = rejection：以 min(1, p/q) 的概率接受
spec-rule-match = match：保留与模型自己的词元相同的草稿
spec-start = 从提示词开始
spec-one = 一轮
spec-ten = 10 轮
spec-empty = 开始一次运行：草稿模型提出 γ 个词元，模型在一次 γ + 1 行的前向传播中把它们全部检查一遍。
spec-what-exit = 它的前几层就是模型自己的层，所以它直接写入模型的 KV 缓存：没有第二份缓存，也没有自己的预填充（随后验证传播会让这些位置经过每一层）。
spec-what-quant = 同样学到的权重，经过量化：它在 CPU 上有自己的 KV 缓存，与被接受的文本保持同步。
spec-what-ngram = 提示词查找提出上下文最后几个词元上一次出现后紧跟的词元；它没有分布，所以 q 在它的词元上是独热的。
spec-note = { $draft }，γ = { $gamma }，规则 { $rule }。{ $what } 按“开始”时的旋钮设置作用于 p 和 q。
spec-note-greedy = { $draft }，γ = { $gamma }，规则 { $rule }（贪心：草稿只要是模型的 argmax 就保留）。{ $what } 按“开始”时的旋钮设置作用于 p 和 q。
spec-chip-title = 第 { $cycle } 轮：{ $kind }
spec-rejected-title = 被拒绝的草稿
spec-accepted = 接受
spec-rejected = 拒绝
spec-resampled = 重新采样
spec-target = 模型的词元
spec-bonus = 奖励
spec-forbidden = 拒绝：约束禁止这个草稿（在它的掩码下 p = 0）
spec-same = { $verdict }：模型的词元与之相同
spec-another = { $verdict }：模型的词元是另一个
spec-accept = { $verdict }：P(接受) = min(1, p/q) = min(1, { $p }/{ $q }) = { $chance }
spec-overlap-note = （来自 q 的草稿在此处被接受的概率）
spec-cycle = 第 { $n } 轮：起草 { $drafted } 个，接受 { $accepted } 个，然后是{ $next }
spec-drafted = 草稿：
spec-bars = 条形：上方为 p（模型），下方为 q（草稿）；深色部分是 min(p, q)；p 更长的地方，多出的部分就是拒绝后重新采样所用的残差 max(0, p − q)。▸：起草的词元。
spec-speed = 普通解码速度的 { $speed }×
spec-speed-slower = 普通解码速度的 { $speed }×：这里更慢（在这么小的模型上，草稿和更宽的验证传播的开销超过了省下的传播）
spec-stats = 累计统计
spec-cycles = 轮数（验证传播）
spec-drafts-accepted = 被接受的草稿
spec-alpha = α = Σ min(p, q) 的均值
spec-per-pass = 每次验证传播的词元数
spec-saved = 省下的模型传播
spec-wall = 此后端上的挂钟时间
spec-acceptance = { $drafted } 个中的 { $accepted } 个（{ $share } %）
spec-per-call = 实测 { $measured }；(1 − α^(γ+1)) / (1 − α) = { $formula }（假设各位置相互独立）
spec-saved-tokens = { $emitted } 个词元中有 { $saved } 个不需要单独的传播
spec-wall-times = 推测解码每个词元 { $spec } ms，普通解码 { $plain } ms：{ $verdict }

## 量化

quant-running = 正在运行四种精度…
quant-note = 同样的权重 θ 以四种方式存储：改变的是表示，而不是学到的值。在生成记录的 { $position } 个词元之后，每种精度的下一个词元分布（其 logits 的 softmax，在采样链之前），在本页 worker 的 CPU 上计算，各自有自己的 KV 缓存。q8 和 q4 也把激活值按组舍入为 int8，每个矩阵一次（与 llama.cpp 一样，每组 32 个或更多；对于行从组内开始的矩阵，例如 stories260K 的 w2，每一行用一个缩放因子舍入），并做 int8 × int8 乘法；归一化参数仍为 f32。q8 和 q4 的 KL 下方：同样的权重配 f32 激活值。
quant-dequantized = 这个文件本身就是 q8：它的“f32”是反量化后的权重。
quant-dequantized-file = 这个文件保存的是它自己的块（{ $types }）：它的“f32”是这些权重反量化后的结果，四种精度都由它生成；它自己的一行在最后。
quant-file = 文件自己的块（{ $types }）
quant-current = （生成记录所用的）
quant-decode-title = 预热几步后 5 轮的中位数；中间三轮为 { $low }–{ $high } ms
quant-rate = { $rate } 词元/秒 · { $low }–{ $high }
quant-f32-acts-title = 同样的权重配 f32 激活值
quant-f32-acts = f32 激活：
quant-same = 相同
quant-differs = 不同（id { $id }）
quant-table-region = 四种精度，可滚动
quant-caption = 权重字节数、一次实测的解码步，以及与 f32 相比的分布
quant-col-precision = 精度
quant-col-bytes = 权重字节数
quant-col-smaller = 缩小
quant-col-decode = 解码一步（CPU）
quant-col-shape-title = worker 生成的、llama2.c 15M 形状的随机权重：一个装不进缓存的模型
quant-col-shape = 解码一步，15M 形状
quant-col-kl = KL(p_f32 ‖ p)，nats
quant-col-top = 最高词元与 f32 相比
quant-shape-note = 15M 形状一列：worker 为这次测量生成的 llama2.c 15M 形状的随机权重（f32 下 { $bytes }），在位置 { $position } 解码一步（5 轮的中位数；中间三轮）。
quant-shape-cached = 本模型的权重装得进 CPU 的缓存，一步从不等待内存；15M 形状的权重装不进，所以它那一列显示了更少的字节能换来什么。
quant-row-region = 一行权重量化前后的对比，可滚动
quant-row-caption = { $row }：它的前几个权重，量化前后
quant-row-error = 整行上的最大误差：f16 { $f16 }，q8 { $q8 }，q4 { $q4 }。这一行跨越 { $q8_groups } 个 q8 组和 { $q4_groups } 个 q4 组。
quant-row-error-straddles = 整行上的最大误差：f16 { $f16 }，q8 { $q8 }，q4 { $q4 }。这一行跨越 { $q8_groups } 个 q8 组和 { $q4_groups } 个 q4 组：它从一个组的中间开始（组是在展平的矩阵上划分的，和 llama2.c 导出时写的一样），它的每个权重都按所在组自己的缩放因子计算。

## 批处理与两种瓶颈区间

batch-lanes-heading = B 个序列，一次传播
batch-lanes-note = 每条通道都是同一个提示词，用自己的种子（通道 0 用页面的种子，所以它就是生成记录本身的文本）和自己的 KV 缓存；每一步是对 B 行的一次前向传播——每条通道一个词元——每个权重矩阵只读一次，供所有通道共用。
batch-size = 批大小 B
batch-tokens = 每条通道的词元数
batch-run = 运行各通道
batch-step = 所有通道前进一步
batch-lane-seed = 通道 { $lane } · 种子 { $seed }
batch-stopped = 已停止
batch-lanes-summary = { $batch } 条通道：一次传播预填充 { $batch } × { $prompt } 行提示词（{ $prefill } ms），然后 { $passes } 次每次 ≤ { $batch } 行的传播，每次 { $pass } ms —— 所有通道合计 { $rate } 词元/秒。
batch-tp-heading = 吞吐量与批大小的关系，以及屋顶线模型
batch-tp-note = 此时此地在当前后端上测量：B 个各 { $prompt } 个词元的提示词作为一次传播预填充，然后是 { $gen } 次 B 行的解码传播，每个批大小重复多次（取中位数，以及各次运行的中间一半）。worker 还用引擎自己的内核测量这台机器的上限：解码的乘法流式读取一个与权重同样大的矩阵，以及一个在缓存内部进行的批量乘法。
batch-measure = 测量 B = 1, 2, 4, 8, 16
batch-measuring = 正在此后端上测量…
batch-split-heading = 在这块 GPU 上，解码一个词元的时间花在哪里
batch-split-note = GPU 把一个解码步作为一队内核来运行。每次启动本身都要花时间，不论内核做什么；课程中“解码受带宽限制”的说法，只有在这些启动相对于内核读取权重的开销很小时才成立。借助每个内核前后的 GPU 时间戳，worker 把 16 个解码步的挂钟时间拆分为内核的 GPU 时间和其余部分。
batch-split-measure = 为 GPU 的内核计时
batch-split-waiting = 正在为 16 个解码步计时…
batch-why-little-cached = 这里收益很小（{ $gain }×，在各次运行的波动范围内或低于 1.3×）：权重（{ $bytes }）都在 CPU 的缓存中，所以一次传播不必等待内存，也就没有可供 B 行共享的读取。批处理的收益出现在一次从内存读取权重可以服务许多行的场合——权重装不进缓存的模型，或 GPU。
batch-why-little = 在 { $backend } 后端上这里收益很小（{ $gain }×，在各次运行的波动范围内或低于 1.3×）。
batch-why-gain-cached = 权重（{ $bytes }）都在 CPU 的缓存中，所以没有哪次传播要为它们等待内存：这里解码的收益来自每行权重只读一次供所有 B 行使用，以及把每次传播的固定开销（各层的循环、归一化、核间交接）分摊到 B 行上。
batch-why-gain = 权重（{ $bytes }）装不进缓存：每次传播都要从内存读取它们，而 B 行共享每一次读取——解码的收益来自共享权重读取。
batch-measured-on = 测量对象：{ $model }（{ $bytes }）。
batch-model-15m = 15M 形状的随机权重（维度 288，6 层，词表 32,000），由 worker 为这次测量生成
batch-tp-summary = 在 { $backend } 后端上，从 B = 1 到 B = { $batch }，解码从 { $first } → { $last } 词元/秒（{ $gain }×）；预填充 { $prefill_first } → { $prefill_last }（它的一次传播本来就有许多行）。
batch-col-runs = 运行次数
batch-col-prefill = 预填充 词元/秒（中间一半）
batch-col-decode = 解码 词元/秒（中间一半）
batch-under-measured = 有一个实测点高于实测的屋顶：屋顶被测低了（探测时机器正忙），所以不画出。请重新测量。
batch-below = 低于
batch-above = 高于
batch-peaks = 这台机器，由 worker（{ $threads } 个线程）用引擎自己的内核测得：解码的乘法以 { $bandwidth } GB/s 流式读取 { $buffer }（本模型权重的大小），批量乘法的算力为 { $flops }；脊点 { $ridge } FLOP/字节。B = 1 时解码每移动一字节做 { $intensity } FLOP —— { $side }脊点；预填充对许多行的一次传播做 { $prefill }。
batch-machine-heading = 本模型在这台机器上
batch-split-none = 这里无法测量：{ $why }。没有 GPU 时间戳，就无法把一步的挂钟时间拆分为内核的时间和启动的时间。
batch-split-summary = 一个解码步（一行，计时 { $tokens } 个）的挂钟时间为 { $wall }：GPU 在它的 { $kernels } 个内核中忙了 { $busy }（{ $busy_share } %），另有 { $overhead }（{ $overhead_share } %）用于启动内核、内核之间的屏障以及读回 logits。
batch-launch-bound = 受启动限制：这里的解码在等待启动，而不是等待内存。课程中“解码受带宽限制”的说法，只有在启动相对于内核开销很小时才成立（更少、融合的调度；更大的模型）。
batch-kernel-bound = 内核自身的时间占主导：这里启动相对于内核开销很小，所以解码的速度就是内核的速度（在软件适配器上，“GPU”就是这颗 CPU，它的内核就是 CPU 代码）。
batch-launch-even = 启动和内核大约各占一半（哪一方都不超过 1.3×）：更便宜的启动和更快的内核都会见效。
batch-col-kernel = 内核
batch-col-dispatches = 每个词元的调度次数
batch-col-gpu-time = 每个词元的 GPU µs
batch-col-share = 占 GPU 时间的比例
batch-real-heading = 课程的要点在真实规模下（计算所得，非实测）
batch-h100-title = Llama-2-7B（fp16）在 H100 上
batch-real-scale = 在真实规模下：Llama-2-7B 以 fp16 每个解码步都要读取 { $weights } 的权重，以及它在 512 个位置上的缓存（合计 { $all }）。在 H100 上（989 TFLOP/s，3.35 TB/s：脊点 { $ridge } FLOP/字节），一个序列每字节做 { $intensity } FLOP，所以内存把它限制在约 { $rate } 词元/秒，算力 { $flops } —— 仅为运算能力的 { $share } %。要大约 { $rows } 行共享每次权重读取才能达到脊点；一次 512 个词元的预填充则远远超过它。
batch-serve-heading = 连续批处理与静态批处理
batch-serve-note = 一条带种子的请求序列（提示词和输出长度各不相同，随时间陆续到达）通过真实引擎上的 B 个槽位。静态：只有当上一批全部完成后才开始新的一批。连续（Orca 的迭代级调度，vLLM 的做法）：每一步都让完成的请求离开，等待的请求占用空出的槽位，它们的预填充并入这一步。
batch-slots = 槽位
batch-requests = 请求数
batch-trace-seed = 请求序列种子
batch-simulate = 模拟服务
batch-serve-verdict = 同样的 { $tokens } 个词元（每个请求各自的，与单独运行时相同）：连续批处理需要 { $continuous } 次传播，而静态批处理需要 { $static } 次（少 { $fewer } %），槽位占用率为 { $full } %，对比 { $static_full } %。{ $wall }
batch-serve-not-faster = 在挂钟时间上这里并没有更快：在这个后端上，一次传播的开销与其行数成正比（一个线程计算每一行，而且小模型的权重都在缓存中），所以更少、更满的传播做的是同样的工作。它在挂钟时间上的收益出现在一次传播不论多少行开销都差不多的场合——权重读取占主导的模型，或 GPU。
batch-serve-faster = 更满的传播分摊了每次传播的固定开销和权重读取，所以在挂钟时间上也更快。
batch-serve-columns = 每一列是一步；没有请求的步不算一次传播。
batch-serve-stats = { $passes } 次传播共 { $tokens } 个词元（每次传播 { $per_pass } 个词元），槽位占用 { $occupied } %，{ $rate } 词元/秒；首词元时间 { $ttft } ms，之后每个词元 { $per_token } ms（对各请求取平均）

## 约束

constraint-heading = 约束
constraint-hint = 结构化输出就是采样链中的又一个阶段：一个掩码，只保留能让文本继续符合正则表达式、JSON Schema 或语法的词元（由 llguidance 在 worker 中按每个提示词编译一次）。
constraint-presets = 预设：
constraint-preset-title = 提示词：{ $prompt }
constraint-preset-yes-no = 是或否
constraint-preset-date = 一个日期（正则表达式）
constraint-preset-character = 一个故事角色（JSON Schema）
constraint-preset-list = 一个列表（GBNF 语法）
constraint-kind = 类型
constraint-kind-none = 无（关闭）
constraint-kind-regex = 正则表达式
constraint-kind-json-schema = JSON Schema
constraint-kind-grammar = GBNF 语法（llama.cpp）
constraint-kind-lark = Lark 语法（llguidance）
constraint-apply = 应用
constraint-source = 约束的源文本
constraint-help = 按 Ctrl+Enter 应用。GBNF 按 llama.cpp 的写法：root ::= "yes" | "no"。
constraint-z = 允许词元上 p 的总和
constraint-allowed = 允许的词元
constraint-allowed-of = { $vocab } 个中的 { $allowed } 个
constraint-mask-time = 掩码用时
constraint-position = 位置
constraint-forbidden = ✕ 约束
constraint-pq-caption = 模型最可能的词元：p 为进入该阶段时的概率，q 为掩码之后的概率（条形按平方根比例）
constraint-col-token = 词元
constraint-caption-none = 约束在这里不允许任何词元：生成就此停止，而不是从空集合中采样。
constraint-caption-all = Z_t = { $z }：模型已经把全部概率放在约束允许的文本上；掩码在这里不改变任何东西（在 { $allowed } 个允许的词元上 q = p）。
constraint-caption-agrees = Z_t = { $z }：模型与约束一致；它的概率中有 { $removed }% 落在被禁止的词元上，q = p / Z_t 把每个允许的词元放大 { $factor }×。
constraint-caption-removes = Z_t = { $z }：约束移除了模型 { $removed }% 的概率；q = p / Z_t 把 { $allowed } 个允许的词元各放大 { $factor }×，于是文本走向模型认为不太可能的方向。
constraint-caption-fights = Z_t = { $z }：约束在与模型对抗。它的概率中有 { $removed }% 落在约束禁止的词元上，q = p / Z_t 把它认为几乎不可能的内容放大 { $factor }×：文本保持有效，却走向模型本不会去的地方（{ $vocab } 个词元中允许 { $allowed } 个）。一个为格式做好铺垫的提示词能提高 Z_t。
