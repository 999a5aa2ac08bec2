# Las palabras de la página en español. Los números llegan ya formateados (i18n::number).

## La cabecera

app-title = Decoding Explorer
starting-engine = Iniciando el motor…
loading-model = Cargando el modelo…
load-figures = { $loaded } de { $total }
backend-label = Motor de cálculo
backend-auto = automático
backend-gpu = WebGPU
backend-gpu-unavailable = WebGPU (no disponible: se ejecuta en la CPU)
backend-cpu = CPU
weights-label = Pesos
weights-title = Cómo se guardan las matrices de pesos: la cuantización cambia la representación de θ, no sus valores aprendidos (las normas siguen en f32)
weights-f32 = f32: 32 bits por peso
weights-f16 = f16: 16 bits por peso (media precisión IEEE)
weights-q8 = q8: int8 + una escala float32 por grupo
weights-q4 = q4: 4 bits + una escala float32 por cada 32
weights-ggml = ggml: los bloques del propio archivo
threads-label = Hilos
threads-auto = automático (medido)
threads-badge = Hilos de CPU: { $n } · { $why }
threads-timed = { $n } en { $ms } ms
threads-short-measured = medido
threads-why-measured = Los menos hilos a menos del 10 % del más rápido, medidos al arrancar con el propio producto del motor: { $timed }
threads-short-chosen = elegido por ti
threads-why-chosen = El número que elegiste; «automático» los mide de nuevo
threads-short-not-isolated = página sin aislamiento de origen cruzado
threads-why-not-isolated = Un hilo: la página se sirvió sin las cabeceras COOP/COEP que la aíslan (cross-origin isolated), así que el navegador no le da memoria compartida (README: «Threads in the page»)
threads-short-no-shared-memory = sin memoria compartida
threads-why-no-shared-memory = Un hilo: este navegador no tiene memoria WebAssembly compartida
threads-short-one-core = un procesador
threads-why-one-core = Un hilo: el navegador indica un solo procesador
threads-short-failed = fallaron los hilos
threads-why-failed = Un hilo: los demás no pudieron arrancar ({ $message })
model-summary = { $name }: { $params } parámetros, { $layers } capas, dimensión { $dim }, { $heads } cabezas de consulta / { $kv } de K/V, vocabulario { $vocab }, contexto { $context }
model-trained-context = (de los { $trained } del archivo, como llama.cpp lo ejecuta con su n_ctx)
model-source = { $architecture } desde { $format }, base RoPE { $rope }, RMSNorm ε { $eps }
model-tensors = tensores en el archivo: { $types }
model-weights = pesos { $precision }: { $bytes } bytes ({ $human })
card-next = ; { $next }
load-model = Cargar un modelo…
lesson-track = Recorrido de la lección
class-round = Ronda de clase
class-round-title = Predecir y luego revelar: el siguiente token queda oculto hasta que las apuestas de la clase se comparan con la distribución del modelo
presenter-mode = Modo presentador
dark-theme = Tema oscuro
dark-theme-title = Colores oscuros o claros (sin elección en el enlace, los del sistema)
language-label = Idioma
shortcuts = Atajos de teclado
engine-stopped = El motor se detuvo ({ $why }). No se pierde nada: la barra de direcciones guarda el prompt, los parámetros y los tokens.
reload = Recargar
dismiss = Cerrar
link-problems = El enlace tenía valores que esta página no puede usar, así que se muestran sus valores por defecto: { $problems }
footer = stories260K: tinyllamas de Andrej Karpathy (MIT), entrenado con TinyStories (Eldan y Li, 2023; CDLA-Sharing-1.0). Lección 10 — La inferencia a fondo. Pulsa ? para ver los atajos de teclado.

## Cargar un modelo

picker-model-file = Modelo (GGUF, .bin de llama2.c o model.safetensors)
picker-tokenizer-file = Tokenizador (tokenizer.json o el tokenizer.bin de llama2.c, para cualquiera de los dos)
picker-config-file = Configuración (para safetensors: config.json)
picker-load = Cargar
picker-or-drop = o suelta los archivos en la página
choose-file-first = elige primero un archivo de modelo
by-link-list = Un modelo de la lista
by-link-download = Descargar y cargar
by-link-url = o una URL (GGUF, llama2.c o un repositorio de Hugging Face: propietario/nombre)
by-link-load = Cargar
# Los modelos de la lista (`remote::catalogue`), una etiqueta por clave.
listed-stories260K = stories260K (el modelo propio de la página, desde el hub)
listed-stories15M = stories15M (TinyStories, 15 millones de parámetros)
listed-stories110M = stories110M (TinyStories, 110 millones de parámetros)
listed-SmolLM2-135M-Instruct = SmolLM2-135M-Instruct (un modelo de chat, 135 millones de parámetros; GGUF, Q4_K_M)
listed-Qwen2_5-0_5B-Instruct = Qwen2.5-0.5B-Instruct (un modelo de chat, 500 millones de parámetros; GGUF, Q8_0)
in-this-folder = En esta carpeta:
folder-unreadable = No se pudieron leer los modelos de la carpeta: { $why }
fetching = Descargando…
fetching-file = Descargando { $file }
cancel = Cancelar
kept-none = Todavía no hay ningún modelo guardado en este navegador.
kept-some = Guardados en este navegador (se cargan sin red):
kept-space = Almacenamiento del navegador para esta página: { $used } usados de { $quota }.
kept-partial = (detenido a medias: al cargarlo se reanuda la descarga)
kept-load = Cargar
kept-delete = Borrar

## El recorrido de la lección

lesson-heading = Lección 10, §{ $section } — { $title }
lesson-position = paso { $n } de { $total }
lesson-previous = ← Anterior
lesson-next = Siguiente →
lesson-check = Comprobación en clase
lesson-check-title = Una ronda en la que la clase adivina el siguiente token, donde una apuesta enseña este paso
lesson-check-question = Comprobación en clase: { $question }
lesson-close = Cerrar el recorrido de la lección
step-loop = El bucle de generación
step-greedy-vs-beam = Voraz no es el óptimo de la secuencia
step-beam-bland = La búsqueda en haz es sosa en texto abierto
step-tail = La cola pesada del muestreo
step-temperature = La temperatura sobre los logits de juguete [2, 1, 0.1]
step-topk-topp = Top-k es rígido, top-p se adapta
step-penalty = Las penalizaciones frenan un bucle
step-kv-cache = La caché KV: O(n·d) por paso en lugar de O(n²·d)
step-prefill-decode = Prellenado frente a decodificación
step-kv-memory = Memoria KV: 2 × n × N_layers × d × bytes, y GQA/MQA
step-speculative = Decodificación especulativa
step-quantization = Cuantización
step-batching = Procesamiento por lotes
step-same-theta = Mismo θ, distinta configuración
step-taxonomy = La taxonomía completa de la inferencia
