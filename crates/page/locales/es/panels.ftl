# es: el área de los paneles (convenciones en ../en/page.ftl): comparación, búsqueda por haces,
# la caché KV y el interior del paso, decodificación especulativa, cuantización, batching, la
# restricción. Las cifras llegan ya formateadas; los nombres (GQA, MQA, KV, f32…) no cambian.

## Común

panel-bytes = { $n } bytes

## Mismo θ, distinta configuración

compare-note = Pesos idénticos, configuración distinta: cada columna es su propia secuencia y su propia caché KV del único modelo cargado, desde el prompt de la transcripción; sus tokens más recientes pasan por el modelo en una sola pasada. Los parámetros son el modelo; la configuración es cómo lo ejecutas.
compare-preset = Preajuste
compare-choose = elige un preajuste…
compare-preset-terse-wild = conciso y determinista (voraz) frente a libre y creativo (T = 1,5, top-p 0,98)
compare-preset-profiles = hf frente a llama.cpp con los mismos controles (sus órdenes no coinciden)
compare-preset-k-vs-p = top-k 40 frente a top-p 0,9 (tamaño de conjunto rígido frente a adaptativo)
compare-preset-samplers-2026 = los muestreadores de 2026 en la cadena de llama.cpp: penalización por repetición 1,3, DRY 0,8, XTC 0,5, mirostat 2 (τ = 3)
compare-preset-constrained = el mismo prompt sin y con un JSON Schema (un personaje de cuento)
compare-start = Empezar
compare-step = Avanzar todas
compare-step-10 = Avanzar todas ×10
compare-add = Añadir una columna
compare-column-knobs = Parámetros de la columna { $n }
compare-remove = Quitar la columna { $n }
compare-from = Desde
compare-columns = — { $n } columnas; controles que difieren: { $knobs }
compare-none = ninguno
compare-off = desactivado
compare-column = Columna { $n }
compare-stats = { $tokens } tokens, Σ log p { $logp }; siguiente: entropía { $entropy } nats sobre { $kept } tokens conservados
compare-top-label = distribución del siguiente token de la columna { $n }

## Búsqueda por haces

beam-tree-caption = el árbol: cada prefijo conservado o podado, Σ log p en cada nodo
beam-tree-region = el árbol de haces, desplazable
beam-early-stopping = parada temprana
beam-use = Usar búsqueda en haz
beam-step = Avanzar los haces
beam-restart = Reiniciar
beam-example = Ejemplo: { $prompt }, { $steps } pasos
beam-hyp = puntuación { $score } (log p { $logp }): { $text }
beam-hyp-ended = puntuación { $score } (log p { $logp }, terminada): { $text }
beam-compare = Tras { $depth } tokens: log p del mejor haz = { $best }; log p del camino voraz = { $greedy }
beam-compare-better = Tras { $depth } tokens: log p del mejor haz = { $best }; log p del camino voraz = { $greedy } — el haz encontró una secuencia más probable que voraz
beam-greedy = Voraz: { $text }
beam-greedy-pruned = Voraz (sus primeros { $n } tokens están en el árbol; después la búsqueda en haz lo podó: la fila discontinua bajo el árbol): { $text }
beam-best = Mejor haz (el de la transcripción): { $text }
beam-count = { $nodes } nodos; gris discontinuo: podado; con anillo: terminado
beam-count-done = { $nodes } nodos, búsqueda terminada; gris discontinuo: podado; con anillo: terminado

## La caché KV

