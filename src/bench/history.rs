//! The history of finished runs and sweeps: each with its settings and headline figures, kept
//! across restarts, so a student compares today's runs without remembering numbers.
//!
//! A run is finished when a new run replaces it (Reset, a restored entry, a rebuilt thread
//! pool) or when the window closes; a sweep when it ends. Every figure here was measured in the
//! run it belongs to; nothing is estimated.
//!
//! The history is stored as JSON, read entry by entry: an entry that cannot be read (a damaged
//! or hand-edited file, an older version's format) is left out and counted, never costing the
//! others.

use serde::{Deserialize, Serialize};

use super::sweep::{Crossover, Results};
use crate::data::Task;
use crate::device::Device;
use crate::train::{DeviceRun, DeviceStatus, Sharing, TrainConfig};

/// Most entries kept: the oldest go first.
pub const MAX_ENTRIES: usize = 200;

/// One finished run or sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its number, unique in the history, growing with time.
    pub id: u64,
    /// When it finished, in seconds since the Unix epoch.
    pub finished: u64,
    /// The data set's name.
    pub data: String,
    /// The settings.
    pub config: TrainConfig,
    /// Which devices took part, CPU then GPU.
    pub enabled: [bool; 2],
    /// A run or a sweep, and what it measured.
    pub what: What,
}

/// What an entry measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum What {
    /// A side-by-side run.
    Run {
        /// How the devices shared the machine; `None` when only one device trained.
        sharing: Option<Sharing>,
        /// Each device's figures.
        devices: Vec<RunFigures>,
    },
    /// A sweep of the Experiments tab.
    Sweep(SweepFigures),
}

/// One device's figures of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Which device.
    pub device: Device,
    /// The backend's name (the adapter, for the GPU).
    pub name: String,
    /// Whether the GPU was a software adapter.
    pub software: bool,
    /// Steps trained.
    pub steps: u64,
    /// Mean samples per second over the run's training time (evaluations and waits for a turn
    /// left out).
    pub samples_per_s: Option<f64>,
    /// Mean step time over the same time, ms.
    pub step_time_ms: Option<f64>,
    /// The step of the last evaluation (evaluations come twice a second while training).
    #[serde(default)]
    pub eval_step: Option<u64>,
    /// Test-set loss at the last evaluation.
    pub test_loss: Option<f32>,
    /// Test-set accuracy (classification) or R² (regression) at the last evaluation.
    pub test_metric: Option<f32>,
    /// Whether `test_metric` is R².
    pub r2: bool,
    /// Wall time to the stop condition, end to end, when the run had one and reached it.
    pub time_to_target_s: Option<f64>,
    /// Peak bytes allocated on the device.
    pub peak_memory: Option<u64>,
    /// Joules a step over the run, samples per joule, and whether a counter measured them or
    /// they were estimated (files from before energy have none).
    #[serde(default)]
    pub energy_j: Option<f64>,
    #[serde(default)]
    pub samples_per_j: Option<f64>,
    #[serde(default)]
    pub energy_source: Option<crate::energy::EnergySource>,
}

impl RunFigures {
    /// The figures of `run`, trained `batch` rows a step; `None` if it never reported a step.
    pub fn of(run: &DeviceRun, batch: usize) -> Option<Self> {
        let log = run.last_log.as_ref()?;
        let samples_per_s = run.mean_samples_per_s();
        let eval = run.last_eval.as_ref();
        let (name, software) = match &run.status {
            DeviceStatus::Ready { name, adapter, .. } => (
                adapter.as_ref().map_or(name.clone(), |a| a.name.clone()),
                adapter.as_ref().is_some_and(|a| a.software),
            ),
            _ => (String::new(), false),
        };
        Some(Self {
            device: run.device,
            name,
            software,
            steps: log.step,
            samples_per_s,
            step_time_ms: samples_per_s.map(|s| batch as f64 / s * 1e3),
            eval_step: eval.map(|e| e.step),
            test_loss: eval.map(|e| e.test.loss),
            test_metric: eval.and_then(|e| e.test.accuracy.or(e.test.r2)),
            r2: eval.is_some_and(|e| e.test.r2.is_some()),
            time_to_target_s: run.reached.map(|r| r.seconds),
            peak_memory: run.memory.map(|m| m.peak_allocated_bytes),
            energy_j: log
                .energy
                .as_ref()
                .map(|e| e.total_j / log.step.max(1) as f64),
            samples_per_j: log
                .energy
                .as_ref()
                .filter(|e| e.total_j > 0.0)
                .map(|e| (log.step as f64 * batch as f64) / e.total_j),
            energy_source: log.energy.as_ref().map(|e| e.source),
        })
    }
}

