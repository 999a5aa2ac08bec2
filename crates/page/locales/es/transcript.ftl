# es: el área de la transcripción (convenciones en ../en/page.ftl): el prompt, los controles, la
# transcripción, la distribución, los controles de decodificación, la cadena, la ayuda de atajos, los paneles.

## Los títulos de los paneles (Panel::title) y su botón Mostrar/Ocultar

panel-title-prompt = Prompt
panel-title-dist = Distribución del siguiente token
panel-title-lesson-knobs = Controles de decodificación
panel-title-knobs = Más controles
panel-title-chain = Cadena de muestreo
panel-title-beam = Búsqueda en haz
panel-title-kv = Caché KV
panel-title-inside = Dentro del paso
panel-title-toy = Logits de juguete
panel-title-quant = Cuantización
panel-title-spec = Decodificación especulativa
panel-title-batch = El procesamiento por lotes y los dos regímenes
panel-title-compare = Mismo θ, distinta configuración
panel-title-taxonomy = La taxonomía completa de la inferencia
panel-title-lesson = Recorrido de la lección
panel-show = Mostrar
panel-hide = Ocultar

## Las regiones de la página

layout-no-worker = no se puede iniciar el worker del motor: { $error }
layout-skip = Saltar a los controles
layout-generation = Generación
layout-knobs = Controles de decodificación
layout-more-views = Más vistas
events-unreadable = mensaje ilegible del motor: { $error }
events-no-distribution = todavía no hay ninguna distribución con la que revelar

## El prompt, los controles y la transcripción

transcript-prompt = Prompt
transcript-run-prompt = Ejecutar el prompt
transcript-loop-warning = Bucle de repetición: la frase de { $period } tokens { $phrase } se repite { $repeats } veces seguidas en los últimos { $window } tokens. La decodificación voraz tiende a entrar en bucles; prueba el muestreo, una penalización por repetición o n-grama sin repetición.
transcript-chat-title = Presenta el prompt como un único mensaje de usuario con la plantilla de chat que trae el archivo del modelo, con el turno del asistente abierto: lo que un modelo instruct vio en su entrenamiento
transcript-chat = Chat
transcript-controls = Controles de generación
transcript-step-title = Avanzar un token (n)
transcript-step = Paso
transcript-run-title = Ejecutar / pausar (p)
transcript-run = Ejecutar
transcript-pause = Pausar
transcript-rewind-title = Retroceder un token (b)
transcript-rewind = Retroceder
transcript-reset-title = Volver al prompt (x)
transcript-reset = Reiniciar
transcript-beam-mirror = Búsqueda en haz: las fichas son el mejor haz hasta ahora (el árbol está en el panel de búsqueda en haz). Paso hace crecer cada haz en un token; Retroceder lleva el árbol un nivel atrás.
transcript-token-id = token { $id }
transcript-prompt-reads-chat = El prompt tal como lo lee el modelo, { $n } tokens, a través de la plantilla de chat:
transcript-prompt-reads-bos = El prompt tal como lo lee el modelo, { $n } tokens (BOS primero):
transcript-prompt-reads-no-bos = El prompt tal como lo lee el modelo, { $n } tokens (este vocabulario no añade BOS):
transcript-generated = tokens generados
transcript-chip-label = { $shown }: token { $n } { $piece }, probabilidad del modelo { $p }{ $drawn }, puesto { $rank }
transcript-chip-drawn = , extraído con probabilidad { $p }
transcript-chip-p-title = p del modelo (→ p de la extracción) y puesto
transcript-drawn-from = El token { $n } se extrajo de:
transcript-kept-strip = Tokens conservados en cada paso (el conjunto del que se extrajo cada token): ahora { $last }; entre { $min } y { $max } en los últimos { $steps } pasos.
transcript-prefill = prellenado de { $tokens } tokens en { $ms } ms
transcript-decode = decodificación { $total } ms/token = pasada hacia delante { $forward } ms + cadena de muestreo { $chain } ms (medias de los últimos { $steps } pasos, { $rate } tokens/s)
transcript-decode-under-clock = decodificación por debajo de los 0,1 ms por token del reloj del navegador (últimos { $steps } pasos)
transcript-last-run = última ejecución: { $n } tokens en { $ms } ms = { $rate } tokens/s
transcript-memory-engine = Memoria (wasm, pico): motor
transcript-memory-page = , página
transcript-memory-in-use = ; en uso: motor { $engine }, página { $page }
transcript-stop-eos = Detenido: el modelo terminó la historia (token { $token }).
transcript-stop-max = Detenido: máximo de tokens ({ $max }).
transcript-stop-sequence = Detenido: apareció la secuencia de parada { $stop }.
transcript-stop-context = Detenido: el contexto está lleno ({ $n } tokens).
transcript-stop-constraint-complete = Detenido: la restricción está completa (el texto es una instancia; no puede seguir nada).
transcript-stop-constraint-unsatisfiable = Detenido: la restricción no permite aquí ningún token, ni siquiera el final.
transcript-file-too-big = { $file }: { $bytes } bytes; un archivo de transcripción tiene como máximo { $max }
transcript-unreadable = no se pudo leer el archivo
transcript-other-model = esta transcripción se hizo con { $model } ({ $params } parámetros); la página tiene cargado { $loaded }: carga primero ese modelo
transcript-export = Exportar la transcripción (JSON)
transcript-load = Cargar una transcripción

