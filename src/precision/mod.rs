//! Reduced precision: the number formats, and rounding to them exactly as the hardware formats
//! store values. The CPU path rounds with the `half` crate; the GPU path with the integer
//! arithmetic of `shaders/half.wgsl`, which gives the same bits (tests check a sweep of
//! values: subnormals, ties, the largest finite values, overflow, NaN).

mod census;
mod format;
mod histogram;
mod scaler;

pub use census::{RangeReport, RoundCount, RoundingCensus};
pub use format::{DType, Half, Precision};
pub use histogram::Log2Histogram;
pub use scaler::GradScaler;
