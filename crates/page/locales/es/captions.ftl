# es: the captions area (see ../en/page.ftl for the conventions).
# Los textos del recorrido de la lección: un mensaje por frase (o por rama de una); el código los une con un espacio. Sus números llegan ya formateados y se muestran como las cifras del texto, allí donde el mensaje los ponga.

## Unidades de las cifras

caption-unit-rate = { $rate } tokens/s
caption-unit-bytes = { $bytes } bytes

## §1 El bucle de generación

caption-loop = Cada paso propaga el contexto —ahora { $context } tokens— hasta los logits z de su última posición. Con la caché KV (§4) solo el token más reciente atraviesa las capas; los otros { $cached } se leen de la caché. Después p̂ = softmax(z/T), se elige un token y se añade. El último paso sacó { $piece } con p̂ = { $last_prob }; el siguiente saca de entre { $kept } tokens, el más probable { $top } con { $next_top }. Ni pérdida ni gradiente: θ solo se lee.

## §2 Estrategias de decodificación

caption-greedy-vs-beam-better = La decodificación voraz toma el argmax en cada paso, y su secuencia tiene Σ log p = { $greedy_logprob }; la búsqueda en haz (k = { $width }) conserva los mejores prefijos y encuentra Σ log p = { $beam_logprob } sobre los mismos { $depth } tokens: una secuencia más probable que las primeras elecciones de la voraz descartaron. Voraz localmente ≠ óptimo globalmente.
caption-greedy-vs-beam-same = La decodificación voraz toma el argmax en cada paso, y su secuencia tiene Σ log p = { $greedy_logprob }; la búsqueda en haz (k = { $width }) conserva los mejores prefijos y encuentra Σ log p = { $beam_logprob } sobre los mismos { $depth } tokens: aquí la búsqueda en haz no encontró nada más probable que el propio camino de la voraz. En este prompt lo localmente voraz es globalmente óptimo; no tiene por qué serlo.
caption-beam-bland-beam = La búsqueda en haz (k = { $width }) escribió { $tokens } tokens con un −log p̂ medio de { $beam_surprisal } nats por token.
caption-beam-bland-beam-loop = La búsqueda en haz (k = { $width }) escribió { $tokens } tokens con un −log p̂ medio de { $beam_surprisal } nats por token, y una frase de { $loop_period } tokens se repite { $loop_repeats } veces.
caption-beam-bland-samples = Dos muestras del mismo prompt con T = 1 (semillas 0 y 1): { $sample_surprisal_a } y { $sample_surprisal_b } nats por token.
caption-beam-bland-bland = La secuencia de mayor probabilidad es la más predecible, la más genérica: buena para tareas cerradas, sosa para las abiertas.
caption-beam-bland-not = Aquí el texto del haz es más o menos igual de sorprendente que el de las muestras, así que este prompt no muestra esa sosería.
caption-tail-fat = El muestreo saca y ~ p̂. Aquí los { $tail_tokens } tokens fuera de los 10 primeros reúnen { $tail_mass } de la masa: cada uno improbable, juntos no despreciables; es la cola que de vez en cuando produce una elección incoherente, y lo que recortan top-k, top-p y min-p.
caption-tail-thin = El muestreo saca y ~ p̂. Aquí los { $tail_tokens } tokens fuera de los 10 primeros reúnen { $tail_mass } de la masa: el modelo está seguro en esta posición, así que aquí la cola apenas importa; sí importa donde la distribución es plana.

## §3 Temperatura, top-k, top-p, penalizaciones

caption-temperature = p̂(T) = softmax(z/T) con z = [2; 1; 0,1]: la masa del token más probable es { $t1 } con T = 1, { $t05 } con T = 0,5 (más aguda) y { $t2 } con T = 2 (más plana). Los mismos pesos, leídos con otra ponderación.
caption-temperature-erratum = (La lección dice ≈ 0,84 con T = 0,5: es un error de la lección.)
# La cláusula de top-k y luego la de top-p (que empieza con su propio "; ").
caption-topk-fixed = En { $steps } pasos, top-k 40 conservó exactamente { $k_min } tokens en cada paso (una k fija)
caption-topk-range = En { $steps } pasos, top-k 40 conservó entre { $k_min } y { $k_max } tokens (menos solo donde a la cadena le quedaban menos)
caption-topp-adapts = ; top-p 0,9 conservó entre { $p_min } y { $p_max }: estrecho cuando un token domina, amplio cuando la distribución es plana.
caption-topp-steady = ; top-p 0,9 conservó entre { $p_min } y { $p_max }: en este texto la seguridad del modelo apenas varió, y tampoco el conjunto de top-p.
caption-penalty-loop = La voraz sola: una frase de { $loop_period } tokens se repite { $loop_repeats } veces.
caption-penalty-no-loop = La voraz sola: ningún bucle (repeticiones: { $loop_repeats }).
caption-penalty-penalized-loop = La voraz con una penalización por repetición de 1,3 (los logits de los tokens recientes divididos o multiplicados por 1,3): se repite { $penalized_repeats } veces.
caption-penalty-penalized-no-loop = La voraz con una penalización por repetición de 1,3 (los logits de los tokens recientes divididos o multiplicados por 1,3): ninguna frase repetida (repeticiones: { $penalized_repeats }).
caption-penalty-curbed = La penalización frenó el bucle.
caption-penalty-nothing = En este prompt no hay bucle que la penalización tenga que frenar.

