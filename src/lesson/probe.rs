//! Running a lesson's probes: the same measurements as `bench`, `sweep`, `trace`, `memory` and
//! `simulate`, made one device at a time (never two at once, so neither steals the other's
//! cores), each figure from a clock of this run or, for a simulation, marked simulated.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::figures::{Figures, Quantity};
use super::format::{Devices, Lesson, Preset, Probe, ProbeKind};
use super::measure::{
    Measuring, Plan, device_name, faster, serve_figures, serve_plan, simulate, sweep_figures,
};
use crate::backend::{Activation, Backend};
use crate::bench::sweep::{self, Sweep};
use crate::data::Synthetic;
use crate::data::Table;
use crate::data::formats::no_progress;
use crate::data::shipped::{SHIPPED, load_shipped, shipped};
use crate::data::source::DataSource;
use crate::data::text_data::{load_shipped_text, shipped_text};
use crate::device::Device;
use crate::i18n::{AuthorKey, ErrKey, Said};
use crate::nn::OptimizerKind;
use crate::precision::Precision;
use crate::train::{Session, SyncPolicy, TrainConfig};

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

/// How long one probe took, for `lessons --verify` (a probe must stay short on a software
/// adapter, where a class waits for it).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ProbeTime {
    /// The probe's name.
    pub probe: String,
    /// Wall time, in seconds.
    pub seconds: f64,
}

/// What the probes are doing, for a progress bar that says what is being timed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// The share of the probes done, 0 to 1.
    pub done: f32,
    /// The probe running, 1-based, and how many there are.
    pub probe: (usize, usize),
    /// What it measures.
    pub kind: ProbeKind,
    /// The device it measures now (none for a simulation, or between devices).
    pub device: Option<Device>,
}

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
    /// The last serve probe's reports, for the Experiments tab's serving section.
    pub serving: Option<crate::bench::infer::Serving>,
    /// How long each probe took.
    pub timings: Vec<ProbeTime>,
}

/// The settings `preset` describes, from the app's defaults, and the devices it trains on.
pub fn config_of(preset: &Preset) -> Result<(TrainConfig, [bool; 2]), Said> {
    let mut config = TrainConfig::default();
    let mut enabled = [true, true];
    apply(preset, &mut config, &mut enabled)?;
    Ok((config, enabled))
}

