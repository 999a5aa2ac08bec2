# Los rechazos de un archivo de modelo, los de una descarga y los de la carga, tal como los escriben en inglés el motor (los errores de `decoding-engine`), las reglas de descarga de la página (`remote::http`) y el worker:
# `i18n::readback` lee cada mensaje según las plantillas de ../en/files.ftl y lo escribe de nuevo con el mensaje del mismo id de este archivo.
# Un `$why` se lee a su vez; un `$list` se lee elemento por elemento (separados por ", ").

## La descarga (`remote::http::DownloadError`, `download.rs` y `store.rs` del worker)
file-dl-not-found = { $url }: no se encontró (HTTP 404)
file-dl-refused = { $url }: acceso denegado (HTTP { $status }): el archivo está restringido (hay que aceptar su licencia en el hub, algo que esta página no puede hacer) o es privado; hay que descargarlo manualmente y cargarlo desde los archivos propios
file-dl-status = { $url }: el servidor respondió con HTTP { $status }
file-dl-html = { $url } es una página HTML, no un archivo de modelo (un enlace del hub a la página de un archivo lleva /blob/; el archivo en sí está en /resolve/)
file-dl-over-budget = { $name } ocupa { $bytes } bytes: más que el presupuesto de memoria de la página, de { $limit } bytes
file-dl-wrong-size = { $name } ocupa { $got } bytes, pero la lista indica { $want }: no es el archivo que nombra
file-dl-wrong-hash = el sha256 de { $name } es { $got }, no el { $want } de la lista: el archivo no es el que nombra (o se dañó)
file-dl-bad-range = { $url }: el servidor respondió con un rango que no empieza donde se detuvo la descarga ({ $range })
file-dl-quota = al almacenamiento del navegador le quedan { $free } bytes libres de su cuota de { $quota }: { $name } necesita { $need }
file-dl-dropped = { $url }: la conexión se cortó { $tries } veces (la última en el byte { $at }): { $why }
file-dl-cancelled = se canceló la descarga
file-dl-check = { $name }: { $why } (según sus primeros bytes: el resto no se descargó)
file-dl-storage = no se pudo escribir { $name } en el almacenamiento del navegador ({ $why }); se puede liberar espacio borrando modelos guardados
file-dl-storage-figures = { $why }; el almacenamiento ocupa { $usage } bytes de su cuota de { $quota }
file-dl-body-ended = el cuerpo de la respuesta terminó en el byte { $at }
file-dl-unreadable = { $name } se descargó, pero no se puede volver a leer del almacenamiento del navegador
file-store-unavailable = el almacenamiento del navegador no está disponible ({ $why })
file-store-unopenable = no se puede abrir { $name } en el almacenamiento del navegador ({ $why })

## Qué archivos forman un modelo (`formats::source::SourceError`)
file-src-none = no se indicó ningún archivo
file-src-too-many = se indicaron { $count } archivos: un modelo es un archivo (GGUF), dos (un punto de control de llama2.c y su tokenizador) o tres (un model.safetensors de Hugging Face, config.json y el tokenizador)
file-src-read = no se pudo leer { $name }: { $why }
file-src-checkpoint-alone = { $name } es un punto de control de llama2.c: hay que indicar también su tokenizador (tokenizer.bin o tokenizer.json)
file-src-not-gguf = { $name } no es un archivo GGUF: no empieza con los bytes mágicos de GGUF, "GGUF" (empieza con { $start })
file-src-gguf-not-alone = { $name } es un archivo GGUF, que lleva su propio tokenizador: hay que indicarlo solo
file-src-hf-incomplete = { $name } es un punto de control de Hugging Face: hay que indicarlo junto con su config.json y su tokenizador (tokenizer.json o un tokenizer.bin de llama2.c), los tres a la vez
file-src-tokenizer-alone = { $name } es un tokenizador: hay que indicar con él el punto de control del modelo
file-src-not-one-model = estos archivos no forman un modelo ({ $found }): hay que indicar un archivo GGUF solo, un punto de control de llama2.c (.bin) con su tokenizador, o un model.safetensors de Hugging Face con su config.json y su tokenizer.json

## El modelo en su conjunto (`model::ModelError`) y la carga en el worker
file-model-checkpoint = modelo: { $why }
file-model-tokenizer = tokenizador: { $why }
file-model-gguf = GGUF: { $why }
file-model-hf = punto de control de Hugging Face: { $why }
file-model-chat = chat: { $why }
file-model-empty-prompt = el prompt está vacío y el vocabulario de este modelo no empieza ningún prompt con BOS: hace falta algo de texto desde el que empezar
file-model-prompt-long = el prompt tiene { $tokens } tokens, pero el contexto del modelo admite { $seq }
file-open-failed = no se pudo abrir { $name }: { $why }
file-kept = { $why }; se conserva el modelo actual
file-own-instead = { $why }; en su lugar se carga el modelo propio de la página
file-weights-failed = no se pudieron abrir los pesos { $precision }: { $why }; se sigue ejecutando { $current }
file-gpu-unavailable = la GPU solicitada no está disponible ({ $why }); se ejecuta en la CPU

