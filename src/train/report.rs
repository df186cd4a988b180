//! What a run reports: each logging interval's measurements, whole-set evaluations, the decision
//! boundary, and the model's values binned for the precision view. Every time is from this run's
//! clocks.

use serde::Serialize;

use crate::device::Device;
use crate::precision::{DType, Half, Log2Histogram, RangeReport, RoundingCensus};

/// What one logging interval measured. Every time is from this run's clocks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepLog {
    /// Which device.
    pub device: Device,
    /// Optimizer steps so far.
    pub step: u64,
    /// Full passes over the training set so far.
    pub epoch: u64,
    /// Rows each update learns from.
    pub batch: usize,
    /// Rows run at once: a micro-batch's, equal to `batch` unless micro-batches are accumulated.
    pub micro_batch: usize,
    /// Mean training loss over the batches since the previous log.
    pub loss: f32,
    /// Share of those batches' rows classified correctly (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f32>,
    /// Mean absolute error of those batches, in the target's own units (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f32>,
    /// Training rows per second since the previous log (wall clock, ending in a sync).
    pub samples_per_s: f64,
    /// Characters (tokens) per second for a language model: its rows times their positions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_s: Option<f64>,
    /// Mean wall-clock time of one step since the previous log, in milliseconds.
    pub step_time_ms: f64,
    /// The loss scale (mixed precision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<f32>,
    /// Updates skipped so far because a gradient overflowed (mixed precision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_steps: Option<u64>,
    /// GPU time of the kernels of the last step, from timestamp queries, in milliseconds.
    /// `None` on the CPU and on adapters without timestamps.
    pub kernel_time_ms: Option<f64>,
    /// Each op of the latest step whose ops were timed (GPU timestamp queries, or the host's
    /// clock on the CPU), by the label both devices give that work. Not exported: the JSON
    /// lines keep one number per log.
    #[serde(skip)]
    pub kernels: Option<crate::backend::KernelTimes>,
    /// What storing values in 16 bits lost since the previous log, by role, counted where the
    /// rounding happened (16-bit precisions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounding: Option<RoundingCensus>,
    /// The energy of the steps since the previous log, measured or estimated (its JSON fields
    /// `energy_j`, `samples_per_j`, `energy_total_j` and `energy_source` at the top level);
    /// `None` where there is nothing to measure or estimate it with.
    #[serde(flatten)]
    pub energy: Option<StepEnergy>,
}

/// The energy figures of a log of steps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepEnergy {
    /// Joules a step (an update, with all its micro-batches).
    #[serde(rename = "energy_j")]
    pub per_step_j: f64,
    /// Samples trained per joule.
    pub samples_per_j: f64,
    /// Joules since the run began.
    #[serde(rename = "energy_total_j")]
    pub total_j: f64,
    /// `rapl`, `nvml` or `estimated`.
    #[serde(rename = "energy_source")]
    pub source: crate::energy::EnergySource,
    /// What was read, or the power an estimate stands on and its source, in English.
    #[serde(skip)]
    pub basis: String,
    /// An estimate's power, watts, and whether another device's figure stands in.
    #[serde(skip)]
    pub rated: Option<(f64, bool)>,
}

/// The values of one kind at one step: how they are stored, binned by power of two, and what
/// storing them in each 16-bit format would lose.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValueSample {
    /// How they are stored.
    pub dtype: DType,
    /// |value| by power of two.
    pub histogram: Log2Histogram,
    /// What FP16 would do to them as they are now.
    pub in_fp16: RangeReport,
    /// What BF16 would do to them as they are now.
    pub in_bf16: RangeReport,
}

impl ValueSample {
    pub(super) fn of(values: &[f32], dtype: DType) -> Self {
        Self {
            dtype,
            histogram: Log2Histogram::of(values),
            in_fp16: RangeReport::of(values, Half::Fp16),
            in_bf16: RangeReport::of(values, Half::Bf16),
        }
    }
}

/// The values of a model at one step: what the precision panel draws against the 16-bit
/// formats' ranges.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValueHistograms {
    /// At which step.
    pub step: u64,
    /// Weights and biases as stored (mixed precision: the FP32 masters).
    pub weights: ValueSample,
    /// Every layer's outputs of the last forward pass, as stored.
    pub activations: ValueSample,
    /// The parameters' gradients of the last backward pass, as stored (mixed precision: FP32,
    /// unscaled).
    pub gradients: ValueSample,
}

