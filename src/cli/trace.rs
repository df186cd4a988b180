//! `batchscope trace`: a short recorded run per device, written as Chrome trace JSON, with each
//! device's step breakdown and advice printed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::{Failure, RunError, on_each_device};
use super::output::{Out, OutputError};
use super::run::{check_fits, open_backend, parse_run};
use crate::backend::Backend;
use crate::device::Device;
use crate::i18n::Lang;
use crate::trace::Finding;
use crate::trace::advice::{Advice, Context};
use crate::trace::chrome::{DeviceTrace, to_chrome};
use crate::trace::{Breakdown, Category, StepTrace, TraceChunk};
use crate::train::{Runner, Session};

/// Most steps a trace records.
const MAX_TRACE_STEPS: u64 = 5_000;

#[derive(Args, Debug)]
pub(super) struct TraceArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Where to write the Chrome trace JSON.
    #[arg(long)]
    out: PathBuf,
    /// Steps to record.
    #[arg(long, default_value_t = 50)]
    steps: u64,
    /// Steps before recording starts (first-step costs such as shader compilation are left out).
    #[arg(long, default_value_t = 5)]
    warmup: u64,
}

/// One device's recorded run.
struct Recorded {
    device: Device,
    name: String,
    chunk: TraceChunk,
    advice: Advice,
}

pub(super) fn run(out: &mut Out, args: &TraceArgs) -> Result<(), Failure> {
    let (mut session, devices) = parse_run(&args.run)?;
    if args.steps == 0 || args.steps > MAX_TRACE_STEPS {
        return Err(Failure::BadInput(format!(
            "--steps {}: choose between 1 and {MAX_TRACE_STEPS}",
            args.steps
        )));
    }
    session.config.pipeline.record = true;
    // A short capture is for reading, not for speed: every step's kernels are timed unless the
    // user asks for sampling.
    if args.run.pipeline.time_kernels_every.is_none() {
        session.config.pipeline.kernel_timing_every = 1;
    }
    // Check the destination before training, so a typo does not cost a run.
    crate::files::check_destination(&args.out).map_err(|e| Failure::BadInput(e.to_string()))?;
    let mut recorded = Vec::new();
    let result = on_each_device(out, &devices, args.run.json, |out, device| {
        let mut backend = open_backend(device, &args.run)?;
        check_fits(backend.as_ref(), &session, session.config.batch, "--batch")?;
        let mut result = Err(RunError::from("the trace did not run"));
        backend.enter(&mut |b| {
            result = record(b, &session, args.warmup, args.steps).map_err(RunError::from);
        });
        let chunk = result?;
        let context = Context {
            gpu: device == Device::Gpu,
            batch: session.config.batch,
            workers: session.config.pipeline.loader.workers,
        };
        let advice = Advice::of(&chunk.steps, context);
        let r = Recorded {
            device,
            name: format!("{device}: {}", backend.name()),
            chunk,
            advice,
        };
        print_device(out, &r, args.run.json)?;
        recorded.push(r);
        Ok(())
    });
    let traces: Vec<DeviceTrace<'_>> = recorded
        .iter()
        .map(|r| DeviceTrace {
            pid: match r.device {
                Device::Cpu => 1,
                Device::Gpu => 2,
            },
            name: &r.name,
            gpu: r.device == Device::Gpu,
            steps: &r.chunk.steps,
            spans: &r.chunk.spans,
        })
        .collect();
    let notes = notes(&session);
    let value = to_chrome(&traces, &notes);
    // Whole or not at all: a full disk leaves no half trace behind.
    crate::files::write_atomic_with(&args.out, &mut |w| {
        serde_json::to_writer(&mut *w, &value).map_err(std::io::Error::other)
    })
    .map_err(|e| Failure::Output(e.to_string()))?;
    if matches!(result, Err(Failure::Closed | Failure::Output(_))) {
        return result;
    }
    if !args.run.json {
        out.line(format!(
            "wrote {} (open it in https://ui.perfetto.dev or chrome://tracing)",
            args.out.display()
        ))?;
    }
    result
}

