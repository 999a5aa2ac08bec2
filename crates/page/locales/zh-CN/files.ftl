# 模型文件的拒绝消息、下载与加载的错误消息，即引擎（`decoding-engine` 的错误）、页面的下载规则（`remote::http`）和 worker 用英文写出的消息：
# `i18n::readback` 按 ../en/files.ftl 中的模板读出这些消息，再用这里同一 id 的消息写成中文。
# `$why` 本身也会被读回；`$list` 逐项读回（项之间以 ", " 分隔）。

## 下载（`remote::http::DownloadError`，worker 的 `download.rs` 和 `store.rs`）
file-dl-not-found = { $url }：未找到（HTTP 404）
file-dl-refused = { $url }：被拒绝（HTTP { $status }）：该文件设有访问限制（须在 Hub 上接受其许可协议，而本页无法代为接受）或是私有文件；请自行下载，再从本地文件加载
file-dl-status = { $url }：HTTP { $status }
file-dl-html = { $url } 是一个 HTML 页面，而不是模型文件（Hub 上指向文件页面的链接含 /blob/；文件本身位于 /resolve/）
file-dl-over-budget = { $name } 有 { $bytes } 字节：超出了本页 { $limit } 字节的内存预算
file-dl-wrong-size = { $name } 有 { $got } 字节，而列表写的是 { $want }：这不是列表所指的文件
file-dl-wrong-hash = { $name } 的 sha256 是 { $got }，而不是列表中的 { $want }：该文件不是列表所指的文件（或已损坏）
file-dl-bad-range = { $url }：服务器返回的范围没有从下载中断处开始（{ $range }）
file-dl-quota = 浏览器存储在 { $quota } 的配额中只剩 { $free } 字节可用：{ $name } 需要 { $need }
file-dl-dropped = { $url }：连接中断了 { $tries } 次（最后一次在第 { $at } 字节处）：{ $why }
file-dl-cancelled = 下载已取消
file-dl-check = { $name }：{ $why }（根据其开头的字节判断：其余部分没有下载）
file-dl-storage = 无法把 { $name } 写入浏览器存储（{ $why }）；请删除已保存的模型以释放空间
file-dl-storage-figures = { $why }；浏览器存储已用 { $usage } 字节，配额为 { $quota }
file-dl-body-ended = 响应正文在第 { $at } 字节处结束
file-dl-unreadable = { $name } 已下载，但无法从浏览器存储中读回
file-store-unavailable = 浏览器存储不可用（{ $why }）
file-store-unopenable = 无法在浏览器存储中打开 { $name }（{ $why }）

## 哪些文件组成一个模型（`formats::source::SourceError`）
file-src-none = 没有提供任何文件
file-src-too-many = 提供了 { $count } 个文件：一个模型由一个文件（GGUF）、两个文件（llama2.c 检查点及其分词器）或三个文件（Hugging Face 的 model.safetensors、config.json 和分词器）组成
file-src-read = 无法读取 { $name }：{ $why }
file-src-checkpoint-alone = { $name } 是 llama2.c 检查点：请同时提供它的分词器（tokenizer.bin 或 tokenizer.json）
file-src-not-gguf = { $name } 不是 GGUF 文件：它不以 GGUF 的魔数字节 "GGUF" 开头（而是以 { $start } 开头）
file-src-gguf-not-alone = { $name } 是 GGUF 文件，自带分词器：请单独提供它
file-src-hf-incomplete = { $name } 是 Hugging Face 检查点：请把它与它的 config.json 和分词器（tokenizer.json 或 llama2.c 的 tokenizer.bin）三者一起提供
file-src-tokenizer-alone = { $name } 是分词器：请同时提供模型的检查点
file-src-not-one-model = 这些文件不构成一个模型（{ $found }）：请单独提供一个 GGUF 文件，或提供 llama2.c 检查点（.bin）及其分词器，或提供 Hugging Face 的 model.safetensors 及其 config.json 和 tokenizer.json

## 模型整体（`model::ModelError`）与 worker 的加载
file-model-checkpoint = 模型：{ $why }
file-model-tokenizer = 分词器：{ $why }
file-model-gguf = GGUF：{ $why }
file-model-hf = Hugging Face 检查点：{ $why }
file-model-chat = 聊天：{ $why }
file-model-empty-prompt = 提示词为空，而此模型的词表不会以 BOS 作为提示词的开头：请给它一些文本作为起点
file-model-prompt-long = 提示词有 { $tokens } 个词元，但模型的上下文只能容纳 { $seq } 个
file-open-failed = 无法打开 { $name }：{ $why }
file-kept = { $why }；当前模型保持不变
file-own-instead = { $why }；已改为加载本页自带的模型
file-weights-failed = 无法打开 { $precision } 权重：{ $why }；仍在运行 { $current }
file-gpu-unavailable = 所请求的 GPU 不可用（{ $why }）；正在 CPU 上运行