/// One point of a sweep, as kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Which device.
    pub device: Device,
    /// The value, as the sweep writes it.
    pub value: String,
    /// Samples per second at the median step time.
    pub samples_per_s: f64,
    /// Median step time, ms.
    pub step_time_ms: f64,
    /// Interquartile range over the median, percent.
    pub iqr_pct: f64,
    /// Whether the point's runs did not agree within the cap.
    pub noisy: bool,
}

/// A sweep's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepFigures {
    /// The setting varied (as the command line names it).
    pub parameter: String,
    /// The points measured.
    pub points: Vec<SweepPoint>,
    /// Where the GPU's samples/s reached the CPU's, if they did in the range.
    pub crossover: Option<f64>,
    /// Whether the GPU was a software adapter.
    pub software_gpu: bool,
    /// Whether it ended before every point was measured.
    pub incomplete: bool,
}

impl SweepFigures {
    /// What `results` measured.
    pub fn of(results: &Results) -> Self {
        let crossover = match results.crossover() {
            Some(Crossover::At { value, .. } | Crossover::FromTheStart { value }) => Some(value),
            _ => None,
        };
        Self {
            parameter: results.sweep.parameter.as_str().to_owned(),
            points: results
                .points
                .iter()
                .map(|p| SweepPoint {
                    device: p.device,
                    value: p.value.to_string(),
                    samples_per_s: p.samples_per_s,
                    step_time_ms: p.step_time_ms,
                    iqr_pct: p.iqr_pct,
                    noisy: p.noisy,
                })
                .collect(),
            crossover,
            software_gpu: results.software_gpu,
            incomplete: results.points.len() < results.expected,
        }
    }

    /// The best samples/s `device` reached, and at which value.
    pub fn best(&self, device: Device) -> Option<(&str, f64)> {
        self.points
            .iter()
            .filter(|p| p.device == device)
            .max_by(|a, b| a.samples_per_s.total_cmp(&b.samples_per_s))
            .map(|p| (p.value.as_str(), p.samples_per_s))
    }
}

impl Entry {
    /// A run's entry, if any device of it reported a step.
    pub fn run(
        config: &TrainConfig,
        data: &str,
        enabled: [bool; 2],
        runs: &[DeviceRun],
        sharing: Sharing,
    ) -> Option<Self> {
        let devices: Vec<RunFigures> = runs
            .iter()
            .filter(|r| enabled[r.device as usize])
            .filter_map(|r| RunFigures::of(r, config.effective_batch()))
            .collect();
        (!devices.is_empty()).then(|| Self {
            id: 0,
            finished: now_s(),
            data: data.to_owned(),
            config: config.clone(),
            enabled,
            what: What::Run {
                // One device alone shares nothing.
                sharing: (devices.len() == 2).then_some(sharing),
                devices,
            },
        })
    }

    /// A sweep's entry, if it measured a point.
    pub fn sweep(
        config: &TrainConfig,
        data: &str,
        enabled: [bool; 2],
        results: &Results,
    ) -> Option<Self> {
        (!results.points.is_empty()).then(|| Self {
            id: 0,
            finished: now_s(),
            data: data.to_owned(),
            config: config.clone(),
            enabled,
            what: What::Sweep(SweepFigures::of(results)),
        })
    }

