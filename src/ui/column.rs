//! One device's column: what it is, whether and how fast it trains, its curves and its decision
//! boundary (or confusion matrix, or predicted against true values). It draws the device's
//! [`DeviceRun`] from the app's state; its own state is the boundary's texture.

use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotImage, PlotPoint, PlotPoints, Points};

use super::labels::{class_color, device_title, precision_label};
use super::plots;
use crate::backend::{AdapterSummary, TuningNote};
use crate::data::{Dataset, Task};
use crate::device::Device;
use crate::i18n::{BrowserKey, Key, Lang};
use crate::train::worker::Reached;
use crate::train::{BoundaryGrid, Curve, DeviceRun, DeviceStatus, RunState, Sharing, StopAt};
use crate::units::{format_ms, format_rate};

/// Curve colours: the loss of the training batches, the whole training set, the test set.
const BATCH_COLOR: Color32 = Color32::from_rgb(150, 150, 150);
const TRAIN_COLOR: Color32 = Color32::from_rgb(66, 165, 245);
const TEST_COLOR: Color32 = Color32::from_rgb(255, 167, 38);

/// A column's view state: the texture of the boundary it drew, and which boundary that was.
#[derive(Default)]
pub struct ColumnPanel {
    texture: Option<(u64, egui::TextureHandle)>,
    images: super::images::ImagesView,
}

impl ColumnPanel {
    /// Draws the column; `lesson` is the open lesson's own measurement of this device
    /// (samples per second, step time in ms), shown apart from the live figures.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        run: &DeviceRun,
        data: Option<&Dataset>,
        lesson: Option<(f64, f64)>,
    ) {
        ui.horizontal(|ui| {
            ui.heading(RichText::new(device_title(lang, run.device)).strong());
            let state = match run.run_state {
                RunState::Running => Key::Running,
                RunState::Paused => Key::Paused,
                RunState::Pausing => Key::PausingShort,
            };
            ui.label(RichText::new(lang.tr(state)).weak());
            ui.label(RichText::new(precision_label(lang, run.precision)).strong())
                .on_hover_text(lang.tr(Key::PrecisionTip));
        });
        if !run.enabled {
            ui.label(lang.tr(Key::Disabled));
            return;
        }
        match &run.status {
            DeviceStatus::Starting => {
                ui.label(lang.tr(Key::Starting));
                return;
            }
            DeviceStatus::Unavailable(reason) => {
                unavailable_ui(ui, lang, reason);
                return;
            }
            DeviceStatus::Ready {
                name,
                adapter,
                cpu_threads,
            } => {
                device_header_ui(ui, lang, name, adapter.as_ref(), *cpu_threads);
                let text = data.is_some_and(Dataset::is_text);
                if cfg!(target_arch = "wasm32") && run.device == Device::Gpu && text {
                    ui.label(
                        RichText::new(lang.tr(BrowserKey::GpuNotEvaluated))
                            .small()
                            .weak(),
                    );
                }
                tuning_notes_ui(ui, lang, &run.tuning_notes);
                sharing_ui(ui, lang, run, *cpu_threads);
            }
        }
        if let Some(error) = &run.error {
            ui.label(
                RichText::new(lang.tr(Key::ErrorTitle))
                    .strong()
                    .color(ui.visuals().error_fg_color),
            );
            ui.label(RichText::new(error.text(lang)).color(ui.visuals().error_fg_color));
        }
        if let Some(reached) = &run.reached {
            reached_ui(ui, lang, reached);
        }
        metrics_ui(ui, lang, run);
        if let Some((rate, step_ms)) = lesson {
            ui.label(
                RichText::new(lang.fmt(
                    Key::LessonRate,
                    &[("rate", &format_rate(rate)), ("step", &format_ms(step_ms))],
                ))
                .weak(),
            )
            .on_hover_text(lang.tr(Key::LessonRateTip));
        }
        let regression = data.is_some_and(|d| d.task == Task::Regression);
        if let Some(o) = overfitting(run) {
            ui.label(
                RichText::new(lang.fmt(
                    Key::Overfitting,
                    &[
                        ("best", &format_loss(o.best as f32)),
                        ("step", &o.best_step),
                        ("now", &format_loss(o.now as f32)),
                    ],
                ))
                .color(ui.visuals().warn_fg_color),
            );
        }
        curves_ui(ui, lang, run, regression);
        match data {
            Some(d) if d.task == Task::Regression => predictions_ui(ui, lang, run, d),
            Some(d) if d.image.is_some() => {
                self.images.ui(ui, lang, run, d);
                confusion_ui(ui, lang, run, d);
            }
            Some(d) if d.is_text() => super::writing::writing_ui(ui, lang, run),
            Some(d) if d.features != 2 => confusion_ui(ui, lang, run, d),
            _ => self.boundary_ui(ui, lang, run, data),
        }
    }
}

