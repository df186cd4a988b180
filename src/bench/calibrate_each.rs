//! A calibration run from the window: each device in turn on a backend of its own, reporting
//! what it probes so the window can show progress, and stopping between probes on Cancel.

use std::sync::atomic::{AtomicBool, Ordering};

use super::calibrate::{
    CANCELLED, LoadWatch, Probing, affordable, calibrate, check, grid, grid_check,
};
use crate::backend::{Backend, BackendError};
use crate::device::Device;
use crate::sim::grid_check::GridCheck;
use crate::sim::profile::Profile;

/// What a calibration reports.
#[derive(Clone, Debug)]
pub enum CalibrationNews {
    /// What is being probed now, on which device.
    Step(Device, Probing),
    /// A device's local profile, measured.
    Done(Box<Profile>),
    /// A device could not be calibrated, and why.
    Failed(Device, crate::i18n::Said),
    /// The user cancelled it.
    Cancelled,
}

/// Where a calibration stands, for the window.
#[derive(Clone, Debug, Default)]
pub struct CalibrationStatus {
    /// The device being probed and what, while it runs.
    pub doing: Option<(Device, Probing)>,
    /// The names of the profiles made so far.
    pub made: Vec<String>,
    /// The devices that failed, and why.
    pub failures: Vec<(Device, crate::i18n::Said)>,
    /// Whether it has ended (finished, failed or cancelled).
    pub ended: bool,
    /// Whether the user cancelled it.
    pub cancelled: bool,
}

impl CalibrationStatus {
    /// Takes in one piece of news (a profile is kept by the caller).
    pub fn apply(&mut self, news: &CalibrationNews) {
        match news {
            CalibrationNews::Step(device, what) => self.doing = Some((*device, *what)),
            CalibrationNews::Done(profile) => self.made.push(profile.name.clone()),
            CalibrationNews::Failed(device, why) => self.failures.push((*device, why.clone())),
            CalibrationNews::Cancelled => {
                self.cancelled = true;
                self.ended = true;
            }
        }
    }
}

/// Calibrates `devices` one after the other (each has the machine to itself), each on a backend
/// of its own from `open`, with probes of `seconds_each`, stopping at the next probe once
/// `cancel` is set.
pub fn calibrate_each(
    devices: &[Device],
    seconds_each: f64,
    open: &dyn Fn(Device) -> Result<Box<dyn Backend>, crate::i18n::Said>,
    cancel: &AtomicBool,
    report: &mut (dyn FnMut(CalibrationNews) + Send),
) {
    for &device in devices {
        if cancel.load(Ordering::Relaxed) {
            report(CalibrationNews::Cancelled);
            return;
        }
        let mut backend = match open(device) {
            Ok(backend) => backend,
            Err(why) => {
                report(CalibrationNews::Failed(device, why));
                continue;
            }
        };
        let result = calibrate(backend.as_mut(), seconds_each, &mut |what| {
            report(CalibrationNews::Step(device, *what));
            !cancel.load(Ordering::Relaxed)
        });
        match result {
            Ok(calibration) => {
                let mut profile = calibration.profile;
                match check_grid(
                    backend.as_mut(),
                    &profile,
                    seconds_each,
                    cancel,
                    &mut |what| {
                        report(CalibrationNews::Step(device, what));
                    },
                ) {
                    // A grid with nothing under its limit here checked nothing: none said.
                    Ok(Some(check)) if check.configurations > 0 => {
                        profile.grid_check = Some(check);
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => {
                        report(CalibrationNews::Cancelled);
                        return;
                    }
                    Err(e) => {
                        report(CalibrationNews::Failed(device, e.said()));
                        continue;
                    }
                }
                report(CalibrationNews::Done(Box::new(profile)));
            }
            Err(e) if e.to_string().contains(CANCELLED) => {
                report(CalibrationNews::Cancelled);
                return;
            }
            Err(e) => report(CalibrationNews::Failed(device, e.said())),
        }
    }
}

/// The grid check of a fresh `profile`: the grid's configurations it predicts under 50 ms a
/// step, each measured in turn (`None`: cancelled between two).
fn check_grid(
    backend: &mut dyn Backend,
    profile: &Profile,
    seconds_each: f64,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Probing),
) -> Result<Option<GridCheck>, BackendError> {
    // Steps predicted over 50 ms are left out: the window waits for this.
    let (kept, _) = affordable(grid(), profile, 50.0);
    let mut watch = LoadWatch::start(backend);
    let mut rows = Vec::new();
    for (done, point) in kept.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        progress(Probing::Grid {
            done,
            of: kept.len(),
        });
        // Timed as `calibrate --grid` times its rows.
        rows.extend(check(
            backend,
            profile,
            std::slice::from_ref(point),
            seconds_each * 4.0,
            &mut watch,
            &mut |_| {},
        )?);
    }
    Ok(Some(grid_check(&rows, watch.finish(backend))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibration_reports_each_probe_and_stops_on_cancel() {
        let cancel = AtomicBool::new(false);
        let mut news = Vec::new();
        let open = |_| crate::backend::open(Device::Cpu, &crate::backend::OpenOptions::default());
        // Cancelled after the third piece of news: no profile, the status says cancelled.
        calibrate_each(&[Device::Cpu], 0.005, &open, &cancel, &mut |n| {
            news.push(n);
            if news.len() == 3 {
                cancel.store(true, Ordering::Relaxed);
            }
        });
        let mut status = CalibrationStatus::default();
        for n in &news {
            status.apply(n);
        }
        assert!(status.cancelled && status.ended, "{news:?}");
        assert!(status.made.is_empty());
        assert!(
            news.iter()
                .any(|n| matches!(n, CalibrationNews::Step(Device::Cpu, _)))
        );
        // A device that cannot open is a failure with its reason, not a stop.
        let cancel = AtomicBool::new(false);
        let mut news = Vec::new();
        calibrate_each(
            &[Device::Gpu],
            0.005,
            &|_| Err(crate::i18n::Said::verbatim("no adapter here")),
            &cancel,
            &mut |n| news.push(n),
        );
        assert!(
            matches!(&news[..], [CalibrationNews::Failed(Device::Gpu, why)] if why.to_string() == "no adapter here")
        );
    }
}
