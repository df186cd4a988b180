//! Measuring one point: a warm-up, then timed runs of a fixed number of steps, repeated until
//! their step times agree (the interquartile range under a tenth of the median) or a time cap
//! is reached, when the point is marked noisy.

use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;

use serde::Serialize;

use super::setting::{Parameter, Value};
use super::stats::iqr_of_sorted;
use crate::backend::{Backend, BackendError};
use crate::bench::{flops_per_step, median_of_sorted};
use crate::device::Device;
use crate::train::{Runner, Session};

/// How long each point is measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointPlan {
    /// Seconds of warm-up steps (at least three steps).
    pub warmup_s: f64,
    /// Seconds of one timed run.
    pub run_s: f64,
    /// Timed runs before the spread is judged.
    pub min_runs: usize,
    /// The spread accepted: the interquartile range over the median.
    pub max_iqr: f64,
    /// Seconds after which the point is taken as it is, and marked noisy.
    pub cap_s: f64,
    /// Seconds after which a slow point (a large step on a software adapter) is taken with
    /// what it has — at least one warm-up step and two timed runs — and marked noisy, so that
    /// a class is not kept waiting; infinite for sweeps, which measure as long as they must.
    pub budget_s: f64,
}

impl Default for PointPlan {
    fn default() -> Self {
        Self {
            warmup_s: 0.1,
            run_s: 0.05,
            min_runs: 5,
            max_iqr: 0.10,
            cap_s: 3.0,
            budget_s: f64::INFINITY,
        }
    }
}

/// One measured point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Which device.
    pub device: Device,
    /// The swept setting.
    pub parameter: Parameter,
    /// Its value here.
    pub value: Value,
    /// Samples per second at the median step time.
    pub samples_per_s: f64,
    /// Median step time, ms.
    pub step_time_ms: f64,
    /// Fastest run's step time, ms.
    pub step_time_min_ms: f64,
    /// Slowest run's step time, ms.
    pub step_time_max_ms: f64,
    /// Interquartile range of the step times over their median, in percent.
    pub iqr_pct: f64,
    /// The runs did not agree within the cap: the spread is wider than asked for.
    pub noisy: bool,
    /// Timed runs.
    pub runs: usize,
    /// Steps per timed run.
    pub steps_per_run: u64,
    /// Multiply-add FLOPs per second of the model's products (a lower bound on the work).
    pub gflop_per_s: f64,
    /// GPU kernels dispatched per timed step, where the backend counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatches_per_step: Option<f64>,
    /// Joules a step over the timed runs, measured or estimated as `energy_source` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// Samples trained per joule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples_per_j: Option<f64>,
    /// `rapl`, `nvml` or `estimated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_source: Option<crate::energy::EnergySource>,
}

/// Measures `session` on `backend` until its runs agree or the cap is reached.
pub fn measure_point(
    backend: &mut dyn Backend,
    session: &Session,
    parameter: Parameter,
    value: Value,
    plan: PointPlan,
) -> Result<Point, BackendError> {
    let never = AtomicBool::new(false);
    match measure_point_until(backend, session, parameter, value, plan, &never)? {
        Some(point) => Ok(point),
        // Nothing sets `never`.
        None => Err(BackendError::Setup("the measurement was cancelled".into())),
    }
}

/// As [`measure_point`], stopping between two timed runs once `cancel` is set (`None`).
pub fn measure_point_until(
    backend: &mut dyn Backend,
    session: &Session,
    parameter: Parameter,
    value: Value,
    plan: PointPlan,
    cancel: &AtomicBool,
) -> Result<Option<Point>, BackendError> {
    let mut runner = Runner::new(backend, session)?;
    let start = Instant::now();
    let mut warmup_steps = 0u64;
    while warmup_steps < 3 || start.elapsed().as_secs_f64() < plan.warmup_s {
        // A step that takes a large part of the budget is warm after one.
        if warmup_steps >= 1 && start.elapsed().as_secs_f64() > plan.budget_s / 4.0 {
            break;
        }
        runner.step(backend, false)?;
        warmup_steps += 1;
    }
    runner.log(backend)?;
    let per_step_s = start.elapsed().as_secs_f64() / warmup_steps as f64;
    let steps_per_run = ((plan.run_s / per_step_s.max(1e-9)) as u64).clamp(1, 1_000_000);
    let measuring = Instant::now();
    let launched = backend.kernels_launched();
    let mut step_ms: Vec<f64> = Vec::new();
    let mut joules: Option<(f64, crate::energy::EnergySource)> = None;
    let (median, iqr, noisy) = loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let run = Instant::now();
        for _ in 0..steps_per_run {
            runner.step(backend, false)?;
        }
        // Reading the loss waits for the device: the run ends when its work has.
        let log = runner.log(backend)?;
        if let Some(e) = log.energy {
            let so_far = joules.map_or(0.0, |(j, _)| j);
            joules = Some((so_far + e.per_step_j * steps_per_run as f64, e.source));
        }
        step_ms.push(run.elapsed().as_secs_f64() * 1e3 / steps_per_run as f64);
        let mut sorted = step_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let (median, iqr) = (median_of_sorted(&sorted), iqr_of_sorted(&sorted));
        if step_ms.len() >= 2 && start.elapsed().as_secs_f64() > plan.budget_s {
            // Too few runs for quartiles to mean much: the whole range is the spread.
            let range = sorted[sorted.len() - 1] - sorted[0];
            break (median, iqr.max(range), true);
        }
        if step_ms.len() < plan.min_runs {
            continue;
        }
        if iqr <= plan.max_iqr * median {
            break (median, iqr, false);
        }
        if measuring.elapsed().as_secs_f64() > plan.cap_s {
            break (median, iqr, true);
        }
    };
    let batch = session.config.effective_batch();
    let spec = session.config.model_spec(&session.data);
    let (min, max) = step_ms
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
    let timed_steps = (step_ms.len() as u64 * steps_per_run) as f64;
    let dispatches_per_step = launched
        .zip(backend.kernels_launched())
        .map(|(before, after)| (after - before) as f64 / timed_steps);
    let energy_j = joules.map(|(j, _)| j / timed_steps.max(1.0));
    Ok(Some(Point {
        dispatches_per_step,
        energy_j,
        samples_per_j: energy_j.filter(|&j| j > 0.0).map(|j| batch as f64 / j),
        energy_source: joules.map(|(_, s)| s),
        device: backend.device(),
        parameter,
        value,
        samples_per_s: batch as f64 / (median / 1e3),
        step_time_ms: median,
        step_time_min_ms: min,
        step_time_max_ms: max,
        iqr_pct: 100.0 * iqr / median,
        noisy,
        runs: step_ms.len(),
        steps_per_run,
        gflop_per_s: flops_per_step(&spec, batch) / (median / 1e3) / 1e9,
    }))
}