/// The step counter and the latest measurements.
fn metrics_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun) {
    let steps = run.steps();
    ui.horizontal(|ui| {
        ui.label(
            RichText::new(lang.fmt(Key::StepCounter, &[("n", &steps)]))
                .size(18.0)
                .strong(),
        );
        if let Some(log) = &run.last_log {
            ui.label(lang.fmt(Key::EpochCounter, &[("n", &log.epoch)]));
        }
    });
    let Some(log) = &run.last_log else {
        ui.label(lang.tr(Key::NotYet));
        return;
    };
    egui::Grid::new(("metrics", run.device))
        .num_columns(2)
        .show(ui, |ui| {
            ui.label(lang.tr(Key::SamplesPerSecond))
                .on_hover_text(lang.tr(Key::SamplesPerSecondTip));
            ui.label(
                RichText::new(format_rate(log.samples_per_s))
                    .size(18.0)
                    .strong(),
            );
            ui.end_row();
            ui.label(lang.tr(Key::StepTime))
                .on_hover_text(lang.tr(Key::StepTimeTip));
            ui.label(format_ms(log.step_time_ms));
            ui.end_row();
            if log.micro_batch < log.batch {
                ui.label(lang.tr(Key::BatchSize))
                    .on_hover_text(lang.tr(crate::i18n::LeverKey::AccumulateTip));
                ui.label(super::labels::batch_parts(log.batch, log.micro_batch));
                ui.end_row();
            }
            if let Some(e) = &log.energy {
                super::energy::rows(ui, lang, e);
            }
            if run.device == Device::Gpu {
                ui.label(lang.tr(Key::KernelTime))
                    .on_hover_text(lang.tr(Key::KernelTimeTip));
                let timestamps = run.adapter().is_some_and(|a| a.timestamps);
                let none = if timestamps {
                    lang.tr(Key::KernelTimeNotYet)
                } else {
                    lang.tr(Key::KernelTimeNone)
                };
                // The latest timed step's, kept until a newer one is timed.
                match run.kernel_time_ms {
                    Some(ms) => ui.label(format_ms(ms)),
                    None => ui.label(RichText::new(none).weak()),
                };
                ui.end_row();
            }
            ui.label(lang.tr(Key::Loss));
            ui.label(format_loss(log.loss));
            ui.end_row();
            let Some(eval) = &run.last_eval else {
                return;
            };
            let (train, test) = (lang.tr(Key::TrainSeries), lang.tr(Key::TestSeries));
            if let (Some(a), Some(b)) = (eval.train.accuracy, eval.test.accuracy) {
                ui.label(lang.tr(Key::Accuracy));
                ui.label(format!(
                    "{train} {:.1}% · {test} {:.1}%",
                    a * 100.0,
                    b * 100.0
                ));
                ui.end_row();
            }
            if let (Some(a), Some(b)) = (eval.train.r2, eval.test.r2) {
                ui.label(lang.tr(Key::R2))
                    .on_hover_text(lang.tr(Key::R2Tip));
                ui.label(format!("{train} {a:.3} · {test} {b:.3}"));
                ui.end_row();
            }
            if let (Some(a), Some(b)) = (eval.train.mae, eval.test.mae) {
                ui.label(lang.tr(Key::Mae))
                    .on_hover_text(lang.tr(Key::MaeTip));
                ui.label(format!("{train} {a:.4} · {test} {b:.4}"));
                ui.end_row();
            }
        });
}

/// A test loss that has climbed away from its best while the training loss went on falling.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Overfit {
    /// The lowest test loss, and the step it was evaluated at.
    best: f64,
    best_step: u64,
    /// The latest test loss.
    now: f64,
}

/// Evaluations the test loss must have risen over, after its best, before it is called
/// overfitting (one evaluation is noise; several in a row are a trend).
const OVERFIT_EVALUATIONS: usize = 5;

/// Whether `run` is overfitting: its latest test loss is at least 10% above its best, at least
/// [`OVERFIT_EVALUATIONS`] evaluations after it, while the training loss is below what it was
/// at the best.
fn overfitting(run: &DeviceRun) -> Option<Overfit> {
    let test = run.test_loss.points();
    let (best_at, best) = test
        .iter()
        .enumerate()
        .min_by(|a, b| a.1[1].total_cmp(&b.1[1]))
        .map(|(i, p)| (i, *p))?;
    let now = *test.last()?;
    let train = run.train_loss.points();
    let train_at = |step: f64| train.iter().rev().find(|p| p[0] <= step).map(|p| p[1]);
    let (train_then, train_now) = (train_at(best[0])?, train.last()?[1]);
    let risen = now[1] > best[1] * 1.1 && test.len() - 1 - best_at >= OVERFIT_EVALUATIONS;
    (risen && train_now < train_then).then_some(Overfit {
        best: best[1],
        best_step: best[0] as u64,
        now: now[1],
    })
}