/// What a reader of the trace should know about how it was measured.
fn notes(session: &Session) -> Vec<String> {
    let mut notes = vec![
        "Host spans come from the host's monotonic clock; GPU kernel spans from timestamp \
         queries, placed on the host axis by a calibration (or, where the adapter has no \
         timestamps, from the host seeing each submission done: an upper bound)."
            .to_owned(),
        "The step breakdown counts each instant once, in the order Kernel, Memcpy, Sync, \
         DataLoader, CPU Exec, Other; loader workers' own spans run beside the steps and are \
         not counted, the training thread's wait for them is."
            .to_owned(),
        "Memcpy spans on the host→device lane are the host's side of the copy; the GPU's own \
         copy is not timed."
            .to_owned(),
    ];
    if session.config.pipeline.loader.storage_latency_ms > 0.0 {
        notes.push(format!(
            "Storage reads are a simulated delay of {} ms per batch.",
            session.config.pipeline.loader.storage_latency_ms
        ));
    }
    notes
}

/// Trains `warmup` steps unrecorded, then `steps` recorded ones, and returns the recording.
fn record(
    backend: &mut dyn Backend,
    session: &Session,
    warmup: u64,
    steps: u64,
) -> Result<TraceChunk, crate::backend::BackendError> {
    let mut runner = Runner::new(backend, session)?;
    for _ in 0..warmup {
        runner.step(backend, false)?;
    }
    runner.sync(backend)?;
    // What the warm-up recorded is dropped.
    drop(runner.take_trace(backend));
    for step in 1..=steps {
        // The last step reads the loss whatever the policy, so every kernel has been timed.
        runner.step(backend, step == steps)?;
    }
    runner.sync(backend)?;
    Ok(runner.take_trace(backend))
}

/// The mean breakdown of a step, in ms per category (`Kernel_ms`, `CPU Exec_ms`, …).
fn parts(breakdown: &Breakdown, unit: &str, scale: f64) -> BTreeMap<String, f64> {
    Category::ALL
        .into_iter()
        .map(|c| {
            (
                format!("{}_{unit}", c.as_str()),
                breakdown.get(c) as f64 * scale,
            )
        })
        .collect()
}

/// A device's line of `trace --json`.
#[derive(Serialize)]
struct TraceSummary<'a> {
    device: Device,
    backend: &'a str,
    steps: usize,
    steps_with_kernels_timed: usize,
    spans: usize,
    mean_per_step: MeanStep,
    per_step: Vec<StepLine>,
    advice: &'a [Finding],
}

/// The mean of the steps whose kernels were timed.
#[derive(Serialize)]
struct MeanStep {
    #[serde(flatten)]
    parts_ms: BTreeMap<String, f64>,
    wall_ms: f64,
    device_busy_share: f64,
}

/// One step's breakdown, in µs.
#[derive(Serialize)]
struct StepLine {
    step: u64,
    wall_us: f64,
    synced: bool,
    parts: BTreeMap<String, f64>,
    device_busy_share: f64,
}

fn print_device(out: &mut Out, r: &Recorded, as_json: bool) -> Result<(), OutputError> {
    // Steps whose kernels were not timed have no honest breakdown.
    let steps: Vec<&StepTrace> = r.chunk.steps.iter().filter(|s| s.kernels_timed).collect();
    let total = Breakdown::total(steps.iter().map(|s| &s.breakdown));
    let n = steps.len().max(1) as f64;
    let ms = |ns: u64| ns as f64 / 1e6 / n;
    if as_json {
        return out.json(&TraceSummary {
            device: r.device,
            backend: &r.name,
            steps: r.chunk.steps.len(),
            steps_with_kernels_timed: steps.len(),
            spans: r.chunk.spans.len(),
            mean_per_step: MeanStep {
                parts_ms: parts(&total, "ms", 1e-6 / n),
                wall_ms: ms(total.wall_ns),
                device_busy_share: total.busy_share(),
            },
            per_step: steps
                .iter()
                .map(|s| StepLine {
                    step: s.step,
                    wall_us: s.breakdown.wall_ns as f64 / 1e3,
                    synced: s.synced,
                    parts: parts(&s.breakdown, "us", 1e-3),
                    device_busy_share: s.breakdown.busy_share(),
                })
                .collect(),
            advice: &r.advice.findings,
        });
    }
    out.line(format!(
        "{} — {} steps, {:.3} ms per step, device busy {:.0}%",
        r.name,
        steps.len(),
        ms(total.wall_ns),
        total.busy_share() * 100.0
    ))?;
    for c in Category::ALL {
        out.line(format!(
            "  {:<11} {:>9.3} ms  {:>5.1}%",
            c.as_str(),
            ms(total.get(c)),
            total.share(c) * 100.0
        ))?;
    }
    for finding in &r.advice.findings {
        out.line(format!("  advice: {}", finding.text(Lang::En, r.device)))?;
    }
    Ok(())
}
