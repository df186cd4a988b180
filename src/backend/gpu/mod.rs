//! The GPU device: wgpu buffers and the WGSL kernels in `shaders/`.
//!
//! The path of one op, as in wgpu's `hello_compute` example: the tensors are storage buffers;
//! each kernel has a compute pipeline whose bind group layout is derived from its shader; an op
//! binds its tensors and a small uniform block of shapes, records a compute pass into the
//! pending command encoder, and returns without waiting. [`ComputeOps::flush`] submits the
//! encoder (once per training step), and [`DeviceMemory::read`] copies a buffer into a mappable
//! staging buffer, submits, waits for the GPU and maps it — the only point where the CPU waits.
//!
//! By concern:
//! - `context`: finding an adapter and opening a device of training's own;
//! - `kernels`: the pipelines, their uniform blocks and the codes the shaders switch on;
//! - `dispatch`: recording passes into the encoder and submitting them;
//! - `working`, `operands`: the f32 working copies 16-bit tensors are widened into;
//! - `upload`, `readback`: host-to-device copies (the staging ring) and reads back;
//! - `census`: what rounding into 16 bits lost, counted on the GPU;
//! - `timing`: kernel times from timestamp queries, on the host's clock;
//! - `tuning`: the matrix-product variant timed on this adapter, and its cache;
//! - `pool`: the caching allocator behind the memory accounting;
//! - `memory`, `ops`, `instrumented`: the backend traits, implemented with the above.
//!
//! [`ComputeOps::flush`]: crate::backend::ComputeOps::flush
//! [`DeviceMemory::read`]: crate::backend::DeviceMemory::read

mod census;
pub mod context;
mod convolution;
mod dispatch;
mod instrumented;
mod kernels;
mod memory;
mod norm;
mod operands;
mod ops;
mod pipelines;
mod pool;
pub(crate) mod readback;
mod recipe;
mod sequence;
mod spatial;
mod timing;
#[cfg(test)]
mod translate_tests;
pub mod tuning;
mod upload;
mod working;

use std::sync::Arc;

use census::Census;
pub use context::{GpuUnavailable, keep_page_device};
use dispatch::CommandStream;
use pool::SharedPool;
use readback::Staging;
pub use readback::blocking_maps;
use upload::UploadRing;
use working::WorkingCopies;

use crate::backend::error::BackendError;
use crate::backend::identity::{AdapterSummary, KernelSizes, TuningNote};
use crate::backend::params::UploadMode;
use crate::trace::Recorder;

/// The wgpu training device.
pub struct GpuBackend {
    /// The queue: encoder, kernels, dispatch cache, timestamps.
    stream: CommandStream,
    summary: AdapterSummary,
    recorder: Recorder,
    staging: Staging,
    working: WorkingCopies,
    ring: UploadRing,
    census: Census,
    upload: UploadMode,
    /// Every buffer's accounting, and the tensors' caching pool.
    pool: SharedPool,
    /// What went wrong with the kept kernel choice when this backend was opened.
    tuning_notes: Vec<TuningNote>,
}

impl GpuBackend {
    /// Opens the preferred adapter and compiles the kernels with the sizes its limits allow.
    pub fn new() -> Result<Self, GpuUnavailable> {
        Self::with_sizes(None)
    }

    /// As [`GpuBackend::new`], with workgroup sizes of the caller's choice (tests run the small
    /// sizes of weaker adapters this way), or the adapter's when `None`.
    pub fn with_sizes(sizes: Option<KernelSizes>) -> Result<Self, GpuUnavailable> {
        Self::on_device(context::open_device()?, sizes)
    }

    /// [`GpuBackend::new`] without blocking the thread while the adapter and device are asked
    /// for: a browser's WebGPU answers through the page's event loop.
    ///
    /// # Errors
    /// When no adapter can train, as for [`GpuBackend::new`].
    pub async fn new_async(backends: wgpu::Backends) -> Result<Self, GpuUnavailable> {
        Self::on_device(context::request_device(backends).await?, None)
    }

    /// A backend on the device a browser's page opened before the app started (see
    /// [`keep_page_device`]), whose kernel timestamps are read back without waiting (see
    /// [`GpuBackend::never_wait_for_timestamps`]).
    ///
    /// # Errors
    /// When the page has no device, or its kernels did not compile.
    pub fn on_page_device() -> Result<Self, GpuUnavailable> {
        let mut gpu = Self::on_device(context::page_device()?, None)?;
        gpu.never_wait_for_timestamps();
        Ok(gpu)
    }

    /// Reads kernel timestamps back, where the adapter has them, without ever waiting: the
    /// readback is mapped when a read of the step's values has come back and taken in at a
    /// later one (a page cannot wait for a map). Kernel times come a report late, and stand
    /// off the trace's timeline (placing them there needs a clock calibration that waits).
    pub fn never_wait_for_timestamps(&mut self) {
        if let Some(ts) = self.stream.timestamps.as_mut() {
            let bytes = ts.never_wait(&self.stream.device);
            pool::count_internal(&self.pool, bytes as i64);
        }
    }

    fn on_device(
        (adapter, device, queue): (wgpu::Adapter, wgpu::Device, wgpu::Queue),
        sizes: Option<KernelSizes>,
    ) -> Result<Self, GpuUnavailable> {
        let mut summary = context::summarize(&adapter);
        let sizes = sizes.unwrap_or(summary.kernel_sizes);
        summary.kernel_sizes = sizes;
        let pool = SharedPool::default();
        let stream = CommandStream::new(
            device,
            queue,
            sizes,
            summary.max_compute_workgroups_per_dimension,
            summary.timestamps,
            Arc::clone(&pool),
        )
        .map_err(|message| GpuUnavailable {
            reason: crate::i18n::Said::new(
                crate::i18n::ErrKey::KernelsFailed,
                &[("name", &summary.name), ("detail", &message)],
            ),
        })?;
        let census = Census::new(&stream.device, &pool);
        Ok(Self {
            stream,
            summary,
            recorder: Recorder::default(),
            staging: Staging::default(),
            working: WorkingCopies::default(),
            ring: UploadRing::default(),
            census,
            upload: UploadMode::default(),
            pool,
            tuning_notes: Vec::new(),
        })
    }

    /// Keeps what went wrong with the kept kernel choice as this backend was opened, for
    /// [`DeviceInfo::tuning_notes`](crate::backend::DeviceInfo::tuning_notes).
    pub fn set_tuning_notes(&mut self, notes: Vec<TuningNote>) {
        self.tuning_notes = notes;
    }

    /// The adapter this backend trains on.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// Runs as on an adapter without timestamp queries from now on: kernels are then seen from
    /// the host, from submission to completion (tests use it to check that path on any
    /// adapter). Work recorded so far is submitted first.
    pub fn disable_timestamps(&mut self) -> Result<(), BackendError> {
        self.stream.submit(&mut self.recorder)?;
        self.stream.timestamps = None;
        Ok(())
    }

    /// The workgroup sizes the kernels were compiled with.
    pub fn kernel_sizes(&self) -> KernelSizes {
        self.stream.sizes
    }
}