/// The loss and accuracy (or R²) curves.
fn curves_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun, regression: bool) {
    let height = (ui.available_height() * 0.22).clamp(90.0, 200.0);
    // The same colour means the same series in both plots.
    let width = plots::line_width(ui);
    let curve = |name: Key, points: &Curve, color: Color32| {
        Line::new(lang.tr(name), PlotPoints::from(points.points().to_vec()))
            .color(color)
            .width(width)
    };
    // Before the first log the axes show steps from 0 and a loss from 0 to 1, not ±0.03.
    let empty = run.batch_loss.points().is_empty();
    let fresh = |plot: Plot<'static>| {
        if empty {
            plot.include_x(10.0).include_y(1.0)
        } else {
            plot
        }
    };
    ui.label(lang.tr(Key::Loss));
    let shown = fresh(plots::readable(Plot::new(("loss", run.device)), ui))
        .height(height)
        .legend(Legend::default())
        .include_x(0.0)
        .include_y(0.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.line(curve(Key::BatchSeries, &run.batch_loss, BATCH_COLOR));
            plot.line(curve(Key::TrainSeries, &run.train_loss, TRAIN_COLOR));
            plot.line(curve(Key::TestSeries, &run.test_loss, TEST_COLOR));
        });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
    ui.label(lang.tr(if regression { Key::R2 } else { Key::Accuracy }));
    let mut plot = fresh(plots::readable(Plot::new(("accuracy", run.device)), ui))
        .height(height)
        .legend(Legend::default())
        .include_x(0.0)
        .include_y(0.0)
        .include_y(1.0)
        .allow_scroll(false);
    if regression {
        // An untrained model's R² can be −20: fit the axis to [−1, 1] so the part that
        // matters stays readable (drag or zoom to see the rest; the figures above are exact).
        plot = plot.default_y_bounds(-1.0, 1.05);
    }
    let shown = plot.show(ui, |plot| {
        plot.line(curve(Key::TrainSeries, &run.train_metric, TRAIN_COLOR));
        plot.line(curve(Key::TestSeries, &run.test_metric, TEST_COLOR));
    });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
}

impl ColumnPanel {
    /// The decision boundary, with the training points over it.
    fn boundary_ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        run: &DeviceRun,
        data: Option<&Dataset>,
    ) {
        let Some(grid) = &run.boundary else {
            return;
        };
        let version = run.boundary_version;
        match &mut self.texture {
            Some((drawn, _)) if *drawn == version => {}
            Some((drawn, texture)) => {
                texture.set(boundary_image(grid), egui::TextureOptions::LINEAR);
                *drawn = version;
            }
            None => {
                let texture = ui.ctx().load_texture(
                    format!("boundary-{}", run.device),
                    boundary_image(grid),
                    egui::TextureOptions::LINEAR,
                );
                self.texture = Some((version, texture));
            }
        }
        let Some((_, texture)) = &self.texture else {
            return;
        };
        ui.label(lang.tr(Key::DecisionBoundary))
            .on_hover_text(lang.tr(Key::DecisionBoundaryTip));
        let [x0, x1] = grid.x_range;
        let [y0, y1] = grid.y_range;
        let side = ui.available_height().min(ui.available_width()).max(120.0);
        Plot::new(("boundary", run.device))
            .width(side)
            .height(side)
            .data_aspect(1.0)
            .show_axes(false)
            .show_grid(false)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.image(PlotImage::new(
                    "boundary",
                    texture.id(),
                    PlotPoint::new(f64::from(x0 + x1) / 2.0, f64::from(y0 + y1) / 2.0),
                    [x1 - x0, y1 - y0],
                ));
                if let Some(data) = data.filter(|d| d.features == 2) {
                    for class in 0..data.classes() {
                        let points: Vec<[f64; 2]> = data
                            .train_x
                            .chunks_exact(2)
                            .zip(&data.train_y)
                            .filter(|(_, y)| **y as usize == class)
                            .map(|(p, _)| [f64::from(p[0]), f64::from(p[1])])
                            .collect();
                        plot.points(
                            Points::new(format!("class {class}"), points)
                                .radius(2.0)
                                .color(class_color(class)),
                        );
                    }
                }
            });
    }
}

