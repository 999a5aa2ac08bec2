# zh-CN：生成记录区域（约定见 ../en/page.ftl）：提示词、控制按钮、生成记录、分布、旋钮、采样链、快捷键帮助、面板外壳。

## 各面板的标题（Panel::title）及其展开/收起按钮

panel-title-prompt = 提示词
panel-title-dist = 下一个词元的分布
panel-title-lesson-knobs = 解码旋钮
panel-title-knobs = 更多旋钮
panel-title-chain = 采样链
panel-title-beam = 束搜索
panel-title-kv = KV 缓存
panel-title-inside = 一步之内
panel-title-toy = 玩具 logits
panel-title-quant = 量化
panel-title-spec = 推测解码
panel-title-batch = 批处理与两种瓶颈区间
panel-title-compare = 同一 θ，不同配置
panel-title-taxonomy = 完整的推理分类
panel-title-lesson = 课程导览
panel-show = 展开
panel-hide = 收起

## 页面的区域

layout-no-worker = 无法启动引擎的 worker：{ $error }
layout-skip = 跳到控件
layout-generation = 生成
layout-knobs = 解码旋钮
layout-more-views = 更多视图
events-unreadable = 无法读取来自引擎的消息：{ $error }
events-no-distribution = 还没有可用来揭晓的分布

## 提示词、控制按钮与生成记录

transcript-prompt = 提示词
transcript-run-prompt = 运行提示词
transcript-loop-warning = 重复循环：一个 { $period } 个词元的短语 { $phrase } 在最近 { $window } 个词元中连续重复了 { $repeats } 次。贪心解码容易陷入循环；试试采样、重复惩罚或禁止重复 n-gram。
transcript-chat-title = 把提示词作为一条用户消息，套用模型文件自带的聊天模板，并开启助手的回合：这正是指令模型训练时看到的样子
transcript-chat = 聊天
transcript-controls = 生成控制
transcript-step-title = 前进一个词元（n）
transcript-step = 单步
transcript-run-title = 运行 / 暂停（p）
transcript-run = 运行
transcript-pause = 暂停
transcript-rewind-title = 回退一个词元（b）
transcript-rewind = 回退
transcript-reset-title = 重置到提示词（x）
transcript-reset = 重置
transcript-beam-mirror = 束搜索：这些词元块是目前最好的束（整棵树在束搜索面板中）。“单步”让每个束增长一个词元；“回退”让树退回一层。
transcript-token-id = 词元 { $id }
transcript-prompt-reads-chat = 模型读到的提示词，共 { $n } 个词元，经过聊天模板：
transcript-prompt-reads-bos = 模型读到的提示词，共 { $n } 个词元（BOS 在最前）：
transcript-prompt-reads-no-bos = 模型读到的提示词，共 { $n } 个词元（此词表不添加 BOS）：
transcript-generated = 生成的词元
transcript-chip-label = { $shown }：第 { $n } 个词元 { $piece }，模型概率 { $p }{ $drawn }，排名 { $rank }
transcript-chip-drawn = ，按概率 { $p } 抽取
transcript-chip-p-title = 模型的 p（→ 抽取时的 p）与排名
transcript-drawn-from = 第 { $n } 个词元抽取自：
transcript-kept-strip = 每一步保留的词元数（每个词元从中抽取的集合）：当前 { $last }；最近 { $steps } 步中介于 { $min } 与 { $max } 之间。
transcript-prefill = 预填充 { $tokens } 个词元，用时 { $ms } ms
transcript-decode = 解码 { $total } ms/词元 = 前向传播 { $forward } ms + 采样链 { $chain } ms（最近 { $steps } 步的平均值，{ $rate } 词元/秒）
transcript-decode-under-clock = 解码每个词元用时低于浏览器时钟的 0.1 ms 精度（最近 { $steps } 步）
transcript-last-run = 上次运行：{ $n } 个词元，用时 { $ms } ms = { $rate } 词元/秒
transcript-memory-engine = 内存（wasm，峰值）：引擎
transcript-memory-page = ，页面
transcript-memory-in-use = ；使用中：引擎 { $engine }，页面 { $page }
transcript-stop-eos = 已停止：模型结束了故事（词元 { $token }）。
transcript-stop-max = 已停止：达到最大词元数（{ $max }）。
transcript-stop-sequence = 已停止：出现了停止序列 { $stop }。
transcript-stop-context = 已停止：上下文已满（{ $n } 个词元）。
transcript-stop-constraint-complete = 已停止：约束已完成（文本已是该语言的一个实例；后面不能再接任何内容）。
transcript-stop-constraint-unsatisfiable = 已停止：约束在此处不允许任何词元，连结束也不允许。
transcript-file-too-big = { $file }：{ $bytes } 字节，生成记录文件最多 { $max } 字节
transcript-unreadable = 无法读取该文件
transcript-other-model = 此生成记录由 { $model }（{ $params } 个参数）生成；页面当前加载的是 { $loaded }：请先加载那个模型
transcript-export = 导出生成记录（JSON）
transcript-load = 加载生成记录

