//! Linux's RAPL energy counters for the CPU packages, as the powercap folder shows them
//! (`/sys/class/powercap/intel-rapl:N/energy_uj`; AMD's packages appear there too). Each
//! counter counts micro-joules up to its `max_energy_range_uj` and starts again from zero: a
//! reading below the one before is a wrap, and the energy between the two is what was left to
//! the top plus the new reading.
//!
//! Since 2020 most distributions let only root read `energy_uj` (the counters leak what the
//! CPU computes, CVE-2020-8694): then the folder is there but [`Rapl::open`] says it cannot be
//! read, and energy is estimated.

use std::path::{Path, PathBuf};

/// Where Linux shows its power-capping zones.
pub const POWERCAP: &str = "/sys/class/powercap";

/// Why the counters cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RaplError {
    /// No package zone in the folder (not Linux, a virtual machine, no RAPL).
    #[error("no RAPL package counter under {0}")]
    Absent(String),
    /// A zone's counter or its range cannot be read or is not a number.
    #[error("the RAPL counter {0} cannot be read ({1}); reading it usually needs root")]
    Unreadable(String, String),
}

/// One package's counter.
#[derive(Debug)]
struct Zone {
    /// Its `energy_uj` file.
    counter: PathBuf,
    /// The zone's name (`package-0`).
    name: String,
    /// The counter's range: it wraps to 0 past this.
    range_uj: u64,
    /// The last reading.
    last_uj: u64,
    /// Micro-joules counted since the meter opened, wraps included.
    total_uj: u128,
}

/// The CPU packages' energy counters, read as one meter.
#[derive(Debug)]
pub struct Rapl {
    zones: Vec<Zone>,
}

impl Rapl {
    /// The package zones under `root` (top-level `intel-rapl:N` folders whose `name` starts
    /// with `package`), each read once.
    ///
    /// # Errors
    /// No package zone, or one whose counter cannot be read.
    pub fn open(root: &Path) -> Result<Self, RaplError> {
        let absent = || RaplError::Absent(root.display().to_string());
        let entries = std::fs::read_dir(root).map_err(|_| absent())?;
        let mut folders: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                // `intel-rapl:0` is a package; `intel-rapl:0:0` one of its parts (cores,
                // uncore, DRAM), already counted in the package.
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("intel-rapl:") && n.matches(':').count() == 1)
            })
            .collect();
        folders.sort();
        let mut zones = Vec::new();
        for folder in folders {
            let name = std::fs::read_to_string(folder.join("name")).unwrap_or_default();
            let name = name.trim();
            if !name.starts_with("package") {
                continue;
            }
            let counter = folder.join("energy_uj");
            let range_uj = read_uj(&folder.join("max_energy_range_uj"))?;
            let last_uj = read_uj(&counter)?;
            zones.push(Zone {
                counter,
                name: name.to_owned(),
                range_uj,
                last_uj,
                total_uj: 0,
            });
        }
        if zones.is_empty() {
            return Err(absent());
        }
        Ok(Self { zones })
    }

    /// The zones read, by name (`package-0, package-1`).
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.zones.iter().map(|z| z.name.as_str()).collect();
        names.join(", ")
    }

    /// Joules counted by every package since the meter opened. Read often enough that no
    /// counter wraps twice between readings (a package at 200 W wraps its 262 kJ range in
    /// about 20 minutes).
    ///
    /// # Errors
    /// A counter that can no longer be read.
    pub fn joules(&mut self) -> Result<f64, RaplError> {
        let mut total = 0u128;
        for zone in &mut self.zones {
            let now = read_uj(&zone.counter)?;
            let step = if now >= zone.last_uj {
                now - zone.last_uj
            } else {
                // Wrapped: up to the top of the range, then from zero.
                zone.range_uj.saturating_sub(zone.last_uj) + now
            };
            zone.total_uj += u128::from(step);
            zone.last_uj = now;
            total += zone.total_uj;
        }
        Ok(total as f64 * 1e-6)
    }
}