kv-waiting-model = Esperando al modelo…
kv-sharing = cabeza K/V { $kv } ← cabezas de consulta { $queries }
kv-grid-caption = la caché: una fila por capa, una celda por posición en caché
kv-positions = { $n } de { $seq } posiciones: los { $prompt } tokens del prompt y { $cached } de los { $generated } generados
kv-positions-waiting = { $n } de { $seq } posiciones: los { $prompt } tokens del prompt y { $cached } de los { $generated } generados (el token más reciente entra en la caché cuando se calcula el siguiente: su K y su V salen del paso que lo lee)
kv-gqa = Atención de consultas agrupadas: { $heads } cabezas de consulta comparten { $kv } cabezas K/V ({ $ratio }× menos claves y valores que una por cabeza).
kv-formula-caption = bytes = 2 × n × N_layers × d_kv × bytes/elem (el 2 son K y V; float32 = 4 bytes)
kv-per-token = por token
kv-used = usados
kv-allocated = reservados
kv-without-gqa = sin GQA
kv-engine = (motor: { $bytes } bytes)
kv-weights-row = pesos ({ $precision })
kv-weights = { $weights } bytes; con la caché reservada, { $total } bytes.
kv-cache-f32 = La caché es float32, como los pesos.
kv-cache-quantized = Aquí la cuantización solo cambia los pesos: K y V siguen en float32, así que con contextos largos domina la caché, no los pesos (llama.cpp también puede guardarla en 8 bits: --cache-type-k q8_0).
kv-compare-heading = Con la caché y sin ella
kv-compare-hint = Cada paso con la caché calcula Q, K y V solo para el token nuevo y atiende a n claves en caché: O(n·d). Sin ella, todo el prefijo se vuelve a ejecutar: O(n²·d). Aquí «sin» vuelve a ejecutar el prefijo de n tokens como un lote sobre una secuencia nueva, y sus claves y valores se descartan tras el paso.
kv-measure = Medir en este backend
kv-measuring = Midiendo en este backend…
kv-col-cached-ms = ms/token, con caché
kv-col-naive-ms = ms/token, sin caché
kv-col-ratio = razón
kv-col-cached-macs = multiplicaciones-sumas, con caché
kv-col-naive-macs = multiplicaciones-sumas, sin caché
kv-compare-region = la comparación de la caché, desplazable
kv-col-read = bytes que lee un paso con caché
kv-col-model-ms = modelo de ancho de banda, ms
kv-col-over-model = con caché / modelo
kv-bandwidth = El modelo: un paso con caché lee todos los pesos y la K y la V de n posiciones (2 × n × capas × d_kv × 4 bytes, la fórmula de arriba), así que tarda al menos esos bytes ÷ el ancho de banda de lectura, { $gbs } GB/s, medido aquí leyendo los propios pesos del modelo en los hilos del motor. Cerca de 1× un paso espera a la memoria; muy por encima, a la aritmética o al reparto entre hilos.
kv-bandwidth-gpu = En el backend de GPU no se dibuja modelo de ancho de banda (el ancho de banda de la CPU no lo limita).
kv-calc-bad-batch = { $text } no es un tamaño de lote (de 1 a { $most })
kv-calc-bad-positions = { $text } no es una longitud de contexto (de 1 a { $most })
kv-calc-heading = Calculadora
kv-calc-model = Modelo
kv-calc-loaded = { $name } ({ $kind }; cargado en esta página)
kv-calc-positions = Longitud de contexto n
kv-calc-batch = Tamaño de lote B
kv-calc-precision = Precisión
kv-calc-f32 = float32 (4 bytes)
kv-calc-f16 = float16 o bfloat16 (2 bytes)
kv-calc-int8 = int8 (1 byte)
kv-calc-formula = { $name }: 2 × { $n } × { $layers } capas × { $d_kv } (d_kv = { $kv_heads } cabezas K/V × { $head_dim }) × { $bytes } = { $total } bytes =
kv-calc-sharing = compartición
kv-calc-kv-heads = cabezas K/V
kv-calc-cache = caché
kv-calc-mha-this = MHA (una K/V por cabeza de consulta; este modelo)
kv-calc-mha = MHA (una K/V por cabeza de consulta)
kv-calc-this-model = { $kind } (este modelo)
kv-calc-mqa-this = MQA (una K/V para todas; este modelo)
kv-calc-mqa = MQA (una K/V para todas)
kv-calc-weights-heading = Los pesos frente a la caché de un lote
kv-calc-weights = pesos ({ $params } parámetros × { $bytes })
kv-calc-cache-batch = caché KV × B = { $batch }
kv-calc-crossover = Aquí la caché es el { $share } % de pesos + caché. Con B = { $batch }, las cachés superan a los pesos a partir de n = { $n } (B × 2 × n × N_layers × d_kv elementos > { $params } parámetros): con n largos, y más aún con muchas secuencias, la caché domina la memoria de la inferencia.

## Dentro del paso