/// The test set's confusion matrix: rows are the true classes, columns the predicted ones; the
/// diagonal is what the model gets right.
fn confusion_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun, data: &Dataset) {
    let Some(confusion) = run.last_eval.as_ref().and_then(|e| e.confusion.as_ref()) else {
        return;
    };
    ui.label(lang.tr(Key::Confusion))
        .on_hover_text(lang.tr(Key::ConfusionTip));
    ui.label(RichText::new(lang.tr(Key::ConfusionAxes)).size(12.0));
    let n = confusion.classes;
    let label_width = 90.0;
    let side = (ui.available_width() - label_width)
        .min(ui.available_height().max(200.0))
        .clamp(120.0, 520.0);
    let cell = side / n as f32;
    let (response, painter) = ui.allocate_painter(
        egui::vec2(label_width + side, side + 18.0),
        egui::Sense::hover(),
    );
    let origin = response.rect.min + egui::vec2(label_width, 0.0);
    let row_totals = (0..n).map(|t| (0..n).map(|p| confusion.count(t, p)).sum::<u32>());
    let text_color = ui.visuals().text_color();
    let font = egui::FontId::proportional((cell * 0.35).clamp(7.0, 13.0));
    let mut hovered = None;
    for (truth, row_total) in row_totals.enumerate() {
        for predicted in 0..n {
            let count = confusion.count(truth, predicted);
            // Shade by the share of the true class's rows, so rare classes are as visible.
            let share = count as f32 / row_total.max(1) as f32;
            let rect = egui::Rect::from_min_size(
                origin + egui::vec2(predicted as f32 * cell, truth as f32 * cell),
                egui::vec2(cell - 1.0, cell - 1.0),
            );
            let base = if truth == predicted {
                Color32::from_rgb(102, 187, 106)
            } else {
                Color32::from_rgb(239, 83, 80)
            };
            painter.rect_filled(rect, 1.0, base.gamma_multiply(0.08 + 0.92 * share));
            if cell >= 22.0 && count > 0 {
                // Dark digits on the bright cells, the theme's text on the dim ones.
                let color = if share > 0.5 {
                    Color32::BLACK
                } else {
                    text_color
                };
                painter.text(
                    rect.center(),
                    egui::Align2::CENTER_CENTER,
                    count.to_string(),
                    font.clone(),
                    color,
                );
            }
            if response.hovered()
                && ui
                    .ctx()
                    .pointer_hover_pos()
                    .is_some_and(|p| rect.contains(p))
            {
                hovered = Some((truth, predicted, count));
            }
        }
        if cell >= 10.0 {
            painter.text(
                egui::pos2(origin.x - 4.0, origin.y + (truth as f32 + 0.5) * cell),
                egui::Align2::RIGHT_CENTER,
                data.class_names.get(truth).map_or("", String::as_str),
                font.clone(),
                class_color(truth),
            );
        }
    }
    // The true classes run down the rows: their axis is named under their labels, the
    // predicted ones along the bottom.
    painter.text(
        egui::pos2(origin.x - 4.0, origin.y + side + 2.0),
        egui::Align2::RIGHT_TOP,
        lang.tr(Key::TrueClass),
        egui::FontId::proportional(12.0),
        ui.visuals().weak_text_color(),
    );
    painter.text(
        egui::pos2(origin.x + side / 2.0, origin.y + side + 2.0),
        egui::Align2::CENTER_TOP,
        lang.tr(Key::Predicted),
        egui::FontId::proportional(12.0),
        ui.visuals().weak_text_color(),
    );
    if let Some((truth, predicted, count)) = hovered {
        let name = |c: usize| data.class_names.get(c).cloned().unwrap_or_default();
        response.on_hover_text(lang.fmt(
            Key::ConfusionCell,
            &[
                ("n", &count),
                ("truth", &name(truth)),
                ("predicted", &name(predicted)),
            ],
        ));
    }
}

/// Predicted against true target values of the test set; a perfect model puts every point on
/// the diagonal.
fn predictions_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun, data: &Dataset) {
    let Some(eval) = &run.last_eval else {
        return;
    };
    if eval.predictions.is_empty() {
        return;
    }
    ui.label(lang.fmt(Key::PredictedVsTrue, &[("target", &data.target_name)]))
        .on_hover_text(lang.tr(Key::PredictedVsTrueTip));
    let (lo, hi) = eval
        .predictions
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(f64::from(p[0])), hi.max(f64::from(p[0])))
        });
    let side = ui.available_height().min(ui.available_width()).max(160.0);
    let shown = plots::readable(Plot::new(("predictions", run.device)), ui)
        .width(side)
        .height(side)
        .data_aspect(1.0)
        .x_axis_label(lang.tr(Key::TrueValue))
        .y_axis_label(lang.tr(Key::PredictedValue))
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.line(
                Line::new("y = x", PlotPoints::from(vec![[lo, lo], [hi, hi]])).color(BATCH_COLOR),
            );
            let points: Vec<[f64; 2]> = eval
                .predictions
                .iter()
                .map(|p| [f64::from(p[0]), f64::from(p[1])])
                .collect();
            plot.points(
                Points::new(lang.tr(Key::TestSeries), points)
                    .radius(2.0)
                    .color(TEST_COLOR),
            );
        });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
}

/// The stop condition reached, and the time to reach it, end to end.
fn reached_ui(ui: &mut egui::Ui, lang: Lang, reached: &Reached) {
    let target = match reached.stop {
        StopAt::Epochs(n) => lang.fmt(Key::TargetEpochs, &[("n", &n)]),
        StopAt::TestMetric(x) => {
            let metric = reached.metric.unwrap_or(x);
            lang.fmt(Key::TargetMetric, &[("value", &format!("{metric:.3}"))])
        }
        StopAt::Never => return,
    };
    let text = lang.fmt(
        Key::ReachedTarget,
        &[
            ("target", &target),
            ("step", &reached.step),
            ("time", &crate::units::format_ns(reached.seconds * 1e9)),
        ],
    );
    ui.label(RichText::new(text).strong())
        .on_hover_text(lang.tr(Key::StopAtTip));
}

