//! A sweep's values predicted on a hardware profile: the simulated line beside the measured
//! ones, so "this CPU, measured" can be set against "a T4, simulated" on one plot, and where the
//! simulated device overtakes the measured CPU. Every figure here is simulated.

use serde::Serialize;

use super::sweep::{Crossover, Results, Sweep, Value, crossover_of_rows};
use crate::device::Device;
use crate::sim::cost::{Bound, predict, step_ops};
use crate::sim::profile::Profile;
use crate::train::Session;

/// One value of a sweep, predicted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimPoint {
    /// Always true: nothing here was measured.
    pub simulated: bool,
    /// The value.
    pub value: Value,
    /// Predicted samples per second.
    pub samples_per_s: f64,
    /// Predicted step time, ms.
    pub step_time_ms: f64,
    /// What limits the predicted step.
    pub bound: Bound,
}

/// A sweep's values predicted on one profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimulatedSweep {
    /// The profile's id.
    pub profile: String,
    /// The profile's name.
    pub name: String,
    /// One point per value the settings allow.
    pub points: Vec<SimPoint>,
}

impl SimulatedSweep {
    /// Predicts each value of `sweep`, starting from `session`'s settings, on `profile`.
    pub fn new(sweep: &Sweep, session: &Session, profile: &Profile) -> Self {
        let (sessions, _) = sweep.sessions(session);
        let points = sweep
            .values
            .iter()
            .zip(&sessions)
            .filter_map(|(&value, s)| {
                let c = &s.as_ref().ok()?.config;
                let spec = c.model_spec(&s.as_ref().ok()?.data);
                let rule = c.recipe();
                let ops = step_ops(&spec, c.batch, rule, profile.device());
                let loader = (
                    f64::from(c.pipeline.loader.storage_latency_ms),
                    c.pipeline.loader.workers > 0,
                );
                let p = predict(profile, &ops, c.precision, c.batch, loader);
                Some(SimPoint {
                    simulated: true,
                    value,
                    samples_per_s: p.samples_per_s,
                    step_time_ms: p.step_time_ms,
                    bound: p.bound,
                })
            })
            .collect();
        Self {
            profile: profile.id.clone(),
            name: profile.name.clone(),
            points,
        }
    }

    /// Where the simulated device's samples/s reach the CPU's measured ones, at the values
    /// both have; none before the CPU has a point.
    pub fn crossover_with_measured_cpu(&self, measured: &Results) -> Option<Crossover> {
        let rows = self
            .points
            .iter()
            .filter_map(|p| {
                let cpu = measured.point(Device::Cpu, p.value)?;
                Some((p.value.number()?, cpu.samples_per_s, p.samples_per_s))
            })
            .collect();
        crossover_of_rows(rows, false)
    }

    /// The points as CSV rows in the columns of `sweep::to_csv`, the measurement-only columns
    /// empty and the source `simulated`.
    pub fn csv_rows(&self) -> String {
        use std::fmt::Write as _;
        let mut text = String::new();
        for p in &self.points {
            // Writing to a String cannot fail.
            let _ = writeln!(
                text,
                "{},{},{},{},,,,,,,,,,,simulated",
                self.profile, p.value, p.samples_per_s, p.step_time_ms
            );
        }
        text
    }
}