inside-heading = Dentro del paso
inside-hint = Cada paso de decodificación calcula Q, K y V solo para el token nuevo, añade su K y su V y atiende contra la caché: una consulta por cabeza frente a n claves en caché. La sonda registra los pesos que usó la propia pasada del paso y el flujo residual tras cada capa.
inside-stop = Dejar de sondear
inside-show = Mostrar la atención del token nuevo y la lente de logits
inside-probing = Sondeando el paso más reciente…
inside-cost = El token en la posición { $pos } ({ $token }) atiende a n = { $n } posiciones en caché:
inside-cost-dots = { $n } productos escalares de tamaño { $size } por cabeza
inside-cost-total = , × { $heads } cabezas × { $layers } capas = { $macs } multiplicaciones-sumas para las puntuaciones, y otras tantas para mezclar los valores; n crece en uno cada paso.
inside-recorded-step = Registrado en la propia pasada hacia delante de este paso; sonda y lente { $ms } ms.
inside-recorded-probe = Registrado con una pasada sondeada sobre la secuencia (la vista se abrió después del paso, o hubo un retroceso); sonda y lente { $ms } ms.
inside-readout = capa { $layer }, cabeza { $head } (cabeza K/V { $kv }): { $weight } de su atención sobre { $token } en la posición { $pos }
inside-grid-summary = atención del token en la posición { $pos } sobre { $n } posiciones en caché, { $layers } capas × { $heads } cabezas ({ $kv } cabezas K/V)
inside-grid-summary-last = atención del token en la posición { $pos } sobre { $n } posiciones en caché (se dibujan las últimas { $cols }), { $layers } capas × { $heads } cabezas ({ $kv } cabezas K/V)
inside-grid-note = Cada fila son los pesos softmax de una cabeza de consulta sobre las posiciones en caché (tono ∝ √peso, para que se vean también los pesos pequeños); las cabezas que leen la misma cabeza K/V van juntas (atención de consultas agrupadas: { $per } por cabeza K/V). Las flechas mueven la lectura.
inside-grid-last = Se dibujan las últimas { $cols } de { $n } posiciones.
inside-position = posición { $pos }
inside-lens-cell = capa { $layer } en la posición { $pos }: { $token } con p = { $p }
inside-final = L{ $layer } (final)
inside-lens-heading = La lente de logits
inside-lens-note = La lente de logits en bruto: la normalización final y el clasificador aplicados a capas intermedias, algo para lo que el modelo no se entrenó.
inside-lens-cells = Cada celda: el siguiente token más probable de esa capa tras el token de la columna, y su probabilidad (T = 1); la fila superior es la distribución del propio modelo.
inside-lens-region = la lente de logits, capa por posición
inside-after = tras →
inside-lens-last = Tras { $token } (posición { $pos }): la distribución de cada capa, y KL(p_final ‖ p_layer) en nats
inside-col-layer = capa
inside-col-kl = KL a la final
inside-col-top = más probables

## Decodificación especulativa

