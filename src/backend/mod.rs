//! One `Backend` trait, implemented by the CPU (rayon) and the GPU (wgpu) devices.
//!
//! Every op writes into an output tensor that the caller allocated up front, so a training step
//! allocates nothing. On the CPU an op runs when it is called; on the GPU it is recorded into the
//! pending command encoder and runs when the backend flushes (once per training step), which is
//! why reading a value back (`read`) is the only place a caller waits for the device.

mod checks;
pub mod cpu;
pub mod gpu;

use std::fmt;
use std::time::Instant;

use crate::device::Device;

use crate::memory::{MemorySnapshot, OutOfMemory, Role};
use crate::precision::{DType, Half, RoundingCensus};
use crate::trace::Recorder;

/// The element-wise non-linearity after a dense layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// `f(z) = z`, used for the output layer (the loss applies softmax).
    Identity,
    /// `f(z) = max(z, 0)`.
    Relu,
    /// `f(z) = tanh(z)`.
    Tanh,
    /// `f(z) = 1 / (1 + e^-z)`.
    Sigmoid,
}

impl Activation {
    /// The hidden-layer activations a user can choose.
    pub const CHOICES: [Activation; 3] = [Activation::Relu, Activation::Tanh, Activation::Sigmoid];

    /// Code shared with the shaders (`act` field of their parameter blocks).
    pub fn code(self) -> u32 {
        match self {
            Activation::Identity => 0,
            Activation::Relu => 1,
            Activation::Tanh => 2,
            Activation::Sigmoid => 3,
        }
    }

    /// Lower-case name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Activation::Identity => "identity",
            Activation::Relu => "relu",
            Activation::Tanh => "tanh",
            Activation::Sigmoid => "sigmoid",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Identity, Self::Relu, Self::Tanh, Self::Sigmoid]
            .into_iter()
            .find(|a| a.as_str() == name)
    }

    /// `f(z)`.
    #[inline]
    pub fn apply(self, z: f32) -> f32 {
        match self {
            Activation::Identity => z,
            Activation::Relu => z.max(0.0),
            Activation::Tanh => z.tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-z).exp()),
        }
    }

    /// `f'(z)` written in terms of the output `a = f(z)`, which is what the forward pass keeps.
    #[inline]
    pub fn derivative_from_output(self, a: f32) -> f32 {
        match self {
            Activation::Identity => 1.0,
            Activation::Relu => {
                if a > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Activation::Tanh => 1.0 - a * a,
            Activation::Sigmoid => a * (1.0 - a),
        }
    }
}

/// Hyper-parameters of one Adam update, PyTorch semantics (`torch.optim.Adam`, no weight decay).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamHyper {
    /// Learning rate.
    pub lr: f32,
    /// Decay of the first moment.
    pub beta1: f32,
    /// Decay of the second moment.
    pub beta2: f32,
    /// Added to the denominator.
    pub eps: f32,
    /// 1-based step count, for bias correction.
    pub step: u32,
}

impl AdamHyper {
    /// `(1 − β1^t, 1 − β2^t)`, in f32 as both devices use them.
    pub fn bias_corrections(&self) -> (f32, f32) {
        let t = self.step as i32;
        (1.0 - self.beta1.powi(t), 1.0 - self.beta2.powi(t))
    }
}

/// Errors every backend op can return.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum BackendError {
    /// Tensors of two devices met in one op: the "model still on the CPU" mistake.
    #[error("expected all tensors on the same device, found {expected} and {found} (in {op})")]
    DeviceMismatch {
        /// The device the op runs on.
        expected: Device,
        /// The device of the offending tensor.
        found: Device,
        /// Which op.
        op: &'static str,
    },
    /// Shapes do not fit together.
    #[error("shape mismatch in {op}: {detail}")]
    Shape {
        /// Which op.
        op: &'static str,
        /// What was expected and what was found.
        detail: String,
    },
    /// The device could not be set up (no thread pool, no adapter).
    #[error("{0}")]
    Setup(String),
    /// The GPU reported an error (validation, device lost, out of memory).
    #[error("GPU error: {0}")]
    Gpu(String),
    /// An allocation would go past the device's memory budget.
    #[error(transparent)]
    OutOfMemory(Box<OutOfMemory>),
    /// The loss stopped being a finite number: training cannot go on from here.
    #[error(
        "the loss became {loss} by step {step}: the updates grew without bound. The usual cause \
         is a learning rate too high for this model ({lr}): lower it (to {lower}, say) and press \
         Reset"
    )]
    Diverged {
        /// The step at which it was seen.
        step: u64,
        /// The loss read back (NaN or infinite).
        loss: f32,
        /// The learning rate of the run.
        lr: f32,
        /// A tenth of it.
        lower: f32,
    },
}

