# zh-CN: the captions area (see ../en/page.ftl for the conventions).
# 课程导览的说明文字：一句话（或其一个分支）一条消息，句子之间不加空格。数字已按语言格式化，并作为说明中的数值标出，位置由译文决定。

## 数值的单位

caption-unit-rate = { $rate } 词元/秒
caption-unit-bytes = { $bytes } 字节

## §1 生成循环

caption-loop = 每一步都把上下文（现在共 { $context } 个词元）前向计算到最后一个位置的 logits z。有了 KV 缓存（§4），只有最新的词元需要经过各层；其余 { $cached } 个从缓存中读取。接着 p̂ = softmax(z/T)，选出一个词元并追加到末尾。上一步抽到了 { $piece }，p̂ = { $last_prob }；下一步从 { $kept } 个词元中抽取，最可能的是 { $top }，概率为 { $next_top }。没有损失，没有梯度：θ 只被读取。

## §2 解码策略

caption-greedy-vs-beam-better = 贪心解码每一步取 argmax，它的序列 Σ log p = { $greedy_logprob }；束搜索（k = { $width }）保留最好的几个前缀，在同样的 { $depth } 个词元上找到了 Σ log p = { $beam_logprob }：一个被贪心早先的选择排除掉、概率更高的序列。局部贪心 ≠ 全局最优。
caption-greedy-vs-beam-same = 贪心解码每一步取 argmax，它的序列 Σ log p = { $greedy_logprob }；束搜索（k = { $width }）保留最好的几个前缀，在同样的 { $depth } 个词元上找到的是 Σ log p = { $beam_logprob }：这里束搜索没有找到比贪心自己的路径概率更高的序列。在这个提示词上，局部贪心恰好就是全局最优；但不一定总是如此。
caption-beam-bland-beam = 束搜索（k = { $width }）写出了 { $tokens } 个词元，平均每个词元的 −log p̂ 为 { $beam_surprisal } 奈特。
caption-beam-bland-beam-loop = 束搜索（k = { $width }）写出了 { $tokens } 个词元，平均每个词元的 −log p̂ 为 { $beam_surprisal } 奈特，其中一个 { $loop_period } 词元的短语重复了 { $loop_repeats } 次。
caption-beam-bland-samples = 同一提示词在 T = 1 下的两次采样（种子 0 和 1）：每个词元分别为 { $sample_surprisal_a } 和 { $sample_surprisal_b } 奈特。
caption-beam-bland-bland = 概率最高的序列也是最可预测、最千篇一律的序列：适合封闭式任务，用于开放式文本则平淡无味。
caption-beam-bland-not = 这里束搜索的文本与采样的文本差不多一样出人意料，所以这个提示词显示不出这种平淡。
caption-tail-fat = 采样按 y ~ p̂ 抽取。这里排在前 10 名之外的 { $tail_tokens } 个词元共占 { $tail_mass } 的概率质量：每一个都不太可能，合在一起却不可忽略——正是这条长尾偶尔会抽出不连贯的词元，也正是 top-k、top-p 和 min-p 要截掉的部分。
caption-tail-thin = 采样按 y ~ p̂ 抽取。这里排在前 10 名之外的 { $tail_tokens } 个词元共占 { $tail_mass } 的概率质量：模型在这个位置很有把握，所以长尾在这里几乎无关紧要；在分布平坦的地方它才要紧。

## §3 温度、top-k、top-p 与惩罚

caption-temperature = p̂(T) = softmax(z/T)，z = [2, 1, 0.1]：最可能词元的概率质量在 T = 1 时为 { $t1 }，在 T = 0.5 时为 { $t05 }（更尖锐），在 T = 2 时为 { $t2 }（更平坦）。权重不变，只是读法重新加权。
caption-temperature-erratum = （课文说 T = 0.5 时约为 0.84：这是课文中的一处错误。）
# 先是 top-k 的分句，再是 top-p 的分句（以自己的"；"开头）。
caption-topk-fixed = 在 { $steps } 步中，top-k 40 每一步都恰好保留 { $k_min } 个词元（固定的 k）
caption-topk-range = 在 { $steps } 步中，top-k 40 保留了 { $k_min } 到 { $k_max } 个词元（只有在链中剩下的词元更少时才会更少）
caption-topp-adapts = ；top-p 0.9 保留了 { $p_min } 到 { $p_max } 个：一个词元占主导时集合很窄，分布平坦时集合很宽。
caption-topp-steady = ；top-p 0.9 保留了 { $p_min } 到 { $p_max } 个：在这段文本上模型的把握几乎没有变化，top-p 的集合也就几乎不变。
caption-penalty-loop = 只用贪心：一个 { $loop_period } 词元的短语重复了 { $loop_repeats } 次。
caption-penalty-no-loop = 只用贪心：没有循环（重复次数：{ $loop_repeats }）。
caption-penalty-penalized-loop = 贪心加上 1.3 的重复惩罚（最近出现过的词元的 logits 除以或乘以 1.3）：重复了 { $penalized_repeats } 次。
caption-penalty-penalized-no-loop = 贪心加上 1.3 的重复惩罚（最近出现过的词元的 logits 除以或乘以 1.3）：没有重复的短语（重复次数：{ $penalized_repeats }）。
caption-penalty-curbed = 惩罚抑制住了循环。
caption-penalty-nothing = 在这个提示词上没有需要惩罚来抑制的循环。

