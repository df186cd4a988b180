//! The GPU device: wgpu buffers and the WGSL kernels in `shaders/`.
//!
//! The path of one op, as in wgpu's `hello_compute` example: the tensors are storage buffers;
//! each kernel has a compute pipeline whose bind group layout is derived from its shader; an op
//! binds its tensors and a small uniform block of shapes, records a compute pass into the
//! pending command encoder, and returns without waiting. [`Backend::flush`] submits the
//! encoder (once per training step), and [`Backend::read`] copies a buffer into a mappable
//! staging buffer, submits, waits for the GPU and maps it — the only point where the CPU waits.

pub mod context;
mod pool;
mod timing;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use context::{AdapterSummary, GpuUnavailable};
use pool::{GpuLease, SharedPool, block_size};
use timing::{Mode, Timestamps, copy_mapped, map_for_reading, wait_idle};

use super::Lease;
use super::{
    Activation, AdamHyper, Backend, BackendError, DType, Device, KernelTimes, Storage, Tensor,
    UploadMode, WORKING_COPIES, checks,
};
use crate::memory::{MemorySnapshot, Role};
use crate::precision::{Half, RoundingCensus};
use crate::trace::{Category, Clock, Lane, Recorder, Span, ns_since};

/// Every kernel's parameter block is at most this many 32-bit words (48 bytes).
const PARAM_WORDS: usize = 12;
type Params = [u32; PARAM_WORDS];

/// Buffers in the staging ring: one being filled while the GPU copies from the others.
const RING_SLOTS: usize = 3;

/// Workgroup sizes, chosen per adapter from its limits and passed to the shaders as pipeline
/// constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelSizes {
    /// Edge of the matrix-product tile (and workgroup): 16, or 8 on adapters that cannot run 256
    /// invocations in one workgroup.
    pub matmul_tile: u32,
    /// Invocations per workgroup of the optimizer updates and of the loss: 256, 128 or 64.
    pub elementwise: u32,
    /// Invocations per workgroup of the bias-gradient column sums.
    pub column_sum: u32,
}

