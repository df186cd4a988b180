//! One device's column: what it is, how fast it trains, its curves and its decision boundary.

use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotImage, PlotPoint, PlotPoints, Points};

use super::class_color;
use crate::backend::AdapterSummary;
use crate::data::{Dataset, Task};
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::memory::MemorySnapshot;
use crate::precision::{Precision, RoundingCensus};

/// A precision's name as the columns and the setup show it.
pub fn precision_label(lang: Lang, precision: Precision) -> String {
    match precision {
        Precision::Fp32 => "FP32".to_owned(),
        Precision::Fp16 => format!("FP16 ({})", lang.tr(Key::StoredComputed)),
        Precision::Bf16 => format!("BF16 ({})", lang.tr(Key::StoredComputed)),
        Precision::Mixed => format!(
            "{} ({})",
            lang.tr(Key::MixedPrecision),
            lang.tr(Key::StoredComputed)
        ),
    }
}
use crate::trace::TraceHistory;

/// Memory reports kept for the allocated-and-reserved plot.
const MEMORY_POINTS: usize = 2000;
use crate::trace::advice::Context;
use crate::train::worker::Event;
use crate::train::{BoundaryGrid, EvalReport, StepLog, ValueHistograms};
use crate::units::{format_ms, format_rate};

/// Curve colours: the loss of the training batches, the whole training set, the test set.
const BATCH_COLOR: Color32 = Color32::from_rgb(150, 150, 150);
const TRAIN_COLOR: Color32 = Color32::from_rgb(66, 165, 245);
const TEST_COLOR: Color32 = Color32::from_rgb(255, 167, 38);

/// Most points a curve keeps; older ones are thinned out by halving.
const MAX_CURVE_POINTS: usize = 2000;

/// Where a column's device stands.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnStatus {
    /// The worker is opening the device.
    Starting,
    /// The device is up.
    Ready {
        /// Backend name.
        name: String,
        /// The adapter, on the GPU.
        adapter: Option<AdapterSummary>,
    },
    /// The device cannot train, and why.
    Unavailable(String),
}

/// A curve of `(step, value)` points that thins itself out as it grows.
#[derive(Clone, Debug, Default)]
pub struct Curve {
    points: Vec<[f64; 2]>,
}

impl Curve {
    fn push(&mut self, step: u64, value: f32) {
        if !value.is_finite() {
            return;
        }
        self.points.push([step as f64, f64::from(value)]);
        if self.points.len() > MAX_CURVE_POINTS {
            self.points = self.points.iter().step_by(2).copied().collect();
        }
    }

    /// The points, oldest first.
    pub fn points(&self) -> &[[f64; 2]] {
        &self.points
    }
}

/// The state of one device's column.
pub struct DeviceColumn {
    /// Which device.
    pub device: Device,
    /// Whether the device is up, as its worker reported.
    pub status: ColumnStatus,
    /// Whether the run in progress uses this device (the setup panel can turn it off).
    pub enabled: bool,
    /// Whether its worker is training.
    pub running: bool,
    /// The last interval's measurements.
    pub last_log: Option<StepLog>,
    /// The last whole-set evaluation.
    pub last_eval: Option<EvalReport>,
    /// Training loss per logged interval.
    pub batch_loss: Curve,
    /// Whole training-set loss.
    pub train_loss: Curve,
    /// Test-set loss.
    pub test_loss: Curve,
    /// Whole training-set accuracy (classification) or R² (regression).
    pub train_metric: Curve,
    /// Test-set accuracy or R².
    pub test_metric: Curve,
    /// The last decision boundary.
    pub boundary: Option<BoundaryGrid>,
    /// The error that stopped training, if any.
    pub error: Option<String>,
    /// Kernel threads, on the CPU.
    pub cpu_threads: Option<usize>,
    /// The last recorded steps and their spans.
    pub trace: TraceHistory,
    /// What the advice rules need to know of the recorded run.
    pub trace_context: Option<Context>,
    /// The number format of the run in progress.
    pub precision: Precision,
    /// The memory accounting, as last reported.
    pub memory: Option<MemorySnapshot>,
    /// `[step, allocated, reserved]` at each report (bytes), oldest first.
    pub memory_history: Vec<[f64; 3]>,
    /// The model's values at the last evaluation.
    pub values: Option<ValueHistograms>,
    /// The loss scale at each report (mixed precision).
    pub loss_scale: Curve,
    /// `[step, scale]` of the reports in which updates were skipped.
    pub skip_marks: Vec<[f64; 2]>,
    /// Skipped updates counted so far.
    pub skipped_seen: u64,
    /// What storing values in 16 bits lost since the run began.
    pub rounding: RoundingCensus,
    texture: Option<egui::TextureHandle>,
    texture_stale: bool,
}

