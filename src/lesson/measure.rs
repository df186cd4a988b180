//! One probe's measurement on one device, and the figures it gives: a speed probe's step
//! times, a breakdown's shares of a step, the memory by role, a sweep's gains, the simulator's
//! prediction. Every timed figure is measured until its runs agree (the sweeps' rule) and
//! carries its spread, so a Try step can tell a change from noise.

use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;

use super::figures::SHARES;
use super::figures::{Figures, Quantity};
use super::format::{Probe, ProbeKind};
use crate::backend::{Backend, BackendError};
use crate::bench::median_of_sorted;
use crate::bench::sweep::{self, Parameter, PointPlan, Value, iqr_of_sorted};
use crate::device::Device;
use crate::i18n::{ErrKey, Said};
use crate::memory::Role;
use crate::trace::{Breakdown, Category};
use crate::train::{Runner, Session};

/// How long each probe measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// A speed probe's timing, and when a breakdown's recorded steps agree: the sweeps' rule
    /// (runs until their interquartile range is under `max_iqr` of the median, or `cap_s`).
    pub speed: PointPlan,
    /// Each sweep point's timing.
    pub point: PointPlan,
    /// Steps before a breakdown is recorded, and recorded at a time.
    pub recorded_steps: (u64, u64),
    /// Steps before the memory is read (the peaks cover them).
    pub memory_steps: u64,
}

impl Plan {
    /// Short measurements, for `lessons --verify` and tests: a few seconds a lesson.
    pub fn quick() -> Self {
        let quick = PointPlan {
            warmup_s: 0.05,
            run_s: 0.03,
            min_runs: 3,
            max_iqr: 0.2,
            cap_s: 0.4,
            budget_s: 1.0,
        };
        Self {
            speed: quick,
            point: quick,
            recorded_steps: (3, 8),
            memory_steps: 2,
        }
    }

    /// The window's measurements: steady by the sweeps' rule, a few seconds a probe, and a
    /// slow device's point cut short after [`POINT_BUDGET_S`] (see `lessons --verify`'s probe
    /// times: a class waits for each).
    pub fn standard() -> Self {
        let steady = PointPlan {
            budget_s: POINT_BUDGET_S,
            ..PointPlan::default()
        };
        Self {
            speed: steady,
            point: steady,
            recorded_steps: (5, 20),
            // The first step allocates every tensor and the optimizer's state; the second
            // shows that nothing more is kept.
            memory_steps: 2,
        }
    }
}

/// How a lesson's probes measure, and the flag that stops them between two timed runs.
#[derive(Clone, Copy, Debug)]
pub struct Measuring<'a> {
    /// How long each probe measures.
    pub plan: Plan,
    /// Set when the user cancels (or leaves the lesson).
    pub cancel: &'a AtomicBool,
}

/// Seconds one device's point of a lesson's probe may take before it is taken with what it has
/// (two timed runs at least) and marked noisy: a large step on a software adapter takes seconds.
pub const POINT_BUDGET_S: f64 = 3.0;

/// The name of `device` in figure names.
pub fn device_name(device: Device) -> &'static str {
    match device {
        Device::Cpu => "cpu",
        Device::Gpu => "gpu",
    }
}

/// One device's measurement of a probe that runs on a device, its figures under `prefix`.
pub fn measure(
    probe: &Probe,
    backend: &mut dyn Backend,
    session: &Session,
    run: Measuring<'_>,
    prefix: &str,
    figures: &mut Figures,
) -> Result<(), Said> {
    let plan = run.plan;
    let measured = match probe.kind {
        ProbeKind::Speed => speed(backend, session, run, prefix, figures),
        ProbeKind::Breakdown => breakdown(backend, session, run, prefix, figures),
        ProbeKind::Memory => memory(backend, session, plan, prefix, figures),
        ProbeKind::Converge => converge(probe, backend, session, run, prefix, figures),
        ProbeKind::Precision => precision(backend, session, prefix, figures),
        ProbeKind::Sweep | ProbeKind::Simulate | ProbeKind::Serve => Ok(Ok(())),
    };
    measured.map_err(|e| e.said())?
}

