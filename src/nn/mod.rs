//! The network: a multi-layer perceptron, its seeded initialisation, and its training step,
//! written once against the [`Backend`] trait so both devices run the very same algorithm.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::backend::{Activation, AdamHyper, Backend, BackendError, Tensor};
use crate::memory::Role;
use crate::precision::DType;
use crate::precision::{GradScaler, Half, Precision};

mod spec;

pub use spec::{Loss, ModelSpec, OptimizerKind};

/// `(weights, biases)` per layer, on the host.
pub type LayerValues = Vec<(Vec<f32>, Vec<f32>)>;

/// A parameter tensor with its gradient and optimizer state.
struct Param {
    value: Tensor,
    grad: Tensor,
    state: Vec<Tensor>,
}

impl Param {
    fn new(
        backend: &mut dyn Backend,
        name: &str,
        rows: usize,
        cols: usize,
        init: &[f32],
        (optimizer, dtype): (OptimizerKind, DType),
    ) -> Result<Self, BackendError> {
        let shape = (rows, cols);
        let mut value = backend.alloc_as(Role::Parameters, name, shape, dtype)?;
        backend.write(&mut value, init)?;
        let label = format!("{name}.grad");
        let grad = backend.alloc_as(Role::Gradients, &label, shape, dtype)?;
        let state = (0..optimizer.state_tensors())
            .map(|i| {
                let label = format!("{name}.{}", ["m", "v"][i]);
                backend.alloc_as(Role::OptimizerState, &label, shape, dtype)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { value, grad, state })
    }

    fn update(
        &mut self,
        backend: &mut dyn Backend,
        optimizer: OptimizerKind,
        lr: f32,
        step: u32,
    ) -> Result<(), BackendError> {
        let Self { value, grad, state } = self;
        match (optimizer, state.as_mut_slice()) {
            (OptimizerKind::Sgd, _) => backend.sgd_step(value, grad, lr),
            (OptimizerKind::Momentum, [velocity]) => {
                backend.momentum_step(value, grad, velocity, lr, OptimizerKind::MOMENTUM)
            }
            (OptimizerKind::Adam, [m, v]) => {
                backend.adam_step(value, grad, m, v, AdamHyper::defaults(lr, step))
            }
            _ => Err(BackendError::Shape {
                op: "optimizer",
                detail: format!(
                    "{} needs {} state tensors",
                    optimizer.as_str(),
                    optimizer.state_tensors()
                ),
            }),
        }
    }
}

/// Host-side initial values, drawn from a seeded generator so both devices start identical.
///
/// Weights: He normal `N(0, 2 / fan_in)` before ReLU, Glorot normal `N(0, 2 / (fan_in + fan_out))`
/// before tanh and sigmoid; biases start at zero.
pub fn initial_parameters(spec: &ModelSpec, seed: u64) -> LayerValues {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    spec.layers
        .windows(2)
        .map(|w| {
            let (fan_in, fan_out) = (w[0], w[1]);
            let variance = match spec.activation {
                Activation::Relu => 2.0 / fan_in as f32,
                _ => 2.0 / (fan_in + fan_out) as f32,
            };
            let normal = Normal::new(0.0, variance.sqrt()).unwrap_or_else(|_| {
                // Unreachable: the variance is finite and positive for positive widths.
                Normal::new(0.0, 1.0).unwrap_or_else(|_| unreachable!())
            });
            let weights = (0..fan_in * fan_out)
                .map(|_| normal.sample(&mut rng))
                .collect();
            (weights, vec![0.0; fan_out])
        })
        .collect()
}

/// The activation after `layer`: the spec's for hidden layers, none for the output layer
/// (softmax belongs to the loss).
fn layer_activation(spec: &ModelSpec, layer: usize) -> Activation {
    if layer + 2 == spec.layers.len() {
        Activation::Identity
    } else {
        spec.activation
    }
}

/// `activations[l + 1] = act(activations[l] · w_l + b_l)` through every layer.
fn forward_layers(
    backend: &mut dyn Backend,
    spec: &ModelSpec,
    weights: &[Param],
    biases: &[Param],
    activations: &mut [Tensor],
) -> Result<(), BackendError> {
    for (l, (w, b)) in weights.iter().zip(biases).enumerate() {
        let (done, rest) = activations.split_at_mut(l + 1);
        backend.linear_forward(
            &done[l],
            &w.value,
            &b.value,
            layer_activation(spec, l),
            &mut rest[0],
        )?;
    }
    Ok(())
}

/// An MLP on one device with everything a training step touches allocated up front:
/// parameters, gradients, optimizer state, the activations kept for backward, and the inputs.
pub struct Mlp {
    spec: ModelSpec,
    optimizer: OptimizerKind,
    batch: usize,
    weights: Vec<Param>,
    biases: Vec<Param>,
    /// `activations[0]` is the input batch, `activations[l + 1]` the output of layer `l`.
    activations: Vec<Tensor>,
    /// `dz[l]`: gradient of the loss with respect to layer `l`'s pre-activation.
    dz: Vec<Tensor>,
    targets: Tensor,
    /// `[Σ loss, Σ correct, Σ rows]` since the last [`Mlp::take_stats`].
    stats: Tensor,
    /// Forward-only activations for evaluation, `eval_rows` rows at a time.
    eval_activations: Vec<Tensor>,
    /// Rows per evaluation pass.
    eval_rows: usize,
    /// Training iterations (skipped updates included).
    steps: u32,
    /// Updates applied (Adam's step count).
    applied: u32,
    precision: Precision,
    /// FP16 copies of the weights and biases the forward and backward passes use (mixed).
    half_weights: Vec<Tensor>,
    half_biases: Vec<Tensor>,
    scaler: Option<GradScaler>,
    /// What the loss is multiplied by before backward.
    loss_weight: f32,
}

/// Most rows per forward-only evaluation pass (training and test sets, decision-boundary grid):
/// larger sets are evaluated in passes of this many rows.
pub const EVAL_ROWS: usize = 1024;

/// Training statistics accumulated on the device since they were last read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Mean loss over the rows seen.
    pub loss: f32,
    /// Share of rows classified correctly (classification).
    pub accuracy: Option<f32>,
    /// Mean absolute error in the units the model was trained on (regression).
    pub mean_abs_error: Option<f32>,
    /// Rows seen.
    pub rows: usize,
}

