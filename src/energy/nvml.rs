//! An NVIDIA GPU's board energy through NVML, the library `nvidia-smi` reads (the
//! `nvml-wrapper` crate loads it at run time: a machine without NVIDIA's driver has no NVML,
//! and only loses the measured figure). The counter is the board's energy in millijoules since
//! the driver loaded (Volta and later); a stretch's energy is the difference of two readings.

use std::ffi::OsStr;

use nvml_wrapper::Nvml;

/// One NVIDIA board's energy counter.
pub struct Board {
    nvml: Nvml,
    index: u32,
    name: String,
}

impl Board {
    /// The board the wgpu adapter `adapter` is, if NVML loads and its energy counter reads:
    /// the board of the same name, or the only one.
    pub fn open(adapter: &str) -> Option<Self> {
        if !adapter.to_ascii_lowercase().contains("nvidia") {
            return None;
        }
        // Drivers install `libnvidia-ml.so.1`; the unversioned name is only in the
        // development package.
        let nvml = Nvml::init()
            .or_else(|_| {
                Nvml::builder()
                    .lib_path(OsStr::new("libnvidia-ml.so.1"))
                    .init()
            })
            .ok()?;
        let count = nvml.device_count().ok()?;
        let named = |i: u32| nvml.device_by_index(i).and_then(|d| d.name()).ok();
        let index = (0..count)
            .find(|&i| named(i).is_some_and(|n| n.trim() == adapter.trim()))
            .or((count == 1).then_some(0))?;
        let name = named(index)?;
        let board = Self { nvml, index, name };
        board.joules()?;
        Some(board)
    }

    /// The board's name as NVML gives it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Joules the board has used since its driver loaded.
    pub fn joules(&self) -> Option<f64> {
        let device = self.nvml.device_by_index(self.index).ok()?;
        let millijoules = device.total_energy_consumption().ok()?;
        Some(millijoules as f64 * 1e-3)
    }
}

#[cfg(test)]
mod tests {
    /// No board is claimed for an adapter that is not NVIDIA's, and on a machine without
    /// NVIDIA's driver (CI) opening one for an NVIDIA name finds none rather than failing.
    #[test]
    fn only_an_nvidia_adapter_with_a_readable_counter_opens_a_board() {
        assert!(super::Board::open("llvmpipe (LLVM 15.0.6, 256 bits)").is_none());
        let has_driver = std::path::Path::new("/proc/driver/nvidia").exists();
        if !has_driver {
            assert!(super::Board::open("NVIDIA H100 80GB HBM3").is_none());
        }
    }
}