/// Timed steps until the runs agree: samples per second and step time at the median, with
/// their spread, and the kernels dispatched per step.
fn speed(
    backend: &mut dyn Backend,
    session: &Session,
    Measuring { plan, cancel }: Measuring<'_>,
    prefix: &str,
    figures: &mut Figures,
) -> Result<Result<(), Said>, BackendError> {
    let batch = Value::Count(session.config.batch);
    let Some(p) = sweep::measure_point_until(
        backend,
        session,
        Parameter::Batch,
        batch,
        plan.speed,
        cancel,
    )?
    else {
        return Ok(Err(Said::new(ErrKey::ProbeCancelled, &[])));
    };
    let spread = p.iqr_pct / 100.0;
    figures.measured_with_iqr(
        format!("{prefix}.step_ms"),
        Quantity::Ms(p.step_time_ms),
        p.step_time_ms * spread,
    );
    figures.measured_with_iqr(
        format!("{prefix}.samples_per_s"),
        Quantity::SamplesPerS(p.samples_per_s),
        p.samples_per_s * spread,
    );
    if session.data.is_text() {
        // A window is a sample; each of its characters is a token the model predicts.
        let tokens = p.samples_per_s * session.data.targets_per_row() as f64;
        figures.measured_with_iqr(
            format!("{prefix}.tokens_per_s"),
            Quantity::Number(tokens.round()),
            tokens * spread,
        );
    }
    if let Some(d) = p.dispatches_per_step {
        figures.counted(
            format!("{prefix}.dispatches_per_step"),
            Quantity::Number(d.round()),
        );
    }
    // A step's energy over the timed runs: measured by a counter, or estimated (and said so
    // wherever a headline shows it).
    if let (Some(j), Some(per_j), Some(source)) = (p.energy_j, p.samples_per_j, p.energy_source) {
        let mut record = |name: String, q: Quantity, iqr: f64| {
            if source == crate::energy::EnergySource::Estimated {
                figures.estimated_with_iqr(name, q, iqr);
            } else {
                figures.measured_with_iqr(name, q, iqr);
            }
        };
        record(
            format!("{prefix}.energy_j"),
            Quantity::Joules(j),
            j * spread,
        );
        record(
            format!("{prefix}.samples_per_j"),
            Quantity::Number(per_j.round()),
            per_j * spread,
        );
    }
    Ok(Ok(()))
}

/// Recorded steps until their step times agree: each category's share of the whole recorded
/// time (so the shares add up to it), with the spread of the per-step shares.
fn breakdown(
    backend: &mut dyn Backend,
    session: &Session,
    Measuring { plan, cancel }: Measuring<'_>,
    prefix: &str,
    figures: &mut Figures,
) -> Result<Result<(), Said>, BackendError> {
    let mut session = session.clone();
    session.config.pipeline.record = true;
    session.config.pipeline.kernel_timing_every = 1;
    let mut runner = Runner::new(backend, &session)?;
    let (warmup, recorded) = plan.recorded_steps;
    let start = Instant::now();
    // A step that takes a large part of the budget (a software adapter's) is warm after one.
    for i in 0..warmup {
        if i >= 1 && start.elapsed().as_secs_f64() > plan.speed.budget_s / 4.0 {
            break;
        }
        runner.step(backend, false)?;
    }
    runner.sync(backend)?;
    drop(runner.take_trace(backend));
    let mut timed: Vec<Breakdown> = Vec::new();
    let mut chunk_steps = 0;
    loop {
        chunk_steps += 1;
        let over_budget = start.elapsed().as_secs_f64() > plan.speed.budget_s;
        let chunk_done = chunk_steps == recorded || over_budget;
        runner.step(backend, chunk_done)?;
        if !chunk_done {
            continue;
        }
        chunk_steps = 0;
        runner.sync(backend)?;
        let chunk = runner.take_trace(backend);
        timed.extend(
            chunk
                .steps
                .iter()
                .filter(|s| s.kernels_timed)
                .map(|s| s.breakdown),
        );
        if cancel.load(Ordering::Relaxed) {
            return Ok(Err(Said::new(ErrKey::ProbeCancelled, &[])));
        }
        let walls = sorted(timed.iter().map(|b| b.wall_ns as f64));
        let steady = walls.len() >= plan.speed.min_runs
            && iqr_of_sorted(&walls) <= plan.speed.max_iqr * median_of_sorted(&walls);
        let enough = walls.len() >= 3;
        let elapsed = start.elapsed().as_secs_f64();
        if steady || (enough && (elapsed > plan.speed.cap_s || elapsed > plan.speed.budget_s)) {
            break;
        }
    }
    if timed.is_empty() {
        return Ok(Err(Said::new(ErrKey::NoKernelsTimed, &[])));
    }
    let total = Breakdown::total(timed.iter());
    let spread =
        |share: &dyn Fn(&Breakdown) -> f64| iqr_of_sorted(&sorted(timed.iter().map(share)));
    for (category, part) in Category::ALL.into_iter().zip(SHARES) {
        figures.measured_with_iqr(
            format!("{prefix}.{part}"),
            Quantity::Share(total.share(category)),
            spread(&|b| b.share(category)),
        );
    }
    figures.measured_with_iqr(
        format!("{prefix}.busy_share"),
        Quantity::Share(total.busy_share()),
        spread(&Breakdown::busy_share),
    );
    let walls_ms = sorted(timed.iter().map(|b| b.wall_ns as f64 / 1e6));
    figures.measured_with_iqr(
        format!("{prefix}.step_ms"),
        Quantity::Ms(total.wall_ns as f64 / 1e6 / timed.len() as f64),
        iqr_of_sorted(&walls_ms),
    );
    op_kinds(backend, &session, prefix, figures);
    Ok(Ok(()))
}

