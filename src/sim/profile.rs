//! Hardware profiles: the figures of GPUs and CPUs a classroom may not have, each with its
//! source and how sure it is, read from `assets/profiles.toml` (built into the binary) or from a
//! file of the same format. Every prediction made from them is simulated and says so.

use crate::device::Device;
use serde::{Deserialize, Serialize};

/// The shipped profiles, as text.
pub const SHIPPED: &str = include_str!("../../assets/profiles.toml");

/// How sure a figure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Printed by the maker.
    Datasheet,
    /// Worked out from printed figures (the arithmetic is in the source).
    Derived,
    /// No printed figure: a calibration replaces it where the hardware is at hand.
    Estimate,
    /// Measured on this machine by `batchscope calibrate`.
    Measured,
}

/// One figure, where it comes from, and how sure it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// The value, in the unit the field's name gives.
    pub value: f64,
    /// Where it comes from.
    pub source: String,
    /// How sure it is.
    pub confidence: Confidence,
}

/// What kind of device a profile describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A discrete GPU behind a host link.
    Gpu,
    /// A GPU sharing memory with the CPU (no copy over a link).
    Apu,
    /// A CPU: the host itself.
    Cpu,
}

/// One device's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name used on the command line (`--profile nvidia-t4`).
    pub id: String,
    /// The name shown.
    pub name: String,
    /// GPU, APU or CPU.
    pub kind: Kind,
    /// Architecture, in words.
    pub arch: String,
    /// Year of launch.
    pub year: u32,
    /// The software stack a framework would train with on it (`cuda`, `rocm`, `metal`, `cpu`).
    pub software: String,
    /// Peak FP32 arithmetic, TFLOP/s.
    pub fp32_tflops: Figure,
    /// Peak FP16/BF16 on matrix units with FP32 accumulation, dense, TFLOP/s (none where the
    /// device has no such units).
    #[serde(default)]
    pub tensor_tflops: Option<Figure>,
    /// Memory bandwidth, GB/s.
    pub mem_bw_gbs: Figure,
    /// Memory capacity, GB.
    pub mem_gb: Figure,
    /// The largest on-chip cache, MB.
    #[serde(default)]
    pub llc_mb: Option<Figure>,
    /// The link to the host, in words (`PCIe 4.0 x16`, `unified memory`, `host`).
    pub link: String,
    /// The link's bandwidth per direction, GB/s (none for a CPU: the data is already there).
    #[serde(default)]
    pub link_gbs: Option<Figure>,
    /// The link's bandwidth as measured, GB/s, where known.
    #[serde(default)]
    pub link_measured_gbs: Option<Figure>,
    /// The host's cost of one kernel launch, µs.
    pub dispatch_us: Figure,
    /// Power, W (none in a calibrated profile: a calibration does not read power).
    #[serde(default)]
    pub power_w: Option<Figure>,
    /// Cores of a CPU, over which its power is shared for an energy estimate.
    #[serde(default)]
    pub cores: Option<Figure>,
    /// The host's cost of one training step beyond its kernels (the loader's batch, the
    /// bookkeeping), µs: measured by a calibration, none otherwise.
    #[serde(default)]
    pub step_overhead_us: Option<Figure>,
    /// The host's cost per row of a batch beyond its kernels (gathering the rows, the loss's
    /// statistics), ns: measured by a calibration, none otherwise.
    #[serde(default)]
    pub row_overhead_ns: Option<Figure>,
    /// How much longer a step's kernels take than the same kernels probed alone (their operands
    /// no longer in the caches, the step's own data): measured by a calibration, 1 otherwise.
    #[serde(default)]
    pub in_step_factor: Option<Figure>,
    /// Efficiency against op size, fitted by a calibration (the model's defaults otherwise).
    #[serde(default)]
    pub efficiency: Option<super::efficiency::Efficiency>,
    /// The adapter a calibration of this machine's GPU measured, so that the window can name
    /// the profile in each language (its `name` is English, for files and the command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<LocalAdapter>,
    /// The machine's FMA peak before and after this profile's calibration: a calibration
    /// taken while the machine's speed moved says so beside every prediction made from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadiness: Option<super::steadiness::Steadiness>,
    /// The last grid check of this calibrated profile: its predictions against steps
    /// measured on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid_check: Option<super::grid_check::GridCheck>,
}