/// How this column shares the machine with the other one, when both train: whether its
/// figures are the device alone or the device slowed by the other.
fn sharing_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun, cpu_threads: Option<usize>) {
    let Some(sharing) = run.sharing else {
        return;
    };
    let other = match run.device {
        Device::Cpu => Device::Gpu,
        Device::Gpu => Device::Cpu,
    };
    let names = [
        ("device", device_title(lang, run.device)),
        ("other", device_title(lang, other)),
    ];
    let args: Vec<(&str, &dyn std::fmt::Display)> = names
        .iter()
        .map(|(k, v)| (*k, v as &dyn std::fmt::Display))
        .collect();
    let software = run.adapter().is_some_and(|a| a.software);
    let one_core = crate::device::cores() == 1;
    let (text, fair) = match (sharing, run.device) {
        (Sharing::TakingTurns, _) => (lang.fmt(Key::SharingTurnsNote, &args), true),
        (Sharing::Together, _) => (lang.fmt(Key::SharingTogetherNote, &args), false),
        (Sharing::SpareCore, _) if one_core => (lang.tr(Key::SharingSpareOneCore).into(), false),
        (Sharing::SpareCore, Device::Cpu) => {
            let n = cpu_threads.unwrap_or(1);
            (lang.fmt(Key::SharingSpareCpuNote, &[("n", &n)]), true)
        }
        (Sharing::SpareCore, Device::Gpu) if software => {
            (lang.tr(Key::SharingSpareSoftware).into(), false)
        }
        (Sharing::SpareCore, Device::Gpu) => (lang.tr(Key::SharingSpareGpuNote).into(), true),
    };
    let color = if fair {
        ui.visuals().weak_text_color()
    } else {
        ui.visuals().warn_fg_color
    };
    ui.label(RichText::new(text).color(color))
        .on_hover_text(lang.tr(crate::ui::toolbar::sharing_texts(sharing).1));
}

/// Why a device cannot train, and what to do: what is missing depends on where the app runs
/// (in a page, the browser's WebGPU, not a driver to install).
fn unavailable_ui(ui: &mut egui::Ui, lang: Lang, reason: &crate::i18n::Said) {
    let (title, help) = if cfg!(target_arch = "wasm32") {
        (
            lang.tr(BrowserKey::NoWebGpuTitle),
            lang.tr(BrowserKey::NoWebGpuHelp),
        )
    } else if cfg!(windows) {
        (
            lang.tr(Key::NoAdapterTitle),
            lang.tr(Key::NoAdapterHelpWindows),
        )
    } else if cfg!(target_vendor = "apple") {
        (lang.tr(Key::NoAdapterTitle), lang.tr(Key::NoAdapterHelpMac))
    } else {
        (lang.tr(Key::NoAdapterTitle), lang.tr(Key::NoAdapterHelp))
    };
    ui.label(
        RichText::new(title)
            .strong()
            .color(ui.visuals().warn_fg_color),
    );
    ui.label(help);
    ui.label(RichText::new(reason.text(lang)).small().weak());
}

fn device_header_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    name: &str,
    adapter: Option<&AdapterSummary>,
    cpu_threads: Option<usize>,
) {
    let Some(adapter) = adapter else {
        match cpu_threads {
            // A browser's CPU column says what it runs on: WebAssembly, on the page's thread.
            Some(_) if cfg!(target_arch = "wasm32") => {
                ui.label(super::labels::backend_name(lang, name))
            }
            Some(n) => ui.label(lang.fmt(Key::Threads, &[("n", &n)])),
            None => ui.label(name),
        };
        return;
    };
    egui::Grid::new("adapter").num_columns(2).show(ui, |ui| {
        ui.label(lang.tr(Key::Adapter));
        // The values wrap: a grid's cells otherwise stretch to their longest text, and a long
        // driver string widened the whole column, pushing its plots past the window's edge.
        ui.add(egui::Label::new(RichText::new(&adapter.name).strong()).wrap());
        ui.end_row();
        ui.label(lang.tr(Key::Backend));
        // A browser names no driver: the backend alone, without a dangling separator.
        let driver = format!("{} {}", adapter.driver, adapter.driver_info);
        let api = match driver.trim() {
            "" => adapter.backend.clone(),
            driver => format!("{} · {driver}", adapter.backend),
        };
        ui.add(egui::Label::new(api).wrap());
        ui.end_row();
        ui.label(lang.tr(Key::DeviceType));
        match super::labels::device_type_key(&adapter.device_type) {
            Some(key) => ui.label(lang.tr(key)),
            None => ui.label(&adapter.device_type),
        }
        .on_hover_text(&adapter.device_type);
        ui.end_row();
        ui.label(lang.tr(Key::MatmulKernel));
        let kernel = adapter.kernel_sizes.matmul;
        let why = match &adapter.matmul_tuning {
            Some(t) => [
                lang.fmt(
                    Key::MatmulTuned,
                    &[
                        ("count", &t.rates.len()),
                        ("n", &t.size),
                        (
                            "rate",
                            &t.rates
                                .iter()
                                .find(|r| r.0 == kernel)
                                .map_or_else(String::new, |r| format!("{:.1}", r.1)),
                        ),
                        ("date", &crate::bench::history::format_utc(t.tuned_at_s)),
                    ],
                ),
                lang.fmt(
                    if t.split_k {
                        Key::SplitKOn
                    } else {
                        Key::SplitKOff
                    },
                    &[
                        ("whole", &format!("{:.1}", t.split_rates[0])),
                        ("split", &format!("{:.1}", t.split_rates[1])),
                    ],
                ),
            ]
            .join("\n"),
            None => lang.tr(Key::MatmulFromLimits).to_owned(),
        };
        let name = match (kernel.blocks(), kernel.tile()) {
            (Some((m, n, _)), Some((tm, tn))) => lang.fmt(
                Key::MatmulBlocks,
                &[
                    ("block", &format!("{m}×{n}")),
                    ("tile", &format!("{tm}×{tn}")),
                ],
            ),
            _ => lang.tr(Key::MatmulOne).to_owned(),
        };
        ui.add(egui::Label::new(name).wrap()).on_hover_text(why);
        ui.end_row();
    });
    if adapter.software {
        let text = lang.fmt(Key::SoftwareAdapter, &[("name", &adapter.name)]);
        egui::Frame::new()
            .fill(ui.visuals().warn_fg_color.gamma_multiply(0.15))
            .inner_margin(6.0)
            .corner_radius(4.0)
            .show(ui, |ui| {
                ui.label(RichText::new(text).color(ui.visuals().warn_fg_color));
            });
    }
}