impl Mlp {
    /// Allocates the model for `batch` rows in FP32 and uploads the seeded initial parameters
    /// (evaluating [`EVAL_ROWS`] rows at a time).
    pub fn new(
        backend: &mut dyn Backend,
        spec: &ModelSpec,
        optimizer: OptimizerKind,
        batch: usize,
        seed: u64,
    ) -> Result<Self, BackendError> {
        Self::with_precision(
            backend,
            spec,
            (optimizer, batch, seed),
            (Precision::Fp32, EVAL_ROWS),
        )
    }

    /// Allocates the model for `batch` rows, each tensor stored as `precision` keeps it, and
    /// uploads the seeded initial parameters (rounded, where they are stored in 16 bits).
    ///
    /// FP16 and BF16 store everything in 16 bits: parameters, gradients, optimizer state,
    /// activations and inputs. Mixed precision keeps FP32 parameters, gradients and optimizer
    /// state (the master copy), adds FP16 copies of the weights for the passes, and stores the
    /// activations and the backward temporaries in FP16, as PyTorch's autocast does.
    ///
    /// Evaluation runs `eval_rows` rows at a time (at most [`EVAL_ROWS`]): no more than the
    /// largest set the run evaluates, so a small data set does not pay for 1024 rows.
    pub fn with_precision(
        backend: &mut dyn Backend,
        spec: &ModelSpec,
        (optimizer, batch, seed): (OptimizerKind, usize, u64),
        (precision, eval_rows): (Precision, usize),
    ) -> Result<Self, BackendError> {
        let eval_rows = eval_rows.clamp(1, EVAL_ROWS);
        let passes = DType::of(precision.format());
        let master = if precision == Precision::Mixed {
            DType::F32
        } else {
            passes
        };
        let init = initial_parameters(spec, seed);
        let mut weights = Vec::new();
        let mut biases = Vec::new();
        for (l, (w, b)) in init.iter().enumerate() {
            let (fan_in, fan_out) = (spec.layers[l], spec.layers[l + 1]);
            weights.push(Param::new(
                backend,
                &format!("layer{l}.weight"),
                fan_in,
                fan_out,
                w,
                (optimizer, master),
            )?);
            biases.push(Param::new(
                backend,
                &format!("layer{l}.bias"),
                1,
                fan_out,
                b,
                (optimizer, master),
            )?);
        }
        let input = (batch, spec.layers[0]);
        let mut activations = vec![backend.alloc_as(Role::Inputs, "input", input, passes)?];
        let mut dz = Vec::new();
        for (l, &width) in spec.layers.iter().enumerate().skip(1) {
            let label = format!("layer{}.output", l - 1);
            let shape = (batch, width);
            activations.push(backend.alloc_as(Role::Activations, &label, shape, passes)?);
            // The gradient with respect to a layer's output lives only during backward.
            let label = format!("layer{}.dz", l - 1);
            dz.push(backend.alloc_as(Role::Workspace, &label, shape, passes)?);
        }
        let (mut half_weights, mut half_biases, mut scaler) = (Vec::new(), Vec::new(), None);
        if precision == Precision::Mixed {
            for (l, w) in init.iter().enumerate() {
                let (fan_in, fan_out) = (spec.layers[l], spec.layers[l + 1]);
                let label = format!("layer{l}.weight (fp16 copy)");
                let shape = (fan_in, fan_out);
                half_weights.push(backend.alloc_as(Role::Parameters, &label, shape, passes)?);
                let label = format!("layer{l}.bias (fp16 copy)");
                let shape = (1, w.1.len());
                half_biases.push(backend.alloc_as(Role::Parameters, &label, shape, passes)?);
            }
            scaler = Some(GradScaler::default());
        }
        Ok(Self {
            spec: spec.clone(),
            optimizer,
            batch,
            weights,
            biases,
            activations,
            dz,
            // A class index per row, or one target value per output.
            targets: backend.alloc(
                Role::Inputs,
                "targets",
                batch,
                match spec.loss {
                    Loss::SoftmaxCrossEntropy => 1,
                    Loss::MeanSquaredError => spec.layers[spec.layers.len() - 1],
                },
            )?,
            stats: backend.zeros("loss-stats", 1, 3)?,
            eval_activations: spec
                .layers
                .iter()
                .enumerate()
                .map(|(l, &width)| backend.zeros(&format!("eval{l}"), eval_rows, width))
                .collect::<Result<_, _>>()?,
            eval_rows,
            steps: 0,
            applied: 0,
            precision,
            half_weights,
            half_biases,
            scaler,
            loss_weight: 1.0,
        })
    }