/// How well the model does on one part of the data.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Score {
    /// Mean loss (cross-entropy; or squared error of the standardised target).
    pub loss: f32,
    /// Share of rows classified correctly (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f32>,
    /// Coefficient of determination `1 − Σ(y − ŷ)² / Σ(y − ȳ)²` (regression): 1 is perfect,
    /// 0 is no better than always predicting the mean.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r2: Option<f32>,
    /// Mean absolute error in the target's own units (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f32>,
}

/// Test rows by true class (row) and predicted class (column).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Confusion {
    /// Classes per side.
    pub classes: usize,
    /// `classes × classes` counts, row-major.
    pub counts: Vec<u32>,
}

impl Confusion {
    /// Rows of class `truth` predicted as `predicted`.
    pub fn count(&self, truth: usize, predicted: usize) -> u32 {
        self.counts[truth * self.classes + predicted]
    }
}

/// Test images whose predicted class an evaluation sends back for the sample grid.
pub const SAMPLE_GRID: usize = 24;

/// Most test rows whose prediction an evaluation sends back for the regression plot.
pub const MAX_PREDICTION_POINTS: usize = 1000;

/// Loss and accuracy (or R² and error) of the whole training and test sets with the current
/// parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalReport {
    /// Which device.
    pub device: Device,
    /// Step at which it was measured.
    pub step: u64,
    /// On the training set.
    pub train: Score,
    /// On the test set.
    pub test: Score,
    /// The test set's confusion matrix (classification).
    #[serde(skip)]
    pub confusion: Option<Confusion>,
    /// `(true, predicted)` target values of up to [`MAX_PREDICTION_POINTS`] test rows, in the
    /// target's own units (regression).
    #[serde(skip)]
    pub predictions: Vec<[f32; 2]>,
    /// The predicted class of the first [`SAMPLE_GRID`] test rows (image classification).
    #[serde(skip)]
    pub samples: Vec<u8>,
    /// A CNN's first layer.
    #[serde(skip)]
    pub first_layer: Option<crate::nn::FirstLayer>,
    /// What a language model writes now, and where its first attention head looks.
    #[serde(skip)]
    pub writing: Option<Writing>,
}

/// Characters a language model wrote at an evaluation, from a fixed seed so two devices whose
/// weights agree write the same, and the attention pattern of each of its heads over a few
/// texts it read: its own writing's last window, then windows of the validation text.
#[derive(Clone, Debug, PartialEq)]
pub struct Writing {
    /// The prompt (the validation text's first characters).
    pub prompt: String,
    /// What followed it.
    pub text: String,
    /// The temperature of the draws.
    pub temperature: f32,
    /// The texts the attention maps are over, what the model wrote first.
    pub samples: Vec<AttentionSample>,
    /// Heads an attention layer.
    pub heads: usize,
}

/// Where every attention head looked over the last characters of one window the model read.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionSample {
    /// What the window is.
    pub from: SampleFrom,
    /// Its last characters (at most [`ATTENTION_SHOWN`]), first first.
    pub window: Vec<String>,
    /// For each head of each attention layer (layer after layer, `heads` a layer), `[n, n]`
    /// over those `n` characters: how much query (row) `i` attends to key (column) `j`; zero
    /// above the diagonal. A row's probabilities over the characters before the shown ones
    /// are not kept, so a row may sum to less than one.
    pub attention: Vec<Vec<f32>>,
}

/// Which window an attention map is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleFrom {
    /// The last window of what the model just wrote.
    Written,
    /// The validation text's window `n` (from 1).
    Validation(usize),
}

/// Most characters of a window an attention map keeps (its last ones), so a cell of the
/// heatmap stays readable and an evaluation's maps stay small.
pub const ATTENTION_SHOWN: usize = 32;

/// The class the model predicts over a grid covering the 2-D data.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryGrid {
    /// Cells per side.
    pub resolution: usize,
    /// `[x_min, x_max]` in standardised units.
    pub x_range: [f32; 2],
    /// `[y_min, y_max]` in standardised units.
    pub y_range: [f32; 2],
    /// Predicted class per cell, row-major from `y_min` upwards.
    pub class: Vec<u8>,
    /// Softmax probability of that class per cell.
    pub confidence: Vec<f32>,
}
