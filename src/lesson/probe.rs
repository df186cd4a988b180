//! Running a lesson's probes: the same measurements as `bench`, `sweep`, `trace`, `memory` and
//! `simulate`, made one device at a time (never two at once, so neither steals the other's
//! cores), each figure from a clock of this run or, for a simulation, marked simulated.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::figures::{Figures, Quantity};
use super::format::{Devices, Lesson, Preset, Probe, ProbeKind, SHARES};
use crate::backend::{Activation, Backend, BackendError};
use crate::bench::sweep::{self, PointPlan, Sweep};
use crate::bench::{BenchPlan, median_of_sorted};
use crate::data::Synthetic;
use crate::data::Table;
use crate::data::formats::no_progress;
use crate::data::shipped::{SHIPPED, load_shipped, shipped};
use crate::data::source::DataSource;
use crate::device::Device;
use crate::i18n::{AuthorKey, ErrKey, Said};
use crate::memory::Role;
use crate::nn::OptimizerKind;
use crate::precision::Precision;
use crate::trace::{Breakdown, Category};
use crate::train::{Runner, Session, SyncPolicy, TrainConfig};

/// How long each probe measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// A speed probe's timing.
    pub bench: BenchPlan,
    /// Each sweep point's timing.
    pub point: PointPlan,
    /// Steps before a breakdown is recorded, and recorded.
    pub recorded_steps: (u64, u64),
    /// Steps before the memory is read (the peaks cover them).
    pub memory_steps: u64,
}

impl Plan {
    /// Short measurements, for `lessons --verify` and tests: a few seconds a lesson.
    pub fn quick() -> Self {
        Self {
            bench: BenchPlan {
                warmup_steps: 3,
                repeats: 3,
                steps_per_run: 0,
                target_run_s: 0.05,
            },
            point: PointPlan {
                warmup_s: 0.05,
                run_s: 0.03,
                min_runs: 3,
                max_iqr: 0.2,
                cap_s: 0.4,
            },
            recorded_steps: (3, 8),
            memory_steps: 3,
        }
    }

    /// The window's measurements: steadier, a few seconds a probe.
    pub fn standard() -> Self {
        Self {
            bench: BenchPlan {
                warmup_steps: 10,
                repeats: 5,
                steps_per_run: 0,
                target_run_s: 0.2,
            },
            point: PointPlan::default(),
            recorded_steps: (5, 20),
            memory_steps: 5,
        }
    }
}

/// What stood in for the GPU in a run of the probes: the case a headline is chosen for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuPresence {
    /// A hardware adapter.
    Hardware,
    /// A software adapter (lavapipe, llvmpipe, WARP), which runs on the CPU's cores.
    Software,
    /// No adapter could be opened, or the lesson trains on the CPU alone.
    None,
}

/// Opens a device's backend (the caller decides the options: threads, tuning, `--no-gpu`).
pub type Open<'a> = &'a dyn Fn(Device) -> Result<Box<dyn Backend>, crate::i18n::Said>;

/// The figures of a lesson's probes, and what could not be measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Every figure measured or simulated.
    pub figures: Figures,
    /// What stood in for the GPU.
    pub gpu: GpuPresence,
    /// What could not be measured, and why.
    pub notes: Vec<Said>,
    /// The run was cancelled before every probe ended.
    pub cancelled: bool,
    /// The last sweep probe's points, for the Experiments tab's plot.
    pub sweep: Option<sweep::Results>,
}

/// The settings `preset` describes, from the app's defaults, and the devices it trains on.
pub fn config_of(preset: &Preset) -> Result<(TrainConfig, [bool; 2]), Said> {
    let mut config = TrainConfig::default();
    let mut enabled = [true, true];
    apply(preset, &mut config, &mut enabled)?;
    Ok((config, enabled))
}

/// Whether `config` and `enabled` already have every setting `preset` gives (a Try step's
/// change is made).
pub fn holds(preset: &Preset, config: &TrainConfig, enabled: [bool; 2]) -> bool {
    let (mut c, mut e) = (config.clone(), enabled);
    apply(preset, &mut c, &mut e).is_ok() && c == *config && e == enabled
}

