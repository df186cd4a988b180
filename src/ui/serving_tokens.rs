//! The serving section's part for a language model: characters written a character at a time,
//! with and without a key-value cache, for one prompt and a batch of prompts on each device,
//! with a verdict made from this run's medians for each.

use egui::RichText;

use super::labels::device_title;
use crate::bench::infer::Serving;
use crate::bench::infer_tokens::{CacheVerdict, Generation, cache_verdict, same_text};
use crate::i18n::{GenKey, Lang};
use crate::units::{format_bytes, format_ms, format_rate};

/// Draws the generation table and its verdicts, where a report has any.
pub fn generation_ui(ui: &mut egui::Ui, lang: Lang, serving: &Serving) {
    if serving.reports.iter().all(|r| r.generation.is_empty()) {
        return;
    }
    ui.add_space(8.0);
    ui.strong(lang.tr(GenKey::Title));
    ui.label(lang.tr(GenKey::Intro));
    for line in verdicts(lang, serving) {
        ui.label(RichText::new(line).strong());
    }
    let same = serving.reports.iter().all(|r| same_text(&r.generation));
    ui.label(lang.tr(if same {
        GenKey::SameText
    } else {
        GenKey::OtherText
    }));
    egui::Grid::new("serving_generation")
        .striped(true)
        .show(ui, |ui| {
            ui.label(RichText::new(lang.tr(crate::i18n::Key::ServingDevice)).strong());
            for key in [
                GenKey::Prompts,
                GenKey::Cache,
                GenKey::PerSecond,
                GenKey::PerChar,
                GenKey::Passes,
                GenKey::CacheSize,
            ] {
                ui.label(RichText::new(lang.tr(key)).strong());
            }
            ui.end_row();
            for report in &serving.reports {
                for g in &report.generation {
                    ui.label(device_title(lang, report.device));
                    ui.label(g.prompts.to_string());
                    ui.label(lang.tr(if g.kv_cache { GenKey::On } else { GenKey::Off }));
                    ui.label(lang.fmt(GenKey::Rate, &[("rate", &format_rate(g.tokens_per_s))]));
                    ui.label(format_ms(g.p50_ms_per_token));
                    ui.label(g.window_passes.to_string());
                    ui.label(if g.kv_cache {
                        format_bytes(g.cache_bytes as u64)
                    } else {
                        "—".to_owned()
                    });
                    ui.end_row();
                }
            }
        });
}

/// A sentence for each device and batch of prompts measured both ways.
pub fn verdicts(lang: Lang, serving: &Serving) -> Vec<String> {
    let mut lines = Vec::new();
    for report in &serving.reports {
        let find = |prompts: usize, on: bool| {
            report
                .generation
                .iter()
                .find(|g| g.prompts == prompts && g.kv_cache == on)
        };
        let mut sizes: Vec<usize> = report.generation.iter().map(|g| g.prompts).collect();
        sizes.dedup();
        for prompts in sizes {
            let (Some(with), Some(without)) = (find(prompts, true), find(prompts, false)) else {
                continue;
            };
            lines.push(verdict(lang, report.device, (with, without)));
        }
    }
    lines
}