## GGUF（`formats::gguf::GgufError`）
file-gguf-magic = 不是 GGUF 文件：它以 { $found } 开头，而不是 "GGUF"
file-gguf-version = 不支持 GGUF 版本 { $version }（支持版本 3；版本 2 按版本 3 读取）
file-gguf-truncated = GGUF 文件在第 { $len } 字节处结束，正处于 { $what } 之中（第 { $at } 字节处）
file-gguf-count = { $what } = { $value } 不可能容纳在 { $len } 字节的文件中
file-gguf-value-type = 元数据 { $key } 的类型为 { $kind }，GGUF 没有定义这种类型
file-gguf-value = 元数据 { $key }：{ $why }
file-gguf-missing = 元数据中缺少 { $key }
file-gguf-tensor = 张量 { $name }：{ $why }
file-gguf-read = 无法读取 GGUF 文件：{ $why }
file-gguf-tensor-type = 张量 { $name } 的类型为 { $kind }，本读取器不加载这种类型（可加载的类型为 F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K 和 Q6_K）
file-gguf-architecture = general.architecture 为 { $arch }；可读取的是 "llama" 和 "qwen2" 模型
file-gguf-too-large = GGUF 文件有 { $bytes } 字节，超出了 { $limit } 字节的内存预算（其权重在内存中至少占这么多）
file-gguf-missing-tensor = 模型的张量中缺少 { $name }

## llama2.c 检查点（`formats::llama2c::CheckpointError`）及其文件头（`config::ConfigError`）
file-ckpt-empty = 检查点为空（0 字节）
file-ckpt-short = 检查点只有 { $len } 字节，比 { $header } 字节的文件头还短
file-ckpt-wrong-size = 文件有 { $actual } 字节，而文件头表明应为 { $expected }
file-ckpt-read = 读取检查点时在第 { $offset } 字节处失败：{ $why }
file-ckpt-magic = 魔数 { $magic } 不是 llama2.c 的 0x616b3432（"ak42"），而该文件也不是旧版文件头格式
file-ckpt-version = 不支持 llama2.c 检查点版本 { $version }（旧版 float32 文件没有版本号；版本 2 为 Q8_0）
file-ckpt-shared = shared_classifier 字节为 { $value }（必须为 0 或 1）
file-ckpt-group = 组大小 { $group } 必须至少为 1
file-ckpt-group-divide = 组大小 { $group } 不能整除张量 { $tensor }（每层 { $len } 个权重）
file-ckpt-non-finite = 张量 { $tensor } 在元素 { $index } 处有一个非有限值（{ $value }）
file-cfg-range = 文件头字段 { $field } = { $value } 超出范围（必须为 { $rule }）
file-cfg-dim-heads = dim { $dim } 不能被 n_heads { $heads } 整除
file-cfg-heads-kv = n_heads { $heads } 不能被 n_kv_heads { $kv } 整除
file-cfg-odd-head = head_size { $size }（dim / n_heads）必须为偶数，才能使用旋转位置编码（RoPE）
file-cfg-float = { $field } 为 { $value }；它必须为 { $rule }
file-budget-over = { $what } 在 seq_len { $seq } 时需要 { $bytes }；上限为 { $limit }
file-budget-overflow = 此文件头的 { $what } 超出了 64 位整数的范围

## Hugging Face 检查点（`formats::hf::HfError`）
file-hf-config-large = config.json 有 { $bytes } 字节；模型的配置至多为 { $limit }
file-hf-config-json = config.json 不是 JSON：{ $why }
file-hf-missing = config.json 中缺少 { $key }
file-hf-value = config.json 的 { $key } 为 { $value }；{ $why }
file-hf-architecture = config.json 描述的是 { $arch }；可读取的是 LlamaForCausalLM 和 Qwen2ForCausalLM（model_type 为 "llama"、"qwen2"）
file-hf-not-safetensors = 不是 safetensors 文件：{ $why }
file-hf-header-large = safetensors 文件头有 { $bytes } 字节，超过了模型张量表所需的 { $limit }
file-hf-safetensors = safetensors：{ $why }
file-hf-missing-tensor = safetensors 文件中缺少张量 { $name }
file-hf-dtype = 张量 { $name } 的 dtype 为 { $dtype }，本读取器不加载这种类型（可加载的类型为 F32, F16 和 BF16）
file-hf-too-large = safetensors 文件有 { $bytes } 字节，超出了 { $limit } 字节的内存预算（其权重在内存中至少占这么多）