/// f32 working copies a backend keeps for 16-bit operands: one per operand of the op with the
/// most (a dense layer's input, weights, bias and output; Adam's four tensors).
pub const WORKING_COPIES: usize = 4;

/// Values of the largest 16-bit tensor among `operands` (0 when all are f32): how large an op's
/// working copies must be.
pub(crate) fn largest_half(operands: &[&Tensor]) -> usize {
    operands
        .iter()
        .filter(|t| t.dtype() != DType::F32)
        .map(|t| t.len())
        .max()
        .unwrap_or(0)
}

/// The working copies' names in the memory view.
pub(crate) const WORKING_LABELS: [&str; WORKING_COPIES] = [
    "f32 working copy 1",
    "f32 working copy 2",
    "f32 working copy 3",
    "f32 working copy 4",
];

/// A 2-D row-major tensor that knows its device and how its values are stored.
#[derive(Debug)]
pub struct Tensor {
    id: u64,
    label: String,
    role: Role,
    rows: usize,
    cols: usize,
    dtype: DType,
    storage: Storage,
    /// Gives the memory back to the device's accounting (and pool) when the tensor is dropped.
    _lease: Option<Lease>,
}

/// Whatever returns a tensor's memory when dropped (each backend has its own kind); it is only
/// ever dropped, never read.
pub(crate) struct Lease(#[allow(dead_code)] pub(crate) Box<dyn std::any::Any + Send>);

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Lease")
    }
}

#[derive(Debug)]
pub(crate) enum Storage {
    Cpu(Vec<f32>),
    /// FP16 or BF16 bits on the host.
    CpuHalf(Vec<u16>),
    /// On the GPU a 16-bit tensor packs two values in each 32-bit word, the lower-indexed value
    /// in the low half: the same bytes as the host's `Vec<u16>`.
    Gpu(wgpu::Buffer),
}

impl Tensor {
    /// The device this tensor's memory is on.
    pub fn device(&self) -> Device {
        match self.storage {
            Storage::Cpu(_) | Storage::CpuHalf(_) => Device::Cpu,
            Storage::Gpu(_) => Device::Gpu,
        }
    }

    /// Unique per process; the GPU backend keys its cached bind groups on it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name the memory and journey views show.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// What the tensor is for, in the memory accounting.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `rows * cols`.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How the values are stored.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Bytes of device memory the values take.
    pub fn size_in_bytes(&self) -> usize {
        self.len() * self.dtype.bytes()
    }

    /// Bytes a GPU buffer of this tensor needs: whole 32-bit words (an odd number of 16-bit
    /// values leaves half a word unused).
    pub(crate) fn word_bytes(&self) -> usize {
        self.size_in_bytes().div_ceil(4) * 4
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        label: &str,
        role: Role,
        rows: usize,
        cols: usize,
        dtype: DType,
        storage: Storage,
        lease: Lease,
    ) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            label: label.to_owned(),
            role,
            rows,
            cols,
            dtype,
            storage,
            _lease: Some(lease),
        }
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    pub(crate) fn storage_mut(&mut self) -> &mut Storage {
        &mut self.storage
    }
}

/// Fails with [`BackendError::DeviceMismatch`] unless every tensor is on `expected`.
pub fn check_device(
    expected: Device,
    op: &'static str,
    tensors: &[&Tensor],
) -> Result<(), BackendError> {
    match tensors.iter().find(|t| t.device() != expected) {
        Some(t) => Err(BackendError::DeviceMismatch {
            expected,
            found: t.device(),
            op,
        }),
        None => Ok(()),
    }
}

