//! Training: a [`Runner`] drives one model on one backend through the data, and a worker thread
//! per device runs a runner on commands from the UI and reports what happened as events.

pub mod worker;

use std::sync::Arc;
use std::time::Instant;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::backend::{Activation, Backend, BackendError, Device, KernelTimes};
use crate::data::file::no_progress;
use crate::data::loader::DataSource;
use crate::data::{Dataset, DatasetSpec, Table, Task};
use crate::nn::{Loss, Mlp, ModelSpec, OptimizerKind};

/// Everything a training run is made of; the same config on both devices gives the same run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The generator's settings (used when `source` is `Generated`); its test share, seed and
    /// standardisation apply to every source.
    pub data: DatasetSpec,
    /// Where the data comes from: a generator, a shipped real set, or the user's own file.
    #[serde(default)]
    pub source: DataSource,
    /// Hidden-layer widths; the input and output widths come from the data set.
    pub hidden: Vec<usize>,
    /// Hidden activation.
    pub activation: Activation,
    /// Update rule.
    pub optimizer: OptimizerKind,
    /// Learning rate.
    pub lr: f32,
    /// Rows per batch.
    pub batch: usize,
    /// Seed of the initial weights and of the batch order.
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            data: DatasetSpec::default(),
            source: DataSource::Generated,
            hidden: vec![16, 16],
            activation: Activation::Relu,
            optimizer: OptimizerKind::Adam,
            lr: 0.01,
            batch: 32,
            seed: 1,
        }
    }
}

/// Largest batch and widths the app accepts, so one typo cannot ask for gigabytes.
pub const MAX_BATCH: usize = 65_536;
/// Widest layer the app accepts.
pub const MAX_WIDTH: usize = 8192;

impl TrainConfig {
    /// The model these settings describe for `data`.
    pub fn model_spec(&self, data: &Dataset) -> ModelSpec {
        let mut layers = vec![data.features];
        layers.extend(&self.hidden);
        layers.push(data.outputs());
        ModelSpec {
            layers,
            activation: self.activation,
            loss: Loss::for_task(data.task),
        }
    }

    /// Checks the settings against the data set; the message names the setting and its limit.
    pub fn validate(&self, data: &Dataset) -> Result<(), String> {
        if !(self.lr.is_finite() && self.lr > 0.0 && self.lr <= 10.0) {
            return Err(format!(
                "learning rate {}: choose a value above 0 and at most 10",
                self.lr
            ));
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return Err(format!(
                "batch size {}: choose between 1 and {MAX_BATCH}",
                self.batch
            ));
        }
        if self.batch > data.train_rows() {
            return Err(format!(
                "batch size {} is larger than the {} training rows of {}: choose at most {}",
                self.batch,
                data.train_rows(),
                data.name,
                data.train_rows()
            ));
        }
        if let Some(w) = self.hidden.iter().find(|&&w| w == 0 || w > MAX_WIDTH) {
            return Err(format!("layer width {w}: choose between 1 and {MAX_WIDTH}"));
        }
        Ok(())
    }
}

/// A data set and the settings to train on it, shared by both devices' workers.
#[derive(Clone, Debug)]
pub struct Session {
    /// The settings.
    pub config: TrainConfig,
    /// The generated data.
    pub data: Arc<Dataset>,
}

impl Session {
    /// Generates or loads the data set and checks the settings. (The app loads files on a
    /// thread of its own and calls [`Session::from_table`].)
    pub fn new(config: TrainConfig) -> Result<Self, String> {
        if config.source == DataSource::Generated {
            let data = Dataset::generate(&config.data)?;
            return Self::with_data(config, data);
        }
        let table = config
            .source
            .load(&no_progress)
            .map_err(|e| e.to_string())?;
        Self::from_table(config, &table)
    }

    /// Splits and scales a loaded table as the settings say, and checks the settings.
    pub fn from_table(config: TrainConfig, table: &Table) -> Result<Self, String> {
        config.data.validate_split()?;
        let data = table.to_dataset(config.data.split());
        Self::with_data(config, data)
    }

    /// Checks the settings against a data set made elsewhere (benchmarks, files).
    pub fn with_data(config: TrainConfig, data: Dataset) -> Result<Self, String> {
        config.validate(&data)?;
        Ok(Self {
            config,
            data: Arc::new(data),
        })
    }
}

