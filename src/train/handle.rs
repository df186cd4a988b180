//! The UI's handle on a device's worker: a thread of its own on the desktop, or on a browser's
//! page (which has one thread) a loop that runs in slices of the page's frames.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::Duration;
use web_time::Instant;

use super::turns::Turns;
use super::worker::{BackendFactory, Command, Event, EventKind, Saved, State, obey, run};
use crate::backend::Backend;
use crate::device::Device;
use crate::job::{Job, JobContext, Notify};

/// How long a worker that shares the caller's thread trains in one poll: a browser's frame
/// has about 16 ms, and the page must draw in what is left.
const SLICE: Duration = Duration::from_millis(8);

/// The UI's handle on one worker: a [`Job`] that reports events, or a loop that runs in slices
/// on the caller's thread, and the commands it takes.
pub struct Worker {
    device: Device,
    commands: Sender<Command>,
    job: Option<Job<Event>>,
    local: Option<Cooperative>,
}

/// A worker without a thread of its own: each [`Worker::poll`] runs its loop for a slice of
/// time on the caller's thread. A browser's page has one thread (WebAssembly without shared
/// memory cannot start others), so there the workers take turns with the page's drawing; the
/// loop is the threaded worker's, told never to wait.
struct Cooperative {
    factory: Option<BackendFactory>,
    backend: Option<Box<dyn Backend>>,
    turns: Arc<Turns>,
    inbox: Receiver<Command>,
    ctx: JobContext<Event>,
    events: Receiver<Event>,
    saved: Saved,
    ended: bool,
    /// When the last slice of a run ended: the page's time between slices is not the CPU's,
    /// and is the GPU's while it holds its turn (its work goes on meanwhile).
    slice_ended: Option<Instant>,
}

impl Cooperative {
    /// Opens the backend the first time, then obeys commands (and trains while running) until
    /// `slice` has passed or there is nothing to do.
    fn run_slice(&mut self, device: Device, slice: Duration) {
        if self.ended {
            return;
        }
        let mut opened = false;
        if let Some(factory) = self.factory.take() {
            match factory() {
                Ok(backend) => {
                    self.backend = Some(backend);
                    opened = true;
                }
                Err(reason) => {
                    self.ended = true;
                    self.ctx.send(Event {
                        device,
                        generation: 0,
                        kind: EventKind::Unavailable(reason),
                    });
                    return;
                }
            }
        }
        let Some(backend) = self.backend.as_deref_mut() else {
            return;
        };
        let saved = std::mem::take(&mut self.saved);
        let mut state = State::resume((device, backend), &self.turns, &self.ctx, false, saved);
        if opened {
            state.announce();
        }
        // The page drew between two slices: that time is not the CPU's training, and it is
        // the GPU's own end to end (see `Reached::seconds`), as its intervals are.
        if let Some(ended) = self.slice_ended {
            match device {
                Device::Cpu => state.exclude(ended.elapsed()),
                Device::Gpu => state.count_own(ended.elapsed()),
            }
        }
        let begun = Instant::now();
        loop {
            let command = match self.inbox.try_recv() {
                Ok(c) => Some(c),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => Some(Command::Shutdown),
            };
            if command.is_none() && !state.running() && !state.reading() {
                break;
            }
            if !obey(&mut state, command) {
                self.ended = true;
                break;
            }
            // A read on its way is answered between frames in a page: give the page its turn.
            if state.reading() {
                break;
            }
            if begun.elapsed() >= slice {
                break;
            }
        }
        // A read on its way is looked at again in the next slice, paused or not.
        let running = state.running() || state.reading();
        // The CPU trains only inside slices: the page's time between them is not its own. A
        // GPU goes on with the work submitted while the page draws, so its interval stays the
        // wall clock's, waits for reads included (a lower bound on its speed, never above it),
        // and so does its time to a stop condition, while it holds its turn.
        let own_turn = device == Device::Cpu || !self.turns.waits(device);
        self.slice_ended = (running && own_turn).then(Instant::now);
        self.saved = state.suspend();
        if running {
            // The next frame brings the next slice.
            (self.ctx.notify())();
        }
    }
}

