//! Where NVML cannot be loaded at all (a browser's WebAssembly has no native libraries): no
//! board ever opens, and a GPU's energy is estimated, labelled so, as on a machine without
//! NVIDIA's driver.

/// One NVIDIA board's energy counter: never opened here.
pub struct Board {
    name: String,
}

impl Board {
    /// No board: NVML cannot be loaded on this target.
    pub fn open(_adapter: &str) -> Option<Self> {
        None
    }

    /// The board's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// No counter to read.
    pub fn joules(&self) -> Option<f64> {
        None
    }
}