impl DeviceColumn {
    /// An empty column for `device`.
    pub fn new(device: Device) -> Self {
        Self {
            device,
            status: ColumnStatus::Starting,
            enabled: true,
            running: false,
            last_log: None,
            last_eval: None,
            batch_loss: Curve::default(),
            train_loss: Curve::default(),
            test_loss: Curve::default(),
            train_metric: Curve::default(),
            test_metric: Curve::default(),
            boundary: None,
            error: None,
            cpu_threads: None,
            trace: TraceHistory::default(),
            trace_context: None,
            precision: Precision::Fp32,
            memory: None,
            memory_history: Vec::new(),
            values: None,
            loss_scale: Curve::default(),
            skip_marks: Vec::new(),
            skipped_seen: 0,
            rounding: RoundingCensus::default(),
            texture: None,
            texture_stale: false,
        }
    }

    /// Steps trained so far, as last reported.
    pub fn steps(&self) -> u64 {
        self.last_log
            .as_ref()
            .map_or(0, |l| l.step)
            .max(self.last_eval.as_ref().map_or(0, |e| e.step))
    }

    /// Forgets the curves (after a reset).
    pub fn clear_history(&mut self) {
        let Self {
            last_log,
            last_eval,
            batch_loss,
            train_loss,
            test_loss,
            train_metric,
            test_metric,
            boundary,
            error,
            texture_stale,
            trace,
            trace_context,
            memory_history,
            values,
            loss_scale,
            skip_marks,
            skipped_seen,
            rounding,
            ..
        } = self;
        *values = None;
        *loss_scale = Curve::default();
        skip_marks.clear();
        *skipped_seen = 0;
        *rounding = RoundingCensus::default();
        trace.clear();
        *trace_context = None;
        memory_history.clear();
        *last_log = None;
        *last_eval = None;
        for c in [batch_loss, train_loss, test_loss, train_metric, test_metric] {
            *c = Curve::default();
        }
        *boundary = None;
        *error = None;
        *texture_stale = true;
    }

