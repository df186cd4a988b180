//! The precision view: each device's weights, activations and gradients on a log2 axis against
//! the FP16 and BF16 ranges, what storing them in 16 bits lost (counted where it happened), the
//! loss scale with its skipped steps, the same run in every format overlaid, and the bytes each
//! format takes per role.

use egui::{Color32, RichText};
use egui_plot::{Bar, BarChart, Legend, Line, Plot, PlotPoints, Points, Polygon, Text, VLine};

use super::command::UiCommand;
use super::labels::{
    device_title, precision_label, precision_short, role_color, role_key, weight_text,
};
use crate::data::Dataset;
use crate::i18n::{Key, Lang};
use crate::memory::Role;
use crate::precision::DType;
use crate::precision::{Half, Log2Histogram, Precision};
use crate::sim::estimate;
use crate::train::compare::{self, COMPARE_STEPS, Comparison};
use crate::train::{DeviceRun, TrainConfig, ValueSample, eval_rows};
use crate::units::format_bytes;

/// The log2 axis of the histograms spans at least this (FP16's whole range and a margin).
const AXIS: (i32, i32) = (-30, 18);

/// Values below 2^FLOOR share the axis's first bar (f32 gradients reach 2^-149; an axis that long
/// would squeeze FP16's range into a sliver).
const FLOOR: i32 = -60;

/// BF16's limits as powers of two: smallest subnormal, smallest normal, overflow.
const BF16_LIMITS: [i32; 3] = [-133, -126, 128];

/// Shades of the zones a format loses values in.
const LOST: Color32 = Color32::from_rgba_premultiplied(120, 30, 30, 90);
const SUBNORMAL: Color32 = Color32::from_rgba_premultiplied(120, 90, 20, 70);

/// A format's colour in the comparison.
fn format_color(p: Precision) -> Color32 {
    match p {
        Precision::Fp32 => Color32::from_rgb(66, 165, 245),
        Precision::Fp16 => Color32::from_rgb(239, 83, 80),
        Precision::Bf16 => Color32::from_rgb(102, 187, 106),
        Precision::Mixed => Color32::from_rgb(255, 202, 40),
    }
}

/// The precision view (it keeps no state of its own: the app holds the runs and the
/// comparison).
#[derive(Default)]
pub struct PrecisionPanel;

impl PrecisionPanel {
    /// Draws the view.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        runs: &[DeviceRun; 2],
        comparison: Option<&Comparison>,
        config: &TrainConfig,
        data: Option<&Dataset>,
        commands: &mut Vec<UiCommand>,
    ) {
        ui.heading(lang.tr(Key::PrecisionTab));
        ui.label(RichText::new(lang.tr(Key::PrecisionIntro)).weak());
        for run in runs.iter().filter(|r| r.enabled) {
            ui.separator();
            device_ui(ui, lang, run);
        }
        ui.separator();
        comparison_ui(ui, lang, comparison, commands);
        if let Some(data) = data {
            ui.separator();
            bytes_ui(ui, lang, config, data);
        }
        ui.separator();
        ui.label(RichText::new(lang.tr(Key::PrecisionSpeed)).weak());
    }
}

