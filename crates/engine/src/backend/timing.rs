//! Where a forward pass's GPU time goes: each kernel's time from GPU timestamps (WebGPU's
//! `timestamp-query`, a pass's begin and end written around each dispatch), summed by
//! kernel over the passes timed. The wall time of the same work minus the GPU's busy time
//! is what launching cost: the lesson's "decode is bandwidth-bound" holds only once that
//! overhead is small beside the kernels.

use serde::{Deserialize, Serialize};

/// One kernel's share: how often it ran and its GPU time in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelTime {
    pub name: String,
    pub dispatches: u64,
    pub gpu_ns: f64,
}

/// The kernels' GPU times over `passes` timed forward passes (submissions), in the order
/// the pass first ran them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelTimes {
    pub passes: u64,
    /// Passes too long for one query set (more than 2,048 dispatches), run untimed
    pub untimed_passes: u64,
    pub kernels: Vec<KernelTime>,
}

/// Per token: wall time, the GPU's busy time and what is left (launches, barriers, the
/// read-back, the host's work).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeSplit {
    pub wall_s: f64,
    pub gpu_busy_s: f64,
    pub overhead_s: f64,
}

impl KernelTimes {
    /// Adds one dispatch of `name` that took `ns` on the GPU.
    pub fn add(&mut self, name: &str, ns: f64) {
        match self.kernels.iter_mut().find(|k| k.name == name) {
            Some(k) => {
                k.dispatches += 1;
                k.gpu_ns += ns;
            }
            None => self.kernels.push(KernelTime {
                name: name.to_string(),
                dispatches: 1,
                gpu_ns: ns,
            }),
        }
    }

    /// GPU nanoseconds of every kernel together.
    pub fn busy_ns(&self) -> f64 {
        self.kernels.iter().map(|k| k.gpu_ns).sum()
    }

    pub fn dispatches(&self) -> u64 {
        self.kernels.iter().map(|k| k.dispatches).sum()
    }

    /// The split of `wall_s` seconds a token over `tokens` timed tokens. The overhead is
    /// never shown below zero: GPU times are summed per pass, and a driver may overlap
    /// passes, so busy can exceed wall by a little; then the split says overhead 0.
    pub fn split(&self, wall_s: f64, tokens: u64) -> Option<TimeSplit> {
        if tokens == 0 || !wall_s.is_finite() || wall_s < 0.0 {
            return None;
        }
        let busy = self.busy_ns() / 1e9 / tokens as f64;
        Some(TimeSplit {
            wall_s,
            gpu_busy_s: busy,
            overhead_s: (wall_s - busy).max(0.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_add_up_by_kernel_in_first_seen_order() {
        let mut t = KernelTimes::default();
        for (name, ns) in [("embed", 1.0), ("qkv", 10.0), ("qkv", 30.0), ("w2", 5.0)] {
            t.add(name, ns);
        }
        let names: Vec<&str> = t.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["embed", "qkv", "w2"]);
        assert_eq!(t.kernels[1].dispatches, 2);
        assert_eq!(t.kernels[1].gpu_ns, 40.0);
        assert_eq!(t.busy_ns(), 46.0);
        assert_eq!(t.dispatches(), 4);
    }

    #[test]
    fn the_split_is_wall_minus_busy_per_token() {
        let mut t = KernelTimes::default();
        t.add("qkv", 3e6); // 3 ms over 2 tokens: 1.5 ms a token
        let s = t.split(4e-3, 2).unwrap();
        assert!((s.gpu_busy_s - 1.5e-3).abs() < 1e-12);
        assert!((s.overhead_s - 2.5e-3).abs() < 1e-12);
        // busy above wall (overlapped passes): overhead 0, not negative
        assert_eq!(t.split(1e-3, 1).unwrap().overhead_s, 0.0);
        assert_eq!(t.split(1e-3, 0), None);
        assert_eq!(t.split(f64::NAN, 1), None);
    }
}
