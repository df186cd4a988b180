//! `batchscope sweep`: one setting varied over a list of values on each device, one device at a
//! time, each point measured until its runs agree; then a table (or JSON lines), the crossover,
//! and optionally a CSV file in the style of hyperfine's export.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::{Failure, RunError, on_each_device};
use super::output::Out;
use super::run::{open_backend_with, parse_run};
use crate::bench::sweep::{Crossover, Parameter, Point, PointPlan, Results, Sweep, Value};

#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The setting and its values: batch=1,4,16,64,256,1024; width=…; depth=…; threads=… (CPU
    /// only); workers=…; precision=fp32,fp16,bf16,mixed.
    #[arg(long)]
    vary: String,
    /// Seconds a point may take before it is taken as it is and marked noisy.
    #[arg(long, default_value_t = 3.0)]
    cap_s: f64,
    /// Write the points as CSV (one row per device and value, full precision).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The summary line of `sweep --json`.
#[derive(Serialize)]
struct SweepSummary<'a> {
    parameter: Parameter,
    crossover: Option<&'a Crossover>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

pub(super) fn run(out: &mut Out, args: &SweepArgs) -> Result<(), Failure> {
    let sweep = Sweep::parse(&args.vary).map_err(|e| Failure::BadInput(format!("--vary {e}")))?;
    if !(0.1..=600.0).contains(&args.cap_s) {
        return Err(Failure::BadInput(format!(
            "--cap-s {}: choose between 0.1 and 600 seconds",
            args.cap_s
        )));
    }
    if let Some(path) = &args.out {
        crate::trace::chrome::check_destination(path).map_err(Failure::BadInput)?;
    }
    let (session, devices) = parse_run(&args.run)?;
    let (sessions, raised) = sweep.sessions(&session);
    let note = raised.map(|(from, to)| {
        format!(
            "the generator's samples were raised from {from} to {to} so that the training part \
             holds the largest batch"
        )
    });
    if let Some(note) = &note {
        let _ = writeln!(std::io::stderr(), "note: {note}");
    }
    let plan = PointPlan {
        cap_s: args.cap_s,
        ..PointPlan::default()
    };
    if !args.run.json {
        let spec = session.config.model_spec(&session.data);
        out.line(format!(
            "sweep of {} over {} values on {} ({}): one device at a time, never both at once",
            sweep.parameter.as_str(),
            sweep.values.len(),
            session.data.name,
            spec.layers
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ))?;
    }
    let mut points: Vec<Point> = Vec::new();
    let mut software_gpu = false;
    // One device at a time: the CPU's points, then the GPU's, never both at once.
    let result = on_each_device(out, &devices, args.run.json, |out, device| {
        if !sweep.parameter.applies_to(device) {
            let _ = writeln!(
                std::io::stderr(),
                "note: {device}: {} applies to the CPU only",
                sweep.parameter.as_str()
            );
            return Ok(());
        }
        for (&value, session) in sweep.values.iter().zip(&sessions) {
            let session = match session {
                Ok(session) => session,
                Err(e) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "note: {device}: {}={value} skipped: {e}",
                        sweep.parameter.as_str()
                    );
                    continue;
                }
            };
            let threads = match (sweep.parameter, value) {
                (Parameter::Threads, Value::Count(n)) => n,
                _ => args.run.threads,
            };
            let mut backend = open_backend_with(device, &args.run, threads)?;
            software_gpu |= backend.adapter_summary().is_some_and(|a| a.software);
            let mut measured = Err(RunError::from("the point did not run"));
            backend.enter(&mut |b| {
                measured =
                    crate::bench::sweep::measure_point(b, session, sweep.parameter, value, plan)
                        .map_err(RunError::from);
            });
            let point = measured?;
            if args.run.json {
                out.json(&point)?;
            } else {
                out.line(format!(
                    "{device} {}={value}: {:.0} samples/s, step {:.4} ms median [{:.4} .. {:.4}], \
                     IQR {:.1}%{} over {} runs of {} steps, {:.2} GFLOP/s",
                    sweep.parameter.as_str(),
                    point.samples_per_s,
                    point.step_time_ms,
                    point.step_time_min_ms,
                    point.step_time_max_ms,
                    point.iqr_pct,
                    if point.noisy { " (noisy)" } else { "" },
                    point.runs,
                    point.steps_per_run,
                    point.gflop_per_s
                ))?;
            }
            points.push(point);
        }
        Ok(())
    });
    let mut results = Results::new(sweep.clone(), &devices);
    results.software_gpu = software_gpu;
    results.points = points;
    let points = &results.points;
    let crossover = results.crossover();
    if let Some(path) = &args.out {
        write_csv(path, sweep.parameter, points)
            .map_err(|e| Failure::BadInput(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.run.json {
        out.json(&SweepSummary {
            parameter: sweep.parameter,
            crossover: crossover.as_ref(),
            note: note.as_deref(),
        })?;
    } else if let Some(crossover) = &crossover {
        out.line(format!("crossover: {crossover}"))?;
    }
    result
}

/// The points as CSV in the style of hyperfine's export: one row per device and value, the
/// swept setting as `parameter_<name>`, units in the column names, full precision.
fn write_csv(
    path: &std::path::Path,
    parameter: Parameter,
    points: &[Point],
) -> std::io::Result<()> {
    let mut text = format!(
        "device,parameter_{},samples_per_s,step_time_median_ms,step_time_min_ms,\
         step_time_max_ms,step_time_iqr_pct,noisy,runs,steps_per_run,gflop_per_s\n",
        parameter.as_str()
    );
    for p in points {
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{},{},{},{}",
            p.device,
            p.value,
            p.samples_per_s,
            p.step_time_ms,
            p.step_time_min_ms,
            p.step_time_max_ms,
            p.iqr_pct,
            p.noisy,
            p.runs,
            p.steps_per_run,
            p.gflop_per_s
        );
    }
    std::fs::write(path, text)
}