## §4 La caché KV, prellenado y decodificación, memoria KV

caption-kv-cache-clear = Medido en n = { $n }: con la caché un paso cuesta { $cached_ms } ({ $cached_macs } multiplicaciones-sumas), volver a ejecutar el prefijo { $naive_ms } ({ $naive_macs }): { $ratio } el tiempo. Las claves y los valores pasados nunca cambian, así que se guardan.
caption-kv-cache-unclear = Medido en n = { $n }: con la caché un paso cuesta { $cached_ms } ({ $cached_macs } multiplicaciones-sumas), volver a ejecutar el prefijo { $naive_ms } ({ $naive_macs }): { $ratio } el tiempo: con esta longitud el prefijo es demasiado corto para que la diferencia se note en esta máquina, aunque la aritmética crece como n² frente a n.
caption-prefill-decode-measured = Con pesos aleatorios de la forma de 15M ({ $weight_bytes } de pesos f32, creados por el worker para esta medición: un modelo de 1 MB como stories260K se queda en la caché junto al núcleo, donde la decodificación nunca espera a la memoria), un prompt de { $prompt_tokens } tokens y luego { $gen_tokens } tokens, cada uno cronometrado { $reps } veces (mediana, y la mitad central de las ejecuciones): el prellenado procesó el prompt en una pasada de muchas filas a { $prefill_rate } ({ $prefill_low }–{ $prefill_high }); la decodificación hizo una pasada por token contra la caché a { $decode_rate } ({ $decode_low }–{ $decode_high }): { $ratio }.
caption-prefill-decode-roofline = El roofline de los picos medidos de esta máquina (cresta en { $ridge } FLOP por byte) sitúa la decodificación en { $decode_intensity } y el prellenado en { $prefill_intensity } FLOP por byte, y predice { $predicted }.
caption-prefill-decode-regime = El prellenado está limitado por el cómputo (los pesos de cada capa, leídos una vez, sirven a todas las filas del prompt), la decodificación por el ancho de banda (cada lectura de pesos sirve a una sola fila).
caption-prefill-decode-within-spread = Con esta carga los dos quedan dentro de su dispersión: no se afirma ningún régimen.
caption-prefill-decode-same-side = El prellenado es claramente más rápido, pero en el techo medido de esta máquina ambas fases quedan del mismo lado de la cresta: no se afirma ningún régimen.
caption-prefill-decode-short-of-roof = El prellenado es claramente más rápido, pero mucho menos de lo que predice el techo: no se afirma ningún régimen.
caption-kv-memory = bytes = 2 × n × N_layers × d × bytes/elem: este modelo en n = { $n } ocupa 2 × { $n2 } × { $layers } × { $kv_dim } × 4 (float32) = { $bytes }.
caption-kv-memory-presets = { $mha_model } en n = 4096 en { $elem_bytes } (la calculadora de abajo): { $l2_bytes }; { $gqa_model } comparte cada cabeza K/V entre { $group } cabezas de consulta: { $gqa_bytes } en lugar de { $gqa_mha_bytes }; con MQA (una sola cabeza K/V) { $mha_model } ocuparía { $mqa_bytes }.

## §5 Decodificación especulativa, cuantización, procesamiento por lotes

