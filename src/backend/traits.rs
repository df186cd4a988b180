//! What a backend does, by concern, as burn splits its backend trait: the ops a training step
//! computes ([`ComputeOps`]), the device's memory ([`DeviceMemory`]), what it measures of
//! itself ([`Instrumented`]) and what it is ([`DeviceInfo`]). [`Backend`] is all four; both
//! devices implement every method.
//!
//! Every op writes into an output tensor that the caller allocated up front, so a training step
//! allocates nothing. On the CPU an op runs when it is called; on the GPU it is recorded into the
//! pending command encoder and runs when the backend flushes (once per training step), which is
//! why reading a value back ([`DeviceMemory::read`]) is where a caller waits for the device.

use web_time::Instant;

use super::error::BackendError;
use super::identity::{AdapterSummary, TuningNote};
use super::params::{
    Activation, AdamHyper, ConvShape, KernelTimes, ParamTensors, PoolShape, UpdateStep, UploadMode,
};
use super::pending::PendingRead;
use super::sequence::SequenceOps;
use super::tensor::Tensor;
use crate::device::Device;
use crate::memory::{MemorySnapshot, Role};
use crate::precision::{DType, Half, RoundingCensus};
use crate::trace::Recorder;

/// A device that trains: every concern at once. Implemented for anything that implements the
/// four, so code that trains takes `&mut dyn Backend` and never names a device.
pub trait Backend: ComputeOps + SequenceOps + DeviceMemory + Instrumented + DeviceInfo {}

impl<T: ComputeOps + SequenceOps + DeviceMemory + Instrumented + DeviceInfo> Backend for T {}

/// What a backend is and where its work runs.
pub trait DeviceInfo: Send {
    /// The device this backend runs on.
    fn device(&self) -> Device;

    /// A human-readable name: the CPU model and thread count, or the adapter and its API.
    fn name(&self) -> String;

    /// Kernel threads, for CPU backends.
    fn threads(&self) -> Option<usize> {
        None
    }

    /// The adapter, for GPU backends.
    fn adapter_summary(&self) -> Option<AdapterSummary> {
        None
    }

    /// What went wrong with the kept kernel choice as a GPU backend was opened (the run goes
    /// on; the GPU column says so).
    fn tuning_notes(&self) -> Vec<TuningNote> {
        Vec::new()
    }

    /// Kernels dispatched since the backend opened, for GPU backends: each costs a launch, and
    /// in a tiny network's step their count, not their arithmetic, sets the time.
    fn kernels_launched(&self) -> Option<u64> {
        None
    }

    /// Runs `f` with this backend in the context its kernels run best in: for the CPU, on one
    /// of its own pool's threads, so that one-thread kernels need no hand-off and parallel ones
    /// share the pool with the caller instead of competing with it for cores. Long loops (a
    /// worker's training loop, a benchmark) run inside it.
    fn enter(&mut self, f: &mut (dyn FnMut(&mut dyn Backend) + Send)) {
        f(self.as_dyn());
    }

    /// `self` as a trait object (for [`DeviceInfo::enter`]'s default).
    fn as_dyn(&mut self) -> &mut dyn Backend;
}

/// The device's memory: tensors made, filled, read and counted.
pub trait DeviceMemory {
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

    /// A new tensor of small repeating values, the same on every device: what the benchmarks
    /// and the GPU's kernel tuning time kernels on.
    fn filled(&mut self, label: &str, rows: usize, cols: usize) -> Result<Tensor, BackendError> {
        let mut t = self.zeros(label, rows, cols)?;
        let values: Vec<f32> = (0..rows * cols)
            .map(|i| ((i % 17) as f32 - 8.0) / 16.0)
            .collect();
        self.write(&mut t, &values)?;
        Ok(t)
    }

    /// Copies host values into `t` (host-to-device transfer on the GPU); a 16-bit tensor gets
    /// them rounded on the host, so only half the bytes travel.
    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError>;

