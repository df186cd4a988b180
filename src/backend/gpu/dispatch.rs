//! Recording work and submitting it: the path of one op, as in wgpu's `hello_compute` example.
//!
//! An op binds its buffers and a small uniform block, records a compute pass into the pending
//! command encoder and returns without waiting. A step's passes all go into one encoder, which
//! [`CommandStream::submit`] hands to the queue at once. Bind groups and uniform buffers are
//! made the first time an op meets a set of buffers and reused every step after (the same
//! tensors recur at the same place in every step).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::kernels::{KernelId, Uniform};
use super::pipelines::Kernels;
use super::pool::{SharedPool, count_internal};
use super::readback::{Lent, Staging, copy_lent, map_lent, wait_idle};
use super::timing::{HostObserved, Timestamps};
use crate::backend::error::BackendError;
use crate::backend::identity::KernelSizes;
use crate::backend::tensor::{Storage, Tensor};
use crate::device::Device;
use crate::trace::{Category, Lane, Recorder};

/// Largest uniform block of any kernel, in bytes (the products', see [`UniformBytes::of`]).
const MAX_UNIFORM_BYTES: usize = 64;

/// A buffer as an op binds it: an id for the cache key and a handle to the buffer
/// (wgpu handles are reference-counted, so the clone is cheap).
#[derive(Clone)]
pub(super) struct Binding {
    pub id: u64,
    pub buffer: wgpu::Buffer,
}

impl Binding {
    /// `t`'s own buffer, which must be on the GPU.
    pub fn of(t: &Tensor) -> Result<Self, BackendError> {
        match t.storage() {
            Storage::Gpu(buffer) => Ok(Self {
                id: t.id(),
                buffer: buffer.clone(),
            }),
            Storage::Cpu(_) | Storage::CpuHalf(_) => Err(BackendError::DeviceMismatch {
                expected: Device::Gpu,
                found: Device::Cpu,
                op: "bind",
            }),
        }
    }
}

/// Most buffers a kernel binds besides its uniform block (the paired optimizer update's).
const MAX_BINDINGS: usize = 8;

/// One op applied to one set of buffers: the same key recurs every training step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct DispatchKey {
    kernel: KernelId,
    buffers: [u64; MAX_BINDINGS],
}

/// A uniform block's bytes, as last written into its buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
struct UniformBytes {
    bytes: [u8; MAX_UNIFORM_BYTES],
    len: usize,
}