/// The same run in every format: the button, the progress, the curves and the table.
fn comparison_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    comparison: Option<&Comparison>,
    commands: &mut Vec<UiCommand>,
) {
    ui.label(RichText::new(lang.tr(Key::CompareTitle)).strong());
    let running = comparison.is_some_and(|c| c.running);
    ui.horizontal_wrapped(|ui| {
        if running {
            if ui.button(lang.tr(Key::CompareStop)).clicked() {
                commands.push(UiCommand::CancelComparison);
            }
        } else if ui
            .button(lang.fmt(Key::CompareRun, &[("steps", &COMPARE_STEPS)]))
            .on_hover_text(lang.tr(Key::CompareTip))
            .clicked()
        {
            commands.push(UiCommand::ComparePrecisions);
        }
        if let Some((format, step, steps)) = comparison.and_then(|c| c.progress) {
            ui.add(
                egui::ProgressBar::new(step as f32 / steps.max(1) as f32)
                    .desired_width(160.0)
                    .text(format!("{} {step}/{steps}", precision_short(lang, format))),
            );
        }
    });
    let Some(c) = comparison else {
        return;
    };
    if let Some(message) = &c.failed {
        ui.colored_label(ui.visuals().error_fg_color, message.text(lang));
    }
    if c.runs.is_empty() {
        return;
    }
    ui.label(
        RichText::new(lang.fmt(
            Key::CompareCaption,
            &[
                ("steps", &COMPARE_STEPS),
                ("seed", &c.config.seed),
                ("batch", &c.config.batch),
                ("optimizer", &c.config.optimizer.as_str()),
                ("weight", &weight_text(c.config.loss_weight)),
            ],
        ))
        .weak(),
    );
    let width = crate::ui::plots::line_width(ui);
    let shown = crate::ui::plots::readable(Plot::new("precision-compare"), ui)
        .height(200.0)
        .legend(Legend::default())
        .include_x(0.0)
        .x_axis_label(lang.tr(Key::Step))
        .y_axis_label(lang.tr(Key::Loss))
        .include_y(0.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            for run in &c.runs {
                let points: PlotPoints = run.losses.iter().copied().collect();
                plot.line(
                    Line::new(precision_label(lang, run.precision), points)
                        .color(format_color(run.precision))
                        .width(width),
                );
            }
        });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
    egui::Grid::new("compare-table")
        .striped(true)
        .show(ui, |ui| {
            for key in [
                Key::Format,
                Key::FinalLoss,
                Key::GradientsLost,
                Key::CpuStepTime,
                Key::LossScaleShort,
            ] {
                ui.label(RichText::new(lang.tr(key)).strong());
            }
            ui.end_row();
            for run in &c.runs {
                ui.colored_label(
                    format_color(run.precision),
                    precision_short(lang, run.precision),
                );
                match (&run.error, run.losses.last()) {
                    (Some(e), _) => {
                        ui.colored_label(ui.visuals().error_fg_color, lang.tr(Key::Diverged))
                            .on_hover_text(e.text(lang));
                    }
                    (None, Some(p)) => {
                        ui.label(format!("{:.4}", p[1]));
                    }
                    (None, None) => {
                        ui.label("–");
                    }
                }
                let lost = run.rounding.gradients();
                if run.precision == Precision::Fp32 {
                    ui.label("–");
                } else {
                    ui.label(format!("{:.2}%", lost.underflow_share() * 100.0));
                }
                ui.label(format!("{:.3} ms", run.step_ms));
                match (run.final_scale, run.skipped) {
                    (Some(s), Some(k)) => {
                        ui.label(lang.fmt(Key::ScaleSkipped, &[("scale", &s), ("skipped", &k)]))
                    }
                    _ => ui.label("–"),
                };
                ui.end_row();
            }
        });
}