/// A counter file's micro-joules.
fn read_uj(path: &Path) -> Result<u64, RaplError> {
    let unreadable = |why: String| RaplError::Unreadable(path.display().to_string(), why);
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(e.to_string()))?;
    text.trim()
        .parse()
        .map_err(|_| unreadable(format!("`{}` is not a count", text.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A powercap folder of fake zones: `(folder, name, range, reading)`.
    fn fake(zones: &[(&str, &str, u64, u64)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        for (folder, name, range, reading) in zones {
            let dir = root.path().join(folder);
            std::fs::create_dir_all(&dir).expect("zone");
            std::fs::write(dir.join("name"), format!("{name}\n")).expect("name");
            std::fs::write(dir.join("max_energy_range_uj"), format!("{range}\n")).expect("range");
            std::fs::write(dir.join("energy_uj"), format!("{reading}\n")).expect("counter");
        }
        root
    }

    fn set(root: &Path, folder: &str, reading: u64) {
        std::fs::write(root.join(folder).join("energy_uj"), format!("{reading}\n"))
            .expect("counter");
    }

    #[test]
    fn packages_are_summed_and_their_parts_and_other_zones_left_out() {
        let root = fake(&[
            ("intel-rapl:0", "package-0", 1_000_000_000, 5_000_000),
            ("intel-rapl:0:0", "core", 1_000_000_000, 1_000),
            ("intel-rapl:1", "package-1", 1_000_000_000, 7_000_000),
            ("intel-rapl:2", "psys", 1_000_000_000, 0),
        ]);
        let mut rapl = Rapl::open(root.path()).expect("two packages");
        assert_eq!(rapl.names(), "package-0, package-1");
        assert_eq!(rapl.joules().expect("read"), 0.0, "nothing since it opened");
        set(root.path(), "intel-rapl:0", 6_500_000);
        set(root.path(), "intel-rapl:0:0", 900_000_000);
        set(root.path(), "intel-rapl:1", 7_250_000);
        assert!((rapl.joules().expect("read") - 1.75).abs() < 1e-12);
    }

    /// A counter that passed the top of its range and started again from zero: the energy is
    /// the rest of the range plus the new reading, and the total keeps growing.
    #[test]
    fn a_wrapped_counter_counts_across_the_wrap() {
        let range = 262_143_328_850;
        let root = fake(&[("intel-rapl:0", "package-0", range, range - 2_000_000)]);
        let mut rapl = Rapl::open(root.path()).expect("package");
        set(root.path(), "intel-rapl:0", 3_000_000);
        assert!((rapl.joules().expect("read") - 5.0).abs() < 1e-9);
        set(root.path(), "intel-rapl:0", 4_000_000);
        assert!((rapl.joules().expect("read") - 6.0).abs() < 1e-9);
    }

    #[test]
    fn an_absent_or_unreadable_counter_is_said_as_such() {
        let empty = tempfile::tempdir().expect("temp dir");
        assert!(matches!(
            Rapl::open(empty.path()),
            Err(RaplError::Absent(_))
        ));
        assert!(matches!(
            Rapl::open(&empty.path().join("no-such-folder")),
            Err(RaplError::Absent(_))
        ));
        let root = fake(&[("intel-rapl:0", "package-0", 1_000, 10)]);
        std::fs::write(root.path().join("intel-rapl:0/energy_uj"), "garbage").expect("write");
        let error = Rapl::open(root.path()).expect_err("not a count");
        assert!(
            error.to_string().contains("`garbage` is not a count"),
            "{error}"
        );
        // A counter that vanishes after opening is an error, not a zero.
        let root = fake(&[("intel-rapl:0", "package-0", 1_000, 10)]);
        let mut rapl = Rapl::open(root.path()).expect("package");
        std::fs::remove_file(root.path().join("intel-rapl:0/energy_uj")).expect("remove");
        assert!(rapl.joules().is_err());
    }
}