/// What one logging interval measured. Every time is from this run's clocks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepLog {
    /// Which device.
    pub device: Device,
    /// Optimizer steps so far.
    pub step: u64,
    /// Full passes over the training set so far.
    pub epoch: u64,
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
    /// Mean wall-clock time of one step since the previous log, in milliseconds.
    pub step_time_ms: f64,
    /// GPU time of the kernels of the last step, from timestamp queries, in milliseconds.
    /// `None` on the CPU and on adapters without timestamps.
    pub kernel_time_ms: Option<f64>,
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
}

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

/// Drives one model through the data on one backend.
pub struct Runner {
    device: Device,
    model: Mlp,
    data: Arc<Dataset>,
    lr: f32,
    order: Vec<usize>,
    cursor: usize,
    epoch: u64,
    rng: ChaCha8Rng,
    batch_x: Vec<f32>,
    batch_y: Vec<f32>,
    window_start: Instant,
    window_steps: u64,
    extent: ([f32; 2], [f32; 2]),
}

/// Rows `[start, start + n)` of `order` gathered into `x`, `y`.
fn gather(data: &Dataset, order: &[usize], x: &mut [f32], y: &mut [f32]) {
    let f = data.features;
    for (row, &i) in order.iter().enumerate() {
        x[row * f..(row + 1) * f].copy_from_slice(&data.train_x[i * f..(i + 1) * f]);
        y[row] = data.train_y[i];
    }
}

