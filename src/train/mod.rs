//! Training: the settings of a run and the checks they pass, a [`Runner`] that drives one model
//! on one backend, what it reports, and the background work built on it — a worker thread per
//! device that trains on commands from the UI, and the comparison of number formats.
//!
//! - [`config`]: [`TrainConfig`], [`Pipeline`], [`SyncPolicy`] and their limits;
//! - [`session`]: a data set with checked settings, shared by both devices;
//! - [`runner`]: the training loop of one device;
//! - [`report`], [`metrics`]: what a run reports, and the scores computed on the host;
//! - [`worker`], [`compare`]: training on a thread of its own;
//! - [`turns`]: how both devices' workers share the machine while they train side by side;
//! - [`device_run`]: what the window knows of a device's run, folded from its worker's events.

pub mod batch_fit;
pub mod compare;
pub mod config;
pub mod device_run;
pub mod generate;
pub mod handle;
pub mod metrics;
pub mod mismatch;
pub mod report;
pub mod runner;
pub mod selftest;
pub mod session;
pub mod turns;
pub mod worker;

pub use config::{
    BOUNDARY_RESOLUTION, LEAK_SAFETY_BUDGET, MAX_BATCH, MAX_WIDTH, MIN_BUDGET, MIN_LOSS_WEIGHT,
    Pipeline, SOFTWARE_KERNEL_SAMPLING, StopAt, SyncPolicy, TrainConfig, check_accumulate,
    check_batch, check_checkpoint, check_conv, check_hidden, check_list, check_list_sizes,
    check_loss_weight, check_lr, eval_rows,
};
pub use device_run::{Curve, DeviceRun, DeviceStatus, RunState};
pub use metrics::{loss_and_accuracy, score};
pub use report::{
    BoundaryGrid, Confusion, EvalReport, MAX_PREDICTION_POINTS, SAMPLE_GRID, Score, StepEnergy,
    StepLog, ValueHistograms, ValueSample,
};
pub use runner::{Runner, check_buffers};
pub use session::{Session, SessionError};
pub use turns::{Sharing, Turns};
