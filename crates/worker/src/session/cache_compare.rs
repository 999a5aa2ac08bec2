//! Decoding with the KV cache against re-running the prefix, measured on this backend:
//! the cached step computes the new token only; without the cache the whole n-token prefix
//! runs again as one batch on a fresh sequence. On the CPU each cached step is set against
//! its bandwidth model (`roofline::step_model`: the weights and n positions' K/V read at the
//! bandwidth of reading the model's own weights, measured here), the KV panel's measured line beside
//! lesson 10's formula.

use super::base::MEASURE_MS;
use super::base::{err, Core, Host};
use decoding_engine::serving::cost::StepMacs;
use decoding_engine::serving::roofline;
use decoding_engine::{Backend, BackendKind};
use decoding_page::protocol::*;

impl Core {
    /// Times one decode step with the cache against the same token computed without it (the
    /// prefix run again on a fresh sequence), at each length; counts their multiply-adds.
    pub(super) async fn cache_compare(
        &mut self,
        positions: &[usize],
        host: &dyn Host,
    ) -> Vec<Event> {
        let (Some(m), Some(engine)) = (&self.model, &mut self.engine) else {
            return vec![err("no model is loaded yet")];
        };
        let c = *m.config();
        let weight_bytes = m.transformer.weights.bytes(&c);
        let cpu = engine.report.kind == BackendKind::Cpu;
        let be = &mut *engine;
        let ids: Vec<u32> = (0..c.seq_len as u32)
            .map(|i| (i * 7919 + 3) % c.vocab_size as u32) // spread over the vocabulary (≥ 1 token)
            .collect();
        // Warm up first (the browser compiles hot wasm code again, faster, after a while).
        if let Ok(seq) = be.new_sequence() {
            let warm = ids.len().min(64);
            let _ = be.forward(seq, &ids[..warm], false).await;
            for &t in &ids[warm..warm + 16.min(ids.len() - warm)] {
                let _ = be.forward(seq, &[t], false).await;
            }
            be.release(seq);
        }
        // The bandwidth, after the warm-up (compiled code) and before the rows.
        let bandwidth =
            cpu.then(|| roofline::weights_bandwidth(&m.transformer.weights, &c, 3, &|| host.now()));
        let mut rows = Vec::new();
        for &n in positions.iter().filter(|&&n| n >= 1 && n <= c.seq_len) {
            // Browsers round a worker's clock to about 0.1 ms, longer than one small step:
            // each figure is the mean over repetitions lasting at least MEASURE_MS.
            let run = async {
                // With the cache: the prefix is in place; time the new token only.
                let seq = be.new_sequence()?;
                if n > 1 {
                    be.forward(seq, &ids[..n - 1], false).await?;
                }
                let (t0, mut reps) = (host.now(), 0u32);
                while reps < 2 || (host.now() - t0 < MEASURE_MS && reps < 10_000) {
                    be.truncate(seq, n - 1)?;
                    be.forward(seq, &ids[n - 1..n], false).await?;
                    reps += 1;
                }
                let cached = (host.now() - t0) / reps as f64;
                be.release(seq);
                // Without: the whole prefix again, on a fresh sequence each time.
                let (t0, mut reps) = (host.now(), 0u32);
                while reps < 2 || (host.now() - t0 < MEASURE_MS && reps < 10_000) {
                    let s = be.new_sequence()?;
                    let r = be.forward(s, &ids[..n], false).await;
                    be.release(s);
                    r?;
                    reps += 1;
                }
                let naive = (host.now() - t0) / reps as f64;
                Ok::<_, decoding_engine::BackendError>((cached, naive))
            }
            .await;
            match run {
                Ok((cached_ms, naive_ms)) => {
                    let macs = StepMacs::at(&c, n as u64);
                    rows.push(CompareRow {
                        n,
                        cached_ms,
                        naive_ms,
                        cached_macs: macs.cached,
                        naive_macs: macs.naive,
                        model: bandwidth
                            .map(|b| roofline::step_model(weight_bytes, &c, n as u64, b)),
                    });
                }
                Err(e) => return vec![err(e)],
            }
            host.yield_now().await;
        }
        vec![Event::Kv(KvEvent::CacheCompare { rows, bandwidth })]
    }
}

impl Core {
    /// The KV panel's request.
    pub(super) async fn kv_request(&mut self, r: KvRequest, host: &dyn Host) -> Vec<Event> {
        match r {
            KvRequest::CacheCompare { positions } => self.cache_compare(&positions, host).await,
        }
    }
}
