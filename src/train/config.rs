//! The settings of a run: what it trains (data, model, optimizer, precision), how fast and with
//! what recorded (the pipeline, changeable while it runs), and the checks they must pass.

use serde::{Deserialize, Serialize};

use crate::backend::{Activation, UploadMode};
use crate::data::dataloader::{Augment, LoaderConfig};
use crate::data::source::DataSource;
use crate::data::{Dataset, DatasetSpec, ImageShape, Task};
use crate::device::Device;
use crate::i18n::Lang;
use crate::nn::{
    ConvStack, EVAL_ROWS, LayerSpec, Loss, MAX_MODEL_LAYERS, ModelSpec, OptimizerKind, Shape,
};
use crate::precision::Precision;
use crate::setting::SettingError;

/// When the training thread reads the loss back to the host: on the GPU a sync point, where
/// the host waits for every kernel submitted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncPolicy {
    /// When the display needs a new point (about ten times a second).
    #[default]
    WhenShown,
    /// After every step, as `loss.item()` in every iteration of a PyTorch loop does.
    EveryStep,
    /// After every N steps.
    EverySteps(u32),
}

impl SyncPolicy {
    /// Whether step number `step` (1-based) ends in a sync; `display_due` says whether the
    /// display wants a new point.
    pub fn syncs(self, step: u64, display_due: bool) -> bool {
        match self {
            SyncPolicy::WhenShown => display_due,
            SyncPolicy::EveryStep => true,
            SyncPolicy::EverySteps(n) => step.is_multiple_of(u64::from(n.max(1))),
        }
    }

    /// Parses `auto`, `1` or a step count.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" | "shown" => Some(SyncPolicy::WhenShown),
            _ => match text.parse::<u32>().ok()? {
                0 => None,
                1 => Some(SyncPolicy::EveryStep),
                n => Some(SyncPolicy::EverySteps(n)),
            },
        }
    }
}

/// Settings that change how fast training runs and what is recorded, never what it computes:
/// they apply while a model trains, without starting over.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pipeline {
    /// The data loader's threads, queue and storage.
    pub loader: LoaderConfig,
    /// When the loss is read back.
    pub sync: SyncPolicy,
    /// How batches travel to the GPU.
    pub upload: UploadMode,
    /// Record spans for the timeline and the step breakdown.
    pub record: bool,
    /// Keep every step's layer outputs, as keeping each step's loss with its graph does in
    /// PyTorch: memory grows step after step until it runs out. Turning it off frees them.
    pub keep_graphs: bool,
    /// Memory budget of the GPU (`None`: only the adapter's own limits). Saved as
    /// `vram_budget`, as files written before kept it.
    #[serde(rename = "vram_budget")]
    pub vram_budget_bytes: Option<u64>,
    /// Memory budget of the CPU's tensors (`None`: only the system's).
    #[serde(rename = "host_budget")]
    pub host_budget_bytes: Option<u64>,
    /// When training stops by itself.
    pub stop: StopAt,
    /// While recording, time the GPU's kernels in one stretch between two syncs of this many
    /// (1: always; 0: always on a hardware GPU, one in [`SOFTWARE_KERNEL_SAMPLING`] on a
    /// software adapter).
    pub kernel_timing_every: u32,
}

/// The budget that applies while `keep_graphs` is on and none is set: the leak then stops with
/// an out-of-memory error before it takes the machine's memory.
pub const LEAK_SAFETY_BUDGET: u64 = 1 << 30;

/// Smallest memory budget accepted: below it even a tiny model cannot start.
pub const MIN_BUDGET: u64 = 64 << 10;

/// Sync windows per kernel-timed window on a software adapter when the choice is automatic.
/// On lavapipe each timestamp costs about 12 µs (measured: timing the 20 passes of an Iris step
/// added 0.5 ms to a 1.5 ms step), a third of a small model's step if every pass of every step
/// were timed; one window in 16 keeps recording within a few percent (measured −0.3% to +1.5%).
pub const SOFTWARE_KERNEL_SAMPLING: u32 = 16;