/// Sets in `c` and `enabled` every setting `preset` gives, leaving the others.
pub fn apply(preset: &Preset, c: &mut TrainConfig, enabled: &mut [bool; 2]) -> Result<(), Said> {
    if let Some(name) = &preset.dataset {
        if let Some(kind) = Synthetic::parse(name) {
            c.data.kind = kind;
            c.source = DataSource::Generated;
        } else if shipped(name).is_some() {
            c.source = DataSource::Shipped(name.clone());
        } else {
            let generators: Vec<&str> = Synthetic::ALL.iter().map(|s| s.as_str()).collect();
            let sets: Vec<&str> = SHIPPED.iter().map(|s| s.name).collect();
            return Err(Said::new(
                AuthorKey::BadDataset,
                &[
                    ("name", name),
                    ("generators", &generators.join(", ")),
                    ("sets", &sets.join(", ")),
                ],
            ));
        }
    }
    if let Some(n) = preset.samples {
        c.data.samples = n;
    }
    if let Some(hidden) = &preset.hidden {
        c.hidden.clone_from(hidden);
    }
    if let Some(conv) = &preset.conv {
        c.conv.clone_from(conv);
    }
    if let Some(name) = &preset.activation {
        c.activation = Activation::parse(name)
            .filter(|a| Activation::CHOICES.contains(a))
            .ok_or_else(|| Said::new(AuthorKey::BadActivation, &[("name", name)]))?;
    }
    if let Some(name) = &preset.optimizer {
        c.optimizer = OptimizerKind::parse(name)
            .ok_or_else(|| Said::new(AuthorKey::BadOptimizer, &[("name", name)]))?;
    }
    if let Some(name) = &preset.precision {
        c.precision = Precision::parse(name)
            .ok_or_else(|| Said::new(AuthorKey::BadPrecision, &[("name", name)]))?;
    }
    if let Some(text) = &preset.sync_every {
        c.pipeline.sync = SyncPolicy::parse(text)
            .ok_or_else(|| Said::new(AuthorKey::BadSyncEvery, &[("text", text)]))?;
    }
    c.lr = preset.lr.unwrap_or(c.lr);
    c.batch = preset.batch.unwrap_or(c.batch);
    c.seed = preset.seed.unwrap_or(c.seed);
    c.pipeline.loader.workers = preset.workers.unwrap_or(c.pipeline.loader.workers);
    c.pipeline.loader.storage_latency_ms = preset
        .storage_latency_ms
        .unwrap_or(c.pipeline.loader.storage_latency_ms);
    c.pipeline
        .validate()
        .map_err(|e| Said::each(|lang| e.text(lang)))?;
    if let Some(devices) = preset.devices {
        *enabled = devices.enabled();
    }
    Ok(())
}

/// Loaded shipped sets, so that a lesson's probes read each file once.
#[derive(Default)]
pub struct Tables(HashMap<String, Arc<Table>>);

impl Tables {
    /// The checked session of `config`, on a table read at most once.
    fn session(&mut self, config: TrainConfig) -> Result<Session, Said> {
        let DataSource::Shipped(name) = &config.source else {
            return Session::new(config).map_err(|e| e.said());
        };
        let table = if let Some(t) = self.0.get(name) {
            Arc::clone(t)
        } else {
            let set = shipped(name)
                .ok_or_else(|| Said::new(AuthorKey::NoShippedSet, &[("name", name)]))?;
            let t = Arc::new(load_shipped(set, &no_progress).map_err(|e| e.said())?);
            self.0.insert(name.clone(), Arc::clone(&t));
            t
        };
        Session::from_table(config, &table).map_err(|e| e.said())
    }
}