/// The matrix products' and convolutions' share of the step's FLOPs (counted from the layers'
/// shapes) beside their share of the last timed step's kernel time (measured), and attention's
/// (zero for a model without it): the journey tab's table by kind of op, for a lesson's
/// headline.
fn op_kinds(backend: &dyn Backend, session: &Session, prefix: &str, figures: &mut Figures) {
    use crate::sim::groups::{GroupShare, OpGroup, shares};
    let Some(kernels) = backend.kernel_times() else {
        return;
    };
    let c = &session.config;
    let spec = c.model_spec(&session.data);
    let ops =
        crate::sim::cost::step_ops_with(&spec, c.batch, c.recipe(), backend.device(), c.levers());
    let rows = shares(&ops, Some(kernels));
    let of = |groups: &[OpGroup]| {
        let rows = || rows.iter().filter(|r| groups.contains(&r.group));
        let flops: f64 = rows().map(|r| r.flops_share).sum();
        let time: f64 = rows().filter_map(|r: &GroupShare| r.time_share).sum();
        (flops, time)
    };
    for (name, groups) in [
        (
            "products",
            &[OpGroup::MatrixProducts, OpGroup::Convolutions][..],
        ),
        ("attention", &[OpGroup::Attention][..]),
    ] {
        let (flops, time) = of(groups);
        figures.counted(
            format!("{prefix}.{name}_flops_share"),
            Quantity::Share(flops),
        );
        figures.measured(format!("{prefix}.{name}_time_share"), Quantity::Share(time));
    }
}

/// Training for a few epochs: the test loss and accuracy reached, the updates and the training
/// time it took (evaluations after each epoch are not counted), and when the test accuracy
/// first reached the probe's target. Stops early past [`CONVERGE_BUDGET_S`].
fn converge(
    probe: &Probe,
    backend: &mut dyn Backend,
    session: &Session,
    Measuring { cancel, .. }: Measuring<'_>,
    prefix: &str,
    figures: &mut Figures,
) -> Result<Result<(), Said>, BackendError> {
    let epochs = u64::from(probe.epochs.unwrap_or(5));
    let mut runner = Runner::new(backend, session)?;
    let rows = session.data.train_rows().max(1);
    // As the loader counts an epoch: whole batches only.
    let steps_per_epoch = (rows / session.config.effective_batch()).max(1) as u64;
    let (mut trained_s, mut reached_s) = (0.0, None);
    let mut last = None;
    let mut done = 0;
    for epoch in 1..=epochs {
        let start = Instant::now();
        for _ in 0..steps_per_epoch {
            runner.step(backend, false)?;
        }
        runner.log(backend)?;
        trained_s += start.elapsed().as_secs_f64();
        if cancel.load(Ordering::Relaxed) {
            return Ok(Err(Said::new(ErrKey::ProbeCancelled, &[])));
        }
        let score = runner.evaluate(backend)?.test;
        done = epoch;
        if reached_s.is_none()
            && let (Some(target), Some(accuracy)) = (probe.target, score.accuracy)
            && f64::from(accuracy) >= target
        {
            reached_s = Some(trained_s);
        }
        last = Some(score);
        if trained_s > CONVERGE_BUDGET_S {
            break;
        }
    }
    let Some(score) = last else {
        return Ok(Err(Said::new(ErrKey::ProbeDidNotRun, &[])));
    };
    let updates = done * steps_per_epoch;
    // The model a seeded run reaches is the same every time: counted, not timed.
    figures.counted(
        format!("{prefix}.loss"),
        Quantity::Number(f64::from(score.loss)),
    );
    if let Some(a) = score.accuracy {
        figures.counted(format!("{prefix}.accuracy"), Quantity::Share(f64::from(a)));
    }
    figures.counted(format!("{prefix}.epochs"), Quantity::Number(done as f64));
    figures.counted(
        format!("{prefix}.updates"),
        Quantity::Number(updates as f64),
    );
    figures.measured(format!("{prefix}.seconds"), Quantity::Ms(trained_s * 1e3));
    let batch = session.config.effective_batch() as f64;
    figures.measured(
        format!("{prefix}.samples_per_s"),
        Quantity::SamplesPerS(updates as f64 * batch / trained_s.max(1e-9)),
    );
    if let Some(s) = reached_s {
        figures.measured(format!("{prefix}.seconds_to_target"), Quantity::Ms(s * 1e3));
    }
    Ok(Ok(()))
}

