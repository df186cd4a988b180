//! The batch journey: per device, the recorded steps as lanes of spans (zoom, pan, hover), the
//! step breakdown as stacked bars, the advice that fired, and a hardware diagram that replays
//! one step's recorded path slowly enough for a class to follow.

use std::collections::BTreeSet;

use egui::{Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, StrokeKind, Vec2};

use super::command::UiCommand;
use super::labels::{device_title, span_name};
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::trace::advice::Advice;
use crate::trace::{Breakdown, Category, Clock, Lane, Span, StepTrace, TraceHistory};
use crate::train::DeviceRun;
use crate::units::format_ns;

/// Steps the timeline shows when it follows the run.
const FOLLOW_STEPS: usize = 6;
/// Steps the breakdown and the advice look at.
const BREAKDOWN_STEPS: usize = 60;
/// Height of one lane, in points.
const LANE_HEIGHT: f32 = 22.0;
/// Width of the lane names.
const GUTTER: f32 = 170.0;
/// How long the replay of one step lasts, in seconds.
const REPLAY_S: f64 = 8.0;

/// The colour of a category, the same in the timeline, the bars and the diagram.
pub fn category_color(category: Category) -> Color32 {
    match category {
        Category::Kernel => Color32::from_rgb(102, 187, 106),
        Category::Memcpy => Color32::from_rgb(255, 167, 38),
        Category::Sync => Color32::from_rgb(239, 83, 80),
        Category::DataLoader => Color32::from_rgb(66, 165, 245),
        Category::CpuExec => Color32::from_rgb(171, 71, 188),
        Category::Other => Color32::from_rgb(120, 120, 120),
    }
}

/// The translated name of a category.
pub fn category_key(category: Category) -> Key {
    category.key()
}

/// The translated name of a lane.
pub fn lane_name(lang: Lang, lane: Lane, device: Device) -> String {
    match lane {
        Lane::Main => lang.tr(Key::LaneMain).to_owned(),
        Lane::Loader(i) => lang.fmt(Key::LaneLoader, &[("i", &i)]),
        Lane::Transfer => lang.tr(Key::LaneTransfer).to_owned(),
        Lane::Kernels => lang
            .tr(match device {
                Device::Gpu => Key::LaneKernelsGpu,
                Device::Cpu => Key::LaneKernelsCpu,
            })
            .to_owned(),
        Lane::Readback => lang.tr(Key::LaneReadback).to_owned(),
        Lane::Sync => lang.tr(Key::LaneSync).to_owned(),
    }
}

/// A span drawn in the last frame, for hovering.
#[derive(Clone, Debug)]
pub struct Hit {
    /// Where it was drawn.
    pub rect: Rect,
    /// Which device's timeline.
    pub device: Device,
    /// The span.
    pub span: Span,
}

/// The time window of one device's timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct View {
    /// `[start, end]` in ns since the run's epoch; `None` follows the last steps.
    window: Option<[f64; 2]>,
}

/// A step's path replayed on the hardware diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Replay {
    device: Device,
    step: u64,
    /// UI time (s) when it started.
    started_s: f64,
}

/// The journey view's state.
#[derive(Default)]
pub struct JourneyPanel {
    views: [View; 2],
    /// The step the diagram shows, per device (the latest when `None`).
    selected: [Option<u64>; 2],
    replay: Option<Replay>,
    /// Spans drawn in the last frame.
    pub hits: Vec<Hit>,
    /// How far the replay is through its step (0 to 1), while one plays.
    pub replay_progress: Option<f32>,
}

impl JourneyPanel {
    /// Shows `[start_ns, end_ns]` of `device`'s timeline (the view stops following the run).
    pub fn show_range(&mut self, device: Device, start_ns: u64, end_ns: u64) {
        self.views[device as usize].window = Some([start_ns as f64, end_ns as f64]);
    }

