//! The command line: `batchscope` opens the app; subcommands run the same core headless.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::app::{AppOptions, GpuChoice};
use crate::backend::UploadMode;
use crate::backend::cpu::{CpuBackend, Split};
use crate::backend::gpu::{GpuBackend, context};
use crate::backend::{Activation, Backend, BackendError};
use crate::bench::{BenchPlan, Summary};
use crate::data::dataloader::{Augment, LoaderConfig};
use crate::data::formats::{ImageOptions, LoadOptions, load as load_file, no_progress};
use crate::data::shipped::{SHIPPED, load_shipped, shipped};
use crate::data::source::DataSource;
use crate::data::{Dataset, DatasetSpec, MAX_SAMPLES, Synthetic, Table, Task};
use crate::device::Device;
use crate::i18n::Lang;
use crate::memory::Role;
use crate::nn::{ModelSpec, OptimizerKind};
use crate::precision::{GradScaler, Precision, RoundingCensus};
use crate::train::{MAX_WIDTH, Pipeline, Runner, Session, SyncPolicy, TrainConfig};

mod memory;
mod trace;

#[derive(Parser, Debug)]
#[command(
    name = "batchscope",
    version,
    about = "Train the same network on a CPU and a GPU side by side."
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Commands>,
    /// A data set to open in the app: a CSV file, an IDX file or a folder of images with one
    /// sub-folder per class.
    path: Option<PathBuf>,
    /// UI language: en or zh.
    #[arg(long, global = true)]
    lang: Option<String>,
    /// Start the app as if there were no GPU adapter.
    #[arg(long)]
    no_gpu: bool,
    /// CPU kernel threads in the app (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Press Run once the devices are up.
    #[arg(long)]
    autorun: bool,
    /// Close the window after this many seconds and print what each column did (for tests).
    #[arg(long, hide = true)]
    exit_after_secs: Option<f64>,
}