spec-kind-accepted = borrador aceptado
spec-kind-resampled = remuestreado de max(0, p − q)
spec-kind-target = el token del propio modelo
spec-kind-bonus = token extra de p
spec-draft = Borrador
spec-draft-q8 = quant:q8 — los mismos pesos en 8 bits
spec-draft-q4 = quant:q4 — los mismos pesos en 4 bits
spec-draft-exit = exit:{ $k } — las primeras { $k } de { $layers } capas
spec-draft-ngram-1 = ngram:1 — búsqueda en el prompt, último token
spec-draft-ngram = ngram:{ $n } — búsqueda en el prompt, últimos { $n } tokens
spec-gamma = γ (borradores por ciclo)
spec-rule = Regla
spec-rule-rejection = rejection: aceptar con min(1, p/q)
spec-rule-match = match: conservar los borradores iguales al token del propio modelo
spec-start = Empezar desde el prompt
spec-one = Un ciclo
spec-ten = 10 ciclos
spec-empty = Empieza una ejecución: el borrador propone γ tokens y el modelo los comprueba todos en una sola pasada hacia delante de γ + 1 filas.
spec-what-exit = Sus primeras capas son las del propio modelo, así que escribe en la caché KV del modelo: sin segunda caché ni prellenado propio (la pasada de verificación lleva luego esas posiciones por todas las capas).
spec-what-quant = Los mismos pesos aprendidos, cuantizados: su propia caché KV en la CPU, al paso del texto aceptado.
spec-what-ngram = La búsqueda en el prompt propone los tokens que siguieron a la última aparición de los últimos tokens del contexto; no tiene distribución, así que q es one-hot en su token.
spec-note = { $draft }, γ = { $gamma }, regla { $rule }. { $what } Los controles tal como estaban al empezar se aplican a p y q.
spec-note-greedy = { $draft }, γ = { $gamma }, regla { $rule } (voraz: un borrador se conserva mientras sea el argmax del modelo). { $what } Los controles tal como estaban al empezar se aplican a p y q.
spec-chip-title = ciclo { $cycle }: { $kind }
spec-rejected-title = el borrador rechazado
spec-accepted = aceptado
spec-rejected = rechazado
spec-resampled = remuestreado
spec-target = token del modelo
spec-bonus = extra
spec-forbidden = rechazado: la restricción prohíbe este borrador (p = 0 bajo su máscara)
spec-same = { $verdict }: el token del modelo es el mismo
spec-another = { $verdict }: el token del modelo es otro
spec-accept = { $verdict }: P(aceptar) = min(1, p/q) = min(1, { $p }/{ $q }) = { $chance }
spec-overlap-note = (la probabilidad de que aquí se acepte un borrador de q)
spec-cycle = Ciclo { $n }: { $drafted } propuestos, { $accepted } aceptados, después { $next }
spec-drafted = Propuestos:
spec-bars = Barras: p (el modelo) arriba, q (el borrador) abajo; la parte oscura es min(p, q); donde p es más larga, el resto es el residuo max(0, p − q) del que remuestrea un rechazo. ▸: el token propuesto.
spec-speed = { $speed }× la velocidad de la decodificación normal
spec-speed-slower = { $speed }× la velocidad de la decodificación normal: aquí es más lenta (el borrador y la pasada de verificación más ancha cuestan más que las pasadas ahorradas en un modelo tan pequeño)
spec-stats = Estadísticas acumuladas
spec-cycles = ciclos (pasadas de verificación)
spec-drafts-accepted = borradores aceptados
spec-alpha = α = media de Σ min(p, q)
spec-per-pass = tokens por pasada de verificación
spec-saved = pasadas del modelo ahorradas
spec-wall = tiempo real en este backend
spec-acceptance = { $accepted } de { $drafted } ({ $share } %)
spec-per-call = { $measured } medidos; (1 − α^(γ+1)) / (1 − α) = { $formula } (tomando las posiciones como independientes)
spec-saved-tokens = { $saved } de { $emitted } tokens no necesitaron una pasada propia
spec-wall-times = { $spec } ms por token especulativa, { $plain } ms normal: { $verdict }

## Cuantización

quant-running = Ejecutando las cuatro precisiones…
quant-note = Los mismos pesos θ guardados de cuatro maneras: cambia la representación, no los valores aprendidos. Tras los { $position } tokens de la transcripción, la distribución del siguiente token de cada precisión (softmax de sus logits, antes de la cadena de muestreo), en la CPU del worker de esta página, cada una con su propia caché KV. q8 y q4 también redondean las activaciones a int8, por grupos, una vez por matriz (como hace llama.cpp, en grupos de 32 o más; una matriz cuyas filas empiezan dentro de un grupo, como la w2 de stories260K, redondea cada fila con una sola escala), y multiplican int8 × int8; las normas siguen en f32. Bajo la KL de q8 y q4: los mismos pesos con activaciones f32.
quant-dequantized = Este archivo ya es q8: su «f32» son los pesos descuantizados.
quant-dequantized-file = Este archivo guarda sus propios bloques ({ $types }): su «f32» son esos pesos descuantizados y las cuatro precisiones se hacen a partir de él; su propia fila es la última.
quant-file = los bloques del archivo ({ $types })
quant-current = (el de la transcripción)
quant-decode-title = mediana de 5 rondas tras unos pasos de calentamiento; las tres centrales { $low }–{ $high } ms
quant-rate = { $rate } tokens/s · de { $low } a { $high }
quant-f32-acts-title = los mismos pesos con activaciones f32
quant-f32-acts = activ. f32:
quant-same = igual
quant-differs = distinto (id { $id })
quant-table-region = las cuatro precisiones, desplazable
quant-caption = Bytes de los pesos, un paso de decodificación medido y la distribución frente a la de f32
quant-col-precision = precisión
quant-col-bytes = bytes de los pesos
quant-col-smaller = menor
quant-col-decode = paso de decodificación (CPU)
quant-col-shape-title = pesos aleatorios con la forma 15M de llama2.c, creados por el worker: un modelo que no cabe en la caché
quant-col-shape = paso de decodificación, forma 15M
quant-col-kl = KL(p_f32 ‖ p), nats
quant-col-top = token principal frente a f32
quant-shape-note = La columna de la forma 15M: pesos aleatorios con la forma 15M de llama2.c ({ $bytes } en f32), creados por el worker para esta medida, un paso de decodificación en la posición { $position } (mediana de 5 rondas; las tres centrales).
quant-shape-cached = Los pesos de este modelo caben en las cachés de la CPU, donde un paso nunca espera a la memoria; los de la forma 15M no, así que su columna muestra lo que compran menos bytes.
quant-row-region = una fila de pesos antes y después, desplazable
quant-row-caption = { $row }: sus primeros pesos, antes y después
quant-row-error = Mayor error en toda la fila: f16 { $f16 }, q8 { $q8 }, q4 { $q4 }. La fila abarca { $q8_groups } grupos de q8 y { $q4_groups } grupos de q4.
quant-row-error-straddles = Mayor error en toda la fila: f16 { $f16 }, q8 { $q8 }, q4 { $q4 }. La fila abarca { $q8_groups } grupos de q8 y { $q4_groups } grupos de q4: empieza dentro de un grupo (los grupos recorren la matriz aplanada, tal como los escribe la exportación de llama2.c), y cada uno de sus pesos cuenta con la escala de su propio grupo.