/// Seconds of training after which a convergence probe stops at the end of its epoch.
pub const CONVERGE_BUDGET_S: f64 = 8.0;

/// Steps a precision probe trains before it reads what 16-bit storage lost.
pub const PRECISION_STEPS: u64 = 30;

/// A few steps in the preset's precision: the share of the non-zero gradients (the parameters'
/// and each layer's backward temporaries) that rounding into 16 bits turned to zero, counted
/// where the rounding happened; the loss scale and skipped steps where there is a scaler.
fn precision(
    backend: &mut dyn Backend,
    session: &Session,
    prefix: &str,
    figures: &mut Figures,
) -> Result<Result<(), Said>, BackendError> {
    let mut runner = Runner::new(backend, session)?;
    for _ in 0..PRECISION_STEPS {
        match runner.step(backend, false) {
            Ok(_) => {}
            // What was lost before the loss diverged is still what was lost.
            Err(BackendError::Diverged { .. }) => break,
            Err(e) => return Err(e),
        }
    }
    match runner.log(backend) {
        Ok(_) | Err(BackendError::Diverged { .. }) => {}
        Err(e) => return Err(e),
    }
    let census = runner.rounding_total().gradients();
    if census.nonzero > 0 {
        figures.counted(
            format!("{prefix}.grad_underflow_share"),
            Quantity::Share(census.underflow_share()),
        );
    }
    if let Some(scaler) = runner.scaler() {
        figures.counted(
            format!("{prefix}.loss_scale"),
            Quantity::Number(f64::from(scaler.scale)),
        );
        figures.counted(
            format!("{prefix}.skipped_steps"),
            Quantity::Number(scaler.skipped as f64),
        );
    }
    Ok(Ok(()))
}

/// How a serve probe measures: as the Experiments tab's serving section does, so the panel can
/// show the lesson's own measurement.
pub fn serve_plan(session: &Session) -> crate::bench::infer::InferPlan {
    crate::bench::infer::InferPlan {
        train_steps: 50,
        requests: 100,
        batch: session.config.batch,
        warmup: 10,
        tokens: if session.data.is_text() { 40 } else { 0 },
        kv_cache: None,
    }
}

/// A serve probe's figures from one device's report: a one-row request's median and
/// 99th-percentile latency, and the rows a second answered in batches.
pub fn serve_figures(
    report: &crate::bench::infer::InferReport,
    prefix: &str,
    figures: &mut Figures,
) {
    figures.measured(
        format!("{prefix}.request_ms"),
        Quantity::Ms(report.single.p50_ms),
    );
    figures.measured(
        format!("{prefix}.request_p99_ms"),
        Quantity::Ms(report.single.p99_ms),
    );
    figures.measured(
        format!("{prefix}.batched_rows_per_s"),
        Quantity::SamplesPerS(report.batched.rows_per_s),
    );
}