impl Profile {
    /// The device BatchScope trains on with this hardware: its CPU backend on a CPU, its GPU
    /// backend on a discrete or an integrated GPU.
    pub fn device(&self) -> Device {
        match self.kind {
            Kind::Cpu => Device::Cpu,
            Kind::Gpu | Kind::Apu => Device::Gpu,
        }
    }
}

/// This machine's GPU adapter, as its calibrated profile records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalAdapter {
    /// The adapter's name (`llvmpipe (LLVM 15.0.6, 256 bits)`).
    pub name: String,
    /// Whether it is a software adapter, running GPU code on the CPU.
    pub software: bool,
}

impl Profile {
    /// The host link's bandwidth a copy gets, in bytes per second: measured where known, the
    /// theoretical figure otherwise; `None` for a CPU (no copy).
    pub fn link_bytes_per_s(&self) -> Option<f64> {
        self.link_measured_gbs
            .as_ref()
            .or(self.link_gbs.as_ref())
            .map(|f| f.value * 1e9)
    }

    /// Every figure with its name, for listing and checking.
    pub fn figures(&self) -> Vec<(&'static str, &Figure)> {
        let mut all = vec![
            ("fp32_tflops", &self.fp32_tflops),
            ("mem_bw_gbs", &self.mem_bw_gbs),
            ("mem_gb", &self.mem_gb),
            ("dispatch_us", &self.dispatch_us),
        ];
        let optional = [
            ("tensor_tflops", &self.tensor_tflops),
            ("power_w", &self.power_w),
            ("cores", &self.cores),
            ("llc_mb", &self.llc_mb),
            ("link_gbs", &self.link_gbs),
            ("link_measured_gbs", &self.link_measured_gbs),
            ("step_overhead_us", &self.step_overhead_us),
            ("row_overhead_ns", &self.row_overhead_ns),
            ("in_step_factor", &self.in_step_factor),
        ];
        all.extend(
            optional
                .into_iter()
                .filter_map(|(n, f)| f.as_ref().map(|f| (n, f))),
        );
        all
    }

    /// Checks that every figure is a positive number within what hardware has (so that a
    /// typo's 1e-308 cannot predict a step of three hundred digits), with a source; that a GPU
    /// has a link; and every point of the efficiency tables.
    pub fn validate(&self) -> Result<(), String> {
        for (name, figure) in self.figures() {
            if !(figure.value.is_finite() && figure.value > 0.0) {
                return Err(format!(
                    "{}: {name} is {}: give a positive number",
                    self.id, figure.value
                ));
            }
            let (low, high) = plausible(name);
            if !(low..=high).contains(&figure.value) {
                return Err(format!(
                    "{}: {name} is {}: a real device's lies between {low} and {high}",
                    self.id, figure.value
                ));
            }
            if figure.source.trim().is_empty() {
                return Err(format!("{}: {name} has no source", self.id));
            }
        }
        if let Some(e) = &self.efficiency {
            e.validate().map_err(|why| format!("{}: {why}", self.id))?;
        }
        if self.kind != Kind::Cpu && self.link_gbs.is_none() && self.link_measured_gbs.is_none() {
            return Err(format!(
                "{}: a {:?} needs link_gbs or link_measured_gbs",
                self.id, self.kind
            ));
        }
        Ok(())
    }
}

/// The range a profile figure may take: from far below any real device to far above the
/// largest one made (an H200 has 4.8 TB/s and 141 GB; an MI300X 1,307 dense TFLOP/s). The
/// arithmetic floor is 10 MFLOP/s: a software adapter calibrated on two busy cores measured
/// 0.9 GFLOP/s, a real figure that a floor of 1 GFLOP/s refused.
fn plausible(name: &str) -> (f64, f64) {
    match name {
        "fp32_tflops" | "tensor_tflops" => (1e-5, 1e5),
        "mem_bw_gbs" | "link_gbs" | "link_measured_gbs" => (1e-2, 1e5),
        "power_w" => (0.1, 1e5),
        "cores" => (1.0, 1024.0),
        "in_step_factor" => (0.1, 100.0),
        // Sizes in GB and MB, and times in µs or ns (a launch, a step's fixed cost, a row's).
        _ => (1e-3, 1e6),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    profile: Vec<Profile>,
}

/// Reads profiles from TOML text in the format of `assets/profiles.toml`, each checked.
pub fn parse(text: &str) -> Result<Vec<Profile>, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let place = crate::files::Place::of(text, e.span().map_or(0, |s| s.start));
        format!(
            "line {}, column {}: {} (near “{}”)",
            place.line,
            place.column,
            crate::files::first_line(e.message()),
            place.excerpt
        )
    })?;
    for p in &file.profile {
        p.validate()?;
    }
    let mut ids: Vec<&str> = file.profile.iter().map(|p| p.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(id) = ids.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]) {
        return Err(format!("two profiles are called {id}"));
    }
    Ok(file.profile)
}