impl UniformBytes {
    fn of<U: Uniform>(params: &U) -> Self {
        // A larger block is a compile error, not a panic at its first dispatch.
        const { assert!(std::mem::size_of::<U>() <= MAX_UNIFORM_BYTES) };
        let src = bytemuck::bytes_of(params);
        let mut bytes = [0; MAX_UNIFORM_BYTES];
        bytes[..src.len()].copy_from_slice(src);
        Self {
            bytes,
            len: src.len(),
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The uniform buffer and bind group of one [`DispatchKey`], made once and reused every step.
struct CachedDispatch {
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// What the uniform buffer holds (`None` before its first write).
    written: Option<UniformBytes>,
}

/// Ids of the dummy buffers in cache keys (tensor ids start at 1).
const DUMMY_READ_ID: u64 = 0;
const DUMMY_WRITE_IDS: [u64; DUMMY_WRITES] = [u64::MAX, u64::MAX - 1, u64::MAX - 3, u64::MAX - 4];
/// Dummy outputs: up to four unused state slots of a paired optimizer update (SGD's).
const DUMMY_WRITES: usize = 4;
/// Id of the split products' partial sums in cache keys.
const SCRATCH_ID: u64 = u64::MAX - 2;

/// Bytes of the buffer a product split along `k` writes its partial sums into (made on the
/// first split, counted as the backend's own): 4 MiB, a million partial sums.
pub(super) const SCRATCH_BYTES: u64 = 4 << 20;

/// The device's queue as the backend drives it: the pending encoder, the dispatch cache, the
/// kernel timestamps, and what must happen when work is submitted.
pub(super) struct CommandStream {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub sizes: KernelSizes,
    kernels: Kernels,
    /// Most workgroups along one dispatch dimension.
    max_workgroups: u32,
    encoder: Option<wgpu::CommandEncoder>,
    /// Tensors that recorded-but-unsubmitted work reads or writes.
    pending_tensors: HashSet<u64>,
    /// Dispatch keys recorded since the last submission.
    pending_keys: HashSet<DispatchKey>,
    /// Kernels dispatched since the device opened.
    pub launched: u64,
    dispatches: HashMap<DispatchKey, CachedDispatch>,
    /// Bound where a kernel's binding is unused by the chosen mode (wgpu needs every slot filled).
    dummy_read: wgpu::Buffer,
    dummy_write: [wgpu::Buffer; DUMMY_WRITES],
    /// The partial sums of products split along `k`, once one was.
    scratch: Option<wgpu::Buffer>,
    /// Kernel timestamps, where the adapter has them.
    pub timestamps: Option<Timestamps>,
    /// Submissions seen from the host, where it has none.
    pub observed: HostObserved,
    /// Buffers to map for writing again once the work that copies out of them is submitted
    /// (the upload ring's), with the flag their callback raises.
    remap: Vec<(wgpu::Buffer, Arc<AtomicBool>)>,
    /// Submissions so far.
    submissions: u64,
    /// Every buffer's accounting.
    pool: SharedPool,
    /// The first error wgpu reported outside an error scope.
    error: Arc<Mutex<Option<String>>>,
}

/// Bytes of the dummy buffers.
const DUMMY_BYTES: u64 = 16;

impl CommandStream {
    /// Compiles the kernels on `device` and sets up the queue's bookkeeping. Fails with wgpu's
    /// message when a kernel does not compile.
    pub fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        sizes: KernelSizes,
        max_workgroups: u32,
        with_timestamps: bool,
        pool: SharedPool,
    ) -> Result<Self, String> {
        let error = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&error);
        // wgpu's default handler panics; a teaching app reports the error and keeps running.
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut slot) = slot.lock() {
                slot.get_or_insert_with(|| e.to_string());
            }
        }));
        let kernels = Kernels::new(&device, sizes);
        let storage = |label: &str| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: DUMMY_BYTES,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let dummy_read = storage("unused-input");
        let dummy_write = [
            "unused-output-1",
            "unused-output-2",
            "unused-output-3",
            "unused-output-4",
        ]
        .map(storage);
        let timestamps = with_timestamps.then(|| Timestamps::new(&device, &queue));
        // The dummies and the timestamp queries' two buffers.
        let own = (1 + DUMMY_WRITES as u64) * DUMMY_BYTES
            + timestamps.as_ref().map_or(0, |_| Timestamps::BUFFER_BYTES);
        count_internal(&pool, own as i64);
        if let Some(message) = take_error(&error) {
            return Err(message);
        }
        Ok(Self {
            device,
            queue,
            sizes,
            kernels,
            max_workgroups: max_workgroups.max(1),
            encoder: None,
            pending_tensors: HashSet::new(),
            pending_keys: HashSet::new(),
            launched: 0,
            dispatches: HashMap::new(),
            dummy_read,
            dummy_write,
            scratch: None,
            timestamps,
            observed: HostObserved::default(),
            remap: Vec::new(),
            submissions: 0,
            pool,
            error,
        })
    }

    /// The pending command encoder, made (labelled `label`) if there is none.
    pub fn encoder(&mut self, label: &'static str) -> &mut wgpu::CommandEncoder {
        pending_encoder(&mut self.encoder, &self.device, label)
    }

    /// Notes that recorded work uses these tensors (copies, clears), so a later `write_buffer`
    /// to one of them submits that work first.
    pub fn uses(&mut self, ids: impl IntoIterator<Item = u64>) {
        self.pending_tensors.extend(ids);
    }

    /// Whether work not yet submitted uses tensor `id`.
    pub fn is_pending(&self, id: u64) -> bool {
        self.pending_tensors.contains(&id)
    }

    /// Submissions so far.
    pub fn submissions(&self) -> u64 {
        self.submissions
    }

    /// Maps `buffer` for writing again once the work recorded so far is submitted, raising
    /// `ready` when it is mapped.
    pub fn remap_after_submit(&mut self, buffer: wgpu::Buffer, ready: Arc<AtomicBool>) {
        self.remap.push((buffer, ready));
    }

    /// The compiled kernels.
    pub fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// Workgroups for `invocations` one-dimensional invocations of the element-wise kernels,
    /// folded into two dimensions past the per-dimension limit.
    pub fn groups(&self, invocations: u32) -> (u32, u32) {
        self.workgroups(invocations.div_ceil(self.sizes.elementwise))
    }

    /// `groups` workgroups as a dispatch, folded into two dimensions past the adapter's limit
    /// on one (a kernel of a workgroup a row).
    pub fn workgroups(&self, groups: u32) -> (u32, u32) {
        let groups = groups.max(1);
        if groups <= self.max_workgroups {
            (groups, 1)
        } else {
            (self.max_workgroups, groups.div_ceil(self.max_workgroups))
        }
    }

    /// The buffer bound where a kernel reads nothing.
    pub fn dummy_read(&self) -> Binding {
        Binding {
            id: DUMMY_READ_ID,
            buffer: self.dummy_read.clone(),
        }
    }

    /// Dummy output `i` (0 to 3), bound where a kernel writes nothing.
    pub fn dummy_write(&self, i: usize) -> Binding {
        Binding {
            id: DUMMY_WRITE_IDS[i],
            buffer: self.dummy_write[i].clone(),
        }
    }

    /// The buffer of [`SCRATCH_BYTES`] split products write their partial sums into.
    pub fn scratch(&mut self) -> Binding {
        let pool = &self.pool;
        let device = &self.device;
        let buffer = self.scratch.get_or_insert_with(|| {
            count_internal(pool, SCRATCH_BYTES as i64);
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("split-k partial sums"),
                size: SCRATCH_BYTES,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        });
        Binding {
            id: SCRATCH_ID,
            buffer: buffer.clone(),
        }
    }

    /// Records one dispatch of `kernel` (its span named `label`) over `bindings` (after the uniform block, in binding
    /// order) with `params`, timed when kernel timing is on.
    pub fn dispatch<U: Uniform>(
        &mut self,
        recorder: &mut Recorder,
        kernel: KernelId,
        label: &'static str,
        params: &U,
        bindings: &[Binding],
        (x, y): (u32, u32),
    ) -> Result<(), BackendError> {
        self.dispatch_3d(recorder, kernel, label, params, bindings, (x, y, 1))
    }

    /// [`CommandStream::dispatch`] with workgroups along `z` too.
    pub fn dispatch_3d<U: Uniform>(
        &mut self,
        recorder: &mut Recorder,
        kernel: KernelId,
        label: &'static str,
        params: &U,
        bindings: &[Binding],
        workgroups: (u32, u32, u32),
    ) -> Result<(), BackendError> {
        let mut ids = [0u64; MAX_BINDINGS];
        for (slot, b) in ids.iter_mut().zip(bindings) {
            *slot = b.id;
        }
        let key = DispatchKey {
            kernel,
            buffers: ids,
        };
        let bytes = UniformBytes::of(params);
        self.launched += 1;
        // A uniform block is written with `queue.write_buffer`, which lands before the next
        // submission as a whole. Reusing a key with new parameters inside one submission would
        // let the second write overwrite the first, so submit what is recorded first.
        let stale = self
            .dispatches
            .get(&key)
            .is_some_and(|d| d.written != Some(bytes));
        if stale && self.pending_keys.contains(&key) {
            self.submit(recorder)?;
        }
        // A timer that may not wait (a page's) times no more passes until it is read back.
        if self
            .timestamps
            .as_ref()
            .is_some_and(|t| t.waits && t.is_full())
        {
            self.drain_timestamps(recorder)?;
        }
        let cached = match self.dispatches.entry(key) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => {
                count_internal(&self.pool, bytes.len as i64);
                let uniform = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: bytes.len as u64,
                    // UNIFORM to bind it, COPY_DST so new parameters can be written into it.
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let mut entries = vec![wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                }];
                entries.extend(bindings.iter().zip(1u32..).map(|(b, binding)| {
                    wgpu::BindGroupEntry {
                        binding,
                        resource: b.buffer.as_entire_binding(),
                    }
                }));
                let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(label),
                    layout: &self.kernels.get(kernel).layout,
                    entries: &entries,
                });
                entry.insert(CachedDispatch {
                    uniform,
                    bind_group,
                    written: None,
                })
            }
        };
        if cached.written != Some(bytes) {
            self.queue
                .write_buffer(&cached.uniform, 0, bytes.as_slice());
            cached.written = Some(bytes);
        }
        // Through the field, not `self.encoder()`: the kernels and timestamps are borrowed too.
        let encoder = pending_encoder(&mut self.encoder, &self.device, "training-step");
        let timestamp_writes = self
            .timestamps
            .as_mut()
            .and_then(|t| t.writes(label, recorder.step()));
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes,
            });
            pass.set_pipeline(&self.kernels.get(kernel).pipeline);
            pass.set_bind_group(0, &cached.bind_group, &[]);
            pass.dispatch_workgroups(workgroups.0, workgroups.1, workgroups.2);
        }
        self.pending_keys.insert(key);
        self.pending_tensors.extend(ids);
        Ok(())
    }

    /// Sends the recorded work to the GPU without waiting for it; then the work's buffers that
    /// must come back to the host are mapped again, and any error wgpu reported is returned.
    pub fn submit(&mut self, recorder: &mut Recorder) -> Result<(), BackendError> {
        if let Some(mut encoder) = self.encoder.take() {
            if let Some(ts) = self.timestamps.as_mut() {
                ts.resolve_pending(&mut encoder);
            }
            let start = recorder.now_ns();
            self.queue.submit([encoder.finish()]);
            self.submissions += 1;
            recorder.span(Lane::Main, Category::CpuExec, "queue.submit", start, 0);
            if recorder.enabled() && self.timestamps.is_none() {
                self.observed.watch(&self.queue, recorder, start);
                // Notice finished submissions now rather than at the next wait.
                self.device
                    .poll(wgpu::PollType::Poll)
                    .map_err(|e| BackendError::Gpu(format!("polling the GPU failed: {e}")))?;
            }
            // The ring's buffers come back to the host once the GPU has copied out of them.
            for (buffer, ready) in self.remap.drain(..) {
                buffer
                    .slice(..)
                    .map_async(wgpu::MapMode::Write, move |result| {
                        ready.store(result.is_ok(), Ordering::Release);
                    });
            }
        }
        self.pending_keys.clear();
        self.pending_tensors.clear();
        self.check_error()
    }

    /// The first error wgpu reported since the last look, if any.
    pub fn check_error(&self) -> Result<(), BackendError> {
        match take_error(&self.error) {
            Some(message) => Err(BackendError::Gpu(message)),
            None => Ok(()),
        }
    }

    /// Submits what is recorded and waits until the GPU has finished all of it.
    pub fn finish(&mut self, recorder: &mut Recorder) -> Result<(), BackendError> {
        self.submit(recorder)?;
        wait_idle(&self.device)
    }

    /// Copies `size` bytes of `buffer` from `offset` to the host, submitting the recorded work
    /// and waiting for the GPU (a sync); `clear` zeroes them on the GPU after the copy
    /// (counters that start over).
    pub fn read_back(
        &mut self,
        recorder: &mut Recorder,
        staging: &Staging,
        buffer: &wgpu::Buffer,
        (offset, size): (u64, u64),
        clear: bool,
    ) -> Result<Vec<u8>, BackendError> {
        let mut staging = self.copy_to_staging(recorder, staging, buffer, (offset, size), clear)?;
        let start = recorder.now_ns();
        map_lent(&self.device, &mut staging)?;
        recorder.span(
            Lane::Sync,
            Category::Sync,
            "wait for the GPU (map_async + poll)",
            start,
            0,
        );
        self.finish_read_back(recorder, &mut staging)
    }

    /// Records the copy of `size` bytes of `buffer` into a staging buffer (zeroing them after
    /// if `clear`) and submits everything recorded.
    pub(super) fn copy_to_staging(
        &mut self,
        recorder: &mut Recorder,
        staging: &Staging,
        buffer: &wgpu::Buffer,
        (offset, size): (u64, u64),
        clear: bool,
    ) -> Result<Lent, BackendError> {
        let staging = staging.lend(&self.device, &self.pool, size);
        let encoder = self.encoder("readback");
        encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, size);
        if clear {
            encoder.clear_buffer(buffer, offset, Some(size));
        }
        self.submit(recorder)?;
        Ok(staging)
    }

    /// Copies the mapped staging buffer to the host, and takes in the kernel times of the work
    /// that just finished.
    pub(super) fn finish_read_back(
        &mut self,
        recorder: &mut Recorder,
        staging: &mut Lent,
    ) -> Result<Vec<u8>, BackendError> {
        let start = recorder.now_ns();
        let bytes = copy_lent(staging)?;
        recorder.span(
            Lane::Readback,
            Category::Memcpy,
            "copy mapped buffer to host",
            start,
            bytes.len() as u64,
        );
        self.check_error()?;
        // The GPU is idle now: the moment to take kernel times in without a sync of their own.
        self.take_in_timings(recorder)?;
        Ok(bytes)
    }

    /// Takes in what was timed of the finished work (call after a wait): kernel timestamps, or
    /// host-observed submissions while recording on adapters without them.
    pub fn take_in_timings(&mut self, recorder: &mut Recorder) -> Result<(), BackendError> {
        if let Some(ts) = self.timestamps.as_mut() {
            return ts.take_in(&self.device, &self.queue, recorder);
        }
        if recorder.enabled() {
            self.observed.take_in(recorder);
        }
        Ok(())
    }

    /// Waits for the GPU so the query set can be read and reused: a sync caused by timing
    /// itself, when more kernels ran between two syncs than the query set holds.
    fn drain_timestamps(&mut self, recorder: &mut Recorder) -> Result<(), BackendError> {
        let start = recorder.now_ns();
        self.finish(recorder)?;
        recorder.span(
            Lane::Sync,
            Category::Sync,
            "wait for the GPU (timestamp buffer full, tracing)",
            start,
            0,
        );
        self.take_in_timings(recorder)
    }

    /// Forgets the cached dispatches that bind a buffer whose id `forget` picks (buffers that
    /// are about to go away).
    pub fn forget_dispatches(&mut self, forget: impl Fn(u64) -> bool) {
        let mut bytes = 0;
        self.dispatches.retain(|key, d| {
            let keep = !key.buffers.iter().any(|&id| forget(id));
            if !keep {
                bytes += d.uniform.size();
            }
            keep
        });
        count_internal(&self.pool, -(bytes as i64));
    }
}

/// The encoder in `slot`, made on `device` (labelled `label`) if there is none.
fn pending_encoder<'a>(
    slot: &'a mut Option<wgpu::CommandEncoder>,
    device: &wgpu::Device,
    label: &'static str,
) -> &'a mut wgpu::CommandEncoder {
    slot.get_or_insert_with(|| {
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    })
}

fn take_error(slot: &Mutex<Option<String>>) -> Option<String> {
    slot.lock().ok().and_then(|mut e| e.take())
}
