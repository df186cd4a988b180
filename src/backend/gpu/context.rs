//! Finding a GPU for training, and describing adapters.
//!
//! # Why training has its own wgpu instance and device
//!
//! The window is drawn by eframe's renderer with a wgpu device of its own. Training does not
//! borrow that device, for three reasons:
//! - eframe asks for no optional features, so the renderer's device has no timestamp queries and
//!   no `f16`; on a GL fallback it even runs with WebGL2 limits, under which compute shaders fail.
//! - The trainer lives on its own thread and submits a step's work at its own pace; sharing a queue
//!   with the renderer would make each frame wait behind training and training behind frames.
//! - The same code must run headless (`batchscope train`, the tests), where there is no renderer.
//!
//! So the training thread creates its own `wgpu::Instance` and asks for the adapter's full limits
//! and the features it has (timestamps, `f16`). That instance enables only the *primary* backends
//! — Vulkan, Metal and DX12 — and never GL: wgpu's GL backend has no compute on WebGL2-class
//! drivers, and a second GL instance beside a GL renderer fights over the one context and panics.
//! On a machine whose only API is GL the window still opens (the renderer falls back to GL) and
//! the GPU column explains that no compute-capable adapter was found. `WGPU_BACKEND` overrides the
//! choice for the headless commands, as in wgpu's own tools.

use super::kernels::variant_runs;
use crate::backend::identity::{AdapterSummary, KernelSizes, MatmulChoice};
use crate::i18n::{Arg, ErrKey, Said};

/// Why training on the GPU is not available, and what to do about it.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
#[error("{reason}")]
pub struct GpuUnavailable {
    /// What went wrong, in plain words.
    pub reason: Said,
}

/// The backends the training instance may use: `WGPU_BACKEND` if set, else Vulkan, Metal and DX12.
pub fn training_backends() -> wgpu::Backends {
    wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY) & !wgpu::Backends::BROWSER_WEBGPU
}

/// True for adapters that rasterise in software on the CPU.
pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    if info.device_type == wgpu::DeviceType::Cpu {
        return true;
    }
    let name = info.name.to_lowercase();
    [
        "llvmpipe",
        "lavapipe",
        "swiftshader",
        "softpipe",
        "microsoft basic render",
    ]
    .iter()
    .any(|s| name.contains(s))
}

pub(crate) fn new_instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

/// Summarises an adapter for `batchscope devices` and the GPU column.
pub fn summarize(adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let features = adapter.features();
    let limits = adapter.limits();
    let downlevel = adapter.get_downlevel_capabilities();
    // A browser's WebGPU is a primary API too: its compute shaders are those of the native one
    // underneath.
    let primary =
        (wgpu::Backends::PRIMARY | wgpu::Backends::BROWSER_WEBGPU).contains(info.backend.into());
    AdapterSummary {
        name: adapter_name(&info),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        software: is_software(&info),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
        shader_f16: features.contains(wgpu::Features::SHADER_F16),
        max_buffer_size_bytes: limits.max_buffer_size,
        max_storage_buffer_binding_size_bytes: limits.max_storage_buffer_binding_size,
        max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
        max_compute_workgroup_storage_size_bytes: limits.max_compute_workgroup_storage_size,
        kernel_sizes: KernelSizes::for_adapter(&limits, is_software(&info)),
        matmul_variants: MatmulChoice::ALL
            .into_iter()
            .filter(|&c| variant_runs(c, &limits))
            .collect(),
        matmul_tuning: None,
        usable_for_training: primary
            && downlevel
                .flags
                .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
            && limits.max_compute_invocations_per_workgroup >= 64,
    }
}

/// The adapter's name as its driver gives it. A browser's WebGPU may keep it to itself (a page
/// could tell users apart by it), saying only whether it is its software fallback.
fn adapter_name(info: &wgpu::AdapterInfo) -> String {
    match (info.name.is_empty(), info.device_type) {
        (false, _) => info.name.clone(),
        (true, wgpu::DeviceType::Cpu) => "WebGPU software fallback (unnamed by the browser)".into(),
        (true, _) => "WebGPU adapter (unnamed by the browser)".into(),
    }
}

/// Every adapter wgpu finds on the given backends.
pub fn enumerate(backends: wgpu::Backends) -> Vec<AdapterSummary> {
    let instance = new_instance(backends);
    pollster::block_on(instance.enumerate_adapters(backends))
        .iter()
        .map(summarize)
        .collect()
}

/// The message shown when no adapter is found, with what to install.
pub fn no_adapter_reason(detail: &Said) -> Said {
    Said::with(ErrKey::NoAdapter, &[("detail", Arg::Said(detail))])
}

/// An adapter, its device and its queue (wgpu's handles, each a reference that clones cheaply).
pub type Opened = (wgpu::Adapter, wgpu::Device, wgpu::Queue);

thread_local! {
    /// The device a browser's page asked for before the app started: a page's training loop
    /// cannot wait for WebGPU's answer, so the page waits once, up front, and each GPU worker
    /// makes its backend from these handles.
    static PAGE_DEVICE: std::cell::RefCell<Option<Result<Opened, GpuUnavailable>>> =
        const { std::cell::RefCell::new(None) };
}

/// Keeps what the page's request for a device came to (see [`page_device`]).
pub fn keep_page_device(opened: Result<Opened, GpuUnavailable>) {
    PAGE_DEVICE.with(|slot| *slot.borrow_mut() = Some(opened));
}

/// The page's device, as kept by [`keep_page_device`].
pub(crate) fn page_device() -> Result<Opened, GpuUnavailable> {
    PAGE_DEVICE.with(|slot| {
        slot.borrow().clone().unwrap_or_else(|| {
            Err(GpuUnavailable {
                reason: no_adapter_reason(&Said::verbatim(
                    "the page asked WebGPU for no device before the app started",
                )),
            })
        })
    })
}

/// Requests the adapter wgpu prefers for high performance, and a device with its full limits.
pub(crate) fn open_device() -> Result<Opened, GpuUnavailable> {
    pollster::block_on(request_device(training_backends()))
}

/// [`open_device`] without blocking: a browser answers both requests through its event loop.
pub async fn request_device(backends: wgpu::Backends) -> Result<Opened, GpuUnavailable> {
    let instance = new_instance(backends);
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            // No untrusted content here: report the adapter's real limits.
            apply_limit_buckets: false,
        })
        .await
        .map_err(|e| GpuUnavailable {
            reason: no_adapter_reason(&Said::verbatim(format!("backends {backends:?}: {e}"))),
        })?;
    let summary = summarize(&adapter);
    if !summary.usable_for_training {
        return Err(GpuUnavailable {
            reason: no_adapter_reason(&Said::new(
                ErrKey::NoComputeShaders,
                &[("name", &summary.name), ("backend", &summary.backend)],
            )),
        });
    }
    // Optional features are requested only where the adapter has them.
    let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16;
    let required_features = adapter.features() & wanted;
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: Some("batchscope-training"),
            required_features,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        })
        .await
        .map_err(|e| GpuUnavailable {
            reason: Said::new(
                ErrKey::AdapterRefused,
                &[("name", &summary.name), ("detail", &e)],
            ),
        })?;
    Ok((adapter, device, queue))
}