    /// Takes in one event from this column's worker.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Ready {
                name,
                adapter,
                cpu_threads,
                ..
            } => {
                self.cpu_threads = cpu_threads;
                self.status = ColumnStatus::Ready { name, adapter };
            }
            Event::Unavailable { reason, .. } => self.status = ColumnStatus::Unavailable(reason),
            Event::Log(log) => {
                self.batch_loss.push(log.step, log.loss);
                if let Some(scale) = log.loss_scale {
                    let skipped = log.skipped_steps.unwrap_or(0);
                    if skipped > self.skipped_seen {
                        self.skip_marks.push([log.step as f64, f64::from(scale)]);
                        self.skipped_seen = skipped;
                    }
                    self.loss_scale.push(log.step, scale);
                }
                if let Some(census) = &log.rounding {
                    self.rounding.add(census);
                }
                self.last_log = Some(log);
            }
            Event::Eval(eval) => {
                self.train_loss.push(eval.step, eval.train.loss);
                self.test_loss.push(eval.step, eval.test.loss);
                if let Some(v) = eval.train.accuracy.or(eval.train.r2) {
                    self.train_metric.push(eval.step, v);
                }
                if let Some(v) = eval.test.accuracy.or(eval.test.r2) {
                    self.test_metric.push(eval.step, v);
                }
                self.last_eval = Some(eval);
            }
            Event::Boundary { grid, .. } => {
                self.boundary = Some(grid);
                self.texture_stale = true;
            }
            Event::Error { message, .. } => self.error = Some(message),
            Event::Values { values, .. } => self.values = Some(*values),
            Event::Running { running, .. } => self.running = running,
            Event::Memory { step, snapshot, .. } => {
                self.memory_history.push([
                    step as f64,
                    snapshot.allocated as f64,
                    snapshot.reserved as f64,
                ]);
                if self.memory_history.len() > MEMORY_POINTS {
                    self.memory_history.remove(0);
                }
                self.memory = Some(snapshot);
            }
            Event::Trace {
                batch,
                workers,
                chunk,
                ..
            } => {
                self.trace.extend(chunk);
                self.trace_context = Some(Context {
                    gpu: self.device == Device::Gpu,
                    batch,
                    workers,
                });
            }
        }
    }

    /// Draws the column.
    pub fn ui(&mut self, ui: &mut egui::Ui, lang: Lang, data: Option<&Dataset>) {
        let title = match self.device {
            Device::Cpu => lang.tr(Key::CpuColumn),
            Device::Gpu => lang.tr(Key::GpuColumn),
        };
        ui.horizontal(|ui| {
            ui.heading(RichText::new(title).strong());
            let state = if self.running {
                Key::Running
            } else {
                Key::Paused
            };
            ui.label(RichText::new(lang.tr(state)).weak());
            ui.label(RichText::new(precision_label(lang, self.precision)).strong())
                .on_hover_text(lang.tr(Key::PrecisionTip));
        });
        if !self.enabled {
            ui.label(lang.tr(Key::Disabled));
            return;
        }
        match &self.status {
            ColumnStatus::Starting => {
                ui.label(lang.tr(Key::Starting));
                return;
            }
            ColumnStatus::Unavailable(reason) => {
                ui.label(
                    RichText::new(lang.tr(Key::NoAdapterTitle))
                        .strong()
                        .color(ui.visuals().warn_fg_color),
                );
                ui.label(lang.tr(Key::NoAdapterHelp));
                ui.label(RichText::new(reason).small().weak());
                return;
            }
            ColumnStatus::Ready { name, adapter } => {
                device_header_ui(ui, lang, name, adapter.as_ref(), self.cpu_threads);
            }
        }
        if let Some(error) = &self.error {
            ui.label(
                RichText::new(lang.tr(Key::ErrorTitle))
                    .strong()
                    .color(ui.visuals().error_fg_color),
            );
            ui.label(RichText::new(error).color(ui.visuals().error_fg_color));
        }
        self.metrics_ui(ui, lang);
        let regression = data.is_some_and(|d| d.task == Task::Regression);
        self.curves_ui(ui, lang, regression);
        match data {
            Some(d) if d.task == Task::Regression => self.predictions_ui(ui, lang, d),
            Some(d) if d.features != 2 => self.confusion_ui(ui, lang, d),
            _ => self.boundary_ui(ui, lang, data),
        }
    }

    fn metrics_ui(&self, ui: &mut egui::Ui, lang: Lang) {
        let steps = self.steps();
        ui.horizontal(|ui| {
            ui.label(
                RichText::new(lang.fmt(Key::StepCounter, &[("n", &steps)]))
                    .size(18.0)
                    .strong(),
            );
            if let Some(log) = &self.last_log {
                ui.label(lang.fmt(Key::EpochCounter, &[("n", &log.epoch)]));
            }
        });
        let Some(log) = &self.last_log else {
            ui.label(lang.tr(Key::NotYet));
            return;
        };
        egui::Grid::new(("metrics", self.device))
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
                if self.device == Device::Gpu {
                    ui.label(lang.tr(Key::KernelTime))
                        .on_hover_text(lang.tr(Key::KernelTimeTip));
                    let timestamps = match &self.status {
                        ColumnStatus::Ready {
                            adapter: Some(a), ..
                        } => a.timestamps,
                        _ => false,
                    };
                    let none = if timestamps {
                        Key::KernelTimeNotYet
                    } else {
                        Key::KernelTimeNone
                    };
                    match log.kernel_time_ms {
                        Some(ms) => ui.label(format_ms(ms)),
                        None => ui.label(RichText::new(lang.tr(none)).weak()),
                    };
                    ui.end_row();
                }
                ui.label(lang.tr(Key::Loss));
                ui.label(format_loss(log.loss));
                ui.end_row();
                let Some(eval) = &self.last_eval else {
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

    fn curves_ui(&self, ui: &mut egui::Ui, lang: Lang, regression: bool) {
        let height = (ui.available_height() * 0.22).clamp(90.0, 200.0);
        // The same colour means the same series in both plots.
        let curve = |name: Key, points: &Curve, color: Color32| {
            Line::new(lang.tr(name), PlotPoints::from(points.points().to_vec())).color(color)
        };
        ui.label(lang.tr(Key::Loss));
        Plot::new(("loss", self.device))
            .height(height)
            .legend(Legend::default())
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.line(curve(Key::BatchSeries, &self.batch_loss, BATCH_COLOR));
                plot.line(curve(Key::TrainSeries, &self.train_loss, TRAIN_COLOR));
                plot.line(curve(Key::TestSeries, &self.test_loss, TEST_COLOR));
            });
        ui.label(lang.tr(if regression { Key::R2 } else { Key::Accuracy }));
        let mut plot = Plot::new(("accuracy", self.device))
            .height(height)
            .legend(Legend::default())
            .include_y(0.0)
            .include_y(1.0)
            .allow_scroll(false);
        if regression {
            // An untrained model's R² can be −20: fit the axis to [−1, 1] so the part that
            // matters stays readable (drag or zoom to see the rest; the figures above are exact).
            plot = plot.default_y_bounds(-1.0, 1.05);
        }
        plot.show(ui, |plot| {
            plot.line(curve(Key::TrainSeries, &self.train_metric, TRAIN_COLOR));
            plot.line(curve(Key::TestSeries, &self.test_metric, TEST_COLOR));
        });
    }

    fn boundary_ui(&mut self, ui: &mut egui::Ui, lang: Lang, data: Option<&Dataset>) {
        let Some(grid) = &self.boundary else {
            return;
        };
        if self.texture_stale || self.texture.is_none() {
            let image = boundary_image(grid);
            match &mut self.texture {
                Some(t) => t.set(image, egui::TextureOptions::LINEAR),
                None => {
                    self.texture = Some(ui.ctx().load_texture(
                        format!("boundary-{}", self.device),
                        image,
                        egui::TextureOptions::LINEAR,
                    ));
                }
            }
            self.texture_stale = false;
        }
        let Some(texture) = &self.texture else {
            return;
        };
        ui.label(lang.tr(Key::DecisionBoundary))
            .on_hover_text(lang.tr(Key::DecisionBoundaryTip));
        let [x0, x1] = grid.x_range;
        let [y0, y1] = grid.y_range;
        let side = ui.available_height().min(ui.available_width()).max(120.0);
        Plot::new(("boundary", self.device))
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

impl DeviceColumn {
    /// The test set's confusion matrix: rows are the true classes, columns the predicted ones;
    /// the diagonal is what the model gets right.
    fn confusion_ui(&self, ui: &mut egui::Ui, lang: Lang, data: &Dataset) {
        let Some(confusion) = self.last_eval.as_ref().and_then(|e| e.confusion.as_ref()) else {
            return;
        };
        ui.label(lang.tr(Key::Confusion))
            .on_hover_text(lang.tr(Key::ConfusionTip));
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

    /// Predicted against true target values of the test set; a perfect model puts every point
    /// on the diagonal.
    fn predictions_ui(&self, ui: &mut egui::Ui, lang: Lang, data: &Dataset) {
        let Some(eval) = &self.last_eval else {
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
        Plot::new(("predictions", self.device))
            .width(side)
            .height(side)
            .data_aspect(1.0)
            .x_axis_label(lang.tr(Key::TrueValue))
            .y_axis_label(lang.tr(Key::PredictedValue))
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.line(
                    Line::new("y = x", PlotPoints::from(vec![[lo, lo], [hi, hi]]))
                        .color(BATCH_COLOR),
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
    }
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
            Some(n) => ui.label(lang.fmt(Key::Threads, &[("n", &n)])),
            None => ui.label(name),
        };
        return;
    };
    egui::Grid::new("adapter").num_columns(2).show(ui, |ui| {
        ui.label(lang.tr(Key::Adapter));
        ui.label(RichText::new(&adapter.name).strong());
        ui.end_row();
        ui.label(lang.tr(Key::Backend));
        ui.label(format!(
            "{} · {} {}",
            adapter.backend, adapter.driver, adapter.driver_info
        ));
        ui.end_row();
        ui.label(lang.tr(Key::DeviceType));
        ui.label(&adapter.device_type);
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