impl Runner {
    /// Allocates the model on `backend` and shuffles the first epoch.
    pub fn new(backend: &mut dyn Backend, session: &Session) -> Result<Self, BackendError> {
        let config = &session.config;
        let data = Arc::clone(&session.data);
        let spec = config.model_spec(&data);
        let model = Mlp::new(backend, &spec, config.optimizer, config.batch, config.seed)?;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5eed_0fba_7c00);
        let mut order: Vec<usize> = (0..data.train_rows()).collect();
        order.shuffle(&mut rng);
        let extent = extent_of(&data);
        Ok(Self {
            device: backend.device(),
            batch_x: vec![0.0; config.batch * data.features],
            batch_y: vec![0.0; config.batch],
            model,
            data,
            lr: config.lr,
            order,
            cursor: 0,
            epoch: 0,
            rng,
            window_start: Instant::now(),
            window_steps: 0,
            extent,
        })
    }

    /// Optimizer steps taken.
    pub fn steps(&self) -> u64 {
        u64::from(self.model.steps())
    }

    /// The model.
    pub fn model(&self) -> &Mlp {
        &self.model
    }

    /// Gathers the next batch (reshuffling at each epoch's end), uploads it and trains on it.
    pub fn step(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let batch = self.model.batch();
        if self.cursor + batch > self.order.len() {
            // The remainder is dropped (`drop_last`), so every batch has the same shape.
            self.order.shuffle(&mut self.rng);
            self.cursor = 0;
            self.epoch += 1;
        }
        gather(
            &self.data,
            &self.order[self.cursor..self.cursor + batch],
            &mut self.batch_x,
            &mut self.batch_y,
        );
        self.cursor += batch;
        self.model
            .load_batch(backend, &self.batch_x, &self.batch_y)?;
        self.model.train_step(backend, self.lr)?;
        self.window_steps += 1;
        Ok(())
    }

    /// One step with its kernels timed by the GPU, where the adapter can.
    pub fn timed_step(
        &mut self,
        backend: &mut dyn Backend,
    ) -> Result<Option<KernelTimes>, BackendError> {
        backend.begin_kernel_timing();
        self.step(backend)?;
        backend.take_kernel_times()
    }

    /// Reads the loss statistics (a sync point) and measures the interval since the last log.
    pub fn log(
        &mut self,
        backend: &mut dyn Backend,
        kernels: Option<&KernelTimes>,
    ) -> Result<StepLog, BackendError> {
        let stats = self.model.take_stats(backend)?;
        let elapsed_s = self.window_start.elapsed().as_secs_f64();
        let steps = self.window_steps.max(1);
        let log = StepLog {
            device: self.device,
            step: self.steps(),
            epoch: self.epoch,
            loss: stats.loss,
            accuracy: stats.accuracy,
            mae: stats
                .mean_abs_error
                .map(|e| (f64::from(e) * self.data.target_scale.std) as f32),
            samples_per_s: (steps * self.model.batch() as u64) as f64 / elapsed_s.max(1e-9),
            step_time_ms: elapsed_s * 1e3 / steps as f64,
            kernel_time_ms: kernels.map(|k| k.total_ns as f64 / 1e6),
        };
        self.restart_clock();
        Ok(log)
    }

    /// Starts a new measuring interval (after work that is not training, such as evaluation).
    pub fn restart_clock(&mut self) {
        self.window_start = Instant::now();
        self.window_steps = 0;
    }

    /// Loss and accuracy (or R² and error) on the whole training and test sets.
    pub fn evaluate(&mut self, backend: &mut dyn Backend) -> Result<EvalReport, BackendError> {
        let data = Arc::clone(&self.data);
        let train = self.model.predict(backend, &data.train_x)?;
        let test = self.model.predict(backend, &data.test_x)?;
        let confusion = (data.task == Task::Classification)
            .then(|| confusion(&test, &data.test_y, data.classes()));
        let predictions = match data.task {
            Task::Regression => test
                .iter()
                .zip(&data.test_y)
                .take(MAX_PREDICTION_POINTS)
                .map(|(&p, &y)| {
                    let scale = data.target_scale;
                    [scale.invert(y) as f32, scale.invert(p) as f32]
                })
                .collect(),
            Task::Classification => Vec::new(),
        };
        Ok(EvalReport {
            device: self.device,
            step: self.steps(),
            train: score(&train, &data.train_y, &data),
            test: score(&test, &data.test_y, &data),
            confusion,
            predictions,
        })
    }

    /// The predicted class over a `resolution²` grid (2-D data sets only).
    pub fn boundary(
        &mut self,
        backend: &mut dyn Backend,
        resolution: usize,
    ) -> Result<Option<BoundaryGrid>, BackendError> {
        if self.data.features != 2 || self.data.task != Task::Classification {
            return Ok(None);
        }
        let (xr, yr) = self.extent;
        let mut points = Vec::with_capacity(resolution * resolution * 2);
        for iy in 0..resolution {
            for ix in 0..resolution {
                let fx = (ix as f32 + 0.5) / resolution as f32;
                let fy = (iy as f32 + 0.5) / resolution as f32;
                points.push(xr[0] + fx * (xr[1] - xr[0]));
                points.push(yr[0] + fy * (yr[1] - yr[0]));
            }
        }
        let logits = self.model.predict(backend, &points)?;
        let classes = self.data.classes();
        let mut class = Vec::with_capacity(resolution * resolution);
        let mut confidence = Vec::with_capacity(resolution * resolution);
        for row in logits.chunks_exact(classes) {
            let (best, p) = softmax_max(row);
            class.push(best as u8);
            confidence.push(p);
        }
        Ok(Some(BoundaryGrid {
            resolution,
            x_range: xr,
            y_range: yr,
            class,
            confidence,
        }))
    }
}

/// The first index of the largest logit and its softmax probability.
fn softmax_max(row: &[f32]) -> (usize, f32) {
    let (mut best, mut max) = (0, f32::NEG_INFINITY);
    for (j, &v) in row.iter().enumerate() {
        if v > max {
            best = j;
            max = v;
        }
    }
    let sum: f32 = row.iter().map(|v| (v - max).exp()).sum();
    (best, 1.0 / sum)
}

/// How `outputs` (the model's, one row per target) fare against `targets`, in f64 on the host.
pub fn score(outputs: &[f32], targets: &[f32], data: &Dataset) -> Score {
    match data.task {
        Task::Classification => {
            let (loss, accuracy) = loss_and_accuracy(outputs, targets, data.classes());
            Score {
                loss,
                accuracy: Some(accuracy),
                r2: None,
                mae: None,
            }
        }
        Task::Regression => {
            let n = targets.len().max(1) as f64;
            let mean = targets.iter().map(|&y| f64::from(y)).sum::<f64>() / n;
            let (mut squared, mut total, mut abs) = (0.0f64, 0.0f64, 0.0f64);
            for (&p, &y) in outputs.iter().zip(targets) {
                let e = f64::from(p) - f64::from(y);
                squared += e * e;
                abs += e.abs();
                total += (f64::from(y) - mean).powi(2);
            }
            Score {
                loss: (squared / n) as f32,
                accuracy: None,
                r2: Some(if total > 0.0 {
                    (1.0 - squared / total) as f32
                } else {
                    0.0
                }),
                // The target was standardised for training: its errors scale back by its deviation.
                mae: Some((abs / n * data.target_scale.std) as f32),
            }
        }
    }
}