## 下一个词元的分布与玩具 logits

dist-coin = 硬币 { $coin }
dist-summary = { $total } 个词元中保留了 { $kept } 个。最可能的：{ $top }。此种子选中的：{ $chosen }（排名 { $rank }）。
dist-entropy = 熵 H = { $h } nats；exp(H) = { $effective } 个有效词元；{ $total } 个词元中保留了 { $kept } 个
dist-cut = top-p（p = { $p }）保留 { $kept } 个，移除了质量为 { $mass } 的尾部
dist-chart-note = { $total } 个词元中最可能的 { $n } 个，已排序；灰色：被某个阶段移除（显示移除前的概率）。
dist-cut-note = 曲线：top-p 从最可能的词元起对所见概率的累加和（底部为 0，顶部为 1）；虚线：p。交点之后的词元被移除。
dist-show-top = 只显示前 { $n } 个
dist-show-all = 显示全部词元
dist-rows = 按概率排列的词元
dist-removed-by = 被 { $stage } 移除
dist-cum-title = top-p 对所见概率的累加和，累加到此词元为止
dist-coin-cdf = 累积分布上的硬币 { $coin }：采样器按 id 顺序遍历词元并累加其概率，累加和首次超过硬币值的词元被抽中：{ $token }（id { $id }）。
dist-scale = 刻度
dist-probability = 概率
dist-log-probability = 对数概率
dist-toy-hint = 输入 logits z（课程的例子是 2, 1, 0.1）；上面的每个旋钮都像作用于模型的 logits 一样作用于它们。历史列出已经“生成”的行（0 即 z₁），供惩罚项和禁止重复 n-gram 使用。
dist-toy-logits = Logits z =
dist-toy-history = 历史（行）
dist-toy-history-example = 例如 0, 0
dist-toy-caption = 课程中三个温度下的 softmax(z / T)（不加其他旋钮）
dist-toy-note = 在 T = 0.5 时，课程正文给出最高词元的概率 ≈ 0.84；softmax 得出 0.864（e⁴ / (e⁴ + e² + e^0.2)）：这是课程中的一处错误。T = 1 时的 0.659 和 T = 2 时的 0.502 与正文一致。

## 旋钮：每个旋钮的名称与说明（KNOBS，按名称）、配置方案与策略