impl Worker {
    /// Starts the thread `train-cpu` or `train-gpu`; while `turns` are on, it trains only in
    /// its turns.
    pub fn spawn(
        device: Device,
        factory: BackendFactory,
        turns: Arc<Turns>,
        notify: Notify,
    ) -> std::io::Result<Self> {
        // A browser's page has no threads to start (see `Cooperative`).
        if cfg!(target_arch = "wasm32") {
            return Ok(Self::cooperative(device, factory, turns, notify));
        }
        let (commands, inbox) = mpsc::channel();
        let job = Job::spawn(&format!("train-{device}"), notify, move |ctx| {
            run(device, factory, &turns, inbox, &ctx);
        })?;
        Ok(Self {
            device,
            commands,
            job: Some(job),
            local: None,
        })
    }

    /// A worker that trains on the caller's thread, in slices of its polls (a browser's; the
    /// desktop's tests run it too).
    pub fn cooperative(
        device: Device,
        factory: BackendFactory,
        turns: Arc<Turns>,
        notify: Notify,
    ) -> Self {
        let (commands, inbox) = mpsc::channel();
        let (ctx, events) = JobContext::local(notify);
        Self {
            device,
            commands,
            job: None,
            local: Some(Cooperative {
                factory: Some(factory),
                backend: None,
                turns,
                inbox,
                ctx,
                events,
                saved: Saved::default(),
                ended: false,
                slice_ended: None,
            }),
        }
    }

    /// Which device this worker trains on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Sends a command. A worker whose thread has ended has said why in its last events, so a
    /// command it can no longer take is dropped.
    pub fn send(&self, command: Command) {
        if self.commands.send(command).is_err() {
            // The thread has ended: nothing takes commands any more.
        }
    }

    /// The events reported since the last poll.
    pub fn poll(&mut self) -> Vec<Event> {
        if let Some(local) = self.local.as_mut() {
            local.run_slice(self.device, SLICE);
            return local.events.try_iter().collect();
        }
        self.job.as_mut().map(Job::poll).unwrap_or_default()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.send(Command::Shutdown);
        // The GPU device belongs to the thread: wait until it has let go of it.
        if let Some(job) = self.job.take() {
            job.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{OpenOptions, open};
    use crate::train::{Session, TrainConfig};

    /// A browser's worker, run here: on the caller's thread, it opens its backend, says so,
    /// trains in slices while running, and stops when paused — never waiting for a turn.
    #[test]
    fn a_cooperative_worker_trains_in_slices_on_the_callers_thread() {
        let factory: BackendFactory = Box::new(|| open(Device::Cpu, &OpenOptions::default()));
        // Taking turns, with the other device never taking one: the CPU's turns are free.
        let turns = Arc::new(Turns::new(true));
        let mut worker = Worker::cooperative(Device::Cpu, factory, turns, crate::job::no_notify());
        let session = Arc::new(Session::new(TrainConfig::default()).expect("session"));
        worker.send(Command::Configure(session, 1));
        worker.send(Command::Run);
        let mut events = worker.poll();
        assert!(
            matches!(
                events.first().map(|e| &e.kind),
                Some(EventKind::Ready { .. })
            ),
            "{events:?}"
        );
        let begun = Instant::now();
        let mut steps = 0;
        while steps < 50 && begun.elapsed() < Duration::from_secs(30) {
            for event in worker.poll() {
                if let EventKind::Log(log) = &event.kind {
                    assert_eq!(event.generation, 1);
                    assert!(log.loss.is_finite());
                    steps = log.step;
                }
                events.push(event);
            }
        }
        assert!(steps >= 50, "trained {steps} steps in 30 s of slices");
        worker.send(Command::Pause);
        let paused = worker.poll();
        assert!(
            paused
                .iter()
                .any(|e| matches!(e.kind, EventKind::Running(false))),
            "{paused:?}"
        );
        // Paused, a poll trains nothing.
        let after = worker.poll();
        assert!(
            !after.iter().any(|e| matches!(e.kind, EventKind::Log(_))),
            "{after:?}"
        );
    }
}
