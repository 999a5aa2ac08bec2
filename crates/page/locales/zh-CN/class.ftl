# 课堂区域：课堂一轮面板、课堂房间、分类表格与标记（格式约定见 page.ftl）。

## 课堂一轮面板

class-heading = 课堂一轮：猜下一个词元
class-no-score = 还没有计分的一轮：全班先猜，“揭晓”显示模型的分布，“抽取”取出模型的词元。
class-score = 得分：全班票数最多的猜测在 { $rounds } 轮中猜中 { $class } 轮，模型的 top-1 在 { $rounds } 轮中猜中 { $model } 轮；全班在 { $rounds } 轮中有 { $beat } 轮胜过模型的 top-1。
class-last = 上一轮：模型抽到了 { $drawn }；全班票数最多的猜测是 { $top }。
class-last-p = 上一轮：模型抽到了 { $drawn }（p { $p }）；全班票数最多的猜测是 { $top }。
class-tally-label = 全班对下一个词元的猜测（计票格式：cat ×5, dog ×3）
class-reveal = 揭晓
class-draw = 抽取模型的词元
class-chart-caption = 全班的猜测与模型分布（T = 1）在同一组词元上的对照：每个被猜到的词元，以及模型最可能的五个词元（条形按平方根刻度）；q 是在当前旋钮设置下下一步实际抽样所依据的分布，✕ 表示该词元被某个阶段移除
class-col-token = 词元
class-col-class = 全班 c
class-col-model = 模型 p
class-col-rank = 排名
class-col-q = 当前旋钮设置下的 q
class-share = { $percent }%（{ $count }）
class-dropped = 没有对应词元：{ $guesses }（不计入）。
class-guesses = 猜测数
class-cross-entropy = 交叉熵 H(c, p)
class-model-entropy = 模型的熵 H(p)
class-nats = { $value } 奈特
class-reading = 用模型编码全班的猜测，每个词元要花 { $ce } 奈特，而编码它自己的样本只需 { $hp }；其中 { $kl } 是 KL，即全班没有按模型的比例去猜所付出的代价（全班自身的分散程度 H(c) 为 { $hc }）。

## 一轮无法绘制的原因

class-err-bad-guess = “{ $guess }”：一个猜测最多 { $max } 个字符，且不能含控制字符
class-err-bad-count = “{ $count }”：计数须是 1 到 { $max } 之间的整数
class-err-too-many = { $total } 个猜测：一轮最多接受 { $max } 个
class-err-text-moved = 读取猜测之前文本已经前进：请重新揭晓
class-err-not-finite = 模型的 logits 不是有限值
class-err-no-token = 没有任何猜测对应一个词元：无可揭晓
class-err-outside-vocab = 某个猜测的词元超出了模型的词表

## 课堂房间

room-qr-label = { $address } 的二维码
room-students-open = 学生打开
room-type-code = 或输入代码
room-count-one = 第 { $round } 轮：{ $students } 名学生在场，{ $guessed } 人已猜
room-count-other = 第 { $round } 轮：{ $students } 名学生在场，{ $guessed } 人已猜
room-err-vocab = 课堂服务器用 { $vocab } 个词元的词表读取猜测，而本页的模型有 { $mine } 个：请用本页的模型启动服务器。
room-err-create = 无法创建房间：{ $why }
room-err-other-tab = 此房间已在另一个标签页中打开：在那里进行演示。
room-err-closed = 房间已关闭：{ $reason }
room-err-moved = 计票结果到达之前文本已经前进：这一轮重新开放。
room-err-no-guess = 还没有收到任何猜测：这一轮重新开放。
room-err-no-token = 没有任何猜测对应本模型的词元（{ $guesses }）：这一轮重新开放。
room-err-code = { $code } 不是房间代码（由 { $alphabet } 中的 { $length } 个字符组成）

## 分类：课程的表格与标记图例

taxonomy-caption = 第 10 课第 6 节，以及本页在每一行中展示的内容
taxonomy-col-at-inference = 推理时
taxonomy-col-category = 类别
taxonomy-col-on-page = 本页中
taxonomy-addition = —— 本页新增
taxonomy-separator = 、
taxonomy-meaning-learned = 由训练学得，推理时冻结：θ 从不改变
taxonomy-meaning-config = 由运行模型的人选定：决定 θ 如何运行
taxonomy-meaning-state = 运行时产生，用完即弃：临时的
taxonomy-row-parameters = 参数 θ
taxonomy-row-shaping = 温度、top-k、top-p、惩罚
taxonomy-row-strategy = 策略（贪心/束搜索/采样）、束宽 k
taxonomy-row-limits = 最大词元数、停止序列
taxonomy-row-state = Logits、概率、KV 缓存
taxonomy-row-serving = 精度、草稿模型与 γ、批大小、后端（第 5 节）
taxonomy-cell-parameters = [LEARNED]，冻结——从不改变
taxonomy-cell-shaping = [CONFIG]（塑造采样）
taxonomy-cell-strategy = [CONFIG]
taxonomy-cell-limits = [CONFIG]
taxonomy-cell-state = [STATE]
taxonomy-cell-serving = [CONFIG]