## GGUF (`formats::gguf::GgufError`)
file-gguf-magic = no es un archivo GGUF: empieza con { $found }, no con "GGUF"
file-gguf-version = la versión { $version } de GGUF no es compatible (lo es la versión 3; la 2 se lee como la 3)
file-gguf-truncated = el archivo GGUF termina en el byte { $len }, dentro de { $what } (en el byte { $at })
file-gguf-count = { $what } = { $value } no cabe en un archivo de { $len } bytes
file-gguf-value-type = el metadato { $key } tiene el tipo { $kind }, que GGUF no define
file-gguf-value = metadato { $key }: { $why }
file-gguf-missing = falta { $key } en los metadatos
file-gguf-tensor = en el tensor { $name }: { $why }
file-gguf-read = no se pudo leer el archivo GGUF: { $why }
file-gguf-tensor-type = el tensor { $name } tiene el tipo { $kind }, que este lector no carga (carga F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K y Q6_K)
file-gguf-architecture = general.architecture es { $arch }; se leen los modelos "llama" y "qwen2"
file-gguf-too-large = el archivo GGUF ocupa { $bytes } bytes, más que el presupuesto de memoria de { $limit } bytes (sus pesos ocupan en memoria al menos eso)
file-gguf-missing-tensor = a los tensores del modelo les falta { $name }

## Puntos de control de llama2.c (`formats::llama2c::CheckpointError`) y sus cabeceras (`config::ConfigError`)
file-ckpt-empty = el punto de control está vacío (0 bytes)
file-ckpt-short = el punto de control ocupa { $len } bytes, menos que la cabecera de { $header } bytes
file-ckpt-wrong-size = el archivo ocupa { $actual } bytes, pero la cabecera implica { $expected }
file-ckpt-read = la lectura del punto de control falló en el byte { $offset }: { $why }
file-ckpt-magic = el número mágico { $magic } no es el 0x616b3432 ("ak42") de llama2.c, y el archivo tampoco tiene una cabecera antigua
file-ckpt-version = la versión { $version } de punto de control de llama2.c no es compatible (los archivos float32 antiguos no tienen versión; la versión 2 es Q8_0)
file-ckpt-shared = el byte shared_classifier vale { $value } (debe ser 0 o 1)
file-ckpt-group = el tamaño de grupo { $group } debe ser al menos 1
file-ckpt-group-divide = el tamaño de grupo { $group } no divide el tensor { $tensor } ({ $len } pesos por capa)
file-ckpt-non-finite = el tensor { $tensor } tiene un valor no finito ({ $value }) en el elemento { $index }
file-cfg-range = el campo de cabecera { $field } = { $value } está fuera de rango (debe ser { $rule })
file-cfg-dim-heads = dim { $dim } no es divisible por n_heads { $heads }
file-cfg-heads-kv = n_heads { $heads } no es divisible por n_kv_heads { $kv }
file-cfg-odd-head = head_size { $size } (dim / n_heads) debe ser par para los embeddings rotatorios (RoPE)
file-cfg-float = { $field } vale { $value }; debe ser { $rule }
file-budget-over = { $what } necesitaría { $bytes } con seq_len { $seq }; el límite es { $limit }
file-budget-overflow = { $what } de esta cabecera no cabe en 64 bits

## Puntos de control de Hugging Face (`formats::hf::HfError`)
file-hf-config-large = config.json ocupa { $bytes } bytes; la configuración de un modelo ocupa como máximo { $limit }
file-hf-config-json = config.json no es JSON: { $why }
file-hf-missing = falta { $key } en config.json
file-hf-value = { $key } de config.json vale { $value }; { $why }
file-hf-architecture = config.json describe { $arch }; se leen LlamaForCausalLM y Qwen2ForCausalLM (model_type "llama", "qwen2")
file-hf-not-safetensors = no es un archivo safetensors: { $why }
file-hf-header-large = la cabecera de safetensors ocupa { $bytes } bytes, más que los { $limit } que necesita la tabla de tensores de un modelo
file-hf-safetensors = error de safetensors: { $why }
file-hf-missing-tensor = falta el tensor { $name } en el archivo safetensors
file-hf-dtype = el tensor { $name } tiene el dtype { $dtype }, que este lector no carga (carga F32, F16 y BF16)
file-hf-too-large = el archivo safetensors ocupa { $bytes } bytes, más que el presupuesto de memoria de { $limit } bytes (sus pesos ocupan en memoria al menos eso)