    /// One device's figures, for a run.
    pub fn figures(&self, device: Device) -> Option<&RunFigures> {
        match &self.what {
            What::Run { devices, .. } => devices.iter().find(|f| f.device == device),
            What::Sweep(_) => None,
        }
    }

    /// Whether the data set of the entry was a regression task (its metric is R²).
    pub fn task(&self) -> Option<Task> {
        match &self.what {
            What::Run { devices, .. } => devices.first().map(|f| {
                if f.r2 {
                    Task::Regression
                } else {
                    Task::Classification
                }
            }),
            What::Sweep(_) => None,
        }
    }
}

/// The entries, oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// The entries, oldest first.
    pub entries: Vec<Entry>,
}

impl History {
    /// Adds `entry` under a new number, dropping the oldest past [`MAX_ENTRIES`]; returns the
    /// number.
    pub fn push(&mut self, mut entry: Entry) -> u64 {
        entry.id = self.next_id();
        let id = entry.id;
        self.entries.push(entry);
        if self.entries.len() > MAX_ENTRIES {
            let extra = self.entries.len() - MAX_ENTRIES;
            self.entries.drain(..extra);
        }
        id
    }

    /// The number the next entry gets.
    pub fn next_id(&self) -> u64 {
        self.entries.iter().map(|e| e.id + 1).max().unwrap_or(1)
    }

