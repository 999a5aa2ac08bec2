# El área de la clase: el panel de la ronda de clase, la sala, la tabla de la taxonomía y las etiquetas
# (las convenciones están en page.ftl).

## El panel de la ronda de clase

class-heading = Ronda de clase: adivinar el siguiente token
class-no-score = Todavía no se ha puntuado ninguna ronda: la clase apuesta, Revelar muestra la distribución del modelo y Extraer toma el token del modelo.
class-score = Puntuación: la apuesta más votada de la clase fue el token en { $class } de { $rounds }, el top-1 del modelo en { $model } de { $rounds }; la clase superó al top-1 del modelo en { $beat } de { $rounds }.
class-last = Última ronda: el modelo extrajo { $drawn }; la apuesta más votada de la clase fue { $top }.
class-last-p = Última ronda: el modelo extrajo { $drawn } (p { $p }); la apuesta más votada de la clase fue { $top }.
class-tally-label = Las apuestas de la clase para el siguiente token (un recuento: cat ×5, dog ×3)
class-reveal = Revelar
class-draw = Extraer el token del modelo
class-chart-caption = Las apuestas de la clase frente a la distribución del modelo (T = 1), sobre los mismos tokens: cada token apostado y los cinco más probables del modelo (barras en escala de raíz cuadrada); q es de donde extrae el siguiente paso con los controles actuales, ✕ donde una etapa eliminó el token
class-col-token = token
class-col-class = clase c
class-col-model = modelo p
class-col-rank = posición
class-col-q = q con los controles
class-share = { $percent } % ({ $count })
class-dropped = Sin token para: { $guesses } (no cuentan).
class-guesses = apuestas
class-cross-entropy = entropía cruzada H(c, p)
class-model-entropy = la entropía del modelo H(p)
class-nats = { $value } nats
class-reading = Codificar las apuestas de la clase le cuesta al modelo { $ce } nats por token frente a { $hp } para sus propias muestras; { $kl } de ellos son la KL, el precio de que la clase no apueste en las proporciones del modelo (la dispersión propia de la clase, H(c), es { $hc }).

## Por qué no se pudo dibujar una ronda

class-err-bad-guess = «{ $guess }»: una apuesta tiene como mucho { $max } caracteres, sin caracteres de control
class-err-bad-count = «{ $count }»: un recuento es un número entero de 1 a { $max }
class-err-too-many = { $total } apuestas: una ronda admite como mucho { $max }
class-err-text-moved = el texto avanzó antes de leer las apuestas: revela de nuevo
class-err-not-finite = los logits del modelo no son finitos
class-err-no-token = ninguna apuesta corresponde a un token: no hay nada que revelar
class-err-outside-vocab = el token de una apuesta está fuera del vocabulario del modelo

## La sala de la clase

room-qr-label = Código QR de { $address }
room-students-open = Los estudiantes abren
room-type-code = o escriben el código
room-count-one = Ronda { $round }: { $students } estudiante dentro, { $guessed } han apostado
room-count-other = Ronda { $round }: { $students } estudiantes dentro, { $guessed } han apostado
room-err-vocab = El servidor de la clase lee las apuestas con un vocabulario de { $vocab } tokens y el modelo de esta página tiene { $mine }: inícialo con el modelo de la página.
room-err-create = no se puede crear una sala: { $why }
room-err-other-tab = Esta sala está abierta en otra pestaña: se presenta allí.
room-err-closed = La sala se cerró: { $reason }
room-err-moved = El texto avanzó antes de que llegara el recuento: la ronda se abre de nuevo.
room-err-no-guess = Todavía no ha llegado ninguna apuesta: la ronda se abre de nuevo.
room-err-no-token = Ninguna apuesta corresponde a un token de este modelo ({ $guesses }): la ronda se abre de nuevo.
room-err-code = { $code } no es un código de sala ({ $length } de { $alphabet })

## La taxonomía: la tabla de la lección y la leyenda de las etiquetas

taxonomy-caption = Lección 10, sección 6, con lo que esta página muestra en cada fila
taxonomy-col-at-inference = En la inferencia
taxonomy-col-category = Categoría
taxonomy-col-on-page = En esta página
taxonomy-addition = — añadido por esta página
taxonomy-separator = ,{ " " }
taxonomy-meaning-learned = aprendido en el entrenamiento, congelado en la inferencia: θ nunca cambia
taxonomy-meaning-config = lo elige quien ejecuta el modelo: cómo se ejecuta θ
taxonomy-meaning-state = se produce durante la ejecución y se descarta después: transitorio
taxonomy-row-parameters = Parámetros θ
taxonomy-row-shaping = Temperatura, top-k, top-p, penalizaciones
taxonomy-row-strategy = Estrategia (voraz/haz/muestreo), ancho de haz k
taxonomy-row-limits = Máximo de tokens, secuencias de parada
taxonomy-row-state = Logits, probabilidades, caché KV
taxonomy-row-serving = Precisión, borrador y γ, tamaño de lote, motor de cálculo (sección 5)
taxonomy-cell-parameters = [LEARNED], congelados: nunca cambian
taxonomy-cell-shaping = [CONFIG] (dan forma al muestreo)
taxonomy-cell-strategy = [CONFIG]
taxonomy-cell-limits = [CONFIG]
taxonomy-cell-state = [STATE]
taxonomy-cell-serving = [CONFIG]