/// What went wrong with the GPU's kept kernel choice: the run goes on, and the user learns why
/// the kernels were timed again (and what the system said).
fn tuning_notes_ui(ui: &mut egui::Ui, lang: Lang, notes: &[TuningNote]) {
    for note in notes {
        let text = match note {
            TuningNote::Unreadable { path, why } => {
                lang.fmt(Key::TuningUnreadable, &[("path", path), ("why", why)])
            }
            TuningNote::NotSaved { why } => lang.fmt(Key::TuningNotSaved, &[("why", why)]),
            TuningNote::TimingFailed { why } => lang.fmt(Key::TuningFailed, &[("why", why)]),
        };
        ui.label(RichText::new(text).color(ui.visuals().warn_fg_color));
    }
}

/// The grid as an image: each cell in its class colour, darker where the model is unsure.
fn boundary_image(grid: &BoundaryGrid) -> egui::ColorImage {
    let n = grid.resolution;
    let mut pixels = vec![Color32::BLACK; n * n];
    for (i, (&class, &p)) in grid.class.iter().zip(&grid.confidence).enumerate() {
        let (ix, iy) = (i % n, i / n);
        // Grid rows run upwards from y_min; image rows run downwards from the top.
        let row = n - 1 - iy;
        let strength = 0.25 + 0.45 * p.clamp(0.0, 1.0);
        pixels[row * n + ix] = class_color(class as usize).gamma_multiply(strength);
    }
    egui::ColorImage::new([n, n], pixels)
}

/// Four decimals, or scientific notation once that would show only zeros.
fn format_loss(loss: f32) -> String {
    if loss != 0.0 && loss.abs() < 1e-3 {
        format!("{loss:.2e}")
    } else {
        format!("{loss:.4}")
    }
}

#[cfg(test)]
mod overfit_tests {
    use super::*;

    #[test]
    fn a_test_loss_climbing_while_the_training_loss_falls_is_called_overfitting() {
        let mut run = DeviceRun::new(Device::Cpu);
        for i in 0..20u64 {
            let step = i * 1000;
            run.train_loss.push(step, 1.0 / (i + 1) as f32);
            // Falls to its best at step 5000, then climbs.
            let test = if i <= 5 {
                1.0 - 0.1 * i as f32
            } else {
                0.5 + 0.05 * (i - 5) as f32
            };
            run.test_loss.push(step, test);
        }
        let o = overfitting(&run).expect("overfitting");
        assert_eq!(o.best_step, 5000);
        assert!((o.best - 0.5).abs() < 1e-6 && o.now > 1.1 * o.best);
        // A test loss that falls with the training loss is not.
        let mut fine = DeviceRun::new(Device::Cpu);
        for i in 0..20u64 {
            fine.train_loss.push(i * 1000, 1.0 / (i + 1) as f32);
            fine.test_loss.push(i * 1000, 1.2 / (i + 1) as f32);
        }
        assert_eq!(overfitting(&fine), None);
        // Nor one bad evaluation after the best.
        let mut blip = fine.clone();
        blip.test_loss.push(20_000, 5.0);
        blip.train_loss.push(20_000, 0.01);
        assert_eq!(overfitting(&blip), None);
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::train::StepLog;
    use crate::train::worker::{Event, EventKind};
    use crate::ui::testing::harness;

    fn event(device: Device, generation: u64, kind: EventKind) -> Event {
        Event {
            device,
            generation,
            kind,
        }
    }

    fn log(step: u64, kernel_time_ms: Option<f64>) -> StepLog {
        StepLog {
            device: Device::Gpu,
            step,
            epoch: 0,
            batch: 32,
            micro_batch: 32,
            energy: None,
            loss: 0.5,
            accuracy: Some(0.8),
            mae: None,
            samples_per_s: 12_000.0,
            tokens_per_s: None,
            step_time_ms: 2.0,
            loss_scale: None,
            skipped_steps: None,
            kernel_time_ms,
            kernels: None,
            rounding: None,
        }
    }

    /// A GPU that is up, with timestamp queries.
    fn gpu() -> DeviceRun {
        let mut run = DeviceRun::new(Device::Gpu);
        run.apply(event(
            Device::Gpu,
            0,
            EventKind::Ready {
                name: "test adapter".into(),
                adapter: Some(AdapterSummary {
                    name: "test adapter".into(),
                    timestamps: true,
                    ..AdapterSummary::default()
                }),
                cpu_threads: None,
            },
        ));
        run
    }

    fn draw(run: DeviceRun) -> egui_kittest::Harness<'static, DeviceRun> {
        let mut panel = ColumnPanel::default();
        harness(
            move |ui, run: &mut DeviceRun| panel.ui(ui, Lang::En, run, None, None),
            run,
        )
    }

