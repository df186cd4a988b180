//! Figures predicted rather than measured, each labelled as such wherever it is shown: the memory
//! a model needs, worked out from its description, and what a training step would cost on
//! hardware described by a profile.
//!
//! - [`estimate`]: the memory of a model and batch, by role;
//! - [`profile`]: the hardware profiles, each figure with its source and confidence;
//! - [`ops`]: the ops of a training step, from the model's layers;
//! - [`cost`]: the roofline cost model of a training step, op by op;
//! - [`ecosystem`]: the software path each kind of device would train with;
//! - [`efficiency`]: the share of the peak an op reaches, by its size;
//! - [`curve_fit`]: efficiency curves fitted to probe timings (the calibration);
//! - [`memory_fit`]: memory on a profile: the largest batch that fits, and `ZeRO`'s stages;
//! - [`groups`]: a step's FLOPs and measured kernel time by kind of op.

pub mod cost;
pub mod curve_fit;
pub mod ecosystem;
pub mod efficiency;
pub mod estimate;
pub mod grid_check;
pub mod groups;
pub mod memory_fit;
pub mod ops;
pub mod profile;
pub mod steadiness;