## Procesamiento por lotes y los dos regímenes

batch-lanes-heading = B secuencias, una pasada
batch-lanes-note = Cada carril es el prompt con su propia semilla (el carril 0 tiene la semilla de la página, así que es el propio texto de la transcripción) y su propia caché KV; cada paso es una pasada hacia delante sobre B filas —un token de cada carril— que lee cada matriz de pesos una sola vez para todos.
batch-size = Tamaño de lote B
batch-tokens = Tokens por carril
batch-run = Ejecutar los carriles
batch-step = Avanzar todos los carriles
batch-lane-seed = carril { $lane } · semilla { $seed }
batch-stopped = detenido
batch-lanes-summary = { $batch } carriles: prellenado de { $batch } × { $prompt } filas del prompt en una pasada ({ $prefill } ms), después { $passes } pasadas de ≤ { $batch } filas, { $pass } ms por pasada — { $rate } tokens/s para todos los carriles juntos.
batch-tp-heading = Rendimiento frente al tamaño de lote, y el modelo roofline
batch-tp-note = Medido aquí, ahora, en el backend en uso: B prompts de { $prompt } tokens con prellenado en una pasada, después { $gen } pasadas de decodificación de B filas, cada tamaño de lote repetido (la mediana, y la mitad central de las ejecuciones). El worker también mide los techos de esta máquina con los propios kernels del motor: el producto de la decodificación recorriendo una matriz del tamaño de los pesos, y un producto por lotes dentro de la caché.
batch-measure = Medir B = 1, 2, 4, 8, 16
batch-measuring = Midiendo en este backend…
batch-split-heading = En qué se va el tiempo de un token decodificado en esta GPU
batch-split-note = Una GPU ejecuta un paso de decodificación como una cola de kernels. Cada lanzamiento cuesta su propio tiempo, haga lo que haga el kernel; el «la decodificación está limitada por el ancho de banda» de la lección solo se cumple cuando esos lanzamientos son baratos al lado de las lecturas de pesos de los kernels. Con marcas de tiempo de GPU alrededor de cada kernel, el worker divide el tiempo real de 16 pasos de decodificación en el tiempo de GPU de los kernels y el resto.
batch-split-measure = Cronometrar los kernels de la GPU
batch-split-waiting = Cronometrando 16 pasos de decodificación…
batch-why-little-cached = Poca ganancia aquí ({ $gain }×, dentro de la dispersión de las ejecuciones o por debajo de 1,3×): los pesos ({ $bytes }) están en las cachés de la CPU, así que una pasada no espera a la memoria y no hay lectura que compartan B filas. El batching compensa donde una lectura de pesos desde la memoria sirve a muchas filas: un modelo cuyos pesos no caben en las cachés, o una GPU.
batch-why-little = Poca ganancia aquí ({ $gain }×, dentro de la dispersión de las ejecuciones o por debajo de 1,3×) en el backend { $backend }.
batch-why-gain-cached = Los pesos ({ $bytes }) están en las cachés de la CPU, así que ninguna pasada espera a la memoria por ellos: la ganancia de la decodificación viene aquí de leer cada fila de pesos una vez para las B filas y de repartir los costes fijos de cada pasada (los bucles de las capas, las normas, los relevos entre núcleos) entre B filas.
batch-why-gain = Los pesos ({ $bytes }) no caben en las cachés: cada pasada los lee de la memoria, y B filas comparten cada lectura; la ganancia de la decodificación viene de compartir las lecturas de pesos.
batch-measured-on = Medido con { $model } ({ $bytes }).
batch-model-15m = pesos aleatorios con la forma 15M (dim 288, 6 capas, vocabulario de 32.000), creados por el worker para esta medida
batch-tp-summary = Decodificación de { $first } → { $last } tokens/s de B = 1 a B = { $batch } ({ $gain }×) en el backend { $backend }; prellenado { $prefill_first } → { $prefill_last } (su única pasada ya tenía muchas filas).
batch-col-runs = ejecuciones
batch-col-prefill = prellenado tokens/s (mitad central)
batch-col-decode = decodificación tokens/s (mitad central)
batch-under-measured = Un punto medido queda por encima del techo medido: el techo se midió por lo bajo (la máquina estaba ocupada mientras se sondeaba), así que no se dibuja. Vuelve a medir.
batch-below = por debajo de
batch-above = por encima de
batch-peaks = Esta máquina, medida por el worker ({ $threads } hilo) con los propios kernels del motor: el producto de la decodificación recorre { $bandwidth } GB/s sobre { $buffer } (el tamaño de los pesos de este modelo), el producto por lotes calcula { $flops }; cresta { $ridge } FLOP/byte. La decodificación con B = 1 hace { $intensity } FLOP por byte movido —{ $side } la cresta—; la única pasada de muchas filas del prellenado hace { $prefill }.
batch-machine-heading = Este modelo en esta máquina
batch-split-none = No se mide aquí: { $why }. Sin marcas de tiempo de GPU, el tiempo real del paso no se puede dividir en el tiempo de los kernels y el de los lanzamientos.
batch-split-summary = Un paso de decodificación (una fila, { $tokens } cronometrados) tardó { $wall } en tiempo real: la GPU estuvo ocupada en sus { $kernels } kernels durante { $busy } ({ $busy_share } %), y { $overhead } ({ $overhead_share } %) se fueron en lanzarlos, en las barreras entre ellos y en leer de vuelta los logits.
batch-launch-bound = Limitado por los lanzamientos: aquí la decodificación espera a los lanzamientos, no a la memoria. El «la decodificación está limitada por el ancho de banda» de la lección solo se cumple cuando los lanzamientos son baratos al lado de los kernels (menos despachos, fusionados; modelos más grandes).
batch-kernel-bound = Domina el tiempo propio de los kernels: aquí los lanzamientos son baratos a su lado, así que la velocidad de la decodificación es la de los kernels (en un adaptador por software la «GPU» es esta CPU, y sus kernels son código de CPU).
batch-launch-even = Lanzamientos y kernels se reparten el tiempo casi por igual (ninguno por 1,3×): se notarían tanto lanzamientos más baratos como kernels más rápidos.
batch-col-kernel = kernel
batch-col-dispatches = despachos por token
batch-col-gpu-time = µs de GPU por token
batch-col-share = parte del tiempo de GPU
batch-real-heading = La idea de la lección a escala real (calculada, no medida)
batch-h100-title = Llama-2-7B (fp16) en una H100
batch-real-scale = A escala real: Llama-2-7B en fp16 lee { $weights } de pesos, y su caché a 512 posiciones ({ $all } en total), en cada paso de decodificación. En una H100 (989 TFLOP/s, 3,35 TB/s: cresta { $ridge } FLOP/byte) una secuencia hace { $intensity } FLOP por byte, así que la memoria la limita a unos { $rate } tokens/s a { $flops }: el { $share } % de la aritmética. Solo unas { $rows } filas compartiendo cada lectura de pesos alcanzan la cresta; un prellenado de 512 tokens la supera con creces.
batch-serve-heading = Procesamiento por lotes continuo frente a estático
batch-serve-note = Una traza de peticiones con semilla (distintas longitudes de prompt y de salida, que llegan a lo largo del tiempo) a través de B ranuras en el motor real. Estático: un lote nuevo solo cuando ha terminado entero el anterior. Continuo (la planificación por iteración de Orca, como la hace vLLM): en cada paso salen las peticiones terminadas y las que esperan ocupan las ranuras libres, y su prellenado se une al paso.
batch-slots = Ranuras
batch-requests = Peticiones
batch-trace-seed = Semilla de la traza
batch-simulate = Simular el servicio
batch-serve-verdict = Los mismos { $tokens } tokens (los de cada petición, como si fuera sola): el procesamiento por lotes continuo necesitó { $continuous } pasadas donde el estático necesitó { $static } ({ $fewer } % menos), con las ranuras llenas al { $full } % frente al { $static_full } %. { $wall }
batch-serve-not-faster = En tiempo real aquí no es más rápido: en este backend una pasada cuesta en proporción a sus filas (un hilo calcula cada fila, y los pesos de un modelo pequeño están en caché), así que menos pasadas, más llenas, hacen el mismo trabajo. Su ganancia en tiempo real llega donde una pasada cuesta más o menos lo mismo tenga las filas que tenga: un modelo dominado por las lecturas de pesos, o la GPU.
batch-serve-faster = Las pasadas más llenas comparten los costes fijos y las lecturas de pesos de cada pasada, así que también es más rápido en tiempo real.
batch-serve-columns = Cada columna es un paso; un paso sin peticiones no es una pasada.
batch-serve-stats = { $tokens } tokens en { $passes } pasadas ({ $per_pass } tokens por pasada), ranuras ocupadas al { $occupied } %, { $rate } tokens/s; tiempo hasta el primer token { $ttft } ms, { $per_token } ms por token después (medias sobre las peticiones)