impl KernelSizes {
    /// The largest sizes the limits allow, up to what the shaders' workgroup arrays hold.
    ///
    /// 16×16 tiles and 256-wide workgroups fit every WebGPU-conformant adapter and keep a GPU's
    /// cores busy with a few hundred workgroups; smaller sizes keep the kernels running on the
    /// adapters below those limits. Tuning them per GPU by measurement needs the GPUs.
    pub fn for_limits(limits: &wgpu::Limits) -> Self {
        let invocations = limits.max_compute_invocations_per_workgroup;
        let tile = if invocations >= 256
            && limits.max_compute_workgroup_size_x >= 16
            && limits.max_compute_workgroup_size_y >= 16
            && limits.max_compute_workgroup_storage_size >= 2 * 16 * 16 * 4
        {
            16
        } else {
            8
        };
        let width = invocations.min(limits.max_compute_workgroup_size_x);
        let elementwise = [256, 128, 64]
            .into_iter()
            .find(|&w| w <= width)
            .unwrap_or(64);
        Self {
            matmul_tile: tile,
            elementwise,
            column_sum: elementwise.min(64),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum KernelId {
    Matmul,
    ColumnSum,
    SoftmaxCrossEntropy,
    Mse,
    Optimizer,
    Round,
    Widen,
    Narrow,
}

/// A compiled kernel: its pipeline and the layout its bind groups must follow.
struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl Kernel {
    fn new(
        device: &wgpu::Device,
        label: &str,
        source: &str,
        entry_point: &str,
        constants: &[(&str, f64)],
    ) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        // `layout: None` lets wgpu derive the bind group layout from the shader's bindings.
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some(entry_point),
            compilation_options: wgpu::PipelineCompilationOptions {
                // The workgroup sizes this adapter gets (the shaders' `override` constants).
                constants,
                // Every kernel writes its workgroup memory before reading it, so wgpu's
                // zero-fill on each dispatch would be wasted work.
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        Self { pipeline, layout }
    }
}

struct Kernels {
    matmul: Kernel,
    column_sum: Kernel,
    softmax_cross_entropy: Kernel,
    mse: Kernel,
    optimizer: Kernel,
    round: Kernel,
    widen: Kernel,
    narrow: Kernel,
}

/// The integer FP16/BF16 conversions, put in front of the shaders that use them.
const HALF_WGSL: &str = include_str!("../../../shaders/half.wgsl");

impl Kernels {
    fn new(device: &wgpu::Device, sizes: KernelSizes) -> Self {
        let tile = [("TILE", f64::from(sizes.matmul_tile))];
        let wide = [("WORKGROUP", f64::from(sizes.elementwise))];
        let reduce = [("WORKGROUP", f64::from(sizes.column_sum))];
        let convert = [HALF_WGSL, include_str!("../../../shaders/convert.wgsl")].concat();
        Self {
            matmul: Kernel::new(
                device,
                "matmul",
                include_str!("../../../shaders/matmul.wgsl"),
                "main",
                &tile,
            ),
            column_sum: Kernel::new(
                device,
                "column_sum",
                include_str!("../../../shaders/reduce.wgsl"),
                "column_sum",
                &reduce,
            ),
            softmax_cross_entropy: Kernel::new(
                device,
                "softmax_cross_entropy",
                include_str!("../../../shaders/loss.wgsl"),
                "softmax_cross_entropy",
                &wide,
            ),
            mse: Kernel::new(
                device,
                "mse",
                include_str!("../../../shaders/loss.wgsl"),
                "mse",
                &wide,
            ),
            optimizer: Kernel::new(
                device,
                "optimizer",
                include_str!("../../../shaders/optim.wgsl"),
                "step",
                &wide,
            ),
            round: Kernel::new(
                device,
                "round",
                &[HALF_WGSL, include_str!("../../../shaders/precision.wgsl")].concat(),
                "round_to",
                &wide,
            ),
            widen: Kernel::new(device, "widen", &convert, "widen", &wide),
            narrow: Kernel::new(device, "narrow", &convert, "narrow", &wide),
        }
    }

    fn get(&self, id: KernelId) -> &Kernel {
        match id {
            KernelId::Matmul => &self.matmul,
            KernelId::ColumnSum => &self.column_sum,
            KernelId::SoftmaxCrossEntropy => &self.softmax_cross_entropy,
            KernelId::Mse => &self.mse,
            KernelId::Optimizer => &self.optimizer,
            KernelId::Round => &self.round,
            KernelId::Widen => &self.widen,
            KernelId::Narrow => &self.narrow,
        }
    }
}

/// One op applied to one set of tensors: the same key recurs every training step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct DispatchKey {
    kernel: KernelId,
    buffers: [u64; 4],
}

/// The uniform block and bind group of one [`DispatchKey`], made once and reused every step.
struct CachedDispatch {
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    params: Params,
}

/// A buffer as an op binds it: an id for the cache key and a handle to the buffer
/// (wgpu handles are reference-counted, so the clone is cheap).
#[derive(Clone)]
struct Binding {
    id: u64,
    buffer: wgpu::Buffer,
}

/// A buffer of the staging ring: mapped for writing while `ready`.
struct RingSlot {
    buffer: wgpu::Buffer,
    ready: Arc<AtomicBool>,
}

/// A submission seen from the host, where the adapter has no timestamps: when it was submitted
/// and when the host first saw it done (ns since the recording's epoch), and its step.
type Observed = (u64, u64, u64);

/// The wgpu training device.
pub struct GpuBackend {
    device: wgpu::Device,
    queue: wgpu::Queue,
    summary: AdapterSummary,
    sizes: KernelSizes,
    kernels: Kernels,
    encoder: Option<wgpu::CommandEncoder>,
    /// Tensors that recorded-but-unsubmitted work reads or writes.
    pending_tensors: HashSet<u64>,
    /// Dispatch keys recorded since the last submission.
    pending_keys: HashSet<DispatchKey>,
    dispatches: HashMap<DispatchKey, CachedDispatch>,
    /// Staging buffers for reads, by size in bytes.
    staging: HashMap<u64, wgpu::Buffer>,
    /// Bound where a kernel's binding is unused by the chosen mode (wgpu needs every slot filled).
    dummy_read: wgpu::Buffer,
    dummy_write: [wgpu::Buffer; 2],
    /// Kernel timestamps, where the adapter has them.
    timestamps: Option<Timestamps>,
    recorder: Recorder,
    /// Submissions completed since the last look, on adapters without timestamps.
    observed: Arc<Mutex<Vec<Observed>>>,
    /// End of the last host-observed span, so that the next starts after it.
    observed_end_ns: u64,
    upload: UploadMode,
    ring: Vec<RingSlot>,
    ring_next: usize,
    /// Ring slots copied from in the work not yet submitted.
    ring_used: Vec<usize>,
    /// Every buffer's accounting, and the tensors' caching pool.
    pool: SharedPool,
    /// The first error wgpu reported outside an error scope.
    error: Arc<Mutex<Option<String>>>,
    /// The f32 working copies 16-bit operands are widened into (none until a 16-bit tensor
    /// exists).
    working: Vec<Tensor>,
    /// Three counters per role that the rounding kernels add to (non-zero values, values that
    /// became zero, values that became infinite).
    census_buffer: wgpu::Buffer,
    /// The values rounded per role, counted as the kernels are recorded, and what uploads
    /// lost on the host.
    census: RoundingCensus,
}

/// Bytes of the census buffer: three `u32` per role (non-zero values, lost to zero, lost to
/// infinity), then the count of [`Backend::count_non_finite`].
const CENSUS_BYTES: u64 = ROLE_COUNTS_BYTES + 4;

/// Bytes of the census buffer's per-role counters.
const ROLE_COUNTS_BYTES: u64 = (3 * Role::ALL.len() * 4) as u64;

/// The census word that counts the values that are not finite.
const NON_FINITE_SLOT: u32 = (ROLE_COUNTS_BYTES / 4) as u32;

/// The census buffer's id in cache keys.
const CENSUS_ID: u64 = u64::MAX - 2;

/// Ids of the dummy buffers in cache keys (tensor ids start at 1).
const DUMMY_READ_ID: u64 = 0;
const DUMMY_WRITE_IDS: [u64; 2] = [u64::MAX, u64::MAX - 1];

impl GpuBackend {
    /// Opens the preferred adapter and compiles the kernels with the sizes its limits allow.
    pub fn new() -> Result<Self, GpuUnavailable> {
        Self::with_sizes(None)
    }

    /// As [`GpuBackend::new`], with workgroup sizes of the caller's choice (tests run the small
    /// sizes of weaker adapters this way), or the adapter's when `None`.
    pub fn with_sizes(sizes: Option<KernelSizes>) -> Result<Self, GpuUnavailable> {
        let (adapter, device, queue) = context::open_device()?;
        let summary = context::summarize(&adapter);
        let sizes = sizes.unwrap_or_else(|| KernelSizes::for_limits(&device.limits()));
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
                size: 16,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let dummy_read = storage("unused-input");
        let census_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rounding-census"),
            size: CENSUS_BYTES,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let dummy_write = [storage("unused-output-1"), storage("unused-output-2")];
        let timestamps = summary.timestamps.then(|| Timestamps::new(&device, &queue));
        let pool = SharedPool::default();
        if let Ok(mut p) = pool.lock() {
            // The backend's own buffers: the dummies, the census and the timestamp queries' two
            // buffers.
            let own = 3 * 16
                + CENSUS_BYTES as i64
                + if timestamps.is_some() {
                    2 * 4096 * 8
                } else {
                    0
                };
            p.ledger.internal(own);
        }
        if let Some(message) = take_error(&error) {
            return Err(GpuUnavailable {
                reason: format!(
                    "The GPU kernels failed to compile on {}: {message}",
                    summary.name
                ),
            });
        }
        Ok(Self {
            device,
            queue,
            summary,
            sizes,
            kernels,
            encoder: None,
            pending_tensors: HashSet::new(),
            pending_keys: HashSet::new(),
            dispatches: HashMap::new(),
            staging: HashMap::new(),
            dummy_read,
            dummy_write,
            timestamps,
            recorder: Recorder::default(),
            observed: Arc::new(Mutex::new(Vec::new())),
            observed_end_ns: 0,
            upload: UploadMode::default(),
            ring: Vec::new(),
            ring_next: 0,
            ring_used: Vec::new(),
            pool,
            error,
            working: Vec::new(),
            census_buffer,
            census: RoundingCensus::default(),
        })
    }

    /// The adapter this backend trains on.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// Runs as on an adapter without timestamp queries: kernels are then seen from the host,
    /// from submission to completion (tests use it to check that path on any adapter).
    pub fn disable_timestamps(&mut self) {
        let _ = self.flush();
        self.timestamps = None;
    }

    /// The workgroup sizes the kernels were compiled with.
    pub fn kernel_sizes(&self) -> KernelSizes {
        self.sizes
    }

    /// Makes the working copies hold at least `len` values each. New copies are new buffers, so
    /// the cached bind groups of the old ones are dropped.
    fn ensure_working(&mut self, len: usize) -> Result<(), BackendError> {
        let enough =
            self.working.len() == WORKING_COPIES && self.working.iter().all(|w| w.len() >= len);
        if len == 0 || enough {
            return Ok(());
        }
        self.forget_working();
        for i in 0..WORKING_COPIES {
            let label = super::WORKING_LABELS[i];
            let copy = self.alloc_as(Role::Workspace, label, (1, len), DType::F32)?;
            self.working.push(copy);
        }
        Ok(())
    }

    /// Drops the working copies and every cached dispatch that binds one.
    fn forget_working(&mut self) {
        self.working.clear();
        let before = self.dispatches.len();
        self.dispatches
            .retain(|key, _| !key.buffers.iter().any(|&id| is_working_view(id)));
        let forgotten = before - self.dispatches.len();
        count_internal(&self.pool, -((forgotten * PARAM_WORDS * 4) as i64));
    }

    /// Makes the working copies large enough for the 16-bit tensors among `operands`, before an
    /// op binds any of them.
    fn prepare(&mut self, operands: &[&Tensor]) -> Result<(), BackendError> {
        self.ensure_working(super::largest_half(operands))
    }

    /// Working copy `slot` bound as the f32 values of `t`.
    fn working_binding(&self, t: &Tensor, slot: usize) -> Result<Binding, BackendError> {
        match self.working.get(slot).map(Tensor::storage) {
            Some(Storage::Gpu(buffer)) if self.working[slot].len() >= t.len() => Ok(Binding {
                id: working_view_id(t, slot),
                buffer: buffer.clone(),
            }),
            _ => Err(BackendError::Setup(format!(
                "no f32 working copy large enough for `{}` ({} values)",
                t.label(),
                t.len()
            ))),
        }
    }

    /// `t` as an op reads it in f32: its own buffer, or working copy `slot` with its values
    /// widened in (16-bit `t`).
    fn operand(&mut self, t: &Tensor, slot: usize) -> Result<Binding, BackendError> {
        self.output(t, slot, true)
    }

    /// Where an op writes `t` in f32: its own buffer, or working copy `slot` (16-bit `t`; with
    /// its values widened in first when `load`, for ops that update in place). [`Self::store`]
    /// rounds the result back.
    fn output(&mut self, t: &Tensor, slot: usize, load: bool) -> Result<Binding, BackendError> {
        let Some(format) = t.dtype().half() else {
            return binding(t);
        };
        let copy = self.working_binding(t, slot)?;
        if load {
            let widen = (KernelId::Widen, t.role());
            self.convert(widen, format, t.len(), binding(t)?, copy.clone())?;
        }
        Ok(copy)
    }

    /// Rounds an op's result in working copy `slot` into a 16-bit `t` (nothing for f32 `t`).
    fn store(&mut self, t: &Tensor, slot: usize) -> Result<(), BackendError> {
        let Some(format) = t.dtype().half() else {
            return Ok(());
        };
        let copy = self.working_binding(t, slot)?;
        self.convert(
            (KernelId::Narrow, t.role()),
            format,
            t.len(),
            copy,
            binding(t)?,
        )
    }

    /// One pass of `shaders/convert.wgsl`: 16-bit values widened into f32 ones, or f32 values
    /// rounded into 16-bit ones (what that loses counted under `role`).
    fn convert(
        &mut self,
        (kernel, role): (KernelId, Role),
        format: Half,
        len: usize,
        src: Binding,
        dst: Binding,
    ) -> Result<(), BackendError> {
        let label = match (kernel, format) {
            (KernelId::Widen, Half::Fp16) => "widen_fp16",
            (KernelId::Widen, Half::Bf16) => "widen_bf16",
            (_, Half::Fp16) => "narrow_fp16",
            (_, Half::Bf16) => "narrow_bf16",
        };
        // Narrowing runs one invocation per word (two values).
        let invocations = if kernel == KernelId::Widen {
            len
        } else {
            len.div_ceil(2)
        };
        let (groups_x, groups_y) = self.groups(invocations as u32);
        let mut params: Params = [0; PARAM_WORDS];
        params[..4].copy_from_slice(&[len as u32, format.code(), groups_x, role.index() as u32]);
        if kernel == KernelId::Widen {
            return self.dispatch(kernel, label, params, &[src, dst], (groups_x, groups_y));
        }
        self.census.role_mut(role).values += len as u64;
        let census = self.census_binding();
        self.dispatch(
            kernel,
            label,
            params,
            &[src, dst, census],
            (groups_x, groups_y),
        )
    }

    fn census_binding(&self) -> Binding {
        Binding {
            id: CENSUS_ID,
            buffer: self.census_buffer.clone(),
        }
    }

    /// Workgroups for `invocations` one-dimensional invocations, folded into two dimensions
    /// past the per-dimension limit.
    fn groups(&self, invocations: u32) -> (u32, u32) {
        let groups = invocations.div_ceil(self.sizes.elementwise).max(1);
        let max = self.summary.max_compute_workgroups_per_dimension.max(1);
        if groups <= max {
            (groups, 1)
        } else {
            (max, groups.div_ceil(max))
        }
    }

    /// The pending command encoder, made (labelled `label`) if there is none.
    fn encoder(&mut self, label: &'static str) -> &mut wgpu::CommandEncoder {
        let device = &self.device;
        self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
        })
    }