knob-default-title = 你未设置的旋钮所取的配置方案自身默认值；设置它即可更改
knob-default-of = { $profile } 的默认值
knob-value = { $knob } 的值
knob-strategy-sample = 采样
knob-strategy-greedy = 贪心
knob-strategy-beam = 束搜索
knob-profile-lesson = 只用你设置的
knob-profile-llama-cpp = 默认采样链
knob-label-top-k = Top-k
knob-help-top-k = 保留最可能的 k 个词元；0 = 关闭
knob-label-top-p = Top-p（核采样）
knob-help-top-p = 保留质量 ≥ p 的最小集合，取值 (0, 1]；1 = 关闭
knob-label-min-p = Min-p
knob-help-min-p = 丢弃概率低于 p × 最高概率的词元，取值 [0, 1]
knob-label-typical-p = Typical-p
knob-help-typical-p = 局部典型性质量，取值 (0, 1]；1 = 关闭
knob-label-repetition-penalty = 重复惩罚
knob-help-repetition-penalty = CTRL，> 0：已出现词元的正 logit 除以它，负 logit 乘以它；1 = 关闭
knob-label-frequency-penalty = 频率惩罚
knob-help-frequency-penalty = 从已出现词元的 logit 中减去 次数 × α
knob-label-presence-penalty = 存在惩罚
knob-help-presence-penalty = 从已出现词元的 logit 中减去 α
knob-label-penalty-window = 惩罚窗口
knob-help-penalty-window = 惩罚项考虑的最近词元数；0 = 全部
knob-label-no-repeat-ngram = 禁止重复 n-gram
knob-help-no-repeat-ngram = 禁止会重复某个 n-gram 的词元；0 = 关闭
knob-label-logit-bias = Logit 偏置
knob-help-logit-bias = ID:VALUE，加到该词元的 logit 上，用逗号分隔或重复给出（2:-100 禁用 EOS）
knob-label-temperature = 温度 T
knob-help-temperature = softmax(z / T)，≥ 0；0 = 贪心，1 = 模型自身的分布
knob-label-dynatemp-range = 动态温度范围
knob-help-dynatemp-range = llama.cpp 的：T 随熵在 [T − range, T + range] 内变化；0 = 关闭
knob-label-dynatemp-exponent = 动态温度指数
knob-help-dynatemp-exponent = llama.cpp 的：T = min + (max − min) × (H / ln n)^exponent
knob-label-dry-multiplier = DRY 乘数
knob-help-dry-multiplier = 惩罚会延长重复的词元：multiplier × base^(length − allowed)，≥ 0；0 = 关闭（llama.cpp 的）
knob-label-dry-base = DRY 底数
knob-help-dry-base = 惩罚随重复长度增长的速度，≥ 1（llama.cpp 为 1.75）
knob-label-dry-allowed-length = DRY 允许长度
knob-help-dry-allowed-length = 不超过此长度的重复不受惩罚（llama.cpp 为 2）
knob-label-dry-penalty-last-n = DRY 窗口
knob-help-dry-penalty-last-n = DRY 扫描的最近词元数；0 = 关闭（llama.cpp 为 64）
knob-label-dry-sequence-breaker = DRY 序列断点
knob-help-dry-sequence-breaker = 结束一次重复的文本，每个 ≤ 40 字节，\n 表示换行；可重复给出；none = 没有断点
knob-label-top-n-sigma = Top-nσ
knob-help-top-n-sigma = 保留与最大 logit 相差不超过 n 个标准差的 logit；≤ 0 = 关闭（llama.cpp 为 -1）
knob-label-xtc-probability = XTC 概率
knob-help-xtc-probability = 每一步 XTC 移除最优选项的概率；0 = 关闭（llama.cpp 的）
knob-label-xtc-threshold = XTC 阈值
knob-help-xtc-threshold = 概率不低于此值的词元即为最优选项，取值 [0, 1]；高于 0.5 时 XTC 不起作用
knob-label-epsilon-cutoff = ε 采样
knob-help-epsilon-cutoff = HF 的：丢弃概率低于 ε 的词元，取值 [0, 1)；0 = 关闭
knob-label-eta-cutoff = η 采样
knob-help-eta-cutoff = HF 的：丢弃低于 min(ε, √ε·e^−H) 的词元，取值 [0, 1)；0 = 关闭
knob-label-top-h = Top-H
knob-help-top-h = HF 的：熵项之和 ≤ h × H 的最前几个词元（在前 100 个之中），取值 (0, 1]；0 = 关闭
knob-label-mirostat = Mirostat
knob-help-mirostat = 0 = 关闭，1 或 2：mirostat 的版本，取代采样链（llama.cpp 的）
knob-label-mirostat-tau = Mirostat τ
knob-help-mirostat-tau = 目标惊奇度（比特），> 0（llama.cpp 默认 5）
knob-label-mirostat-eta = Mirostat η
knob-help-mirostat-eta = μ 的学习率，取值 (0, 1]（llama.cpp 默认 0.1）
knob-label-mirostat-m = Mirostat m
knob-help-mirostat-m = 版本 1：用多少个最前的词元估计 Zipf 指数，≥ 2（llama.cpp 为 100）
knob-label-adaptive-p-target = 自适应 p 目标
knob-help-adaptive-p-target = 选中词元平均应有的概率，取值 [0, 1]；负值 = 关闭（llama.cpp 为 -1）
knob-label-adaptive-p-decay = 自适应 p 衰减
knob-help-adaptive-p-decay = 每一步保留多少平均值，取值 [0, 0.99]（llama.cpp 为 0.9）
knob-label-constraint = 约束
knob-help-constraint = KIND:SOURCE，KIND 为 regex、json_schema、grammar（GBNF）或 lark 之一：只保留使文本仍处于该语言之内的词元（none = 关闭）
knob-label-max-tokens = 最大词元数
knob-help-max-tokens = 生成这么多新词元后停止
knob-label-stop = 停止序列
knob-help-stop = 生成的文本包含它时停止；每行一个，或重复给出
knob-label-seed = 种子
knob-help-seed = 硬币的种子：相同的种子，相同的词元
knob-label-profile = 配置方案
knob-help-profile = lesson、hf、llama.cpp 或 openai：遵循谁的阶段顺序、边界规则和默认值
knob-label-order = 采样链顺序
knob-help-order = 按顺序排列的采样链阶段，用逗号分隔
knob-label-strategy = 策略
knob-help-strategy = sample、greedy 或 beam
knob-label-beams = 束宽 k
knob-help-beams = 每一步保留的假设数，1..=16
knob-label-length-penalty = 长度惩罚
knob-help-length-penalty = Hugging Face 的：score = sum_logprobs / length^length_penalty
knob-label-early-stopping = 提前停止
knob-help-early-stopping = 一旦有 k 个假设完成就停止（true），或在没有束能胜过它们时停止
knob-label-num-return = 返回序列数
knob-help-num-return = 返回多少个已完成的序列（≤ 束宽）

