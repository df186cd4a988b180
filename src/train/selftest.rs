//! A self-test: a named configuration trained a fixed number of steps on each device, reported
//! as one JSON line. The browser's page (`index.html?selftest=NAME`) and the desktop's
//! `batchscope selftest NAME` write the same line from the same configurations, so a script can
//! check that the page trains, on both devices, what the desktop build trains.
//!
//! The loop here is the blocking one (the desktop's, and the CPU's in a browser). A browser's
//! GPU cannot block on a read: its loop (in `web/`) runs [`Runner::step`] without a sync and
//! awaits the statistics' read, then hands them to [`Runner::take_read`].

use serde::Serialize;
use web_time::Instant;

use super::config::TrainConfig;
use super::runner::Runner;
use super::session::{Session, SessionError};
use crate::backend::Backend;
use crate::backend::gpu::GpuBackend;
use crate::backend::{Activation, Instrumented};
use crate::data::source::DataSource;
use crate::device::Device;

/// The line's prefix, which a headless browser's console is searched for.
pub const PREFIX: &str = "BATCHSCOPE_SELFTEST ";

/// Steps each device trains.
pub const STEPS: u64 = 50;

/// The configurations a self-test can name: the spiral MLP (the app's default) and a CNN on
/// the shipped 8×8 digits.
pub const NAMES: [&str; 2] = ["spiral", "digits-cnn"];

/// The settings a self-test named `name` trains with, if it is one of [`NAMES`].
pub fn config(name: &str) -> Option<TrainConfig> {
    let mut base = TrainConfig::default();
    // No spans: a self-test reports losses and rates, and starting a recording on a GPU reads
    // its clock back with a blocking wait (which a browser cannot do).
    base.pipeline.record = false;
    match name {
        "spiral" => Some(base),
        "digits-cnn" => Some(TrainConfig {
            source: DataSource::Shipped("digits".into()),
            conv: vec![8],
            hidden: Vec::new(),
            activation: Activation::Relu,
            batch: 64,
            ..base
        }),
        _ => None,
    }
}

/// The session of the self-test named `name`: its data made or read, its settings checked.
///
/// # Errors
/// When `name` is not one of [`NAMES`] (said with the names there are), or its data cannot be
/// read.
pub fn session(name: &str) -> Result<Session, String> {
    let config = config(name)
        .ok_or_else(|| format!("no self-test named `{name}`: choose {}", NAMES.join(" or ")))?;
    Session::new(config).map_err(|e: SessionError| e.to_string())
}

/// What one device did in a self-test.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceReport {
    /// `cpu` or `gpu`.
    pub device: String,
    /// The backend's name ("CPU (4 threads)", the adapter's).
    pub name: String,
    /// Kernel threads, on the CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Whether the GPU's kernels can be timed with timestamp queries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Whether the adapter rasterises in software (SwiftShader, lavapipe).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software: Option<bool>,
    /// The mean loss of each step's batch, step 1 first.
    pub losses: Vec<f32>,
    /// Rows trained per second over the steps, on this run's clock.
    pub samples_per_s: f64,
    /// Why the device did not train, if it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl DeviceReport {
    /// A device that could not train, and why.
    pub fn failed(device: Device, error: String) -> Self {
        Self {
            device: device.as_str().to_owned(),
            error: Some(error),
            ..Self::default()
        }
    }

    /// This device's description with why it stopped training.
    #[must_use]
    pub fn with_error(self, error: String) -> Self {
        Self {
            error: Some(error),
            ..self
        }
    }

    /// The device's description, before it trains.
    pub fn of(device: Device, backend: &dyn Backend) -> Self {
        let adapter = backend.adapter_summary();
        Self {
            device: device.as_str().to_owned(),
            name: backend.name(),
            threads: backend.threads(),
            timestamps: adapter.as_ref().map(|a| a.timestamps),
            software: adapter.as_ref().map(|a| a.software),
            ..Self::default()
        }
    }
}

/// A self-test's result: the configuration, and each device's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The configuration's name.
    pub name: String,
    /// Steps each device trained.
    pub steps: u64,
    /// Where it ran: `desktop` or `browser`.
    pub build: &'static str,
    /// Each device's result.
    pub devices: Vec<DeviceReport>,
}

