//! Running a sweep: every value on each device in turn, never two devices at once, reported as
//! it goes; and the results so far, as the Experiments tab shows them.

use std::sync::atomic::{AtomicBool, Ordering};

use super::measure::{Point, PointPlan, measure_point_until};
use super::setting::{Parameter, Sweep, Value};
use super::stats::{Crossover, crossover_of_rows};
use crate::backend::Backend;
use crate::device::Device;
use crate::train::Session;

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
            let parameter = sweep.parameter;
            backend.enter(&mut |b| {
                measured = measure_point_until(b, session, parameter, value, plan, cancel);
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
