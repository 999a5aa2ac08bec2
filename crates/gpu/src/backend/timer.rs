//! Encoding a submission, with GPU timestamps around each dispatch when timing is on: a
//! compute pass per dispatch, its begin and end written to a query set (WebGPU's
//! `timestamp-query`; timestamps inside a pass are native-only), resolved and read back
//! after the logits. Untimed, the whole submission is one pass, cut only for the probe's
//! copies.

use crate::kernel::Kernel;
use decoding_engine::backend::timing::KernelTimes;

/// Two queries a dispatch; a query set holds at most this many.
const MAX_QUERIES: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// Queries for `dispatches` timed dispatches, if one query set holds them.
fn queries_for(dispatches: usize) -> Option<u32> {
    let queries = u32::try_from(dispatches.checked_mul(2)?).ok()?;
    (1..=MAX_QUERIES).contains(&queries).then_some(queries)
}

/// A submission's timestamps: the query set, where it is resolved and read, and which
/// kernel each pair of queries timed.
pub(super) struct Stamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    pub(super) read: wgpu::Buffer,
    names: Vec<&'static str>,
}

impl Stamps {
    /// Room for `dispatches` timed dispatches; None when a query set cannot hold them.
    pub(super) fn new(device: &wgpu::Device, dispatches: usize) -> Option<Stamps> {
        let queries = queries_for(dispatches)?;
        let bytes = queries as u64 * 8;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        Some(Stamps {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel times"),
                ty: wgpu::QueryType::Timestamp,
                count: queries,
            }),
            resolve: buffer("timestamps", U::QUERY_RESOLVE | U::COPY_SRC),
            read: buffer("timestamps read-back", U::MAP_READ | U::COPY_DST),
            names: Vec::with_capacity(dispatches),
        })
    }

    /// Bytes of the resolved timestamps.
    pub(super) fn bytes(&self) -> u64 {
        self.names.len() as u64 * 16
    }

    /// Adds each dispatch's GPU time (end − begin ticks × the queue's period in ns) to `into`.
    pub(super) fn add_to(&self, ticks: &[u64], period_ns: f32, into: &mut KernelTimes) {
        for (name, pair) in self.names.iter().zip(ticks.chunks_exact(2)) {
            add_pair(into, name, pair, period_ns);
        }
        into.passes += 1;
    }
}

/// One dispatch's [begin, end] ticks as nanoseconds (a clock that went back counts 0).
fn add_pair(into: &mut KernelTimes, name: &str, pair: &[u64], period_ns: f32) {
    into.add(
        name,
        pair[1].saturating_sub(pair[0]) as f64 * period_ns as f64,
    );
}

/// The encoder of a submission and its open compute pass.
pub(super) struct Recorder<'e> {
    encoder: &'e mut wgpu::CommandEncoder,
    pass: Option<wgpu::ComputePass<'static>>,
    stamps: Option<Stamps>,
}

impl<'e> Recorder<'e> {
    pub(super) fn new(encoder: &'e mut wgpu::CommandEncoder, stamps: Option<Stamps>) -> Self {
        Recorder {
            encoder,
            pass: None,
            stamps,
        }
    }

    /// One dispatch of kernel `name` (`step` picks the step block: 0 = all rows, 1 + i =
    /// run i): in the open pass, or timed in a pass of its own.
    pub(super) fn dispatch(
        &mut self,
        name: &'static str,
        kernel: &Kernel,
        bg: &wgpu::BindGroup,
        blocks: (u64, u64),
        groups: [u32; 3],
    ) {
        match &mut self.stamps {
            Some(s) => {
                self.pass = None;
                let i = s.names.len() as u32 * 2;
                let mut pass = self
                    .encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(name),
                        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                            query_set: &s.set,
                            beginning_of_pass_write_index: Some(i),
                            end_of_pass_write_index: Some(i + 1),
                        }),
                    });
                kernel.dispatch(&mut pass, bg, blocks, groups);
                s.names.push(name);
            }
            None => {
                let encoder = &mut *self.encoder;
                let pass = self.pass.get_or_insert_with(|| {
                    encoder
                        .begin_compute_pass(&wgpu::ComputePassDescriptor {
                            label: Some("forward"),
                            timestamp_writes: None,
                        })
                        .forget_lifetime()
                });
                kernel.dispatch(pass, bg, blocks, groups);
            }
        }
    }

    /// Ends the open pass, for copies between dispatches.
    pub(super) fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        self.encoder
    }

    /// Ends the open pass and, when timed, resolves the timestamps for reading.
    pub(super) fn finish(mut self) -> Option<Stamps> {
        self.pass = None;
        let s = self.stamps.take()?;
        let n = s.names.len() as u32 * 2;
        if n > 0 {
            self.encoder.resolve_query_set(&s.set, 0..n, &s.resolve, 0);
            self.encoder
                .copy_buffer_to_buffer(&s.resolve, 0, &s.read, 0, n as u64 * 8);
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_set_holds_2048_dispatches_at_most() {
        assert_eq!(queries_for(1), Some(2));
        assert_eq!(queries_for(2048), Some(4096));
        assert_eq!(queries_for(2049), None);
        assert_eq!(queries_for(0), None);
        assert_eq!(queries_for(usize::MAX), None);
    }

    #[test]
    fn each_dispatch_gets_end_minus_begin_times_the_period() {
        let mut t = KernelTimes::default();
        let names = ["embed", "qkv", "qkv"];
        let ticks = [100, 110, 200, 230, 300, 290]; // the last pair went backwards: 0
        for (name, pair) in names.iter().zip(ticks.chunks_exact(2)) {
            add_pair(&mut t, name, pair, 2.0);
        }
        assert_eq!(t.kernels[0].gpu_ns, 20.0);
        assert_eq!((t.kernels[1].dispatches, t.kernels[1].gpu_ns), (2, 60.0));
    }
}
