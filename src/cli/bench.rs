//! `batchscope bench`: timed training steps per device (median, min and max step time,
//! samples/s, GFLOP/s), a 16-bit precision against FP32 in the same run, the CPU's matrix
//! products against the core's FMA peak (`--kernels`), and the cost of recording spans
//! (`--recording-overhead`).

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::{Failure, RunError, on_each_device};
use super::output::Out;
use super::run::{check_fits, open_backend, parse_run};
use crate::backend::cpu::CpuBackend;
use crate::bench::peak::FmaPeak;
use crate::bench::{BenchPlan, ProductRate, Summary};
use crate::device::Device;
use crate::precision::Precision;
use crate::train::{Session, TrainConfig};

#[derive(Args, Debug)]
pub(super) struct BenchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Steps before timing starts.
    #[arg(long, default_value_t = 20)]
    warmup: u64,
    /// Timed runs; the statistics are over these.
    #[arg(long, default_value_t = 7)]
    repeats: usize,
    /// Steps per timed run (0: enough for about 0.2 s).
    #[arg(long, default_value_t = 0)]
    steps_per_run: u64,
    /// Instead of training steps, time the CPU's matrix products of one step against the
    /// core's measured FMA peak.
    #[arg(long)]
    kernels: bool,
    /// Time runs with span recording off and on, alternately, and print the cost of recording.
    #[arg(long)]
    recording_overhead: bool,
}

/// A line of `bench --json`: the statistics, and where the precision is 16-bit, FP32's in the
/// same run.
#[derive(Serialize)]
struct BenchLine<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    precision: Precision,
    #[serde(skip_serializing_if = "Option::is_none")]
    fp32_step_time_median_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step_time_ratio_to_fp32: Option<f64>,
}

/// `bench --kernels --json`.
#[derive(Serialize)]
struct KernelsSummary<'a> {
    fma_peak_per_core: FmaPeak,
    layers: &'a [usize],
    model: String,
    batch: usize,
    products: Vec<ThreadsRates<'a>>,
}

/// The products' rates on a number of threads.
#[derive(Serialize)]
struct ThreadsRates<'a> {
    threads: usize,
    rates: &'a [ProductRate],
}

/// `bench --recording-overhead --json`.
#[derive(Serialize)]
struct RecordingSummary {
    device: Device,
    backend: String,
    steps_per_run: u64,
    runs: usize,
    step_time_off_ms: f64,
    step_time_recording_ms: f64,
    recording_overhead: f64,
}

pub(super) fn run(out: &mut Out, args: &BenchArgs) -> Result<(), Failure> {
    let (session, devices) = parse_run(&args.run)?;
    if cfg!(debug_assertions) {
        // Standard error closed: the note is lost, the benchmark is not.
        let _ = writeln!(
            std::io::stderr(),
            "note: this is a debug build, whose own loops are barely optimised; for numbers worth \
             quoting run `cargo run --release -- bench ...`"
        );
    }
    if args.kernels {
        if devices.contains(&Device::Cpu) {
            kernels(out, args, &session)?;
        }
        if devices.contains(&Device::Gpu) {
            gpu_kernels(out, args, &session)?;
        }
        return Ok(());
    }
    if args.repeats == 0 {
        return Err(Failure::BadInput("--repeats must be at least 1".to_owned()));
    }
    let plan = BenchPlan {
        warmup_steps: args.warmup,
        repeats: args.repeats,
        steps_per_run: args.steps_per_run,
        ..BenchPlan::default()
    };
    if args.recording_overhead {
        return recording(out, args, &session, &devices, plan);
    }
    // A 16-bit precision is measured against FP32 on the same device in the same run: its
    // speed is shown as measured, never assumed.
    let precision = session.config.precision;
    let fp32 = (precision != Precision::Fp32).then(|| Session {
        config: TrainConfig {
            precision: Precision::Fp32,
            ..session.config.clone()
        },
        ..session.clone()
    });
    on_each_device(out, &devices, args.run.json, |out, device| {
        let mut backend = open_backend(device, &args.run)?;
        check_fits(backend.as_ref(), &session, session.config.batch, "--batch")?;
        let m = crate::bench::measure(backend.as_mut(), &session, plan)?;
        let s = Summary::new(&m, backend.as_ref(), &session);
        let baseline = match &fp32 {
            Some(fp32) => {
                let m = crate::bench::measure(backend.as_mut(), fp32, plan)?;
                Some(Summary::new(&m, backend.as_ref(), fp32))
            }
            None => None,
        };
        if args.run.json {
            out.json(&BenchLine {
                summary: &s,
                precision,
                fp32_step_time_median_ms: baseline.as_ref().map(|b| b.step_time_median_ms),
                step_time_ratio_to_fp32: baseline
                    .as_ref()
                    .map(|b| s.step_time_median_ms / b.step_time_median_ms),
            })?;
            return Ok(());
        }
        out.line(summary_line(device, &s))?;
        for line in energy_lines(device, &s).into_iter().flatten() {
            out.line(line)?;
        }
        if let Some(b) = baseline {
            let ratio = s.step_time_median_ms / b.step_time_median_ms;
            out.line(format!(
                "{device} {} against fp32, measured in this run: step {:.4} ms against {:.4} ms, \
                 {ratio:.2} times the FP32 time. 16-bit values take half the memory, but every \
                 kernel here computes in f32, widening its 16-bit operands and rounding its \
                 results (no 16-bit arithmetic units are used), so no speed-up is expected{}",
                precision.as_str(),
                s.step_time_median_ms,
                b.step_time_median_ms,
                if precision == Precision::Mixed {
                    "; mixed precision also waits every step for its overflow check (one count \
                     read back, a sync, as GradScaler's found_inf.item() in PyTorch)"
                } else {
                    ""
                }
            ))?;
        }
        Ok(())
    })
}

