//! The network: a sequence of layers (`layers/`, one module a kind), its seeded
//! initialisation, and its training step, written once against the [`Backend`] trait so both
//! devices run the very same algorithm. Nothing here names a kind of layer: the step loops over
//! the built layers, each with its parameters, its outputs and what it keeps for backward.

use crate::backend::{Activation, Backend, BackendError, Tensor};
use crate::memory::Role;
use crate::precision::DType;
use crate::precision::{GradScaler, Precision};

mod accumulate;
mod checkpoint;
mod decode;
mod first_layer;
mod gpt;
mod init;
pub mod layers;
mod model_file;
mod param;
mod pass;
mod predict;
mod predicting;
mod segments;
mod spec;
mod weights;

pub use decode::Decoder;
pub use first_layer::{FirstLayer, FirstLayerReads};
pub use gpt::{BLOCK_LAYERS, GptShape, gpt_layers, reads_tokens, with_vocabulary};
pub use init::{LayerValues, initial_parameters};
pub use layers::{Footprint, LayerSpec, PlainCost, PlainWork, Shape, ShapeError, footprints};
pub use model_file::{
    MAX_MODEL_LAYERS, MODEL_PRESETS, ModelPreset, model_toml, parse_model, preset,
};
pub use predicting::Predicting;
pub use segments::{Checkpointed, MAX_CHECKPOINT, checkpointed, recomputed_layers};
pub use spec::{ConvStack, EVAL_ROWS, LayerList, Loss, ModelSpec, OptimizerKind};
pub use weights::{NamedTensor, from_safetensors, from_torch, to_safetensors, torch_tensors};

use layers::Layer;
use param::LayerParams;
use pass::{Pass, round};
use segments::Checkpointing;

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
    /// Blocks a checkpointed segment holds (0: the passes keep every activation).
    pub checkpoint: u32,
}

