# es: the figures area (see ../en/page.ftl for the conventions).
# Las palabras dibujadas dentro de las figuras (los gráficos y sus exportaciones): títulos, ejes, leyendas, descripciones emergentes. Los números llegan ya formateados; los nombres (top-k, min(p, q), p, q, B, n, θ, FLOP, KV, P1, D1) se quedan como están.

## La distribución del siguiente token
fig-dist-step-title = Distribución del siguiente token en el paso { $step }: entropía { $entropy } nats, { $kept } tokens conservados
fig-dist-toy-title = Distribución de juguete: entropía { $entropy } nats
fig-probability = probabilidad
fig-probability-log = probabilidad (escala logarítmica)
fig-token-ranked = token (el más probable primero)
fig-final-p = p final
fig-chosen = elegido
fig-p-before-removal = p antes de quitarlo
fig-top-p-sum = suma acumulada de top-p
fig-top-p-p = p de top-p

## Las etapas de la cadena de muestreo, las columnas comparadas
fig-chain-title = La cadena de muestreo, etapa por etapa
fig-stage-title = { $stage } ({ $setting }): { $kept } conservados
fig-token = token
fig-probability-sqrt = probabilidad (escala de raíz cuadrada)
fig-before = antes
fig-after = después
fig-neutral = Neutras aquí (sin cambios): { $stages }
fig-states-title = { $stage } a lo largo de los pasos
fig-step = paso
fig-value = valor
fig-columns-title = El mismo θ, otra configuración — controles que difieren: { $knobs }
fig-none = ninguno
fig-column-title = Columna { $column } ({ $knobs })
fig-defaults = valores por defecto
fig-column-summary = { $tokens } tokens; siguiente: entropía { $entropy } nats sobre { $kept } tokens conservados

## El árbol de la búsqueda en haz
fig-beam-title = Árbol de la búsqueda en haz: { $nodes } nodos en { $depth } niveles (Σ log p junto a cada nodo)
fig-beam-depth = profundidad → (tokens generados)
fig-beam-collapsed = … { $levels } niveles anteriores (su mejor camino es el comienzo de la transcripción)
fig-beam-greedy-tip = token { $n } del voraz: { $piece } — log p acumulado { $cum } (podado del haz)
fig-beam-node-tip = { $piece } — log p { $logp }, acumulado { $cum } ({ $status })
fig-beam-the-prompt = el prompt
fig-beam-prompt = prompt
fig-status-root = raíz
fig-status-beam = en el haz
fig-status-pruned = podado
fig-status-finished = terminado
fig-status-unfinished = sin terminar

## La caché KV
fig-kv-title = La caché KV
fig-kv-grid-title = La caché KV: { $n } de { $context } posiciones, { $layers } capas
fig-kv-bytes-title = Caché KV: 2 × n × { $layers } capas × { $dim } × 4 bytes; con n = { $n } ocupa { $bytes } bytes
fig-kv-x = posiciones en caché n
fig-bytes = bytes
fig-this-sequence = esta secuencia

## Decodificación especulativa, cuantización
fig-spec-title = Ciclo especulativo { $cycle }: { $accepted } de { $drafted } tokens del borrador aceptados (α = { $alpha })
fig-draft-title = Borrador { $draft }: { $piece }, Σ min(p, q) = { $overlap }
fig-residual = residuo { $residual }
fig-p-model = p (el modelo)
fig-q-draft = q (el borrador)
fig-quant-title = El mismo θ en cuatro precisiones, posición { $position }

## Procesamiento por lotes: rendimiento, el modelo roofline, las líneas de tiempo del servicio
fig-sweep-title = El procesamiento por lotes y los dos regímenes
fig-tp-title = Tokens por segundo según el tamaño de lote B ({ $backend })
fig-tp-x = tamaño de lote B (log₂)
fig-tp-y = tokens / s
fig-prefill = prellenado
fig-decode = decodificación
fig-tp-tip = B = { $b }: { $rate } tokens/s en { $phase }
fig-roof-machine-title = Roofline de esta máquina: cresta en { $ridge } FLOP/byte
fig-roof-x = intensidad aritmética, FLOP por byte (log)
fig-roof-y = FLOP / s (log)
fig-roof-tip = { $point }: { $intensity } FLOP/byte, { $flops } ({ $share } % del techo en ese punto)
fig-roof-prefill = prellenado con B (P…)
fig-roof-decode = decodificación con B (D…)
fig-roof-above = Un punto medido queda por encima del techo medido: el techo se midió por lo bajo, así que no se dibuja.
fig-ridge = cresta { $ridge }
fig-serve-title = Servicio de { $requests } peticiones a través de { $slots } ranuras
fig-timeline-title = { $policy }, { $slots } ranuras: { $passes } pasadas, ocupación { $occupancy } %
fig-policy-continuous = continuo
fig-policy-static = estático
fig-request = petición
fig-request-tip = petición { $id }: prompt de { $prompt } tokens, { $made } de { $asked } tokens; llegó en el paso { $arrival }, admitida en el { $admitted }, terminada en el { $finished }
fig-waiting = en espera
fig-prefill-joins = prellenado (se une a un paso)