## 采样链

chain-mini = { $stage }：保留 { $kept } 个词元，移除 { $removed } 个；灰色条为该阶段之前，蓝色为之后（平方根刻度）
chain-hint = 各阶段自上而下运行。拖动一个阶段，或使用 ↑ ↓，即可重新排序；配置方案决定默认顺序和边界规则。每个阶段的图表：
chain-replaced-by = 被 { $stage } 取代
chain-off = 关闭
chain-default-of = { $setting }（{ $profile } 的默认值）
chain-kept = 保留 { $kept }
chain-kept-removed = 保留 { $kept }，−{ $removed }
chain-move-earlier = 将 { $stage } 前移
chain-move-later = 将 { $stage } 后移
chain-states-title = 各阶段在各步中的状态
chain-states-heading = 各步中的状态

## 键盘快捷键帮助（SHORTCUT_HELP，按键名）

help-close = 关闭
shortcut-or = 或
shortcut-step = 前进一个词元（束搜索中为束的一层）
shortcut-run = 运行 / 暂停
shortcut-rewind = 回退一个词元
shortcut-reset = 重置到提示词
shortcut-temperature = 聚焦温度滑块（然后用 ← → 移动它）
shortcut-top-k = 聚焦 top-k
shortcut-scale = 切换概率 / 对数概率
shortcut-lesson = 课程导览的下一步 / 上一步（会打开导览）
shortcut-tab = 在控件之间移动
shortcut-help = 显示此帮助
shortcut-escape = 关闭此帮助；离开文本框

## 保存图表（export-what-<name>：各处调用的图表）

export-group = 导出{ $what }
export-svg-label = 导出 SVG：{ $what }
export-png-label = 导出 PNG：{ $what }
export-svg = 导出 SVG
export-what-kv = KV 缓存
export-what-chain = 各阶段的图表
export-what-stage-states = 各阶段在各步中的状态
export-what-throughput = 吞吐量与屋顶线模型
export-what-serving = 服务时间线
export-what-spec = 上一轮的 p 与 q
export-what-quant = 四种精度
export-what-beam-tree = 束搜索树
export-what-compare = 对比的各列
export-what-distribution = 下一个词元的分布
export-what-toy = 玩具分布
