//! Sweeps: one setting varied over a list of values, each value measured on a device as `bench`
//! measures it (a warm-up, then repeated timed runs), repeated until the runs agree (the
//! interquartile range under a tenth of the median) or a time cap is reached, in which case the
//! point is marked noisy. Then the crossover: the value where the GPU's samples/s first reach
//! the CPU's, interpolated on log scales between the two measured points around it.
//!
//! The caller runs the devices one at a time, so that neither shares its cores with the other:
//! a GPU slowed by the CPU's work would be shown as "the GPU".

use std::sync::Arc;
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
    ) -> (Vec<Result<Session, SessionError>>, Option<String>) {
        let mut base = session.clone();
        let mut note = None;
        let largest_batch = self
            .values
            .iter()
            .filter_map(|v| match (self.parameter, v) {
                (Parameter::Batch, Value::Count(n)) => Some(*n),
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
                note = Some(format!(
                    "the generator's samples were raised from {} to {} so that the training \
                     part holds the largest batch",
                    base.config.data.samples, bigger.config.data.samples
                ));
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
}

impl Default for PointPlan {
    fn default() -> Self {
        Self {
            warmup_s: 0.1,
            run_s: 0.05,
            min_runs: 5,
            max_iqr: 0.10,
            cap_s: 3.0,
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
    let mut runner = Runner::new(backend, session)?;
    let start = Instant::now();
    let mut warmup_steps = 0u64;
    while warmup_steps < 3 || start.elapsed().as_secs_f64() < plan.warmup_s {
        runner.step(backend, false)?;
        warmup_steps += 1;
    }
    runner.log(backend)?;
    let per_step_s = start.elapsed().as_secs_f64() / warmup_steps as f64;
    let steps_per_run = ((plan.run_s / per_step_s.max(1e-9)) as u64).clamp(1, 1_000_000);
    let measuring = Instant::now();
    let mut step_ms: Vec<f64> = Vec::new();
    let (median, iqr, noisy) = loop {
        let run = Instant::now();
        for _ in 0..steps_per_run {
            runner.step(backend, false)?;
        }
        // Reading the loss waits for the device: the run ends when its work has.
        runner.log(backend)?;
        step_ms.push(run.elapsed().as_secs_f64() * 1e3 / steps_per_run as f64);
        if step_ms.len() < plan.min_runs {
            continue;
        }
        let mut sorted = step_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let (median, iqr) = (median_of_sorted(&sorted), iqr_of_sorted(&sorted));
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
    Ok(Point {
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
    })
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
        /// Why, in words.
        why: String,
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
            Crossover::NotReached { why } => write!(f, "no crossover in this range: {why}"),
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
        let why = match best {
            None => "no value was measured on both devices".to_owned(),
            Some(_) if software_gpu => "the GPU is a software adapter: it runs its kernels on \
                                        the CPU's own cores, so it cannot overtake them"
                .to_owned(),
            Some(&(v, r)) => format!(
                "the GPU stayed slower over the whole range (at best {:.0}% of the CPU's \
                 samples/s, at {v}); try larger values",
                100.0 * r
            ),
        };
        return Crossover::NotReached { why };
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
        assert_eq!(
            crossover(&values, &cpu, &gpu, false),
            Crossover::At {
                value: 256.0,
                between: [64.0, 256.0]
            }
        );
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