## 本页在每一行中的内容：各项参数

taxonomy-knob-top-k = Top-k
taxonomy-knob-top-p = Top-p（核采样）
taxonomy-knob-min-p = Min-p
taxonomy-knob-typical-p = Typical-p
taxonomy-knob-repetition-penalty = 重复惩罚
taxonomy-knob-frequency-penalty = 频率惩罚
taxonomy-knob-presence-penalty = 存在惩罚
taxonomy-knob-penalty-window = 惩罚窗口
taxonomy-knob-no-repeat-ngram = 禁止重复的 n-gram
taxonomy-knob-logit-bias = Logit 偏置
taxonomy-knob-temperature = 温度 T
taxonomy-knob-dynatemp-range = 动态温度范围
taxonomy-knob-dynatemp-exponent = 动态温度指数
taxonomy-knob-dry-multiplier = DRY 乘数
taxonomy-knob-dry-base = DRY 底数
taxonomy-knob-dry-allowed-length = DRY 允许长度
taxonomy-knob-dry-penalty-last-n = DRY 窗口
taxonomy-knob-dry-sequence-breaker = DRY 序列断点
taxonomy-knob-top-n-sigma = Top-nσ
taxonomy-knob-xtc-probability = XTC 概率
taxonomy-knob-xtc-threshold = XTC 阈值
taxonomy-knob-epsilon-cutoff = ε 采样
taxonomy-knob-eta-cutoff = η 采样
taxonomy-knob-top-h = Top-H
taxonomy-knob-mirostat = Mirostat
taxonomy-knob-mirostat-tau = Mirostat τ
taxonomy-knob-mirostat-eta = Mirostat η
taxonomy-knob-mirostat-m = Mirostat m
taxonomy-knob-adaptive-p-target = Adaptive-p 目标值
taxonomy-knob-adaptive-p-decay = Adaptive-p 衰减
taxonomy-knob-constraint = 约束
taxonomy-knob-max-tokens = 最大词元数
taxonomy-knob-stop = 停止序列
taxonomy-knob-seed = 随机种子
taxonomy-knob-profile = 规则配置
taxonomy-knob-order = 链的顺序
taxonomy-knob-strategy = 策略
taxonomy-knob-beams = 束宽 k
taxonomy-knob-length-penalty = 长度惩罚
taxonomy-knob-early-stopping = 提前停止
taxonomy-knob-num-return = 返回的序列数

## 本页在每一行中的内容：其他数值、控件与面板

taxonomy-item-model-summary = 模型卡片：参数、形状
taxonomy-item-model-file = 检查点文件（θ）
taxonomy-item-model-link = 通过链接获取的模型：列表、网址或模型库仓库（θ）
taxonomy-item-tokenizer-file = 分词器（固定的 BPE）
taxonomy-item-config-file = config.json：训练 θ 时的架构（形状、RoPE 基数、ε）
taxonomy-item-quant-weights = 量化前后的一行权重
taxonomy-item-calc-model = 模型的形状（计算器）
taxonomy-item-backend-select = 后端
taxonomy-item-precision-select = 权重精度
taxonomy-item-threads-select = 引擎的线程
taxonomy-item-spec-draft = 草稿模型
taxonomy-item-spec-gamma = γ（草拟的词元数）
taxonomy-item-spec-rule = 接受规则
taxonomy-item-batch-size = 批大小 B
taxonomy-item-calc-batch = 批大小（计算器）
taxonomy-item-calc-bytes = 每个元素的字节数（计算器）
taxonomy-item-serve-slots = 服务槽位
taxonomy-item-serve-requests = 轨迹中的请求
taxonomy-item-serve-seed = 轨迹的随机种子
taxonomy-item-cmp-columns = 所对比的配置
taxonomy-item-batch-tokens = 每条通道的词元数
taxonomy-item-prompt = 提示词（目前为止的上下文）
taxonomy-item-transcript = 生成记录
taxonomy-item-dist-chart = 下一个词元的分布
taxonomy-item-timings = 耗时
taxonomy-item-memory = 内存
taxonomy-item-chain-charts = 每个阶段的分布
taxonomy-item-stage-states = 各阶段在各步中的状态
taxonomy-item-constraint-mask = 约束的掩码：Z_t、允许的词元、耗时
taxonomy-item-beam-tree = 束搜索树
taxonomy-item-kv-grid = KV 缓存
taxonomy-item-att-grid = 新词元对缓存的注意力
taxonomy-item-lens-grid = 逐层的 logit lens
taxonomy-item-calc-positions = 已缓存的位置数 n（计算器）
taxonomy-item-cache-compare = 缓存对比的耗时
taxonomy-item-toy-logits = 玩具 logits
taxonomy-item-toy-history = 玩具历史
taxonomy-item-quant-table = 四种精度下的分布
taxonomy-item-spec-run = 推测解码的运行
taxonomy-item-batch-results = 通道、吞吐量、时间线
taxonomy-item-cmp-view = 所对比各列的文本与分布
taxonomy-item-lesson-caption = 课程步骤的实时数值