/// Fails with [`BackendError::Shape`] unless `t` is `rows x cols`.
pub fn check_shape(
    op: &'static str,
    t: &Tensor,
    rows: usize,
    cols: usize,
) -> Result<(), BackendError> {
    if t.rows == rows && t.cols == cols {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` is {}x{}, expected {rows}x{cols}",
                t.label, t.rows, t.cols
            ),
        })
    }
}

/// Kernel times of the last timed step, from GPU timestamp queries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTimes {
    /// `(kernel label, duration_ns)` in submission order.
    pub kernels: Vec<(String, u64)>,
    /// Sum of the kernel durations.
    pub total_ns: u64,
}

/// The ops a training step needs. Both devices implement every one.
///
/// Shapes: `x` is `[batch, in]`, `w` is `[in, out]`, `b` is `[1, out]`, activations are
/// `[batch, out]`, `targets` is `[batch, 1]` holding class indices as `f32`.
pub trait Backend: Send {
    /// The device this backend runs on.
    fn device(&self) -> Device;

    /// A human-readable name: the CPU model and thread count, or the adapter and its API.
    fn name(&self) -> String;

    /// A new zero-filled tensor on this device stored as `dtype`, counted under `role`. Fails
    /// with [`BackendError::OutOfMemory`] when it would go past the memory budget.
    ///
    /// The first 16-bit tensor of a size makes the backend's f32 working copies large enough
    /// for it (four, counted as workspace): a 16-bit operand is widened into one for each op.
    fn alloc_as(
        &mut self,
        role: Role,
        label: &str,
        shape: (usize, usize),
        dtype: DType,
    ) -> Result<Tensor, BackendError>;

    /// A new zero-filled f32 tensor on this device, counted under `role`.
    fn alloc(
        &mut self,
        role: Role,
        label: &str,
        rows: usize,
        cols: usize,
    ) -> Result<Tensor, BackendError> {
        self.alloc_as(role, label, (rows, cols), DType::F32)
    }

    /// A new zero-filled tensor counted as workspace.
    fn zeros(&mut self, label: &str, rows: usize, cols: usize) -> Result<Tensor, BackendError> {
        self.alloc(Role::Workspace, label, rows, cols)
    }

    /// `dst = src` on the device (both the same shape); between storage types the values are
    /// widened exactly or rounded to nearest, ties to even.
    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError>;

    /// The memory accounting now.
    fn memory(&self) -> MemorySnapshot;

    /// Sets or clears the memory budget allocations are checked against.
    fn set_memory_budget(&mut self, budget_bytes: Option<u64>);

    /// Gives the pool's cached blocks back to the device (GPU; nothing to do on the CPU).
    fn release_cached(&mut self) {}

    /// Starts the peak figures over.
    fn reset_peak_memory(&mut self);

    /// Rounds every value of `t` to `format` (nearest, ties to even) and stores it back in
    /// `t`'s own storage: the same bits on both devices.
    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError>;

    /// What rounding into 16-bit formats lost to zero and to infinity, by the role of the
    /// tensor it was stored in, since the last call (which starts the counts over). The GPU
    /// waits for its pending work first: a sync point.
    fn take_rounding_census(&mut self) -> Result<RoundingCensus, BackendError> {
        Ok(RoundingCensus::default())
    }

    /// How many values of `tensors` are NaN or infinite: `GradScaler`'s check before an update,
    /// made on the device; only the count comes back (a sync on the GPU).
    fn count_non_finite(&mut self, tensors: &[&Tensor]) -> Result<u64, BackendError> {
        let mut count = 0;
        for t in tensors {
            count += self.read(t)?.iter().filter(|v| !v.is_finite()).count() as u64;
        }
        Ok(count)
    }

    /// `t *= factor`, element-wise (loss scaling: a power of two multiplies exactly).
    fn scale(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError>;

    /// Copies host values into `t` (host-to-device transfer on the GPU); a 16-bit tensor gets
    /// them rounded on the host, so only half the bytes travel.
    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError>;

    /// Copies `t` back to the host as f32, waiting for all pending work first (a sync point).
    fn read(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError>;

    /// `out = act(x · w + b)`: a dense layer with its bias and activation fused.
    fn linear_forward(
        &mut self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// `dz_prev = (dz · wᵀ) ⊙ act'(a_prev)`: the gradient flowing into the previous layer,
    /// through that layer's activation (whose output `a_prev` the forward pass kept).
    fn linear_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        a_prev: &Tensor,
        act_prev: Activation,
        dz_prev: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// `dw = xᵀ · dz`, `db = Σ_rows dz`: the parameter gradients of a dense layer.
    fn linear_backward_params(
        &mut self,
        x: &Tensor,
        dz: &Tensor,
        dw: &mut Tensor,
        db: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// Softmax cross-entropy with mean reduction over the batch.
    ///
    /// Writes `dlogits = grad_scale · (softmax(logits) - onehot(targets)) / batch` (the
    /// gradient of the loss multiplied by `grad_scale`: 1, or a loss weight or loss scale) and
    /// adds
    /// `[Σ loss, Σ correct, batch]` into the `[1, 3]` tensor `stats`, so the loss can stay on the
    /// device for many steps and be read back only when it is logged.
    fn softmax_cross_entropy(
        &mut self,
        logits: &Tensor,
        targets: &Tensor,
        dlogits: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError>;

    /// Mean squared error over all elements, PyTorch's `MSELoss`: `L = Σ (p − y)² / (batch · n)`
    /// for `pred` and `targets` of shape `[batch, n]`.
    ///
    /// Writes `dpred = grad_scale · 2 (p − y) / (batch · n)` and adds `[Σ_rows mean_j (p − y)²,
    /// Σ_rows mean_j |p − y|, batch]` into the `[1, 3]` tensor `stats` (the loss and the mean
    /// absolute error stay on the device until they are logged, as with the cross-entropy).
    fn mse_loss(
        &mut self,
        pred: &Tensor,
        targets: &Tensor,
        dpred: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError>;

    /// `p -= lr · g`.
    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError>;

    /// PyTorch's SGD with momentum: `v = μ·v + g; p -= lr · v`.
    fn momentum_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        velocity: &mut Tensor,
        lr: f32,
        momentum: f32,
    ) -> Result<(), BackendError>;

    /// Adam: `m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
    /// p -= lr · m̂ / (√v̂ + ε)` with `m̂ = m / (1-β1^t)`, `v̂ = v / (1-β2^t)`.
    fn adam_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError>;

    /// Sends the recorded work to the device without waiting for it (GPU); nothing on the CPU.
    fn flush(&mut self) -> Result<(), BackendError>;

    /// Asks the backend to time each kernel of the work recorded until the next
    /// [`Backend::take_kernel_times`]. Backends without timestamps ignore it.
    fn begin_kernel_timing(&mut self) {}

    /// Kernel times since [`Backend::begin_kernel_timing`], waiting for that work to finish.
    /// `None` when the device has no timestamp queries (or for the CPU, whose ops are timed by
    /// the caller's clock).
    fn take_kernel_times(&mut self) -> Result<Option<KernelTimes>, BackendError> {
        Ok(None)
    }

    /// Runs `f` with this backend in the context its kernels run best in: for the CPU, on one
    /// of its own pool's threads, so that one-thread kernels need no hand-off and parallel ones
    /// share the pool with the caller instead of competing with it for cores. Long loops (a
    /// worker's training loop, a benchmark) run inside it.
    fn enter(&mut self, f: &mut (dyn FnMut(&mut dyn Backend) + Send)) {
        f(self.as_dyn());
    }

    /// `self` as a trait object (for [`Backend::enter`]'s default).
    fn as_dyn(&mut self) -> &mut dyn Backend;

    /// Kernel threads, for CPU backends.
    fn threads(&self) -> Option<usize> {
        None
    }

    /// The adapter, for GPU backends.
    fn adapter_summary(&self) -> Option<gpu::AdapterSummary> {
        None
    }

    /// Forgets cached per-tensor state (GPU bind groups, the f32 working copies) when a model
    /// is rebuilt.
    fn clear_caches(&mut self) {}

    /// The span recorder of the thread that drives this backend: the backend stamps its own
    /// copies, waits and kernels into it, the training loop its steps.
    fn recorder(&mut self) -> &mut Recorder;

    /// Starts recording spans against `epoch` (on the GPU also timing every kernel, and
    /// measuring how the GPU's clock maps onto the host's).
    fn start_recording(&mut self, epoch: Instant) -> Result<(), BackendError> {
        self.recorder().start(epoch);
        Ok(())
    }

    /// Stops recording spans.
    fn stop_recording(&mut self) {
        self.recorder().stop();
    }

    /// How host values travel to the device (GPU only).
    fn set_upload_mode(&mut self, _mode: UploadMode) {}

    /// Whether the kernels recorded from now on are timed, while recording (GPU only: the CPU's
    /// are timed by the caller's clock).
    fn time_kernels(&mut self, _on: bool) {}
}

/// How [`Backend::write`] moves values to a GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UploadMode {
    /// `queue.write_buffer`: wgpu copies the values into a staging buffer of its own, then into
    /// the tensor when the work is submitted.
    #[default]
    WriteBuffer,
    /// A ring of buffers the host keeps mapped (the analogue of CUDA's pinned memory): values are
    /// copied straight into one, and a copy command moves them into the tensor.
    StagingRing,
}
