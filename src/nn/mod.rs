//! The network: a sequence of layers — convolution blocks (a CNN), then dense layers — its
//! seeded initialisation, and its training step, written once against the [`Backend`] trait so
//! both devices run the very same algorithm, and the same code trains an MLP and a CNN.

use crate::backend::{Activation, Backend, BackendError, Tensor};
use crate::memory::Role;
use crate::precision::DType;
use crate::precision::{GradScaler, Precision};

mod first_layer;
mod init;
mod param;
mod passes;
mod spec;

pub use first_layer::FirstLayer;
pub use init::{LayerValues, initial_parameters};
pub use spec::{ConvStack, EVAL_ROWS, Loss, ModelSpec, OptimizerKind};

use param::Param;
use passes::{ConvGrads, Forward, Pass, layer_activation, round};

/// How a network trains: what its buffers and optimizer state are built for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Training {
    /// The update rule (its state tensors are allocated with the parameters).
    pub optimizer: OptimizerKind,
    /// Rows a training batch.
    pub batch: usize,
    /// Seeds the initial parameters.
    pub seed: u64,
    /// The number format of the passes and the parameters.
    pub precision: Precision,
    /// Rows evaluated at a time (bounded by [`ModelSpec::eval_rows`]).
    pub eval_rows: usize,
}

/// A network on one device with everything a training step touches allocated up front:
/// parameters, gradients, optimizer state, the outputs kept for backward, and the inputs.
pub struct Network {
    spec: ModelSpec,
    optimizer: OptimizerKind,
    batch: usize,
    /// Per layer, convolutions first.
    weights: Vec<Param>,
    biases: Vec<Param>,
    /// The training pass's tensors.
    pass: Forward,
    /// `dz[l]`: gradient of the loss with respect to layer `l`'s pre-activation output.
    dz: Vec<Tensor>,
    /// The convolution blocks' backward tensors.
    conv_grads: Vec<ConvGrads>,
    targets: Tensor,
    /// `[Σ loss, Σ correct, Σ rows]` since the last [`Network::take_stats`].
    stats: Tensor,
    /// Forward-only tensors for evaluation, `eval_rows` rows at a time.
    eval: Forward,
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

impl Network {
    /// Allocates the model for `batch` rows in FP32 and uploads the seeded initial parameters
    /// (evaluating [`EVAL_ROWS`] rows at a time).
    pub fn new(
        backend: &mut dyn Backend,
        spec: &ModelSpec,
        optimizer: OptimizerKind,
        batch: usize,
        seed: u64,
    ) -> Result<Self, BackendError> {
        let training = Training {
            optimizer,
            batch,
            seed,
            precision: Precision::Fp32,
            eval_rows: EVAL_ROWS,
        };
        Self::with_precision(backend, spec, training)
    }