    /// Multiplies the loss, and so every gradient, by `weight` from now on (the designed case
    /// of tiny gradients; the statistics keep the loss before the weight).
    pub fn set_loss_weight(&mut self, weight: f32) {
        self.loss_weight = weight;
    }

    /// How the parameters, their gradients and the activations are stored.
    pub fn dtypes(&self) -> (DType, DType, DType) {
        let first = |p: &[Param]| p.first().map(|p| (p.value.dtype(), p.grad.dtype()));
        let (value, grad) = first(&self.weights).unwrap_or_default();
        let activation = self
            .activations
            .last()
            .map(Tensor::dtype)
            .unwrap_or_default();
        (value, grad, activation)
    }

    /// The training precision.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The loss scaler (mixed precision).
    pub fn scaler(&self) -> Option<&GradScaler> {
        self.scaler.as_ref()
    }

    /// Rounds an f32 tensor's values to `format` (a 16-bit tensor's are already rounded).
    fn round(
        backend: &mut dyn Backend,
        format: Option<Half>,
        t: &mut Tensor,
    ) -> Result<(), BackendError> {
        match format {
            Some(f) if t.dtype() == DType::F32 => backend.round_to(t, f),
            _ => Ok(()),
        }
    }

    /// Rows per batch.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The layer outputs of the last forward pass (`[0]` is the input batch).
    pub fn activations(&self) -> &[Tensor] {
        &self.activations
    }

    /// The architecture.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Optimizer steps taken.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Uploads a batch: `inputs` is `[batch, features]` row-major, `targets` holds class indices
    /// (classification) or target values (regression).
    pub fn load_batch(
        &mut self,
        backend: &mut dyn Backend,
        inputs: &[f32],
        targets: &[f32],
    ) -> Result<(), BackendError> {
        backend.write(&mut self.activations[0], inputs)?;
        Self::round(backend, self.precision.format(), &mut self.activations[0])?;
        backend.write(&mut self.targets, targets)
    }