impl Report {
    /// The line to print: [`PREFIX`], then the report as JSON.
    pub fn line(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        format!("{PREFIX}{json}")
    }
}

/// Trains `steps` steps of `session` on `backend`, reading the loss after each (the blocking
/// loop: every step ends in a sync).
///
/// # Errors
/// When the backend fails; the message says how.
pub fn train(
    device: Device,
    backend: &mut dyn Backend,
    session: &Session,
    steps: u64,
) -> Result<DeviceReport, String> {
    let mut report = DeviceReport::of(device, backend);
    let mut runner = Runner::new(backend, session).map_err(|e| e.to_string())?;
    let start = Instant::now();
    for _ in 0..steps {
        runner.step(backend, true).map_err(|e| e.to_string())?;
        let log = runner.log(backend).map_err(|e| e.to_string())?;
        report.losses.push(log.loss);
    }
    report.samples_per_s = rate(steps, runner.batch(), start);
    Ok(report)
}

/// [`train`] on a GPU without ever blocking the thread: each step is recorded and submitted
/// without a sync, then the loss statistics' read is awaited — the loop a browser runs, where
/// the GPU answers through the page's event loop (and the page stays responsive meanwhile).
/// The desktop runs the same future (its waits complete at once), which is how the tests check
/// it.
///
/// # Errors
/// When the GPU fails; the message says how.
pub async fn train_awaiting(
    gpu: &mut GpuBackend,
    session: &Session,
    steps: u64,
) -> Result<DeviceReport, String> {
    let mut report = DeviceReport::of(Device::Gpu, gpu);
    // Timed kernels are read back at the next wait, blockingly: not timed here (the report
    // says whether the adapter could time them).
    gpu.time_kernels(false);
    let mut runner = Runner::new(gpu, session).map_err(|e| e.to_string())?;
    let start = Instant::now();
    for _ in 0..steps {
        // A step that syncs would block on its read: this loop reads after the step instead.
        if runner.next_step_syncs(false) {
            return Err(
                "the self-test's GPU loop needs a sync policy that reads when shown".into(),
            );
        }
        runner.step(gpu, false).map_err(|e| e.to_string())?;
        let values = gpu
            .read_async(runner.stats_tensor())
            .await
            .map_err(|e| e.to_string())?;
        runner.take_read(gpu, &values).map_err(|e| e.to_string())?;
        let log = runner.log(gpu).map_err(|e| e.to_string())?;
        report.losses.push(log.loss);
    }
    report.samples_per_s = rate(steps, runner.batch(), start);
    Ok(report)
}

/// Rows per second of `steps` batches of `batch` rows since `start`.
pub fn rate(steps: u64, batch: usize, start: Instant) -> f64 {
    (steps * batch as u64) as f64 / start.elapsed().as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{OpenOptions, open};

    #[test]
    fn every_named_configuration_makes_a_session_and_others_are_refused() {
        for name in NAMES {
            assert!(session(name).is_ok(), "{name}");
        }
        let refused = session("resnet").expect_err("unknown name");
        assert!(refused.contains("spiral or digits-cnn"), "{refused}");
    }

    #[test]
    fn the_cpu_trains_the_spiral_and_its_loss_falls() {
        let session = session("spiral").expect("session");
        let mut cpu = open(Device::Cpu, &OpenOptions::default()).expect("cpu");
        let report = train(Device::Cpu, cpu.as_mut(), &session, 30).expect("trains");
        assert_eq!(report.losses.len(), 30);
        assert!(report.losses.iter().all(|l| l.is_finite()));
        let first = report.losses[..5].iter().sum::<f32>();
        let last = report.losses[25..].iter().sum::<f32>();
        assert!(last < first, "{:?}", report.losses);
        assert!(report.samples_per_s > 0.0);
        let line = Report {
            name: "spiral".into(),
            steps: 30,
            build: "desktop",
            devices: vec![report],
        }
        .line();
        assert!(line.starts_with(PREFIX));
        let json: serde_json::Value =
            serde_json::from_str(&line[PREFIX.len()..]).expect("JSON after the prefix");
        assert_eq!(
            json["devices"][0]["losses"].as_array().map(Vec::len),
            Some(30)
        );
    }
}