    /// Draws every device that has recorded steps.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        runs: &[DeviceRun; 2],
        commands: &mut Vec<UiCommand>,
    ) {
        self.hits.clear();
        self.replay_progress = None;
        ui.horizontal(|ui| {
            ui.heading(lang.tr(Key::Journey));
            if ui
                .button(lang.tr(Key::ExportTrace))
                .on_hover_text(lang.tr(Key::ExportTraceTip))
                .clicked()
            {
                commands.push(UiCommand::ExportTrace);
            }
        });
        legend_ui(ui, lang);
        let mut any = false;
        for run in runs
            .iter()
            .filter(|r| r.enabled && !r.trace.steps.is_empty())
        {
            any = true;
            ui.separator();
            self.device_ui(ui, lang, run);
        }
        if !any {
            ui.separator();
            ui.label(RichText::new(lang.tr(Key::TimelineEmpty)).weak());
        }
    }

    fn device_ui(&mut self, ui: &mut egui::Ui, lang: Lang, run: &DeviceRun) {
        let device = run.device;
        let history = &run.trace;
        // Steps whose kernels were not timed (sampling on a software adapter) have no honest
        // breakdown: the bars, the means and the advice leave them out.
        let recent = history.timed_steps(BREAKDOWN_STEPS);
        let total = Breakdown::total(recent.iter().map(|s| &s.breakdown));
        let n = recent.len().max(1) as f64;
        let title = device_title(lang, device);
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(title).strong().size(18.0));
            if recent.is_empty() {
                return;
            }
            ui.label(lang.fmt(
                Key::MeanStep,
                &[("ms", &format_ns(total.wall_ns as f64 / n))],
            ));
            ui.label(lang.fmt(
                Key::BusyShare,
                &[
                    ("device", &title),
                    ("busy", &format!("{:.0}", total.busy_share() * 100.0)),
                ],
            ));
        });
        ui.label(RichText::new(lang.tr(Key::Timeline)).strong())
            .on_hover_text(lang.tr(Key::TimelineTip));
        let view = &mut self.views[device as usize];
        let selected = &mut self.selected[device as usize];
        super::lesson::framed(ui, crate::lesson::Widget::Timeline, |ui| {
            timeline_ui(ui, lang, device, history, view, selected, &mut self.hits);
        });

        ui.label(RichText::new(lang.tr(Key::Breakdown)).strong())
            .on_hover_text(lang.tr(Key::BreakdownTip));
        if recent.is_empty() {
            ui.label(RichText::new(lang.tr(Key::NoTimedSteps)).weak());
        } else {
            let before = *selected;
            super::lesson::framed(ui, crate::lesson::Widget::StepBreakdown, |ui| {
                breakdown_ui(ui, lang, &recent, selected);
            });
            // A bar clicked: the timeline shows that step.
            if *selected != before
                && let Some(s) = selected.and_then(|n| history.steps.iter().find(|t| t.step == n))
            {
                let margin = (s.end_ns - s.start_ns) as f64 * 0.25;
                self.views[device as usize].window =
                    Some([s.start_ns as f64 - margin, s.end_ns as f64 + margin]);
            }
        }

        ui.label(RichText::new(lang.tr(Key::Advice)).strong());
        let steps: Vec<StepTrace> = recent.iter().map(|s| (*s).clone()).collect();
        let advice = run
            .trace_context
            .map(|context| Advice::of(&steps, context))
            .unwrap_or_default();
        if advice.findings.is_empty() {
            ui.label(RichText::new(lang.tr(Key::NoAdvice)).weak());
        }
        for finding in &advice.findings {
            ui.label(
                RichText::new(format!("⚠ {}", finding.text(lang, device)))
                    .color(ui.visuals().warn_fg_color),
            );
        }

        let step = selected
            .and_then(|s| history.steps.iter().find(|t| t.step == s))
            .or_else(|| history.steps.back());
        if let Some(step) = step {
            self.diagram_ui(ui, lang, device, history, step);
        }
    }

    fn diagram_ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        device: Device,
        history: &TraceHistory,
        step: &StepTrace,
    ) {
        let now_s = ui.input(|i| i.time);
        ui.horizontal(|ui| {
            ui.label(RichText::new(lang.tr(Key::Diagram)).strong())
                .on_hover_text(lang.tr(Key::DiagramTip));
            let replay_label = format!(
                "▶ {} ({})",
                lang.tr(Key::Replay),
                lang.fmt(Key::SpanStep, &[("n", &step.step)])
            );
            if ui.button(replay_label).clicked() {
                self.replay = Some(Replay {
                    device,
                    step: step.step,
                    started_s: now_s,
                });
                // Hold on to this step while newer ones arrive.
                self.selected[device as usize] = Some(step.step);
            }
        });
        let wall = (step.end_ns - step.start_ns).max(1) as f64;
        // Replay time: the step stretched to REPLAY_S seconds; at rest, the end of the step.
        let (t, playing) = match self.replay {
            Some(r) if r.device == device && r.step == step.step => {
                let f = (now_s - r.started_s) / REPLAY_S;
                if f >= 1.0 {
                    self.replay = None;
                    (step.end_ns as f64, false)
                } else {
                    (step.start_ns as f64 + f * wall, true)
                }
            }
            _ => (step.end_ns as f64, false),
        };
        if playing {
            ui.ctx().request_repaint();
        }
        let spans: Vec<&Span> = history
            .spans
            .iter()
            .filter(|s| s.step == step.step)
            .collect();
        // What is active at `t` (while replaying), or what the step did at all (at rest).
        let active: Vec<&Span> = spans
            .iter()
            .copied()
            .filter(|s| {
                !playing || (s.start_ns as f64 <= t && t <= s.end_ns().max(s.start_ns + 1) as f64)
            })
            .collect();
        let units = units_of(device);
        let lit: Vec<(Unit, Category)> = active.iter().flat_map(|s| units_for(s, device)).collect();
        let height = 70.0;
        let (rect, _) =
            ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::hover());
        let painter = ui.painter_at(rect);
        let gap = 14.0;
        let w = (rect.width() - gap * (units.len() as f32 - 1.0)) / units.len() as f32;
        let text = ui.visuals().text_color();
        for (i, unit) in units.iter().enumerate() {
            let x = rect.left() + i as f32 * (w + gap);
            let r = Rect::from_min_size(Pos2::new(x, rect.top() + 8.0), Vec2::new(w, 44.0));
            let on: Vec<Category> = lit
                .iter()
                .filter(|(u, _)| u == unit)
                .map(|(_, c)| *c)
                .collect();
            let fill = on.iter().min().map_or(ui.visuals().extreme_bg_color, |&c| {
                category_color(c).gamma_multiply(if playing { 0.9 } else { 0.35 })
            });
            painter.rect(r, 6.0, fill, Stroke::new(1.0, text), StrokeKind::Inside);
            painter.text(
                r.center(),
                Align2::CENTER_CENTER,
                lang.tr(unit.key()),
                FontId::proportional(14.0),
                text,
            );
            if i + 1 < units.len() {
                let y = r.center().y;
                painter.arrow(
                    Pos2::new(r.right() + 1.0, y),
                    Vec2::new(gap - 2.0, 0.0),
                    Stroke::new(1.5, text),
                );
            }
        }
        // Where in the step the replay is, and at what speed.
        let progress = ((t - step.start_ns as f64) / wall).clamp(0.0, 1.0) as f32;
        if playing {
            self.replay_progress = Some(progress);
        }
        ui.add(egui::ProgressBar::new(progress).text(format!(
            "{} / {}",
            format_ns(t - step.start_ns as f64),
            format_ns(wall)
        )));
        if playing {
            let names: Vec<String> = active
                .iter()
                .map(|s| {
                    format!(
                        "{} ({})",
                        span_name(lang, s.name),
                        format_ns(s.duration_ns as f64)
                    )
                })
                .collect();
            ui.label(names.join(" · "));
        }
    }
}