/// Runs every probe of `lesson` (stopping between two once `cancel` is set), telling
/// `progress` the share done.
pub fn run(
    lesson: &Lesson,
    open: Open<'_>,
    plan: Plan,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(f32),
) -> Outcome {
    let mut outcome = Outcome {
        figures: Figures::default(),
        gpu: GpuPresence::None,
        notes: Vec::new(),
        cancelled: false,
        sweep: None,
    };
    let mut tables = Tables::default();
    // What stands in for the GPU is asked once, of the adapter the probes will use.
    let gpu_wanted = lesson.probes.iter().any(|p| {
        p.kind != ProbeKind::Simulate && lesson.preset.patched(&p.set).devices != Some(Devices::Cpu)
    });
    if gpu_wanted {
        match open(Device::Gpu) {
            Ok(gpu) => {
                if let Some(a) = gpu.adapter_summary() {
                    outcome.gpu = if a.software {
                        GpuPresence::Software
                    } else {
                        GpuPresence::Hardware
                    };
                    outcome
                        .figures
                        .measured("adapter.name", Quantity::Text(a.name));
                    outcome
                        .figures
                        .measured("adapter.api", Quantity::Text(a.backend));
                }
            }
            Err(why) => outcome.notes.push(note("GPU", &why)),
        }
    }
    let total = lesson.probes.len().max(1) as f32;
    for (i, probe) in lesson.probes.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            outcome.cancelled = true;
            break;
        }
        let preset = lesson.preset.patched(&probe.set);
        match run_probe(probe, &preset, open, plan, cancel, &mut tables) {
            Ok(Measured {
                figures,
                notes,
                sweep,
            }) => {
                outcome.figures.extend(figures);
                outcome.notes.extend(notes);
                outcome.sweep = sweep.or(outcome.sweep.take());
            }
            // The lesson file's own mistakes (a preset no setting takes), or a setting the
            // run cannot use: for the file's author.
            Err(why) => outcome.notes.push(note(probe.name(), &why)),
        }
        progress((i + 1) as f32 / total);
    }
    outcome
}

/// What one probe measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Its figures.
    pub figures: Figures,
    /// What a device could not measure, and why.
    pub notes: Vec<Said>,
    /// A sweep's points.
    pub sweep: Option<sweep::Results>,
}

/// Runs one probe with `preset`'s settings.
pub fn run_probe(
    probe: &Probe,
    preset: &Preset,
    open: Open<'_>,
    plan: Plan,
    cancel: &AtomicBool,
    tables: &mut Tables,
) -> Result<Measured, Said> {
    let (config, enabled) = config_of(preset)?;
    let session = tables.session(config)?;
    let name = probe.name();
    let mut figures = Figures::default();
    let mut notes = Vec::new();
    let mut swept = None;
    let devices: Vec<Device> = [Device::Cpu, Device::Gpu]
        .into_iter()
        .filter(|&d| enabled[d as usize])
        .collect();
    match probe.kind {
        ProbeKind::Simulate => {
            let id = probe.profile.as_deref().unwrap_or_default();
            simulate(&session, id, name, &mut figures)?;
        }
        ProbeKind::Sweep => {
            let vary = probe.vary.as_deref().unwrap_or_default();
            let sweep =
                Sweep::parse(vary).map_err(|e| Said::new(AuthorKey::BadSweep, &[("why", &e)]))?;
            let open_sweep = |d: Device, _threads: Option<usize>| open(d);
            let mut results = sweep::Results::new(sweep.clone(), &devices);
            sweep::run(
                &sweep,
                &session,
                &devices,
                plan.point,
                &open_sweep,
                cancel,
                &mut |r| {
                    results.apply(r);
                },
            );
            results.ended = true;
            sweep_figures(&results, name, &mut figures);
            notes.extend(results.notes.iter().filter_map(|n| match n {
                sweep::Note::Skipped { device, value, why } => {
                    Some(note(&format!("{name}: {device} @ {value}"), why))
                }
                sweep::Note::LeftOut { device, why } => {
                    Some(note(&format!("{name}: {device}"), why))
                }
                _ => None,
            }));
            swept = Some(results);
        }
        ProbeKind::Speed | ProbeKind::Breakdown | ProbeKind::Memory => {
            for &device in &devices {
                let mut backend = match open(device) {
                    Ok(b) => b,
                    Err(why) => {
                        notes.push(note(&format!("{name}: {device}"), &why));
                        continue;
                    }
                };
                let mut result = Err(Said::new(ErrKey::ProbeDidNotRun, &[]));
                let (kind, dev) = (probe.kind, device_name(device));
                let mut found = Figures::default();
                backend.enter(&mut |b| {
                    result = measure(
                        kind,
                        b,
                        &session,
                        plan,
                        &format!("{name}.{dev}"),
                        &mut found,
                    );
                });
                match result {
                    Ok(()) => figures.extend(found),
                    Err(e) => notes.push(note(&format!("{name}: {device}"), &e)),
                }
            }
            if probe.kind == ProbeKind::Speed {
                faster(name, &mut figures);
            }
        }
    }
    Ok(Measured {
        figures,
        notes,
        sweep: swept,
    })
}