## Tokenizadores (`tokenizer::TokenizerError`) y plantillas de chat (`tokenizer::chat::ChatError`)
file-tok-empty = el archivo del tokenizador está vacío
file-tok-truncated = tokenizer.bin está truncado: { $what } de la pieza { $id } sobrepasa el final del archivo ({ $len } bytes)
file-tok-piece-length = la pieza { $id } de tokenizer.bin tiene una longitud no válida, { $len }
file-tok-piece-long = la pieza { $id } de tokenizer.bin ocupa { $len } bytes, más que el max_token_length { $max } del archivo
file-tok-max-length = el max_token_length { $value } de tokenizer.bin está fuera de rango (debe estar en 1..={ $max })
file-tok-utf8 = la pieza { $id } de tokenizer.bin no es UTF-8 válido (bytes { $bytes })
file-tok-score = la pieza { $id } de tokenizer.bin tiene una puntuación no finita, { $score }
file-tok-duplicate = la pieza { $id } de tokenizer.bin, { $piece }, repite la pieza { $first }
file-tok-vocab = el tokenizador tiene { $tokenizer } tokens, pero el vocabulario del modelo tiene { $model }
file-tok-json = no se pudo leer tokenizer.json: { $why }
file-tok-not-tokenizer = el archivo del tokenizador no es ni un tokenizer.json (no empieza con '{"{"}') ni un tokenizer.bin de llama2.c (una tabla binaria); empieza con { $start }
file-tok-file-large = el archivo del tokenizador ocupa { $bytes } bytes; el límite es { $limit } ({ $limitbytes } bytes)
file-tok-too-many = tokenizer.json tiene { $count } tokens; el límite es { $max }
file-tok-token-long = el token { $id } de tokenizer.json ocupa { $len } bytes, más de { $max }
file-tok-special = el tokenizador no tiene token { $which }
file-tok-encode = la codificación falló: { $why }
file-tok-pre = tokenizer.ggml.pre es { $pre }, un pretokenizador que este lector no conoce (lee { $known })
file-tok-merge = la entrada { $rank } de tokenizer.ggml.merges ({ $merge }) no son dos tokens del vocabulario
file-tok-bpe = no se pudo construir el vocabulario BPE: { $why }
file-tok-unknown-id = el id de token { $id } está fuera del vocabulario (tamaño { $vocab })
file-chat-none = el archivo de este modelo no trae ninguna plantilla de chat (el tokenizer.chat_template de GGUF)
file-chat-unreadable = el archivo de este modelo trae una plantilla de chat, pero no se pudo leer: { $why }
file-chat-large = la plantilla de chat ocupa { $bytes } bytes; el límite es { $max }
file-chat-render = no se pudo aplicar la plantilla de chat: { $why }
file-chat-rendered-large = la plantilla de chat produce { $bytes } bytes para un solo mensaje; el límite es { $max }

## Un archivo de transcripción leído de nuevo (`export::transcript`) y los logits de juguete (`page::toy`)
file-transcript-large = una transcripción de { $bytes } bytes: la página lee como máximo { $max }
file-transcript-not = no es un archivo de transcripción: { $why }
file-transcript-format = { $format } versión { $version } no es una transcripción que escriba esta página ({ $ours } versión 1)
file-transcript-tokens = { $count } tokens: como máximo 4096
file-toy-row = la fila { $id } no es uno de los { $count } logits (0..{ $end })
file-toy-not-row = { $value } no es un número de fila
file-toy-not-finite = { $value } no es un número finito
file-toy-count = hay que escribir entre 1 y { $max } logits (se recibieron { $count })

## Por qué "automático" eligió un backend (`backend::choose`)
file-backend-auto = automático, medido: { $list }; { $why } ({ $reason })
file-backend-ms = { $backend }: { $ms } ms por token
file-backend-failed = { $backend } falló ({ $why })
file-backend-runs = { $backend } lo ejecuta
file-backend-cpu-faster = la CPU es más rápida con este modelo
file-backend-gpu-faster = la GPU es más rápida con este modelo
file-backend-cpu-chosen = se eligió el backend de CPU
file-backend-gpu-on = WebGPU en { $adapter }
file-backend-lost = se perdió el dispositivo GPU: { $why }
file-backend-gpu-error = error de la GPU: { $why }

## El enlace o el nombre de un modelo, y el listado de un repositorio del hub (`remote`)
file-link-empty = hay que indicar un modelo: uno de la lista, una URL o un repositorio de Hugging Face
file-link-long = { $length } caracteres: el enlace de un modelo tiene como máximo { $max }
file-link-urls = { $count } URL: un modelo consta de uno a tres archivos
file-link-not-url = { $value } no es una URL
file-link-http = { $url }: la página solo descarga por https (o desde su propio servidor)
file-link-unknown = { $value } no es un modelo de la lista ({ $keys }), ni la URL https de un archivo, ni un repositorio de Hugging Face (propietario/nombre)
file-hub-listing-large = { $repo }: el listado del hub supera los { $max } bytes
file-hub-listing-json = { $repo }: el listado del hub no es una lista de archivos ({ $why })
file-hub-sharded = { $repo } guarda sus pesos en varios archivos safetensors (model-00001-of-…): la página lee un único model.safetensors
file-hub-none = { $repo } no tiene en su raíz ningún archivo GGUF ni ningún model.safetensors con su config.json y su tokenizer.json: hay que indicar en su lugar la URL de un archivo

## Las notas del worker en los paneles
file-split-cpu = la página se ejecuta en el backend de CPU, que no lanza ningún kernel de GPU (se puede elegir WebGPU en la cabecera)
file-quant-row = w2 (la proyección de bajada del MLP), capa 0, fila { $row }
