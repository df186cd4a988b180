//! `batchscope calibrate`: measure this machine's CPU with short probes, fit the cost model's
//! efficiencies, print the fit, write the local profile (`--out`), and with `--grid` predict and
//! measure a grid of training steps and print the error.

use clap::Args;
use serde::Serialize;

use super::failure::Failure;
use super::output::Out;
use crate::backend::{self, Backend, OpenOptions};
use crate::bench::calibrate::{
    Calibration, GridRow, LoadWatch, affordable, calibrate, check, grid, grid_check,
};
use crate::sim::grid_check::GridCheck;
use crate::sim::profile::Profile;

#[derive(Args, Debug)]
pub(super) struct CalibrateArgs {
    /// Which device: `cpu`, `gpu` (the adapter wgpu opens) or `both`.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Write the local profile here (TOML, the format of assets/profiles.toml).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Then predict and measure a grid of training steps (widths 16-1024, batches 1-4096, SGD
    /// and Adam) and print each error.
    #[arg(long)]
    grid: bool,
    /// Seconds each probe and each grid point is timed for.
    #[arg(long, default_value_t = 0.05)]
    seconds: f64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct File<'a> {
    profile: Vec<&'a Profile>,
}

#[derive(Serialize)]
struct GridSummary {
    summary: bool,
    configurations: usize,
    median_abs_error: f64,
    worst_ratio: f64,
    off_by_more_than_2x: usize,
    /// The FMA peak before the grid's steps and after them, GFLOP/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    steadiness: Option<crate::sim::steadiness::Steadiness>,
}

/// `batchscope calibrate`.
pub(super) fn run(out: &mut Out, args: &CalibrateArgs) -> Result<(), Failure> {
    let devices = super::run::parse_devices(&args.device)?;
    if !(0.005..=10.0).contains(&args.seconds) {
        return Err(Failure::BadInput(format!(
            "--seconds {}: choose from 0.005 to 10",
            args.seconds
        )));
    }
    if let Some(path) = &args.out {
        // Checked before the calibration: a typo must not cost its results.
        crate::files::check_destination(path).map_err(|e| Failure::BadInput(e.to_string()))?;
    }
    let mut profiles = Vec::new();
    for device in devices {
        // A GPU belongs to the thread that opened it: each device is opened, probed and
        // checked here, one after the other.
        let mut backend = backend::open(device, &OpenOptions::default()).map_err(|reason| {
            Failure::BadInput(format!("cannot calibrate the {device:?}: {reason}"))
        })?;
        let start = web_time::Instant::now();
        let calibration = calibrate(backend.as_mut(), args.seconds, &mut |what| {
            eprintln!("[{:6.1} s] probing {what}", start.elapsed().as_secs_f64());
            true
        })
        .map_err(|e| Failure::BadInput(e.to_string()))?;
        print_fit(out, args, &calibration)?;
        let mut profile = calibration.profile;
        if args.grid {
            let check = run_grid(out, args, backend.as_mut(), &profile)?;
            // A grid with nothing affordable here checked nothing: none recorded.
            profile.grid_check = Some(check).filter(|c| c.configurations > 0);
        }
        profiles.push(profile);
    }
    if let Some(path) = &args.out {
        let text = toml::to_string(&File {
            profile: profiles.iter().collect(),
        })
        .map_err(|e| Failure::BadInput(format!("cannot write the profile: {e}")))?;
        crate::files::write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::Output(e.to_string()))?;
        if !args.json {
            out.line(format!(
                "Written to {} (use it with simulate --profile)",
                path.display()
            ))?;
        }
    }
    Ok(())
}