/// One device's histograms, rounding losses and loss scale.
fn device_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun) {
    let title = device_title(lang, run.device);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(title).strong().size(18.0));
        ui.label(RichText::new(precision_label(lang, run.precision)).strong())
            .on_hover_text(lang.tr(Key::PrecisionTip));
        if let Some(a) = run.adapter() {
            let key = if a.shader_f16 {
                Key::ShaderF16Unused
            } else {
                Key::ShaderF16Absent
            };
            ui.label(RichText::new(lang.tr(key)).weak());
        }
    });
    let Some(values) = &run.values else {
        ui.label(RichText::new(lang.tr(Key::NoValuesYet)).weak());
        return;
    };
    ui.label(RichText::new(lang.fmt(Key::ValuesAtStep, &[("step", &values.step)])).weak());
    ui.columns(3, |cols| {
        let kinds = [
            (Key::Weights, &values.weights, Role::Parameters),
            (Key::ActivationsWord, &values.activations, Role::Activations),
            (Key::GradientsWord, &values.gradients, Role::Gradients),
        ];
        for ((key, sample, role), ui) in kinds.into_iter().zip(cols.iter_mut()) {
            super::left_aligned(ui, |ui| {
                super::lesson::framed(ui, crate::lesson::Widget::PrecisionHistogram, |ui| {
                    let sampled = Sampled { key, sample, role };
                    histogram_ui(ui, lang, run, sampled);
                });
            });
        }
    });
    if run.precision != Precision::Fp32 && !run.rounding.is_empty() {
        let g = run.rounding.gradients();
        let a = run.rounding.role(Role::Activations);
        ui.label(lang.fmt(
            Key::RoundingLost,
            &[
                ("gzero", &percent(g.underflow_share())),
                ("ginf", &percent(g.overflow_share())),
                ("gcount", &g.nonzero),
                ("azero", &percent(a.underflow_share())),
                ("ainf", &percent(a.overflow_share())),
            ],
        ))
        .on_hover_text(lang.tr(Key::RoundingLostTip));
    }
    if run.precision == Precision::Mixed {
        loss_scale_ui(ui, lang, run);
    }
}

fn percent(share: f64) -> String {
    format!("{:.2}%", share * 100.0)
}

/// One sample of values a histogram shows: what they are (named by `key`) and their role.
#[derive(Clone, Copy)]
struct Sampled<'a> {
    key: Key,
    sample: &'a ValueSample,
    role: Role,
}

/// Where a histogram's bars sit: the exponents its axis spans and what its shares are of.
struct HistAxis {
    /// The axis's first and last exponents (counts below `lo` are drawn at it).
    lo: i32,
    hi: i32,
    /// The exponent of the highest count.
    last: i32,
    /// Every value sampled: counted, zero or not finite.
    total: f64,
}

impl HistAxis {
    fn of(h: &Log2Histogram) -> Self {
        let total = (h.counts.iter().sum::<u64>() + h.zeros + h.non_finite).max(1) as f64;
        let last = h.first_exponent + h.counts.len() as i32 - 1;
        let (lo, hi) = if h.counts.is_empty() {
            AXIS
        } else {
            (h.first_exponent.max(FLOOR).min(AXIS.0), last.max(AXIS.1))
        };
        Self {
            lo,
            hi,
            last,
            total,
        }
    }

    /// Where exact zeros get a bar of their own, left of the axis.
    fn zero_x(&self) -> f64 {
        f64::from(self.lo) - 2.0
    }
}

/// A histogram of |value| on a log2 axis with FP16's zones shaded and BF16's limits named.
fn histogram_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun, sampled: Sampled<'_>) {
    let Sampled { key, sample, role } = sampled;
    let h: &Log2Histogram = &sample.histogram;
    let axis = HistAxis::of(h);
    let mut counts = std::collections::BTreeMap::new();
    for (i, &n) in h.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        *counts
            .entry((h.first_exponent + i as i32).max(axis.lo))
            .or_insert(0) += n;
    }
    let bars: Vec<Bar> = counts
        .into_iter()
        .map(|(e, n)| Bar::new(f64::from(e) + 0.5, 100.0 * n as f64 / axis.total).width(1.0))
        .collect();
    let zero_share = 100.0 * h.zeros as f64 / axis.total;
    let zero_bar = Bar::new(axis.zero_x(), zero_share)
        .width(1.5)
        .fill(Color32::from_gray(160));
    let top = bars
        .iter()
        .map(|b| b.value)
        .fold(zero_share, f64::max)
        .max(1.0)
        * 1.15;
    let shown =
        crate::ui::plots::readable(Plot::new(("precision-hist", run.device, role.index())), ui)
            .height(150.0)
            .include_x(axis.zero_x() - 1.0)
            .include_x(f64::from(axis.hi) + 1.0)
            .include_y(0.0)
            .include_y(top)
            .x_axis_label("log2 |x|")
            .y_axis_label("%")
            .allow_scroll(false)
            .allow_drag(false)
            .allow_zoom(false)
            .show(ui, |plot| {
                fp16_zones(plot, &axis, top);
                plot.bar_chart(
                    BarChart::new(lang.tr(key), bars)
                        .color(role_color(role))
                        .element_formatter(Box::new(|bar, _| {
                            format!(
                                "2^{} .. 2^{}: {:.1}%",
                                bar.argument - 0.5,
                                bar.argument + 0.5,
                                bar.value
                            )
                        })),
                );
                plot.bar_chart(BarChart::new("0", vec![zero_bar]));
                plot.text(Text::new("0", [axis.zero_x(), top * 0.92].into(), "0"));
                bf16_limits(plot, &axis, top);
            });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
    histogram_caption_ui(ui, lang, sampled, &axis);
}

