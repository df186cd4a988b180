//! Figures predicted rather than measured, each labelled as such wherever it is shown: the memory
//! a model needs, worked out from its description, and what a training step would cost on
//! hardware described by a profile.
//!
//! - [`estimate`]: the memory of a model and batch, by role;
//! - [`profile`]: the hardware profiles, each figure with its source and confidence;
//! - [`cost`]: the roofline cost model of a training step, op by op.

pub mod cost;
pub mod estimate;
pub mod profile;
