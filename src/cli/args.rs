//! The arguments the run-like subcommands share: how to read a data set, what to train, and
//! how the pipeline runs.

use clap::Args;

use super::failure::Failure;
use crate::backend::UploadMode;
use crate::backend::cpu::check_threads;
use crate::data::Task;
use crate::data::dataloader::{Augment, LoaderConfig};
use crate::data::formats::{ImageOptions, LoadOptions};
use crate::train::{Pipeline, SyncPolicy};

/// How to read a data set file, shared by `data inspect`, `train` and `bench`.
#[derive(Args, Debug, Clone)]
pub(super) struct ReadArgs {
    /// The label column of a CSV file, by name or 0-based index (default: `label`, `target`,
    /// `class`, `species` or `y`, else the last column).
    #[arg(long)]
    pub label: Option<String>,
    /// classification, regression, or auto (text labels or at most 20 whole numbers are
    /// classes; other numbers are a regression target).
    #[arg(long, default_value = "auto", value_parser = ["auto", "classification", "regression"])]
    pub task: String,
    /// Image folders: every image is resized to SIDE × SIDE pixels (default 28).
    #[arg(long)]
    pub image_side: Option<usize>,
    /// Image folders: keep red, green and blue instead of grey.
    #[arg(long)]
    pub rgb: bool,
}

impl ReadArgs {
    /// Refuses the image options for `name` when it is not an image folder: they would be
    /// ignored without a word.
    pub fn check_images_apply(&self, name: &str) -> Result<(), Failure> {
        let given: Vec<String> = [
            self.image_side.map(|s| format!("--image-side {s}")),
            self.rgb.then(|| "--rgb".to_owned()),
        ]
        .into_iter()
        .flatten()
        .collect();
        if given.is_empty() || std::path::Path::new(name).is_dir() {
            return Ok(());
        }
        Err(Failure::BadInput(format!(
            "{}: applies to a folder of images only, and {name} is not one (a shipped set or a \
             file keeps the size and colours it has); leave it out",
            given.join(" and ")
        )))
    }

    pub fn options(&self) -> LoadOptions {
        LoadOptions {
            label: self.label.clone(),
            task: match self.task.as_str() {
                "classification" => Some(Task::Classification),
                "regression" => Some(Task::Regression),
                _ => None,
            },
            image: ImageOptions {
                side: self.image_side.unwrap_or(ImageOptions::default().side),
                rgb: self.rgb,
            },
            ..LoadOptions::default()
        }
    }
}