## 分词器（`tokenizer::TokenizerError`）与聊天模板（`tokenizer::chat::ChatError`）
file-tok-empty = 分词器文件为空
file-tok-truncated = tokenizer.bin 被截断：片段 { $id } 的 { $what } 超出了文件末尾（文件共 { $len } 字节）
file-tok-piece-length = tokenizer.bin 的片段 { $id } 长度 { $len } 无效
file-tok-piece-long = tokenizer.bin 的片段 { $id } 有 { $len } 字节，超过了文件的 max_token_length { $max }
file-tok-max-length = tokenizer.bin 的 max_token_length { $value } 超出范围（必须在 1..={ $max } 之内）
file-tok-utf8 = tokenizer.bin 的片段 { $id } 不是有效的 UTF-8（字节 { $bytes }）
file-tok-score = tokenizer.bin 的片段 { $id } 的分数 { $score } 不是有限的数
file-tok-duplicate = tokenizer.bin 的片段 { $id } { $piece } 与片段 { $first } 重复
file-tok-vocab = 分词器有 { $tokenizer } 个词元，但模型的词表有 { $model } 个
file-tok-json = 无法读取 tokenizer.json：{ $why }
file-tok-not-tokenizer = 该分词器文件既不是 tokenizer.json（它不以 '{"{"}' 开头），也不是 llama2.c 的 tokenizer.bin（二进制表）；它以 { $start } 开头
file-tok-file-large = 分词器文件有 { $bytes } 字节；上限为 { $limit }（{ $limitbytes } 字节）
file-tok-too-many = tokenizer.json 有 { $count } 个词元；上限为 { $max }
file-tok-token-long = tokenizer.json 的词元 { $id } 有 { $len } 字节，超过了 { $max }
file-tok-special = 分词器没有 { $which } 词元
file-tok-encode = 编码失败：{ $why }
file-tok-pre = tokenizer.ggml.pre 为 { $pre }，是本读取器不认识的预分词器（它能读取 { $known }）
file-tok-merge = tokenizer.ggml.merges 的第 { $rank } 项（{ $merge }）不是词表中的两个词元
file-tok-bpe = 无法构建 BPE 词表：{ $why }
file-tok-unknown-id = 词元 id { $id } 超出了词表（大小 { $vocab }）
file-chat-none = 此模型的文件不带聊天模板（GGUF 的 tokenizer.chat_template）
file-chat-unreadable = 此模型的文件带有聊天模板，但无法读取：{ $why }
file-chat-large = 聊天模板有 { $bytes } 字节；上限为 { $max }
file-chat-render = 无法渲染聊天模板：{ $why }
file-chat-rendered-large = 聊天模板为一条消息渲染出 { $bytes } 字节；上限为 { $max }

## 读回的生成记录文件（`export::transcript`）与玩具 logits（`page::toy`）
file-transcript-large = 生成记录有 { $bytes } 字节：本页至多读取 { $max }
file-transcript-not = 不是生成记录文件：{ $why }
file-transcript-format = { $format } 版本 { $version } 不是本页写出的生成记录（本页写的是 { $ours } 版本 1）
file-transcript-tokens = { $count } 个词元：至多 4096 个
file-toy-row = 第 { $id } 行不是 { $count } 个 logits 之一（0..{ $end }）
file-toy-not-row = { $value } 不是行号
file-toy-not-finite = { $value } 不是有限的数
file-toy-count = 请输入 1 到 { $max } 个 logits（收到 { $count } 个）

## “自动”为何选择某个后端（`backend::choose`）
file-backend-auto = 自动，测量结果：{ $list }；{ $why }（{ $reason }）
file-backend-ms = { $backend } 每个词元 { $ms } 毫秒
file-backend-failed = { $backend } 失败（{ $why }）
file-backend-runs = { $backend } 可以运行它
file-backend-cpu-faster = 对此模型，CPU 更快
file-backend-gpu-faster = 对此模型，GPU 更快
file-backend-cpu-chosen = 已选择 CPU 后端
file-backend-gpu-on = WebGPU，适配器：{ $adapter }
file-backend-lost = GPU 设备已丢失：{ $why }
file-backend-gpu-error = GPU 错误：{ $why }

## 模型的链接或名称，以及 Hub 仓库的文件列表（`remote`）
file-link-empty = 请指定一个模型：列表中的一个、一个网址或一个 Hugging Face 仓库
file-link-long = { $length } 个字符：模型链接至多 { $max } 个字符
file-link-urls = { $count } 个网址：一个模型由一到三个文件组成
file-link-not-url = { $value } 不是网址
file-link-http = { $url }：本页只通过 https 下载（或从它自己的服务器下载）
file-link-unknown = { $value } 既不是列表中的模型（{ $keys }），也不是文件的 https 网址或 Hugging Face 仓库（owner/name）
file-hub-listing-large = { $repo }：Hub 的文件列表超过了 { $max } 字节
file-hub-listing-json = { $repo }：Hub 返回的内容不是文件列表（{ $why }）
file-hub-sharded = { $repo } 把权重分存在多个 safetensors 文件中（model-00001-of-…）：本页只读取单个 model.safetensors
file-hub-none = { $repo } 的顶层既没有 GGUF 文件，也没有 model.safetensors 及其 config.json 和 tokenizer.json：请改为指定某个文件的网址

## worker 在面板中的说明
file-split-cpu = 本页运行在 CPU 后端上，它不启动任何 GPU 内核（请在页眉中选择 WebGPU）
file-quant-row = w2（MLP 的下投影），第 0 层，第 { $row } 行
