//! "Same θ, different config" (lesson 10, section 6: "two deployments of identical weights
//! can be terse and deterministic or wild and creative"): 2 to 4 columns on the one loaded
//! model, each its own settings, sequence and KV cache, stepping together from the
//! transcript's prompt. Each column is a `Generation`, the transcript's own loop, so a
//! column's text is what `decoding-explorer generate` gives with its knobs and seed.

use super::base::{err, Core, Host};
use super::batching::check_room;
use decoding_engine::budget::Budget;
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::stages::constraint::spec;
use decoding_engine::decode::sampling::Settings;
use decoding_page::page::{differing, MAX_COLUMNS};
use decoding_page::protocol::*;

/// Most tokens a column grows to in one request.
pub const MAX_COLUMN_STEPS: u32 = 4096;
/// Rows of each column's distribution sent.
const TOP_SENT: usize = 8;

pub(super) struct Column {
    settings: Settings,
    gen: Generation,
}

pub(super) struct ColumnsRun {
    columns: Vec<Column>,
}

impl Core {
    async fn columns_start(
        &mut self,
        panel: &mut Option<ColumnsRun>,
        columns: Vec<Settings>,
    ) -> Vec<Event> {
        if !(2..=MAX_COLUMNS).contains(&columns.len()) {
            return vec![err(format!(
                "{} columns: compare 2 to {MAX_COLUMNS} configurations",
                columns.len()
            ))];
        }
        let mut checked = Vec::with_capacity(columns.len());
        for (i, s) in columns.into_iter().enumerate() {
            if s.is_beam() {
                return vec![err(format!(
                    "column {}: a column runs greedy or sampling (beam search has its own panel)",
                    i + 1
                ))];
            }
            match self.for_model(s) {
                Ok(s) => checked.push(s),
                Err(e) => return vec![err(format!("column {}: {e}", i + 1))],
            }
        }
        // A column with a constraint follows its own, compiled here.
        let vocab = if checked.iter().any(|s| spec(s).is_some()) {
            match self.constraint_vocab() {
                Ok(v) => Some(v),
                Err(e) => return vec![err(e)],
            }
        } else {
            None
        };
        let (Some(m), Some(g)) = (&self.model, &self.gen) else {
            return vec![err("no prompt has been run yet")];
        };
        let prompt = g.prompt().to_vec();
        let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
        if let Err(e) = check_room(m.config(), checked.len() as u64, Budget::default()) {
            return vec![err(e)];
        }
        self.columns_release(panel);
        let Some(engine) = self.engine.as_mut() else {
            return vec![err("no backend")];
        };
        let mut run = ColumnsRun {
            columns: Vec::new(),
        };
        for settings in checked {
            let started = Generation::start(&mut *engine, prompt.clone(), ends.clone()).await;
            let constrained = match (started, &vocab) {
                (Ok(mut gen), Some(v)) if spec(&settings).is_some() => {
                    match gen
                        .sync_constraint(&settings, v)
                        .and_then(|()| gen.constraint_allowed(&settings))
                    {
                        Ok(_) => Ok(gen),
                        Err(e) => {
                            gen.release(&mut *engine);
                            Err(e)
                        }
                    }
                }
                (started, _) => started,
            };
            match constrained {
                Ok(gen) => run.columns.push(Column { settings, gen }),
                Err(e) => {
                    for c in run.columns {
                        c.gen.release(&mut *engine);
                    }
                    return vec![err(e)];
                }
            }
        }
        *panel = Some(run);
        self.columns_view(panel).await
    }

    /// Frees the columns' sequences.
    fn columns_release(&mut self, panel: &mut Option<ColumnsRun>) {
        if let (Some(run), Some(engine)) = (panel.take(), self.engine.as_mut()) {
            for c in run.columns {
                c.gen.release(&mut *engine);
            }
        }
    }

