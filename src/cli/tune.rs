//! `batchscope tune`: times every matrix-product kernel variant on the GPU and keeps the fastest
//! for this adapter and driver (what the first run on a new adapter does by itself).

use super::failure::Failure;
use super::output::Out;
use crate::backend::gpu::GpuBackend;
use crate::backend::gpu::tuning::apply_or_tune;

pub(super) fn run(out: &mut Out, as_json: bool) -> Result<(), Failure> {
    let mut gpu = GpuBackend::new().map_err(|e| Failure::BadInput(e.reason.to_string()))?;
    let path = crate::app::tuning_cache_path();
    let notes = match &path {
        Some(path) => apply_or_tune(&mut gpu, path, true),
        None => match gpu.tune_matmul() {
            Ok(_) => {
                eprintln!("batchscope: no data directory was found: the choice is not kept");
                Vec::new()
            }
            Err(e) => return Err(Failure::BadInput(e.to_string())),
        },
    };
    for note in &notes {
        eprintln!("batchscope: {note}");
    }
    let adapter = gpu.adapter().clone();
    let Some(tuning) = adapter.matmul_tuning.as_deref() else {
        let notes: Vec<String> = notes.iter().map(ToString::to_string).collect();
        return Err(Failure::BadInput(notes.join("; ")));
    };
    if as_json {
        out.json(&serde_json::json!({
            "adapter": adapter.name,
            "software": adapter.software,
            "tuning": tuning,
            "cache": path,
        }))?;
        return Ok(());
    }
    out.line(format!(
        "GPU {}{}: matrix-product kernels on {n}x{n}x{n} products, timed by {}",
        adapter.name,
        super::bench::software_note(&adapter),
        super::bench::tuning_clock(tuning),
        n = tuning.size
    ))?;
    for (kernel, rate) in &tuning.rates {
        let mark = if *kernel == tuning.chosen {
            "  <- chosen"
        } else {
            ""
        };
        out.line(format!(
            "  {:<34} {rate:9.1} GFLOP/s{mark}",
            kernel.as_str()
        ))?;
    }
    let [whole, split] = tuning.split_rates;
    out.line(format!(
        "thin weight gradients (72x16 over 16384 rows): {whole:.1} GFLOP/s whole, {split:.1} split \
         along k -> {}",
        if tuning.split_k { "split" } else { "whole" }
    ))?;
    if let Some(path) = path {
        out.line(format!("kept in {}", path.display()))?;
    }
    Ok(())
}
