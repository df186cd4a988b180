//! The command line: `batchscope` opens the app; subcommands run the same core headless.
//!
//! A file per concern: `args` (what the run-like subcommands share), `run` (the session and
//! devices the arguments describe), `output` (printing, quiet on a closed pipe), `failure` (exit
//! codes), and one file per subcommand.

mod args;
use args::threads_in_range;
mod bench;
mod calibrate;
mod devices;
mod failure;
mod infer;
mod inspect;
mod lessons;
mod memory;
mod model;
mod output;
#[cfg(test)]
mod reference_tests;
mod run;
mod sample;
mod selftest;
mod simulate;
mod sweep;
mod trace;
mod train;
mod tune;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::app::AppOptions;
use crate::backend::GpuChoice;
use crate::i18n::Lang;
use args::ReadArgs;
use failure::Failure;
use output::Out;

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
    /// A data set to open in the app (a CSV file, an IDX file or a folder of images with one
    /// sub-folder per class), or a session file saved from the app (`*.batchscope`).
    path: Option<PathBuf>,
    /// UI language: en or zh.
    #[arg(long, global = true)]
    lang: Option<String>,
    /// Start the app as if there were no GPU adapter.
    #[arg(long)]
    no_gpu: bool,
    /// CPU kernel threads in the app (0 = one per core).
    #[arg(long, default_value_t = 0, value_parser = threads_in_range)]
    threads: usize,
    /// Press Run once the devices are up.
    #[arg(long)]
    autorun: bool,
    /// Open the app at this guided lesson (`batchscope lessons` lists them).
    #[arg(long, value_name = "ID")]
    lesson: Option<String>,
    /// Open the app in presenter mode (F5 in the window): larger, high contrast, setup hidden.
    #[arg(long)]
    presenter: bool,
    /// Close the window after this many seconds and print what each column did (for tests).
    #[arg(long, hide = true)]
    exit_after_secs: Option<f64>,
}