    /// An accumulating run's column calls the update's rows the batch, with the micro-batches
    /// beside it, in both languages; a run that does not accumulate shows no such row.
    #[test]
    fn an_accumulating_run_shows_its_batch_as_micro_batches() {
        for (lang, label) in [(Lang::En, "Batch size"), (Lang::Zh, "批大小")] {
            let mut run = gpu();
            run.apply(event(
                Device::Gpu,
                0,
                EventKind::Log(Box::new(log(4, None))),
            ));
            let mut h = harness(
                move |ui, run: &mut DeviceRun| {
                    ColumnPanel::default().ui(ui, lang, run, None, None);
                },
                run.clone(),
            );
            assert!(h.query_by_label(label).is_none(), "{lang:?}");
            let mut accumulated = log(8, None);
            accumulated.batch = 128;
            run.apply(event(Device::Gpu, 0, EventKind::Log(Box::new(accumulated))));
            *h.state_mut() = run;
            h.run();
            assert!(h.query_by_label(label).is_some(), "{lang:?}");
            assert!(h.query_by_label("128 (4 × 32)").is_some(), "{lang:?}");
        }
    }

    /// The kernel time shown is the latest timed step's, however many untimed steps (kernel
    /// timing is sampled) have been logged since.
    #[test]
    fn the_gpu_kernel_time_stays_once_a_step_has_been_timed() {
        let mut run = gpu();
        let mut h = draw(run.clone());
        assert!(
            h.query_by_label("no step timed yet").is_none(),
            "nothing logged yet"
        );
        run.apply(event(
            Device::Gpu,
            0,
            EventKind::Log(Box::new(log(16, None))),
        ));
        *h.state_mut() = run.clone();
        h.run();
        assert!(h.query_by_label("no step timed yet").is_some());
        run.apply(event(
            Device::Gpu,
            0,
            EventKind::Log(Box::new(log(32, Some(1.25)))),
        ));
        for step in (48..200_000).step_by(50_000) {
            run.apply(event(
                Device::Gpu,
                0,
                EventKind::Log(Box::new(log(step, None))),
            ));
        }
        *h.state_mut() = run;
        h.run();
        assert!(
            h.query_by_label("1.25 ms").is_some(),
            "the last timed step's"
        );
        assert!(h.query_by_label("no step timed yet").is_none());
    }

    /// An error stops the column with its message; when the column trains again (a log of the
    /// same run), the banner goes.
    #[test]
    fn the_error_banner_goes_when_the_column_trains_again() {
        let mut run = gpu();
        run.run_state = RunState::Running;
        let oom = "GPU out of memory: tried to allocate 8.0 MiB for `input` (inputs); the budget \
                   is 8.0 MiB. 4 micro-batches of 256 would fit";
        run.apply(event(
            Device::Gpu,
            0,
            EventKind::Error(crate::i18n::Said::verbatim(oom)),
        ));
        assert_eq!(run.run_state, RunState::Paused);
        let mut h = draw(run.clone());
        assert!(h.query_by_label("Training stopped").is_some());
        assert!(h.query_by_label(oom).is_some());
        run.apply(event(Device::Gpu, 0, EventKind::Running(true)));
        run.apply(event(
            Device::Gpu,
            0,
            EventKind::Log(Box::new(log(1, None))),
        ));
        *h.state_mut() = run;
        h.run();
        assert!(h.query_by_label("Training stopped").is_none());
        assert!(h.query_by_label("running").is_some());
    }

    /// Each way of sharing the machine is said on the column, in its colour: the device alone
    /// when they take turns, slowed by the other when both train at once; nothing when the
    /// device trains alone.
    #[test]
    fn the_column_says_how_it_shares_the_machine() {
        let mut run = gpu();
        let h = draw(run.clone());
        assert!(h.query_by_label_contains("Taking turns").is_none());
        run.sharing = Some(Sharing::TakingTurns);
        let h = draw(run.clone());
        assert!(
            h.query_by_label(
                "Taking turns with the CPU: timed only in its own turns, so this is the GPU alone."
            )
            .is_some()
        );
        run.sharing = Some(Sharing::Together);
        let h = draw(run.clone());
        assert!(
            h.query_by_label_contains("this figure is the GPU slowed by the CPU")
                .is_some()
        );
        // On a software adapter, a spare core does not make the GPU's figure its own.
        run.sharing = Some(Sharing::SpareCore);
        if let DeviceStatus::Ready {
            adapter: Some(a), ..
        } = &mut run.status
        {
            a.software = true;
        }
        let h = draw(run.clone());
        let one_core = crate::device::cores() == 1;
        let expected = if one_core {
            "Only one core"
        } else {
            "only taking turns gives it the machine alone"
        };
        assert!(h.query_by_label_contains(expected).is_some());
    }