## La distribución del siguiente token y los logits de juguete

dist-coin = moneda { $coin }
dist-summary = Se conservan { $kept } de { $total } tokens. Los más probables: { $top }. Elegido con esta semilla: { $chosen } (puesto { $rank }).
dist-entropy = Entropía H = { $h } nats; exp(H) = { $effective } tokens efectivos; se conservan { $kept } de { $total } tokens
dist-cut = top-p (p = { $p }) conservó { $kept } y eliminó una cola de masa { $mass }
dist-chart-note = Los { $n } más probables de { $total } tokens, ordenados; en gris: eliminados por una etapa (su probabilidad antes de eliminarlos).
dist-cut-note = Línea: la suma acumulada de top-p de las probabilidades que vio, de la más probable a la menos (0 abajo, 1 arriba); discontinua: p. Los tokens más allá del cruce se eliminan.
dist-show-top = Mostrar los { $n } primeros
dist-show-all = Mostrar todos los tokens
dist-rows = tokens por probabilidad
dist-removed-by = eliminado por { $stage }
dist-cum-title = la suma acumulada de top-p de las probabilidades que vio, hasta este token
dist-coin-cdf = La moneda { $coin } sobre la distribución acumulada: el muestreador recorre los tokens en orden de id sumando su probabilidad, y se extrae el primer token en que la suma supera la moneda: { $token } (id { $id }).
dist-scale = Escala
dist-probability = probabilidad
dist-log-probability = log-probabilidad
dist-toy-hint = Escribe logits z (el ejemplo de la lección es 2, 1, 0.1); cada control de arriba actúa sobre ellos como sobre los del modelo. El historial enumera las filas ya «generadas» (0 es z₁), para las penalizaciones y no-repeat-n-gram.
dist-toy-logits = Logits z =
dist-toy-history = Historial (filas)
dist-toy-history-example = p. ej. 0, 0
dist-toy-caption = softmax(z / T) a las tres temperaturas de la lección (sin ningún otro control)
dist-toy-note = Con T = 0,5 el texto de la lección da al token más probable ≈ 0,84; softmax da 0,864 (e⁴ / (e⁴ + e² + e^0,2)): un error de la lección. 0,659 con T = 1 y 0,502 con T = 2 son correctos tal como están impresos.

## Los controles: el nombre y la ayuda de cada uno (KNOBS, por nombre), el perfil y la estrategia

