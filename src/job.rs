//! Background work, one pattern for all of it: a named thread that reports messages over a
//! channel and wakes the window after each one, is polled from the app's `logic()` each frame,
//! can be asked to stop, and stops with its owner.
//!
//! The training workers, loading a data set, comparing number formats and the system's file
//! dialog all run as a [`Job`]. The UI thread never waits for one: it polls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;

/// Called after each message (the window passes `ctx.request_repaint`).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// A notifier that does nothing (tests, the command line).
pub fn no_notify() -> Notify {
    Arc::new(|| {})
}

/// What the work sees of its job: where to report, and whether to stop.
pub struct JobContext<M> {
    messages: Sender<M>,
    cancel: Arc<AtomicBool>,
    notify: Notify,
}

impl<M> JobContext<M> {
    /// Reports `message` and wakes the window. Returns `false` when nobody listens any more
    /// (the job was dropped): the work may stop.
    pub fn send(&self, message: M) -> bool {
        let delivered = self.messages.send(message).is_ok();
        (self.notify)();
        delivered
    }

    /// Whether the owner asked the work to stop (or dropped the job).
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The flag [`JobContext::cancelled`] reads, for loops that take an `&AtomicBool`.
    pub fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }

    /// The notifier, for work that wakes the window on its own (progress counters).
    pub fn notify(&self) -> &Notify {
        &self.notify
    }
}

impl<M> JobContext<M> {
    /// A context and the receiver of what it reports: a job's, or that of work that runs on
    /// the caller's thread, a slice at a time (a browser's page has no other).
    pub fn local(notify: Notify) -> (Self, Receiver<M>) {
        let (messages, inbox) = mpsc::channel();
        let context = Self {
            messages,
            cancel: Arc::new(AtomicBool::new(false)),
            notify,
        };
        (context, inbox)
    }
}

/// A thread of background work and the messages it has sent.
///
/// Dropping a job asks its work to stop, and joins the thread if it has already finished; a
/// thread still blocked (a system dialog waiting for its user, a read from a slow file) is left
/// to end on its own at its next look at [`JobContext::cancelled`], so dropping never blocks the
/// window. [`Job::join`] waits for the thread, for owners that must (a training worker, whose
/// GPU device belongs to its thread).
pub struct Job<M> {
    messages: Receiver<M>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    finished: bool,
}

impl<M: Send + 'static> Job<M> {
    /// Starts `work` on a thread named `name`.
    pub fn spawn(
        name: &str,
        notify: Notify,
        work: impl FnOnce(JobContext<M>) + Send + 'static,
    ) -> std::io::Result<Self> {
        if cfg!(target_arch = "wasm32") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a browser's page cannot start a thread for this yet (the desktop app runs it)",
            ));
        }
        let (mut job, context) = Self::detached(notify);
        job.thread = Some(
            std::thread::Builder::new()
                .name(name.to_owned())
                .spawn(move || work(context))?,
        );
        Ok(job)
    }

    /// [`Job::spawn`]; where no thread can start (a browser's page), the work done at once on
    /// the calling thread, its messages waiting for the first poll. For work short enough to
    /// hold up one frame: reading a data set that ships inside the app.
    ///
    /// # Errors
    /// When the system refuses a thread on the desktop.
    pub fn spawn_or_run(
        name: &str,
        notify: Notify,
        work: impl FnOnce(JobContext<M>) + Send + 'static,
    ) -> std::io::Result<Self> {
        if !cfg!(target_arch = "wasm32") {
            return Self::spawn(name, notify, work);
        }
        let (job, context) = Self::detached(notify);
        work(context);
        Ok(job)
    }
}

impl<M> Job<M> {
    /// A job whose work is done elsewhere, by whoever holds the context: a thread
    /// ([`Job::spawn`]), the caller at once, or a future on a browser's event loop (its file
    /// picker answers later, and reading a file is awaited). The job is finished once the
    /// context is dropped and its messages are polled.
    pub fn detached(notify: Notify) -> (Self, JobContext<M>) {
        let (context, messages) = JobContext::local(notify);
        let job = Self {
            messages,
            cancel: Arc::clone(&context.cancel),
            thread: None,
            finished: false,
        };
        (job, context)
    }

    /// The messages sent since the last poll, oldest first. After the last one of a finished
    /// job, [`Job::is_finished`] is true.
    pub fn poll(&mut self) -> Vec<M> {
        let mut out = Vec::new();
        loop {
            match self.messages.try_recv() {
                Ok(m) => out.push(m),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.finished = true;
                    break;
                }
            }
        }
        out
    }

    /// Waits for the next message (the command line and tests); `None` once the work has ended.
    pub fn wait(&mut self) -> Option<M> {
        let message = self.messages.recv().ok();
        if message.is_none() {
            self.finished = true;
        }
        message
    }

    /// Whether the work has ended and every message has been polled.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Asks the work to stop at its next look.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Asks the work to stop and waits until its thread has ended.
    pub fn join(mut self) {
        self.cancel();
        if let Some(thread) = self.thread.take() {
            // A panic on that thread has been printed already; there is nothing to add.
            let _ = thread.join();
        }
    }
}

impl<M> Drop for Job<M> {
    fn drop(&mut self) {
        self.cancel();
        if let Some(thread) = self.thread.take_if(|t| t.is_finished()) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_reports_and_ends_and_stops_when_asked() {
        let mut job = Job::spawn("test-count", no_notify(), |ctx| {
            for i in 0..3 {
                ctx.send(i);
            }
        })
        .expect("spawn");
        let mut got = Vec::new();
        while let Some(m) = job.wait() {
            got.push(m);
        }
        assert_eq!(got, [0, 1, 2]);
        assert!(job.is_finished());

        // A job that runs until it is told to stop.
        let (started_tx, started) = mpsc::channel();
        let job = Job::spawn("test-loop", no_notify(), move |ctx: JobContext<()>| {
            let _ = started_tx.send(());
            while !ctx.cancelled() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
        .expect("spawn");
        started.recv().expect("started");
        // Joining cancels it first, so this returns.
        job.join();
    }

    #[test]
    fn a_detached_job_ends_when_its_context_is_dropped() {
        let (mut job, ctx) = Job::detached(no_notify());
        assert!(job.poll().is_empty() && !job.is_finished(), "still waiting");
        ctx.send("answer");
        job.cancel();
        assert!(ctx.cancelled(), "the holder of the context sees a cancel");
        drop(ctx);
        assert_eq!(job.poll(), ["answer"]);
        assert!(job.is_finished());
    }
}