/// Most steps between two kernel-timed ones.
pub const MAX_KERNEL_TIMING_EVERY: u32 = 1000;
/// Most steps between two reads of the loss.
pub const MAX_SYNC_EVERY: u32 = 10_000;
/// Largest learning rate accepted.
pub const MAX_LR: f32 = 10.0;

impl Default for Pipeline {
    fn default() -> Self {
        Self {
            loader: LoaderConfig::default(),
            sync: SyncPolicy::default(),
            upload: UploadMode::default(),
            record: true,
            keep_graphs: false,
            vram_budget_bytes: None,
            host_budget_bytes: None,
            kernel_timing_every: 0,
            stop: StopAt::Never,
        }
    }
}

/// When a run stops by itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopAt {
    /// It trains until paused.
    #[default]
    Never,
    /// After this many passes over the training set.
    Epochs(u32),
    /// Once the test set's accuracy (classification) or R² (regression), checked after each
    /// epoch, reaches this.
    TestMetric(f32),
}

/// Most epochs a stop condition may ask for.
pub const MAX_STOP_EPOCHS: u32 = 100_000;

impl StopAt {
    /// Checks the range.
    pub fn validate(self) -> Result<(), SettingError> {
        let ok = match self {
            StopAt::Never => true,
            StopAt::Epochs(n) => (1..=MAX_STOP_EPOCHS).contains(&n),
            StopAt::TestMetric(x) => x > 0.0 && x <= 1.0,
        };
        if ok {
            Ok(())
        } else {
            Err(SettingError::StopAt(format!("{self:?}")))
        }
    }
}

impl Pipeline {
    /// The memory budget of `device`: the one set, or [`LEAK_SAFETY_BUDGET`] while the leak
    /// setting is on.
    pub fn budget(&self, device: Device) -> Option<u64> {
        let set = match device {
            Device::Gpu => self.vram_budget_bytes,
            Device::Cpu => self.host_budget_bytes,
        };
        set.or(self.keep_graphs.then_some(LEAK_SAFETY_BUDGET))
    }

    /// Checks the ranges; the error names the setting and its limit.
    pub fn validate(&self) -> Result<(), SettingError> {
        self.loader.validate()?;
        self.stop.validate()?;
        if let Some(bytes) = [self.vram_budget_bytes, self.host_budget_bytes]
            .into_iter()
            .flatten()
            .find(|&b| b < MIN_BUDGET)
        {
            return Err(SettingError::MemoryBudget {
                bytes,
                min_bytes: MIN_BUDGET,
            });
        }
        if self.kernel_timing_every > MAX_KERNEL_TIMING_EVERY {
            return Err(SettingError::KernelTiming {
                every: self.kernel_timing_every,
                max: MAX_KERNEL_TIMING_EVERY,
            });
        }
        if let SyncPolicy::EverySteps(n) = self.sync
            && !(1..=MAX_SYNC_EVERY).contains(&n)
        {
            return Err(SettingError::SyncEvery {
                every: n,
                max: MAX_SYNC_EVERY,
            });
        }
        Ok(())
    }
}