## §4 KV 缓存、预填充与解码、KV 内存

caption-kv-cache-clear = 在 n = { $n } 处测量：有缓存时一步耗时 { $cached_ms }（{ $cached_macs } 次乘加），重新运行整个前缀耗时 { $naive_ms }（{ $naive_macs } 次）：是前者的 { $ratio }。过去的键和值永远不变，所以把它们保存下来。
caption-kv-cache-unclear = 在 n = { $n } 处测量：有缓存时一步耗时 { $cached_ms }（{ $cached_macs } 次乘加），重新运行整个前缀耗时 { $naive_ms }（{ $naive_macs } 次）：是前者的 { $ratio }：在这个长度下前缀太短，差别在这台机器上显示不出来，尽管计算量按 n² 对 n 的比例增长。
caption-prefill-decode-measured = 在 15M 结构的随机权重上（{ $weight_bytes } 的 f32 权重，由 worker 专为这次测量生成：像 stories260K 这样 1 MB 的模型会留在 CPU 核心旁的缓存里，解码从不需要等待内存），先是 { $prompt_tokens } 个词元的提示词，再生成 { $gen_tokens } 个词元，每项计时 { $reps } 次（取中位数，以及中间一半运行的范围）：预填充把提示词作为多行一次前向计算，速度为 { $prefill_rate }（{ $prefill_low }–{ $prefill_high }）；解码每个词元对着缓存做一次前向计算，速度为 { $decode_rate }（{ $decode_low }–{ $decode_high }）：前者是后者的 { $ratio }。
caption-prefill-decode-roofline = 按这台机器实测峰值画出的屋顶线（脊点 { $ridge } FLOP/字节）把解码放在 { $decode_intensity } FLOP/字节，把预填充放在 { $prefill_intensity } FLOP/字节，并预测两者之比为 { $predicted }。
caption-prefill-decode-regime = 预填充是计算受限的（每层的权重读一次，就服务提示词的所有行），解码是带宽受限的（每读一次权重只服务一行）。
caption-prefill-decode-within-spread = 在这个负载下两者都落在彼此的波动范围之内：不判定哪种受限。
caption-prefill-decode-same-side = 预填充明显更快，但在这台机器实测的屋顶线上，两个阶段都位于脊点的同一侧：不判定哪种受限。
caption-prefill-decode-short-of-roof = 预填充明显更快，但快得远不如屋顶线预测的那么多：不判定哪种受限。
caption-kv-memory = 字节数 = 2 × n × N_layers × d × 每元素字节数：这个模型在 n = { $n } 时占用 2 × { $n2 } × { $layers } × { $kv_dim } × 4（float32）= { $bytes }。
caption-kv-memory-presets = { $mha_model } 在 n = 4,096、{ $elem_bytes } 下（见下方计算器）需要 { $l2_bytes }；{ $gqa_model } 让每个 K/V 头由 { $group } 个查询头共享：{ $gqa_bytes }，而不是 { $gqa_mha_bytes }；用 MQA（只有一个 K/V 头）时 { $mha_model } 只需 { $mqa_bytes }。

## §5 推测解码、量化、批处理

