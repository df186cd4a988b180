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

/// Bytes of memory the system reports as available to a new allocation (Linux's
/// `MemAvailable`), or `None` where it cannot be read.
pub fn host_memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

/// The most resident memory this process has held so far, in bytes (Linux's `VmHWM`), or
/// `None` where the system does not say.
pub fn peak_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&text, "VmHWM:")
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn parse_meminfo(text: &str) -> Option<u64> {
    kib_field(text, "MemAvailable:")
}

/// The value of a `Name:   123 kB` line, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn available_memory_is_read_from_meminfo() {
        let text = "MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(super::parse_meminfo(text), Some(2 << 20));
        assert_eq!(super::parse_meminfo("MemTotal: 5 kB\n"), None);
    }
}