#[derive(Subcommand, Debug)]
enum Commands {
    /// List the GPU adapters wgpu finds, and what they support.
    Devices {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Time every matrix-product kernel variant on the GPU and keep the fastest for this
    /// adapter and driver (done by itself on first use; run it again after changing drivers or
    /// to measure anew).
    Tune {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Train a named self-test (spiral, digits-cnn) on each device and print one line,
    /// `BATCHSCOPE_SELFTEST` and JSON: the line the browser's page writes for the same name.
    Selftest {
        /// The self-tests: spiral (the default MLP), digits-cnn (a CNN on the 8×8 digits).
        #[arg(required = true)]
        names: Vec<String>,
        /// Steps each device trains.
        #[arg(long, default_value_t = crate::train::selftest::STEPS)]
        steps: u64,
        /// Train on the CPU only.
        #[arg(long)]
        no_gpu: bool,
    },
    /// Train without a window and print one line per logged step, then a summary.
    Train(train::TrainArgs),
    /// Time training steps: median, min and max step time, samples/s and GFLOP/s per device.
    Bench(bench::BenchArgs),
    /// Vary one setting over a list of values on each device, one device at a time, and find
    /// where the GPU's samples/s reach the CPU's.
    Sweep(sweep::SweepArgs),
    /// Train briefly, then time predictions one request at a time and in batches: latency
    /// percentiles and throughput per device.
    Infer(infer::InferArgs),
    /// Train a language model briefly on a text (or load its weights), then write characters
    /// after a prompt on each device from one seed: the text, and characters per second.
    Sample(sample::SampleArgs),
    /// Record a short run as Chrome trace JSON (opens in Perfetto) and print each device's
    /// step breakdown and advice.
    Trace(trace::TraceArgs),
    /// Train a few steps and print the memory by role, measured and estimated, with formulas.
    Memory(memory::MemoryArgs),
    /// Print a model's layers with their output shapes and parameters, its FLOPs a sample and
    /// its memory estimate at the batch size, without training (`--model FILE|PRESET`,
    /// `--layers` or `--conv`).
    Model(model::ModelArgs),
    /// Measure this machine's CPU with short probes, fit the simulator's efficiencies, and
    /// (with --grid) check the predictions against measured steps.
    Calibrate(calibrate::CalibrateArgs),
    /// List the hardware profiles the simulator uses, each figure with its source.
    Profiles {
        /// Print JSON (one line per profile, with every source).
        #[arg(long)]
        json: bool,
    },
    /// Predict what one training step of these settings would cost on hardware profiles (every
    /// figure simulated, not measured).
    Simulate(simulate::SimulateArgs),
    /// The guided lessons, with their titles in both languages; with --verify, each run
    /// headless and its headlines filled from this machine's measurements.
    Lessons(lessons::LessonsArgs),
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

/// Parses the arguments and runs what they ask for.
pub fn main() -> ExitCode {
    let info = crate::build_info::this_build();
    let command = Cli::command()
        .version(info.line())
        .long_version(info.long());
    let cli = match command
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            // Help and errors go to a closed pipe quietly too.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let lang = match cli.lang.as_deref().map(|l| (l, Lang::parse(l))) {
        None => Lang::En,
        Some((_, Some(lang))) => lang,
        Some((l, None)) => {
            return Failure::BadInput(format!("unknown language `{l}`: use en or zh")).exit_code();
        }
    };
    let mut out = Out::new();
    let result = match cli.command {
        None => {
            if let Some(id) = &cli.lesson
                && crate::lesson::shipped::find(id).is_none()
            {
                let ids: Vec<String> = crate::lesson::shipped::lessons()
                    .0
                    .into_iter()
                    .map(|l| l.id)
                    .collect();
                return Failure::BadInput(format!(
                    "--lesson {id}: no such lesson; the lessons are {}",
                    ids.join(", ")
                ))
                .exit_code();
            }
            let options = AppOptions {
                lesson: cli.lesson.clone(),
                presenter: cli.presenter,
                lang,
                lang_given: cli.lang.is_some(),
                gpu: if cli.no_gpu {
                    GpuChoice::Unavailable(crate::i18n::Said::new(
                        crate::i18n::ErrKey::NoGpuFlag,
                        &[],
                    ))
                } else {
                    GpuChoice::Auto
                },
                cpu_threads: cli.threads,
                autorun: cli.autorun,
                open: cli.path,
                exit_after: cli.exit_after_secs.map(Duration::from_secs_f64),
                start_workers: true,
                tuning_cache: crate::app::tuning_cache_path(),
                ..AppOptions::default()
            };
            crate::app::native::run_native(options).map_err(Failure::Output)
        }
        Some(Commands::Devices { json }) => devices::run(&mut out, json),
        Some(Commands::Tune { json }) => tune::run(&mut out, json),
        Some(Commands::Selftest {
            names,
            steps,
            no_gpu,
        }) => selftest::run(&mut out, &names, steps, no_gpu),
        Some(Commands::Train(args)) => train::run(&mut out, &args),
        Some(Commands::Bench(args)) => bench::run(&mut out, &args),
        Some(Commands::Sweep(args)) => sweep::run(&mut out, &args),
        Some(Commands::Infer(args)) => infer::run(&mut out, &args),
        Some(Commands::Sample(args)) => sample::run(&mut out, &args),
        Some(Commands::Trace(args)) => trace::run(&mut out, &args),
        Some(Commands::Memory(args)) => memory::run(&mut out, &args),
        Some(Commands::Model(args)) => model::run(&mut out, &args),
        Some(Commands::Calibrate(args)) => calibrate::run(&mut out, &args),
        Some(Commands::Profiles { json }) => simulate::profiles(&mut out, json),
        Some(Commands::Simulate(args)) => simulate::simulate(&mut out, &args),
        Some(Commands::Lessons(args)) => lessons::run(&mut out, &args),
        Some(Commands::Data {
            command: DataCommands::Inspect { path, read, json },
        }) => inspect::run(&mut out, &path, &read, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit_code(),
    }
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
