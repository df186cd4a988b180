//! The profile a calibration fills in for this machine's CPU or GPU adapter: the figures a
//! probe cannot give marked "not measured", the peak, the memory and the link measured where
//! they can be (split out of `calibrate.rs`, which runs the probes).

use super::time_op;
use crate::backend::{AdapterSummary, Backend, BackendError};
use crate::sim::curve_fit::Probe;
use crate::sim::profile::{Confidence, Figure, Kind, LocalAdapter, Profile};

/// A figure this calibration measured, with where it came from.
pub(super) fn measured(value: f64, source: &str) -> Figure {
    Figure {
        value,
        source: source.to_owned(),
        confidence: Confidence::Measured,
    }
}

/// A local profile's figures, to be filled by the probes.
fn local_profile(id: &str, name: String, kind: Kind, arch: String, software: &str) -> Profile {
    let unknown = |what: &str| Figure {
        value: 0.0,
        source: format!("not measured: {what}"),
        confidence: Confidence::Estimate,
    };
    Profile {
        id: id.into(),
        name,
        kind,
        arch,
        year: 0,
        software: software.into(),
        fp32_tflops: unknown("the peak"),
        tensor_tflops: None,
        mem_bw_gbs: unknown("the bandwidth"),
        mem_gb: measured(
            crate::device::host_memory_available().map_or(1.0, |b| b as f64 / 1e9),
            "measured: host memory available now (MemAvailable)",
        ),
        llc_mb: None,
        link: "host".into(),
        link_gbs: None,
        link_measured_gbs: None,
        dispatch_us: unknown("the launch"),
        // A calibration does not read power.
        power_w: None,
        cores: None,
        step_overhead_us: None,
        row_overhead_ns: None,
        in_step_factor: None,
        efficiency: None,
        adapter: None,
        // Set by the calibration, around its probes, and by its grid check.
        steadiness: None,
        grid_check: None,
    }
}

/// This machine's CPU: its peak from an FMA loop on one core times the kernel threads.
pub(super) fn cpu_profile(backend: &dyn Backend) -> Profile {
    let threads = backend.threads().unwrap_or(1);
    let peak = super::peak::measure(0.2);
    let mut profile = local_profile(
        "local-cpu",
        format!("this machine's CPU ({})", backend.name()),
        Kind::Cpu,
        format!("{} FMA, {threads} threads", peak.isa),
        "cpu",
    );
    profile.fp32_tflops = measured(
        peak.gflop_per_s * 1e9 * threads as f64 / 1e12,
        &format!(
            "measured: FMA loop {:.1} GFLOP/s on one core x {threads} threads",
            peak.gflop_per_s
        ),
    );
    profile
}

/// This machine's GPU adapter: its peak is its fastest product probe (no FMA loop runs on a
/// GPU from here), its link a 64 MiB upload. A software adapter's memory is the host's.
pub(super) fn gpu_profile(
    backend: &mut dyn Backend,
    adapter: &AdapterSummary,
    products: &[Probe],
) -> Result<Profile, BackendError> {
    let software = if adapter.software {
        " — a software adapter: it runs on the CPU"
    } else {
        ""
    };
    let mut profile = local_profile(
        "local-gpu",
        format!("this machine's GPU ({}){software}", adapter.name),
        if adapter.software || adapter.device_type == "IntegratedGpu" {
            Kind::Apu
        } else {
            Kind::Gpu
        },
        format!("{} through wgpu ({})", adapter.device_type, adapter.backend),
        &format!("wgpu-{}", adapter.backend.to_lowercase()),
    );
    profile.adapter = Some(LocalAdapter {
        name: adapter.name.clone(),
        software: adapter.software,
    });
    let fastest = products
        .iter()
        .map(|p| p.size / p.seconds.max(1e-12))
        .fold(1e6, f64::max);
    profile.fp32_tflops = measured(
        fastest / 1e12,
        "measured: the fastest matrix-product probe (a lower bound on the peak)",
    );
    if !adapter.software {
        profile.mem_gb = Figure {
            value: adapter.max_buffer_size_bytes as f64 / 1e9,
            source: "the adapter's largest buffer: wgpu does not report the memory itself".into(),
            confidence: Confidence::Estimate,
        };
    }
    // The link: a 64 MiB upload.
    let n = 16 << 20;
    let mut big = backend.zeros("upload", 1, n)?;
    let values = vec![0.5f32; n];
    let seconds = time_op(backend, 0.2, &mut |b| b.write(&mut big, &values))?;
    profile.link = if adapter.software {
        "host memory (software adapter)".into()
    } else {
        "host link (measured)".into()
    };
    profile.link_measured_gbs = Some(measured(
        4.0 * n as f64 / seconds / 1e9,
        "measured: a 64 MiB upload",
    ));
    Ok(profile)
}