/// Bytes by role after a few steps (exact counts: no spread).
fn memory(
    backend: &mut dyn Backend,
    session: &Session,
    plan: Plan,
    prefix: &str,
    figures: &mut Figures,
) -> Result<Result<(), Said>, BackendError> {
    let mut runner = Runner::new(backend, session)?;
    let mut trained = Ok(());
    for _ in 0..plan.memory_steps {
        trained = runner.step(backend, false).map(drop);
        if trained.is_err() {
            break;
        }
    }
    if trained.is_ok() {
        trained = runner.sync(backend);
    }
    // A loss that diverged (pure FP16 with Adam does) took the same bytes as one that did not:
    // the memory is read all the same.
    match trained {
        Ok(()) | Err(BackendError::Diverged { .. }) => {}
        Err(e) => return Err(e),
    }
    let memory = backend.memory();
    drop(runner);
    let mut bytes = |part: String, n: u64| {
        figures.counted(format!("{prefix}.{part}"), Quantity::Bytes(n as f64));
    };
    for role in Role::ALL {
        bytes(format!("{}_bytes", role.as_str()), memory.role(role));
    }
    bytes("total_bytes".to_owned(), memory.requested());
    bytes("peak_bytes".to_owned(), memory.peak_allocated_bytes);
    Ok(Ok(()))
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// A speed probe's comparison: which device trained more samples per second, and how many
/// times more (at least 1, so a headline reads the same whichever won).
pub fn faster(name: &str, figures: &mut Figures) {
    let rate = |d: &str| figures.get(&format!("{name}.{d}.samples_per_s")).cloned();
    let (Some(cpu), Some(gpu)) = (rate("cpu"), rate("gpu")) else {
        return;
    };
    let (Some(c), Some(g)) = (cpu.quantity.number(), gpu.quantity.number()) else {
        return;
    };
    let (fast, slow, ratio) = if g > c {
        ("GPU", "CPU", g / c)
    } else {
        ("CPU", "GPU", c / g)
    };
    let spread = cpu.relative_iqr().zip(gpu.relative_iqr());
    figures.measured(format!("{name}.faster"), Quantity::Text(fast.to_owned()));
    figures.measured(format!("{name}.slower"), Quantity::Text(slow.to_owned()));
    match spread {
        Some((rc, rg)) => figures.measured_with_iqr(
            format!("{name}.speedup"),
            Quantity::Ratio(ratio),
            ratio * (rc + rg),
        ),
        None => figures.measured(format!("{name}.speedup"), Quantity::Ratio(ratio)),
    }
}

/// A sweep's figures: each device's gain from the first value to the last, the values, and the
/// crossover where there is one.
pub fn sweep_figures(results: &sweep::Results, name: &str, figures: &mut Figures) {
    let values = &results.sweep.values;
    let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
        return;
    };
    let value = |v: sweep::Value| match v.number() {
        Some(x) => Quantity::Number(x),
        None => Quantity::Text(v.to_string()),
    };
    figures.measured(format!("{name}.first"), value(first));
    figures.measured(format!("{name}.last"), value(last));
    for device in [Device::Cpu, Device::Gpu] {
        let dev = device_name(device);
        let (Some(a), Some(b)) = (results.point(device, first), results.point(device, last)) else {
            continue;
        };
        let rate = |p: &sweep::Point| (p.samples_per_s, p.samples_per_s * p.iqr_pct / 100.0);
        let ((ra, ia), (rb, ib)) = (rate(a), rate(b));
        figures.measured_with_iqr(
            format!("{name}.{dev}.first_samples_per_s"),
            Quantity::SamplesPerS(ra),
            ia,
        );
        figures.measured_with_iqr(
            format!("{name}.{dev}.last_samples_per_s"),
            Quantity::SamplesPerS(rb),
            ib,
        );
        let gain = rb / ra;
        figures.measured_with_iqr(
            format!("{name}.{dev}.gain"),
            Quantity::Ratio(gain),
            gain * (ia / ra + ib / rb),
        );
    }
    if let Some(sweep::Crossover::At { value, .. } | sweep::Crossover::FromTheStart { value }) =
        results.crossover()
    {
        figures.measured(format!("{name}.crossover"), Quantity::Number(value.round()));
    }
}