    /// Copies `size` bytes of `buffer` from `offset` to the host, submitting the recorded work
    /// and waiting for the GPU (a sync); `clear` zeroes them on the GPU after the copy
    /// (counters that start over).
    fn read_back(
        &mut self,
        buffer: &wgpu::Buffer,
        (offset, size): (u64, u64),
        clear: bool,
    ) -> Result<Vec<u8>, BackendError> {
        let staging = self.staging_buffer(size);
        let encoder = self.encoder("readback");
        encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, size);
        if clear {
            encoder.clear_buffer(buffer, offset, Some(size));
        }
        self.flush()?;
        self.map_and_copy(&staging)
    }

    fn check_error(&self) -> Result<(), BackendError> {
        match take_error(&self.error) {
            Some(message) => Err(BackendError::Gpu(message)),
            None => Ok(()),
        }
    }

    fn dispatch(
        &mut self,
        kernel: KernelId,
        label: &'static str,
        params: Params,
        bindings: &[Binding],
        workgroups: (u32, u32),
    ) -> Result<(), BackendError> {
        let mut ids = [0u64; 4];
        for (slot, b) in ids.iter_mut().zip(bindings) {
            *slot = b.id;
        }
        let key = DispatchKey {
            kernel,
            buffers: ids,
        };
        // A uniform block is written with `queue.write_buffer`, which lands before the next
        // submission as a whole. Reusing a key with new parameters inside one submission would
        // let the second write overwrite the first, so submit what is recorded first.
        let stale = self
            .dispatches
            .get(&key)
            .is_some_and(|d| d.params != params);
        if stale && self.pending_keys.contains(&key) {
            self.flush()?;
        }
        if self.timestamps.as_ref().is_some_and(Timestamps::is_full) {
            self.drain_timestamps()?;
        }
        let cached = match self.dispatches.entry(key) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => {
                count_internal(&self.pool, (PARAM_WORDS * 4) as i64);
                let uniform = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: (PARAM_WORDS * 4) as u64,
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
                // Force the first write below.
                let mut unwritten = params;
                unwritten[0] = !params[0];
                entry.insert(CachedDispatch {
                    uniform,
                    bind_group,
                    params: unwritten,
                })
            }
        };
        if cached.params != params {
            self.queue
                .write_buffer(&cached.uniform, 0, bytemuck::cast_slice(&params));
            cached.params = params;
        }
        let encoder = self.encoder.get_or_insert_with(|| {
            self.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("training-step"),
                })
        });
        let step = self.recorder.step();
        let timestamp_writes = self.timestamps.as_mut().and_then(|t| t.writes(label, step));
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes,
            });
            pass.set_pipeline(&self.kernels.get(kernel).pipeline);
            pass.set_bind_group(0, &cached.bind_group, &[]);
            pass.dispatch_workgroups(workgroups.0, workgroups.1, 1);
        }
        self.pending_keys.insert(key);
        self.pending_tensors.extend(ids);
        Ok(())
    }

    /// `c = epilogue(op(a) · op(b))` with strides describing the transposes.
    fn matmul(
        &mut self,
        label: &'static str,
        (a, a_strides): (Binding, (usize, usize)),
        (b, b_strides): (Binding, (usize, usize)),
        aux: Option<Binding>,
        (epilogue, act): (u32, Activation),
        (m, n, k): (usize, usize, usize),
        c: Binding,
    ) -> Result<(), BackendError> {
        let params: Params = [
            m as u32,
            n as u32,
            k as u32,
            epilogue,
            a_strides.0 as u32,
            a_strides.1 as u32,
            b_strides.0 as u32,
            b_strides.1 as u32,
            act.code(),
            0,
            0,
            0,
        ];
        let aux = aux.unwrap_or_else(|| Binding {
            id: DUMMY_READ_ID,
            buffer: self.dummy_read.clone(),
        });
        let bindings = [a, b, aux, c];
        let tile = self.sizes.matmul_tile;
        let groups = ((n as u32).div_ceil(tile), (m as u32).div_ceil(tile));
        self.dispatch(KernelId::Matmul, label, params, &bindings, groups)
    }

    /// An optimizer update of `tensors` (parameter, gradient, and up to two state tensors),
    /// through working copies for 16-bit ones.
    fn optimizer(
        &mut self,
        label: &'static str,
        kind: u32,
        tensors: (&Tensor, &Tensor, Option<&Tensor>, Option<&Tensor>),
        scalars: [f32; 6],
    ) -> Result<(), BackendError> {
        let (param, grad, state1, state2) = tensors;
        let all: Vec<&Tensor> = [Some(param), Some(grad), state1, state2]
            .into_iter()
            .flatten()
            .collect();
        self.prepare(&all)?;
        let len = param.len() as u32;
        let (groups_x, groups_y) = self.groups(len);
        let f = f32::to_bits;
        let params: Params = [
            len,
            kind,
            groups_x,
            0,
            f(scalars[0]),
            f(scalars[1]),
            f(scalars[2]),
            f(scalars[3]),
            f(scalars[4]),
            f(scalars[5]),
            0,
            0,
        ];
        let dummy = |i: usize| Binding {
            id: DUMMY_WRITE_IDS[i],
            buffer: self.dummy_write[i].clone(),
        };
        let (d1, d2) = (dummy(0), dummy(1));
        let p = self.output(param, 0, true)?;
        let g = self.operand(grad, 1)?;
        let s1 = match state1 {
            Some(t) => self.output(t, 2, true)?,
            None => d1,
        };
        let s2 = match state2 {
            Some(t) => self.output(t, 3, true)?,
            None => d2,
        };
        self.dispatch(
            KernelId::Optimizer,
            label,
            params,
            &[p, g, s1, s2],
            (groups_x, groups_y),
        )?;
        self.store(param, 0)?;
        for (t, slot) in [(state1, 2), (state2, 3)] {
            if let Some(t) = t {
                self.store(t, slot)?;
            }
        }
        Ok(())
    }

    /// One pass of `shaders/precision.wgsl` over `t`: round (modes 1, 2) or scale (mode 3).
    fn elementwise(
        &mut self,
        t: &Tensor,
        label: &'static str,
        mode: u32,
        factor: f32,
    ) -> Result<(), BackendError> {
        super::check_device(Device::Gpu, label, &[t])?;
        self.prepare(&[t])?;
        let len = t.len() as u32;
        let (groups_x, groups_y) = self.groups(len);
        let slot = if mode == 4 {
            NON_FINITE_SLOT
        } else {
            t.role().index() as u32
        };
        let params: Params = [
            len,
            mode,
            groups_x,
            factor.to_bits(),
            slot,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        if mode == 1 || mode == 2 {
            self.census.role_mut(t.role()).values += u64::from(len);
        }
        let values = self.output(t, 0, true)?;
        let census = self.census_binding();
        self.dispatch(
            KernelId::Round,
            label,
            params,
            &[values, census],
            (groups_x, groups_y),
        )?;
        if mode == 4 {
            // Counting only reads the values: nothing to round back.
            return Ok(());
        }
        self.store(t, 0)
    }

    /// A loss kernel over `[outputs, targets, gradient, stats]` (the gradient written, the
    /// stats added to), through working copies for 16-bit ones.
    fn loss(
        &mut self,
        (kernel, label): (KernelId, &'static str),
        params: Params,
        [outputs, targets, gradient, stats]: [&Tensor; 4],
    ) -> Result<(), BackendError> {
        self.prepare(&[outputs, targets, gradient, stats])?;
        let bindings = [
            self.operand(outputs, 0)?,
            self.operand(targets, 1)?,
            self.output(gradient, 2, false)?,
            self.output(stats, 3, true)?,
        ];
        self.dispatch(kernel, label, params, &bindings, (1, 1))?;
        self.store(gradient, 2)?;
        self.store(stats, 3)
    }

    fn staging_buffer(&mut self, size_in_bytes: u64) -> wgpu::Buffer {
        let pool = &self.pool;
        self.staging
            .entry(size_in_bytes)
            .or_insert_with(|| {
                count_internal(pool, size_in_bytes as i64);
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("readback-staging"),
                    size: size_in_bytes,
                    // A storage buffer cannot be mapped; results travel through this buffer,
                    // which the CPU can map for reading.
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .clone()
    }

    /// Maps `buffer`, waits for the GPU, and returns its bytes: the wait is a sync on the
    /// training thread, and the copy out of the mapped memory the readback.
    fn map_and_copy(&mut self, buffer: &wgpu::Buffer) -> Result<Vec<u8>, BackendError> {
        let start = self.recorder.now_ns();
        let slice = buffer.slice(..);
        map_for_reading(&self.device, &slice)?;
        self.recorder.span(
            Lane::Sync,
            Category::Sync,
            "wait for the GPU (map_async + poll)",
            start,
            0,
        );
        let start = self.recorder.now_ns();
        let bytes = copy_mapped(buffer, &slice)?;
        self.recorder.span(
            Lane::Readback,
            Category::Memcpy,
            "copy mapped buffer to host",
            start,
            bytes.len() as u64,
        );
        self.check_error()?;
        // The GPU is idle now: the moment to read kernel times back without a sync of their own.
        self.collect_timestamps()?;
        Ok(bytes)
    }

    /// Turns the kernel times the GPU has finished (after a wait) into spans on the host axis,
    /// recalibrating the clocks when it is time to.
    fn collect_timestamps(&mut self) -> Result<(), BackendError> {
        if !self.recorder.enabled() {
            self.collect_observed();
            return Ok(());
        }
        let Some(ts) = self.timestamps.as_mut() else {
            self.collect_observed();
            return Ok(());
        };
        if ts.mode != Mode::Record || ts.pending() == 0 {
            return Ok(());
        }
        let start = self.recorder.now_ns();
        let passes = ts.collect(&self.device)?;
        if ts.needs_calibration() {
            let t = self.recorder.now_ns();
            ts.calibrate(&self.device, &self.queue, self.recorder.epoch())?;
            self.recorder.span(
                Lane::Main,
                Category::CpuExec,
                "clock calibration (tracing)",
                t,
                0,
            );
        }
        let offset = ts.calibration.map_or(0.0, |c| c.offset_ns);
        for pass in passes {
            let start_ns = (pass.gpu_ns[0] + offset).max(0.0) as u64;
            let end_ns = (pass.gpu_ns[1] + offset).max(0.0) as u64;
            self.recorder.push(Span {
                lane: Lane::Kernels,
                category: Category::Kernel,
                name: pass.label,
                start_ns,
                duration_ns: end_ns.saturating_sub(start_ns),
                bytes: 0,
                step: pass.step,
                clock: Clock::GpuTimestamp,
            });
        }
        self.recorder.span(
            Lane::Main,
            Category::CpuExec,
            "read kernel timestamps (tracing)",
            start,
            0,
        );
        Ok(())
    }

    /// Host-observed spans of the submissions seen done, where the adapter has no timestamps.
    fn collect_observed(&mut self) {
        let done: Vec<Observed> = match self.observed.lock() {
            Ok(mut list) => std::mem::take(&mut *list),
            Err(_) => return,
        };
        for (submitted, seen_done, step) in done {
            let start_ns = submitted.max(self.observed_end_ns);
            self.observed_end_ns = seen_done.max(start_ns);
            self.recorder.push(Span {
                lane: Lane::Kernels,
                category: Category::Kernel,
                name: "GPU work (host-observed)",
                start_ns,
                duration_ns: self.observed_end_ns - start_ns,
                bytes: 0,
                step,
                clock: Clock::HostObserved,
            });
        }
    }

    /// Waits for the GPU so the query set can be read and reused: a sync caused by tracing
    /// itself, when more kernels ran between two syncs than the query set holds.
    fn drain_timestamps(&mut self) -> Result<(), BackendError> {
        let start = self.recorder.now_ns();
        self.flush()?;
        wait_idle(&self.device)?;
        self.recorder.span(
            Lane::Sync,
            Category::Sync,
            "wait for the GPU (timestamp buffer full, tracing)",
            start,
            0,
        );
        if self
            .timestamps
            .as_ref()
            .is_some_and(|t| t.mode == Mode::OneStep)
        {
            // A one-step timing that overflowed keeps what it has.
            return Ok(());
        }
        self.collect_timestamps()
    }

    /// Copies `values` into `t` through the staging ring: straight into host-visible mapped
    /// memory, then a copy command on the GPU.
    fn write_through_ring(&mut self, t: &Tensor, bytes: &[u8]) -> Result<(), BackendError> {
        let Storage::Gpu(target) = t.storage() else {
            return Ok(());
        };
        let size = bytes.len() as u64;
        if size == 0 {
            return Ok(());
        }
        let i = self.ring_next;
        self.ring_next = (i + 1) % RING_SLOTS;
        if self.ring_used.contains(&i) {
            // Every slot is in the work not yet submitted: submit it so one can come back.
            self.flush()?;
        }
        let fits = self
            .ring
            .get(i)
            .is_some_and(|slot| slot.buffer.size() >= size);
        if !fits {
            let old = self.ring.get(i).map_or(0, |slot| slot.buffer.size());
            count_internal(
                &self.pool,
                size.next_power_of_two().max(256) as i64 - old as i64,
            );
            let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload-staging-ring"),
                size: size.next_power_of_two().max(256),
                // MAP_WRITE: the host writes into it directly; COPY_SRC: the GPU copies out.
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            });
            let slot = RingSlot {
                buffer,
                ready: Arc::new(AtomicBool::new(true)),
            };
            if i < self.ring.len() {
                self.ring[i] = slot;
            } else {
                self.ring.push(slot);
            }
        }
        if !self.ring[i].ready.load(Ordering::Acquire) {
            // The GPU is still copying out of this buffer: the host must wait to reuse it.
            let start = self.recorder.now_ns();
            wait_idle(&self.device)?;
            self.recorder.span(
                Lane::Sync,
                Category::Sync,
                "wait for a free staging buffer",
                start,
                0,
            );
            if !self.ring[i].ready.load(Ordering::Acquire) {
                return Err(BackendError::Gpu(
                    "a staging buffer did not come back after the GPU finished".into(),
                ));
            }
        }
        let start = self.recorder.now_ns();
        let slot = &self.ring[i];
        {
            let mut view = slot
                .buffer
                .get_mapped_range_mut(..size)
                .map_err(|e| BackendError::Gpu(format!("writing a staging buffer failed: {e}")))?;
            view.copy_from_slice(bytes);
        }
        slot.buffer.unmap();
        slot.ready.store(false, Ordering::Release);
        let source = slot.buffer.clone();
        self.encoder("training-step")
            .copy_buffer_to_buffer(&source, 0, target, 0, size);
        self.ring_used.push(i);
        self.pending_tensors.insert(t.id());
        self.recorder.span(
            Lane::Transfer,
            Category::Memcpy,
            "copy into mapped staging buffer",
            start,
            size,
        );
        Ok(())
    }
}

/// Counts `bytes` more (or, negative, fewer) of the backend's own buffers in the accounting.
fn count_internal(pool: &SharedPool, bytes: i64) {
    if let Ok(mut p) = pool.lock() {
        p.ledger.internal(bytes);
    }
}

/// The cache-key id of working copy `slot` bound as the f32 values of `t`: each (tensor, slot)
/// pair keeps its own bind groups, so one op's working copies never take another's parameters.
fn working_view_id(t: &Tensor, slot: usize) -> u64 {
    t.id() | ((slot as u64 + 1) << 56)
}

fn is_working_view(id: u64) -> bool {
    (1..=WORKING_COPIES as u64).contains(&(id >> 56))
}

fn take_error(slot: &Mutex<Option<String>>) -> Option<String> {
    slot.lock().ok().and_then(|mut e| e.take())
}

fn binding(t: &Tensor) -> Result<Binding, BackendError> {
    match t.storage() {
        Storage::Gpu(buffer) => Ok(Binding {
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

impl Backend for GpuBackend {
    fn device(&self) -> Device {
        Device::Gpu
    }

    fn name(&self) -> String {
        format!("{} ({})", self.summary.name, self.summary.backend)
    }

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
            return Err(BackendError::Gpu(format!(
                "`{label}` needs {block} bytes, more than the adapter's {limit}-byte limit \
                 for one storage buffer: use a smaller batch or narrower layers"
            )));
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
            self.device.create_buffer(&wgpu::BufferDescriptor {
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
            let encoder = self.encoder("training-step");
            encoder.clear_buffer(&buffer, 0, None);
            self.pending_tensors.insert(tensor.id());
        }
        if dtype != DType::F32 {
            self.ensure_working(rows * cols)?;
        }
        Ok(tensor)
    }

    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        checks::copy(Device::Gpu, src, dst)?;
        let len = src.len();
        match (src.dtype().half(), dst.dtype().half()) {
            (None, None) => {}
            (Some(a), Some(b)) if a == b => {}
            (Some(format), None) => {
                let widen = (KernelId::Widen, dst.role());
                return self.convert(widen, format, len, binding(src)?, binding(dst)?);
            }
            (None, Some(format)) => {
                let narrow = (KernelId::Narrow, dst.role());
                return self.convert(narrow, format, len, binding(src)?, binding(dst)?);
            }
            (Some(from), Some(to)) => {
                self.prepare(&[src])?;
                let copy = self.working_binding(src, 0)?;
                let widen = (KernelId::Widen, src.role());
                self.convert(widen, from, len, binding(src)?, copy.clone())?;
                let narrow = (KernelId::Narrow, dst.role());
                return self.convert(narrow, to, len, copy, binding(dst)?);
            }
        }
        let (Storage::Gpu(from), Storage::Gpu(to)) = (src.storage(), dst.storage()) else {
            return Ok(());
        };
        let size = src.word_bytes() as u64;
        let encoder = self.encoder("training-step");
        encoder.copy_buffer_to_buffer(from, 0, to, 0, size);
        self.pending_tensors.extend([src.id(), dst.id()]);
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

    fn release_cached(&mut self) {
        // Work not yet submitted may use a cached buffer: submit it first.
        let _ = self.flush();
        if let Ok(mut p) = self.pool.lock() {
            p.release_cached();
        }
    }

    fn reset_peak_memory(&mut self) {
        if let Ok(mut p) = self.pool.lock() {
            p.ledger.reset_peaks();
        }
    }

    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError> {
        let label = match format {
            Half::Fp16 => "round_fp16",
            Half::Bf16 => "round_bf16",
        };
        self.elementwise(t, label, format.code(), 1.0)
    }

    fn scale(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError> {
        self.elementwise(t, "scale", 3, factor)
    }

    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError> {
        checks::write(Device::Gpu, t, values.len())?;
        // A 16-bit tensor's values are rounded on the host: half the bytes cross the bus.
        let packed: Vec<u16>;
        let bytes: &[u8] = match t.dtype().half() {
            None => bytemuck::cast_slice(values),
            Some(format) => {
                let count = self.census.role_mut(t.role());
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
        if self.upload == UploadMode::StagingRing {
            return self.write_through_ring(t, bytes);
        }
        // `write_buffer` lands before the next submission; recorded work that still reads the old
        // values must be submitted first.
        if self.pending_tensors.contains(&t.id()) {
            self.flush()?;
        }
        if let Storage::Gpu(buffer) = t.storage() {
            let start = self.recorder.now_ns();
            self.queue.write_buffer(buffer, 0, bytes);
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
        let bytes = self.read_back(buffer, (0, buffer.size()), false)?;
        let mut values: Vec<f32> = match t.dtype().half() {
            None => bytemuck::pod_collect_to_vec(&bytes),
            Some(format) => bytemuck::pod_collect_to_vec::<u8, u16>(&bytes)
                .into_iter()
                .take(t.len())
                .map(|bits| DType::widen(format, bits))
                .collect(),
        };
        values.truncate(t.len());
        Ok(values)
    }

    fn linear_forward(
        &mut self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_forward(Device::Gpu, x, w, b, out)?;
        self.prepare(&[x, w, b, out])?;
        let (xb, wb, bb) = (
            self.operand(x, 0)?,
            self.operand(w, 1)?,
            self.operand(b, 2)?,
        );
        let ob = self.output(out, 3, false)?;
        self.matmul(
            "linear_forward",
            (xb, (fan_in, 1)),
            (wb, (fan_out, 1)),
            Some(bb),
            (1, act),
            (batch, fan_out, fan_in),
            ob,
        )?;
        self.store(out, 3)
    }

    fn linear_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        a_prev: &Tensor,
        act_prev: Activation,
        dz_prev: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "linear_backward_input";
        let (batch, fan_in, fan_out) =
            checks::linear_backward_input(Device::Gpu, dz, w, a_prev, dz_prev)?;
        self.prepare(&[dz, w, a_prev, dz_prev])?;
        let (dzb, wb) = (self.operand(dz, 0)?, self.operand(w, 1)?);
        let ab = self.operand(a_prev, 2)?;
        let outb = self.output(dz_prev, 3, false)?;
        // op(b) = wᵀ: element (kk, j) of wᵀ is w[j, kk] = w[j * fan_out + kk].
        self.matmul(
            OP,
            (dzb, (fan_out, 1)),
            (wb, (1, fan_out)),
            Some(ab),
            (2, act_prev),
            (batch, fan_in, fan_out),
            outb,
        )?;
        self.store(dz_prev, 3)
    }

    fn linear_backward_params(
        &mut self,
        x: &Tensor,
        dz: &Tensor,
        dw: &mut Tensor,
        db: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_backward_params(Device::Gpu, x, dz, dw, db)?;
        self.prepare(&[x, dz, dw, db])?;
        let (xb, dzb) = (self.operand(x, 0)?, self.operand(dz, 1)?);
        let dz_again = dzb.clone();
        let (dwb, dbb) = (self.output(dw, 2, false)?, self.output(db, 3, false)?);
        // op(a) = xᵀ: element (i, kk) of xᵀ is x[kk, i] = x[kk * fan_in + i].
        self.matmul(
            "weight_grad",
            (xb, (1, fan_in)),
            (dzb, (fan_out, 1)),
            None,
            (0, Activation::Identity),
            (fan_in, fan_out, batch),
            dwb,
        )?;
        self.store(dw, 2)?;
        let params: Params = [batch as u32, fan_out as u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        self.dispatch(
            KernelId::ColumnSum,
            "bias_grad",
            params,
            &[dz_again, dbb],
            ((fan_out as u32).div_ceil(self.sizes.column_sum), 1),
        )?;
        self.store(db, 3)
    }

    fn softmax_cross_entropy(
        &mut self,
        logits: &Tensor,
        targets: &Tensor,
        dlogits: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        const OP: &str = "softmax_cross_entropy";
        let (batch, classes) =
            checks::softmax_cross_entropy(Device::Gpu, logits, targets, dlogits, stats)?;
        let g = grad_scale.to_bits();
        let params: Params = [batch as u32, classes as u32, g, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        self.loss(
            (KernelId::SoftmaxCrossEntropy, OP),
            params,
            [logits, targets, dlogits, stats],
        )
    }

    fn mse_loss(
        &mut self,
        pred: &Tensor,
        targets: &Tensor,
        dpred: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        let (batch, outputs) = checks::mse_loss(Device::Gpu, pred, targets, dpred, stats)?;
        let g = grad_scale.to_bits();
        let params: Params = [batch as u32, outputs as u32, g, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        self.loss(
            (KernelId::Mse, "mse_loss"),
            params,
            [pred, targets, dpred, stats],
        )
    }

    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError> {
        checks::elementwise(Device::Gpu, "sgd_step", param, &[grad])?;
        self.optimizer(
            "sgd_step",
            0,
            (param, grad, None, None),
            [lr, 0.0, 0.0, 0.0, 1.0, 1.0],
        )
    }

    fn momentum_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        velocity: &mut Tensor,
        lr: f32,
        momentum: f32,
    ) -> Result<(), BackendError> {
        const OP: &str = "momentum_step";
        checks::elementwise(Device::Gpu, OP, param, &[grad, velocity])?;
        self.optimizer(
            OP,
            1,
            (param, grad, Some(velocity), None),
            [lr, momentum, 0.0, 0.0, 1.0, 1.0],
        )
    }

    fn adam_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError> {
        const OP: &str = "adam_step";
        checks::elementwise(Device::Gpu, OP, param, &[grad, m, v])?;
        let (bias1, bias2) = hyper.bias_corrections();
        let AdamHyper {
            lr,
            beta1,
            beta2,
            eps,
            ..
        } = hyper;
        // The bias corrections are computed once on the host, in the same f32 arithmetic as the
        // CPU path, instead of in every invocation.
        self.optimizer(
            OP,
            2,
            (param, grad, Some(m), Some(v)),
            [lr, beta1, beta2, eps, bias1, bias2],
        )
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        if let Some(mut encoder) = self.encoder.take() {
            if let Some(ts) = self.timestamps.as_mut() {
                ts.resolve_pending(&mut encoder);
            }
            let start = self.recorder.now_ns();
            self.queue.submit([encoder.finish()]);
            self.recorder
                .span(Lane::Main, Category::CpuExec, "queue.submit", start, 0);
            if self.recorder.enabled() && self.timestamps.is_none() {
                let (list, epoch, step) = (
                    Arc::clone(&self.observed),
                    self.recorder.epoch(),
                    self.recorder.step(),
                );
                self.queue.on_submitted_work_done(move || {
                    if let Ok(mut list) = list.lock() {
                        list.push((start, ns_since(epoch), step));
                    }
                });
                // Notice finished submissions now rather than at the next wait.
                let _ = self.device.poll(wgpu::PollType::Poll);
            }
            // The ring's buffers come back to the host once the GPU has copied out of them.
            for i in self.ring_used.drain(..) {
                let ready = Arc::clone(&self.ring[i].ready);
                self.ring[i]
                    .buffer
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

    fn begin_kernel_timing(&mut self) {
        if self
            .timestamps
            .as_ref()
            .is_some_and(|t| t.mode == Mode::Off)
        {
            // Work recorded before this point is not part of the timed step.
            let _ = self.flush();
            if let Some(t) = self.timestamps.as_mut() {
                t.mode = Mode::OneStep;
            }
        }
    }

    fn take_kernel_times(&mut self) -> Result<Option<KernelTimes>, BackendError> {
        let Some(ts) = self.timestamps.as_ref() else {
            return Ok(None);
        };
        if ts.mode != Mode::OneStep {
            return Ok(None);
        }
        self.flush()?;
        let Some(ts) = self.timestamps.as_mut() else {
            return Ok(None);
        };
        ts.mode = Mode::Off;
        // Mapping the copied timestamps waits for the GPU to finish the step.
        let passes = ts.collect(&self.device)?;
        if passes.is_empty() {
            return Ok(None);
        }
        let kernels: Vec<(String, u64)> = passes
            .iter()
            .map(|p| (p.label.to_owned(), (p.gpu_ns[1] - p.gpu_ns[0]) as u64))
            .collect();
        let total_ns = kernels.iter().map(|(_, ns)| ns).sum();
        Ok(Some(KernelTimes { kernels, total_ns }))
    }

    fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    fn start_recording(&mut self, epoch: Instant) -> Result<(), BackendError> {
        // Finish earlier work so the calibration sees an idle GPU and no old pass is counted.
        self.flush()?;
        wait_idle(&self.device)?;
        self.recorder.start(epoch);
        if let Ok(mut list) = self.observed.lock() {
            list.clear();
        }
        self.observed_end_ns = 0;
        if let Some(ts) = self.timestamps.as_mut() {
            ts.collect(&self.device)?;
            ts.mode = Mode::Record;
            ts.calibrate(&self.device, &self.queue, epoch)?;
        }
        Ok(())
    }

    fn stop_recording(&mut self) {
        self.recorder.stop();
        if let Some(ts) = self.timestamps.as_mut() {
            ts.mode = Mode::Off;
        }
        let _ = self.flush();
        if let Some(ts) = self.timestamps.as_mut() {
            let _ = ts.collect(&self.device);
        }
    }

    fn time_kernels(&mut self, on: bool) {
        if let Some(ts) = self.timestamps.as_mut() {
            ts.sampled = on;
        }
    }

    fn set_upload_mode(&mut self, mode: UploadMode) {
        if mode != self.upload {
            let _ = self.flush();
            self.upload = mode;
        }
    }

    fn as_dyn(&mut self) -> &mut dyn Backend {
        self
    }

    fn adapter_summary(&self) -> Option<AdapterSummary> {
        Some(self.summary.clone())
    }

    fn count_non_finite(&mut self, tensors: &[&Tensor]) -> Result<u64, BackendError> {
        for t in tensors {
            self.elementwise(t, "count_non_finite", 4, 1.0)?;
        }
        let census = self.census_buffer.clone();
        let offset = u64::from(NON_FINITE_SLOT) * 4;
        let count: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.read_back(&census, (offset, 4), true)?);
        Ok(count.first().copied().map_or(0, u64::from))
    }

    fn take_rounding_census(&mut self) -> Result<RoundingCensus, BackendError> {
        let mut census = std::mem::take(&mut self.census);
        if census.is_empty() {
            // Nothing was rounded, so the kernels counted nothing either.
            return Ok(census);
        }
        let buffer = self.census_buffer.clone();
        let bytes = self.read_back(&buffer, (0, ROLE_COUNTS_BYTES), true)?;
        let counts: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        for (c, n) in census.by_role.iter_mut().zip(counts.chunks_exact(3)) {
            c.nonzero += u64::from(n[0]);
            c.underflow += u64::from(n[1]);
            c.overflow += u64::from(n[2]);
        }
        Ok(census)
    }

    fn clear_caches(&mut self) {
        let _ = self.flush();
        self.forget_working();
        count_internal(
            &self.pool,
            -((self.dispatches.len() * PARAM_WORDS * 4) as i64),
        );
        self.dispatches.clear();
    }
}