/// A network on one device with everything a training step touches allocated up front:
/// parameters, gradients, optimizer state, the outputs kept for backward, and the inputs.
pub struct Network {
    spec: ModelSpec,
    optimizer: OptimizerKind,
    batch: usize,
    /// The built layers, first first.
    layers: Vec<Box<dyn Layer>>,
    /// Each layer's parameters, where it has any.
    params: Vec<Option<LayerParams>>,
    /// The training pass's tensors.
    pass: Pass,
    /// `grads[i]`: gradient of the loss with respect to layer `i`'s output before its
    /// epilogue; a workspace that lives only during backward.
    grads: Vec<Tensor>,
    /// Where a first layer that writes its input's gradient anyway writes it.
    input_grad: Option<Tensor>,
    targets: Tensor,
    /// `[Σ loss, Σ correct, Σ rows]` since the last [`Network::take_stats`].
    stats: Tensor,
    /// Forward-only tensors for evaluation, `eval_rows` rows at a time.
    eval: Pass,
    /// Rows per evaluation pass.
    eval_rows: usize,
    /// Training iterations (skipped updates included).
    steps: u32,
    /// Updates applied (Adam's step count).
    applied: u32,
    precision: Precision,
    scaler: Option<GradScaler>,
    /// What the loss is multiplied by before backward.
    loss_weight: f32,
    /// Micro-batches whose gradients one update sums (1: every batch updates).
    micro_batches: u32,
    /// The checkpointed passes' plan and shared workspace, where checkpointing.
    checkpoint: Option<Checkpointing>,
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
            checkpoint: 0,
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
            checkpoint,
        } = training;
        let eval_rows = spec.eval_rows(eval_rows);
        let passes = DType::of(precision.format());
        let mixed = precision == Precision::Mixed;
        let master = if mixed { DType::F32 } else { passes };
        let layers = layers::build(&spec.layer_specs(), spec.input_shape())
            .map_err(|e| BackendError::Setup(format!("the model: {e}")))?;
        let mut params = Vec::with_capacity(layers.len());
        for (layer, init) in layers
            .iter()
            .zip(init::layer_parameters(spec, &layers, seed))
        {
            let built = match init {
                Some(init) => {
                    let alloc = (optimizer, master, mixed.then_some(passes));
                    Some(LayerParams::new(backend, layer.name(), init, alloc)?)
                }
                None => None,
            };
            params.push(built);
        }
        let checkpoint = match checkpoint {
            0 => None,
            blocks => Some(Checkpointing::new(
                backend,
                &layers,
                (batch, blocks),
                passes,
            )?),
        };
        let plan = checkpoint.as_ref().map(Checkpointing::plan);
        let pass = Pass::alloc(backend, &layers, (spec.inputs(), batch), Some(passes), plan)?;
        let mut grads = Vec::with_capacity(layers.len());
        for layer in &layers {
            let (_, suffix) = layer.suffixes();
            let label = format!("{}.{suffix}", layer.name());
            let shape = layer.output(batch);
            grads.push(backend.alloc_as(Role::Workspace, &label, shape, passes)?);
        }
        let input_grad = match layers.first() {
            Some(first) if first.needs_input_gradient() => {
                let shape = (pass.input.rows(), pass.input.cols());
                Some(backend.alloc_as(Role::Workspace, "input.grad", shape, passes)?)
            }
            _ => None,
        };
        Ok(Self {
            spec: spec.clone(),
            optimizer,
            batch,
            targets: backend.alloc(
                Role::Inputs,
                "targets",
                // A target a row of the output: a sequence's a position.
                batch * layers.last().map_or(1, |l| l.output(1).0),
                // A class index per row, or one target value per output.
                match spec.loss {
                    Loss::SoftmaxCrossEntropy => 1,
                    Loss::MeanSquaredError => spec.outputs(),
                },
            )?,
            stats: backend.zeros("loss-stats", 1, 3)?,
            eval: Pass::alloc(backend, &layers, (spec.inputs(), eval_rows), None, None)?,
            layers,
            params,
            pass,
            grads,
            input_grad,
            eval_rows,
            steps: 0,
            applied: 0,
            precision,
            scaler: mixed.then(GradScaler::default),
            loss_weight: 1.0,
            micro_batches: 1,
            checkpoint,
        })
    }

    /// Multiplies the loss, and so every gradient, by `weight` from now on (the designed case
    /// of tiny gradients; the statistics keep the loss before the weight).
    pub fn set_loss_weight(&mut self, weight: f32) {
        self.loss_weight = weight;
    }

    /// How the parameters, their gradients and the activations are stored.
    pub fn dtypes(&self) -> (DType, DType, DType) {
        let (value, grad) = self
            .params
            .iter()
            .flatten()
            .next()
            .map(|p| (p.weight.value.dtype(), p.weight.grad.dtype()))
            .unwrap_or_default();
        let activation = self
            .pass
            .outputs
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

    /// The outputs of the last forward pass that backward reads: every layer's output and what
    /// it kept (not the input batch).
    pub fn activations(&self) -> Vec<&Tensor> {
        let mut kept = self.pass.kept();
        kept.retain(|t| !t.is_placeholder());
        kept
    }

    /// What the value histograms bin: every parameter (weight, then bias, layer after layer),
    /// every parameter gradient in the same order, and the activations kept for backward.
    pub fn value_tensors(&self) -> [Vec<&Tensor>; 3] {
        let params = self.params.iter().flatten();
        [
            params
                .clone()
                .flat_map(|p| [&p.weight.value, &p.bias.value])
                .collect(),
            params
                .flat_map(|p| [&p.weight.grad, &p.bias.grad])
                .collect(),
            self.activations(),
        ]
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
        let input = &mut self.pass.input;
        backend.write(input, inputs)?;
        if !self.layers.first().is_some_and(|l| l.reads_indices()) {
            round(backend, self.precision.format(), input)?;
        }
        backend.write(&mut self.targets, targets)
    }

    /// Forward pass over the loaded batch; the output layer's logits end in the last output.
    pub fn forward(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        if self.scaler.is_some() {
            // This step's FP16 copies of the FP32 master parameters (the copy rounds).
            for p in self.params.iter_mut().flatten() {
                p.refresh_half(backend)?;
            }
        }
        if let Some(mut c) = self.checkpoint.take() {
            let ran = self.forward_segments(backend, &mut c);
            self.checkpoint = Some(c);
            return ran;
        }
        let format = self.precision.format();
        let params = |i: usize| self.params[i].as_ref().map(LayerParams::pass_values);
        self.pass.run(backend, &self.layers, params, format)
    }

    /// Loss and its gradient, then backward through every layer, last first, into the
    /// parameters' gradients: each layer is handed the gradient of its output and writes its
    /// input's (through the previous layer's epilogue, where that fused an activation).
    pub fn backward(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let Some(last) = self.layers.len().checked_sub(1) else {
            return Ok(());
        };
        let output = &self.pass.outputs[last];
        // The loss weight, and the loss scale of mixed precision (the loss scaled up so that
        // small gradients survive FP16), multiply the loss's gradient as it is written.
        // Accumulating, each micro-batch's gradient is a share of the update's: their sum is
        // the mean over all their rows, as one batch of them all would give.
        let factor = self.loss_weight * self.scaler.as_ref().map_or(1.0, |s| s.scale)
            / self.micro_batches as f32;
        let (targets, stats, dz) = (&self.targets, &mut self.stats, &mut self.grads[last]);
        match self.spec.loss {
            Loss::SoftmaxCrossEntropy => {
                backend.softmax_cross_entropy(output, targets, dz, stats, factor)?;
            }
            Loss::MeanSquaredError => backend.mse_loss(output, targets, dz, stats, factor)?,
        }
        let format = self.precision.format();
        round(backend, format, dz)?;
        if let Some(mut c) = self.checkpoint.take() {
            let done = self.backward_segments(backend, &mut c);
            self.checkpoint = Some(c);
            return done;
        }
        for i in (0..=last).rev() {
            self.backward_layer(backend, i)?;
        }
        Ok(())
    }

    /// Backward through layer `i`: handed the gradient of its output, it writes its
    /// parameters' gradients and its input's.
    fn backward_layer(&mut self, backend: &mut dyn Backend, i: usize) -> Result<(), BackendError> {
        let format = self.precision.format();
        let Pass {
            input,
            outputs,
            saved,
        } = &mut self.pass;
        let (before, after) = self.grads.split_at_mut(i);
        let dinput = match before.last_mut() {
            Some(d) => Some(d),
            None => self.input_grad.as_mut(),
        };
        let mut params = self.params[i].as_mut().map(LayerParams::split);
        let layer = &self.layers[i];
        let pass = layers::Backward {
            input: if i == 0 { input } else { &outputs[i - 1] },
            saved: &mut saved[i],
            dout: &after[0],
            params: params.as_ref().map(|(values, _)| *values),
            grads: params.as_mut().map(|(_, (dw, db))| (&mut **dw, &mut **db)),
            dinput,
            input_epilogue: match i {
                0 => Activation::Identity,
                _ => self.layers[i - 1].epilogue(),
            },
        };
        layer.backward(backend, pass)?;
        if let Some((_, (dw, db))) = params.as_mut() {
            round(backend, format, dw)?;
            round(backend, format, db)?;
        }
        if let Some(d) = before.last_mut() {
            // A residual connection's gradient joins the gradient of the output it added.
            let joins = self.layers[i..].iter().zip(&*after);
            for (_, dskip) in joins.filter(|(l, _)| l.skip() == Some(i - 1)) {
                backend.add_into(dskip, d)?;
            }
            round(backend, format, d)?;
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
            for p in self.params.iter_mut().flatten() {
                backend.scale(&mut p.weight.grad, inverse)?;
                backend.scale(&mut p.bias.grad, inverse)?;
            }
            let grads: Vec<&Tensor> = self
                .params
                .iter()
                .flatten()
                .flat_map(|p| [&p.weight.grad, &p.bias.grad])
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
        let with_params = self.layers.iter().zip(&mut self.params);
        for (layer, p) in with_params.filter_map(|(l, p)| Some((l, p.as_mut()?))) {
            // AdamW's decay: a product's weight matrix, never a normalisation's scale.
            let rule = if layer.decays() {
                rule
            } else {
                rule.without_decay()
            };
            param::update_layer(backend, rule, &mut p.weight, &mut p.bias)?;
            // Pure FP16 or BF16: the updated values are stored in the format too.
            for p in [&mut p.weight, &mut p.bias] {
                round(backend, format, &mut p.value)?;
                for s in &mut p.state {
                    round(backend, format, s)?;
                }
            }
        }
        Ok(())
    }

    /// A whole training step on the loaded batch, submitted to the device as one unit of work.
    /// A model that accumulates micro-batches trains with [`Network::accumulate`] instead.
    pub fn train_step(&mut self, backend: &mut dyn Backend, lr: f32) -> Result<(), BackendError> {
        if self.micro_batches != 1 {
            return Err(BackendError::Setup(format!(
                "this model sums {} micro-batches an update: accumulate each, then update",
                self.micro_batches
            )));
        }
        self.forward(backend)?;
        self.backward(backend)?;
        self.update(backend, lr)?;
        backend.flush()
    }

    /// Reads and resets the accumulated loss statistics: a sync point on the GPU.
    pub fn take_stats(&mut self, backend: &mut dyn Backend) -> Result<Stats, BackendError> {
        let s = backend.read(&self.stats)?;
        self.stats_read(backend, &s)
    }

    /// The device tensor the loss statistics are summed in: read it (a browser's GPU awaits
    /// the read), then hand the values to [`Network::stats_read`].
    pub fn stats_tensor(&self) -> &Tensor {
        &self.stats
    }

    /// The statistics from `s`, the values read of [`Network::stats_tensor`], which starts over.
    pub fn stats_read(
        &mut self,
        backend: &mut dyn Backend,
        s: &[f32],
    ) -> Result<Stats, BackendError> {
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

    /// One forward-only pass of the evaluation rows over `chunk`, their inputs (zero-padded to
    /// the pass's rows), with the current parameters.
    fn eval_pass(&mut self, backend: &mut dyn Backend, chunk: &[f32]) -> Result<(), BackendError> {
        backend.write(&mut self.eval.input, chunk)?;
        let params = |i: usize| self.params[i].as_ref().map(LayerParams::master_values);
        self.eval.run(backend, &self.layers, params, None)
    }

    /// The probabilities every head of every attention layer gives `window` (one sample's
    /// token ids), read back after one forward pass of the evaluation rows: a `[T, T]` map row
    /// by row (a query a row) for each head, layer after layer, and the heads a layer (empty for
    /// a model without attention).
    pub fn attention_maps(
        &mut self,
        backend: &mut dyn Backend,
        window: &[f32],
    ) -> Result<(Vec<Vec<f32>>, usize), BackendError> {
        let layers: Vec<usize> = self
            .layers
            .iter()
            .enumerate()
            .filter(|(_, l)| l.kind() == "attention")
            .map(|(i, _)| i)
            .collect();
        let Some(&first) = layers.first() else {
            return Ok((Vec::new(), 0));
        };
        let len = self.layers[first].shape().rows_per_sample();
        let mut chunk = vec![0.0f32; self.eval_rows * self.spec.inputs()];
        let n = window.len().min(chunk.len());
        chunk[..n].copy_from_slice(&window[..n]);
        self.eval_pass(backend, &chunk)?;
        let mut maps = Vec::new();
        let mut heads = 0;
        for at in layers {
            let Some(probs) = self.eval.saved[at].first() else {
                continue;
            };
            let all = backend.read(probs)?;
            // Sample 0's heads come first, a `T × T` block each.
            heads = probs.rows() / (self.eval_rows * len).max(1);
            maps.extend(all.chunks_exact(len * len).take(heads).map(<[f32]>::to_vec));
        }
        Ok((maps, heads))
    }

    /// The tensors to generate a token at a time for `rows` sequences at once, with key-value
    /// caches: only for a model that reads token ids and evaluates exactly `rows` windows a
    /// pass (the caches are filled from one).
    pub fn decoder(&self, backend: &mut dyn Backend, rows: usize) -> Result<Decoder, BackendError> {
        if !self.layers.first().is_some_and(|l| l.reads_indices()) {
            return Err(decode::refused(
                "only a model that reads token ids generates a token at a time".to_owned(),
            ));
        }
        if rows == 0 || rows != self.eval_rows {
            return Err(decode::refused(format!(
                "{rows} sequences with a model that evaluates {} at a time",
                self.eval_rows
            )));
        }
        decode::alloc(backend, &self.layers, rows)
    }

    /// A whole forward pass of `windows` (`decoder.rows()` windows of the model's `T` ids, each
    /// padded after its text) that fills every cache with their keys and values, and returns
    /// the logits of every position (`[rows · T, vocab]`), read back.
    pub fn prefill(
        &mut self,
        backend: &mut dyn Backend,
        decoder: &mut Decoder,
        windows: &[f32],
    ) -> Result<Vec<f32>, BackendError> {
        self.eval_pass(backend, windows)?;
        decode::fill(backend, &self.layers, &self.eval, decoder)?;
        backend.read(self.eval.last())
    }

    /// One new position, `position` of every sequence (the caches hold the positions before
    /// it), from each sequence's token `ids` there: the logits of the next token,
    /// `[rows, vocab]`, read back.
    pub fn decode(
        &mut self,
        backend: &mut dyn Backend,
        decoder: &mut Decoder,
        ids: &[f32],
        position: usize,
    ) -> Result<Vec<f32>, BackendError> {
        let params = |i: usize| self.params[i].as_ref().map(LayerParams::master_values);
        decode::step(backend, &self.layers, params, decoder, (ids, position))
    }

    /// Logits of the loaded batch, read back to the host.
    pub fn read_logits(&mut self, backend: &mut dyn Backend) -> Result<Vec<f32>, BackendError> {
        backend.read(self.pass.last())
    }

    /// All parameters read back, `(weights, biases)` per layer that has them (for tests and
    /// exports).
    pub fn read_parameters(&self, backend: &mut dyn Backend) -> Result<LayerValues, BackendError> {
        self.params
            .iter()
            .flatten()
            .map(|p| Ok((backend.read(&p.weight.value)?, backend.read(&p.bias.value)?)))
            .collect()
    }

    /// All parameter gradients read back, `(dw, db)` per layer that has parameters.
    pub fn read_gradients(&self, backend: &mut dyn Backend) -> Result<LayerValues, BackendError> {
        self.params
            .iter()
            .flatten()
            .map(|p| Ok((backend.read(&p.weight.grad)?, backend.read(&p.bias.grad)?)))
            .collect()
    }

    /// Overwrites the parameters (e.g. to copy another model's weights).
    pub fn write_parameters(
        &mut self,
        backend: &mut dyn Backend,
        values: &[(Vec<f32>, Vec<f32>)],
    ) -> Result<(), BackendError> {
        for (p, (wv, bv)) in self.params.iter_mut().flatten().zip(values) {
            backend.write(&mut p.weight.value, wv)?;
            backend.write(&mut p.bias.value, bv)?;
        }
        Ok(())
    }
}