caption-speculative = Un borrador q8 propuso γ = { $gamma } tokens por ciclo; el modelo objetivo los verificó en una pasada de γ + 1 filas, aceptando con una α medida = { $alpha }: { $tokens_per_call } tokens por llamada al objetivo, frente a (1 − α^(γ+1))/(1 − α) = { $formula }. La distribución de salida es exactamente la del objetivo.
caption-quantization = El mismo θ guardado en { $f32_bytes } (f32), { $q8_bytes } (8 bits) y { $q4_bytes } (4 bits); aquí KL(p_f32 ‖ p_q8) = { $kl_q8 } y KL(p_f32 ‖ p_q4) = { $kl_q4 } nats. Cambia la representación de θ, no sus valores aprendidos.
caption-quantization-shape = Un paso de decodificación con los pesos aleatorios de la forma de 15M ({ $shape_f32_bytes } en f32: un modelo que no cabe en la caché) tardó { $shape_f32_ms } en f32, { $shape_q8_ms } en q8, { $shape_q4_ms } en q4 y { $shape_f16_ms } en f16.
caption-quantization-ratio = q8 lee { $bytes_ratio } menos bytes que f32 y corrió a { $speed_ratio } su velocidad:
caption-quantization-shorter-wait = donde un paso de decodificación espera a la memoria, menos bytes son una espera más corta (en el modelo cargado, cuyos pesos se quedan en la caché, q8 no es más rápido).
caption-quantization-fast-in-cache = q8 es claramente más rápido también en el modelo cargado, cuyos pesos se quedan en la caché, así que el ahorro en bytes no se distingue de la aritmética int8: no se afirma ningún ahorro.
caption-quantization-not-apart = con esta carga los pasos no se separan claramente, así que no se afirma ningún ahorro.
caption-quantization-f16 = f16 reduce los bytes a la mitad pero fue más lento: el WebAssembly de la página no tiene aritmética de media precisión, así que cada peso se amplía a f32 al leerlo.
# Las velocidades de cada tamaño de lote, una lista (sus elementos unidos con una coma).
caption-batching = Decodificar B secuencias por pasada (cada una cronometrada { $reps } veces; mediana, y la mitad central de las ejecuciones): { $rates }. B = { $b_most } dio { $gain } los tokens de B = 1.
caption-batching-rate = B = { $b }: { $rate } ({ $low }–{ $high })
caption-batching-amortizes = Cada pasada leyó los pesos una vez para todas las filas: el procesamiento por lotes amortiza las lecturas de pesos que limitan la decodificación.
caption-batching-little-gain = Aquí apenas hay ganancia: los pesos de este modelo se quedan en la caché de la CPU, así que una pasada no espera a la memoria y no hay lectura que amortizar. Con Llama-2-7B en una H100 (el roofline de abajo), la decodificación con B = 1 queda muy por debajo de la cresta: allí el procesamiento por lotes compensa.

## §6 El mismo θ, la taxonomía

caption-same-theta-wild = Los mismos { $params } parámetros [LEARNED], dos configuraciones [CONFIG]: los tokens de la voraz salieron con un −log p̂ medio = { $surprise_a } nats (siempre el más probable: escueto y determinista), los de T = 1,5 con top-p 0,98 con { $surprise_b } (desatado). Los parámetros son el modelo; la configuración es cómo lo ejecutas.
caption-same-theta-similar = Los mismos { $params } parámetros [LEARNED], dos configuraciones [CONFIG]: los tokens de la voraz salieron con un −log p̂ medio = { $surprise_a } nats (siempre el más probable: escueto y determinista), los de T = 1,5 con top-p 0,98 con { $surprise_b }. Aquí las dos configuraciones escribieron textos igual de predecibles; la diferencia se ve en ejecuciones más largas.
caption-taxonomy = Toda cantidad de esta página es de una de tres clases: { $learned } [LEARNED] (θ, congelados), { $config } [CONFIG] (elegidos) y { $state } [STATE] (transitorios). El entrenamiento escribe, la inferencia lee.

## Lo que espera un texto ("Esperando …")

lesson-waiting = Esperando { $what }…
caption-wait-transcript = la transcripción
caption-wait-distribution = la distribución
caption-wait-token = un token generado
caption-wait-beam = el árbol del haz
caption-wait-beam-tokens = los tokens del haz
caption-wait-columns = las columnas
caption-wait-columns-steps = los pasos de las columnas
caption-wait-column = una columna
caption-wait-step = un paso
caption-wait-toy-logits = los logits de juguete
caption-wait-toy = la distribución de juguete
caption-wait-measurement = la medición
caption-wait-a-measurement = una medición
caption-wait-length = una longitud medida
caption-wait-b1 = la medición con B = 1
caption-wait-batches = cada tamaño de lote
caption-wait-batch = un tamaño de lote
caption-wait-peaks = los picos de la máquina
caption-wait-model = el modelo
caption-wait-spec = la ejecución especulativa
caption-wait-cycle = un ciclo
caption-wait-precisions = las cuatro precisiones
caption-wait-shape = los pasos de decodificación de la forma de 15M

## Las preguntas de las comprobaciones en clase

lesson-question-loop = La decodificación voraz (T = 0) escribe siempre la favorita del modelo; el muestreo saca de toda la distribución. Adivina la siguiente palabra: ¿la escribiría la voraz, y qué probabilidad tendría una muestra de escribirla?
lesson-question-temperature = Con T = 0,5 las favoritas se llevan más masa; con T = 1,5, la cola. Adivina la siguiente palabra y compara la p de tu apuesta (T = 1) con su q a T = 0,5.
lesson-question-topk-topp = Top-p 0,9 conserva los menos tokens posibles cuyas probabilidades suman 0,9. Adivina la siguiente palabra: ¿está en el conjunto conservado o recortada (✕ top_p)?
lesson-question-penalty = La voraz ha caído en un bucle. Adivina el siguiente token: el modelo está más seguro del bucle en cada vuelta. Luego pon una penalización por repetición (1,3) y observa q.
