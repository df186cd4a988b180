//! Sweeps: one setting varied over a list of values, each value measured on a device as `bench`
//! measures it (a warm-up, then repeated timed runs), repeated until the runs agree (the
//! interquartile range under a tenth of the median) or a time cap is reached, in which case the
//! point is marked noisy. Then the crossover: the value where the GPU's samples/s first reach
//! the CPU's, interpolated on log scales between the two measured points around it.
//!
//! The caller runs the devices one at a time, so that neither shares its cores with the other:
//! a GPU slowed by the CPU's work would be shown as "the GPU".

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;

use super::{flops_per_step, median_of_sorted};
use crate::backend::{Backend, BackendError};
use crate::device::Device;
use crate::precision::Precision;
use crate::train::{Runner, Session, SessionError, TrainConfig};

/// The setting a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Parameter {
    /// Rows per batch.
    Batch,
    /// The width of every hidden layer.
    Width,
    /// The number of hidden layers (each as wide as the first).
    Depth,
    /// The CPU's kernel threads (the GPU does not take part).
    Threads,
    /// Data-loader worker threads.
    Workers,
    /// The number format.
    Precision,
}

impl Parameter {
    /// Every parameter, in the order the tab lists them.
    pub const ALL: [Parameter; 6] = [
        Parameter::Batch,
        Parameter::Width,
        Parameter::Depth,
        Parameter::Threads,
        Parameter::Workers,
        Parameter::Precision,
    ];

    /// The name used on the command line, in JSON and in CSV columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Parameter::Batch => "batch",
            Parameter::Width => "width",
            Parameter::Depth => "depth",
            Parameter::Threads => "threads",
            Parameter::Workers => "workers",
            Parameter::Precision => "precision",
        }
    }

    /// Parses a name as [`Parameter::as_str`] writes it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// Whether `device` takes part in a sweep of this parameter.
    pub fn applies_to(self, device: Device) -> bool {
        self != Parameter::Threads || device == Device::Cpu
    }
}

/// One value of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A count: rows, units, layers, threads or workers.
    Count(usize),
    /// A number format.
    Precision(Precision),
}

impl Value {
    /// The value on a numeric axis, if it has one.
    pub fn number(self) -> Option<f64> {
        match self {
            Value::Count(n) => Some(n as f64),
            Value::Precision(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Count(n) => write!(f, "{n}"),
            Value::Precision(p) => f.write_str(p.as_str()),
        }
    }
}

/// A sweep: which setting, and its values in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The setting.
    pub parameter: Parameter,
    /// Its values, in the order they are measured and plotted.
    pub values: Vec<Value>,
}

/// Most values one sweep measures.
pub const MAX_VALUES: usize = 32;

