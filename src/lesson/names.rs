//! A figure's name in words, in the reader's language: `speed.cpu.samples_per_s` is "samples
//! per second on the CPU" / "CPU 的每秒样本数". The probe's own name (`speed`, `starved`) is the
//! lesson author's and is left out; what was measured and on which device is what a reader
//! needs. A name this table does not know is shown as it is written.

use super::figures::SHARES;
use crate::i18n::{Lang, LessonKey};
use crate::memory::Role;
use crate::trace::Category;

/// The words for `name`, a figure's name or the ratio of two (`a / b`).
pub fn figure_label(name: &str, lang: Lang) -> String {
    if let Some((a, b)) = name.split_once('/') {
        let (a, b) = (figure_label(a.trim(), lang), figure_label(b.trim(), lang));
        return lang.fmt(LessonKey::FigRatio, &[("a", &a), ("b", &b)]);
    }
    let parts: Vec<&str> = name.split('.').collect();
    let (device, part) = match parts.as_slice() {
        [_, device @ ("cpu" | "gpu"), rest @ ..] => (Some(device.to_uppercase()), rest.join(".")),
        [_, rest @ ..] if !rest.is_empty() => (None, rest.join(".")),
        _ => return name.to_owned(),
    };
    let Some(words) = part_words(&part, lang) else {
        return name.to_owned();
    };
    match device {
        Some(device) => lang.fmt(
            LessonKey::FigOnDevice,
            &[("part", &words), ("device", &device)],
        ),
        None => words,
    }
}

/// The words for a figure's last part (`samples_per_s`, `data_loader_share`, `peak_bytes`).
fn part_words(part: &str, lang: Lang) -> Option<String> {
    let plain = |key| Some(lang.tr(key).to_owned());
    match part {
        "samples_per_s" | "first_samples_per_s" | "last_samples_per_s" => {
            plain(LessonKey::FigSamplesPerS)
        }
        "step_ms" => plain(LessonKey::FigStepMs),
        "tokens_per_s" => plain(LessonKey::FigTokensPerS),
        "dispatches_per_step" | "gpu.dispatches_per_step" | "kernels_per_step" => {
            plain(LessonKey::FigKernelsPerStep)
        }
        "gain" => plain(LessonKey::FigGain),
        "total_bytes" => plain(LessonKey::FigTotalBytes),
        "peak_bytes" => plain(LessonKey::FigPeakBytes),
        "busy_share" => plain(LessonKey::FigBusyShare),
        "speedup" => plain(LessonKey::FigSpeedup),
        "loss" => plain(LessonKey::FigTestLoss),
        "accuracy" => plain(LessonKey::FigTestAccuracy),
        "epochs" => plain(LessonKey::FigEpochs),
        "updates" => plain(LessonKey::FigUpdates),
        "seconds" => plain(LessonKey::FigTrainingTime),
        "seconds_to_target" => plain(LessonKey::FigTimeToTarget),
        "grad_underflow_share" => plain(LessonKey::FigGradientsLost),
        "loss_scale" => plain(LessonKey::FigLossScale),
        "skipped_steps" => plain(LessonKey::FigSkippedSteps),
        "request_ms" => plain(LessonKey::FigRequest),
        "request_p99_ms" => plain(LessonKey::FigRequestP99),
        "batched_rows_per_s" => plain(LessonKey::FigBatchedRows),
        "products_flops_share" => plain(LessonKey::FigProductsFlops),
        "products_time_share" => plain(LessonKey::FigProductsTime),
        "attention_flops_share" => plain(LessonKey::FigAttentionFlops),
        "attention_time_share" => plain(LessonKey::FigAttentionTime),
        "compute_share" => plain(LessonKey::FigComputeShare),
        "launch_share" => plain(LessonKey::FigLaunchShare),
        "copy_share" => plain(LessonKey::FigCopyShare),
        _ => {
            if let Some(i) = SHARES.iter().position(|s| *s == part) {
                let category = lang.tr(Category::ALL[i].key());
                return Some(lang.fmt(LessonKey::FigShareOfStep, &[("part", &category)]));
            }
            let role = part.strip_suffix("_bytes")?;
            let role = Role::ALL.into_iter().find(|r| r.as_str() == role)?;
            Some(lang.fmt(LessonKey::FigRoleBytes, &[("role", &lang.tr(role.key()))]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_named_in_words_in_both_languages() {
        let cases = [
            (
                "speed.cpu.samples_per_s",
                "samples per second on the CPU",
                "CPU 的每秒样本数",
            ),
            (
                "starved.cpu.data_loader_share",
                "DataLoader share of a step on the CPU",
                "CPU 的数据加载占每步的比例",
            ),
            (
                "memory.gpu.activations_bytes",
                "Activations memory on the GPU",
                "GPU 的激活值内存",
            ),
            (
                "speed.gpu.dispatches_per_step",
                "kernels per step on the GPU",
                "GPU 的每步内核数",
            ),
        ];
        for (name, en, zh) in cases {
            assert_eq!(figure_label(name, Lang::En), en);
            assert_eq!(figure_label(name, Lang::Zh), zh);
        }
        // A name the table does not know is kept as written, never dropped.
        assert_eq!(figure_label("odd", Lang::En), "odd");
        assert_eq!(figure_label("p.cpu.odd_thing", Lang::Zh), "p.cpu.odd_thing");
    }
}