/// Everything a training run is made of; the same config on both devices gives the same run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The generator's settings (used when `source` is `Generated`); its test share, seed and
    /// standardisation apply to every source.
    pub data: DatasetSpec,
    /// Where the data comes from: a generator, a shipped real set, or the user's own file.
    #[serde(default)]
    pub source: DataSource,
    /// Convolution blocks before the hidden layers, each value a block's filters (a `conv_kernel`
    /// convolution with the activation, then 2×2 max pooling): a CNN; empty, an MLP.
    #[serde(default)]
    pub conv: Vec<usize>,
    /// Side of the convolutions' kernels: 3 or 5.
    #[serde(default = "three")]
    pub conv_kernel: usize,
    /// Hidden-layer widths; the input and output widths come from the data set.
    pub hidden: Vec<usize>,
    /// The model as a list of layers before the output layer (a model file or a preset), which
    /// replaces `conv`, `hidden` and `activation` where given; the data set gives the input and
    /// the dense output layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Vec<LayerSpec>>,
    /// Hidden activation.
    pub activation: Activation,
    /// Update rule.
    pub optimizer: OptimizerKind,
    /// Learning rate.
    pub lr: f32,
    /// Rows per batch: per micro-batch, when several are accumulated.
    pub batch: usize,
    /// Micro-batches of `batch` rows whose gradients are summed before each update (gradient
    /// accumulation): the update is one batch of `accumulate × batch` rows'.
    #[serde(default = "one_micro_batch")]
    pub accumulate: u32,
    /// Activation checkpointing: blocks a segment whose activations are computed again in the
    /// backward pass instead of kept (0: every activation kept). See [`crate::nn::MAX_CHECKPOINT`].
    #[serde(default)]
    pub checkpoint: u32,
    /// Seed of the initial weights and of the batch order.
    pub seed: u64,
    /// Random changes to the training samples.
    #[serde(default)]
    pub augment: Augment,
    /// The number format of training (16-bit formats stored in 2 bytes, computed in f32).
    #[serde(default)]
    pub precision: Precision,
    /// The loss is multiplied by this before backward, and so is every gradient: 1 normally;
    /// 1e-6 makes the designed case of tiny gradients that FP16 loses to zero. Adam's steps do
    /// not depend on the gradients' size, so in FP32 it trains as before. The loss shown is the
    /// loss before the weight.
    #[serde(default = "one")]
    pub loss_weight: f32,
    /// How the data loader, the transfers and the syncs run (changeable while training).
    #[serde(default)]
    pub pipeline: Pipeline,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            data: DatasetSpec::default(),
            source: DataSource::Generated,
            conv: Vec::new(),
            conv_kernel: 3,
            hidden: vec![16, 16],
            model: None,
            activation: Activation::Relu,
            optimizer: OptimizerKind::Adam,
            lr: 0.01,
            batch: 32,
            accumulate: 1,
            checkpoint: 0,
            seed: 1,
            augment: Augment::default(),
            precision: Precision::Fp32,
            loss_weight: 1.0,
            pipeline: Pipeline::default(),
        }
    }
}

fn one() -> f32 {
    1.0
}

fn one_micro_batch() -> u32 {
    1
}

fn three() -> usize {
    3
}

/// The smallest loss weight: below it even FP32 loses the gradients (f32's smallest normal is
/// 1.2e-38).
pub const MIN_LOSS_WEIGHT: f32 = 1e-12;

/// Largest batch and widths the app accepts, so one typo cannot ask for gigabytes.
pub const MAX_BATCH: usize = 65_536;
/// Most micro-batches an update: more only makes each update slower.
pub const MAX_ACCUMULATE: u32 = 1024;
/// Widest layer the app accepts.
pub const MAX_WIDTH: usize = 8192;
/// Most hidden layers: deeper networks teach nothing more here, and each layer is several
/// kernel launches per step (20,000 tiny layers would take minutes per step on a GPU).
pub const MAX_HIDDEN_LAYERS: usize = 32;
/// Most convolution blocks: each halves the image, and a 28×28 image is 1×1 after five.
pub const MAX_CONV_BLOCKS: usize = 4;
/// Most filters in one convolution block.
pub const MAX_CONV_CHANNELS: usize = 256;
/// Most parameters a model may have: 64 M weights are 256 MiB as f32, about 1 GiB with their
/// gradients and Adam's two moments.
pub const MAX_PARAMETERS: u64 = 64 << 20;
/// Share of the host's available memory a run's estimate may take: the rest is for the data
/// set, the window and what the estimator does not count.
const HOST_MEMORY_SHARE: f64 = 0.8;

impl TrainConfig {
    /// Settings that suit the data just chosen: a text (`text`) trains the tiny GPT with `AdamW`
    /// at 1e-3 in batches of 12 unless the model already reads a text; other data leaves a
    /// language model for the hidden layers set before.
    pub fn suit_data(&mut self, text: bool) {
        let reads = self.model.as_deref().is_some_and(crate::nn::reads_tokens);
        if text && !reads {
            self.model = crate::nn::preset("gpt-tiny");
            self.optimizer = OptimizerKind::AdamW;
            self.lr = 1e-3;
            self.batch = 12;
        } else if !text && reads {
            self.model = None;
        }
    }

    /// Rows each update learns from: the batch, times the micro-batches accumulated.
    pub fn effective_batch(&self) -> usize {
        self.batch.saturating_mul(self.accumulate as usize)
    }