    /// The adapter's type is said in words in both languages (wgpu's name for it on hover).
    #[test]
    fn the_adapter_type_is_said_in_words() {
        for lang in Lang::ALL {
            for (device_type, key) in [
                ("Cpu", Key::TypeSoftware),
                ("DiscreteGpu", Key::TypeDiscrete),
                ("IntegratedGpu", Key::TypeIntegrated),
            ] {
                let mut run = gpu();
                if let DeviceStatus::Ready {
                    adapter: Some(a), ..
                } = &mut run.status
                {
                    a.device_type = device_type.into();
                }
                let mut panel = ColumnPanel::default();
                let h = harness(
                    move |ui, run: &mut DeviceRun| panel.ui(ui, lang, run, None, None),
                    run,
                );
                let shown = h.query_by_label(lang.tr(key)).is_some();
                assert!(shown, "{device_type} in {lang:?}");
            }
        }
    }

    /// A kept kernel choice that could not be read or saved is said in the GPU column, in both
    /// languages, with what the system said; it stays through a new run (it is the device's).
    #[test]
    fn tuning_notes_are_said_in_the_gpu_column() {
        use crate::precision::Precision;
        let notes = vec![
            TuningNote::Unreadable {
                path: "/data/gpu-kernels.json".into(),
                why: "expected value at line 1".into(),
            },
            TuningNote::NotSaved {
                why: "read-only file system".into(),
            },
        ];
        let mut run = gpu();
        run.apply(event(Device::Gpu, 0, EventKind::TuningNotes(notes)));
        run.start_run(7, Precision::Fp32, true);
        for lang in Lang::ALL {
            let mut panel = ColumnPanel::default();
            let h = harness(
                move |ui, run: &mut DeviceRun| panel.ui(ui, lang, run, None, None),
                run.clone(),
            );
            let unreadable = lang.fmt(
                Key::TuningUnreadable,
                &[
                    ("path", &"/data/gpu-kernels.json"),
                    ("why", &"expected value at line 1"),
                ],
            );
            let not_saved = lang.fmt(Key::TuningNotSaved, &[("why", &"read-only file system")]);
            assert!(h.query_by_label(&unreadable).is_some(), "{unreadable}");
            assert!(h.query_by_label(&not_saved).is_some(), "{not_saved}");
        }
    }

    /// A pause asked for: the column says so until its worker has stopped.
    #[test]
    fn a_pausing_column_says_so_until_its_worker_stops() {
        let mut run = gpu();
        run.run_state = RunState::Pausing;
        // A late "running" from before the pause changes nothing.
        run.apply(event(Device::Gpu, 0, EventKind::Running(true)));
        let mut h = draw(run.clone());
        assert!(h.query_by_label("pausing…").is_some());
        run.apply(event(Device::Gpu, 0, EventKind::Running(false)));
        *h.state_mut() = run;
        h.run();
        assert!(h.query_by_label("paused").is_some());
    }

    #[test]
    fn without_an_adapter_the_column_says_why_and_what_to_install() {
        let mut run = DeviceRun::new(Device::Gpu);
        run.apply(event(
            Device::Gpu,
            0,
            EventKind::Unavailable(crate::i18n::Said::verbatim("no Vulkan here")),
        ));
        let h = draw(run);
        assert!(h.query_by_label("No GPU adapter").is_some());
        assert!(h.query_by_label("no Vulkan here").is_some());
        assert!(h.query_by_label_contains("mesa-vulkan-drivers").is_some());
    }

    /// A long adapter name and driver string wrap in a narrow column instead of widening it:
    /// a wider column pushed the loss plot's right edge (and its last tick) past the window.
    #[test]
    fn a_long_driver_string_wraps_inside_a_narrow_column() {
        const WIDTH: f32 = 320.0;
        let mut run = gpu();
        run.sharing = Some(Sharing::TakingTurns);
        if let DeviceStatus::Ready {
            adapter: Some(a), ..
        } = &mut run.status
        {
            a.name = "llvmpipe (LLVM 15.0.6, 256 bits) with a name longer than any column".into();
            a.backend = "Vulkan".into();
            a.driver = "llvmpipe".into();
            a.driver_info = "Mesa 23.2.1-1~bpo12+rc2 (LLVM 15.0.6) and more details".into();
        }
        let mut panel = ColumnPanel::default();
        let mut h = egui_kittest::Harness::builder()
            .with_size(egui::vec2(WIDTH, 1600.0))
            .with_context_setup(crate::ui::fonts::install_style)
            .build_ui_state(
                move |ui, (run, width): &mut (DeviceRun, f32)| {
                    panel.ui(ui, Lang::En, run, None, None);
                    *width = ui.min_rect().width();
                },
                (run, 0.0),
            );
        h.run();
        let (_, width) = h.state();
        assert!(*width > 0.0, "the column drew something");
        assert!(
            *width <= WIDTH,
            "the column grew to {width} points in a {WIDTH}-point window"
        );
    }
}
