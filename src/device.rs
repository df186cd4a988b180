//! The two devices a tensor can live on and an op can run on. Every layer names them (the
//! backends, the memory accounting, the spans, the panels), so they live here, below all of them.

use std::fmt;

/// Which device a tensor lives on and an op runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// Host memory, rayon kernels.
    Cpu,
    /// A wgpu buffer, WGSL compute shaders.
    Gpu,
}

impl Device {
    /// Both devices, in the order the UI shows them.
    pub const ALL: [Device; 2] = [Device::Cpu, Device::Gpu];

    /// Lower-case name used in messages and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The threads this machine runs at once (its logical cores; 1 when the system does not say).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

mod host;

pub use host::cpu_name;
pub use host::memory_available as host_memory_available;
pub use host::peak_memory;
