//! `batchscope sweep`: one setting varied over a list of values on each device, one device at a
//! time, each point measured until its runs agree; then a table (or JSON lines), the crossover,
//! and optionally a CSV file in the style of hyperfine's export.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::Failure;
use super::output::{Out, OutputError};
use super::run::{open_backend_with, parse_run};
use crate::bench::sweep::{Crossover, Parameter, Point, PointPlan, Report, Results, Sweep};
use crate::bench::sweep_sim::SimulatedSweep;
use crate::sim::profile::Profile;

#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The setting and its values: batch=1,4,16,64,256,1024; width=…; depth=…; threads=… (CPU
    /// only); workers=…; precision=fp32,fp16,bf16,mixed; context=32,64,128,256,512 (a text
    /// and a language model: the text cut into windows of each length).
    #[arg(long)]
    vary: String,
    /// Seconds a point may take before it is taken as it is and marked noisy.
    #[arg(long, default_value_t = 3.0)]
    cap_s: f64,
    /// Write the points as CSV (one row per device and value, full precision).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also predict each value on this hardware profile (an id from `batchscope profiles` or a
    /// profile file), every figure labelled simulated, and find where it overtakes this
    /// machine's measured CPU.
    #[arg(long)]
    profile: Option<String>,
}

/// One simulated point of `sweep --profile`.
#[derive(Serialize)]
struct SimulatedPoint<'a> {
    simulated: bool,
    profile: &'a str,
    parameter: Parameter,
    value: String,
    samples_per_s: f64,
    step_time_ms: f64,
    bound: crate::sim::cost::Bound,
}

/// The summary line of `sweep --profile --json`: the measured CPU against the simulated profile.
#[derive(Serialize)]
struct SimulatedSummary<'a> {
    simulated: bool,
    profile: &'a str,
    parameter: Parameter,
    crossover_with_measured_cpu: Option<&'a Crossover>,
}

/// The summary line of `sweep --json`.
#[derive(Serialize)]
struct SweepSummary<'a> {
    parameter: Parameter,
    crossover: Option<&'a Crossover>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

/// The sweep asked for and the profile to simulate it on, refused before anything is measured
/// where a setting is wrong.
fn checked(args: &SweepArgs) -> Result<(Sweep, Option<Profile>), Failure> {
    let sweep = Sweep::parse(&args.vary).map_err(|e| Failure::BadInput(format!("--vary {e}")))?;
    if !(0.1..=600.0).contains(&args.cap_s) {
        return Err(Failure::BadInput(format!(
            "--cap-s {}: choose between 0.1 and 600 seconds",
            args.cap_s
        )));
    }
    if let Some(path) = &args.out {
        // Checked before the sweep: a typo must not cost its results.
        crate::files::check_destination(path).map_err(|e| Failure::BadInput(e.to_string()))?;
    }
    let profile = match &args.profile {
        Some(id) => Some(
            crate::sim::profile::find(id)
                .map_err(Failure::BadInput)?
                .into_iter()
                .next()
                .ok_or_else(|| Failure::BadInput(format!("{id}: the file holds no profile")))?,
        ),
        None => None,
    };
    Ok((sweep, profile))
}

/// What a sweep reported besides its points: said on standard error as it comes, and kept for
/// the end.
#[derive(Default)]
struct Heard {
    /// What the sweep changed in the settings.
    note: Option<String>,
    /// A device that takes part could not be opened.
    device_failed: bool,
    /// Why each value was not measured: said at the end when nothing was.
    skipped: Vec<String>,
}

impl Heard {
    fn hear(&mut self, parameter: Parameter, report: &Report) {
        match report {
            Report::Point(_) | Report::SoftwareGpu => {}
            Report::Skipped { device, value, why } => {
                let text = format!("{device}: {}={value}: {why}", parameter.as_str());
                say(&format!("note: {text} (skipped)"));
                self.skipped.push(text);
            }
            Report::DeviceLeftOut { device, why } => {
                // A device that cannot be opened is a failure; a setting it has none of is not.
                let failed = parameter.applies_to(*device);
                self.device_failed |= failed;
                say(&format!(
                    "{}: {device}: {why}",
                    if failed { "error" } else { "note" }
                ));
            }
            Report::SamplesRaised { from, to } => {
                let text = format!(
                    "the generator's samples were raised from {from} to {to} so that the \
                     training part holds the largest batch"
                );
                say(&format!("note: {text}"));
                self.note = Some(text);
            }
        }
    }
}

