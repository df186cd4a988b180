//! `batchscope devices`: the CPU's threads and every GPU adapter wgpu finds, with its API,
//! whether it is a software adapter, its features and limits, and whether it can train.

use serde::Serialize;

use super::failure::Failure;
use super::output::Out;
use crate::backend::AdapterSummary;
use crate::backend::gpu::context;
use crate::backend::gpu::tuning::{TuningCache, apply_tuning, tuning_key};
use crate::i18n::{ErrKey, Lang, Said};

/// What `devices --json` prints.
#[derive(Serialize)]
struct DevicesSummary {
    cpu: CpuSummary,
    /// The backends the training instance may use.
    training_backends: String,
    adapters: Vec<AdapterSummary>,
}

#[derive(Serialize)]
struct CpuSummary {
    threads: usize,
}

pub(super) fn run(out: &mut Out, as_json: bool) -> Result<(), Failure> {
    let mut adapters = context::enumerate(wgpu::Backends::all());
    if let Some(path) = crate::app::tuning_cache_path() {
        let (cache, problem) = TuningCache::load(&path);
        if let Some(problem) = problem {
            eprintln!("batchscope: {problem}");
        }
        for a in &mut adapters {
            if let Some(tuning) = cache.find(&tuning_key(a)).cloned() {
                apply_tuning(a, &tuning);
            }
        }
    }
    let threads = crate::device::cores();
    if as_json {
        out.json(&DevicesSummary {
            cpu: CpuSummary { threads },
            training_backends: format!("{:?}", context::training_backends()),
            adapters,
        })?;
        return Ok(());
    }
    out.line(format!("CPU: {threads} threads"))?;
    if adapters.is_empty() {
        out.line(context::no_adapter_reason(&Said::new(
            ErrKey::NoneEnumerated,
            &[],
        )))?;
    }
    for a in &adapters {
        out.line(format!(
            "{} [{}] {}{} — {} {}\n  timestamps: {}, shader f16: {}, max buffer {} MiB, \
             max storage binding {} MiB, training: {}, workgroups: matmul {}x{}, element-wise {}\n  \
             large matrix products: {} ({})\n  optimizer updates: {}",
            a.name,
            a.backend,
            crate::ui::labels::device_type_key(&a.device_type)
                .map_or(a.device_type.as_str(), |key| Lang::En.tr(key)),
            if a.software {
                " (software adapter: its speed says nothing about a GPU)"
            } else {
                ""
            },
            a.driver,
            a.driver_info,
            a.timestamps,
            a.shader_f16,
            a.max_buffer_size_bytes >> 20,
            a.max_storage_buffer_binding_size_bytes >> 20,
            if a.usable_for_training { "yes" } else { "no" },
            a.kernel_sizes.matmul_tile,
            a.kernel_sizes.matmul_tile,
            a.kernel_sizes.elementwise,
            a.kernel_sizes.matmul.as_str(),
            super::bench::tuning_origin(a.matmul_tuning.as_deref()),
            if a.kernel_sizes.paired_updates {
                "a layer's weights and biases in one dispatch (f32 storage)"
            } else {
                "one dispatch per tensor (fewer than 8 storage buffers a kernel)"
            },
        ))?;
    }
    Ok(())
}
