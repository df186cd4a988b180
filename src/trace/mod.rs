//! The batch journey as spans on lanes: what each actor (loader workers, the training thread, the
//! transfer, the device's kernels, the readback, the waits) did, when, for how long, from real
//! clocks; the step breakdown computed from them; the advice rules; and the Chrome trace export.
//!
//! Times are nanoseconds since the run's epoch, an [`Instant`](web_time::Instant) taken when recording started.
//! Host spans come from that clock. GPU kernel spans come from timestamp queries, moved onto the
//! same axis by a calibration the GPU backend measures (see `backend/gpu`), or, on adapters
//! without timestamps, from the host clock observing submission and completion (an upper bound,
//! labelled [`Clock::HostObserved`]).

pub mod advice;
pub mod chrome;
mod span;
mod step;

pub use advice::{Advice, Finding};
pub use span::{Category, Clock, Lane, Recorder, Span, ns_since};
pub use step::{Breakdown, StepTrace, TraceChunk, TraceHistory};