/// The shipped profiles.
pub fn shipped() -> Vec<Profile> {
    // The file is part of the binary and checked by the tests: it always parses.
    parse(SHIPPED).unwrap_or_default()
}

/// The profile `id` among the shipped ones, or the profiles of the file at that path.
pub fn find(id_or_path: &str) -> Result<Vec<Profile>, String> {
    let shipped = shipped();
    if let Some(p) = shipped.iter().find(|p| p.id == id_or_path) {
        return Ok(vec![p.clone()]);
    }
    let path = std::path::Path::new(id_or_path);
    if !path.exists() {
        let ids: Vec<&str> = shipped.iter().map(|p| p.id.as_str()).collect();
        return Err(format!(
            "no profile called {id_or_path}: choose one of {}, or give a profile file",
            ids.join(", ")
        ));
    }
    let text = crate::files::read_text(path, crate::files::FileKind::Profile)
        .map_err(|e| e.to_string())?;
    let profiles = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if profiles.is_empty() {
        return Err(format!(
            "{}: the file holds no [[profile]]: a profile file lists one or more, as \
             `batchscope profiles --json` and assets/profiles.toml show",
            path.display()
        ));
    }
    Ok(profiles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_profiles_parse_and_cover_the_devices_the_issue_names() {
        let profiles = parse(SHIPPED).expect("shipped profiles");
        for id in [
            "nvidia-t4",
            "nvidia-rtx-3060",
            "nvidia-rtx-4090",
            "nvidia-a100-80gb",
            "nvidia-h100-sxm",
            "nvidia-h200",
            "amd-mi300x",
            "apple-m2-gpu",
            "apple-m3-gpu",
        ] {
            let p = profiles.iter().find(|p| p.id == id).expect(id);
            assert_ne!(p.kind, Kind::Cpu, "{id}");
        }
        assert!(profiles.iter().filter(|p| p.kind == Kind::Cpu).count() >= 2);
        // Power is optional only for calibrated profiles.
        assert!(profiles.iter().all(|p| p.power_w.is_some()));
    }

    #[test]
    fn every_figure_has_a_source_and_dense_rates_are_below_the_sparse_ones() {
        for p in shipped() {
            for (name, f) in p.figures() {
                assert!(!f.source.is_empty(), "{} {name}", p.id);
            }
            // A sparse figure is twice the dense one. The largest dense ratio to FP32 here is
            // the A100's 16x (312 against 19.5): its sparse figure copied by mistake would be
            // 32x, so anything above 20x is one.
            if let Some(t) = &p.tensor_tflops {
                assert!(t.value <= 20.0 * p.fp32_tflops.value, "{}", p.id);
            }
        }
        let h100 = find("nvidia-h100-sxm").expect("h100").remove(0);
        assert!((h100.tensor_tflops.expect("tensor").value - 989.4).abs() < 1e-9);
    }

    #[test]
    fn a_bad_profile_file_is_refused_with_the_reason() {
        let text = SHIPPED.replacen("value = 8.1", "value = -8.1", 1);
        assert!(
            parse(&text)
                .expect_err("refused")
                .contains("nvidia-t4: fp32_tflops is -8.1")
        );
        let text = SHIPPED.replacen("id = \"nvidia-rtx-3060\"", "id = \"nvidia-t4\"", 1);
        assert!(
            parse(&text)
                .expect_err("refused")
                .contains("two profiles are called nvidia-t4")
        );
        assert!(parse("[[profile]]\nid = 3").is_err());
        assert!(
            find("no-such-gpu")
                .expect_err("refused")
                .contains("nvidia-t4")
        );
    }
}