/// FP16's zones shaded (flushed to zero, subnormal, overflowing) and its limits drawn.
fn fp16_zones(plot: &mut egui_plot::PlotUi<'_>, axis: &HistAxis, top: f64) {
    let zone = |from: f64, to: f64, color: Color32, name: &str| {
        Polygon::new(
            name.to_owned(),
            PlotPoints::from(vec![[from, 0.0], [to, 0.0], [to, top], [from, top]]),
        )
        .fill_color(color)
        .stroke(egui::Stroke::NONE)
    };
    let fp16 = Half::Fp16;
    let (sub_lo, norm_lo) = (
        fp16.min_positive_subnormal().log2() as f64,
        fp16.min_positive_normal().log2() as f64,
    );
    let max = f64::from(fp16.max()).log2();
    plot.polygon(zone(
        f64::from(axis.lo) - 0.5,
        sub_lo - 1.0,
        LOST,
        "FP16 → 0",
    ));
    plot.polygon(zone(sub_lo - 1.0, norm_lo, SUBNORMAL, "FP16 subnormal"));
    plot.polygon(zone(max, f64::from(axis.hi) + 1.0, LOST, "FP16 → ∞"));
    for (x, name) in [
        (sub_lo, "FP16 5.96e-8"),
        (norm_lo, "FP16 6.10e-5"),
        (max, "FP16 65504"),
    ] {
        plot.vline(VLine::new(name, x).color(Color32::from_rgb(239, 83, 80)));
    }
}

/// BF16's limits, where the axis reaches them; otherwise named at its edges.
fn bf16_limits(plot: &mut egui_plot::PlotUi<'_>, axis: &HistAxis, top: f64) {
    let (lo, hi) = (axis.lo, axis.hi);
    let bf16 = Color32::from_rgb(102, 187, 106);
    for e in BF16_LIMITS {
        if (lo..=hi).contains(&e) {
            plot.vline(VLine::new("BF16", f64::from(e)).color(bf16));
        }
    }
    // Anchored to their own edges and at two heights, so that a narrow plot (three to a row in
    // presenter mode) does not print one over the other.
    if lo > BF16_LIMITS[0] {
        let at = [f64::from(lo) - 0.5, top * 0.75];
        let text = Text::new("bf16-low", at.into(), "◀ BF16 2^-133");
        plot.text(text.color(bf16).anchor(egui::Align2::LEFT_CENTER));
    }
    if hi < BF16_LIMITS[2] {
        let at = [f64::from(hi) + 1.0, top * 0.55];
        let text = Text::new("bf16-high", at.into(), "2^128 ▶");
        plot.text(text.color(bf16).anchor(egui::Align2::RIGHT_CENTER));
    }
}