/// Checks every setting `preset` gives with the setup's own checks (those that do not depend on
/// the data set, which a run checks when it has it): the error names the setting and its limit.
pub fn check_settings(preset: &Preset) -> Result<(), Said> {
    use crate::train::{check_batch, check_conv, check_hidden, check_lr};
    let (c, _) = config_of(preset)?;
    let said = |e: crate::setting::SettingError| Said::each(|lang| e.text(lang));
    check_lr(c.lr).map_err(said)?;
    check_batch(c.batch).map_err(said)?;
    crate::train::check_accumulate(c.accumulate).map_err(said)?;
    crate::train::check_checkpoint(c.checkpoint).map_err(said)?;
    check_hidden(&c.hidden).map_err(said)?;
    check_conv(&c.conv, c.conv_kernel).map_err(said)?;
    c.data.validate_split().map_err(said)?;
    let (fewest, most) = (crate::data::MIN_SAMPLES, crate::data::MAX_SAMPLES);
    if c.source == DataSource::Generated && !(fewest..=most).contains(&c.data.samples) {
        return Err(said(crate::setting::SettingError::Samples {
            value: c.data.samples,
            min: fewest,
            max: most,
        }));
    }
    Ok(())
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
            c.suit_data(false);
        } else if shipped(name).is_some() {
            c.source = DataSource::Shipped(name.clone());
            c.suit_data(false);
        } else if shipped_text(name).is_some() {
            c.source = DataSource::Shipped(name.clone());
            c.suit_data(true);
        } else {
            let generators: Vec<&str> = Synthetic::ALL.iter().map(|s| s.as_str()).collect();
            let sets: Vec<&str> = SHIPPED
                .iter()
                .map(|s| s.name)
                .chain(crate::data::text_data::SHIPPED_TEXTS.iter().map(|t| t.name))
                .collect();
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
    if let Some(name) = &preset.model {
        c.model = Some(crate::nn::preset(name).ok_or_else(|| {
            let presets: Vec<&str> = crate::nn::MODEL_PRESETS.iter().map(|p| p.name).collect();
            Said::new(
                AuthorKey::BadModel,
                &[("name", name), ("presets", &presets.join(", "))],
            )
        })?);
    }
    if let Some(context) = preset.context {
        c.data.context = context;
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
    c.accumulate = preset.accumulate.unwrap_or(c.accumulate);
    c.checkpoint = preset.checkpoint.unwrap_or(c.checkpoint);
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
    pub fn session(&mut self, config: TrainConfig) -> Result<Session, Said> {
        let DataSource::Shipped(name) = &config.source else {
            return Session::new(config).map_err(|e| e.said());
        };
        let table = if let Some(t) = self.0.get(name) {
            Arc::clone(t)
        } else {
            let loaded = match (shipped(name), shipped_text(name)) {
                (Some(set), _) => load_shipped(set, &no_progress),
                (None, Some(text)) => load_shipped_text(text, &no_progress),
                (None, None) => return Err(Said::new(AuthorKey::NoShippedSet, &[("name", name)])),
            };
            let t = Arc::new(loaded.map_err(|e| e.said())?);
            self.0.insert(name.clone(), Arc::clone(&t));
            t
        };
        Session::from_table(config, &table).map_err(|e| e.said())
    }
}

/// Runs every probe of `lesson` (stopping between two once `cancel` is set), telling
/// `progress` what it measures and the share done.
pub fn run(
    lesson: &Lesson,
    open: Open<'_>,
    plan: Plan,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Outcome {
    let mut outcome = Outcome {
        figures: Figures::default(),
        gpu: GpuPresence::None,
        notes: Vec::new(),
        cancelled: false,
        sweep: None,
        serving: None,
        timings: Vec::new(),
    };
    let mut tables = Tables::default();
    // What stands in for the GPU is asked once, of the adapter the probes will use.
    let gpu_wanted = lesson.probes.iter().any(|p| {
        p.kind != ProbeKind::Simulate && lesson.preset.patched(&p.set).devices != Some(Devices::Cpu)
    });
    let mut gpu_missing = false;
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
            Err(why) => {
                outcome.notes.push(note("GPU", &why));
                gpu_missing = true;
            }
        }
    }
    let total = lesson.probes.len().max(1);
    for (i, probe) in lesson.probes.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            outcome.cancelled = true;
            break;
        }
        let started = web_time::Instant::now();
        let mut preset = lesson.preset.patched(&probe.set);
        if gpu_missing && probe.kind != ProbeKind::Simulate {
            // The missing GPU is said once above, not again for each probe that wanted it.
            if preset.devices == Some(Devices::Gpu) {
                continue;
            }
            preset.devices = Some(Devices::Cpu);
        }
        let mut doing = |device| {
            progress(Progress {
                done: i as f32 / total as f32,
                probe: (i + 1, total),
                kind: probe.kind,
                device,
            });
        };
        match run_probe(
            probe,
            &preset,
            open,
            Measuring { plan, cancel },
            &mut tables,
            &mut doing,
        ) {
            Ok(Measured {
                figures,
                notes,
                sweep,
                serving,
            }) => {
                outcome.figures.extend(figures);
                outcome.notes.extend(notes);
                outcome.sweep = sweep.or(outcome.sweep.take());
                outcome.serving = serving.or(outcome.serving.take());
            }
            // The lesson file's own mistakes (a preset no setting takes), or a setting the
            // run cannot use: for the file's author.
            Err(why) => outcome.notes.push(note(probe.name(), &why)),
        }
        outcome.timings.push(ProbeTime {
            probe: probe.name().to_owned(),
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    outcome.cancelled |= cancel.load(Ordering::Relaxed);
    progress(Progress {
        done: 1.0,
        probe: (total, total),
        kind: lesson.probes.last().map_or(ProbeKind::Speed, |p| p.kind),
        device: None,
    });
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
    /// A serve probe's reports.
    pub serving: Option<crate::bench::infer::Serving>,
}

/// Runs one probe with `preset`'s settings, telling `doing` which device it measures.
pub fn run_probe(
    probe: &Probe,
    preset: &Preset,
    open: Open<'_>,
    measuring: Measuring<'_>,
    tables: &mut Tables,
    doing: &mut dyn FnMut(Option<Device>),
) -> Result<Measured, Said> {
    let (config, enabled) = config_of(preset)?;
    let session = tables.session(config)?;
    let devices: Vec<Device> = [Device::Cpu, Device::Gpu]
        .into_iter()
        .filter(|&d| enabled[d as usize])
        .collect();
    let mut measured = Measured {
        figures: Figures::default(),
        notes: Vec::new(),
        sweep: None,
        serving: None,
    };
    let run = ProbeRun {
        probe,
        session: &session,
        devices: &devices,
        open,
        measuring,
    };
    match probe.kind {
        ProbeKind::Simulate => {
            doing(None);
            let id = probe.profile.as_deref().unwrap_or_default();
            let profiles = crate::sim::profile::shipped();
            let profile = profiles
                .iter()
                .find(|p| p.id == id)
                .ok_or_else(|| Said::new(AuthorKey::NoProfile, &[("id", &id)]))?;
            simulate(&session, profile, probe.name(), &mut measured.figures);
        }
        ProbeKind::Sweep => run.sweep(doing, &mut measured)?,
        ProbeKind::Serve => run.serve(&mut measured),
        ProbeKind::Speed
        | ProbeKind::Breakdown
        | ProbeKind::Memory
        | ProbeKind::Converge
        | ProbeKind::Precision => run.on_each_device(doing, &mut measured),
    }
    Ok(measured)
}

/// One probe's run: what it measures, on which devices, and how.
struct ProbeRun<'a> {
    probe: &'a Probe,
    session: &'a Session,
    devices: &'a [Device],
    open: Open<'a>,
    measuring: Measuring<'a>,
}

