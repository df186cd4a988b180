//! Starting the training workers, and sending them commands.

use std::sync::Arc;

use super::BatchScopeApp;
use crate::backend::OpenOptions;
use crate::device::Device;
use crate::job::Notify;
use crate::train::handle::Worker;
use crate::train::worker::{BackendFactory, Command};
use crate::train::{DeviceStatus, Sharing};

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
        let sharing = self.state.sharing;
        self.jobs.turns.set(sharing == Sharing::TakingTurns);
        for device in Device::ALL {
            let options = OpenOptions {
                cpu_threads: self.cpu_threads(),
                gpu: self.options.gpu.clone(),
                tuning: self.options.tuning_cache.clone(),
                ..OpenOptions::default()
            };
            let factory: BackendFactory = Box::new(move || crate::backend::open(device, &options));
            let turns = Arc::clone(&self.jobs.turns);
            match Worker::spawn(device, factory, turns, self.notify()) {
                Ok(worker) => {
                    if let Some(session) = &self.session {
                        let generation = self.state.generation;
                        worker.send(Command::Configure(Arc::clone(session), generation));
                    }
                    self.jobs.workers.push(worker);
                }
                Err(e) => {
                    self.state.runs[device as usize].status =
                        DeviceStatus::Unavailable(crate::i18n::Said::new(
                            crate::i18n::ErrKey::NoTrainingThread,
                            &[("why", &e)],
                        ));
                }
            }
        }
        self.state.show_sharing();
        // The columns describe the run the workers were given, restored settings included.
        let precision = self.session.as_ref().map(|s| s.config.precision);
        for run in &mut self.state.runs {
            run.enabled = self.state.settings.applied_enabled(run.device);
            if let Some(precision) = precision {
                run.precision = precision;
            }
        }
    }

    /// The CPU worker's kernel threads: as the command line says (0 = one per core), one fewer
    /// when a core is left for the GPU's submitting thread.
    fn cpu_threads(&self) -> usize {
        let threads = match self.options.cpu_threads {
            0 => crate::device::cores(),
            n => n,
        };
        self.state.sharing.cpu_threads(threads, true)
    }

    /// Switches how the devices share the machine. Turns switch at once; leaving a core, or
    /// taking it back, rebuilds the CPU's thread pool, so the workers start over on a new run
    /// of the same settings.
    pub(super) fn set_sharing(&mut self, sharing: Sharing) {
        let old = self.state.sharing;
        if old == sharing {
            return;
        }
        self.state.sharing = sharing;
        self.jobs.turns.set(sharing == Sharing::TakingTurns);
        self.state.show_sharing();
        if (old == Sharing::SpareCore) == (sharing == Sharing::SpareCore) || self.ctx.is_none() {
            return;
        }
        let keep_running = self.state.is_running();
        self.finish_run();
        // Dropping a worker stops and joins its thread.
        self.jobs.workers.clear();
        self.state.generation += 1;
        let generation = self.state.generation;
        let precision = self.state.settings.applied.precision;
        for run in &mut self.state.runs {
            let enabled = self.state.settings.applied_enabled(run.device);
            run.start_run(generation, precision, enabled);
            run.status = DeviceStatus::Starting;
        }
        self.start_workers();
        if keep_running {
            self.autorun_pending = true;
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
