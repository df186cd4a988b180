//! The Simulator tab's calibration: this machine's CPU and GPU adapter probed as `batchscope
//! calibrate` probes them, with training paused and one device at a time, their local profiles
//! added to the tab's list and kept between sessions.

use super::BatchScopeApp;
use crate::bench::calibrate_each::{CalibrationNews, CalibrationStatus, calibrate_each};
use crate::device::Device;
use crate::sim::profile::Profile;

impl BatchScopeApp {
    /// Pauses training and has the calibration start once every device has stopped.
    pub(super) fn calibrate_machine(&mut self) {
        self.pause();
        self.state.calibration = Some(CalibrationStatus::default());
        self.jobs.calibration = None;
        self.jobs.pending_calibration = true;
        self.start_pending_calibration();
    }

    /// Stops the calibration at its next probe; the profiles made stay.
    pub(super) fn cancel_calibration(&mut self) {
        if let Some(job) = &self.jobs.calibration {
            job.cancel();
        }
        self.jobs.pending_calibration = false;
        if let Some(status) = self.state.calibration.as_mut()
            && self.jobs.calibration.is_none()
        {
            status.cancelled = true;
            status.ended = true;
        }
    }

    /// Starts the calibration asked for once no device trains any more (called every frame).
    pub(super) fn start_pending_calibration(&mut self) {
        if !self.jobs.pending_calibration || self.state.is_running() {
            return;
        }
        self.jobs.pending_calibration = false;
        let devices: Vec<Device> = Device::ALL.into_iter().collect();
        let seconds = self.options.calibration_seconds;
        let options = self.measuring_options();
        let work = move |ctx: crate::job::JobContext<CalibrationNews>| {
            let open = |device| crate::backend::open(device, &options);
            calibrate_each(&devices, seconds, &open, ctx.cancel_flag(), &mut |news| {
                ctx.send(news);
            });
        };
        match crate::job::Job::spawn("calibration", self.notify(), work) {
            Ok(job) => self.jobs.calibration = Some(job),
            Err(e) => {
                if let Some(status) = self.state.calibration.as_mut() {
                    status.failures.push((
                        Device::Cpu,
                        crate::i18n::Said::new(
                            crate::i18n::ErrKey::NoCalibrationThread,
                            &[("why", &e)],
                        ),
                    ));
                    status.ended = true;
                }
            }
        }
    }

    /// Takes in the calibration's news: each profile made joins the list, in place of an
    /// older one of the same device.
    pub(super) fn poll_calibration(&mut self) {
        let Some(job) = self.jobs.calibration.as_mut() else {
            return;
        };
        let news = job.poll();
        let ended = job.is_finished();
        for n in news {
            if let Some(status) = self.state.calibration.as_mut() {
                status.apply(&n);
            }
            if let CalibrationNews::Done(profile) = n {
                self.state.add_local_profile(*profile);
            }
        }
        if ended {
            if let Some(status) = self.state.calibration.as_mut() {
                status.ended = true;
                status.doing = None;
            }
            self.jobs.calibration = None;
        }
    }

    /// The local profiles as stored.
    pub fn local_profiles_toml(&self) -> String {
        #[derive(serde::Serialize)]
        struct File<'a> {
            profile: Vec<&'a Profile>,
        }
        let profile = self
            .state
            .profiles
            .iter()
            .filter(|p| p.id.starts_with("local-"))
            .collect();
        toml::to_string(&File { profile }).unwrap_or_default()
    }
}

impl super::state::AppState {
    /// Adds a calibrated profile at the top of the list, replacing one with the same id.
    pub fn add_local_profile(&mut self, profile: Profile) {
        self.profiles.retain(|p| p.id != profile.id);
        let at = self
            .profiles
            .iter()
            .take_while(|p| p.id.starts_with("local-") && p.id < profile.id)
            .count();
        self.profiles.insert(at, profile);
    }
}