    /// Forward pass over the loaded batch; the output layer's logits end in the last activation.
    pub fn forward(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let Some(format) = self.precision.format() else {
            return forward_layers(
                backend,
                &self.spec,
                &self.weights,
                &self.biases,
                &mut self.activations,
            );
        };
        let mixed = self.precision == Precision::Mixed;
        for l in 0..self.weights.len() {
            if mixed {
                // This step's FP16 copies of the FP32 master weights (the copy rounds).
                backend.copy(&self.weights[l].value, &mut self.half_weights[l])?;
                backend.copy(&self.biases[l].value, &mut self.half_biases[l])?;
            }
            let (w, b) = if mixed {
                (&self.half_weights[l], &self.half_biases[l])
            } else {
                (&self.weights[l].value, &self.biases[l].value)
            };
            let (done, rest) = self.activations.split_at_mut(l + 1);
            backend.linear_forward(
                &done[l],
                w,
                b,
                layer_activation(&self.spec, l),
                &mut rest[0],
            )?;
            Self::round(backend, Some(format), &mut rest[0])?;
        }
        Ok(())
    }

    /// Loss and its gradient, then backward through every layer into the parameter gradients.
    pub fn backward(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let last = self.weights.len() - 1;
        let (output, dz) = (&self.activations[last + 1], &mut self.dz[last]);
        // The loss weight, and the loss scale of mixed precision (the loss scaled up so that
        // small gradients survive FP16), multiply the loss's gradient as it is written.
        let factor = self.loss_weight * self.scaler.as_ref().map_or(1.0, |s| s.scale);
        let (targets, stats) = (&self.targets, &mut self.stats);
        match self.spec.loss {
            Loss::SoftmaxCrossEntropy => {
                backend.softmax_cross_entropy(output, targets, dz, stats, factor)?;
            }
            Loss::MeanSquaredError => {
                backend.mse_loss(output, targets, dz, stats, factor)?;
            }
        }
        let format = self.precision.format();
        Self::round(backend, format, &mut self.dz[last])?;
        for l in (0..=last).rev() {
            let Param { grad: dw, .. } = &mut self.weights[l];
            let Param { grad: db, .. } = &mut self.biases[l];
            backend.linear_backward_params(&self.activations[l], &self.dz[l], dw, db)?;
            Self::round(backend, format, dw)?;
            Self::round(backend, format, db)?;
            if l > 0 {
                let act_prev = layer_activation(&self.spec, l - 1);
                let (before, after) = self.dz.split_at_mut(l);
                let w = if self.scaler.is_some() {
                    &self.half_weights[l]
                } else {
                    &self.weights[l].value
                };
                backend.linear_backward_input(
                    &after[0],
                    w,
                    &self.activations[l],
                    act_prev,
                    &mut before[l - 1],
                )?;
                Self::round(backend, format, &mut before[l - 1])?;
            }
        }
        Ok(())
    }

    /// One optimizer update of every parameter.
    pub fn update(&mut self, backend: &mut dyn Backend, lr: f32) -> Result<(), BackendError> {
        self.steps += 1;
        if let Some(scaler) = &self.scaler {
            // Unscale in f32, then check: one gradient that overflowed skips the whole step.
            // The check runs on the device and only its count comes back: one sync a step, as
            // GradScaler's `found_inf.item()` is in PyTorch.
            let inverse = 1.0 / scaler.scale;
            for p in self.weights.iter_mut().chain(self.biases.iter_mut()) {
                backend.scale(&mut p.grad, inverse)?;
            }
            let grads: Vec<&Tensor> = self
                .weights
                .iter()
                .chain(&self.biases)
                .map(|p| &p.grad)
                .collect();
            let finite = backend.count_non_finite(&grads)? == 0;
            let step = u64::from(self.steps);
            if let Some(scaler) = self.scaler.as_mut()
                && !scaler.update(step, finite)
            {
                return Ok(());
            }
        }
        self.applied += 1;
        let format = match self.precision {
            Precision::Fp16 | Precision::Bf16 => self.precision.format(),
            _ => None,
        };
        for p in self.weights.iter_mut().chain(self.biases.iter_mut()) {
            p.update(backend, self.optimizer, lr, self.applied)?;
            // Pure FP16 or BF16: the updated values are stored in the format too.
            Self::round(backend, format, &mut p.value)?;
            for s in &mut p.state {
                Self::round(backend, format, s)?;
            }
        }
        Ok(())
    }