knob-default-title = el valor por defecto del propio perfil para un control que no has fijado; fíjalo para cambiarlo
knob-default-of = por defecto de { $profile }
knob-value = valor de { $knob }
knob-strategy-sample = muestreo
knob-strategy-greedy = voraz
knob-strategy-beam = búsqueda en haz
knob-profile-lesson = solo lo que fijes
knob-profile-llama-cpp = cadena por defecto
knob-label-top-k = Top-k
knob-help-top-k = conserva los k tokens más probables; 0 = desactivado
knob-label-top-p = Top-p (núcleo)
knob-help-top-p = conserva el conjunto más pequeño con masa ≥ p, en (0, 1]; 1 = desactivado
knob-label-min-p = Min-p
knob-help-min-p = descarta los tokens por debajo de p × la probabilidad máxima, en [0, 1]
knob-label-typical-p = Typical-p
knob-help-typical-p = masa localmente típica, en (0, 1]; 1 = desactivado
knob-label-repetition-penalty = Penalización por repetición
knob-help-repetition-penalty = CTRL, > 0: los logits positivos de los tokens ya vistos se dividen, los negativos se multiplican; 1 = desactivado
knob-label-frequency-penalty = Penalización por frecuencia
knob-help-frequency-penalty = resta recuento × α a los logits de los tokens ya vistos
knob-label-presence-penalty = Penalización por presencia
knob-help-presence-penalty = resta α a los logits de los tokens ya vistos
knob-label-penalty-window = Ventana de penalización
knob-help-penalty-window = cuántos tokens recientes ven las penalizaciones; 0 = todos
knob-label-no-repeat-ngram = n-grama sin repetición
knob-help-no-repeat-ngram = prohíbe los tokens que repetirían un n-grama; 0 = desactivado
knob-label-logit-bias = Sesgo de logits
knob-help-logit-bias = ID:VALUE sumado al logit de un token, separados por comas o repetidos (2:-100 prohíbe EOS)
knob-label-temperature = Temperatura T
knob-help-temperature = softmax(z / T), ≥ 0; 0 = voraz, 1 = la distribución del modelo
knob-label-dynatemp-range = Rango de temperatura dinámica
knob-help-dynatemp-range = de llama.cpp: T se mueve en [T − range, T + range] con la entropía; 0 = desactivado
knob-label-dynatemp-exponent = Exponente de temperatura dinámica
knob-help-dynatemp-exponent = de llama.cpp: T = min + (max − min) × (H / ln n)^exponent
knob-label-dry-multiplier = Multiplicador DRY
knob-help-dry-multiplier = penaliza los tokens que alargan una repetición: multiplier × base^(length − allowed), ≥ 0; 0 = desactivado (de llama.cpp)
knob-label-dry-base = Base DRY
knob-help-dry-base = lo rápido que crece la penalización con la longitud de la repetición, ≥ 1 (1,75 en llama.cpp)
knob-label-dry-allowed-length = Longitud permitida DRY
knob-help-dry-allowed-length = las repeticiones de hasta esta longitud no se penalizan (2 en llama.cpp)
knob-label-dry-penalty-last-n = Ventana DRY
knob-help-dry-penalty-last-n = cuántos tokens recientes examina DRY; 0 = desactivado (64 en llama.cpp)
knob-label-dry-sequence-breaker = Cortes de secuencia DRY
knob-help-dry-sequence-breaker = texto que termina una repetición, ≤ 40 bytes cada uno, \n para un salto de línea; repetido; none = sin cortes
knob-label-top-n-sigma = Top-nσ
knob-help-top-n-sigma = conserva los logits a menos de n desviaciones típicas del mayor; ≤ 0 = desactivado (-1 en llama.cpp)
knob-label-xtc-probability = Probabilidad de XTC
knob-help-xtc-probability = probabilidad por paso de que XTC elimine las opciones principales; 0 = desactivado (de llama.cpp)
knob-label-xtc-threshold = Umbral de XTC
knob-help-xtc-threshold = los tokens con esta probabilidad o más son las opciones principales, en [0, 1]; por encima de 0,5 XTC no hace nada
knob-label-epsilon-cutoff = Muestreo ε
knob-help-epsilon-cutoff = de HF: descarta los tokens con probabilidad menor que ε, en [0, 1); 0 = desactivado
knob-label-eta-cutoff = Muestreo η
knob-help-eta-cutoff = de HF: descarta los tokens por debajo de min(ε, √ε·e^−H), en [0, 1); 0 = desactivado
knob-label-top-h = Top-H
knob-help-top-h = de HF: los tokens principales cuyos términos de entropía suman ≤ h × H (de los 100 primeros), en (0, 1]; 0 = desactivado
knob-label-mirostat = Mirostat
knob-help-mirostat = 0 = desactivado, 1 o 2: la versión de mirostat, que sustituye a la cadena (de llama.cpp)
knob-label-mirostat-tau = Mirostat τ
knob-help-mirostat-tau = la sorpresa objetivo en bits, > 0 (5 por defecto en llama.cpp)
knob-label-mirostat-eta = Mirostat η
knob-help-mirostat-eta = la tasa de aprendizaje de μ, en (0, 1] (0,1 por defecto en llama.cpp)
knob-label-mirostat-m = Mirostat m
knob-help-mirostat-m = versión 1: cuántos tokens principales estiman el exponente de Zipf, ≥ 2 (100 en llama.cpp)
knob-label-adaptive-p-target = Objetivo de adaptive-p
knob-help-adaptive-p-target = la probabilidad que deberían tener de media los tokens elegidos, en [0, 1]; negativo = desactivado (-1 en llama.cpp)
knob-label-adaptive-p-decay = Decaimiento de adaptive-p
knob-help-adaptive-p-decay = cuánto de la media conserva cada paso, en [0; 0,99] (0,9 en llama.cpp)
knob-label-constraint = Restricción
knob-help-constraint = KIND:SOURCE, con KIND uno de regex, json_schema, grammar (GBNF) o lark: solo quedan los tokens que mantienen el texto dentro del lenguaje (none = desactivado)
knob-label-max-tokens = Máximo de tokens
knob-help-max-tokens = parar tras este número de tokens nuevos
knob-label-stop = Secuencias de parada
knob-help-stop = parar cuando el texto generado la contenga; una por línea o repetida
knob-label-seed = Semilla
knob-help-seed = la semilla de la moneda: misma semilla, mismos tokens
knob-label-profile = Perfil
knob-help-profile = lesson, hf, llama.cpp u openai: de quién seguir el orden de etapas, las reglas de los bordes y los valores por defecto
knob-label-order = Orden de la cadena
knob-help-order = las etapas de la cadena en orden, separadas por comas
knob-label-strategy = Estrategia
knob-help-strategy = sample, voraz o beam
knob-label-beams = Anchura del haz k
knob-help-beams = hipótesis conservadas en cada paso, 1..=16
knob-label-length-penalty = Penalización por longitud
knob-help-length-penalty = de Hugging Face: score = sum_logprobs / length^length_penalty
knob-label-early-stopping = Parada temprana
knob-help-early-stopping = parar en cuanto k hipótesis hayan terminado (true) o cuando ningún haz pueda superarlas
knob-label-num-return = Secuencias devueltas
knob-help-num-return = cuántas secuencias terminadas devolver (≤ anchura del haz)

