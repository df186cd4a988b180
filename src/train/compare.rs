//! The same run in every number format, one after the other on the CPU, for the precision
//! panel's overlaid loss curves: same data, same seed, same settings but the format.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;

use super::config::{Pipeline, TrainConfig};
use super::runner::Runner;
use super::session::Session;
use crate::backend::cpu::CpuBackend;
use crate::backend::{Backend, DeviceInfo};
use crate::i18n::Said;
use crate::job::{Job, Notify};
use crate::precision::{Precision, RoundingCensus};

/// The formats compared, in the order they run and are drawn.
pub const FORMATS: [Precision; 4] = [
    Precision::Fp32,
    Precision::Fp16,
    Precision::Bf16,
    Precision::Mixed,
];

/// Points per curve (a loss is read back this many times over the run).
const POINTS: u64 = 60;

/// Steps each format trains in the window's comparison.
pub const COMPARE_STEPS: u64 = 600;

/// One format's run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FormatRun {
    /// The format.
    pub precision: Precision,
    /// `[step, mean training loss of the interval]`.
    pub losses: Vec<[f64; 2]>,
    /// What storing values in 16 bits lost over the run.
    pub rounding: RoundingCensus,
    /// The loss scale at the end (mixed precision).
    pub final_scale: Option<f32>,
    /// Updates skipped (mixed precision).
    pub skipped: Option<u64>,
    /// Mean wall-clock time of a step, in ms (this CPU, this run).
    pub step_ms: f64,
    /// Why the run stopped early (a loss that stopped being finite), if it did.
    pub error: Option<Said>,
}

/// What a comparison reports as it goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// `format` has trained `step` of `steps` steps.
    Step {
        /// The format running.
        format: Precision,
        /// Steps done.
        step: u64,
        /// Steps per format.
        steps: u64,
    },
    /// A format's run is over.
    Done(Box<FormatRun>),
    /// The comparison could not run at all.
    Failed(Said),
}

/// A comparison as the window shows it: the formats done, the one in progress, why it could
/// not run; folded from the [`Progress`] its job reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Formats done so far.
    pub runs: Vec<FormatRun>,
    /// The format running, and its step of the steps.
    pub progress: Option<(Precision, u64, u64)>,
    /// Why it could not run.
    pub failed: Option<Said>,
    /// The settings compared.
    pub config: TrainConfig,
    /// Whether its thread is still at work.
    pub running: bool,
}

impl Comparison {
    /// A comparison of `config` that has just started.
    pub fn new(config: TrainConfig) -> Self {
        Self {
            runs: Vec::new(),
            progress: None,
            failed: None,
            config,
            running: true,
        }
    }

    /// Takes in one report.
    pub fn apply(&mut self, progress: Progress) {
        match progress {
            Progress::Step {
                format,
                step,
                steps,
            } => self.progress = Some((format, step, steps)),
            Progress::Done(run) => {
                self.runs.push(*run);
                self.progress = None;
            }
            Progress::Failed(message) => self.failed = Some(message),
        }
    }

    /// Its thread has ended (finished, cancelled or failed).
    pub fn ended(&mut self) {
        self.running = false;
        self.progress = None;
    }
}

/// Starts [`run`] of `session` for [`COMPARE_STEPS`] steps on a job named `compare`.
pub fn spawn(session: Arc<Session>, notify: Notify) -> std::io::Result<Job<Progress>> {
    Job::spawn("compare", notify, move |ctx| {
        run(&session, COMPARE_STEPS, ctx.cancel_flag(), &mut |p| {
            ctx.send(p);
        });
    })
}

/// Trains `session`'s model for `steps` steps in each of [`FORMATS`] on a CPU backend of its
/// own, reporting through `report`; stops between steps when `cancel` is set.
pub fn run(
    session: &Session,
    steps: u64,
    cancel: &AtomicBool,
    report: &mut (dyn FnMut(Progress) + Send),
) {
    let mut backend = match CpuBackend::new(0) {
        Ok(b) => b,
        Err(e) => {
            report(Progress::Failed(e.said()));
            return;
        }
    };
    let mut body = |backend: &mut dyn Backend| {
        for format in FORMATS {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            let run = one_format(backend, session, format, steps, cancel, report);
            report(Progress::Done(Box::new(run)));
        }
    };
    backend.enter(&mut |b| body(b));
}

fn one_format(
    backend: &mut dyn Backend,
    session: &Session,
    precision: Precision,
    steps: u64,
    cancel: &AtomicBool,
    report: &mut (dyn FnMut(Progress) + Send),
) -> FormatRun {
    let mut run = FormatRun {
        precision,
        ..FormatRun::default()
    };
    let session = Session {
        config: TrainConfig {
            precision,
            // Nothing recorded, the training thread makes its own batches: the numbers do not
            // depend on either.
            pipeline: Pipeline {
                record: false,
                ..Pipeline::default()
            },
            ..session.config.clone()
        },
        data: Arc::clone(&session.data),
        epoch: session.epoch,
    };
    let mut runner = match Runner::new(backend, &session) {
        Ok(r) => r,
        Err(e) => {
            run.error = Some(e.said());
            return run;
        }
    };
    let every = (steps / POINTS).max(1);
    let started = Instant::now();
    for step in 1..=steps {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let logged = step % every == 0 || step == steps;
        let result = runner.step(backend, logged).and_then(|_| {
            if logged {
                runner.log(backend).map(Some)
            } else {
                Ok(None)
            }
        });
        match result {
            Ok(Some(log)) => {
                run.losses.push([log.step as f64, f64::from(log.loss)]);
                report(Progress::Step {
                    format: precision,
                    step,
                    steps,
                });
            }
            Ok(None) => {}
            Err(e) => {
                run.error = Some(e.said());
                break;
            }
        }
    }
    run.step_ms = started.elapsed().as_secs_f64() * 1e3 / runner.steps().max(1) as f64;
    run.rounding = *runner.rounding_total();
    run.final_scale = runner.scaler().map(|s| s.scale);
    run.skipped = runner.scaler().map(|s| s.skipped);
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every format runs on the same data and seed; FP32 rounds nothing, the 16-bit formats
    /// count what they round, mixed precision has a scaler.
    #[test]
    fn every_format_runs_and_reports_its_curve() {
        let session = Session::new(TrainConfig::default()).expect("valid");
        let mut runs = Vec::new();
        let cancel = AtomicBool::new(false);
        run(&session, 120, &cancel, &mut |p| {
            if let Progress::Done(r) = p {
                runs.push(*r);
            }
        });
        let formats: Vec<Precision> = runs.iter().map(|r| r.precision).collect();
        assert_eq!(formats, FORMATS);
        for r in &runs {
            assert_eq!(r.error, None);
            assert_eq!(r.losses.last().map(|p| p[0]), Some(120.0));
            assert!(r.losses.len() >= 60 && r.step_ms > 0.0);
            assert_eq!(r.rounding.is_empty(), r.precision == Precision::Fp32);
            assert_eq!(r.final_scale.is_some(), r.precision == Precision::Mixed);
        }
        // The same seed: the first logged losses are close in every format (mixed precision
        // skips its first update, whose scaled gradients overflow, so it is a little behind).
        let first: Vec<f64> = runs.iter().map(|r| r.losses[0][1]).collect();
        assert!(
            first.iter().all(|l| (l - first[0]).abs() < 0.1 * first[0]),
            "{first:?}"
        );
    }
}