caption-speculative = q8 草稿模型每轮提出 γ = { $gamma } 个词元；目标模型用一次 γ + 1 行的前向计算验证它们，实测接受率 α = { $alpha }：每次调用目标模型得到 { $tokens_per_call } 个词元，而公式 (1 − α^(γ+1))/(1 − α) 给出 { $formula }。输出分布与目标模型的完全相同。
caption-quantization = 同一个 θ 存储为 { $f32_bytes }（f32）、{ $q8_bytes }（8 位）和 { $q4_bytes }（4 位）；这里 KL(p_f32 ‖ p_q8) = { $kl_q8 }，KL(p_f32 ‖ p_q4) = { $kl_q4 } 奈特。改变的是 θ 的表示，而不是它学到的值。
caption-quantization-shape = 在 15M 结构的随机权重上（f32 下为 { $shape_f32_bytes }：一个会超出缓存的模型），一个解码步在 f32 下耗时 { $shape_f32_ms }，q8 下 { $shape_q8_ms }，q4 下 { $shape_q4_ms }，f16 下 { $shape_f16_ms }。
caption-quantization-ratio = f32 读取的字节数是 q8 的 { $bytes_ratio }，而 q8 的速度是 f32 的 { $speed_ratio }：
caption-quantization-shorter-wait = 在解码步要等待内存的地方，字节越少，等待就越短（在已加载的模型上，权重留在缓存里，q8 并不更快）。
caption-quantization-fast-in-cache = 在权重留在缓存里的已加载模型上，q8 也明显更快，所以字节上的节省与 int8 运算的作用无法区分：不断言有节省。
caption-quantization-not-apart = 在这个负载下各步的耗时没有明显拉开，所以不断言有节省。
caption-quantization-f16 = f16 把字节数减半，却跑得更慢：页面的 WebAssembly 没有半精度运算，每个权重在读取时都要先扩展为 f32。
# 各批大小的速度是一个列表（各项之间用逗号分隔）。
caption-batching = 每次前向计算解码 B 个序列（每项计时 { $reps } 次；取中位数，以及中间一半运行的范围）：{ $rates }。B = { $b_most } 得到的词元数是 B = 1 的 { $gain }。
caption-batching-rate = B = { $b } 时为 { $rate }（{ $low }–{ $high }）
caption-batching-amortizes = 每次前向计算只读一次权重，供所有行使用：批处理分摊了限制解码速度的权重读取。
caption-batching-little-gain = 这里的增益很小：这个模型的权重留在 CPU 的缓存里，前向计算不需要等待内存，也就没有可分摊的读取。在 H100 上的 Llama-2-7B（见下方屋顶线）中，B = 1 的解码远在脊点之下：在那里批处理才有回报。

## §6 同一 θ、分类

caption-same-theta-wild = 同样的 { $params } 个参数 [LEARNED]，两种配置 [CONFIG]：贪心抽出的词元平均 −log p̂ = { $surprise_a } 奈特（总是最可能的那个：简洁而确定），T = 1.5 加 top-p 0.98 抽出的则为 { $surprise_b }（狂野）。参数就是模型；配置是你运行它的方式。
caption-same-theta-similar = 同样的 { $params } 个参数 [LEARNED]，两种配置 [CONFIG]：贪心抽出的词元平均 −log p̂ = { $surprise_a } 奈特（总是最可能的那个：简洁而确定），T = 1.5 加 top-p 0.98 抽出的则为 { $surprise_b }。这里两种配置写出的文本可预测程度相近；差别要在更长的运行中才显现。
caption-taxonomy = 这个页面上的每个量都属于三类之一：{ $learned } 个 [LEARNED]（θ，冻结）、{ $config } 个 [CONFIG]（人为选择）和 { $state } 个 [STATE]（临时）。训练写入，推理读取。

## 说明在等待什么（"正在等待……"）

lesson-waiting = 正在等待{ $what }…
caption-wait-transcript = 生成记录
caption-wait-distribution = 概率分布
caption-wait-token = 一个生成的词元
caption-wait-beam = 束搜索树
caption-wait-beam-tokens = 束搜索的词元
caption-wait-columns = 对比各列
caption-wait-columns-steps = 对比各列的生成步
caption-wait-column = 一列对比
caption-wait-step = 一个生成步
caption-wait-toy-logits = 玩具 logits
caption-wait-toy = 玩具分布
caption-wait-measurement = 测量结果
caption-wait-a-measurement = 一次测量
caption-wait-length = 一个测量长度
caption-wait-b1 = B = 1 的测量结果
caption-wait-batches = 每个批大小
caption-wait-batch = 一个批大小
caption-wait-peaks = 这台机器的峰值
caption-wait-model = 模型
caption-wait-spec = 推测解码的运行
caption-wait-cycle = 一轮草稿与验证
caption-wait-precisions = 四种精度
caption-wait-shape = 15M 结构的解码步

## 课堂检测的问题（各步的 check）

lesson-question-loop = 贪心（T = 0）每次都写出模型最偏爱的词；采样则从整个分布中抽取。猜猜下一个词：贪心会写出你猜的词吗？采样抽到它的可能性有多大？
lesson-question-temperature = 在 T = 0.5 时，最受偏爱的词占据更多的概率质量；在 T = 1.5 时，长尾占据更多。猜猜下一个词，然后比较你猜的词的 p（T = 1）和它在 T = 0.5 时的 q。
lesson-question-topk-topp = Top-p 0.9 保留概率之和达到 0.9 的最少的词元。猜猜下一个词：它在保留的集合里，还是被截掉了（✕ top_p）？
lesson-question-penalty = 贪心陷入了循环。猜猜下一个词元：每绕一圈，模型对这个循环就更有把握。然后设置重复惩罚（1.3），观察 q 的变化。