    /// Copies `t` back to the host as f32, waiting for all pending work first (a sync point).
    fn read(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError>;

    /// Starts copying `t` back to the host without waiting for the device: the values come
    /// from [`DeviceMemory::finish_read`] once it has them. The CPU's are there at once; a GPU's
    /// once its work up to now has run (a browser's GPU answers only between two of the page's
    /// frames, so a loop that shares the page's thread reads this way).
    fn start_read(&mut self, t: &Tensor) -> Result<PendingRead, BackendError> {
        self.read(t).map(PendingRead::ready)
    }

    /// The values of `read` if the device has them (`None`: not yet, look again later). Each
    /// read gives its values once.
    fn finish_read(&mut self, read: &mut PendingRead) -> Option<Result<Vec<f32>, BackendError>> {
        read.take_ready().map(Ok)
    }

    /// How host values travel to the device (GPU only). Work recorded under the old mode is
    /// submitted first.
    fn set_upload_mode(&mut self, _mode: UploadMode) -> Result<(), BackendError> {
        Ok(())
    }

    /// The memory accounting now.
    fn memory(&self) -> MemorySnapshot;

    /// Sets or clears the memory budget allocations are checked against.
    fn set_memory_budget(&mut self, budget_bytes: Option<u64>);

    /// Gives the pool's cached blocks back to the device (GPU; nothing to do on the CPU). Work
    /// not yet submitted may use a cached block, so it is submitted first.
    fn release_cached(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    /// Starts the peak figures over.
    fn reset_peak_memory(&mut self);

    /// Forgets cached per-tensor state (GPU bind groups, the f32 working copies) when a model
    /// is rebuilt, submitting recorded work first.
    fn clear_caches(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
}

/// The ops a training step needs.
///
/// Shapes: `x` is `[batch, in]`, `w` is `[in, out]`, `b` is `[1, out]`, activations are
/// `[batch, out]`, `targets` is `[batch, 1]` holding class indices as `f32`.
pub trait ComputeOps {
    /// `dst = src` on the device (both the same shape); between storage types the values are
    /// widened exactly or rounded to nearest, ties to even.
    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError>;

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

    /// A convolution's forward pass with its bias and activation: `out = act(x ⊛ w + b)` over
    /// channels-last images (see [`ConvShape`]), `w` `[K² · C_in, C_out]` (its row
    /// `(ky·K + kx)·C_in + c` is tap `(ky, kx)` of input channel `c`), `out`
    /// `[batch · H · W, C_out]`, zero padding at the borders. Both devices convolve straight from the images, each its own
    /// way (the CPU's register-tiled kernels, the GPU's products reading the patches where
    /// they stand): no patch matrix is made or kept.
    fn conv_forward(
        &mut self,
        x: &Tensor,
        shape: ConvShape,
        params: (&Tensor, &Tensor, Activation),
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// A convolution's parameter gradients from its input images, `dw = patches(x)ᵀ · dz` and
    /// `db = Σ dz`, timed as the dense layers' are: a weight-gradient kernel and a
    /// bias-gradient kernel.
    fn conv_backward_params(
        &mut self,
        x: &Tensor,
        shape: ConvShape,
        dz: &Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError>;

    /// A convolution's input gradient, `dx = dz ⊛ᵀ w` (the transposed convolution: each input
    /// value's gradient sums, over the taps that read it, the output gradients times their
    /// weights), with no activation (it flows into pooled values).
    fn conv_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        shape: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// 2×2 max pooling with stride 2 over channels-last images (see [`PoolShape`]).
    fn max_pool(
        &mut self,
        x: &Tensor,
        shape: PoolShape,
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// Max pooling's gradient, through the activation whose output `x` is: in each window the
    /// first largest value in row-major order gets `dout · act'(x)` (one value of a tie, so
    /// the gradient is not counted twice), every other value 0, as does a left-out odd edge.
    fn max_pool_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        shape: PoolShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// `out = act(x)`, value by value: an activation as a layer of its own, where it cannot be
    /// fused into the product before it (GELU, whose derivative needs its input).
    fn activation_forward(
        &mut self,
        x: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// `dx = dout ⊙ act'(x)`, the derivative taken at the activation's input `x`.
    fn activation_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        dx: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// Layer normalisation over each row's `n` features, PyTorch's `LayerNorm(n)` (ε = 1e-5,
    /// the biased variance): `out = (x − μ) / √(σ² + ε) · gamma + beta`, `gamma` and `beta`
    /// `[1, n]`. Each row's `μ` and `1 / √(σ² + ε)` go into the f32 `stats` `[rows, 2]`, which
    /// backward reads.
    fn layer_norm(
        &mut self,
        x: &Tensor,
        params: (&Tensor, &Tensor),
        out: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// Layer normalisation's backward pass from the forward pass's input and `stats`: with
    /// `saved` = `(gamma, stats)`, `x̂ = (x − μ) · r` and `g = dout ⊙ gamma`:
    /// `dx = r · (g − mean(g) − x̂ · mean(g ⊙ x̂))`
    /// per row, `dgamma = Σ_rows dout ⊙ x̂`, `dbeta = Σ_rows dout`.
    fn layer_norm_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        saved: (&Tensor, &Tensor),
        dx: &mut Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError>;

    /// Softmax cross-entropy with mean reduction over the batch.
    ///
    /// Writes `dlogits = grad_scale · (softmax(logits) - onehot(targets)) / batch` (the
    /// gradient of the loss multiplied by `grad_scale`: 1, or a loss weight or loss scale) and
    /// adds `[Σ loss, Σ correct, batch]` into the `[1, 3]` tensor `stats`, so the loss can stay
    /// on the device for many steps and be read back only when it is logged.
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
    /// p -= lr · m̂ / (√v̂ + ε)` with `m̂ = m / (1-β1^t)`, `v̂ = v / (1-β2^t)`; with a weight
    /// decay (`AdamW`, decoupled as PyTorch's), `p` is first multiplied by `1 − lr · decay`.
    fn adam_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError>;

    /// One update of a layer's parameters, its weights and its biases, by `rule`, whose weight
    /// decay (`AdamW`'s) applies to the weights only, never to the biases: by default one tensor
    /// after the other (the CPU). The GPU updates both in one dispatch where it can: one launch
    /// fewer per layer, which is what a tiny network's step is made of.
    fn update_layer(
        &mut self,
        rule: UpdateStep,
        [weights, biases]: [ParamTensors<'_>; 2],
    ) -> Result<(), BackendError> {
        update_one(self, rule, weights)?;
        update_one(self, rule.without_decay(), biases)
    }

    /// Rounds every value of `t` to `format` (nearest, ties to even) and stores it back in
    /// `t`'s own storage: the same bits on both devices.
    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError>;

    /// `t *= factor`, element-wise (loss scaling: a power of two multiplies exactly).
    fn scale(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError>;

    /// How many values of `tensors` are NaN or infinite: `GradScaler`'s check before an update,
    /// made on the device; only the count comes back (a sync on the GPU).
    fn count_non_finite(&mut self, tensors: &[&Tensor]) -> Result<u64, BackendError>;

    /// Sends the recorded work to the device without waiting for it (GPU); nothing on the CPU.
    fn flush(&mut self) -> Result<(), BackendError>;
}

/// What a backend measures of its own work: spans on the journey's lanes, its kernels' times,
/// and what rounding into 16 bits lost.
pub trait Instrumented {
    /// The span recorder of the thread that drives this backend: the backend stamps its own
    /// copies, waits and kernels into it, the training loop its steps.
    fn recorder(&mut self) -> &mut Recorder;

    /// Starts recording spans against `epoch` (on the GPU also measuring how the GPU's clock
    /// maps onto the host's, so timed kernels become spans on the host's axis).
    fn start_recording(&mut self, epoch: Instant) -> Result<(), BackendError> {
        self.recorder().start(epoch);
        Ok(())
    }

    /// Stops recording spans (on the GPU, after the timed work recorded so far has been
    /// submitted and its timestamps taken in).
    fn stop_recording(&mut self) -> Result<(), BackendError> {
        self.recorder().stop();
        Ok(())
    }

    /// Whether the kernels recorded from now on are timed one by one (GPU timestamp queries,
    /// where the adapter has them; on the CPU the host's clock around each op). The GPU's are
    /// taken in at the next sync: as spans while recording, and always as
    /// [`Instrumented::kernel_times`]; the CPU's are there at once.
    fn time_kernels(&mut self, _on: bool) {}

    /// The kernels of the latest step whose kernels were all timed, as taken in at the last
    /// sync (no wait of its own). `None` until a step has been timed, and always on adapters
    /// without timestamp queries.
    fn kernel_times(&self) -> Option<&KernelTimes> {
        None
    }

    /// What rounding into 16-bit formats lost to zero and to infinity, by the role of the
    /// tensor it was stored in, since the last call (which starts the counts over). The GPU
    /// waits for its pending work first: a sync point.
    fn take_rounding_census(&mut self) -> Result<RoundingCensus, BackendError> {
        Ok(RoundingCensus::default())
    }
}

/// One parameter tensor's update by `rule` through the per-tensor ops; an error names a state
/// that does not fit the rule.
pub fn update_one<B: ComputeOps + ?Sized>(
    backend: &mut B,
    rule: UpdateStep,
    p: ParamTensors<'_>,
) -> Result<(), BackendError> {
    let ParamTensors { value, grad, state } = p;
    match (rule, state) {
        (UpdateStep::Sgd { lr }, _) => backend.sgd_step(value, grad, lr),
        (UpdateStep::Momentum { lr, momentum }, [velocity]) => {
            backend.momentum_step(value, grad, velocity, lr, momentum)
        }
        (UpdateStep::Adam(hyper), [m, v]) => backend.adam_step(value, grad, m, v, hyper),
        (rule, state) => Err(BackendError::Shape {
            op: "optimizer",
            detail: format!(
                "{} needs {} state tensors, not {}",
                rule.name(),
                rule.state_tensors(),
                state.len()
            ),
        }),
    }
}