## Lo que la página tiene en cada fila: los parámetros

taxonomy-knob-top-k = Top-k
taxonomy-knob-top-p = Top-p (núcleo)
taxonomy-knob-min-p = Min-p
taxonomy-knob-typical-p = Typical-p
taxonomy-knob-repetition-penalty = Penalización por repetición
taxonomy-knob-frequency-penalty = Penalización por frecuencia
taxonomy-knob-presence-penalty = Penalización por presencia
taxonomy-knob-penalty-window = Ventana de penalización
taxonomy-knob-no-repeat-ngram = n-grama sin repetición
taxonomy-knob-logit-bias = Sesgo de logits
taxonomy-knob-temperature = Temperatura T
taxonomy-knob-dynatemp-range = Rango de temperatura dinámica
taxonomy-knob-dynatemp-exponent = Exponente de temperatura dinámica
taxonomy-knob-dry-multiplier = Multiplicador DRY
taxonomy-knob-dry-base = Base DRY
taxonomy-knob-dry-allowed-length = Longitud permitida DRY
taxonomy-knob-dry-penalty-last-n = Ventana DRY
taxonomy-knob-dry-sequence-breaker = Separadores de secuencia DRY
taxonomy-knob-top-n-sigma = Top-nσ
taxonomy-knob-xtc-probability = Probabilidad XTC
taxonomy-knob-xtc-threshold = Umbral XTC
taxonomy-knob-epsilon-cutoff = Muestreo ε
taxonomy-knob-eta-cutoff = Muestreo η
taxonomy-knob-top-h = Top-H
taxonomy-knob-mirostat = Mirostat
taxonomy-knob-mirostat-tau = Mirostat τ
taxonomy-knob-mirostat-eta = Mirostat η
taxonomy-knob-mirostat-m = Mirostat m
taxonomy-knob-adaptive-p-target = Objetivo de Adaptive-p
taxonomy-knob-adaptive-p-decay = Decaimiento de Adaptive-p
taxonomy-knob-constraint = Restricción
taxonomy-knob-max-tokens = Máximo de tokens
taxonomy-knob-stop = Secuencias de parada
taxonomy-knob-seed = Semilla
taxonomy-knob-profile = Perfil
taxonomy-knob-order = Orden de la cadena
taxonomy-knob-strategy = Estrategia
taxonomy-knob-beams = Ancho de haz k
taxonomy-knob-length-penalty = Penalización por longitud
taxonomy-knob-early-stopping = Parada temprana
taxonomy-knob-num-return = Secuencias devueltas

## Lo que la página tiene en cada fila: sus demás magnitudes, controles y paneles

taxonomy-item-model-summary = la ficha del modelo: parámetros, formas
taxonomy-item-model-file = el archivo de pesos (θ)
taxonomy-item-model-link = un modelo por enlace: la lista, una URL o un repositorio del hub (θ)
taxonomy-item-tokenizer-file = el tokenizador (BPE fijo)
taxonomy-item-config-file = config.json: la arquitectura con la que se entrenó θ (formas, base RoPE, ε)
taxonomy-item-quant-weights = una fila de pesos antes y después
taxonomy-item-calc-model = las formas de un modelo (calculadora)
taxonomy-item-backend-select = motor de cálculo
taxonomy-item-precision-select = precisión de los pesos
taxonomy-item-threads-select = hilos del motor
taxonomy-item-spec-draft = borrador
taxonomy-item-spec-gamma = γ (tokens del borrador)
taxonomy-item-spec-rule = regla de aceptación
taxonomy-item-batch-size = tamaño de lote B
taxonomy-item-calc-batch = tamaño de lote (calculadora)
taxonomy-item-calc-bytes = bytes por elemento (calculadora)
taxonomy-item-serve-slots = ranuras de servicio
taxonomy-item-serve-requests = peticiones de la traza
taxonomy-item-serve-seed = la semilla de la traza
taxonomy-item-cmp-columns = las configuraciones comparadas
taxonomy-item-batch-tokens = tokens por carril
taxonomy-item-prompt = el prompt (el contexto hasta ahora)
taxonomy-item-transcript = la transcripción
taxonomy-item-dist-chart = la distribución del siguiente token
taxonomy-item-timings = tiempos
taxonomy-item-memory = memoria
taxonomy-item-chain-charts = la distribución de cada etapa
taxonomy-item-stage-states = el estado de las etapas a lo largo de los pasos
taxonomy-item-constraint-mask = la máscara de la restricción: Z_t, tokens permitidos, su tiempo
taxonomy-item-beam-tree = el árbol de haces
taxonomy-item-kv-grid = la caché KV
taxonomy-item-att-grid = la atención del nuevo token sobre la caché
taxonomy-item-lens-grid = la lente de logits, capa por capa
taxonomy-item-calc-positions = posiciones en caché n (calculadora)
taxonomy-item-cache-compare = los tiempos de la comparación de la caché
taxonomy-item-toy-logits = logits de juguete
taxonomy-item-toy-history = historial de juguete
taxonomy-item-quant-table = las distribuciones de las cuatro precisiones
taxonomy-item-spec-run = la ejecución especulativa
taxonomy-item-batch-results = carriles, rendimiento, líneas de tiempo
taxonomy-item-cmp-view = el texto y las distribuciones de las columnas comparadas
taxonomy-item-lesson-caption = los números en vivo del paso de la lección