/// What to train, shared by `train` and `bench`.
#[derive(Args, Debug)]
pub(super) struct RunArgs {
    /// Data set: spiral, moons, circles, xor, blobs; a shipped set (iris, wine, `breast_cancer`,
    /// digits, penguins, mnist, fashion-mnist, diabetes, autompg); a shipped text (shakespeare,
    /// poems) for a GPT; the path of a CSV file, an IDX file, an image folder or a UTF-8 .txt
    /// file; or random (Gaussian inputs as wide as the first layer, random labels: for
    /// benchmarks).
    #[arg(long, default_value = "spiral")]
    pub dataset: String,
    /// Points in the data set.
    #[arg(long, default_value_t = 900)]
    pub samples: usize,
    /// Characters a window of a text data set (shakespeare, poems, a .txt file): a language
    /// model's context length.
    #[arg(long, default_value_t = 64, value_name = "T")]
    pub context: usize,
    /// Classes (spiral and blobs); taken from --layers when not given.
    #[arg(long)]
    pub classes: Option<usize>,
    /// Noise of the generator.
    #[arg(long, default_value_t = 0.2)]
    pub noise: f32,
    /// Layer widths, input first and outputs last (default: the data set's features, 16, 16,
    /// its classes, or 1 for regression). After --conv: the dense layers only, hidden widths
    /// and the classes (default: the classes alone).
    #[arg(long)]
    pub layers: Option<String>,
    /// Convolution blocks before the dense layers, the filters of each, e.g. 8,16: each block
    /// is a convolution with the activation, then 2×2 max pooling (a CNN, for image data).
    #[arg(long)]
    pub conv: Option<String>,
    /// The model as a list of layers: a TOML file (`[[layers]]` tables: dense, conv2d,
    /// `max_pool2d`, flatten, activation, `layer_norm`, embedding, attention, residual) or a preset
    /// (mlp, mlp-layernorm, gpt-tiny, gpt-baby: the GPTs for a text). The data set gives the
    /// input and the dense output layer; instead of --layers, --conv and --activation.
    #[arg(long, value_name = "FILE|PRESET", conflicts_with_all = ["layers", "conv"])]
    pub model: Option<String>,
    /// Side of the convolutions' kernels: 3 or 5.
    #[arg(long, default_value_t = 3)]
    pub conv_kernel: usize,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Share of the rows held out as the test set.
    #[arg(long, default_value_t = 0.2)]
    pub test_share: f32,
    /// Train on the features as they are, without standardising them.
    #[arg(long)]
    pub no_standardise: bool,
    /// Hidden activation: relu, tanh or sigmoid.
    #[arg(long, default_value = "relu")]
    pub activation: String,
    /// Optimizer: sgd, momentum, adam, or adamw (Adam with PyTorch's decoupled weight decay
    /// 0.01 on the weight matrices).
    #[arg(long, default_value = "adam")]
    pub optimizer: String,
    /// Learning rate.
    #[arg(long, default_value_t = 0.01)]
    pub lr: f32,
    /// Rows per batch: per micro-batch with --accumulate.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Sum the gradients of N micro-batches of --batch rows before each update (gradient
    /// accumulation): the update is that of one batch N times larger, with one micro-batch's
    /// activations in memory.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub accumulate: u32,
    /// Activation checkpointing: keep only every K blocks' output (a transformer block, a
    /// convolution with its pooling, a dense layer) and compute the rest again in the backward
    /// pass; bare --checkpoint is 1 (a plain MLP's segments are at least 2 layers).
    #[arg(long, value_name = "K", num_args = 0..=1, default_value_t = 0, default_missing_value = "1")]
    pub checkpoint: u32,
    /// Seed of the weights and the batch order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seed of the data set.
    #[arg(long, default_value_t = 7)]
    pub data_seed: u64,
    /// cpu, gpu or both.
    #[arg(long, default_value = "both")]
    pub device: String,
    /// CPU kernel threads (0 = one per core; small products then run on one thread).
    #[arg(long, default_value_t = 0, value_parser = threads_in_range)]
    pub threads: usize,
    /// When CPU kernels use several threads: `auto` (by work size) or `always` (to measure what
    /// the automatic choice avoids).
    #[arg(long, value_enum, default_value_t = SplitArg::Auto)]
    pub split: SplitArg,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Number format: fp32, fp16, bf16 or mixed (FP32 master weights, FP16 activations and
    /// weight copies, loss scaling). 16-bit values are stored in 2 bytes and computed in f32.
    #[arg(long, default_value = "fp32")]
    pub precision: String,
    /// Multiply the loss, and so every gradient, by this (1e-12 to 1): 1e-6 is the designed case
    /// of tiny gradients that FP16 loses to zero and loss scaling saves.
    #[arg(long, default_value_t = 1.0)]
    pub loss_weight: f32,
    /// Print JSON lines.
    #[arg(long)]
    pub json: bool,
}

/// The data loader, the transfers and the syncs.
#[expect(
    clippy::struct_excessive_bools,
    reason = "command-line switches, one per flag: bools are what clap gives them"
)]
#[derive(Args, Debug)]
pub(super) struct PipelineArgs {
    /// Data-loader worker threads (0: the training thread makes each batch itself).
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// Finished batches each loader worker may keep waiting.
    #[arg(long, default_value_t = 2)]
    pub prefetch: usize,
    /// A simulated delay before each batch is read, standing in for slow storage, in ms.
    #[arg(long, default_value_t = 0.0)]
    pub storage_latency_ms: f32,
    /// Keep samples deflate-compressed and inflate each one as it is loaded.
    #[arg(long)]
    pub compressed: bool,
    /// Read the loss back every N steps (1: every step, like `.item()`); auto: only when a line
    /// is printed.
    #[arg(long, default_value = "auto")]
    pub sync_every: String,
    /// Upload batches through a ring of mapped staging buffers (like pinned memory) instead of
    /// `queue.write_buffer`.
    #[arg(long)]
    pub staging_ring: bool,
    /// While recording, time the GPU's kernels in one step of this many (default: every step
    /// for `trace`; elsewhere every step on a hardware GPU, one in 16 on a software adapter).
    #[arg(long)]
    pub time_kernels_every: Option<u32>,
    /// GPU memory budget, e.g. `64MiB` (default: only the adapter's own limits). An allocation
    /// past it fails with an out-of-memory error and exit code 2.
    #[arg(long)]
    pub vram_budget: Option<String>,
    /// CPU memory budget for tensors, e.g. `256MiB` (default: only the system's).
    #[arg(long)]
    pub host_budget: Option<String>,
    /// Keep every step's layer outputs, as keeping each loss with its graph does: memory grows
    /// until it runs out.
    #[arg(long)]
    pub keep_graphs: bool,
    /// Augmentation: standard deviation of Gaussian noise added to each feature.
    #[arg(long, default_value_t = 0.0)]
    pub augment_noise: f32,
    /// Augmentation: mirror images left to right with probability ½.
    #[arg(long)]
    pub flip: bool,
    /// Augmentation: shift images by up to this many pixels.
    #[arg(long, default_value_t = 0)]
    pub shift: u8,
}