    /// A whole training step on the loaded batch, submitted to the device as one unit of work.
    pub fn train_step(&mut self, backend: &mut dyn Backend, lr: f32) -> Result<(), BackendError> {
        self.forward(backend)?;
        self.backward(backend)?;
        self.update(backend, lr)?;
        backend.flush()
    }

    /// Reads and resets the accumulated loss statistics: a sync point on the GPU.
    pub fn take_stats(&mut self, backend: &mut dyn Backend) -> Result<Stats, BackendError> {
        let s = backend.read(&self.stats)?;
        backend.write(&mut self.stats, &[0.0; 3])?;
        let rows = s.get(2).copied().unwrap_or(0.0);
        if rows <= 0.0 {
            return Ok(Stats::default());
        }
        let second = s[1] / rows;
        let classification = self.spec.loss == Loss::SoftmaxCrossEntropy;
        Ok(Stats {
            loss: s[0] / rows,
            accuracy: classification.then_some(second),
            mean_abs_error: (!classification).then_some(second),
            rows: rows as usize,
        })
    }

    /// Logits for `inputs` (`[rows, features]`), computed on the device with the current
    /// parameters in forward-only passes of the model's evaluation rows, and read back.
    pub fn predict(
        &mut self,
        backend: &mut dyn Backend,
        inputs: &[f32],
    ) -> Result<Vec<f32>, BackendError> {
        let features = self.spec.layers[0];
        let classes = self.spec.layers[self.spec.layers.len() - 1];
        let rows = inputs.len() / features.max(1);
        let mut logits = Vec::with_capacity(rows * classes);
        let mut chunk = vec![0.0f32; self.eval_rows * features];
        for start in (0..rows).step_by(self.eval_rows) {
            let n = (rows - start).min(self.eval_rows);
            chunk.fill(0.0);
            chunk[..n * features]
                .copy_from_slice(&inputs[start * features..(start + n) * features]);
            backend.write(&mut self.eval_activations[0], &chunk)?;
            forward_layers(
                backend,
                &self.spec,
                &self.weights,
                &self.biases,
                &mut self.eval_activations,
            )?;
            let out = backend.read(&self.eval_activations[self.weights.len()])?;
            logits.extend_from_slice(&out[..n * classes]);
        }
        Ok(logits)
    }

    /// Logits of the loaded batch, read back to the host.
    pub fn read_logits(&mut self, backend: &mut dyn Backend) -> Result<Vec<f32>, BackendError> {
        backend.read(&self.activations[self.weights.len()])
    }

    /// All parameters read back, `(weights, biases)` per layer (for tests and exports).
    pub fn read_parameters(&self, backend: &mut dyn Backend) -> Result<LayerValues, BackendError> {
        self.weights
            .iter()
            .zip(&self.biases)
            .map(|(w, b)| Ok((backend.read(&w.value)?, backend.read(&b.value)?)))
            .collect()
    }

    /// All parameter gradients read back, `(dw, db)` per layer.
    pub fn read_gradients(&self, backend: &mut dyn Backend) -> Result<LayerValues, BackendError> {
        self.weights
            .iter()
            .zip(&self.biases)
            .map(|(w, b)| Ok((backend.read(&w.grad)?, backend.read(&b.grad)?)))
            .collect()
    }

    /// Overwrites the parameters (e.g. to copy another model's weights).
    pub fn write_parameters(
        &mut self,
        backend: &mut dyn Backend,
        values: &[(Vec<f32>, Vec<f32>)],
    ) -> Result<(), BackendError> {
        for ((w, b), (wv, bv)) in self
            .weights
            .iter_mut()
            .zip(self.biases.iter_mut())
            .zip(values)
        {
            backend.write(&mut w.value, wv)?;
            backend.write(&mut b.value, bv)?;
        }
        Ok(())
    }
}