/// A box of the hardware diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Storage,
    Cores,
    Ram,
    Bus,
    Vram,
    Compute,
}

impl Unit {
    fn key(self) -> Key {
        match self {
            Unit::Storage => Key::Storage,
            Unit::Cores => Key::CpuCores,
            Unit::Ram => Key::Ram,
            Unit::Bus => Key::Bus,
            Unit::Vram => Key::Vram,
            Unit::Compute => Key::ComputeUnits,
        }
    }
}

fn units_of(device: Device) -> Vec<Unit> {
    match device {
        Device::Gpu => vec![
            Unit::Storage,
            Unit::Cores,
            Unit::Ram,
            Unit::Bus,
            Unit::Vram,
            Unit::Compute,
        ],
        Device::Cpu => vec![Unit::Storage, Unit::Ram, Unit::Cores],
    }
}

/// The boxes a span's work touches.
fn units_for(span: &Span, device: Device) -> Vec<(Unit, Category)> {
    let c = span.category;
    let gpu = device == Device::Gpu;
    let units: &[Unit] = match (span.lane, c) {
        (_, Category::DataLoader) if span.name.starts_with("storage") => &[Unit::Storage],
        (_, Category::DataLoader) => &[Unit::Cores, Unit::Ram],
        (Lane::Transfer, _) if gpu => &[Unit::Ram, Unit::Bus, Unit::Vram],
        (Lane::Readback, _) if gpu => &[Unit::Vram, Unit::Bus, Unit::Ram],
        (Lane::Transfer | Lane::Readback, _) => &[Unit::Ram],
        (Lane::Kernels, _) if gpu => &[Unit::Compute, Unit::Vram],
        (Lane::Kernels, _) => &[Unit::Cores, Unit::Ram],
        _ => &[Unit::Cores],
    };
    units.iter().map(|&u| (u, c)).collect()
}