/// Mean cross-entropy and accuracy of `logits` against `targets`, in f64 on the host.
pub fn loss_and_accuracy(logits: &[f32], targets: &[f32], classes: usize) -> (f32, f32) {
    let rows = targets.len().max(1);
    let mut loss = 0.0f64;
    let mut correct = 0usize;
    for (row, &y) in logits.chunks_exact(classes).zip(targets) {
        let (best, _) = softmax_max(row);
        let max = f64::from(row[best]);
        let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
        let target = y as usize;
        loss += sum.ln() - (f64::from(row.get(target).copied().unwrap_or(row[best])) - max);
        correct += usize::from(best == target);
    }
    ((loss / rows as f64) as f32, correct as f32 / rows as f32)
}

/// Counts of (true class, predicted class) over the rows of `logits`.
fn confusion(logits: &[f32], targets: &[f32], classes: usize) -> Confusion {
    let mut counts = vec![0u32; classes * classes];
    for (row, &y) in logits.chunks_exact(classes).zip(targets) {
        let (best, _) = softmax_max(row);
        if let Some(c) = counts.get_mut(y as usize * classes + best) {
            *c += 1;
        }
    }
    Confusion { classes, counts }
}

/// The rectangle the boundary grid covers: the data's extent plus a margin.
fn extent_of(data: &Dataset) -> ([f32; 2], [f32; 2]) {
    let mut lo = [f32::INFINITY; 2];
    let mut hi = [f32::NEG_INFINITY; 2];
    if data.features == 2 {
        for p in data
            .train_x
            .chunks_exact(2)
            .chain(data.test_x.chunks_exact(2))
        {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
    }
    let range = |d: usize| {
        if lo[d].is_finite() && hi[d] > lo[d] {
            let margin = 0.1 * (hi[d] - lo[d]);
            [lo[d] - margin, hi[d] + margin]
        } else {
            [-2.0, 2.0]
        }
    };
    (range(0), range(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Scale;

    fn regression_data(std: f64) -> Dataset {
        Dataset {
            name: "r".into(),
            features: 1,
            task: Task::Regression,
            class_names: Vec::new(),
            target_name: "y".into(),
            target_scale: Scale { mean: 50.0, std },
            standardised: true,
            feature_names: vec!["x".into()],
            image: None,
            train_x: Vec::new(),
            train_y: Vec::new(),
            test_x: Vec::new(),
            test_y: Vec::new(),
        }
    }

    #[test]
    fn r2_and_mean_absolute_error_follow_their_definitions() {
        let data = regression_data(10.0);
        let targets = [-1.0, 0.0, 1.0, 2.0];
        let perfect = score(&targets, &targets, &data);
        assert_eq!(
            (perfect.r2, perfect.mae, perfect.accuracy),
            (Some(1.0), Some(0.0), None)
        );
        // Always predicting the mean (0.5) explains nothing: R² = 0.
        let mean = score(&[0.5; 4], &targets, &data);
        assert_eq!(mean.r2, Some(0.0));
        // Errors of 1 standardised unit are 10 units of the target (its deviation).
        let off = score(&[0.0, 1.0, 2.0, 3.0], &targets, &data);
        assert_eq!(off.mae, Some(10.0));
        assert_eq!(off.loss, 1.0);
        // R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² = 1 − 4 / 5.
        assert!((off.r2.unwrap_or(0.0) - 0.2).abs() < 1e-6);
    }

    #[test]
    fn the_confusion_matrix_counts_true_against_predicted() {
        // Three rows: class 0 predicted 0, class 1 predicted 0, class 1 predicted 1.
        let logits = [2.0, 1.0, 3.0, 0.0, 0.0, 5.0];
        let m = confusion(&logits, &[0.0, 1.0, 1.0], 2);
        assert_eq!(m.counts, [1, 0, 1, 1]);
        assert_eq!((m.count(1, 0), m.count(1, 1)), (1, 1));
    }
}