## La restricción

constraint-heading = Restricción
constraint-hint = La salida estructurada es una etapa más de la cadena: una máscara que conserva solo los tokens que pueden continuar el texto dentro de una regex, un JSON Schema o una gramática (compilada una vez por prompt por llguidance, en el worker).
constraint-presets = Preajustes:
constraint-preset-title = Prompt: { $prompt }
constraint-preset-yes-no = sí o no
constraint-preset-date = una fecha (regex)
constraint-preset-character = un personaje de cuento (JSON Schema)
constraint-preset-list = una lista (gramática GBNF)
constraint-kind = Tipo
constraint-kind-none = ninguna (desactivada)
constraint-kind-regex = regex
constraint-kind-json-schema = JSON Schema
constraint-kind-grammar = gramática GBNF (llama.cpp)
constraint-kind-lark = gramática Lark (llguidance)
constraint-apply = Aplicar
constraint-source = Fuente de la restricción
constraint-help = Ctrl+Intro aplica. GBNF tal como lo escribe llama.cpp: root ::= "yes" | "no".
constraint-z = Σ p sobre los permitidos
constraint-allowed = tokens permitidos
constraint-allowed-of = { $allowed } de { $vocab }
constraint-mask-time = tiempo de la máscara
constraint-position = posición
constraint-forbidden = ✕ restricción
constraint-pq-caption = Los tokens más probables del modelo: p al entrar en la etapa, q tras la máscara (barras en escala de raíz cuadrada)
constraint-col-token = token
constraint-caption-none = La restricción no permite ningún token aquí: la generación se detiene en lugar de muestrear de la nada.
constraint-caption-all = Z_t = { $z }: el modelo ya pone toda su probabilidad en texto que la restricción permite; la máscara no cambia nada aquí (q = p sobre { $allowed } tokens permitidos).
constraint-caption-agrees = Z_t = { $z }: el modelo está de acuerdo con la restricción; el { $removed } % de su probabilidad estaba en tokens prohibidos, y q = p / Z_t eleva cada token permitido en { $factor }×.
constraint-caption-removes = Z_t = { $z }: la restricción elimina el { $removed } % de la probabilidad del modelo; q = p / Z_t escala cada uno de los { $allowed } tokens permitidos en { $factor }×, así que el texto sigue lo que el modelo creía menos probable.
constraint-caption-fights = Z_t = { $z }: la restricción está luchando contra el modelo. El { $removed } % de su probabilidad estaba en tokens que la restricción prohíbe, y q = p / Z_t escala lo que creía casi imposible en { $factor }×: el texto sigue siendo válido pero va adonde el modelo no iría (de { $vocab } tokens, { $allowed } permitidos). Un prompt que prepare el formato eleva Z_t.