    /// The memory levers pulled.
    pub fn levers(&self) -> crate::sim::estimate::Levers {
        crate::sim::estimate::Levers {
            micro_batches: self.accumulate,
            checkpoint: self.checkpoint,
        }
    }

    /// What the run is estimated to hold on a device, role by role.
    pub fn estimate(&self, data: &Dataset) -> crate::sim::estimate::Estimate {
        self.estimate_at(data, self.batch)
    }

    /// [`TrainConfig::estimate`] with micro-batches of `batch` rows.
    pub fn estimate_at(&self, data: &Dataset, batch: usize) -> crate::sim::estimate::Estimate {
        crate::sim::estimate::network_with(
            &self.model_spec(data),
            self.optimizer,
            batch,
            self.precision,
            eval_rows(data),
            self.levers(),
        )
    }

    /// How each step trains: the update rule and the number format.
    pub fn recipe(&self) -> crate::sim::cost::Recipe {
        crate::sim::cost::Recipe {
            optimizer: self.optimizer,
            precision: self.precision,
        }
    }

    /// The model these settings describe for `data`: a CNN when convolution blocks are set
    /// and the samples are images (otherwise [`TrainConfig::validate`] refuses the blocks).
    pub fn model_spec(&self, data: &Dataset) -> ModelSpec {
        self.model_spec_for((data.features, data.outputs()), data.task, data.image)
    }

    /// The model these settings describe for data of `features` inputs and `outputs` outputs
    /// trained for `task`, whose samples are images of `image` where they are (an MLP when
    /// they are not, whatever blocks are set).
    pub fn model_spec_for(
        &self,
        (features, outputs): (usize, usize),
        task: Task,
        image: Option<ImageShape>,
    ) -> ModelSpec {
        let loss = Loss::for_task(task);
        if let Some(list) = &self.model {
            return list_spec(list, (features, outputs), loss, image);
        }
        let mut dense = self.hidden.clone();
        dense.push(outputs);
        match image {
            Some(image) if !self.conv.is_empty() => {
                let conv = ConvStack {
                    image,
                    channels: self.conv.clone(),
                    kernel: self.conv_kernel,
                };
                ModelSpec::cnn(conv, &dense, self.activation, loss)
            }
            _ => {
                let mut layers = vec![features];
                layers.extend(dense);
                ModelSpec::mlp(layers, self.activation, loss)
            }
        }
    }

    /// The convolution blocks fit the data: images, few enough blocks to pool, sensible sizes.
    fn check_conv(&self, data: &Dataset) -> Result<(), SettingError> {
        if self.conv.is_empty() {
            return Ok(());
        }
        check_conv(&self.conv, self.conv_kernel)?;
        let Some(image) = data.image else {
            return Err(SettingError::ConvNeedsImages {
                data: data.name.clone(),
            });
        };
        let side = 1 << self.conv.len();
        if image.width < side || image.height < side {
            return Err(SettingError::ConvImageTooSmall {
                blocks: self.conv.len(),
                width: image.width,
                height: image.height,
            });
        }
        Ok(())
    }

    /// Checks the settings against the data set; the error names the setting and its limit.
    pub fn validate(&self, data: &Dataset) -> Result<(), SettingError> {
        check_lr(self.lr)?;
        check_loss_weight(self.loss_weight)?;
        check_batch(self.batch)?;
        if self.batch > data.train_rows() {
            return Err(SettingError::BatchLargerThanData {
                batch: self.batch,
                rows: data.train_rows(),
                data: data.name.clone(),
            });
        }
        let most = u32::try_from(data.train_rows() / self.batch)
            .unwrap_or(u32::MAX)
            .min(MAX_ACCUMULATE);
        if !(1..=most).contains(&self.accumulate) {
            return Err(SettingError::Accumulate {
                value: self.accumulate,
                max: most,
            });
        }
        check_checkpoint(self.checkpoint)?;
        let tokens = self.model.as_deref().is_some_and(crate::nn::reads_tokens);
        if tokens != data.is_text() {
            use crate::i18n::LayerKey;
            let key = if tokens {
                LayerKey::EmbeddingNeedsText
            } else {
                LayerKey::TextNeedsEmbedding
            };
            return Err(SettingError::ModelShape {
                en: Lang::En.tr(key).to_owned(),
                zh: Lang::Zh.tr(key).to_owned(),
            });
        }
        if let Some(list) = &self.model {
            check_list(list, &self.model_spec(data))?;
        } else {
            check_hidden(&self.hidden)?;
            self.check_conv(data)?;
        }
        let spec = self.model_spec(data);
        let parameters = spec.parameter_count() as u64;
        if parameters > MAX_PARAMETERS {
            return Err(SettingError::Parameters {
                value: parameters,
                max: MAX_PARAMETERS,
            });
        }
        self.check_host_memory(data, crate::device::host_memory_available())?;
        self.augment.validate()?;
        self.pipeline.validate()?;
        self.pipeline
            .loader
            .check_queues(batch_bytes(data.features, self.batch))
    }
}