/// A note on what could not be measured: where (a probe's and a device's code names) and why.
fn note(place: &str, why: &Said) -> Said {
    Said::verbatim(format!("{place}: ")).then(why)
}

/// The name of `device` in figure names.
fn device_name(device: Device) -> &'static str {
    match device {
        Device::Cpu => "cpu",
        Device::Gpu => "gpu",
    }
}

/// One device's measurement of a speed, breakdown or memory probe, its figures under `prefix`.
fn measure(
    kind: ProbeKind,
    backend: &mut dyn Backend,
    session: &Session,
    plan: Plan,
    prefix: &str,
    figures: &mut Figures,
) -> Result<(), Said> {
    measure_on(kind, backend, session, plan, prefix, figures).map_err(|e| e.said())?
}

/// [`measure`], with the backend's errors kept apart from the probe's own.
fn measure_on(
    kind: ProbeKind,
    backend: &mut dyn Backend,
    session: &Session,
    plan: Plan,
    prefix: &str,
    figures: &mut Figures,
) -> Result<Result<(), Said>, BackendError> {
    let batch = session.config.batch as f64;
    match kind {
        ProbeKind::Speed => {
            let m = crate::bench::measure(backend, session, plan.bench)?;
            let step_ms = median_of_sorted(&m.sorted_step_times_ms());
            figures.measured(format!("{prefix}.step_ms"), Quantity::Ms(step_ms));
            figures.measured(
                format!("{prefix}.samples_per_s"),
                Quantity::SamplesPerS(batch / (step_ms / 1e3)),
            );
            if let Some(d) = m.dispatches_per_step {
                figures.measured(
                    format!("{prefix}.dispatches_per_step"),
                    Quantity::Number(d.round()),
                );
            }
        }
        ProbeKind::Breakdown => {
            let mut session = session.clone();
            session.config.pipeline.record = true;
            session.config.pipeline.kernel_timing_every = 1;
            let mut runner = Runner::new(backend, &session)?;
            let (warmup, recorded) = plan.recorded_steps;
            for _ in 0..warmup {
                runner.step(backend, false)?;
            }
            runner.sync(backend)?;
            drop(runner.take_trace(backend));
            for step in 1..=recorded {
                // Every recorded step reads the loss back, so each one's kernels are timed.
                runner.step(backend, step == recorded)?;
            }
            runner.sync(backend)?;
            let chunk = runner.take_trace(backend);
            let timed: Vec<&Breakdown> = chunk
                .steps
                .iter()
                .filter(|s| s.kernels_timed)
                .map(|s| &s.breakdown)
                .collect();
            if timed.is_empty() {
                return Ok(Err(Said::new(ErrKey::NoKernelsTimed, &[])));
            }
            let total = Breakdown::total(timed.iter().copied());
            for (category, part) in Category::ALL.into_iter().zip(SHARES) {
                figures.measured(
                    format!("{prefix}.{part}"),
                    Quantity::Share(total.share(category)),
                );
            }
            figures.measured(
                format!("{prefix}.busy_share"),
                Quantity::Share(total.busy_share()),
            );
            let step_ms = total.wall_ns as f64 / 1e6 / timed.len() as f64;
            figures.measured(format!("{prefix}.step_ms"), Quantity::Ms(step_ms));
        }
        ProbeKind::Memory => {
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
            // A loss that diverged (pure FP16 with Adam does) took the same bytes as one that
            // did not: the memory is read all the same.
            match trained {
                Ok(()) | Err(BackendError::Diverged { .. }) => {}
                Err(e) => return Err(e),
            }
            let memory = backend.memory();
            drop(runner);
            for role in Role::ALL {
                figures.measured(
                    format!("{prefix}.{}_bytes", role.as_str()),
                    Quantity::Bytes(memory.role(role) as f64),
                );
            }
            figures.measured(
                format!("{prefix}.total_bytes"),
                Quantity::Bytes(memory.requested() as f64),
            );
            figures.measured(
                format!("{prefix}.peak_bytes"),
                Quantity::Bytes(memory.peak_allocated as f64),
            );
        }
        ProbeKind::Sweep | ProbeKind::Simulate => {}
    }
    Ok(Ok(()))
}