## La cadena de muestreo

chain-mini = { $stage }: { $kept } tokens conservados, { $removed } eliminados; barras grises antes de la etapa, azules después (escala de raíz cuadrada)
chain-hint = Las etapas se ejecutan de arriba abajo. Arrastra una etapa, o usa ↑ ↓, para reordenarlas; el perfil fija el orden por defecto y las reglas de los bordes. La gráfica de cada etapa:
chain-replaced-by = sustituida por { $stage }
chain-off = desactivada
chain-default-of = { $setting } (por defecto de { $profile })
chain-kept = { $kept } conservados
chain-kept-removed = { $kept } conservados, −{ $removed }
chain-move-earlier = Mover { $stage } antes
chain-move-later = Mover { $stage } después
chain-states-title = El estado de las etapas a lo largo de los pasos
chain-states-heading = Estado a lo largo de los pasos

## La ayuda de los atajos de teclado (SHORTCUT_HELP, por clave)

help-close = Cerrar
shortcut-or = o
shortcut-step = avanzar un token (un nivel de haz en la búsqueda en haz)
shortcut-run = ejecutar / pausar
shortcut-rewind = retroceder un token
shortcut-reset = volver al prompt
shortcut-temperature = enfocar el control deslizante de la temperatura (luego ← → para moverlo)
shortcut-top-k = enfocar top-k
shortcut-scale = alternar probabilidad / log-probabilidad
shortcut-lesson = paso siguiente / anterior del recorrido de la lección (lo abre)
shortcut-tab = moverse entre los controles
shortcut-help = mostrar esta ayuda
shortcut-escape = cerrar esta ayuda; salir de un campo de texto

## Guardar una gráfica (export-what-<name>: la gráfica de cada llamada)

export-group = Exportar { $what }
export-svg-label = Exportar SVG: { $what }
export-png-label = Exportar PNG: { $what }
export-svg = Exportar SVG
export-what-kv = la caché KV
export-what-chain = las gráficas de las etapas
export-what-stage-states = el estado de las etapas a lo largo de los pasos
export-what-throughput = el rendimiento y el modelo roofline
export-what-serving = las líneas de tiempo del servicio
export-what-spec = la p y la q del último ciclo
export-what-quant = las cuatro precisiones
export-what-beam-tree = el árbol de haces
export-what-compare = las columnas comparadas
export-what-distribution = la distribución del siguiente token
export-what-toy = la distribución de juguete
