//! The devices: one [`Backend`] trait, by concern, implemented by the CPU (rayon) and the GPU
//! (wgpu) devices, and [`open`], which gives the backend of a device.
//!
//! - [`traits`]: what a backend does ([`ComputeOps`], [`DeviceMemory`], [`Instrumented`],
//!   [`DeviceInfo`]);
//! - [`tensor`]: tensors, which know their device, format and memory role; `checks`: the checks
//!   every op runs on them;
//! - [`params`], [`error`], [`identity`]: what ops take, what they return when they fail, and
//!   what a backend says of itself;
//! - [`cpu`], [`gpu`]: the two devices.

mod checks;
pub mod cpu;
pub mod error;
pub mod gpu;
pub mod identity;
mod open;
pub mod params;
pub mod pending;
pub mod sequence;
pub mod tensor;
pub mod traits;

pub use checks::check_identity;
pub use error::BackendError;
pub use identity::{
    AdapterSummary, KernelSizes, MatmulChoice, MatmulTuning, MatmulVariants, TuningNote,
};
pub use open::{GpuChoice, OpenOptions, open, open_gpu};
pub use params::{
    Activation, AdamHyper, ConvShape, KernelTimes, ParamTensors, PoolShape, UpdateStep, UploadMode,
};
pub use pending::{PendingRead, PendingReads};
pub use sequence::{AttentionShape, SequenceOps};
pub use tensor::{Tensor, WORKING_COPIES, check_device, check_shape};
pub use traits::{Backend, ComputeOps, DeviceInfo, DeviceMemory, Instrumented};

/// The backend traits, for code that calls backend methods on a concrete backend
/// (`CpuBackend`, `GpuBackend`): `use batchscope::backend::prelude::*;`.
pub mod prelude {
    pub use super::sequence::SequenceOps;
    pub use super::traits::{Backend, ComputeOps, DeviceInfo, DeviceMemory, Instrumented};
}
