//! The Experiments tab's serving section: after training, the latency of one request at a time
//! and of batched requests on each device, the article's deployment case, with a headline made
//! from this run's medians.

use egui::RichText;

use super::command::UiCommand;
use super::labels::device_title;
use crate::bench::infer::{Latency, Serving};
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::units::{format_ms, format_rate};

/// Draws the section: the button (or progress and Cancel), the table, the headline.
pub fn serving_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    serving: Option<&Serving>,
    can_run: bool,
    commands: &mut Vec<UiCommand>,
) {
    ui.heading(lang.tr(Key::ServingTitle));
    ui.label(lang.tr(Key::ServingIntro));
    let running = serving.is_some_and(|s| !s.ended);
    ui.horizontal(|ui| {
        if running {
            if ui.button(lang.tr(Key::Cancel)).clicked() {
                commands.push(UiCommand::CancelRequests);
            }
            if let Some(s) = serving {
                ui.add(
                    egui::ProgressBar::new(s.progress())
                        .desired_width(240.0)
                        .text(lang.tr(Key::ServingRunning)),
                );
            }
        } else if ui
            .add_enabled(can_run, egui::Button::new(lang.tr(Key::ServingRun)))
            .on_hover_text(lang.tr(Key::ServingRunTip))
            .clicked()
        {
            commands.push(UiCommand::TimeRequests);
        }
    });
    let Some(serving) = serving else {
        return;
    };
    let plan = serving.plan;
    ui.label(
        RichText::new(lang.fmt(
            Key::ServingPlan,
            &[
                ("steps", &plan.train_steps),
                ("requests", &plan.requests),
                ("batch", &plan.batch),
            ],
        ))
        .small(),
    );
    for (device, why) in &serving.failures {
        let text = format!("{}: {}", device_title(lang, *device), why.text(lang));
        ui.label(RichText::new(text).color(ui.visuals().warn_fg_color));
    }
    if serving.cancelled {
        ui.label(RichText::new(lang.tr(Key::ServingCancelled)).color(ui.visuals().warn_fg_color));
    }
    if let Some(headline) = headline(lang, serving) {
        ui.label(RichText::new(headline).strong());
    }
    if serving.reports.iter().any(|r| r.software_adapter) {
        ui.label(RichText::new(lang.tr(Key::ServingSoftware)).color(ui.visuals().warn_fg_color));
    }
    if serving.reports.is_empty() {
        return;
    }
    egui::Grid::new("serving").striped(true).show(ui, |ui| {
        for key in [
            Key::ServingDevice,
            Key::ServingRows,
            Key::ServingP50,
            Key::ServingP99,
            Key::ServingMax,
            Key::ServingThroughput,
            Key::ServingMadeOf,
        ] {
            ui.label(RichText::new(lang.tr(key)).strong());
        }
        ui.end_row();
        for report in &serving.reports {
            for latency in [&report.single, &report.batched] {
                latency_row(ui, lang, report.device, latency);
            }
        }
    });
    super::serving_tokens::generation_ui(ui, lang, serving);
}

fn latency_row(ui: &mut egui::Ui, lang: Lang, device: Device, l: &Latency) {
    ui.label(device_title(lang, device));
    ui.label(l.rows.to_string());
    ui.label(format_ms(l.p50_ms));
    ui.label(format_ms(l.p99_ms));
    ui.label(format_ms(l.max_ms));
    ui.label(lang.fmt(
        Key::ServingRowsPerS,
        &[("rate", &format_rate(l.rows_per_s))],
    ));
    let parts: Vec<String> = l
        .spans_per_request
        .iter()
        .map(|(category, n)| {
            // The categories by their names in the reader's language.
            let name = crate::trace::Category::ALL
                .into_iter()
                .find(|c| c.as_str() == category)
                .map_or(category.as_str(), |c| lang.tr(c.key()));
            format!("{n}× {name}")
        })
        .collect();
    ui.label(parts.join(lang.tr(crate::i18n::MsgKey::ListSeparator)))
        .on_hover_text(lang.tr(Key::ServingMadeOfTip));
    ui.end_row();
}

/// The single request's medians compared, once both devices are measured.
fn headline(lang: Lang, serving: &Serving) -> Option<String> {
    let median = |device| {
        serving
            .reports
            .iter()
            .find(|r| r.device == device)
            .map(|r| r.single.p50_ms)
    };
    let (cpu, gpu) = (median(Device::Cpu)?, median(Device::Gpu)?);
    if !(cpu > 0.0 && gpu > 0.0) {
        return None;
    }
    let (key, ratio) = if cpu <= gpu {
        (Key::ServingCpuFaster, gpu / cpu)
    } else {
        (Key::ServingGpuFaster, cpu / gpu)
    };
    Some(lang.fmt(
        key,
        &[
            ("cpu", &format_ms(cpu)),
            ("gpu", &format_ms(gpu)),
            ("ratio", &format!("{ratio:.1}")),
        ],
    ))
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::bench::infer::{InferPlan, InferReport, ServingNews};

    fn latency(rows: usize, p50_ms: f64) -> Latency {
        Latency {
            rows,
            requests: 200,
            p50_ms,
            p99_ms: p50_ms * 2.0,
            max_ms: p50_ms * 3.0,
            rows_per_s: rows as f64 / p50_ms * 1e3,
            spans_per_request: vec![("Memcpy".into(), 2), ("Kernel".into(), 3)],
        }
    }

    fn serving() -> Serving {
        let plan = InferPlan {
            train_steps: 300,
            requests: 200,
            batch: 32,
            warmup: 10,
            tokens: 0,
            kv_cache: None,
        };
        let mut s = Serving::new(plan, vec![Device::Cpu, Device::Gpu]);
        for (device, p50) in [(Device::Cpu, 0.02), (Device::Gpu, 0.5)] {
            s.apply(ServingNews::Measured(Box::new(InferReport {
                device,
                backend: "test".into(),
                software_adapter: device == Device::Gpu,
                single: latency(1, p50),
                batched: latency(32, p50 * 4.0),
                generation: Vec::new(),
            })));
        }
        s.ended = true;
        s
    }

    #[test]
    fn the_section_compares_the_single_requests_from_the_medians_in_both_languages() {
        for (lang, headline, button, parts) in [
            (
                Lang::En,
                "25.0× faster",
                "Time requests",
                "2× Memcpy, 3× Kernel",
            ),
            (
                Lang::Zh,
                "快 25.0 倍",
                "测量请求延迟",
                "2× 内存复制，3× 内核计算",
            ),
        ] {
            let serving = serving();
            let mut h = crate::ui::testing::harness(
                move |ui, commands: &mut Vec<UiCommand>| {
                    serving_ui(ui, lang, Some(&serving), true, commands);
                },
                Vec::new(),
            );
            h.run();
            assert!(h.query_by_label_contains(headline).is_some(), "{lang:?}");
            assert_eq!(h.query_all_by_label(parts).count(), 4);
            h.get_by_label(button).click();
            h.run();
            assert_eq!(h.state(), &[UiCommand::TimeRequests]);
        }
    }

    #[test]
    fn a_running_measurement_offers_cancel() {
        let plan = serving().plan;
        let running = Serving::new(plan, vec![Device::Cpu]);
        let mut h = crate::ui::testing::harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                serving_ui(ui, Lang::En, Some(&running), true, commands);
            },
            Vec::new(),
        );
        h.run();
        h.get_by_label("Cancel").click();
        h.run();
        assert_eq!(h.state(), &[UiCommand::CancelRequests]);
    }
}