impl TrainConfig {
    /// Refuses a run whose estimated memory is more than a share of `available` host bytes
    /// (no check when the system does not say).
    pub fn check_host_memory(
        &self,
        data: &Dataset,
        available: Option<u64>,
    ) -> Result<(), SettingError> {
        let Some(available) = available else {
            return Ok(());
        };
        // Host memory holds the CPU backend's tensors.
        let needs = self.estimate(data).total();
        if needs as f64 > available as f64 * HOST_MEMORY_SHARE {
            return Err(SettingError::HostMemory { needs, available });
        }
        Ok(())
    }
}

/// The learning rate is a number above 0 and at most [`MAX_LR`].
pub fn check_lr(lr: f32) -> Result<(), SettingError> {
    if lr.is_finite() && lr > 0.0 && lr <= MAX_LR {
        Ok(())
    } else {
        Err(SettingError::LearningRate {
            value: lr,
            max: MAX_LR,
        })
    }
}

/// The loss weight is from [`MIN_LOSS_WEIGHT`] to 1.
pub fn check_loss_weight(weight: f32) -> Result<(), SettingError> {
    if weight.is_finite() && (MIN_LOSS_WEIGHT..=1.0).contains(&weight) {
        Ok(())
    } else {
        Err(SettingError::LossWeight {
            value: weight,
            min: MIN_LOSS_WEIGHT,
        })
    }
}

/// Micro-batches an update are from 1 to [`MAX_ACCUMULATE`] (the data set may allow fewer).
pub fn check_accumulate(micro_batches: u32) -> Result<(), SettingError> {
    if (1..=MAX_ACCUMULATE).contains(&micro_batches) {
        Ok(())
    } else {
        Err(SettingError::Accumulate {
            value: micro_batches,
            max: MAX_ACCUMULATE,
        })
    }
}

/// Checkpointed segments hold from 1 to [`crate::nn::MAX_CHECKPOINT`] blocks (0: off).
pub fn check_checkpoint(blocks: u32) -> Result<(), SettingError> {
    if blocks <= crate::nn::MAX_CHECKPOINT {
        Ok(())
    } else {
        Err(SettingError::Checkpoint {
            value: blocks,
            max: crate::nn::MAX_CHECKPOINT,
        })
    }
}

/// The batch size is from 1 to [`MAX_BATCH`].
pub fn check_batch(batch: usize) -> Result<(), SettingError> {
    if (1..=MAX_BATCH).contains(&batch) {
        Ok(())
    } else {
        Err(SettingError::BatchSize {
            value: batch,
            max: MAX_BATCH,
        })
    }
}

/// At most [`MAX_HIDDEN_LAYERS`] hidden layers, each 1 to [`MAX_WIDTH`] wide.
pub fn check_hidden(hidden: &[usize]) -> Result<(), SettingError> {
    if hidden.len() > MAX_HIDDEN_LAYERS {
        return Err(SettingError::Depth {
            value: hidden.len(),
            max: MAX_HIDDEN_LAYERS,
        });
    }
    match hidden.iter().find(|&&w| w == 0 || w > MAX_WIDTH) {
        Some(&w) => Err(SettingError::LayerWidth {
            value: w,
            max: MAX_WIDTH,
        }),
        None => Ok(()),
    }
}