/// Under a histogram: the values' range and zeros, what FP16 and BF16 would lose of them, and
/// how many were not finite.
fn histogram_caption_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    Sampled { key, sample, .. }: Sampled<'_>,
    axis: &HistAxis,
) {
    let h = &sample.histogram;
    let lost = |r: &crate::precision::RangeReport| {
        (percent(r.underflow_share()), percent(r.overflow_share()))
    };
    let (z16, i16) = lost(&sample.in_fp16);
    let (zb, ib) = lost(&sample.in_bf16);
    let range = if h.counts.is_empty() {
        "–".to_owned()
    } else {
        format!("2^{} .. 2^{}", h.first_exponent, axis.last + 1)
    };
    if h.first_exponent < axis.lo && !h.counts.is_empty() {
        ui.label(
            RichText::new(lang.fmt(Key::AxisFloor, &[("floor", &axis.lo)]))
                .weak()
                .small(),
        );
    }
    ui.label(lang.fmt(
        Key::HistogramCaption,
        &[
            ("name", &lang.tr(key)),
            ("dtype", &dtype_name(lang, sample.dtype)),
            ("zeros", &percent(h.zeros as f64 / axis.total)),
            ("range", &range),
        ],
    ));
    ui.label(
        RichText::new(lang.fmt(
            Key::WouldLose,
            &[("z16", &z16), ("i16", &i16), ("zb", &zb), ("ib", &ib)],
        ))
        .weak(),
    )
    .on_hover_text(lang.tr(Key::WouldLoseTip));
    if h.non_finite > 0 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            lang.fmt(Key::NonFinite, &[("count", &h.non_finite)]),
        );
    }
}

fn dtype_name(lang: Lang, dtype: DType) -> String {
    match dtype {
        DType::F32 => lang.tr(Key::StoredF32).to_owned(),
        DType::F16 => lang.tr(Key::StoredF16).to_owned(),
        DType::Bf16 => lang.tr(Key::StoredBf16).to_owned(),
    }
}

/// The loss scale at each report on a log2 axis, the reports with skipped updates marked.
fn loss_scale_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun) {
    let Some(log) = &run.last_log else {
        return;
    };
    ui.label(lang.fmt(
        Key::ScaleNow,
        &[
            ("scale", &log.loss_scale.unwrap_or(0.0)),
            ("skipped", &log.skipped_steps.unwrap_or(0)),
        ],
    ))
    .on_hover_text(lang.tr(Key::ScaleTip));
    let log2 = |v: f64| v.max(1.0).log2();
    let line: PlotPoints = run
        .loss_scale
        .points()
        .iter()
        .map(|p| [p[0], log2(p[1])])
        .collect();
    let marks: PlotPoints = run.skip_marks.iter().map(|p| [p[0], log2(p[1])]).collect();
    let width = crate::ui::plots::line_width(ui);
    let shown = crate::ui::plots::readable(Plot::new(("loss-scale", run.device)), ui)
        .height(120.0)
        .legend(Legend::default())
        .x_axis_label(lang.tr(Key::Step))
        .y_axis_label(lang.tr(Key::Log2Scale))
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.line(Line::new(lang.tr(Key::LossScaleShort), line).width(width));
            plot.points(
                Points::new(lang.tr(Key::SkippedSteps), marks)
                    .radius(4.0)
                    .color(Color32::from_rgb(239, 83, 80)),
            );
        });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
}