/// The text line of one device's benchmark.
fn summary_line(device: Device, s: &Summary) -> String {
    format!(
        "{device} {} batch {} ({}{}): {:.0} samples/s, step {:.4} ms median \
             [{:.4} .. {:.4}] over {} runs of {} steps, {:.1} GFLOP/s{}",
        s.model,
        if s.micro_batch < s.batch {
            format!(
                "{} ({} micro-batches of {})",
                s.batch,
                s.batch / s.micro_batch.max(1),
                s.micro_batch
            )
        } else {
            s.batch.to_string()
        },
        s.backend,
        if s.software_adapter {
            ", software adapter: says nothing about a GPU"
        } else {
            ""
        },
        s.samples_per_s,
        s.step_time_median_ms,
        s.step_time_min_ms,
        s.step_time_max_ms,
        s.repeats,
        s.steps_per_run,
        s.gflop_per_s,
        s.dispatches_per_step.map_or_else(String::new, |d| format!(
            ", {d:.1} kernels dispatched a step"
        )),
    )
}

/// The energy lines of one device's benchmark, where its energy was measured or estimated:
/// the figures (an estimate says so in capitals), then what they stand on.
fn energy_lines(device: Device, s: &Summary) -> Option<[String; 2]> {
    let (j, source) = (s.energy_j?, s.energy_source?);
    let figures = format!(
        "{device} energy: {} a step, {:.0} samples/J, {}",
        crate::units::format_joules(j),
        s.samples_per_j.unwrap_or(0.0),
        match source {
            crate::energy::EnergySource::Estimated => "ESTIMATED (not measured)",
            _ => "measured",
        },
    );
    let basis = s.energy_basis.as_deref().unwrap_or_default();
    Some([figures, format!("{device} energy basis: {basis}")])
}

/// `bench --kernels`: the FMA peak of one core, and each matrix product of a step on one thread
/// (against that peak) and on all threads.
fn kernels(out: &mut Out, args: &BenchArgs, session: &Session) -> Result<(), Failure> {
    let spec = session.config.model_spec(&session.data);
    let batch = session.config.batch;
    let peak = crate::bench::peak::measure(0.2);
    let all = crate::device::cores();
    let mut rows = Vec::new();
    for threads in [1, all] {
        let mut cpu = CpuBackend::new(threads).map_err(|e| Failure::BadInput(e.to_string()))?;
        let rates = crate::bench::measure_products(&mut cpu, &spec, batch, 0.3)
            .map_err(|e| Failure::BadInput(e.to_string()))?;
        rows.push((threads, rates));
    }
    if args.run.json {
        out.json(&KernelsSummary {
            fma_peak_per_core: peak,
            layers: &spec.layers,
            model: spec.describe(),
            batch,
            products: rows
                .iter()
                .map(|(threads, rates)| ThreadsRates {
                    threads: *threads,
                    rates,
                })
                .collect(),
        })?;
        return Ok(());
    }
    out.line(format!(
        "FMA peak of one core: {:.1} GFLOP/s ({}), measured",
        peak.gflop_per_s, peak.isa
    ))?;
    for (threads, rates) in &rows {
        for r in rates {
            out.line(format!(
                "{threads} thread(s)  {:<14} {:>5}x{:<5}x{:>5}  {:7.1} GFLOP/s  {:5.1}% of {} core peak",
                r.name,
                r.shape[0],
                r.shape[1],
                r.shape[2],
                r.gflop_per_s,
                100.0 * r.gflop_per_s / (peak.gflop_per_s * *threads as f64),
                threads
            ))?;
        }
    }
    Ok(())
}

/// `bench --kernels --device gpu --json`.
#[derive(Serialize)]
struct GpuKernelsSummary<'a> {
    adapter: &'a str,
    software: bool,
    /// The kernel this adapter's large products run.
    chosen: crate::backend::MatmulChoice,
    /// How it was chosen: the variants timed on this adapter (`None`: from its limits).
    tuning: Option<&'a crate::backend::MatmulTuning>,
    rates: &'a [crate::bench::gpu_products::GpuProductRate],
    overheads: crate::bench::gpu_products::Overheads,
    /// Each convolution block's kernels as the GPU's step runs them (a CNN's only).
    convolutions: &'a [ProductRate],
}