impl Sweep {
    /// Parses `batch=1,4,16` (or `precision=fp32,fp16`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let names: Vec<&str> = Parameter::ALL.iter().map(|p| p.as_str()).collect();
        let (name, list) = text.split_once('=').ok_or_else(|| {
            format!(
                "`{text}`: give a setting and its values, e.g. batch=1,4,16,64 (settings: {})",
                names.join(", ")
            )
        })?;
        let parameter = Parameter::parse(name.trim()).ok_or_else(|| {
            format!(
                "`{name}`: not a setting a sweep varies; choose {}",
                names.join(", ")
            )
        })?;
        let values = list
            .split(',')
            .map(|v| {
                let v = v.trim();
                if parameter == Parameter::Precision {
                    Precision::parse(v).map(Value::Precision).ok_or_else(|| {
                        format!("`{v}`: not a precision; choose fp32, fp16, bf16 or mixed")
                    })
                } else {
                    v.parse::<usize>()
                        .map(Value::Count)
                        .map_err(|e| format!("`{v}`: {e}; give whole numbers, e.g. 1,4,16"))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if parameter == Parameter::Threads {
            for v in &values {
                if let Value::Count(n) = v {
                    crate::backend::cpu::check_threads(*n)?;
                }
            }
        }
        if values.is_empty() || values.len() > MAX_VALUES {
            return Err(format!(
                "{} values: give between 1 and {MAX_VALUES}",
                values.len()
            ));
        }
        Ok(Self { parameter, values })
    }

    /// The sessions of the sweep, one per value, on `session`'s data (regenerated with more
    /// samples where the generator's are too few for the largest batch; the note says so).
    /// A value whose settings are refused gets its reason instead.
    pub fn sessions(
        &self,
        session: &Session,
    ) -> (Vec<Result<Session, SessionError>>, Option<Raised>) {
        let mut base = session.clone();
        let mut note = None;
        let largest_batch = self
            .values
            .iter()
            .filter_map(|v| match (self.parameter, v) {
                // A batch the settings refuse anyway raises nothing.
                (Parameter::Batch, Value::Count(n)) if *n <= crate::train::MAX_BATCH => Some(*n),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        if largest_batch > base.data.train_rows()
            && base.config.source == crate::data::source::DataSource::Generated
        {
            let share = f64::from(base.config.data.test_fraction);
            let wanted = (largest_batch as f64 / (1.0 - share)).ceil() as usize + 1;
            let mut config = base.config.clone();
            config.data.samples = wanted.min(crate::data::MAX_SAMPLES);
            if let Ok(bigger) = Session::new(config) {
                note = Some((base.config.data.samples, bigger.config.data.samples));
                base = bigger;
            }
        }
        let sessions = self
            .values
            .iter()
            .map(|&value| {
                let config = with_value(&base.config, self.parameter, value);
                config.validate(&base.data)?;
                Ok(Session {
                    config,
                    data: Arc::clone(&base.data),
                    epoch: base.epoch,
                })
            })
            .collect();
        (sessions, note)
    }
}

/// The generator's samples before and after a sweep raised them for its largest batch.
pub type Raised = (usize, usize);

/// `config` with `parameter` set to `value` (threads are the backend's, not the config's).
pub fn with_value(config: &TrainConfig, parameter: Parameter, value: Value) -> TrainConfig {
    let mut config = config.clone();
    match (parameter, value) {
        (Parameter::Batch, Value::Count(n)) => config.batch = n,
        (Parameter::Width, Value::Count(n)) => {
            let depth = config.hidden.len().max(1);
            config.hidden = vec![n; depth];
        }
        (Parameter::Depth, Value::Count(n)) => {
            let width = config.hidden.first().copied().unwrap_or(16);
            config.hidden = vec![width; n];
        }
        (Parameter::Workers, Value::Count(n)) => config.pipeline.loader.workers = n,
        (Parameter::Precision, Value::Precision(p)) => config.precision = p,
        _ => {}
    }
    config
}

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
}

/// The points as CSV in the style of hyperfine's export: one row per device and value, the
/// swept setting as `parameter_<name>`, units in the column names, full precision, and the
/// `source` of each row: `measured` here (`sweep_sim::SimulatedSweep::csv_rows` adds
/// `simulated` ones).
pub fn to_csv(parameter: Parameter, points: &[Point]) -> String {
    use std::fmt::Write as _;
    let mut text = format!(
        "device,parameter_{},samples_per_s,step_time_median_ms,step_time_min_ms,\
         step_time_max_ms,step_time_iqr_pct,noisy,runs,steps_per_run,gflop_per_s,source\n",
        parameter.as_str()
    );
    for p in points {
        // Writing to a String cannot fail.
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{},{},{},{},measured",
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
    text
}

/// The interquartile range of sorted values (linear interpolation between order statistics).
pub fn iqr_of_sorted(v: &[f64]) -> f64 {
    let quantile = |q: f64| {
        if v.is_empty() {
            return f64::NAN;
        }
        let at = q * (v.len() - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
    };
    quantile(0.75) - quantile(0.25)
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
    measure_point_until(backend, session, (parameter, value), plan, &never)
        .map(|point| point.expect("never cancelled"))
}

/// As [`measure_point`], stopping between two timed runs once `cancel` is set (`None`).
pub fn measure_point_until(
    backend: &mut dyn Backend,
    session: &Session,
    (parameter, value): (Parameter, Value),
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
    let (median, iqr, noisy) = loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let run = Instant::now();
        for _ in 0..steps_per_run {
            runner.step(backend, false)?;
        }
        // Reading the loss waits for the device: the run ends when its work has.
        runner.log(backend)?;
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
    let batch = session.config.batch;
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
    Ok(Some(Point {
        dispatches_per_step,
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

/// What a sweep reports as it goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    /// A point was measured.
    Point(Point),
    /// A value could not be measured on a device, and why.
    Skipped {
        /// The device.
        device: Device,
        /// The value.
        value: Value,
        /// Why, in words.
        why: crate::i18n::Said,
    },
    /// A device could not be opened or does not take part, and why.
    DeviceLeftOut {
        /// The device.
        device: Device,
        /// Why, in words.
        why: crate::i18n::Said,
    },
    /// The GPU that was measured is a software adapter.
    SoftwareGpu,
    /// The generator's samples were raised so that the training part holds the largest batch.
    SamplesRaised {
        /// Samples before.
        from: usize,
        /// Samples after.
        to: usize,
    },
}

/// Something the Experiments tab says of a sweep besides its points.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// The generator's samples were raised to fit the largest batch.
    SamplesRaised {
        /// Samples before.
        from: usize,
        /// Samples after.
        to: usize,
    },
    /// A value could not be measured on a device (the reason, as the backend or the settings
    /// check said it).
    Skipped {
        /// The device.
        device: Device,
        /// The value.
        value: Value,
        /// Why.
        why: crate::i18n::Said,
    },
    /// A device was left out (it could not be opened, or the setting is the CPU's only).
    LeftOut {
        /// The device.
        device: Device,
        /// Why.
        why: crate::i18n::Said,
    },
    /// The user cancelled the sweep.
    Cancelled,
    /// Training was started again, which cancelled the sweep.
    CancelledByRun,
}

/// Measures every value of `sweep` on each of `devices` in turn (all of the first device's
/// points, then the next device's: never two at once), opening each device's backend with
/// `open(device, cpu_threads)`; stops between runs once `cancel` is set.
pub fn run(
    sweep: &Sweep,
    session: &Session,
    devices: &[Device],
    plan: PointPlan,
    open: &dyn Fn(Device, Option<usize>) -> Result<Box<dyn Backend>, crate::i18n::Said>,
    cancel: &AtomicBool,
    report: &mut dyn FnMut(Report),
) {
    let (sessions, raised) = sweep.sessions(session);
    if let Some((from, to)) = raised {
        report(Report::SamplesRaised { from, to });
    }
    for &device in devices {
        if !sweep.parameter.applies_to(device) {
            report(Report::DeviceLeftOut {
                device,
                why: crate::i18n::Said::new(
                    crate::i18n::ErrKey::CpuOnlySetting,
                    &[("setting", &sweep.parameter.as_str())],
                ),
            });
            continue;
        }
        for (&value, session) in sweep.values.iter().zip(&sessions) {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            let session = match session {
                Ok(session) => session,
                Err(e) => {
                    let why = e.said();
                    report(Report::Skipped { device, value, why });
                    continue;
                }
            };
            let threads = match (sweep.parameter, value) {
                (Parameter::Threads, Value::Count(n)) => Some(n),
                _ => None,
            };
            let mut backend = match open(device, threads) {
                Ok(backend) => backend,
                Err(why) => {
                    report(Report::DeviceLeftOut { device, why });
                    break;
                }
            };
            if backend.adapter_summary().is_some_and(|a| a.software) {
                report(Report::SoftwareGpu);
            }
            let mut measured = Ok(None);
            let key = (sweep.parameter, value);
            backend.enter(&mut |b| {
                measured = measure_point_until(b, session, key, plan, cancel);
            });
            match measured {
                Ok(Some(point)) => report(Report::Point(point)),
                Ok(None) => return,
                Err(e) => {
                    let why = e.said();
                    report(Report::Skipped { device, value, why });
                }
            }
        }
    }
}

/// A sweep's results so far: what the Experiments tab shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    /// The sweep.
    pub sweep: Sweep,
    /// The points measured, in the order they were.
    pub points: Vec<Point>,
    /// Values and devices left out, and why; what the sweep changed; how it ended.
    pub notes: Vec<Note>,
    /// Whether the GPU measured is a software adapter.
    pub software_gpu: bool,
    /// Points expected in all (values × devices taking part).
    pub expected: usize,
    /// The sweep has ended (finished, failed or cancelled).
    pub ended: bool,
}

impl Results {
    /// Empty results of `sweep` on `devices`.
    pub fn new(sweep: Sweep, devices: &[Device]) -> Self {
        let taking_part = devices
            .iter()
            .filter(|&&d| sweep.parameter.applies_to(d))
            .count();
        Self {
            expected: sweep.values.len() * taking_part,
            sweep,
            points: Vec::new(),
            notes: Vec::new(),
            software_gpu: false,
            ended: false,
        }
    }

    /// Takes in one report.
    pub fn apply(&mut self, report: Report) {
        match report {
            Report::Point(point) => self.points.push(point),
            Report::Skipped { device, value, why } => {
                self.expected = self.expected.saturating_sub(1);
                self.notes.push(Note::Skipped { device, value, why });
            }
            Report::DeviceLeftOut { device, why } => {
                let measured = self.points.iter().filter(|p| p.device == device).count();
                let left = self.sweep.values.len().saturating_sub(measured);
                self.expected = self.expected.saturating_sub(left);
                self.notes.push(Note::LeftOut { device, why });
            }
            Report::SoftwareGpu => self.software_gpu = true,
            Report::SamplesRaised { from, to } => self.notes.push(Note::SamplesRaised { from, to }),
        }
    }

    /// The share of the expected points measured, in `[0, 1]`.
    pub fn progress(&self) -> f32 {
        if self.expected == 0 {
            return 1.0;
        }
        (self.points.len() as f32 / self.expected as f32).min(1.0)
    }

    /// The point of `device` at `value`, if measured.
    pub fn point(&self, device: Device, value: Value) -> Option<&Point> {
        self.points
            .iter()
            .find(|p| p.device == device && p.value == value)
    }

    /// The crossover, when both devices measured a numeric parameter at some common value.
    pub fn crossover(&self) -> Option<Crossover> {
        let rate = |device, value| self.point(device, value).map(|p| p.samples_per_s);
        let rows: Vec<(f64, f64, f64)> = self
            .sweep
            .values
            .iter()
            .filter_map(|&v| Some((v.number()?, rate(Device::Cpu, v)?, rate(Device::Gpu, v)?)))
            .collect();
        crossover_of_rows(rows, self.software_gpu)
    }
}

/// The crossover of `(value, CPU samples/s, GPU samples/s)` rows in any order; none without
/// rows.
pub fn crossover_of_rows(mut rows: Vec<(f64, f64, f64)>, software_gpu: bool) -> Option<Crossover> {
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let values: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let cpu: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let gpu: Vec<f64> = rows.iter().map(|r| r.2).collect();
    Some(crossover(&values, &cpu, &gpu, software_gpu))
}

/// Where the GPU's samples/s first reach the CPU's.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Crossover {
    /// Between two measured values, interpolated on log scales.
    At {
        /// The interpolated value of the parameter.
        value: f64,
        /// The measured values around it.
        between: [f64; 2],
    },
    /// The GPU was at least as fast from the first value measured.
    FromTheStart {
        /// The first value.
        value: f64,
    },
    /// The GPU did not reach the CPU in the range measured.
    NotReached {
        /// Why, in words (English; the window words it from `reason`).
        why: String,
        /// Why, for the window to word in its language.
        #[serde(skip)]
        reason: Shortfall,
    },
}

/// Why no crossover was found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shortfall {
    /// No value was measured on both devices.
    NothingToCompare,
    /// The GPU is a software adapter: it runs on the CPU's own cores.
    SoftwareGpu,
    /// The GPU stayed slower: its best share of the CPU's samples/s, and where.
    StayedSlower {
        /// The best GPU/CPU ratio, in percent.
        best_pct: f64,
        /// The value where it was reached.
        at: f64,
    },
}

impl std::fmt::Display for Crossover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Crossover::At { value, between } => write!(
                f,
                "the GPU overtakes the CPU at about {value:.3} (interpolated between the measured \
                 {} and {})",
                between[0], between[1]
            ),
            Crossover::FromTheStart { value } => write!(
                f,
                "the GPU is at least as fast as the CPU from the first value measured ({value})"
            ),
            Crossover::NotReached { why, .. } => write!(f, "no crossover in this range: {why}"),
        }
    }
}

/// The crossover of two devices' samples/s measured at the same `values` (ascending), or why
/// there is none. `software_gpu` names the usual reason on a machine without a real GPU.
pub fn crossover(values: &[f64], cpu: &[f64], gpu: &[f64], software_gpu: bool) -> Crossover {
    let ratios: Vec<(f64, f64)> = values
        .iter()
        .zip(cpu.iter().zip(gpu))
        .filter(|(v, (c, g))| **v > 0.0 && **c > 0.0 && **g > 0.0)
        .map(|(&v, (&c, &g))| (v, g / c))
        .collect();
    let Some(first) = ratios.iter().position(|&(_, r)| r >= 1.0) else {
        let best = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        let reason = match best {
            None => Shortfall::NothingToCompare,
            Some(_) if software_gpu => Shortfall::SoftwareGpu,
            Some(&(at, r)) => Shortfall::StayedSlower {
                best_pct: 100.0 * r,
                at,
            },
        };
        let why = match reason {
            Shortfall::NothingToCompare => "no value was measured on both devices".to_owned(),
            Shortfall::SoftwareGpu => "the GPU is a software adapter: it runs its kernels on the \
                                       CPU's own cores, so it cannot overtake them"
                .to_owned(),
            Shortfall::StayedSlower { best_pct, at } => format!(
                "the GPU stayed slower over the whole range (at best {best_pct:.0}% of the CPU's \
                 samples/s, at {at}); try larger values"
            ),
        };
        return Crossover::NotReached { why, reason };
    };
    if first == 0 {
        return Crossover::FromTheStart { value: ratios[0].0 };
    }
    let ((v0, r0), (v1, r1)) = (ratios[first - 1], ratios[first]);
    // log(ratio) is taken as linear in log(value) between the two points.
    let t = (0.0 - r0.ln()) / (r1.ln() - r0.ln());
    let value = (v0.ln() + t * (v1.ln() - v0.ln())).exp();
    Crossover::At {
        value,
        between: [v0, v1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crossover_is_interpolated_on_log_scales() {
        // The GPU's share doubles with every fourfold batch: 1/4 at 16, 1/2 at 64, 1 at 256.
        let values = [16.0, 64.0, 256.0, 1024.0];
        let cpu = [1000.0, 1000.0, 1000.0, 1000.0];
        let gpu = [250.0, 500.0, 1000.0, 2000.0];
        // Reached exactly at a measured value: that value.
        let Crossover::At { value, between } = crossover(&values, &cpu, &gpu, false) else {
            panic!("a crossover");
        };
        assert!((value - 256.0).abs() < 1e-9, "{value}");
        assert_eq!(between, [64.0, 256.0]);
        // Half-way in log ratio between 64 (½) and 256 (2): at 128.
        let gpu = [250.0, 500.0, 2000.0, 4000.0];
        let Crossover::At { value, between } = crossover(&values, &cpu, &gpu, false) else {
            panic!("a crossover");
        };
        assert!((value - 128.0).abs() < 1e-9, "{value}");
        assert_eq!(between, [64.0, 256.0]);
        assert_eq!(
            crossover(&values, &cpu, &[1500.0; 4], false),
            Crossover::FromTheStart { value: 16.0 }
        );
        let never = crossover(&values, &cpu, &[100.0, 200.0, 400.0, 800.0], false);
        assert!(
            never
                .to_string()
                .contains("at best 80% of the CPU's samples/s, at 1024"),
            "{never}"
        );
        let software = crossover(&values, &cpu, &[100.0; 4], true);
        assert!(
            software.to_string().contains("software adapter"),
            "{software}"
        );
    }

    #[test]
    fn sweeps_parse_and_say_what_was_wrong() {
        let s = Sweep::parse("batch=1,4,16").expect("valid");
        assert_eq!(s.parameter, Parameter::Batch);
        assert_eq!(
            s.values,
            [Value::Count(1), Value::Count(4), Value::Count(16)]
        );
        let p = Sweep::parse("precision=fp32,bf16").expect("valid");
        assert_eq!(p.values[1], Value::Precision(Precision::Bf16));
        for (bad, says) in [
            ("batch", "give a setting and its values"),
            ("colour=1,2", "not a setting a sweep varies"),
            ("batch=1,x", "`x`"),
            ("precision=fp8", "not a precision"),
            ("threads=1,5000", "5000 threads: choose at most 1024"),
        ] {
            let err = Sweep::parse(bad).expect_err(bad);
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(iqr_of_sorted(&[1.0, 2.0, 3.0, 4.0, 5.0]) == 2.0);
    }

    #[test]
    fn each_value_changes_only_its_setting() {
        let config = TrainConfig::default();
        assert_eq!(
            with_value(&config, Parameter::Width, Value::Count(64)).hidden,
            [64, 64]
        );
        assert_eq!(
            with_value(&config, Parameter::Depth, Value::Count(3)).hidden,
            [16, 16, 16]
        );
        let workers = with_value(&config, Parameter::Workers, Value::Count(2));
        assert_eq!(workers.pipeline.loader.workers, 2);
        assert_eq!(workers.hidden, config.hidden);
    }
}