pub(super) fn run(out: &mut Out, args: &SweepArgs) -> Result<(), Failure> {
    let (sweep, profile) = checked(args)?;
    let (session, devices) = parse_run(&args.run)?;
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
            spec.describe()
        ))?;
    }
    let open = |device, threads: Option<usize>| {
        open_backend_with(device, &args.run, threads.unwrap_or(args.run.threads))
    };
    let cancel = AtomicBool::new(false);
    let mut results = Results::new(sweep.clone(), &devices);
    let mut output: Option<OutputError> = None;
    let mut heard = Heard::default();
    // The same runner as the Experiments tab: the CPU's points, then the GPU's, never both.
    crate::bench::sweep::run(
        &sweep,
        &session,
        &devices,
        plan,
        &open,
        &cancel,
        &mut |report| {
            let printed = match &report {
                Report::Point(point) if args.run.json => out.json(point),
                Report::Point(point) => out.line(point_line(point)),
                other => {
                    heard.hear(sweep.parameter, other);
                    Ok(())
                }
            };
            if let Err(e) = printed {
                // Standard output went away: stop measuring.
                output.get_or_insert(e);
                cancel.store(true, Ordering::Relaxed);
            }
            results.apply(report);
        },
    );
    if let Some(e) = output {
        return Err(e.into());
    }
    let points = &results.points;
    let Heard {
        note,
        device_failed,
        skipped,
    } = heard;
    if points.is_empty() && !device_failed {
        // Nothing measured is not a result: say why, and write no empty file.
        return Err(Failure::BadInput(format!(
            "the sweep measured nothing: every value was refused ({}); choose values the setup \
             accepts",
            skipped.join("; ")
        )));
    }
    let crossover = results.crossover();
    let simulated_sweep = profile
        .as_ref()
        .map(|p| SimulatedSweep::new(&sweep, &session, p));
    if let Some(path) = &args.out {
        let mut text = crate::bench::sweep::to_csv(sweep.parameter, points);
        if let Some(s) = &simulated_sweep {
            text.push_str(&s.csv_rows());
        }
        crate::files::write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::Output(e.to_string()))?;
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
    if let Some(s) = &simulated_sweep {
        simulated(out, args.run.json, sweep.parameter, s, &results)?;
    }
    if device_failed {
        Err(Failure::DeviceFailed)
    } else {
        Ok(())
    }
}

/// `sweep --profile`: each value predicted on the profile (simulated), then where the
/// simulated device's samples/s reach this machine's measured CPU's.
fn simulated(
    out: &mut Out,
    json: bool,
    parameter: Parameter,
    simulated: &SimulatedSweep,
    measured: &Results,
) -> Result<(), Failure> {
    for p in &simulated.points {
        if json {
            out.json(&SimulatedPoint {
                simulated: true,
                profile: &simulated.profile,
                parameter,
                value: p.value.to_string(),
                samples_per_s: p.samples_per_s,
                step_time_ms: p.step_time_ms,
                bound: p.bound,
            })?;
        } else {
            out.line(format!(
                "{} {}={}: {:.0} samples/s, step {:.4} ms, {:?}-bound (SIMULATED, not measured)",
                simulated.profile,
                parameter.as_str(),
                p.value,
                p.samples_per_s,
                p.step_time_ms,
                p.bound
            ))?;
        }
    }
    let crossover = simulated.crossover_with_measured_cpu(measured);
    if json {
        out.json(&SimulatedSummary {
            simulated: true,
            profile: &simulated.profile,
            parameter,
            crossover_with_measured_cpu: crossover.as_ref(),
        })?;
    } else if let Some(c) = &crossover {
        out.line(format!(
            "crossover, this CPU measured against {} SIMULATED: {}",
            simulated.name,
            c.to_string().replace("the GPU", &simulated.name)
        ))?;
    }
    Ok(())
}

/// A line of standard error (a closed one loses it, not the sweep).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// One point as a line of text.
fn point_line(point: &Point) -> String {
    format!(
        "{} {}={}: {:.0} samples/s, step {:.4} ms median [{:.4} .. {:.4}], IQR {:.1}%{} over {} \
         runs of {} steps, {:.2} GFLOP/s{}",
        point.device,
        point.parameter.as_str(),
        point.value,
        point.samples_per_s,
        point.step_time_ms,
        point.step_time_min_ms,
        point.step_time_max_ms,
        point.iqr_pct,
        if point.noisy { " (noisy)" } else { "" },
        point.runs,
        point.steps_per_run,
        point.gflop_per_s,
        match (point.energy_j, point.samples_per_j, point.energy_source) {
            (Some(j), Some(per_j), Some(source)) => format!(
                ", {} a step, {per_j:.0} samples/J ({})",
                crate::units::format_joules(j),
                if source == crate::energy::EnergySource::Estimated {
                    "ESTIMATED"
                } else {
                    source.as_str()
                }
            ),
            _ => String::new(),
        }
    )
}