/// Bytes per role in each format for the set-up model, from the estimator.
fn bytes_ui(ui: &mut egui::Ui, lang: Lang, config: &TrainConfig, data: &Dataset) {
    ui.label(RichText::new(lang.tr(Key::BytesTitle)).strong())
        .on_hover_text(lang.tr(Key::BytesTip));
    let spec = config.model_spec(data);
    let formats = compare::FORMATS;
    let estimates: Vec<_> = formats
        .iter()
        .map(|&p| estimate::network(&spec, config.optimizer, config.batch, p, eval_rows(data)))
        .collect();
    egui::Grid::new("precision-bytes")
        .striped(true)
        .show(ui, |ui| {
            ui.label("");
            for p in formats {
                ui.label(
                    RichText::new(precision_short(lang, p))
                        .strong()
                        .color(format_color(p)),
                );
            }
            ui.end_row();
            // The model's tensors: the estimator has nothing for BatchScope's own buffers.
            for role in Role::ALL.into_iter().filter(|&r| r != Role::Internal) {
                ui.label(lang.tr(role_key(role)));
                let fp32 = estimates[0].bytes(role);
                for e in &estimates {
                    let b = e.bytes(role);
                    let text = if b == fp32 {
                        format_bytes(b)
                    } else {
                        let change = (b as f64 / fp32.max(1) as f64 - 1.0) * 100.0;
                        // The change on a line of its own: five columns fit a narrow panel.
                        format!("{}\n({change:+.0}%)", format_bytes(b))
                    };
                    ui.label(text);
                }
                ui.end_row();
            }
            ui.label(RichText::new(lang.tr(Key::Total)).strong());
            let fp32 = estimates[0].total();
            for e in &estimates {
                let change = (e.total() as f64 / fp32.max(1) as f64 - 1.0) * 100.0;
                ui.label(format!("{}\n({change:+.0}%)", format_bytes(e.total())));
            }
            ui.end_row();
        });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::device::Device;
    use crate::train::compare::FormatRun;
    use crate::ui::testing::harness;

    fn values(dtype: DType) -> crate::train::ValueHistograms {
        let sample = |v: &[f32]| ValueSample {
            dtype,
            histogram: Log2Histogram::of(v),
            in_fp16: crate::precision::RangeReport::of(v, Half::Fp16),
            in_bf16: crate::precision::RangeReport::of(v, Half::Bf16),
        };
        crate::train::ValueHistograms {
            step: 7,
            weights: sample(&[0.5, -0.25, 0.125]),
            activations: sample(&[1.0, 0.0, 2.0]),
            gradients: sample(&[1e-8, 3e-6, 0.0]),
        }
    }

    #[test]
    fn the_view_draws_each_devices_values_and_the_formats_compared() {
        let mut cpu = DeviceRun::new(Device::Cpu);
        cpu.precision = Precision::Fp16;
        cpu.values = Some(values(DType::F16));
        let runs = [cpu, DeviceRun::new(Device::Gpu)];
        let mut comparison = Comparison::new(TrainConfig::default());
        for precision in compare::FORMATS {
            comparison.apply(compare::Progress::Done(Box::new(FormatRun {
                precision,
                losses: vec![[300.0, 0.6], [600.0, 0.2]],
                step_ms: 0.05,
                ..FormatRun::default()
            })));
        }
        comparison.ended();
        let config = TrainConfig::default();
        let mut h = harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                let c = Some(&comparison);
                PrecisionPanel.ui(ui, Lang::En, &runs, c, &config, None, commands);
            },
            Vec::new(),
        );
        assert_eq!(
            h.query_all_by_label_contains("Gradients (stored as FP16, 2 bytes")
                .count(),
            1
        );
        for format in ["FP32", "FP16", "BF16", "mixed FP16"] {
            assert!(h.query_all_by_label(format).count() >= 1, "{format} row");
        }
        h.get_by_label("Compare formats (600 steps each, CPU)")
            .click();
        h.run();
        assert_eq!(h.state(), &[UiCommand::ComparePrecisions]);
    }

    #[test]
    fn a_running_comparison_shows_its_progress_and_can_be_stopped() {
        let runs = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
        let mut comparison = Comparison::new(TrainConfig::default());
        comparison.apply(compare::Progress::Step {
            format: Precision::Bf16,
            step: 120,
            steps: 600,
        });
        let config = TrainConfig::default();
        let mut h = harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                let c = Some(&comparison);
                PrecisionPanel.ui(ui, Lang::En, &runs, c, &config, None, commands);
            },
            Vec::new(),
        );
        assert!(h.query_by_label_contains("BF16 120/600").is_some());
        h.get_by_label("Stop the comparison").click();
        h.run();
        assert_eq!(h.state(), &[UiCommand::CancelComparison]);
    }
}
