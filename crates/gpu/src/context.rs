//! The GPU context, set up in one place and injected everywhere else (as the wgpu examples
//! keep `execute_gpu` apart from `execute_gpu_inner(&device, &queue, …)`): one async path for
//! native (Vulkan, Mesa's lavapipe where there is no GPU) and the browser (WebGPU).

use std::sync::{Arc, Mutex};
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum GpuError {
    #[error("this browser does not expose WebGPU; using the CPU")]
    NoWebGpu,
    #[error("no GPU adapter is available ({0}); using the CPU")]
    NoAdapter(String),
    #[error("the GPU adapter refused a device: {0}")]
    RequestDevice(String),
    #[error(
        "tensor {tensor} needs {bytes} bytes, more than this device binds at once ({limit}); \
         the model is too large for this GPU, use the CPU backend"
    )]
    TensorTooLarge {
        tensor: String,
        bytes: u64,
        limit: u64,
    },
    #[error("the GPU device was lost: {0}")]
    Lost(String),
    #[error("GPU error: {0}")]
    Gpu(String),
}

/// A device and its queue, with what the adapter is and what went wrong on it.
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    errors: Arc<Mutex<Vec<String>>>,
    lost: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.adapter.name)
            .field("backend", &self.adapter.backend)
            .finish()
    }
}

impl GpuContext {
    /// Finds an adapter and opens a device with the adapter's own limits (WebGPU's defaults
    /// bind at most 128 MiB per buffer; larger models need what the hardware offers).
    pub async fn new() -> Result<GpuContext, GpuError> {
        let backends = if cfg!(target_arch = "wasm32") {
            wgpu::Backends::BROWSER_WEBGPU
        } else {
            wgpu::Backends::all()
        };
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                if cfg!(target_arch = "wasm32") {
                    GpuError::NoWebGpu
                } else {
                    GpuError::NoAdapter(e.to_string())
                }
            })?;
        let limits = adapter.limits();
        // Optional features, taken where offered: per-kernel GPU times and f16 weights.
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("decoding-explorer"),
                required_features: adapter.features() & wanted,
                required_limits: limits.clone(),
                experimental_features: wgpu::ExperimentalFeatures::default(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        Ok(GpuContext::from_parts(
            device,
            queue,
            adapter.get_info(),
            limits,
        ))
    }

    /// Wraps a device the caller made (tests inject their own).
    pub fn from_parts(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter: wgpu::AdapterInfo,
        limits: wgpu::Limits,
    ) -> GpuContext {
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let lost: Arc<Mutex<Option<String>>> = Arc::default();
        // wgpu's default handler panics on an uncaptured error; a panic in wasm kills the
        // page, so errors are collected and turned into `BackendError`s instead.
        let e = errors.clone();
        device.on_uncaptured_error(Arc::new(move |err: wgpu::Error| {
            if let Ok(mut v) = e.lock() {
                v.push(err.to_string());
            }
        }));
        let l = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut v) = l.lock() {
                *v = Some(format!("{reason:?}: {message}"));
            }
        });
        GpuContext {
            device,
            queue,
            adapter,
            limits,
            errors,
            lost,
        }
    }

    /// A one-line description, e.g. "llvmpipe (Vulkan, Cpu)".
    /// Whether the adapter renders in software on the CPU (WebGPU's fallback adapter, which
    /// wgpu reports as a CPU device: Chromium's SwiftShader, Mesa's lavapipe).
    pub fn is_software(&self) -> bool {
        self.adapter.device_type == wgpu::DeviceType::Cpu
    }

    pub fn describe(&self) -> String {
        // Browsers hide the adapter's name (fingerprinting); say what is known.
        let name = if self.adapter.name.is_empty() {
            "the browser's adapter"
        } else {
            &self.adapter.name
        };
        format!(
            "{name} ({:?}, {:?})",
            self.adapter.backend, self.adapter.device_type
        )
    }

    /// The first problem reported since the last call: a lost device, else an error.
    pub fn take_error(&self) -> Option<GpuError> {
        if let Some(msg) = self.lost.lock().ok().and_then(|l| l.clone()) {
            return Some(GpuError::Lost(msg));
        }
        let mut errs = self.errors.lock().ok()?;
        if errs.is_empty() {
            None
        } else {
            let all = errs.join("; ");
            errs.clear();
            Some(GpuError::Gpu(all))
        }
    }

    pub fn is_lost(&self) -> bool {
        self.lost.lock().map(|l| l.is_some()).unwrap_or(true)
    }

    /// Destroys the device, as a driver reset would (used to test recovery).
    pub fn destroy(&self) {
        self.device.destroy();
    }
}