    /// The entry numbered `id`.
    pub fn get(&self, id: u64) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// Deletes the entry numbered `id`; whether there was one.
    pub fn delete(&mut self, id: u64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.id != id);
        self.entries.len() != before
    }

    /// The history as stored, with `current` (the run in progress, not yet finished) last:
    /// a window closed mid-run keeps it.
    pub fn to_json(&self, current: Option<&Entry>) -> String {
        let mut entries: Vec<&Entry> = self.entries.iter().collect();
        let current = current.map(|c| Entry {
            id: self.next_id(),
            ..c.clone()
        });
        entries.extend(current.as_ref());
        serde_json::to_string(&entries).unwrap_or_else(|_| "[]".to_owned())
    }

    /// Reads a stored history: the entries that could be read, and how many could not (or
    /// the reader's words when nothing could).
    pub fn from_json(text: &str) -> (Self, Result<usize, String>) {
        let values: Vec<serde_json::Value> = match serde_json::from_str(text) {
            Ok(values) => values,
            Err(e) => return (Self::default(), Err(e.to_string())),
        };
        let total = values.len();
        let mut entries: Vec<Entry> = values
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect();
        let left_out = total - entries.len();
        // Numbers must be unique for Delete and Restore to mean one entry.
        entries.sort_by_key(|e| e.id);
        entries.dedup_by_key(|e| e.id);
        let over = entries.len().saturating_sub(MAX_ENTRIES);
        entries.drain(..over);
        (Self { entries }, Ok(left_out))
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_s() -> u64 {
    web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `secs` since the Unix epoch as `2026-12-03 15:04 UTC` (how the history file's readers and
/// exports write it).
pub fn format_utc(secs: u64) -> String {
    format_in(secs, &jiff::tz::TimeZone::UTC)
}

/// `secs` since the Unix epoch in this computer's time zone, as a reader expects a date on
/// screen: `2026-12-03 23:04 CST` (UTC where the zone cannot be told).
pub fn format_local(secs: u64) -> String {
    format_in(secs, &jiff::tz::TimeZone::system())
}

/// `secs` since the Unix epoch in `zone`, with the zone's abbreviation.
pub fn format_in(secs: u64, zone: &jiff::tz::TimeZone) -> String {
    let Ok(at) = jiff::Timestamp::from_second(i64::try_from(secs).unwrap_or(i64::MAX)) else {
        return secs.to_string();
    };
    at.to_zoned(zone.clone())
        .strftime("%Y-%m-%d %H:%M %Z")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::StepLog;
    use crate::train::worker::{Event, EventKind};

    fn trained_run(device: Device, steps: u64) -> DeviceRun {
        let mut run = DeviceRun::new(device);
        for step in [steps / 2, steps] {
            run.apply(Event {
                device,
                generation: 0,
                kind: EventKind::Log(Box::new(StepLog {
                    device,
                    step,
                    epoch: 0,
                    batch: 32,
                    micro_batch: 32,
                    energy: None,
                    loss: 0.5,
                    accuracy: Some(0.5),
                    mae: None,
                    samples_per_s: 3200.0,
                    tokens_per_s: None,
                    step_time_ms: 10.0,
                    loss_scale: None,
                    skipped_steps: None,
                    kernel_time_ms: None,
                    kernels: None,
                    rounding: None,
                })),
            });
        }
        run
    }

    fn entry() -> Entry {
        let runs = [trained_run(Device::Cpu, 100), DeviceRun::new(Device::Gpu)];
        let config = TrainConfig::default();
        Entry::run(&config, "spiral", [true, true], &runs, Sharing::Together).expect("entry")
    }

    #[test]
    fn a_run_keeps_its_mean_speed_and_leaves_out_a_device_that_never_stepped() {
        let entry = entry();
        let What::Run { devices, sharing } = &entry.what else {
            panic!("a run");
        };
        assert_eq!(*sharing, None, "the GPU never stepped: nothing was shared");
        assert_eq!(devices.len(), 1, "the GPU reported no step");
        let cpu = &devices[0];
        assert_eq!(cpu.steps, 100);
        // 100 steps of 10 ms at 3200 samples/s each.
        assert!((cpu.samples_per_s.expect("speed") - 3200.0).abs() < 1e-6);
        let batch = TrainConfig::default().batch as f64;
        assert!((cpu.step_time_ms.expect("step") - batch / 3200.0 * 1e3).abs() < 1e-9);
        // Nothing reported: no entry.
        let idle = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
        let config = TrainConfig::default();
        assert!(Entry::run(&config, "spiral", [true, true], &idle, Sharing::Together).is_none());
    }

    #[test]
    fn entries_are_numbered_deleted_and_capped() {
        let mut history = History::default();
        let a = history.push(entry());
        let b = history.push(entry());
        assert!(b > a);
        assert!(history.delete(a));
        assert!(!history.delete(a));
        assert_eq!(history.entries.len(), 1);
        for _ in 0..MAX_ENTRIES + 5 {
            history.push(entry());
        }
        assert_eq!(history.entries.len(), MAX_ENTRIES);
        // The oldest went.
        assert!(history.get(b).is_none());
    }

    #[test]
    fn a_stored_history_comes_back_and_a_damaged_entry_costs_only_itself() {
        let mut history = History::default();
        history.push(entry());
        let mut current = entry();
        current.data = "moons".into();
        let text = history.to_json(Some(&current));
        let (back, left_out) = History::from_json(&text);
        assert_eq!(left_out, Ok(0));
        assert_eq!(back.entries.len(), 2);
        assert_eq!(back.entries[0], history.entries[0]);
        assert_eq!(back.entries[1].data, "moons");
        // One entry damaged by hand: the other stays.
        let mut values: Vec<serde_json::Value> = serde_json::from_str(&text).expect("json");
        values[0]["what"] = serde_json::json!({"kind": "teleport"});
        let (back, left_out) = History::from_json(&serde_json::to_string(&values).expect("json"));
        assert_eq!(left_out, Ok(1));
        assert_eq!(back.entries.len(), 1);
        assert_eq!(back.entries[0].data, "moons");
        // Not a history at all.
        let (back, left_out) = History::from_json("{ truncated");
        assert!(back.entries.is_empty());
        assert!(left_out.is_err());
    }

    #[test]
    fn times_are_written_as_utc_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_796_310_000), "2026-12-03 15:00 UTC");
        // On screen, the reader's own zone: Beijing is 8 hours ahead.
        let shanghai = jiff::tz::TimeZone::get("Asia/Shanghai").expect("the tz database");
        assert_eq!(format_in(1_796_310_000, &shanghai), "2026-12-03 23:00 CST");
    }
}
