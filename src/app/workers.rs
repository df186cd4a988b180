//! Starting the training workers, and sending them commands.

use std::sync::Arc;

use super::BatchScopeApp;
use crate::backend::OpenOptions;
use crate::device::Device;
use crate::job::Notify;
use crate::train::DeviceStatus;
use crate::train::worker::{BackendFactory, Command, Worker};

impl BatchScopeApp {
    /// What wakes the window when a job has news.
    pub(super) fn notify(&self) -> Notify {
        let ctx = self.ctx.clone();
        Arc::new(move || {
            if let Some(ctx) = &ctx {
                ctx.request_repaint();
            }
        })
    }

    /// Starts one worker per device; each opens its backend on its own thread and is given the
    /// run in progress.
    pub(super) fn start_workers(&mut self) {
        for device in Device::ALL {
            let options = OpenOptions {
                cpu_threads: self.options.cpu_threads,
                gpu: self.options.gpu.clone(),
                ..OpenOptions::default()
            };
            let factory: BackendFactory = Box::new(move || crate::backend::open(device, &options));
            match Worker::spawn(device, factory, self.notify()) {
                Ok(worker) => {
                    if let Some(session) = &self.session {
                        let generation = self.state.generation;
                        worker.send(Command::Configure(Arc::clone(session), generation));
                    }
                    self.jobs.workers.push(worker);
                }
                Err(e) => {
                    self.state.runs[device as usize].status =
                        DeviceStatus::Unavailable(format!("cannot start the training thread: {e}"));
                }
            }
        }
        // The columns describe the run the workers were given, restored settings included.
        let precision = self.session.as_ref().map(|s| s.config.precision);
        for run in &mut self.state.runs {
            run.enabled = self.state.settings.applied_enabled(run.device);
            if let Some(precision) = precision {
                run.precision = precision;
            }
        }
    }

    /// Sends `command` to `device`'s worker, if the run uses the device.
    pub(super) fn send(&self, device: Device, command: impl Fn() -> Command) {
        if !self.state.settings.applied_enabled(device) {
            return;
        }
        for w in self.jobs.workers.iter().filter(|w| w.device() == device) {
            w.send(command());
        }
    }

    /// Sends `command` to every worker the run uses.
    pub(super) fn send_all(&self, command: impl Fn() -> Command) {
        for device in Device::ALL {
            self.send(device, &command);
        }
    }
}
