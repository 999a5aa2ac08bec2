# 页面文字（简体中文）。数字已按语言格式化（i18n::number）；专有名称保持原样。

## 页眉

app-title = Decoding Explorer 解码探索器
starting-engine = 正在启动引擎…
loading-model = 正在加载模型…
load-figures = { $loaded } / { $total }
backend-label = 后端
backend-auto = 自动
backend-gpu = WebGPU
backend-gpu-unavailable = WebGPU（不可用：正在 CPU 上运行）
backend-cpu = CPU
weights-label = 权重
weights-title = 权重矩阵的存储方式：量化改变 θ 的表示，不改变其学到的值（归一化参数仍为 f32）
weights-f32 = f32：每个权重 32 位
weights-f16 = f16：每个权重 16 位（IEEE 半精度）
weights-q8 = q8：int8 加每组一个 float32 缩放因子
weights-q4 = q4：4 位加每 32 个一个 float32 缩放因子
weights-ggml = ggml：文件自身的块
threads-label = 线程
threads-auto = 自动（实测）
threads-badge = CPU 线程：{ $n } · { $why }
threads-timed = { $n } 个用时 { $ms } 毫秒
threads-short-measured = 实测
threads-why-measured = 启动时用引擎自己的矩阵乘法计时，取与最快者相差 10 % 以内的最少线程数：{ $timed }
threads-short-chosen = 你的选择
threads-why-chosen = 你选择的线程数；“自动”会重新计时
threads-short-not-isolated = 页面未跨源隔离
threads-why-not-isolated = 单线程：页面没有以 COOP/COEP 头提供，未跨源隔离，浏览器不给它共享内存（README：“Threads in the page”）
threads-short-no-shared-memory = 无共享内存
threads-why-no-shared-memory = 单线程：此浏览器没有共享的 WebAssembly 内存
threads-short-one-core = 一个处理器
threads-why-one-core = 单线程：浏览器报告只有一个处理器
threads-short-failed = 线程启动失败
threads-why-failed = 单线程：其他线程无法启动（{ $message }）
model-summary = { $name }：{ $params } 个参数，{ $layers } 层，维度 { $dim }，{ $heads } 个查询头 / { $kv } 个 K/V 头，词表 { $vocab }，上下文 { $context }
model-trained-context = （文件训练时为 { $trained }，与 llama.cpp 按其 n_ctx 运行一致）
model-source = { $architecture }，来自 { $format }，RoPE 基数 { $rope }，RMSNorm ε { $eps }
model-tensors = 文件中的张量：{ $types }
model-weights = 权重 { $precision }：{ $bytes } 字节（{ $human }）
card-next = ；{ $next }
load-model = 加载模型…
lesson-track = 课程导览
class-round = 课堂一轮
class-round-title = 先预测，再揭晓：下一个词元先隐藏，直到全班的猜测与模型的分布对照
presenter-mode = 演示模式
dark-theme = 深色主题
dark-theme-title = 深色或浅色（链接中未指定时，跟随系统）
language-label = 语言
shortcuts = 键盘快捷键
engine-stopped = 引擎已停止（{ $why }）。你的设置都没有丢失：地址栏保存了提示词、各项参数和词元。
reload = 重新加载
dismiss = 关闭
link-problems = 链接中有本页无法使用的值，已显示其默认值：{ $problems }
footer = stories260K：Andrej Karpathy 的 tinyllamas（MIT），在 TinyStories 上训练（Eldan 与 Li，2023；CDLA-Sharing-1.0）。第 10 课 —— 深入推理。按 ? 查看键盘快捷键。

## 加载模型

picker-model-file = 模型（GGUF、llama2.c .bin 或 model.safetensors）
picker-tokenizer-file = 分词器（tokenizer.json 或 llama2.c 的 tokenizer.bin，二者皆可）
picker-config-file = 配置（safetensors 需要 config.json）
picker-load = 加载
picker-or-drop = 或把文件拖放到页面上
choose-file-first = 请先选择一个模型文件
by-link-list = 列表中的模型
by-link-download = 下载并加载
by-link-url = 或输入网址（GGUF、llama2.c，或 Hugging Face 仓库：owner/name）
by-link-load = 加载
# 列表中的模型（`remote::catalogue`），每个键一个标签。
listed-stories260K = stories260K（本页自带的模型，从 Hub 下载）
listed-stories15M = stories15M（TinyStories，1500 万参数）
listed-stories110M = stories110M（TinyStories，1.1 亿参数）
listed-SmolLM2-135M-Instruct = SmolLM2-135M-Instruct（对话模型，1.35 亿参数；GGUF，Q4_K_M）
listed-Qwen2_5-0_5B-Instruct = Qwen2.5-0.5B-Instruct（对话模型，5 亿参数；GGUF，Q8_0）
in-this-folder = 此文件夹中：
folder-unreadable = 无法读取此文件夹的模型：{ $why }
fetching = 正在获取…
fetching-file = 正在获取 { $file }
cancel = 取消
kept-none = 此浏览器中尚未保存任何模型。
kept-some = 已保存在此浏览器中（无需网络即可加载）：
kept-space = 此页面的浏览器存储：已用 { $used }，配额 { $quota }。
kept-partial = （下载中途停止：加载它会继续下载）
kept-load = 加载
kept-delete = 删除

## 课程导览

lesson-heading = 第 10 课，§{ $section } —— { $title }
lesson-position = 第 { $n } 步，共 { $total } 步
lesson-previous = ← 上一步
lesson-next = 下一步 →
lesson-check = 课堂检测
lesson-check-title = 全班猜下一个词元的一轮，猜测本身就能说明这一步
lesson-check-question = 课堂检测：{ $question }
lesson-close = 关闭课程导览
step-loop = 生成循环
step-greedy-vs-beam = 贪心解码不是序列最优
step-beam-bland = 束搜索在开放文本上趋于平淡
step-tail = 采样的长尾
step-temperature = 温度作用于玩具 logits [2, 1, 0.1]
step-topk-topp = Top-k 固定，Top-p 自适应
step-penalty = 惩罚抑制循环
step-kv-cache = KV 缓存：每步 O(n·d) 而非 O(n²·d)
step-prefill-decode = 预填充与解码
step-kv-memory = KV 内存：2 × n × N_layers × d × 字节数，以及 GQA/MQA
step-speculative = 推测解码
step-quantization = 量化
step-batching = 批处理
step-same-theta = 同一 θ，不同配置
step-taxonomy = 完整的推理分类