impl ProbeRun<'_> {
    /// A sweep: its points on each device in turn, and its crossover.
    fn sweep(
        &self,
        doing: &mut dyn FnMut(Option<Device>),
        measured: &mut Measured,
    ) -> Result<(), Said> {
        let name = self.probe.name();
        let vary = self.probe.vary.as_deref().unwrap_or_default();
        let sweep =
            Sweep::parse(vary).map_err(|e| Said::new(AuthorKey::BadSweep, &[("why", &e)]))?;
        let open_sweep = |d: Device, _threads: Option<usize>| (self.open)(d);
        let mut results = sweep::Results::new(sweep.clone(), self.devices);
        doing(self.devices.first().copied());
        sweep::run(
            &sweep,
            self.session,
            self.devices,
            self.measuring.plan.point,
            &open_sweep,
            self.measuring.cancel,
            &mut |r| {
                if let sweep::Report::Point(p) = &r {
                    doing(Some(p.device));
                }
                results.apply(r);
            },
        );
        results.ended = true;
        sweep_figures(&results, name, &mut measured.figures);
        measured
            .notes
            .extend(results.notes.iter().filter_map(|n| match n {
                sweep::Note::Skipped { device, value, why } => {
                    Some(note(&format!("{name}: {device} @ {value}"), why))
                }
                sweep::Note::LeftOut { device, why } => {
                    Some(note(&format!("{name}: {device}"), why))
                }
                _ => None,
            }));
        measured.sweep = Some(results);
        Ok(())
    }

    /// Serving: requests timed on each device in turn.
    fn serve(&self, measured: &mut Measured) {
        use crate::bench::infer::{Serving, ServingNews, serve_each};
        let name = self.probe.name();
        let plan = serve_plan(self.session);
        let mut serving = Serving::new(plan, self.devices.to_vec());
        let Measured { figures, notes, .. } = measured;
        serve_each(
            self.session,
            self.devices,
            plan,
            self.open,
            self.measuring.cancel,
            &mut |news| {
                match &news {
                    ServingNews::Measured(report) => {
                        let prefix = format!("{name}.{}", device_name(report.device));
                        serve_figures(report, &prefix, figures);
                    }
                    ServingNews::Failed(device, why) => {
                        notes.push(note(&format!("{name}: {device}"), why));
                    }
                }
                serving.apply(news);
            },
        );
        serving.ended = true;
        serving.cancelled = self.measuring.cancel.load(Ordering::Relaxed);
        measured.serving = Some(serving);
    }

    /// A probe measured on each device in turn, inside its backend's context.
    fn on_each_device(&self, doing: &mut dyn FnMut(Option<Device>), measured: &mut Measured) {
        let (probe, name) = (self.probe, self.probe.name());
        for &device in self.devices {
            if self.measuring.cancel.load(Ordering::Relaxed) {
                break;
            }
            doing(Some(device));
            let mut backend = match (self.open)(device) {
                Ok(b) => b,
                Err(why) => {
                    measured
                        .notes
                        .push(note(&format!("{name}: {device}"), &why));
                    continue;
                }
            };
            let mut result = Err(Said::new(ErrKey::ProbeDidNotRun, &[]));
            let dev = device_name(device);
            let mut found = Figures::default();
            // Only what the backend's thread may share goes in (not the opener).
            let session = self.session;
            let measuring = self.measuring;
            backend.enter(&mut |b| {
                let prefix = format!("{name}.{dev}");
                result = super::measure::measure(probe, b, session, measuring, &prefix, &mut found);
            });
            match result {
                Ok(()) => measured.figures.extend(found),
                Err(e) => measured.notes.push(note(&format!("{name}: {device}"), &e)),
            }
        }
        if probe.kind == ProbeKind::Speed {
            faster(name, &mut measured.figures);
        }
    }
}

/// A note on what could not be measured: where (a probe's and a device's code names) and why.
fn note(place: &str, why: &Said) -> Said {
    Said::verbatim(format!("{place}: ")).then(why)
}