/// At most [`MAX_CONV_BLOCKS`] blocks of 1 to [`MAX_CONV_CHANNELS`] filters, kernels 3 or 5.
pub fn check_conv(channels: &[usize], kernel: usize) -> Result<(), SettingError> {
    if channels.len() > MAX_CONV_BLOCKS {
        return Err(SettingError::ConvBlocks {
            value: channels.len(),
            max: MAX_CONV_BLOCKS,
        });
    }
    if let Some(&c) = channels.iter().find(|&&c| c == 0 || c > MAX_CONV_CHANNELS) {
        return Err(SettingError::ConvChannels {
            value: c,
            max: MAX_CONV_CHANNELS,
        });
    }
    if ![3, 5].contains(&kernel) {
        return Err(SettingError::ConvKernel { value: kernel });
    }
    Ok(())
}

/// Cells per side of the decision-boundary grid.
pub const BOUNDARY_RESOLUTION: usize = 48;

/// Most bytes of one evaluation chunk's input: a wide data set evaluates fewer rows at a time,
/// so the chunk stays far below a GPU's largest storage binding (128 MiB by default).
pub const EVAL_CHUNK_BYTES: usize = 32 << 20;

/// Rows one evaluation pass takes for `data`: the largest set the run evaluates (the training
/// set, the test set, and on 2-D classification the boundary grid), at most [`EVAL_ROWS`], and
/// at most what keeps one chunk of inputs within [`EVAL_CHUNK_BYTES`].
pub fn eval_rows(data: &Dataset) -> usize {
    let grid = if data.features == 2 && data.task == Task::Classification {
        BOUNDARY_RESOLUTION * BOUNDARY_RESOLUTION
    } else {
        0
    };
    data.train_rows()
        .max(data.test_rows())
        .max(grid)
        .min(EVAL_CHUNK_BYTES / (4 * data.features.max(1)))
        .clamp(1, EVAL_ROWS)
}

/// Bytes of one batch as the loader queues it: the features and the target of each row, as f32.
pub fn batch_bytes(features: usize, batch: usize) -> u64 {
    ((features + 1) * batch * 4) as u64
}

/// The model of a layer list: the list, then a dense output layer of `outputs`, over the images
/// where the list convolves and over rows of `features` otherwise. A list that does not fit its
/// input still gives a model (with no layers' footprints), which [`check_list`] refuses.
fn list_spec(
    list: &[LayerSpec],
    (features, outputs): (usize, usize),
    loss: Loss,
    image: Option<ImageShape>,
) -> ModelSpec {
    let convolves = list.iter().any(|l| matches!(l, LayerSpec::Conv2d { .. }));
    let input = match image {
        Some(image) if convolves => Shape::Image(image),
        _ => Shape::Flat(features),
    };
    let mut layers = list.to_vec();
    // A language model's embedding reads the data set's vocabulary, as its head writes it.
    crate::nn::with_vocabulary(&mut layers, outputs);
    layers.push(LayerSpec::Dense { units: outputs });
    ModelSpec::of_list(input, layers, loss)
}

/// A layer list's sizes are within the limits of `--layers` and `--conv`, and each layer takes
/// what the one before gives (the error names the first that does not, in both languages).
pub fn check_list(list: &[LayerSpec], spec: &ModelSpec) -> Result<(), SettingError> {
    check_list_sizes(list)?;
    let Some(given) = &spec.list else {
        return Ok(());
    };
    LayerSpec::shapes(&given.layers, given.input)
        .map(drop)
        .map_err(|e| SettingError::ModelShape {
            en: e.text(Lang::En),
            zh: e.text(Lang::Zh),
        })
}

/// A layer list's length and sizes are within the limits of `--layers` and `--conv`.
pub fn check_list_sizes(list: &[LayerSpec]) -> Result<(), SettingError> {
    if list.len() > MAX_MODEL_LAYERS {
        return Err(SettingError::Depth {
            value: list.len(),
            max: MAX_MODEL_LAYERS,
        });
    }
    for layer in list {
        match *layer {
            LayerSpec::Dense { units } => check_hidden(&[units])?,
            LayerSpec::Conv2d { filters, kernel } => check_conv(&[filters], kernel)?,
            LayerSpec::Embedding { width, .. } => check_hidden(&[width])?,
            _ => {}
        }
    }
    Ok(())
}