fn verdict(
    lang: Lang,
    device: crate::device::Device,
    (with, without): (&Generation, &Generation),
) -> String {
    let (w, wo) = (
        format_ms(with.p50_ms_per_token),
        format_ms(without.p50_ms_per_token),
    );
    // Called only where the printed figures differ too, so the sentence never contradicts them.
    let called = if w == wo {
        CacheVerdict::TooClose
    } else {
        cache_verdict(with, without)
    };
    let device = device_title(lang, device);
    let ratio;
    let mut args: Vec<(&str, &dyn std::fmt::Display)> = vec![
        ("device", &device),
        ("prompts", &with.prompts),
        ("with", &w),
        ("without", &wo),
    ];
    let key = match called {
        CacheVerdict::Faster(r) => {
            ratio = format!("{r:.1}");
            args.push(("ratio", &ratio));
            GenKey::Faster
        }
        CacheVerdict::Slower => GenKey::Slower,
        CacheVerdict::TooClose => GenKey::TooClose,
    };
    lang.fmt(key, &args)
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::bench::infer::{InferPlan, InferReport, Latency, ServingNews};
    use crate::device::Device;

    fn generation(prompts: usize, kv_cache: bool, p50: f64, iqr: f64) -> Generation {
        Generation {
            prompts,
            kv_cache,
            tokens: 100 * prompts,
            tokens_per_s: prompts as f64 * 1e3 / p50,
            p50_ms_per_token: p50,
            p99_ms_per_token: p50 * 3.0,
            iqr_ms_per_token: iqr,
            window_passes: if kv_cache { 4 } else { 100 },
            cache_bytes: if kv_cache { 262_144 * prompts } else { 0 },
            text: "to be".into(),
        }
    }

    fn latency(rows: usize) -> Latency {
        Latency {
            rows,
            requests: 10,
            p50_ms: 1.0,
            p99_ms: 2.0,
            max_ms: 3.0,
            rows_per_s: 1e3,
            spans_per_request: Vec::new(),
        }
    }

    /// The CPU's cache is clearly faster; the GPU's two medians sit inside their spread.
    fn serving() -> Serving {
        let plan = InferPlan {
            train_steps: 300,
            requests: 10,
            batch: 12,
            warmup: 1,
            tokens: 100,
            kv_cache: None,
        };
        let mut s = Serving::new(plan, vec![Device::Cpu, Device::Gpu]);
        let runs = [
            (Device::Cpu, [(2.5, 0.1), (0.2, 0.01)]),
            (Device::Gpu, [(14.0, 3.0), (13.0, 2.5)]),
        ];
        for (device, [(off, off_iqr), (on, on_iqr)]) in runs {
            s.apply(ServingNews::Measured(Box::new(InferReport {
                device,
                backend: "test".into(),
                software_adapter: false,
                single: latency(1),
                batched: latency(12),
                generation: vec![
                    generation(1, false, off, off_iqr),
                    generation(1, true, on, on_iqr),
                ],
            })));
        }
        s.ended = true;
        s
    }

    #[test]
    fn a_difference_inside_the_spread_is_too_close_to_call() {
        let a = generation(1, true, 10.0, 1.0);
        assert_eq!(
            cache_verdict(&a, &generation(1, false, 10.5, 0.2)),
            CacheVerdict::TooClose
        );
        assert_eq!(
            cache_verdict(&a, &generation(1, false, 12.0, 0.2)),
            CacheVerdict::Faster(1.2)
        );
        assert_eq!(
            cache_verdict(&a, &generation(1, false, 8.0, 0.2)),
            CacheVerdict::Slower
        );
        // The floor: two medians 1% apart with no spread at all are not called.
        let tight = generation(1, true, 10.0, 0.0);
        assert_eq!(
            cache_verdict(&tight, &generation(1, false, 10.1, 0.0)),
            CacheVerdict::TooClose
        );
    }

    #[test]
    fn the_table_and_its_verdicts_read_in_both_languages() {
        let s = serving();
        for (lang, faster, close, same) in [
            (Lang::En, "12.5× as long", "too close to call", "Same text"),
            (Lang::Zh, "是前者的 12.5 倍", "无法判断", "文本都相同"),
        ] {
            let lines = verdicts(lang, &s);
            assert_eq!(lines.len(), 2, "{lines:?}");
            assert!(lines[0].contains(faster), "{}", lines[0]);
            assert!(lines[1].contains(close), "{}", lines[1]);
            let shown = s.clone();
            let mut harness = crate::ui::testing::harness(
                move |ui, (): &mut ()| generation_ui(ui, lang, &shown),
                (),
            );
            harness.run();
            harness.get_by_label_contains(faster);
            harness.get_by_label_contains(same);
            harness.get_by_label(lang.tr(GenKey::PerChar));
            // Each device's cached row.
            assert_eq!(harness.query_all_by_label("256.0 KiB").count(), 2);
        }
    }
}
