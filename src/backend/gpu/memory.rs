//! The GPU's memory: tensors are storage buffers from the caching pool (`pool.rs`), counted in
//! its ledger; values travel to them through `queue.write_buffer` or the upload ring, and back
//! through a staging buffer.

use std::sync::Arc;

use super::GpuBackend;
use super::pool::{GpuLease, block_size};
use super::readback::{self, GpuRead};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::UploadMode;
use crate::backend::pending::PendingRead;
use crate::backend::tensor::{Lease, Storage, Tensor};
use crate::backend::traits::DeviceMemory;
use crate::device::Device;
use crate::memory::{MemorySnapshot, Role};
use crate::precision::{DType, Half};
use crate::trace::{Category, Lane};

impl DeviceMemory for GpuBackend {
    fn alloc_as(
        &mut self,
        role: Role,
        label: &str,
        (rows, cols): (usize, usize),
        dtype: DType,
    ) -> Result<Tensor, BackendError> {
        let bytes = (rows * cols * dtype.bytes()) as u64;
        // Whole 32-bit words: storage buffers are arrays of them.
        let block = block_size(bytes.div_ceil(4) * 4);
        let limit = self
            .summary
            .max_storage_buffer_binding_size_bytes
            .min(self.summary.max_buffer_size_bytes);
        if block > limit {
            // The runner checks the model's buffers before it allocates; this catches any
            // other (an inference request's), and it is still the user's setting.
            return Err(BackendError::BufferTooLarge {
                what: format!("`{label}`"),
                bytes_shown: crate::units::format_bytes(block),
                limit_shown: crate::units::format_bytes(limit),
            });
        }
        let poisoned = || BackendError::Setup("the GPU memory pool is poisoned".into());
        let cached = self.pool.lock().map_err(|_| poisoned())?.take(block);
        let reused = cached.is_some();
        let buffer = if let Some(buffer) = cached {
            self.pool
                .lock()
                .map_err(|_| poisoned())?
                .ledger
                .allocate(role, bytes, block, false);
            buffer
        } else {
            let mut pool = self.pool.lock().map_err(|_| poisoned())?;
            if !pool.ledger.fits(block) {
                // As PyTorch does before it reports out of memory: give the cache back, retry.
                pool.release_cached();
                if !pool.ledger.fits(block) {
                    let oom = pool.ledger.out_of_memory(Device::Gpu, label, role, block);
                    return Err(BackendError::OutOfMemory(Box::new(oom)));
                }
            }
            pool.ledger.allocate(role, bytes, block, true);
            self.stream.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: block,
                // STORAGE for the kernels, COPY_DST for uploads, COPY_SRC for reads back.
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let lease = Lease(Box::new(GpuLease {
            pool: Arc::clone(&self.pool),
            role,
            bytes,
            block,
            buffer: Some(buffer.clone()),
        }));
        let storage = Storage::Gpu(buffer.clone());
        let tensor = Tensor::new(label, role, rows, cols, dtype, storage, lease);
        if reused {
            // A reused buffer holds the last tensor's values: a new tensor starts at zero. The
            // clear is recorded work on the tensor, so a `write_buffer` to it submits it first.
            let encoder = self.stream.encoder("training-step");
            encoder.clear_buffer(&buffer, 0, None);
            self.stream.uses([tensor.id()]);
        }
        if dtype != DType::F32 {
            self.ensure_working(rows * cols)?;
        }
        Ok(tensor)
    }

    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError> {
        checks::write(Device::Gpu, t, values.len())?;
        // A 16-bit tensor's values are rounded on the host: half the bytes cross the bus.
        let packed: Vec<u16>;
        let bytes: &[u8] = match t.dtype().half() {
            None => bytemuck::cast_slice(values),
            Some(format) => {
                let count = self.census.counts.role_mut(t.role());
                let mut bits: Vec<u16> = values
                    .iter()
                    .map(|&v| {
                        let b = DType::narrow(format, v);
                        count.count(v, DType::widen(format, b));
                        b
                    })
                    .collect();
                // Whole words: buffer copies move multiples of 4 bytes.
                bits.resize(bits.len().div_ceil(2) * 2, 0);
                packed = bits;
                bytemuck::cast_slice(&packed)
            }
        };
        let Storage::Gpu(buffer) = t.storage() else {
            return Ok(());
        };
        if self.upload == UploadMode::StagingRing {
            return self.ring.write(
                &mut self.stream,
                &mut self.recorder,
                &self.pool,
                buffer,
                t.id(),
                bytes,
            );
        }
        // `write_buffer` lands before the next submission; recorded work that still reads the old
        // values must be submitted first.
        if self.stream.is_pending(t.id()) {
            self.stream.submit(&mut self.recorder)?;
        }
        {
            let start = self.recorder.now_ns();
            self.stream.queue.write_buffer(buffer, 0, bytes);
            self.recorder.span(
                Lane::Transfer,
                Category::Memcpy,
                "queue.write_buffer (into wgpu's staging)",
                start,
                bytes.len() as u64,
            );
        }
        Ok(())
    }

    fn read(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError> {
        checks::read(Device::Gpu, t)?;
        let Storage::Gpu(buffer) = t.storage() else {
            return Ok(Vec::new());
        };
        let bytes = self.stream.read_back(
            &mut self.recorder,
            &self.staging,
            buffer,
            (0, buffer.size()),
            false,
        )?;
        Ok(values_of(t.dtype().half(), t.len(), &bytes))
    }

    fn start_read(&mut self, t: &Tensor) -> Result<PendingRead, BackendError> {
        checks::read(Device::Gpu, t)?;
        let Storage::Gpu(buffer) = t.storage() else {
            return Ok(PendingRead::ready(Vec::new()));
        };
        let mut staging = self.stream.copy_to_staging(
            &mut self.recorder,
            &self.staging,
            buffer,
            (0, buffer.size()),
            false,
        )?;
        let answer = readback::request_map(&mut staging);
        Ok(PendingRead::gpu(GpuRead {
            staging,
            answer,
            half: t.dtype().half(),
            len: t.len(),
            started_ns: self.recorder.now_ns(),
        }))
    }

    fn finish_read(&mut self, read: &mut PendingRead) -> Option<Result<Vec<f32>, BackendError>> {
        let Some(gpu) = read.gpu_mut() else {
            return read.take_ready().map(Ok);
        };
        let answer = readback::look_at(&self.stream.device, &gpu.answer)?;
        Some(self.take_mapped(
            read,
            answer,
            "wait for the GPU (map_async, looked at between frames)",
        ))
    }

    fn set_upload_mode(&mut self, mode: UploadMode) -> Result<(), BackendError> {
        if mode != self.upload {
            self.stream.submit(&mut self.recorder)?;
            self.upload = mode;
        }
        Ok(())
    }

    fn memory(&self) -> MemorySnapshot {
        self.pool
            .lock()
            .map(|p| p.ledger.snapshot())
            .unwrap_or_default()
    }

    fn set_memory_budget(&mut self, budget_bytes: Option<u64>) {
        if let Ok(mut p) = self.pool.lock() {
            p.ledger.set_budget(budget_bytes);
        }
    }

    fn release_cached(&mut self) -> Result<(), BackendError> {
        // Work not yet submitted may use a cached buffer: submit it first.
        self.stream.submit(&mut self.recorder)?;
        if let Ok(mut p) = self.pool.lock() {
            p.release_cached();
        }
        Ok(())
    }

    fn reset_peak_memory(&mut self) {
        if let Ok(mut p) = self.pool.lock() {
            p.ledger.reset_peaks();
        }
    }

    fn clear_caches(&mut self) -> Result<(), BackendError> {
        self.stream.submit(&mut self.recorder)?;
        self.forget_working();
        self.stream.forget_dispatches(|_| true);
        Ok(())
    }
}

/// A tensor's `len` values from its buffer's bytes, widened to f32 where it holds 16-bit
/// numbers (`half`).
fn values_of(half: Option<Half>, len: usize, bytes: &[u8]) -> Vec<f32> {
    let mut values: Vec<f32> = match half {
        None => bytemuck::pod_collect_to_vec(bytes),
        Some(format) => bytemuck::pod_collect_to_vec::<u8, u16>(bytes)
            .into_iter()
            .take(len)
            .map(|bits| DType::widen(format, bits))
            .collect(),
    };
    values.truncate(len);
    values
}

impl GpuBackend {
    /// [`DeviceMemory::read`] without blocking the thread while the GPU finishes: the read a
    /// browser's training loop awaits between steps (a blocking one cannot complete there).
    ///
    /// # Errors
    /// When `t` is not on this GPU, or wgpu reports an error.
    pub async fn read_async(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError> {
        let mut read = self.start_read(t)?;
        let Some(gpu) = read.gpu_mut() else {
            return Ok(read.take_ready().unwrap_or_default());
        };
        // A no-op in a browser (its device is polled by the page); a wait on the desktop,
        // where the answer then comes at once.
        readback::wait_idle(&self.stream.device)?;
        let answer = match gpu.answer.recv().await {
            Ok(answer) => answer.map_err(|e| readback::mapping_failed(&e)),
            Err(_) => Err(readback::dropped_read()),
        };
        self.take_mapped(&mut read, answer, "wait for the GPU (map_async, awaited)")
    }

    /// The values of a GPU read whose staging buffer the device has `answer`ed for, the wait
    /// since it was started recorded as a sync named `wait`; the read is handed out.
    fn take_mapped(
        &mut self,
        read: &mut PendingRead,
        answer: Result<(), BackendError>,
        wait: &'static str,
    ) -> Result<Vec<f32>, BackendError> {
        let Some(mut gpu) = read.take_gpu() else {
            return Err(BackendError::Gpu("a read was handed out twice".into()));
        };
        answer?;
        self.recorder
            .span(Lane::Sync, Category::Sync, wait, gpu.started_ns, 0);
        let bytes = self
            .stream
            .finish_read_back(&mut self.recorder, &mut gpu.staging)?;
        Ok(values_of(gpu.half, gpu.len, &bytes))
    }
}