/// A budget option: a size such as `64MiB`, or absent.
fn budget(option: &str, text: Option<&str>) -> Result<Option<u64>, Failure> {
    text.map(|t| {
        crate::units::parse_bytes(t).ok_or_else(|| {
            Failure::BadInput(format!(
                "{option} `{t}`: give a size such as 64MiB, 1.5GiB or 500000 (bytes)"
            ))
        })
    })
    .transpose()
}

impl PipelineArgs {
    pub fn pipeline(&self) -> Result<(Pipeline, Augment), Failure> {
        let sync = SyncPolicy::parse(&self.sync_every).ok_or_else(|| {
            Failure::BadInput(format!(
                "--sync-every `{}`: give auto or a number of steps from 1",
                self.sync_every
            ))
        })?;
        let pipeline = Pipeline {
            loader: LoaderConfig {
                workers: self.workers,
                prefetch: self.prefetch,
                storage_latency_ms: self.storage_latency_ms,
                compressed: self.compressed,
            },
            sync,
            upload: if self.staging_ring {
                UploadMode::StagingRing
            } else {
                UploadMode::WriteBuffer
            },
            // Only `trace` records; the others measure without its cost.
            record: false,
            kernel_timing_every: self.time_kernels_every.unwrap_or(0),
            keep_graphs: self.keep_graphs,
            vram_budget_bytes: budget("--vram-budget", self.vram_budget.as_deref())?,
            host_budget_bytes: budget("--host-budget", self.host_budget.as_deref())?,
            // `train --until-…` stops in its own loop.
            stop: crate::train::StopAt::Never,
        };
        let augment = Augment {
            noise: self.augment_noise,
            flip: self.flip,
            shift_px: self.shift,
        };
        pipeline
            .validate()
            .map_err(|e| Failure::BadInput(e.to_string()))?;
        augment
            .validate()
            .map_err(|e| Failure::BadInput(e.to_string()))?;
        Ok((pipeline, augment))
    }
}

/// Parses a thread count from 0 (one per core) to [`MAX_THREADS`].
pub(super) fn threads_in_range(text: &str) -> Result<usize, String> {
    let n: usize = text
        .parse()
        .map_err(|e| format!("`{text}`: {e}; give a whole number"))?;
    check_threads(n)?;
    Ok(n)
}

/// `--split`: when the CPU's kernels use several threads.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SplitArg {
    /// By the work's size.
    Auto,
    /// Always, down to the smallest product.
    Always,
}

impl From<SplitArg> for crate::backend::cpu::Split {
    fn from(split: SplitArg) -> Self {
        match split {
            SplitArg::Auto => Self::BySize,
            SplitArg::Always => Self::Always,
        }
    }
}

/// A switch given as `on` or `off`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OnOff {
    On,
    Off,
}

impl OnOff {
    pub(super) fn on(self) -> bool {
        self == OnOff::On
    }
}
