//! Opening the backend of a device: the one place the app's workers, the command line and the
//! benchmarks get a `Box<dyn Backend>` from.

use super::cpu::{CpuBackend, Split};
use super::gpu::GpuBackend;
use super::traits::Backend;
use crate::device::Device;
use crate::i18n::Said;

/// Where the GPU comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum GpuChoice {
    /// Open the adapter wgpu prefers.
    #[default]
    Auto,
    /// Act as if no adapter existed, for this reason (tests, `--no-gpu`).
    Unavailable(Said),
    /// The device a browser's page asked WebGPU for before the app started (a page cannot
    /// wait for it later; see `web/`), kept with [`keep_page_device`](super::gpu::keep_page_device).
    Page,
}

/// How to open a backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// CPU kernel threads (0: one per core).
    pub cpu_threads: usize,
    /// When CPU kernels use several threads.
    pub split: Split,
    /// Where the GPU comes from.
    pub gpu: GpuChoice,
    /// The file the matrix-product kernel chosen per adapter is kept in: the GPU's variants are
    /// timed on first use and the choice is read from there after. `None` (tests): the
    /// adapter's limits choose, and nothing is timed.
    pub tuning: Option<std::path::PathBuf>,
}

/// Opens `device`'s backend on the calling thread (a GPU device belongs to the thread that made
/// it). The error says in plain words why the device cannot train and what to do.
pub fn open(device: Device, options: &OpenOptions) -> Result<Box<dyn Backend>, Said> {
    match (device, &options.gpu) {
        (Device::Cpu, _) => CpuBackend::with_split(options.cpu_threads, options.split)
            .map(|b| Box::new(b) as Box<dyn Backend>)
            .map_err(|e| e.said()),
        (Device::Gpu, GpuChoice::Auto) => {
            open_gpu(options.tuning.as_deref()).map(|b| Box::new(b) as Box<dyn Backend>)
        }
        (Device::Gpu, GpuChoice::Unavailable(reason)) => Err(reason.clone()),
        (Device::Gpu, GpuChoice::Page) => GpuBackend::on_page_device()
            .map(|b| Box::new(b) as Box<dyn Backend>)
            .map_err(|e| e.reason),
    }
}

/// Opens the preferred GPU adapter with the kernels tuned for it: read from the cache at
/// `tuning`, or timed there on first use (`None`: chosen from its limits, nothing timed).
pub fn open_gpu(tuning: Option<&std::path::Path>) -> Result<GpuBackend, Said> {
    let mut gpu = GpuBackend::new().map_err(|e| e.reason)?;
    if let Some(path) = tuning {
        // A cache that cannot be read or written costs a second of timing, not the run: the
        // notes go to stderr (the command line) and stay with the backend (the GPU column).
        let notes = super::gpu::tuning::apply_or_tune(&mut gpu, path, false);
        for note in &notes {
            eprintln!("batchscope: {note}");
        }
        gpu.set_tuning_notes(notes);
    }
    Ok(gpu)
}