/// Category swatches with their names.
fn legend_ui(ui: &mut egui::Ui, lang: Lang) {
    ui.horizontal_wrapped(|ui| {
        for c in Category::ALL {
            super::labels::swatch(ui, category_color(c), lang.tr(category_key(c)));
        }
    });
}

/// The lanes of one device's recorded spans over a zoomable, pannable time window.
fn timeline_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    device: Device,
    history: &TraceHistory,
    view: &mut View,
    selected: &mut Option<u64>,
    hits: &mut Vec<Hit>,
) {
    let Some(last) = history.steps.back() else {
        return;
    };
    let mut lanes: BTreeSet<(u32, Lane)> = history
        .spans
        .iter()
        .map(|s| (s.lane.tid(), s.lane))
        .collect();
    lanes.insert((Lane::Main.tid(), Lane::Main));
    lanes.insert((Lane::Kernels.tid(), Lane::Kernels));
    let lanes: Vec<Lane> = lanes.into_iter().map(|(_, l)| l).collect();
    let follow = {
        let first = history
            .steps
            .iter()
            .rev()
            .nth(FOLLOW_STEPS - 1)
            .or(history.steps.front())
            .map_or(last.start_ns, |s| s.start_ns);
        [first as f64, last.end_ns as f64]
    };
    let [w0, w1] = view.window.unwrap_or(follow);
    let span_ns = (w1 - w0).max(1.0);

    ui.horizontal(|ui| {
        let zoom = |view: &mut View, factor: f64| {
            let mid = f64::midpoint(w0, w1);
            let half = span_ns * factor / 2.0;
            view.window = Some([mid - half, mid + half]);
        };
        if ui
            .small_button("＋")
            .on_hover_text(lang.tr(Key::ZoomIn))
            .clicked()
        {
            zoom(view, 0.5);
        }
        if ui
            .small_button("－")
            .on_hover_text(lang.tr(Key::ZoomOut))
            .clicked()
        {
            zoom(view, 2.0);
        }
        if ui
            .small_button("⟲")
            .on_hover_text(lang.tr(Key::TimelineTip))
            .clicked()
        {
            view.window = None;
        }
        ui.label(RichText::new(format_ns(span_ns)).weak());
    });

    let axis = 18.0;
    let height = axis + LANE_HEIGHT * lanes.len() as f32;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::hover());
    for (i, &lane) in lanes.iter().enumerate() {
        let y = rect.top() + axis + i as f32 * LANE_HEIGHT;
        let label_rect = Rect::from_min_size(
            Pos2::new(rect.left(), y),
            Vec2::new(GUTTER - 6.0, LANE_HEIGHT),
        );
        ui.put(
            label_rect,
            egui::Label::new(lane_name(lang, lane, device)).truncate(),
        );
    }
    let plot = Rect::from_min_max(Pos2::new(rect.left() + GUTTER, rect.top()), rect.max);
    let response = ui.interact(
        plot,
        ui.make_persistent_id(("timeline", device)),
        Sense::click_and_drag(),
    );
    let painter = ui.painter_at(plot);
    let visuals = ui.visuals().clone();
    painter.rect_filled(plot, 0.0, visuals.extreme_bg_color);
    let x_of = |t: f64| plot.left() + ((t - w0) / span_ns) as f32 * plot.width();
    let t_of = |x: f32| w0 + f64::from((x - plot.left()) / plot.width()) * span_ns;
    for i in (1..lanes.len()).step_by(2) {
        let y = plot.top() + axis + i as f32 * LANE_HEIGHT;
        painter.rect_filled(
            Rect::from_min_size(
                Pos2::new(plot.left(), y),
                Vec2::new(plot.width(), LANE_HEIGHT),
            ),
            0.0,
            visuals.faint_bg_color,
        );
    }
    // Steps: the current one shaded, the selected one outlined, each numbered on the axis.
    for s in history
        .steps
        .iter()
        .filter(|s| (s.end_ns as f64) >= w0 && (s.start_ns as f64) <= w1)
    {
        let (x0, x1) = (x_of(s.start_ns as f64), x_of(s.end_ns as f64));
        let band = Rect::from_min_max(Pos2::new(x0, plot.top()), Pos2::new(x1, plot.bottom()));
        if s.step == last.step {
            painter.rect_filled(band, 0.0, visuals.selection.bg_fill.gamma_multiply(0.25));
        }
        if Some(s.step) == *selected {
            painter.rect_stroke(
                band,
                0.0,
                Stroke::new(2.0, visuals.selection.stroke.color),
                StrokeKind::Inside,
            );
        }
        painter.line_segment(
            [Pos2::new(x0, plot.top()), Pos2::new(x0, plot.bottom())],
            Stroke::new(1.0, visuals.weak_text_color()),
        );
        if !s.kernels_timed
            && x1 - x0 > 80.0
            && let Some(row) = lanes.iter().position(|&l| l == Lane::Kernels)
        {
            painter.text(
                Pos2::new(
                    x0 + 4.0,
                    plot.top() + axis + (row as f32 + 0.5) * LANE_HEIGHT,
                ),
                Align2::LEFT_CENTER,
                lang.tr(Key::KernelsNotTimed),
                FontId::proportional(12.0),
                visuals.weak_text_color(),
            );
        }
        if x1 - x0 > 24.0 {
            let label = if s.step == last.step {
                format!("{} · {}", s.step, lang.tr(Key::CurrentStep))
            } else {
                s.step.to_string()
            };
            painter.text(
                Pos2::new(x0 + 3.0, plot.top() + 2.0),
                Align2::LEFT_TOP,
                label,
                FontId::proportional(12.0),
                visuals.text_color(),
            );
        }
    }
    for s in history
        .spans
        .iter()
        .filter(|s| (s.end_ns() as f64) >= w0 && (s.start_ns as f64) <= w1)
    {
        let Some(row) = lanes.iter().position(|&l| l == s.lane) else {
            continue;
        };
        let y = plot.top() + axis + row as f32 * LANE_HEIGHT + 3.0;
        let x0 = x_of(s.start_ns as f64).max(plot.left());
        let x1 = x_of(s.end_ns() as f64).min(plot.right()).max(x0 + 1.0);
        let r = Rect::from_min_max(Pos2::new(x0, y), Pos2::new(x1, y + LANE_HEIGHT - 6.0));
        let color = category_color(s.category);
        if s.clock == Clock::HostObserved {
            // An upper bound, not a measurement of the kernels themselves: drawn hollow.
            painter.rect_stroke(r, 2.0, Stroke::new(1.5, color), StrokeKind::Inside);
        } else {
            painter.rect_filled(r, 2.0, color);
        }
        if r.width() > 60.0 {
            painter.text(
                r.left_center() + Vec2::new(3.0, 0.0),
                Align2::LEFT_CENTER,
                span_name(lang, s.name),
                FontId::proportional(12.0),
                Color32::BLACK,
            );
        }
        hits.push(Hit {
            rect: r,
            device,
            span: s.clone(),
        });
    }

    // Pan by dragging (or a horizontal scroll), zoom by pinch or Ctrl+wheel around the pointer,
    // double-click to follow the run again, click to choose the step the diagram shows.
    if response.dragged() {
        let dt = -f64::from(response.drag_delta().x / plot.width()) * span_ns;
        view.window = Some([w0 + dt, w1 + dt]);
    }
    if response.hovered() {
        let (zoom, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta.x));
        if let Some(pointer) = response.hover_pos() {
            let [mut a, mut b] = view.window.unwrap_or([w0, w1]);
            if zoom != 1.0 {
                let t = t_of(pointer.x);
                let f = 1.0 / f64::from(zoom);
                a = t - (t - a) * f;
                b = t + (b - t) * f;
            }
            if scroll != 0.0 {
                let dt = -f64::from(scroll / plot.width()) * (b - a);
                a += dt;
                b += dt;
            }
            if zoom != 1.0 || scroll != 0.0 {
                view.window = Some([a, b]);
            }
        }
    }
    if response.double_clicked() {
        view.window = None;
    } else if response.clicked()
        && let Some(pos) = response.interact_pointer_pos()
    {
        let t = t_of(pos.x);
        *selected = history
            .steps
            .iter()
            .find(|s| (s.start_ns as f64) <= t && t <= s.end_ns as f64)
            .map(|s| s.step);
    }
    let hovered = response
        .hover_pos()
        .and_then(|p| {
            hits.iter()
                .rev()
                .find(|h| h.device == device && h.rect.contains(p))
        })
        .cloned();
    if let Some(hit) = hovered {
        response.on_hover_ui_at_pointer(|ui| span_tooltip_ui(ui, lang, &hit.span));
    }
}