    /// Allocates the model for `batch` rows, each tensor stored as `precision` keeps it, and
    /// uploads the seeded initial parameters (rounded, where they are stored in 16 bits).
    ///
    /// FP16 and BF16 store everything in 16 bits: parameters, gradients, optimizer state,
    /// activations and inputs. Mixed precision keeps FP32 parameters, gradients and optimizer
    /// state (the master copy), adds FP16 copies of the weights for the passes, and stores the
    /// activations and the backward temporaries in FP16, as PyTorch's autocast does.
    ///
    /// Evaluation runs `eval_rows` rows at a time (as [`ModelSpec::eval_rows`] bounds them): no
    /// more than the largest set the run evaluates, so a small data set does not pay for 1024.
    pub fn with_precision(
        backend: &mut dyn Backend,
        spec: &ModelSpec,
        training: Training,
    ) -> Result<Self, BackendError> {
        let Training {
            optimizer,
            batch,
            seed,
            precision,
            eval_rows,
        } = training;
        let eval_rows = spec.eval_rows(eval_rows);
        let passes = DType::of(precision.format());
        let mixed = precision == Precision::Mixed;
        let master = if mixed { DType::F32 } else { passes };
        let init = initial_parameters(spec, seed);
        let conv = spec.conv_blocks().len();
        let name = |l: usize| {
            if l < conv {
                format!("conv{l}")
            } else {
                format!("layer{}", l - conv)
            }
        };
        let (mut weights, mut biases) = (Vec::new(), Vec::new());
        let (mut half_weights, mut half_biases) = (Vec::new(), Vec::new());
        for (l, ((w, b), (rows, cols))) in init.iter().zip(spec.weight_shapes()).enumerate() {
            let name = name(l);
            let label = format!("{name}.weight");
            weights.push(Param::new(
                backend, &label, rows, cols, w, optimizer, master,
            )?);
            let label = format!("{name}.bias");
            biases.push(Param::new(backend, &label, 1, cols, b, optimizer, master)?);
            if mixed {
                let label = format!("{name}.weight (fp16 copy)");
                half_weights.push(backend.alloc_as(
                    Role::Parameters,
                    &label,
                    (rows, cols),
                    passes,
                )?);
                let label = format!("{name}.bias (fp16 copy)");
                half_biases.push(backend.alloc_as(Role::Parameters, &label, (1, cols), passes)?);
            }
        }
        let pass = Forward::alloc(backend, spec, batch, Pass::Training(passes))?;
        let (dz, conv_grads) = pass.alloc_grads(backend, passes)?;
        Ok(Self {
            spec: spec.clone(),
            optimizer,
            batch,
            weights,
            biases,
            pass,
            dz,
            conv_grads,
            // A class index per row, or one target value per output.
            targets: backend.alloc(
                Role::Inputs,
                "targets",
                batch,
                match spec.loss {
                    Loss::SoftmaxCrossEntropy => 1,
                    Loss::MeanSquaredError => spec.outputs(),
                },
            )?,
            stats: backend.zeros("loss-stats", 1, 3)?,
            eval: Forward::alloc(backend, spec, eval_rows, Pass::Evaluation)?,
            eval_rows,
            steps: 0,
            applied: 0,
            precision,
            half_weights,
            half_biases,
            scaler: mixed.then(GradScaler::default),
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
            .pass
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

    /// Rows per batch.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The outputs of the last forward pass that backward reads: each convolution block's
    /// output and pooled output, each dense layer's output (not the input batch).
    pub fn activations(&self) -> Vec<&Tensor> {
        self.pass.outputs()
    }

    /// The architecture.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Optimizer steps taken.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Uploads a batch: `inputs` is `[batch, features]` row-major (an image's pixels channels
    /// last), `targets` holds class indices (classification) or target values (regression).
    pub fn load_batch(
        &mut self,
        backend: &mut dyn Backend,
        inputs: &[f32],
        targets: &[f32],
    ) -> Result<(), BackendError> {
        let input = &mut self.pass.activations[0];
        backend.write(input, inputs)?;
        round(backend, self.precision.format(), input)?;
        backend.write(&mut self.targets, targets)
    }

    /// Forward pass over the loaded batch; the output layer's logits end in the last activation.
    pub fn forward(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        if self.scaler.is_some() {
            // This step's FP16 copies of the FP32 master weights (the copy rounds).
            for (p, half) in self.weights.iter().zip(&mut self.half_weights) {
                backend.copy(&p.value, half)?;
            }
            for (p, half) in self.biases.iter().zip(&mut self.half_biases) {
                backend.copy(&p.value, half)?;
            }
        }
        let format = self.precision.format();
        let (half_weights, half_biases) = (&self.half_weights, &self.half_biases);
        let masters = param::values(&self.weights, &self.biases);
        let mixed = self.scaler.is_some();
        let params = |l: usize| {
            if mixed {
                (&half_weights[l], &half_biases[l])
            } else {
                masters(l)
            }
        };
        self.pass.run(backend, &self.spec, params, format)
    }
    /// Loss and its gradient, then backward through every layer into the parameter gradients.
    ///
    /// A convolution block's gradient flows back through its pooling (to the first largest
    /// value of each window, through the activation) and the transposed convolution; a dense
    /// layer's through its product and the activation of the layer before (or, after a
    /// convolution block, straight into the pooled values).
    pub fn backward(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let last = self.weights.len() - 1;
        let output = &self.pass.activations[last + 1];
        // The loss weight, and the loss scale of mixed precision (the loss scaled up so that
        // small gradients survive FP16), multiply the loss's gradient as it is written.
        let factor = self.loss_weight * self.scaler.as_ref().map_or(1.0, |s| s.scale);
        let (targets, stats, dz) = (&self.targets, &mut self.stats, &mut self.dz[last]);
        match self.spec.loss {
            Loss::SoftmaxCrossEntropy => {
                backend.softmax_cross_entropy(output, targets, dz, stats, factor)?;
            }
            Loss::MeanSquaredError => backend.mse_loss(output, targets, dz, stats, factor)?,
        }
        let format = self.precision.format();
        round(backend, format, dz)?;
        let Forward { activations, conv } = &self.pass;
        for l in (0..=last).rev() {
            let (dw, db) = (&mut self.weights[l].grad, &mut self.biases[l].grad);
            if let Some(t) = conv.get(l) {
                let (x, dz) = (&activations[l], &self.dz[l]);
                backend.conv_backward_params(x, t.conv, dz, (dw, db))?;
            } else {
                backend.linear_backward_params(&activations[l], &self.dz[l], dw, db)?;
            }
            round(backend, format, dw)?;
            round(backend, format, db)?;
            if l == 0 {
                continue;
            }
            let w = if self.scaler.is_some() {
                &self.half_weights[l]
            } else {
                &self.weights[l].value
            };
            let (before, after) = self.dz.split_at_mut(l);
            let (dz, dz_prev) = (&after[0], &mut before[l - 1]);
            let Some(prev) = self.conv_grads.get_mut(l - 1) else {
                // Dense after dense: through the previous layer's activation.
                let act = layer_activation(&self.spec, l - 1);
                backend.linear_backward_input(dz, w, &activations[l], act, dz_prev)?;
                round(backend, format, dz_prev)?;
                continue;
            };
            if let Some(t) = conv.get(l) {
                // Convolution after convolution, onto the pooled image it read.
                backend.conv_backward_input(dz, w, t.conv, &mut prev.dpooled)?;
            } else {
                // The first dense layer after the blocks: pooled values have no activation.
                let a = &activations[l];
                let identity = Activation::Identity;
                backend.linear_backward_input(dz, w, a, identity, &mut prev.dpooled)?;
            }
            round(backend, format, &mut prev.dpooled)?;
            let t = &conv[l - 1];
            let act = self.spec.activation;
            backend.max_pool_backward(&t.out, &prev.dpooled, act, t.pool, dz_prev)?;
            round(backend, format, dz_prev)?;
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
        let rule = param::rule(self.optimizer, lr, self.applied);
        for (w, b) in self.weights.iter_mut().zip(self.biases.iter_mut()) {
            param::update_layer(backend, rule, w, b)?;
            // Pure FP16 or BF16: the updated values are stored in the format too.
            for p in [w, b] {
                round(backend, format, &mut p.value)?;
                for s in &mut p.state {
                    round(backend, format, s)?;
                }
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
        let features = self.spec.inputs();
        let classes = self.spec.outputs();
        let rows = inputs.len() / features.max(1);
        let mut logits = Vec::with_capacity(rows * classes);
        let mut chunk = vec![0.0f32; self.eval_rows * features];
        for start in (0..rows).step_by(self.eval_rows) {
            let n = (rows - start).min(self.eval_rows);
            chunk.fill(0.0);
            chunk[..n * features]
                .copy_from_slice(&inputs[start * features..(start + n) * features]);
            self.eval_pass(backend, &chunk)?;
            let out = backend.read(&self.eval.activations[self.weights.len()])?;
            logits.extend_from_slice(&out[..n * classes]);
        }
        Ok(logits)
    }

    /// One forward-only pass of the evaluation rows over `chunk`, their inputs (zero-padded to
    /// the pass's rows), with the current parameters.
    fn eval_pass(&mut self, backend: &mut dyn Backend, chunk: &[f32]) -> Result<(), BackendError> {
        backend.write(&mut self.eval.activations[0], chunk)?;
        let params = param::values(&self.weights, &self.biases);
        self.eval.run(backend, &self.spec, params, None)
    }

    /// A CNN's first-layer filters and what they make of `image` (one sample's pixels), read
    /// back: `None` for an MLP. Runs one forward pass of the evaluation rows.
    pub fn first_layer(
        &mut self,
        backend: &mut dyn Backend,
        image: &[f32],
    ) -> Result<Option<FirstLayer>, BackendError> {
        let Some(&(conv, _)) = self.spec.conv_blocks().first() else {
            return Ok(None);
        };
        let mut chunk = vec![0.0f32; self.eval_rows * self.spec.inputs()];
        let n = image.len().min(chunk.len());
        chunk[..n].copy_from_slice(&image[..n]);
        self.eval_pass(backend, &chunk)?;
        let mut maps = backend.read(&self.eval.conv[0].out)?;
        maps.truncate(conv.pixels() * conv.channels_out);
        Ok(Some(FirstLayer {
            kernel: conv.kernel,
            channels_in: conv.channels_in,
            filters: conv.channels_out,
            weights: backend.read(&self.weights[0].value)?,
            height: conv.height,
            width: conv.width,
            maps,
        }))
    }

    /// Logits of the loaded batch, read back to the host.
    pub fn read_logits(&mut self, backend: &mut dyn Backend) -> Result<Vec<f32>, BackendError> {
        backend.read(&self.pass.activations[self.weights.len()])
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
