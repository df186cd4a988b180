//! Spans on lanes: what each actor of a step did, when and for how long, by which clock; and the
//! recorder a training thread stamps them into.

use web_time::Instant;

use serde::Serialize;

/// An actor of the journey: one row of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// The training thread: waits for batches, runs (CPU) or records (GPU) the step.
    Main,
    /// A data-loader worker thread, by index.
    Loader(u16),
    /// Host-to-device copies of the batch.
    Transfer,
    /// The device's kernels: the GPU queue, or the CPU's rayon pool.
    Kernels,
    /// Device-to-host copies of results.
    Readback,
    /// Time the training thread spends blocked until the device has finished.
    Sync,
}

impl Lane {
    /// Thread id in the Chrome trace; also the timeline's row order.
    pub fn tid(self) -> u32 {
        match self {
            Lane::Loader(i) => 10 + u32::from(i),
            Lane::Main => 1,
            Lane::Transfer => 2,
            Lane::Kernels => 3,
            Lane::Readback => 4,
            Lane::Sync => 5,
        }
    }

    /// The lane's English name, used in exports (the UI translates).
    pub fn name(self, gpu: bool) -> String {
        match self {
            Lane::Main => "training thread".into(),
            Lane::Loader(i) => format!("loader worker {i}"),
            Lane::Transfer => "host→device transfer".into(),
            Lane::Kernels if gpu => "GPU queue (kernels)".into(),
            Lane::Kernels => "CPU kernels (rayon pool)".into(),
            Lane::Readback => "device→host readback".into(),
            Lane::Sync => "sync waits".into(),
        }
    }
}

/// What a span's time was spent on. The order of the variants is the breakdown's priority: an
/// instant covered by several spans counts once, for the first of them in this order (as in
/// PyTorch's profiler, whose step breakdown counts Kernel before Memcpy before Runtime before
/// `DataLoader` before CPU Exec).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Category {
    /// The device computing: GPU kernels, or the CPU's kernels on the CPU path.
    Kernel,
    /// Copying batches or results between host and device memory.
    Memcpy,
    /// The training thread blocked until the device finished (`.item()`, map a buffer).
    Sync,
    /// Waiting for or producing a batch: read, decode, augment, collate.
    DataLoader,
    /// Other work of the training thread: recording and submitting GPU commands, bookkeeping.
    CpuExec,
    /// Nothing recorded: the remainder of the step.
    Other,
}

impl Category {
    /// Every category, in priority order.
    pub const ALL: [Category; 6] = [
        Category::Kernel,
        Category::Memcpy,
        Category::Sync,
        Category::DataLoader,
        Category::CpuExec,
        Category::Other,
    ];

    /// The name in exports and the breakdown (PyTorch profiler's names where they exist).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Kernel => "Kernel",
            Category::Memcpy => "Memcpy",
            Category::Sync => "Sync",
            Category::DataLoader => "DataLoader",
            Category::CpuExec => "CPU Exec",
            Category::Other => "Other",
        }
    }

    /// The name in the translation table.
    pub fn key(self) -> crate::i18n::Key {
        use crate::i18n::Key;
        match self {
            Category::Kernel => Key::CatKernel,
            Category::Memcpy => Key::CatMemcpy,
            Category::Sync => Key::CatSync,
            Category::DataLoader => Key::CatDataLoader,
            Category::CpuExec => Key::CatCpuExec,
            Category::Other => Key::CatOther,
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Which clock measured a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// The host's monotonic clock.
    Host,
    /// GPU timestamp queries, moved onto the host axis by calibration.
    GpuTimestamp,
    /// The host saw the work submitted and later saw it done: an upper bound of the real span.
    HostObserved,
}

/// One thing one actor did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    /// Who did it.
    pub lane: Lane,
    /// What kind of time it was.
    pub category: Category,
    /// What it was (`wait for batch`, `linear_forward`, …).
    pub name: &'static str,
    /// Start, in ns since the run's epoch.
    pub start_ns: u64,
    /// Length in ns.
    pub duration_ns: u64,
    /// Bytes moved, where the span moves data (0 otherwise).
    pub bytes: u64,
    /// The training step it belongs to (the batch's step for loader work).
    pub step: u64,
    /// Which clock measured it.
    pub clock: Clock,
}

impl Span {
    /// End, in ns since the epoch.
    pub fn end_ns(&self) -> u64 {
        self.start_ns + self.duration_ns
    }

    /// Whether the span takes part in the step breakdown. Loader workers run beside the step
    /// (that is the point of them); what the step pays for them is the training thread's wait.
    pub fn in_breakdown(&self) -> bool {
        !matches!(self.lane, Lane::Loader(_))
    }
}

/// A clock and span buffer owned by one training thread (each backend holds one; loader workers
/// stamp their spans with a copy of the same epoch).
#[derive(Debug)]
pub struct Recorder {
    epoch: Instant,
    enabled: bool,
    step: u64,
    spans: Vec<Span>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            enabled: false,
            step: 0,
            spans: Vec::new(),
        }
    }
}

impl Recorder {
    /// Starts recording against `epoch`, dropping what was recorded before.
    pub fn start(&mut self, epoch: Instant) {
        self.epoch = epoch;
        self.enabled = true;
        self.spans.clear();
    }

    /// Stops recording and drops the buffer.
    pub fn stop(&mut self) {
        self.enabled = false;
        self.spans = Vec::new();
    }

    /// Whether spans are kept.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The run's epoch.
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// Now, in ns since the epoch (0 before it).
    pub fn now_ns(&self) -> u64 {
        ns_since(self.epoch)
    }

    /// The step new spans belong to.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Sets the step new spans belong to.
    pub fn set_step(&mut self, step: u64) {
        self.step = step;
    }

    /// Records a host-clock span from `start_ns` until now.
    pub fn span(
        &mut self,
        lane: Lane,
        category: Category,
        name: &'static str,
        start_ns: u64,
        bytes: u64,
    ) {
        if self.enabled {
            let end = self.now_ns();
            self.spans.push(Span {
                lane,
                category,
                name,
                start_ns,
                duration_ns: end.saturating_sub(start_ns),
                bytes,
                step: self.step,
                clock: Clock::Host,
            });
        }
    }

    /// Keeps a span measured elsewhere (a loader worker, a GPU timestamp).
    pub fn push(&mut self, span: Span) {
        if self.enabled {
            self.spans.push(span);
        }
    }

    /// Takes what was recorded so far.
    pub fn drain(&mut self) -> Vec<Span> {
        std::mem::take(&mut self.spans)
    }
}

/// Nanoseconds from `epoch` to now (0 if now is before it).
pub fn ns_since(epoch: Instant) -> u64 {
    Instant::now()
        .checked_duration_since(epoch)
        .map_or(0, |d| d.as_nanos() as u64)
}