    async fn columns_step(
        &mut self,
        panel: &mut Option<ColumnsRun>,
        count: u32,
        host: &dyn Host,
    ) -> Vec<Event> {
        host.clear_cancel();
        if count > MAX_COLUMN_STEPS {
            return vec![err(format!(
                "{count} steps: at most {MAX_COLUMN_STEPS} at a time"
            ))];
        }
        let (Some(m), Some(run), Some(engine)) =
            (&self.model, panel.as_mut(), self.engine.as_mut())
        else {
            return vec![err("start a comparison first")];
        };
        let mut last_yield = host.now();
        for _ in 0..count {
            if host.now() - last_yield >= super::base::YIELD_EVERY_MS {
                host.yield_now().await;
                last_yield = host.now();
                if host.cancelled() {
                    break;
                }
            }
            // Every column's newest token in one pass, then each chooses under its knobs.
            let mut gens: Vec<&mut Generation> =
                run.columns.iter_mut().map(|c| &mut c.gen).collect();
            if let Err(e) = Generation::run_pending_together(&mut gens, &mut *engine).await {
                return vec![err(e)];
            }
            let mut moved = false;
            for c in &mut run.columns {
                match c.gen.step(&mut *engine, &c.settings, &m.tokenizer).await {
                    Ok(StepOutcome::Token { .. }) => moved = true,
                    Ok(StepOutcome::Stopped(_)) => {}
                    Err(e) => return vec![err(e)],
                }
            }
            if !moved {
                break;
            }
        }
        self.columns_view(panel).await
    }

    async fn columns_view(&mut self, panel: &mut Option<ColumnsRun>) -> Vec<Event> {
        let (Some(m), Some(run), Some(engine)) =
            (&self.model, panel.as_mut(), self.engine.as_mut())
        else {
            return vec![];
        };
        // The next distribution of every column still running (one pass for all).
        let mut running: Vec<&mut Generation> = run
            .columns
            .iter_mut()
            .filter(|c| c.gen.stop_reason(&c.settings, &m.tokenizer).is_none())
            .map(|c| &mut c.gen)
            .collect();
        if let Err(e) = Generation::run_pending_together(&mut running, &mut *engine).await {
            return vec![err(e)];
        }
        let mut columns = Vec::with_capacity(run.columns.len());
        for c in &mut run.columns {
            let stop = c.gen.stop_reason(&c.settings, &m.tokenizer);
            let trace = if stop.is_none() {
                match c.gen.preview(&mut *engine, &c.settings, &m.tokenizer).await {
                    Ok(t) => Some(t),
                    Err(e) => return vec![err(e)],
                }
            } else {
                None
            };
            let mut top: Vec<(u32, f64)> = trace.as_ref().map_or(Vec::new(), |t| {
                t.probs
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| **p > 0.0)
                    .map(|(i, p)| (i as u32, *p))
                    .collect()
            });
            top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            top.truncate(TOP_SENT);
            columns.push(ColumnView {
                settings: c.settings.clone(),
                steps: c.gen.steps().to_vec(),
                text: c.gen.generated_text(&m.tokenizer, true),
                stop,
                top,
                kept: trace.as_ref().map_or(0, |t| t.kept),
                entropy: trace.as_ref().map_or(0.0, |t| t.entropy),
                next: trace.as_ref().map(|t| (t.token, t.prob)),
                logprob: c.gen.steps().iter().map(|s| s.model_prob.ln()).sum(),
            });
        }
        let settings: Vec<Settings> = run.columns.iter().map(|c| c.settings.clone()).collect();
        let prompt = run.columns[0].gen.prompt();
        vec![Event::Compare(ColumnsEvent::Columns {
            view: ColumnsView {
                prompt: prompt
                    .iter()
                    .map(|&id| PromptToken {
                        id,
                        piece: m.tokenizer.piece(id).unwrap_or("?").to_string(),
                    })
                    .collect(),
                prompt_text: m.tokenizer.decode(prompt).unwrap_or_default(),
                columns,
                differ: differing(&settings),
            },
        })]
    }
}

impl Core {
    /// The compared columns' requests.
    pub(super) async fn columns_request(
        &mut self,
        panel: &mut Option<ColumnsRun>,
        r: ColumnsRequest,
        host: &dyn Host,
    ) -> Vec<Event> {
        match r {
            ColumnsRequest::ColumnsStart { columns } => self.columns_start(panel, columns).await,
            ColumnsRequest::ColumnsStep { count } => self.columns_step(panel, count, host).await,
        }
    }
}