#[derive(Subcommand, Debug)]
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Commands {
    /// List the GPU adapters wgpu finds, and what they support.
    Devices {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Train without a window and print one line per logged step, then a summary.
    Train(TrainArgs),
    /// Time training steps: median, min and max step time, samples/s and GFLOP/s per device.
    Bench(BenchArgs),
    /// Record a short run as Chrome trace JSON (opens in Perfetto) and print each device's
    /// step breakdown and advice.
    Trace(trace::TraceArgs),
    /// Train a few steps and print the memory by role, measured and estimated, with formulas.
    Memory(memory::MemoryArgs),
    /// Data set files.
    Data {
        #[command(subcommand)]
        command: DataCommands,
    },
}

#[derive(Subcommand, Debug)]
enum DataCommands {
    /// Load and check a CSV file, an IDX file or an image folder (or a shipped set by name),
    /// and summarise it.
    Inspect {
        /// The file or folder, or a shipped set's name.
        path: String,
        #[command(flatten)]
        read: ReadArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// How to read a data set file, shared by `data inspect`, `train` and `bench`.
#[derive(Args, Debug, Clone)]
struct ReadArgs {
    /// The label column of a CSV file, by name or 0-based index (default: `label`, `target`,
    /// `class`, `species` or `y`, else the last column).
    #[arg(long)]
    label: Option<String>,
    /// classification, regression, or auto (text labels or at most 20 whole numbers are
    /// classes; other numbers are a regression target).
    #[arg(long, default_value = "auto", value_parser = ["auto", "classification", "regression"])]
    task: String,
    /// Image folders: every image is resized to SIDE × SIDE pixels.
    #[arg(long, default_value_t = 28)]
    image_side: usize,
    /// Image folders: keep red, green and blue instead of grey.
    #[arg(long)]
    rgb: bool,
}

impl ReadArgs {
    fn options(&self) -> LoadOptions {
        LoadOptions {
            label: self.label.clone(),
            task: match self.task.as_str() {
                "classification" => Some(Task::Classification),
                "regression" => Some(Task::Regression),
                _ => None,
            },
            image: ImageOptions {
                side: self.image_side,
                rgb: self.rgb,
            },
            ..LoadOptions::default()
        }
    }
}

/// What to train, shared by `train` and `bench`.
#[derive(Args, Debug)]
struct RunArgs {
    /// Data set: spiral, moons, circles, xor, blobs; a shipped set (iris, wine, `breast_cancer`,
    /// digits, penguins, mnist, fashion-mnist, diabetes, autompg); the path of a CSV file, an IDX
    /// file or an image folder; or random (Gaussian inputs as wide as the first layer, random
    /// labels: for benchmarks).
    #[arg(long, default_value = "spiral")]
    dataset: String,
    /// Points in the data set.
    #[arg(long, default_value_t = 900)]
    samples: usize,
    /// Classes (spiral and blobs); taken from --layers when not given.
    #[arg(long)]
    classes: Option<usize>,
    /// Noise of the generator.
    #[arg(long, default_value_t = 0.2)]
    noise: f32,
    /// Layer widths, input first and outputs last (default: the data set's features, 16, 16,
    /// its classes, or 1 for regression).
    #[arg(long)]
    layers: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
    /// Share of the rows held out as the test set.
    #[arg(long, default_value_t = 0.2)]
    test_share: f32,
    /// Train on the features as they are, without standardising them.
    #[arg(long)]
    no_standardise: bool,
    /// Hidden activation: relu, tanh or sigmoid.
    #[arg(long, default_value = "relu")]
    activation: String,
    /// Optimizer: sgd, momentum or adam.
    #[arg(long, default_value = "adam")]
    optimizer: String,
    /// Learning rate.
    #[arg(long, default_value_t = 0.01)]
    lr: f32,
    /// Rows per batch.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Seed of the weights and the batch order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seed of the data set.
    #[arg(long, default_value_t = 7)]
    data_seed: u64,
    /// cpu, gpu or both.
    #[arg(long, default_value = "both")]
    device: String,
    /// CPU kernel threads (0 = one per core; small products then run on one thread).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// When CPU kernels use several threads: `auto` (by work size) or `always` (to measure what
    /// the automatic choice avoids).
    #[arg(long, default_value = "auto", value_parser = ["auto", "always"])]
    split: String,
    #[command(flatten)]
    pipeline: PipelineArgs,
    /// Number format: fp32, fp16, bf16 or mixed (FP32 master weights, FP16 activations and
    /// weight copies, loss scaling). 16-bit values are stored in 2 bytes and computed in f32.
    #[arg(long, default_value = "fp32")]
    precision: String,
    /// Multiply the loss, and so every gradient, by this (1e-12 to 1): 1e-6 is the designed case
    /// of tiny gradients that FP16 loses to zero and loss scaling saves.
    #[arg(long, default_value_t = 1.0)]
    loss_weight: f32,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

/// The data loader, the transfers and the syncs.
// Command-line switches, one per flag: bools are what clap gives them.
#[allow(clippy::struct_excessive_bools)]
#[derive(Args, Debug)]
struct PipelineArgs {
    /// Data-loader worker threads (0: the training thread makes each batch itself).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Finished batches each loader worker may keep waiting.
    #[arg(long, default_value_t = 2)]
    prefetch: usize,
    /// A simulated delay before each batch is read, standing in for slow storage, in ms.
    #[arg(long, default_value_t = 0.0)]
    storage_latency_ms: f32,
    /// Keep samples deflate-compressed and inflate each one as it is loaded.
    #[arg(long)]
    compressed: bool,
    /// Read the loss back every N steps (1: every step, like `.item()`); auto: only when a line
    /// is printed.
    #[arg(long, default_value = "auto")]
    sync_every: String,
    /// Upload batches through a ring of mapped staging buffers (like pinned memory) instead of
    /// `queue.write_buffer`.
    #[arg(long)]
    staging_ring: bool,
    /// While recording, time the GPU's kernels in one step of this many (default: every step
    /// for `trace`; elsewhere every step on a hardware GPU, one in 16 on a software adapter).
    #[arg(long)]
    time_kernels_every: Option<u32>,
    /// GPU memory budget, e.g. `64MiB` (default: only the adapter's own limits). An allocation
    /// past it fails with an out-of-memory error and exit code 2.
    #[arg(long)]
    vram_budget: Option<String>,
    /// CPU memory budget for tensors, e.g. `256MiB` (default: only the system's).
    #[arg(long)]
    host_budget: Option<String>,
    /// Keep every step's layer outputs, as keeping each loss with its graph does: memory grows
    /// until it runs out.
    #[arg(long)]
    keep_graphs: bool,
    /// Augmentation: standard deviation of Gaussian noise added to each feature.
    #[arg(long, default_value_t = 0.0)]
    augment_noise: f32,
    /// Augmentation: mirror images left to right with probability ½.
    #[arg(long)]
    flip: bool,
    /// Augmentation: shift images by up to this many pixels.
    #[arg(long, default_value_t = 0)]
    shift: u8,
}

/// A budget option: a size such as `64MiB`, or absent.
fn budget(option: &str, text: Option<&str>) -> Result<Option<u64>, Failure> {
    text.map(|t| {
        crate::units::parse_bytes(t).ok_or_else(|| {
            BadInput(format!(
                "{option} `{t}`: give a size such as 64MiB, 1.5GiB or 500000 (bytes)"
            ))
        })
    })
    .transpose()
}

impl PipelineArgs {
    fn pipeline(&self) -> Result<(Pipeline, Augment), Failure> {
        let sync = SyncPolicy::parse(&self.sync_every).ok_or_else(|| {
            BadInput(format!(
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
            vram_budget: budget("--vram-budget", self.vram_budget.as_deref())?,
            host_budget: budget("--host-budget", self.host_budget.as_deref())?,
        };
        let augment = Augment {
            noise: self.augment_noise,
            flip: self.flip,
            shift_px: self.shift,
        };
        pipeline.validate().map_err(|e| BadInput(e.to_string()))?;
        augment.validate().map_err(|e| BadInput(e.to_string()))?;
        Ok((pipeline, augment))
    }
}

#[derive(Args, Debug)]
struct TrainArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Optimizer steps.
    #[arg(long, default_value_t = 500, conflicts_with = "epochs")]
    steps: u64,
    /// Full passes over the training set, instead of --steps (the last partial batch of each
    /// epoch is dropped).
    #[arg(long)]
    epochs: Option<u64>,
    /// Log every this many steps (each log reads the loss back: a sync).
    #[arg(long, default_value_t = 10)]
    log_every: u64,
}

#[derive(Args, Debug)]
struct BenchArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Steps before timing starts.
    #[arg(long, default_value_t = 20)]
    warmup: u64,
    /// Timed runs; the statistics are over these.
    #[arg(long, default_value_t = 7)]
    repeats: usize,
    /// Steps per timed run (0: enough for about 0.2 s).
    #[arg(long, default_value_t = 0)]
    steps_per_run: u64,
    /// Instead of training steps, time the CPU's matrix products of one step against the
    /// core's measured FMA peak.
    #[arg(long)]
    kernels: bool,
    /// Time runs with span recording off and on, alternately, and print the cost of recording.
    #[arg(long)]
    recording_overhead: bool,
}

/// Why a command failed.
enum Failure {
    /// A problem with the user's input: printed, and the exit code is 2.
    BadInput(String),
    /// A device could not train (no adapter, a GPU error): reported, and the exit code is 1.
    DeviceFailed,
    /// A device ran out of its memory budget, or its loss diverged: reported, and the exit
    /// code is 2 (a setting to change).
    OutOfMemory,
}
use Failure::BadInput;

/// Parses the arguments and runs what they ask for.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let lang = match cli.lang.as_deref().map(|l| (l, Lang::parse(l))) {
        None => Lang::En,
        Some((_, Some(lang))) => lang,
        Some((l, None)) => {
            eprintln!("error: unknown language `{l}`: use en or zh");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        None => {
            let options = AppOptions {
                lang,
                lang_given: cli.lang.is_some(),
                gpu: if cli.no_gpu {
                    GpuChoice::None("started with --no-gpu".to_owned())
                } else {
                    GpuChoice::Auto
                },
                cpu_threads: cli.threads,
                autorun: cli.autorun,
                open: cli.path,
                exit_after: cli.exit_after_secs.map(Duration::from_secs_f64),
            };
            return match crate::app::run_native(options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Some(Commands::Devices { json }) => {
            devices(json);
            Ok(())
        }
        Some(Commands::Train(args)) => train(&args),
        Some(Commands::Bench(args)) => bench(&args),
        Some(Commands::Trace(args)) => trace::run(&args),
        Some(Commands::Memory(args)) => memory::run(&args),
        Some(Commands::Data {
            command: DataCommands::Inspect { path, read, json },
        }) => inspect(&path, &read, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(BadInput(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::DeviceFailed) => ExitCode::FAILURE,
        Err(Failure::OutOfMemory) => ExitCode::from(2),
    }
}

fn devices(as_json: bool) {
    let adapters = context::enumerate(wgpu::Backends::all());
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if as_json {
        let value = json!({
            "cpu": { "threads": threads },
            "training_backends": format!("{:?}", context::training_backends()),
            "adapters": adapters,
        });
        println!("{value}");
        return;
    }
    println!("CPU: {threads} threads");
    if adapters.is_empty() {
        println!("{}", context::no_adapter_reason("none enumerated"));
    }
    for a in &adapters {
        println!(
            "{} [{}] {}{} — {} {}\n  timestamps: {}, shader f16: {}, max buffer {} MiB, \
             max storage binding {} MiB, training: {}, workgroups: matmul {}x{}, element-wise {}",
            a.name,
            a.backend,
            a.device_type,
            if a.software {
                " (software adapter: its speed says nothing about a GPU)"
            } else {
                ""
            },
            a.driver,
            a.driver_info,
            a.timestamps,
            a.shader_f16,
            a.max_buffer_size_bytes >> 20,
            a.max_storage_buffer_binding_size_bytes >> 20,
            if a.usable_for_training { "yes" } else { "no" },
            a.kernel_sizes.matmul_tile,
            a.kernel_sizes.matmul_tile,
            a.kernel_sizes.elementwise,
        );
    }
}

/// Where the data comes from.
enum Source {
    /// A generator, with its class count.
    Generator(Synthetic, usize),
    /// Random inputs as wide as the first layer.
    Random,
    /// A loaded file (or shipped set).
    File(Box<Table>),
}

/// A shipped set's name, or a path: the table it holds.
fn load_named(name: &str, read: &ReadArgs) -> Result<Table, Failure> {
    let loaded = match shipped(name) {
        Some(set) => load_shipped(set, &no_progress),
        None => load_file(std::path::Path::new(name), &read.options()),
    };
    loaded.map_err(|e| BadInput(e.to_string()))
}

/// The data source `args` name: a shipped set, a file path, `random`, or a generator.
fn parse_source(args: &RunArgs) -> Result<Source, Failure> {
    if args.dataset == "random" {
        return Ok(Source::Random);
    }
    if let Some(kind) = Synthetic::parse(&args.dataset) {
        let default_classes = if kind.has_class_choice() { 3 } else { 2 };
        let from_layers = args
            .layers
            .as_deref()
            .and_then(|l| ModelSpec::parse_layers(l).ok())
            .and_then(|l| l.last().copied());
        let classes = if kind.has_class_choice() {
            args.classes.or(from_layers).unwrap_or(default_classes)
        } else {
            2
        };
        return Ok(Source::Generator(kind, classes));
    }
    if shipped(&args.dataset).is_none() && !std::path::Path::new(&args.dataset).exists() {
        let generators: Vec<&str> = Synthetic::ALL.iter().map(|s| s.as_str()).collect();
        let shipped: Vec<&str> = SHIPPED.iter().map(|s| s.name).collect();
        return Err(BadInput(format!(
            "--dataset `{}`: no such file or folder, and not a data set name: choose one of {},              {}, random, or give the path of a CSV file, an IDX file or an image folder",
            args.dataset,
            generators.join(", "),
            shipped.join(", ")
        )));
    }
    Ok(Source::File(Box::new(load_named(
        &args.dataset,
        &args.read,
    )?)))
}

/// `data inspect`: what the app would train on, or why it refuses the file.
fn inspect(path: &str, read: &ReadArgs, as_json: bool) -> Result<(), Failure> {
    let table = load_named(path, read)?;
    let counts = table.class_counts();
    if as_json {
        let mut value = serde_json::to_value(&table).unwrap_or_default();
        value["features"] = json!(table.features());
        value["class_counts"] = json!(counts);
        value["target_range"] = json!(table.target_range());
        println!("{value}");
        return Ok(());
    }
    println!("{} ({}, {})", table.name, table.format, table.path);
    println!("rows: {}", table.rows);
    let shown: Vec<&str> = table
        .feature_names
        .iter()
        .take(8)
        .map(String::as_str)
        .collect();
    let more = table.features().saturating_sub(shown.len());
    println!(
        "features: {} ({}{})",
        table.features(),
        shown.join(", "),
        if more > 0 {
            format!(", … {more} more")
        } else {
            String::new()
        }
    );
    if let Some(image) = table.image {
        println!(
            "images: {}×{}, {}",
            image.width,
            image.height,
            if image.channels == 3 { "RGB" } else { "grey" }
        );
    }
    println!("label column: {}", table.label_column);
    println!("task: {} ({})", table.task.as_str(), table.task_reason);
    if let Some([lo, mean, hi]) = table.target_range() {
        // The values were read as f32: show them as f32, not with f64's extra digits.
        println!(
            "target: from {} to {}, mean {mean:.4}",
            lo as f32, hi as f32
        );
    } else {
        let classes: Vec<String> = table
            .class_names
            .iter()
            .zip(&counts)
            .map(|(name, n)| format!("{name}: {n}"))
            .collect();
        println!(
            "classes: {} ({})",
            table.class_names.len(),
            classes.join(", ")
        );
    }
    for note in &table.notes {
        println!("note: {note}");
    }
    Ok(())
}

/// The session and devices that `args` describe.
fn parse_run(args: &RunArgs) -> Result<(Session, Vec<Device>), Failure> {
    let source = parse_source(args)?;
    // The widths the data set fixes: (features, outputs), or none for random data.
    let fixed = match &source {
        Source::Generator(_, classes) => Some((2, *classes)),
        Source::File(t) => Some((
            t.features(),
            match t.task {
                Task::Classification => t.class_names.len(),
                Task::Regression => 1,
            },
        )),
        Source::Random => None,
    };
    let layers = match (&args.layers, fixed) {
        (Some(text), _) => {
            ModelSpec::parse_layers(text).map_err(|e| BadInput(format!("--layers {e}")))?
        }
        (None, Some((features, classes))) => vec![features, 16, 16, classes],
        (None, None) => vec![2, 16, 16, args.classes.unwrap_or(2)],
    };
    let (inputs, outputs) = (layers[0], layers[layers.len() - 1]);
    if let Some((features, classes)) = fixed
        && (inputs != features || outputs != classes)
    {
        {
            return Err(BadInput(format!(
                "--layers {}: the {} data set has {features} features and {classes} outputs \
                 (its classes, or 1 for a regression target), so the layers must start with \
                 {features} and end with {classes}",
                layers
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                args.dataset
            )));
        }
    }
    let regression = matches!(&source, Source::File(t) if t.task == Task::Regression);
    if outputs < 2 && !regression {
        return Err(BadInput(
            "--layers: the last width is the number of classes, at least 2".into(),
        ));
    }
    let activation = Activation::parse(&args.activation)
        .filter(|a| Activation::CHOICES.contains(a))
        .ok_or_else(|| {
            BadInput(format!(
                "--activation `{}`: choose relu, tanh or sigmoid",
                args.activation
            ))
        })?;
    let optimizer = OptimizerKind::parse(&args.optimizer).ok_or_else(|| {
        BadInput(format!(
            "--optimizer `{}`: choose sgd, momentum or adam",
            args.optimizer
        ))
    })?;
    let devices = match args.device.as_str() {
        "cpu" => vec![Device::Cpu],
        "gpu" => vec![Device::Gpu],
        "both" => vec![Device::Cpu, Device::Gpu],
        other => {
            return Err(BadInput(format!(
                "--device `{other}`: choose cpu, gpu or both"
            )));
        }
    };
    let kind = match &source {
        Source::Generator(kind, _) => *kind,
        _ => Synthetic::Spiral,
    };
    let (pipeline, augment) = args.pipeline.pipeline()?;
    let precision = Precision::parse(&args.precision).ok_or_else(|| {
        BadInput(format!(
            "--precision `{}`: choose fp32, fp16, bf16 or mixed",
            args.precision
        ))
    })?;
    let config = TrainConfig {
        data: DatasetSpec {
            kind,
            samples: args.samples,
            classes: outputs,
            noise: args.noise,
            test_fraction: args.test_share,
            seed: args.data_seed,
            standardise: !args.no_standardise,
        },
        // Files, shipped sets included, are loaded here and passed in with `from_table`.
        source: DataSource::Generated,
        hidden: layers[1..layers.len() - 1].to_vec(),
        activation,
        optimizer,
        lr: args.lr,
        batch: args.batch,
        seed: args.seed,
        augment,
        precision,
        loss_weight: args.loss_weight,
        pipeline,
    };
    let session = match source {
        Source::Generator(..) => Session::new(config),
        Source::Random => {
            if args.samples > MAX_SAMPLES || inputs > MAX_WIDTH {
                return Err(BadInput(format!(
                    "--dataset random: at most {MAX_SAMPLES} samples and {MAX_WIDTH} features"
                )));
            }
            // At least a few batches' worth of rows, so an epoch is more than one batch.
            let rows = args.samples.max(args.batch.saturating_mul(4));
            Session::with_data(
                config,
                Dataset::random(inputs, outputs, rows, args.data_seed),
            )
        }
        Source::File(table) => Session::from_table(config, &table),
    };
    Ok((session.map_err(|e| BadInput(e.to_string()))?, devices))
}

/// Opens the backend for `device`; a missing GPU is reported, not fatal to the other device.
fn open_backend(device: Device, args: &RunArgs) -> Result<Box<dyn Backend>, String> {
    let split = if args.split == "always" {
        Split::Always
    } else {
        Split::BySize
    };
    match device {
        Device::Cpu => CpuBackend::with_split(args.threads, split)
            .map(|b| Box::new(b) as Box<dyn Backend>)
            .map_err(|e| e.to_string()),
        Device::Gpu => GpuBackend::new()
            .map(|b| Box::new(b) as Box<dyn Backend>)
            .map_err(|e| e.reason),
    }
}

/// Prints why a device could not run, as JSON or text.
fn report_failure(out: &mut impl Write, json: bool, device: Device, error: &str) {
    let line = if json {
        json!({ "device": device, "error": error }).to_string()
    } else {
        format!("{device}: {error}")
    };
    let _ = writeln!(out, "{line}");
}

/// `bench --kernels`: the FMA peak of one core, and each matrix product of a step on one thread
/// (against that peak) and on all threads.
fn bench_kernels(args: &BenchArgs, session: &Session) -> Result<(), Failure> {
    let spec = session.config.model_spec(&session.data);
    let batch = session.config.batch;
    let peak = crate::bench::peak::measure(0.2);
    let all = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut rows = Vec::new();
    for threads in [1, all] {
        let mut cpu = CpuBackend::new(threads).map_err(|e| BadInput(e.to_string()))?;
        let rates = crate::bench::measure_products(&mut cpu, &spec, batch, 0.3)
            .map_err(|e| BadInput(e.to_string()))?;
        rows.push((threads, rates));
    }
    let mut out = std::io::stdout().lock();
    if args.run.json {
        let value = json!({
            "fma_peak_per_core": peak,
            "layers": spec.layers,
            "batch": batch,
            "products": rows.iter().map(|(t, r)| json!({ "threads": t, "rates": r })).collect::<Vec<_>>(),
        });
        let _ = writeln!(out, "{value}");
        return Ok(());
    }
    let _ = writeln!(
        out,
        "FMA peak of one core: {:.1} GFLOP/s ({}), measured",
        peak.gflop_per_s, peak.isa
    );
    for (threads, rates) in &rows {
        for r in rates {
            let _ = writeln!(
                out,
                "{threads} thread(s)  {:<14} {:>5}x{:<5}x{:>5}  {:7.1} GFLOP/s  {:5.1}% of {} core peak",
                r.name,
                r.shape[0],
                r.shape[1],
                r.shape[2],
                r.gflop_per_s,
                100.0 * r.gflop_per_s / (peak.gflop_per_s * *threads as f64),
                threads
            );
        }
    }
    Ok(())
}

fn bench(args: &BenchArgs) -> Result<(), Failure> {
    let (session, devices) = parse_run(&args.run)?;
    if cfg!(debug_assertions) {
        eprintln!(
            "note: this is a debug build, whose own loops are barely optimised; for numbers worth \
             quoting run `cargo run --release -- bench ...`"
        );
    }
    if args.kernels {
        return bench_kernels(args, &session);
    }
    if args.repeats == 0 {
        return Err(BadInput("--repeats must be at least 1".to_owned()));
    }
    let plan = BenchPlan {
        warmup_steps: args.warmup,
        repeats: args.repeats,
        steps_per_run: args.steps_per_run,
        ..BenchPlan::default()
    };
    if args.recording_overhead {
        return bench_recording(args, &session, &devices, plan);
    }
    // A 16-bit precision is measured against FP32 on the same device in the same run: its
    // speed is shown as measured, never assumed.
    let precision = session.config.precision;
    let fp32 = (precision != Precision::Fp32).then(|| Session {
        config: TrainConfig {
            precision: Precision::Fp32,
            ..session.config.clone()
        },
        ..session.clone()
    });
    on_each_device(&devices, args.run.json, |device| {
        let mut backend = open_backend(device, &args.run)?;
        let m = crate::bench::measure(backend.as_mut(), &session, plan).map_err(RunError::from)?;
        let s = Summary::new(&m, backend.as_ref(), &session);
        let baseline = match &fp32 {
            Some(fp32) => {
                let m = crate::bench::measure(backend.as_mut(), fp32, plan);
                Some(Summary::new(
                    &m.map_err(RunError::from)?,
                    backend.as_ref(),
                    fp32,
                ))
            }
            None => None,
        };
        let mut out = std::io::stdout();
        if args.run.json {
            let mut value = serde_json::to_value(&s).unwrap_or_default();
            value["precision"] = json!(precision.as_str());
            if let Some(b) = &baseline {
                value["fp32_step_time_median_ms"] = json!(b.step_time_median_ms);
                value["step_time_ratio_to_fp32"] =
                    json!(s.step_time_median_ms / b.step_time_median_ms);
            }
            let _ = writeln!(out, "{value}");
            return Ok(());
        }
        let _ = writeln!(
            out,
            "{device} {:?} batch {} ({}{}): {:.0} samples/s, step {:.4} ms median \
                 [{:.4} .. {:.4}] over {} runs of {} steps, {:.1} GFLOP/s",
            s.layers,
            s.batch,
            s.backend,
            if s.software_adapter {
                ", software adapter: says nothing about a GPU"
            } else {
                ""
            },
            s.samples_per_s,
            s.step_time_median_ms,
            s.step_time_min_ms,
            s.step_time_max_ms,
            s.repeats,
            s.steps_per_run,
            s.gflop_per_s
        );
        if let Some(b) = baseline {
            let ratio = s.step_time_median_ms / b.step_time_median_ms;
            let _ = writeln!(
                out,
                "{device} {} against fp32, measured in this run: step {:.4} ms against {:.4} ms, \
                 {ratio:.2} times the FP32 time. 16-bit values take half the memory, but every \
                 kernel here computes in f32, widening its 16-bit operands and rounding its \
                 results (no 16-bit arithmetic units are used), so no speed-up is expected{}",
                precision.as_str(),
                s.step_time_median_ms,
                b.step_time_median_ms,
                if precision == Precision::Mixed {
                    "; mixed precision also waits every step for its overflow check (one count \
                     read back, a sync, as GradScaler's found_inf.item() in PyTorch)"
                } else {
                    ""
                }
            );
        }
        Ok(())
    })
}

/// `bench --recording-overhead`: the median step time with span recording off and on, from
/// runs that alternate on one model, and their ratio.
fn bench_recording(
    args: &BenchArgs,
    session: &Session,
    devices: &[Device],
    plan: BenchPlan,
) -> Result<(), Failure> {
    on_each_device(devices, args.run.json, |device| {
        let mut backend = open_backend(device, &args.run)?;
        let mut result = Err(RunError::from("the benchmark did not run"));
        backend.enter(&mut |b| {
            result = crate::bench::measure_recording(b, session, plan).map_err(RunError::from);
        });
        let (off, on) = result?;
        let median_ms = |m: &crate::bench::Measurement| {
            crate::bench::median_of_sorted(&m.sorted_step_times_ms())
        };
        let (off_ms, on_ms) = (median_ms(&off), median_ms(&on));
        let overhead = on_ms / off_ms - 1.0;
        let mut out = std::io::stdout();
        if args.run.json {
            let value = json!({
                "device": device,
                "backend": backend.name(),
                "steps_per_run": off.steps_per_run,
                "runs": off.run_times_s.len(),
                "step_time_off_ms": off_ms,
                "step_time_recording_ms": on_ms,
                "recording_overhead": overhead,
            });
            let _ = writeln!(out, "{value}");
        } else {
            let _ = writeln!(
                out,
                "{device} ({}): step {off_ms:.4} ms without recording, {on_ms:.4} ms recording \
                 (median of {} alternating runs of {} steps each): recording costs {:+.1}%",
                backend.name(),
                off.run_times_s.len(),
                off.steps_per_run,
                overhead * 100.0
            );
        }
        Ok(())
    })
}

fn train(args: &TrainArgs) -> Result<(), Failure> {
    let (session, devices) = parse_run(&args.run)?;
    if args.steps == 0 || args.log_every == 0 {
        return Err(BadInput(
            "--steps and --log-every must be at least 1".to_owned(),
        ));
    }
    let steps = match args.epochs {
        Some(0) => return Err(BadInput("--epochs must be at least 1".to_owned())),
        Some(epochs) => epochs * (session.data.train_rows() / session.config.batch) as u64,
        None => args.steps,
    };
    on_each_device(&devices, args.run.json, |device| {
        let mut backend = open_backend(device, &args.run)?;
        let mut result = Err(RunError::from("training did not run"));
        // Inside the backend's context (the CPU's pool); each line goes straight to stdout,
        // which nothing else holds locked meanwhile.
        backend.enter(&mut |b| {
            result = train_one(b, &session, steps, args, &mut std::io::stdout());
        });
        result
    })
}

/// Runs `run` for each device in turn. A device that fails (no adapter, a GPU error) is reported
/// and the others still run; the exit code then says that one failed.
fn on_each_device(
    devices: &[Device],
    json: bool,
    mut run: impl FnMut(Device) -> Result<(), RunError>,
) -> Result<(), Failure> {
    let (mut failed, mut out_of_memory) = (false, false);
    for &device in devices {
        if let Err(e) = run(device) {
            failed = true;
            out_of_memory |= e.out_of_memory;
            report_failure(&mut std::io::stdout(), json, device, &e.message);
        }
    }
    if out_of_memory {
        Err(Failure::OutOfMemory)
    } else if failed {
        Err(Failure::DeviceFailed)
    } else {
        Ok(())
    }
}

/// Why one device's run failed.
pub(crate) struct RunError {
    message: String,
    /// The run went past a memory budget or diverged: the user's setting, so exit code 2.
    out_of_memory: bool,
}

impl From<String> for RunError {
    fn from(message: String) -> Self {
        Self {
            message,
            out_of_memory: false,
        }
    }
}

impl From<&str> for RunError {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl From<BackendError> for RunError {
    fn from(e: BackendError) -> Self {
        Self {
            out_of_memory: matches!(
                e,
                BackendError::OutOfMemory(_) | BackendError::Diverged { .. }
            ),
            message: e.to_string(),
        }
    }
}

fn train_one(
    backend: &mut dyn Backend,
    session: &Session,
    steps: u64,
    args: &TrainArgs,
    out: &mut impl Write,
) -> Result<(), RunError> {
    let device = backend.device();
    let adapter = backend.adapter_summary();
    let mut runner = Runner::new(backend, session).map_err(RunError::from)?;
    let started = Instant::now();
    let mut last_loss = f32::NAN;
    for step in 1..=steps {
        if step % args.log_every == 0 || step == steps {
            runner.step(backend, true).map_err(RunError::from)?;
            let log = runner.log(backend).map_err(RunError::from)?;
            last_loss = log.loss;
            if args.run.json {
                let _ = writeln!(out, "{}", serde_json::to_string(&log).unwrap_or_default());
            } else {
                let quality = match (log.accuracy, log.mae) {
                    (Some(a), _) => format!("acc {:5.1}%", a * 100.0),
                    (None, Some(e)) => format!("MAE {e:.4}"),
                    (None, None) => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{device} step {:>6}  loss {:.5}  {quality}  {:>10.0} samples/s  {:.3} ms/step",
                    log.step, log.loss, log.samples_per_s, log.step_time_ms
                );
            }
        } else {
            runner.step(backend, false).map_err(RunError::from)?;
        }
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    let eval = runner.evaluate(backend).map_err(RunError::from)?;
    let mut summary = json!({
        "summary": true,
        "device": device,
        "backend": backend.name(),
        "software_adapter": adapter.as_ref().map(|a| a.software),
        "task": session.data.task,
        "steps": steps,
        "loss": last_loss,
        "train_loss": eval.train.loss,
        "test_loss": eval.test.loss,
        "elapsed_s": elapsed_s,
        "samples_per_s": (steps as f64 * args.run.batch as f64) / elapsed_s.max(1e-9),
    });
    let quality = [
        ("train_accuracy", eval.train.accuracy),
        ("test_accuracy", eval.test.accuracy),
        ("train_r2", eval.train.r2),
        ("test_r2", eval.test.r2),
        ("train_mae", eval.train.mae),
        ("test_mae", eval.test.mae),
    ];
    for (key, value) in quality {
        if let Some(v) = value {
            summary[key] = json!(v);
        }
    }
    let precision = session.config.precision;
    let rounding = precision_summary(runner.rounding_total(), runner.scaler());
    if precision != Precision::Fp32 {
        summary["precision"] = json!(precision.as_str());
        summary["rounding"] = json!(runner.rounding_total());
        for (key, value) in &rounding.shares {
            summary[*key] = json!(value);
        }
        if let Some(scaler) = runner.scaler() {
            summary["final_loss_scale"] = json!(scaler.scale);
            summary["skipped_steps"] = json!(scaler.skipped);
        }
    }
    if args.run.json {
        let _ = writeln!(out, "{summary}");
    } else {
        let result = match (eval.train.accuracy, eval.test.accuracy) {
            (Some(train), Some(test)) => format!(
                "train accuracy {:.1}%, test accuracy {:.1}%",
                train * 100.0,
                test * 100.0
            ),
            _ => format!(
                "test R² {:.3}, test MAE {:.4} (in {})",
                eval.test.r2.unwrap_or(f32::NAN),
                eval.test.mae.unwrap_or(f32::NAN),
                session.data.target_name
            ),
        };
        let _ = writeln!(
            out,
            "{device} done: {steps} steps in {elapsed_s:.2} s, {result} ({})",
            backend.name()
        );
        if precision != Precision::Fp32 {
            let _ = writeln!(out, "{device} {}: {}", precision.as_str(), rounding.text);
        }
    }
    Ok(())
}

/// What 16-bit storage lost over a run, and the loss scaler's end state: JSON fields and a line.
struct PrecisionSummary {
    shares: Vec<(&'static str, f64)>,
    text: String,
}

fn precision_summary(census: &RoundingCensus, scaler: Option<&GradScaler>) -> PrecisionSummary {
    let (gradients, activations) = (census.gradients(), census.role(Role::Activations));
    let shares = vec![
        ("gradient_underflow_share", gradients.underflow_share()),
        ("gradient_overflow_share", gradients.overflow_share()),
        ("activation_underflow_share", activations.underflow_share()),
        ("activation_overflow_share", activations.overflow_share()),
    ];
    let percent = |share: f64| format!("{:.2}%", share * 100.0);
    let mut text = format!(
        "of {} non-zero gradient values stored in 16 bits, {} became 0 and {} became infinite; \
         of {} non-zero activations, {} became 0 and {} infinite",
        gradients.nonzero,
        percent(gradients.underflow_share()),
        percent(gradients.overflow_share()),
        activations.nonzero,
        percent(activations.underflow_share()),
        percent(activations.overflow_share()),
    );
    if let Some(s) = scaler {
        let _ = write!(
            text,
            "; final loss scale {}, {} steps skipped",
            s.scale, s.skipped
        );
    }
    PrecisionSummary { shares, text }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Commands};

    #[test]
    fn a_path_opens_the_app_and_subcommands_still_parse() {
        let cli =
            Cli::try_parse_from(["batchscope", "my data.csv", "--lang", "zh"]).expect("parse");
        assert_eq!(
            cli.path.as_deref(),
            Some(std::path::Path::new("my data.csv"))
        );
        assert!(cli.command.is_none());
        let cli = Cli::try_parse_from(["batchscope", "train", "--dataset", "iris"]).expect("parse");
        assert!(matches!(cli.command, Some(Commands::Train(_))));
        assert!(cli.path.is_none());
    }
}
