//! Figures predicted rather than measured, each labelled as such wherever it is shown: the memory
//! a model needs, worked out from its description. (The step-time simulator will live here too.)

pub mod estimate;