/// The simulator's prediction of `session`'s step on `profile`: every figure simulated. The
/// step is split into parts that add up to it: the kernels' own work, launching kernels whose
/// time is their launch (the ones a faster chip would not speed up), the batch's copy over the
/// link, and the rest (synchronising, the step's fixed overhead, waiting for data).
pub fn simulate(
    session: &Session,
    profile: &crate::sim::profile::Profile,
    name: &str,
    figures: &mut Figures,
) {
    use crate::sim::cost::{Bound, OpKind};
    let c = &session.config;
    let spec = c.model_spec(&session.data);
    let ops = crate::sim::cost::step_ops(&spec, c.batch, c.recipe(), profile.device());
    let loader = (
        f64::from(c.pipeline.loader.storage_latency_ms),
        c.pipeline.loader.workers > 0,
    );
    // Reads of the loss per step, by the run's setting: every step, every N, or (as the
    // simulator tab assumes) once a step when the display asks.
    let syncs = match c.pipeline.sync {
        crate::train::SyncPolicy::EverySteps(n) => 1.0 / f64::from(n.max(1)),
        crate::train::SyncPolicy::EveryStep | crate::train::SyncPolicy::WhenShown => 1.0,
    };
    let p = crate::sim::cost::predict_synced(profile, &ops, c.precision, c.batch, loader, syncs);
    // The profile's name is a name, not a prediction: only the numbers are marked simulated.
    figures.measured(
        format!("{name}.profile"),
        Quantity::Text(profile.name.clone()),
    );
    figures.simulated(
        format!("{name}.samples_per_s"),
        Quantity::SamplesPerS(p.samples_per_s),
    );
    figures.simulated(format!("{name}.step_ms"), Quantity::Ms(p.step_time_ms));
    let ms = |keep: &dyn Fn(&crate::sim::cost::OpCost) -> bool| -> f64 {
        p.ops.iter().filter(|o| keep(o)).map(|o| o.time_ms).sum()
    };
    let total = p.step_time_ms.max(f64::MIN_POSITIVE);
    let copy = ms(&|o| o.op.kind == OpKind::Copy);
    let launch = ms(&|o| o.op.kind != OpKind::Copy && o.bound == Bound::Overhead);
    let compute = ms(&|o| o.op.kind != OpKind::Copy && o.bound != Bound::Overhead);
    let other = (total - copy - launch - compute).max(0.0);
    for (part, x) in [
        ("copy_share", copy),
        ("launch_share", launch),
        ("compute_share", compute),
        ("other_share", other),
        ("kernel_share", launch + compute),
    ] {
        figures.simulated(format!("{name}.{part}"), Quantity::Share(x / total));
    }
    let kernels = p.ops.iter().filter(|o| o.op.kind != OpKind::Copy).count();
    figures.simulated(
        format!("{name}.kernels_per_step"),
        Quantity::Number(kernels as f64),
    );
    // One request of one row to the trained model: copy in, forward, read back.
    let request = crate::sim::cost::request_ops(&spec, 1, c.precision, profile.device());
    let served = crate::sim::cost::predict(profile, &request, c.precision, 1, (0.0, true));
    figures.simulated(
        format!("{name}.request_ms"),
        Quantity::Ms(served.step_time_ms),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::format::Preset;
    use crate::lesson::probe::config_of;

    /// The simulator's parts of a step add up to the step: a headline that names them all can
    /// never say 120% of a step.
    #[test]
    fn the_simulated_parts_of_a_step_add_up_to_it() {
        for (dataset, batch) in [("spiral", 32), ("mnist", 64), ("mnist", 1024)] {
            let preset = Preset {
                dataset: Some(dataset.to_owned()),
                batch: Some(batch),
                ..Preset::default()
            };
            let (config, _) = config_of(&preset).expect("a preset");
            let session = crate::lesson::probe::Tables::default()
                .session(config)
                .expect("a session");
            for profile in crate::sim::profile::shipped() {
                let mut f = Figures::default();
                simulate(&session, &profile, "sim", &mut f);
                let share = |p: &str| {
                    f.get(&format!("sim.{p}"))
                        .and_then(|x| x.quantity.number())
                        .expect(p)
                };
                let parts = ["copy_share", "launch_share", "compute_share", "other_share"];
                let sum: f64 = parts.iter().map(|p| share(p)).sum();
                assert!((sum - 1.0).abs() < 1e-9, "{}: {sum}", profile.id);
                let kernels = share("launch_share") + share("compute_share");
                assert!((share("kernel_share") - kernels).abs() < 1e-12);
            }
        }
    }
}