/// What the hover shows of a span.
fn span_tooltip_ui(ui: &mut egui::Ui, lang: Lang, span: &Span) {
    ui.label(RichText::new(span_name(lang, span.name)).strong());
    ui.label(format!(
        "{} · {}",
        format_ns(span.duration_ns as f64),
        lang.tr(category_key(span.category))
    ));
    if span.bytes > 0 {
        ui.label(lang.fmt(
            Key::SpanBytes,
            &[("bytes", &crate::units::format_bytes(span.bytes))],
        ));
    }
    ui.label(lang.fmt(Key::SpanStep, &[("n", &span.step)]));
    ui.label(
        RichText::new(lang.tr(match span.clock {
            Clock::Host => Key::ClockHost,
            Clock::GpuTimestamp => Key::ClockGpu,
            Clock::HostObserved => Key::ClockObserved,
        }))
        .weak(),
    );
}

/// The last steps as stacked bars of their breakdown, tallest step full height.
fn breakdown_ui(ui: &mut egui::Ui, lang: Lang, steps: &[&StepTrace], selected: &mut Option<u64>) {
    let height = 90.0;
    let (rect, response) =
        ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::click());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    // One step stalled by the OS (or by an evaluation) would flatten every other bar: the scale
    // is twice the median step, and taller bars are cut with a white cap.
    let mut walls: Vec<u64> = steps.iter().map(|s| s.breakdown.wall_ns).collect();
    walls.sort_unstable();
    let median = walls.get(walls.len() / 2).copied().unwrap_or(1);
    let tallest = (2 * median).min(walls.last().copied().unwrap_or(1)).max(1) as f32;
    let n = steps.len().max(1) as f32;
    let w = rect.width() / n;
    let mut hovered = None;
    for (i, s) in steps.iter().enumerate() {
        let x = rect.left() + i as f32 * w;
        let mut y = rect.bottom();
        let scale = (height - 4.0) / tallest;
        let clipped = s.breakdown.wall_ns as f32 > tallest;
        for c in Category::ALL {
            let h = (s.breakdown.get(c) as f32 * scale).min(y - rect.top() - 4.0);
            if h > 0.0 {
                let r = Rect::from_min_max(
                    Pos2::new(x + 0.5, y - h),
                    Pos2::new(x + w.max(1.5) - 0.5, y),
                );
                painter.rect_filled(r, 0.0, category_color(c));
                y -= h;
            }
        }
        if clipped {
            painter.rect_filled(
                Rect::from_min_size(
                    Pos2::new(x + 0.5, rect.top()),
                    Vec2::new(w.max(1.5) - 1.0, 3.0),
                ),
                0.0,
                Color32::WHITE,
            );
        }
        let column = Rect::from_min_max(Pos2::new(x, rect.top()), Pos2::new(x + w, rect.bottom()));
        if Some(s.step) == *selected {
            painter.rect_stroke(
                column,
                0.0,
                Stroke::new(2.0, ui.visuals().selection.stroke.color),
                StrokeKind::Inside,
            );
        }
        if response.hover_pos().is_some_and(|p| column.contains(p)) {
            hovered = Some(*s);
        }
    }
    if response.clicked() {
        *selected = hovered.map(|s| s.step);
    }
    if let Some(s) = hovered {
        response.on_hover_ui_at_pointer(|ui| {
            ui.label(RichText::new(lang.fmt(Key::SpanStep, &[("n", &s.step)])).strong());
            ui.label(format_ns(s.breakdown.wall_ns as f64));
            for c in Category::ALL {
                let part = s.breakdown.get(c);
                if part > 0 {
                    ui.label(format!(
                        "{}: {} ({:.0}%)",
                        lang.tr(category_key(c)),
                        format_ns(part as f64),
                        s.breakdown.share(c) * 100.0
                    ));
                }
            }
        });
    }
    // The mean over these steps, per category.
    let total = Breakdown::total(steps.iter().map(|s| &s.breakdown));
    let count = steps.len().max(1) as f64;
    ui.horizontal_wrapped(|ui| {
        for c in Category::ALL {
            ui.label(
                RichText::new(format!(
                    "{} {} ({:.0}%)",
                    lang.tr(category_key(c)),
                    format_ns(total.get(c) as f64 / count),
                    total.share(c) * 100.0
                ))
                .color(category_color(c)),
            );
        }
    });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::trace::{TraceChunk, TraceHistory};
    use crate::ui::testing::harness;

    /// A CPU run that recorded `steps` steps of 100 µs: a wait for the batch, the copy, the
    /// kernels.
    fn recorded(steps: u64) -> [DeviceRun; 2] {
        let mut cpu = DeviceRun::new(Device::Cpu);
        let mut chunk = TraceChunk::default();
        for step in 1..=steps {
            let start = step * 100_000;
            let span = |lane, category, name, from: u64, to: u64| Span {
                lane,
                category,
                name,
                start_ns: start + from,
                duration_ns: to - from,
                bytes: if category == Category::Memcpy {
                    4096
                } else {
                    0
                },
                step,
                clock: Clock::Host,
            };
            let spans = vec![
                span(
                    Lane::Main,
                    Category::DataLoader,
                    "wait for batch",
                    0,
                    10_000,
                ),
                span(
                    Lane::Transfer,
                    Category::Memcpy,
                    "copy into tensor (RAM)",
                    10_000,
                    20_000,
                ),
                span(Lane::Kernels, Category::Kernel, "forward", 20_000, 90_000),
            ];
            chunk.steps.push(StepTrace {
                step,
                start_ns: start,
                end_ns: start + 100_000,
                breakdown: Breakdown::of(start, start + 100_000, &spans),
                synced: true,
                kernels_timed: true,
                batch_bytes: 4096,
            });
            chunk.spans.extend(spans);
        }
        let mut history = TraceHistory::default();
        history.extend(chunk);
        cpu.trace = history;
        [cpu, DeviceRun::new(Device::Gpu)]
    }

    #[test]
    fn the_timeline_draws_each_lane_and_a_hovered_span_says_how_long_it_took() {
        let runs = recorded(20);
        let mut h = harness(
            move |ui, (panel, commands): &mut (JourneyPanel, Vec<UiCommand>)| {
                panel.ui(ui, Lang::En, &runs, commands);
            },
            (JourneyPanel::default(), Vec::new()),
        );
        for lane in ["training thread", "host→device copy", "CPU kernels (rayon)"] {
            assert!(h.query_by_label(lane).is_some(), "lane {lane}");
        }
        assert!(h.query_by_label_contains("Step breakdown").is_some());
        // Zoom onto one step's kernel span and hover it.
        h.state_mut()
            .0
            .show_range(Device::Cpu, 2_000_000, 2_100_000);
        h.run();
        let hit = h
            .state()
            .0
            .hits
            .iter()
            .find(|hit| hit.span.category == Category::Kernel && hit.span.step == 20)
            .cloned()
            .expect("the kernel span is drawn");
        h.ctx
            .global_style_mut(|s| s.interaction.tooltip_delay = 0.0);
        h.hover_at(hit.rect.center());
        h.run();
        assert!(h.query_by_label("forward").is_some());
        assert!(h.query_by_label("70.0 µs · Kernel").is_some());
        h.get_by_label("Export trace…").click();
        h.run();
        assert_eq!(h.state().1, [UiCommand::ExportTrace]);
    }

    #[test]
    fn with_nothing_recorded_the_view_says_how_to_record() {
        let runs = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
        let h = harness(
            move |ui, panel: &mut JourneyPanel| panel.ui(ui, Lang::Zh, &runs, &mut Vec::new()),
            JourneyPanel::default(),
        );
        assert!(h.query_by_label_contains("尚无记录").is_some());
    }
}