/// A speed probe's comparison: which device trained more samples per second, and how many
/// times more (at least 1, so a headline reads the same whichever won).
fn faster(name: &str, figures: &mut Figures) {
    let rate = |d: &str| {
        figures
            .get(&format!("{name}.{d}.samples_per_s"))
            .and_then(|f| f.quantity.number())
    };
    let (Some(cpu), Some(gpu)) = (rate("cpu"), rate("gpu")) else {
        return;
    };
    let (fast, slow, ratio) = if gpu > cpu {
        ("GPU", "CPU", gpu / cpu)
    } else {
        ("CPU", "GPU", cpu / gpu)
    };
    figures.measured(format!("{name}.faster"), Quantity::Text(fast.to_owned()));
    figures.measured(format!("{name}.slower"), Quantity::Text(slow.to_owned()));
    figures.measured(format!("{name}.speedup"), Quantity::Ratio(ratio));
}

/// A sweep's figures: each device's gain from the first value to the last, the values, and the
/// crossover where there is one.
fn sweep_figures(results: &sweep::Results, name: &str, figures: &mut Figures) {
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
        figures.measured(
            format!("{name}.{dev}.first_samples_per_s"),
            Quantity::SamplesPerS(a.samples_per_s),
        );
        figures.measured(
            format!("{name}.{dev}.last_samples_per_s"),
            Quantity::SamplesPerS(b.samples_per_s),
        );
        figures.measured(
            format!("{name}.{dev}.gain"),
            Quantity::Ratio(b.samples_per_s / a.samples_per_s),
        );
    }
    if let Some(sweep::Crossover::At { value, .. } | sweep::Crossover::FromTheStart { value }) =
        results.crossover()
    {
        figures.measured(format!("{name}.crossover"), Quantity::Number(value.round()));
    }
}

/// The simulator's prediction of `session`'s step on profile `id`: every figure simulated.
fn simulate(session: &Session, id: &str, name: &str, figures: &mut Figures) -> Result<(), Said> {
    use crate::sim::cost::{Bound, OpKind};
    let profiles = crate::sim::profile::shipped();
    let profile = profiles
        .iter()
        .find(|p| p.id == id)
        .ok_or_else(|| Said::new(AuthorKey::NoProfile, &[("id", &id)]))?;
    let c = &session.config;
    let spec = c.model_spec(&session.data);
    let ops =
        crate::sim::cost::step_ops(&spec, c.batch, (c.optimizer, c.precision), profile.device());
    let loader = (
        f64::from(c.pipeline.loader.storage_latency_ms),
        c.pipeline.loader.workers > 0,
    );
    let p = crate::sim::cost::predict(profile, &ops, c.precision, c.batch, loader);
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
    // Where the predicted step goes: the batch's copy over the link, and the kernels whose time
    // is their launch (the ones a faster chip would not speed up).
    let share = |keep: &dyn Fn(&crate::sim::cost::OpCost) -> bool| {
        let ms: f64 = p.ops.iter().filter(|o| keep(o)).map(|o| o.time_ms).sum();
        Quantity::Share(ms / p.step_time_ms.max(f64::MIN_POSITIVE))
    };
    figures.simulated(
        format!("{name}.copy_share"),
        share(&|o| o.op.kind == OpKind::Copy),
    );
    figures.simulated(
        format!("{name}.kernel_share"),
        share(&|o| o.op.kind != OpKind::Copy),
    );
    figures.simulated(
        format!("{name}.launch_share"),
        share(&|o| o.op.kind != OpKind::Copy && o.bound == Bound::Overhead),
    );
    let kernels = p.ops.iter().filter(|o| o.op.kind != OpKind::Copy).count();
    figures.simulated(
        format!("{name}.kernels_per_step"),
        Quantity::Number(kernels as f64),
    );
    Ok(())
}
