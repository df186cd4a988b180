//! `batchscope profiles`: the hardware profiles, each figure with its source and confidence.
//! `batchscope simulate`: what the training step of the given settings would cost on a profile,
//! op by op, every figure simulated.

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::Failure;
use super::output::Out;
use super::run::parse_run;
use crate::sim::cost::{Prediction, predict, step_ops_with};
use crate::sim::estimate::PRESETS;
use crate::sim::memory_fit::{MemoryFit, Model, Stage, model_states_per_gpu};
use crate::sim::profile::{self, Profile};
use crate::units::format_bytes;

/// `batchscope profiles`.
pub(super) fn profiles(out: &mut Out, json: bool) -> Result<(), Failure> {
    let all = profile::shipped();
    if json {
        for p in &all {
            out.json(p)?;
        }
        return Ok(());
    }
    out.line(
        "Hardware profiles (assets/profiles.toml): figures for simulation, each with its source",
    )?;
    out.line("  confidence: d = datasheet, r = derived from printed figures, e = estimate")?;
    for p in &all {
        let mark = |f: &profile::Figure| match f.confidence {
            profile::Confidence::Datasheet => "d",
            profile::Confidence::Derived => "r",
            profile::Confidence::Estimate => "e",
            profile::Confidence::Measured => "m",
        };
        let tensor = p
            .tensor_tflops
            .as_ref()
            .map_or("—".to_owned(), |t| format!("{:.1}{}", t.value, mark(t)));
        let link = p.link_gbs.as_ref().map_or(String::new(), |l| {
            format!(" {:.1} GB/s{}", l.value, mark(l))
        });
        out.line(format!(
            "{:<18} {:<32} FP32 {:>6.1}{} TFLOP/s  tensor {:>8}  {:>6.0}{} GB/s  {:>4.0}{} GB  {}{}  \
             dispatch {:.0}{} µs",
            p.id,
            p.name,
            p.fp32_tflops.value,
            mark(&p.fp32_tflops),
            tensor,
            p.mem_bw_gbs.value,
            mark(&p.mem_bw_gbs),
            p.mem_gb.value,
            mark(&p.mem_gb),
            p.link,
            link,
            p.dispatch_us.value,
            mark(&p.dispatch_us),
        ))?;
    }
    out.line("Sources: batchscope profiles --json")?;
    Ok(())
}

#[derive(Args, Debug)]
pub(super) struct SimulateArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The profile: an id from `batchscope profiles`, a profile file, or `all`.
    #[arg(long, default_value = "all")]
    profile: String,
    /// Print every op of the step, not only the summary.
    #[arg(long)]
    ops: bool,
    /// GPUs to spread the largest preset model over: its memory per GPU with data parallelism
    /// and `ZeRO` stages 1–3, on each profile.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    gpus: Option<u32>,
}

/// One line of JSON: the prediction, labelled simulated.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    prediction: &'a Prediction,
    predicted_step_time_ms: f64,
    predicted_samples_per_s: f64,
    /// Whether the model and batch fit in the profile's memory (estimated, not measured).
    memory: MemoryFit,
    #[serde(skip_serializing_if = "Option::is_none")]
    zero: Option<Zero>,
}

/// The largest preset's model states per GPU across `gpus` GPUs, by stage.
#[derive(Serialize)]
struct Zero {
    model: &'static str,
    parameters: u64,
    gpus: u32,
    per_gpu_bytes: Vec<(Stage, u64)>,
}

/// `batchscope simulate`.
pub(super) fn simulate(out: &mut Out, args: &SimulateArgs) -> Result<(), Failure> {
    let profiles: Vec<Profile> = if args.profile == "all" {
        profile::shipped()
    } else {
        profile::find(&args.profile).map_err(Failure::BadInput)?
    };
    let (session, _) = parse_run(&args.run)?;
    let config = &session.config;
    let spec = config.model_spec(&session.data);
    let loader = &config.pipeline.loader;
    let loader_time = (f64::from(loader.storage_latency_ms), loader.workers > 0);
    if !args.run.json {
        out.line(format!(
            "SIMULATED (not measured): one training step of {}, batch {}, {}, {} on each profile",
            spec.describe(),
            batch_words(config),
            config.optimizer.as_str(),
            config.precision.as_str()
        ))?;
    }
    let model = Model {
        spec: &spec,
        optimizer: config.optimizer,
        precision: config.precision,
        eval_rows: crate::train::eval_rows(&session.data),
        levers: config.levers(),
    };
    for p in &profiles {
        let rule = config.recipe();
        let ops = step_ops_with(&spec, config.batch, rule, p.device(), config.levers());
        let batch = config.effective_batch();
        let prediction = predict(p, &ops, config.precision, batch, loader_time);
        let capacity = p.mem_gb.value * 1e9;
        let memory = MemoryFit::of(model, config.batch, capacity);
        let zero = args.gpus.zip(PRESETS.last()).map(|(gpus, large)| Zero {
            model: large.name,
            parameters: large.parameters,
            gpus,
            per_gpu_bytes: Stage::ALL
                .into_iter()
                .map(|s| (s, model_states_per_gpu(large.parameters, gpus, s) as u64))
                .collect(),
        });
        if args.run.json {
            out.json(&Line {
                prediction: &prediction,
                predicted_step_time_ms: prediction.step_time_ms,
                predicted_samples_per_s: prediction.samples_per_s,
                memory,
                zero,
            })?;
            continue;
        }
        out.line(format!(
            "{:<18} step {:>10.4} ms  {:>12.0} samples/s  {:?}-bound (simulated)",
            p.id, prediction.step_time_ms, prediction.samples_per_s, prediction.bound
        ))?;
        out.line(format!(
            "{:<18} memory: batch {} needs {} of {}: {}; the largest batch that fits: {} \
             (estimated)",
            "",
            batch_words(config),
            format_bytes(memory.needs_bytes),
            format_bytes(memory.capacity_bytes),
            if memory.fits { "fits" } else { "does NOT fit" },
            memory
                .largest_batch
                .map_or_else(|| "none".to_owned(), |b| b.to_string()),
        ))?;
        if let Some(z) = &zero {
            let stages: Vec<String> = z
                .per_gpu_bytes
                .iter()
                .map(|(s, b)| {
                    let fits = if *b as f64 <= capacity {
                        ""
                    } else {
                        " (too much)"
                    };
                    format!("{s:?} {}{fits}", format_bytes(*b))
                })
                .collect();
            out.line(format!(
                "{:<18} {} ({} parameters) on {} GPUs, model states per GPU: {} (estimated)",
                "",
                z.model,
                z.parameters,
                z.gpus,
                stages.join(", ")
            ))?;
        }
        if args.ops {
            for c in &prediction.ops {
                out.line(format!(
                    "    {:<28} {:>12.0} FLOP {:>12.0} B  {:>9.4} ms  {:?}",
                    c.op.name, c.op.flops, c.op.bytes, c.time_ms, c.bound
                ))?;
            }
        }
    }
    Ok(())
}

/// The batch an update learns from, with its micro-batches where they are accumulated.
fn batch_words(config: &crate::train::TrainConfig) -> String {
    if config.accumulate > 1 {
        format!(
            "{} ({} micro-batches of {})",
            config.effective_batch(),
            config.accumulate,
            config.batch
        )
    } else {
        config.batch.to_string()
    }
}
