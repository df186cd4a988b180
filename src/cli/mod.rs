//! The command line: `batchscope` opens the app; subcommands run the same core headless.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::app::{AppOptions, GpuChoice};
use crate::backend::cpu::CpuBackend;
use crate::backend::gpu::{GpuBackend, context};
use crate::backend::{Activation, Backend, Device};
use crate::data::{DatasetSpec, Synthetic};
use crate::i18n::Lang;
use crate::nn::{ModelSpec, OptimizerKind};
use crate::train::{Runner, Session, TrainConfig};

#[derive(Parser, Debug)]
#[command(
    name = "batchscope",
    version,
    about = "Train the same network on a CPU and a GPU side by side."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Commands>,
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
}

#[derive(Args, Debug)]
struct TrainArgs {
    /// Data set: spiral, moons, circles, xor or blobs.
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
    /// Layer widths, input first and classes last.
    #[arg(long, default_value = "2,16,16,3")]
    layers: String,
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
    /// Optimizer steps.
    #[arg(long, default_value_t = 500, conflicts_with = "epochs")]
    steps: u64,
    /// Full passes over the training set, instead of --steps (the last partial batch of each
    /// epoch is dropped).
    #[arg(long)]
    epochs: Option<u64>,
    /// Seed of the weights and the batch order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seed of the data set.
    #[arg(long, default_value_t = 7)]
    data_seed: u64,
    /// cpu, gpu or both.
    #[arg(long, default_value = "both")]
    device: String,
    /// Log every this many steps (each log reads the loss back: a sync).
    #[arg(long, default_value_t = 10)]
    log_every: u64,
    /// CPU kernel threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print JSON lines.
    #[arg(long)]
    json: bool,
}

/// Why a command failed.
enum Failure {
    /// A problem with the user's input: printed, and the exit code is 2.
    BadInput(String),
    /// A device could not train (no adapter, a GPU error): reported, and the exit code is 1.
    DeviceFailed,
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(BadInput(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::DeviceFailed) => ExitCode::FAILURE,
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
             max storage binding {} MiB, training: {}",
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
        );
    }
}

fn parse_config(args: &TrainArgs) -> Result<(TrainConfig, Vec<Device>), Failure> {
    let kind = Synthetic::parse(&args.dataset).ok_or_else(|| {
        let names: Vec<&str> = Synthetic::ALL.iter().map(|s| s.as_str()).collect();
        BadInput(format!(
            "--dataset `{}`: choose one of {}",
            args.dataset,
            names.join(", ")
        ))
    })?;
    let layers =
        ModelSpec::parse_layers(&args.layers).map_err(|e| BadInput(format!("--layers {e}")))?;
    let outputs = layers[layers.len() - 1];
    let classes = if kind.has_class_choice() {
        args.classes.unwrap_or(outputs)
    } else {
        2
    };
    if layers[0] != 2 || outputs != classes {
        return Err(BadInput(format!(
            "--layers {}: the {} data set has 2 features and {classes} classes, so the layers \
             must start with 2 and end with {classes}",
            args.layers, args.dataset
        )));
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
    if args.steps == 0 || args.log_every == 0 {
        return Err(BadInput(
            "--steps and --log-every must be at least 1".to_owned(),
        ));
    }
    let config = TrainConfig {
        data: DatasetSpec {
            kind,
            samples: args.samples,
            classes,
            noise: args.noise,
            test_fraction: 0.2,
            seed: args.data_seed,
        },
        hidden: layers[1..layers.len() - 1].to_vec(),
        activation,
        optimizer,
        lr: args.lr,
        batch: args.batch,
        seed: args.seed,
    };
    Ok((config, devices))
}

fn train(args: &TrainArgs) -> Result<(), Failure> {
    let (config, devices) = parse_config(args)?;
    let session = Session::new(config).map_err(BadInput)?;
    let steps = match args.epochs {
        Some(0) => return Err(BadInput("--epochs must be at least 1".to_owned())),
        Some(epochs) => epochs * (session.data.train_rows() / session.config.batch) as u64,
        None => args.steps,
    };
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    // A device that cannot train is not the user's typo: say why, and go on with the others.
    let mut report = |out: &mut std::io::StdoutLock<'_>, device: Device, error: &str| {
        failed = true;
        let line = if args.json {
            json!({ "device": device, "error": error }).to_string()
        } else {
            format!("{device}: {error}")
        };
        let _ = writeln!(out, "{line}");
    };
    for device in devices {
        let mut backend: Box<dyn Backend> = match device {
            Device::Cpu => {
                Box::new(CpuBackend::new(args.threads).map_err(|e| BadInput(e.to_string()))?)
            }
            Device::Gpu => match GpuBackend::new() {
                Ok(b) => Box::new(b),
                Err(e) => {
                    report(&mut out, device, &e.reason);
                    continue;
                }
            },
        };
        if let Err(e) = train_one(backend.as_mut(), &session, steps, args, &mut out) {
            report(&mut out, device, &e);
        }
    }
    if failed {
        Err(Failure::DeviceFailed)
    } else {
        Ok(())
    }
}

fn train_one(
    backend: &mut dyn Backend,
    session: &Session,
    steps: u64,
    args: &TrainArgs,
    out: &mut impl Write,
) -> Result<(), String> {
    let device = backend.device();
    let adapter = backend.adapter_summary();
    let mut runner = Runner::new(backend, session).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut last_loss = f32::NAN;
    for step in 1..=steps {
        if step % args.log_every == 0 || step == steps {
            let kernels = runner.timed_step(backend).map_err(|e| e.to_string())?;
            let log = runner
                .log(backend, kernels.as_ref())
                .map_err(|e| e.to_string())?;
            last_loss = log.loss;
            if args.json {
                let _ = writeln!(out, "{}", serde_json::to_string(&log).unwrap_or_default());
            } else {
                let _ = writeln!(
                    out,
                    "{device} step {:>6}  loss {:.5}  acc {:5.1}%  {:>10.0} samples/s  {:.3} ms/step",
                    log.step,
                    log.loss,
                    log.accuracy * 100.0,
                    log.samples_per_s,
                    log.step_time_ms
                );
            }
        } else {
            runner.step(backend).map_err(|e| e.to_string())?;
        }
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    let eval = runner.evaluate(backend).map_err(|e| e.to_string())?;
    let summary = json!({
        "summary": true,
        "device": device,
        "backend": backend.name(),
        "software_adapter": adapter.as_ref().map(|a| a.software),
        "steps": steps,
        "loss": last_loss,
        "train_loss": eval.train_loss,
        "train_accuracy": eval.train_accuracy,
        "test_loss": eval.test_loss,
        "test_accuracy": eval.test_accuracy,
        "elapsed_s": elapsed_s,
        "samples_per_s": (steps as f64 * args.batch as f64) / elapsed_s.max(1e-9),
    });
    if args.json {
        let _ = writeln!(out, "{summary}");
    } else {
        let _ = writeln!(
            out,
            "{device} done: {} steps in {elapsed_s:.2} s, train accuracy {:.1}%, test accuracy {:.1}% ({})",
            steps,
            eval.train_accuracy * 100.0,
            eval.test_accuracy * 100.0,
            backend.name()
        );
    }
    Ok(())
}
