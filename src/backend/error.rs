//! The errors every backend op can return.

use crate::device::Device;
use crate::i18n::{ErrKey, Said};
use crate::memory::OutOfMemory;

/// Errors every backend op can return. Each is worded once, in the translation table
/// ([`BackendError::said`]); its `Display` is that wording's English.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum BackendError {
    /// Tensors of two devices met in one op: the "model still on the CPU" mistake.
    #[error("{}", self.said())]
    DeviceMismatch {
        /// The device the op runs on.
        expected: Device,
        /// The device of the offending tensor.
        found: Device,
        /// Which op.
        op: &'static str,
    },
    /// Shapes do not fit together.
    #[error("{}", self.said())]
    Shape {
        /// Which op.
        op: &'static str,
        /// What was expected and what was found.
        detail: String,
    },
    /// The model needs a buffer larger than the device can hold or bind: a setting to change.
    #[error("{}", self.said())]
    BufferTooLarge {
        /// Which buffer.
        what: String,
        /// Its bytes, for display.
        bytes_shown: String,
        /// The device's limit, for display.
        limit_shown: String,
    },
    /// The device could not be set up (no thread pool, no adapter).
    #[error("{}", self.said())]
    Setup(String),
    /// The GPU reported an error (validation, device lost, out of memory).
    #[error("{}", self.said())]
    Gpu(String),
    /// An allocation would go past the device's memory budget.
    #[error(transparent)]
    OutOfMemory(Box<OutOfMemory>),
    /// The loss stopped being a finite number: training cannot go on from here.
    #[error("{}", self.said())]
    Diverged {
        /// The step at which it was seen.
        step: u64,
        /// The loss read back (NaN or infinite).
        loss: f32,
        /// The learning rate of the run.
        lr: f32,
        /// A tenth of it.
        lower: f32,
        /// The run kept Adam's moments in pure FP16, where the learning rate is not the
        /// usual cause: the second moment falls below FP16's smallest value.
        fp16_adam: bool,
    },
}

impl BackendError {
    /// The error in both languages, for the window; the `Display` text is its English.
    pub fn said(&self) -> Said {
        match self {
            BackendError::DeviceMismatch {
                expected,
                found,
                op,
            } => Said::new(
                ErrKey::DeviceMismatch,
                &[("expected", expected), ("found", found), ("op", op)],
            ),
            BackendError::Shape { op, detail } => {
                Said::new(ErrKey::Shape, &[("op", op), ("detail", detail)])
            }
            BackendError::BufferTooLarge {
                what,
                bytes_shown,
                limit_shown,
            } => Said::new(
                ErrKey::BufferTooLarge,
                &[
                    ("bytes", bytes_shown),
                    ("what", what),
                    ("limit", limit_shown),
                ],
            ),
            // Internal faults a user should never meet (a poisoned lock, a thread the operating
            // system refused, a working copy too small): said in English, with the system's words.
            BackendError::Setup(why) => Said::verbatim(why.clone()),
            BackendError::Gpu(detail) => Said::new(ErrKey::GpuError, &[("detail", detail)]),
            BackendError::OutOfMemory(oom) => oom.said(),
            BackendError::Diverged {
                step,
                loss,
                lr,
                lower,
                fp16_adam,
            } => Said::new(
                if *fp16_adam {
                    ErrKey::DivergedFp16Adam
                } else {
                    ErrKey::Diverged
                },
                &[("loss", loss), ("step", step), ("lr", lr), ("lower", lower)],
            ),
        }
    }
}