/// `bench --kernels --device gpu`: each matrix-product kernel's GFLOP/s on square products
/// from 256³ up (as far as a second a call allows), and the one this adapter runs.
fn gpu_kernels(out: &mut Out, args: &BenchArgs, session: &Session) -> Result<(), Failure> {
    let bad = |e: crate::backend::BackendError| Failure::BadInput(e.to_string());
    let mut gpu = crate::backend::open_gpu(crate::app::tuning_cache_path().as_deref())
        .map_err(|e| Failure::BadInput(e.to_string()))?;
    let (sizes, summary) = (gpu.kernel_sizes(), gpu.adapter().clone());
    let overheads = crate::bench::gpu_products::overheads(&mut gpu).map_err(bad)?;
    let spec = session.config.model_spec(&session.data);
    let convolutions =
        crate::bench::measure_convolutions(&mut gpu, &spec, session.config.batch, 0.3)
            .map_err(bad)?;
    let rates = crate::bench::gpu_products::measure(&mut gpu, 0.3).map_err(bad)?;
    drop(gpu);
    if args.run.json {
        out.json(&GpuKernelsSummary {
            adapter: &summary.name,
            software: summary.software,
            chosen: sizes.matmul,
            tuning: summary.matmul_tuning.as_deref(),
            rates: &rates,
            overheads,
            convolutions: &convolutions,
        })?;
        return Ok(());
    }
    out.line(format!(
        "GPU {}{}: large products run {} ({})",
        summary.name,
        software_note(&summary),
        sizes.matmul.as_str(),
        tuning_origin(summary.matmul_tuning.as_deref())
    ))?;
    for r in &rates {
        out.line(format!(
            "  {:<32} {n}x{n}x{n}  {:9.1} GFLOP/s",
            r.kernel.as_str(),
            r.gflop_per_s,
            n = r.size
        ))?;
    }
    for r in &convolutions {
        out.line(format!(
            "  {:<32} {}x{}x{}  {:9.1} GFLOP/s",
            r.name, r.shape[0], r.shape[1], r.shape[2], r.gflop_per_s
        ))?;
    }
    let o = overheads;
    out.line(format!(
        "  dispatch: {:.1} µs waited for, {:.1} µs queued; upload {:.2} GB/s, readback {:.2} GB/s",
        o.dispatch_sync_us, o.dispatch_queued_us, o.upload_gb_per_s, o.readback_gb_per_s
    ))?;
    Ok(())
}

/// What a software adapter's name is followed by wherever its speed is printed.
pub(super) fn software_note(adapter: &crate::backend::AdapterSummary) -> &'static str {
    if adapter.software {
        " (a software adapter: its speed says nothing about a GPU)"
    } else {
        ""
    }
}

/// The clock a tuning was timed by, in words.
pub(super) fn tuning_clock(tuning: &crate::backend::MatmulTuning) -> &'static str {
    if tuning.gpu_timestamps {
        "GPU timestamps"
    } else {
        "the host clock"
    }
}

/// How the large products' kernel was chosen, in words.
pub(super) fn tuning_origin(tuning: Option<&crate::backend::MatmulTuning>) -> String {
    match tuning {
        Some(t) => format!(
            "timed fastest on {n}x{n}x{n} products by {}, {}; thin weight gradients {}",
            tuning_clock(t),
            crate::bench::history::format_utc(t.tuned_at_s),
            if t.split_k {
                "split along k (timed faster)"
            } else {
                "whole (timed faster than split)"
            },
            n = t.size
        ),
        None => "from the adapter's limits; `batchscope tune` times the variants".to_owned(),
    }
}

/// `bench --recording-overhead`: the median step time with span recording off and on, from
/// runs that alternate on one model, and their ratio.
fn recording(
    out: &mut Out,
    args: &BenchArgs,
    session: &Session,
    devices: &[Device],
    plan: BenchPlan,
) -> Result<(), Failure> {
    on_each_device(out, devices, args.run.json, |out, device| {
        let mut backend = open_backend(device, &args.run)?;
        check_fits(backend.as_ref(), session, session.config.batch, "--batch")?;
        let mut result = Err(RunError::from("the benchmark did not run"));
        backend.enter(&mut |b| {
            result = crate::bench::measure_recording(b, session, plan).map_err(RunError::from);
        });
        let (off, on) = result?;
        let median_ms = |m: &crate::bench::Measurement| {
            crate::bench::median_of_sorted(&m.sorted_step_times_ms())
        };
        let (off_ms, on_ms) = (median_ms(&off), median_ms(&on));
        let overhead = on_ms / off_ms - 1.0;
        if args.run.json {
            out.json(&RecordingSummary {
                device,
                backend: backend.name(),
                steps_per_run: off.steps_per_run,
                runs: off.run_times_s.len(),
                step_time_off_ms: off_ms,
                step_time_recording_ms: on_ms,
                recording_overhead: overhead,
            })?;
        } else {
            out.line(format!(
                "{device} ({}): step {off_ms:.4} ms without recording, {on_ms:.4} ms recording \
                 (median of {} alternating runs of {} steps each): recording costs {:+.1}%",
                backend.name(),
                off.run_times_s.len(),
                off.steps_per_run,
                overhead * 100.0
            ))?;
        }
        Ok(())
    })
}
