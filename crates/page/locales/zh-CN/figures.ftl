# zh-CN: the figures area (see ../en/page.ftl for the conventions).
# 图中绘制的文字（图表及其导出）：标题、坐标轴、图例、提示。数字已按语言格式化；名称（top-k、min(p, q)、p、q、B、n、θ、FLOP、KV、P1、D1）保持原样。

## 下一词元分布
fig-dist-step-title = 第 { $step } 步的下一词元分布：熵 { $entropy } 奈特，保留 { $kept } 个词元
fig-dist-toy-title = 玩具分布：熵 { $entropy } 奈特
fig-probability = 概率
fig-probability-log = 概率（对数刻度）
fig-token-ranked = 词元（最可能的在前）
fig-final-p = 最终 p
fig-chosen = 选中
fig-p-before-removal = 移除前的 p
fig-top-p-sum = top-p 的累计和
fig-top-p-p = top-p 的 p

## 采样链的各阶段、对比的各列
fig-chain-title = 采样链，逐个阶段
fig-stage-title = { $stage }（{ $setting }）：保留 { $kept } 个
fig-token = 词元
fig-probability-sqrt = 概率（平方根刻度）
fig-before = 之前
fig-after = 之后
fig-neutral = 此处不起作用（没有改变）：{ $stages }
fig-states-title = { $stage } 随步数的变化
fig-step = 步
fig-value = 值
fig-columns-title = 同样的 θ，不同的配置——不同的旋钮：{ $knobs }
fig-none = 无
fig-column-title = 第 { $column } 列（{ $knobs }）
fig-defaults = 默认设置
fig-column-summary = { $tokens } 个词元；下一个：在保留的 { $kept } 个词元上熵为 { $entropy } 奈特

## 束搜索树
fig-beam-title = 束搜索树：{ $nodes } 个节点，共 { $depth } 层（每个节点旁为 Σ log p）
fig-beam-depth = 深度 →（已生成的词元）
fig-beam-collapsed = … 之前的 { $levels } 层（它们的最佳路径就是转录的开头）
fig-beam-greedy-tip = 贪心的第 { $n } 个词元：{ $piece } —— 累计 log p { $cum }（已从束中剪除）
fig-beam-node-tip = { $piece } —— log p { $logp }，累计 { $cum }（{ $status }）
fig-beam-the-prompt = 提示词
fig-beam-prompt = 提示词
fig-status-root = 根
fig-status-beam = 束内
fig-status-pruned = 已剪除
fig-status-finished = 已结束
fig-status-unfinished = 未结束

## KV 缓存
fig-kv-title = KV 缓存
fig-kv-grid-title = KV 缓存：{ $context } 个位置中的 { $n } 个，{ $layers } 层
fig-kv-bytes-title = KV 缓存：2 × n × { $layers } 层 × { $dim } × 4 字节；n = { $n } 时占用 { $bytes } 字节
fig-kv-x = 已缓存的位置数 n
fig-bytes = 字节
fig-this-sequence = 这个序列

## 推测解码、量化
fig-spec-title = 推测解码第 { $cycle } 轮：起草的 { $drafted } 个词元中接受了 { $accepted } 个（α = { $alpha }）
fig-draft-title = 草稿 { $draft }：{ $piece }，Σ min(p, q) = { $overlap }
fig-residual = 残差 { $residual }
fig-p-model = p（模型）
fig-q-draft = q（草稿）
fig-quant-title = 同一个 θ 的四种精度，位置 { $position }

## 批处理：吞吐量、屋顶线、服务时间线
fig-sweep-title = 批处理与两种受限状态
fig-tp-title = 每秒词元数与批大小 B 的关系（{ $backend }）
fig-tp-x = 批大小 B（log₂）
fig-tp-y = 词元 / 秒
fig-prefill = 预填充
fig-decode = 解码
fig-tp-tip = B = { $b }：{ $phase } { $rate } 词元/秒
fig-roof-machine-title = 这台机器的屋顶线：脊点 { $ridge } FLOP/字节
fig-roof-x = 算术强度，每字节 FLOP 数（对数）
fig-roof-y = FLOP / 秒（对数）
fig-roof-tip = { $point }：{ $intensity } FLOP/字节，{ $flops }（达到该处屋顶的 { $share } %）
fig-roof-prefill = B 时的预填充（P…）
fig-roof-decode = B 时的解码（D…）
fig-roof-above = 有一个实测点位于实测屋顶之上：屋顶测低了，所以不画出来。
fig-ridge = 脊点 { $ridge }
fig-serve-title = { $requests } 个请求通过 { $slots } 个槽位的服务过程
fig-timeline-title = { $policy }，{ $slots } 个槽位：{ $passes } 次传播，占用率 { $occupancy } %
fig-policy-continuous = 连续批处理
fig-policy-static = 静态批处理
fig-request = 请求
fig-request-tip = 请求 { $id }：{ $prompt } 个词元的提示词，{ $asked } 个词元中已生成 { $made } 个；第 { $arrival } 步到达，第 { $admitted } 步接纳，第 { $finished } 步完成
fig-waiting = 等待
fig-prefill-joins = 预填充（并入一步）