/// Prints what a calibration measured and fitted.
fn print_fit(
    out: &mut Out,
    args: &CalibrateArgs,
    calibration: &Calibration,
) -> Result<(), Failure> {
    let p = &calibration.profile;
    if let Some(steadiness) = p.steadiness.filter(|s| !s.steady()) {
        eprintln!("warning: {}", steadiness.said(crate::i18n::Lang::En));
    }
    if args.json {
        out.json(calibration)?;
        return Ok(());
    }
    out.line(format!("Calibrated {} (measured in this run):", p.name))?;
    out.line(format!(
        "  FP32 peak {:.1} GFLOP/s, memory {:.1} GB/s, launch {:.2} µs, step overhead {:.2} µs",
        p.fp32_tflops.value * 1e3,
        p.mem_bw_gbs.value,
        p.dispatch_us.value,
        p.step_overhead_us.as_ref().map_or(0.0, |f| f.value)
    ))?;
    if let Some(steadiness) = &p.steadiness {
        let said = steadiness.said(crate::i18n::Lang::En);
        if steadiness.steady() {
            out.line(format!("  {said}"))?;
        } else {
            out.line(format!("  WARNING: {said}"))?;
        }
    }
    if let Some(factor) = &p.in_step_factor {
        out.line(format!(
            "  kernels in a step take {:.2}x their time probed alone",
            factor.value
        ))?;
    }
    if let Some(link) = &p.link_measured_gbs {
        out.line(format!("  upload {:.1} GB/s ({})", link.value, p.link))?;
    }
    let Some(e) = &p.efficiency else {
        return Ok(());
    };
    let points = |c: &crate::sim::cost::Curve| {
        c.0.iter()
            .map(|(s, e)| format!("{s:.0e}:{e:.3}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if let Some(products) = &e.products {
        for kind in crate::sim::cost::Product::ALL {
            let table = &products.get(kind).table;
            let (low, high) = table
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), p| (l.min(p.1), h.max(p.1)));
            out.line(format!(
                "  {kind:?}: {} shapes probed, {:.1}% to {:.1}% of the peak",
                table.len(),
                low * 100.0,
                high * 100.0
            ))?;
        }
    }
    out.line(format!(
        "  memory efficiency by bytes:  {}",
        points(&e.memory)
    ))?;
    if let Some(u) = &e.updates {
        out.line(format!(
            "  Adam's update efficiency by bytes: {}; {:.2} µs a tensor in a step, its \
             memory traffic {:.2}x slower in a step than alone",
            points(&u.adam.curve),
            u.adam.call_us,
            u.adam.in_step
        ))?;
    }
    Ok(())
}

/// Predicts and measures the grid on `backend` with `profile`, printing each row and the
/// summary.
fn run_grid(
    out: &mut Out,
    args: &CalibrateArgs,
    backend: &mut dyn Backend,
    p: &Profile,
) -> Result<GridCheck, Failure> {
    if !args.json {
        out.line("Grid: predicted (simulated, from the profile above) against measured step time")?;
    }
    let (kept, left_out) = affordable(grid(), p, 1000.0);
    if !left_out.is_empty() && !args.json {
        let names: Vec<String> = left_out
            .iter()
            .map(|(layers, batch, optimizer)| {
                format!("{layers:?} batch {batch} {}", optimizer.as_str())
            })
            .collect();
        out.line(format!(
            "  left out, predicted over a second a step (too slow to time here): {}",
            names.join("; ")
        ))?;
    }
    // The machine's speed before, during and after the grid's steps (as around the probes).
    let mut watch = LoadWatch::start(backend);
    let mut printed = Ok(());
    let rows = check(
        backend,
        p,
        &kept,
        args.seconds * 4.0,
        &mut watch,
        &mut |row: &GridRow| {
            if printed.is_err() {
                return;
            }
            printed = if args.json {
                out.json(row)
            } else {
                out.line(format!(
                "  layers {:<20} batch {:>5} {:<6} predicted {:>10.4} ms  measured {:>10.4} ms  \
                 error {:>+7.1}%",
                format!("{:?}", row.layers),
                row.batch,
                row.optimizer.as_str(),
                row.predicted_ms,
                row.measured_ms,
                row.error * 100.0
            ))
            };
        },
    )
    .map_err(|e| Failure::BadInput(e.to_string()))?;
    printed?;
    let check = grid_check(&rows, watch.finish(backend));
    let summary = GridSummary {
        summary: true,
        configurations: check.configurations,
        median_abs_error: check.median_abs_error,
        worst_ratio: check.worst_ratio,
        off_by_more_than_2x: check.off_by_more_than_2x,
        steadiness: check.steadiness,
    };
    if let Some(moved) = check.steadiness.filter(|s| !s.steady()) {
        let said = moved.said_of_check(crate::i18n::Lang::En);
        // On stderr too, where a script that keeps only the JSON still shows it.
        eprintln!("warning: {said}");
        if !args.json {
            out.line(format!("  warning: {said}"))?;
        }
    }
    if args.json {
        out.json(&summary)?;
    } else {
        out.line(format!(
            "  {} configurations: median absolute error {:.1}%, worst {:.2}x, {} off by more than 2x",
            summary.configurations,
            summary.median_abs_error * 100.0,
            summary.worst_ratio,
            summary.off_by_more_than_2x
        ))?;
    }
    Ok(check)
}
