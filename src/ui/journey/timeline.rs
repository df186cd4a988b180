//! One device's timeline: its recorded spans as lanes over a time window the user zooms (buttons,
//! pinch, Ctrl+wheel), pans (drag, horizontal scroll) and clicks to choose a step.

use std::collections::BTreeSet;

use egui::{
    Align2, Color32, FontId, Pos2, Rect, Response, RichText, Sense, Stroke, StrokeKind, Vec2,
};

use super::palette::{category_color, category_key, lane_name};
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::trace::{Clock, Lane, Span, StepTrace, TraceHistory};
use crate::ui::labels::span_name;
use crate::units::format_ns;

/// Steps the timeline shows when it follows the run.
const FOLLOW_STEPS: usize = 6;
/// Height of one lane, in points.
const LANE_HEIGHT: f32 = 22.0;
/// Width of the lane names.
const GUTTER: f32 = 170.0;
/// Height of the step numbers' axis above the lanes, in points.
const AXIS: f32 = 18.0;

/// The time window of one device's timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct View {
    /// `[start, end]` in ns since the run's epoch; `None` follows the last steps.
    pub window: Option<[f64; 2]>,
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

/// Where the lanes are drawn and which times they show this frame.
struct Geometry {
    plot: Rect,
    /// The window's start and end, in ns since the run's epoch.
    w0: f64,
    w1: f64,
    lanes: Vec<Lane>,
}

impl Geometry {
    fn span_ns(&self) -> f64 {
        (self.w1 - self.w0).max(1.0)
    }

    fn x_of(&self, t: f64) -> f32 {
        self.plot.left() + ((t - self.w0) / self.span_ns()) as f32 * self.plot.width()
    }

    fn t_of(&self, x: f32) -> f64 {
        self.w0 + f64::from((x - self.plot.left()) / self.plot.width()) * self.span_ns()
    }

    /// The top of lane `row`.
    fn lane_top(&self, row: usize) -> f32 {
        self.plot.top() + AXIS + row as f32 * LANE_HEIGHT
    }

    fn row_of(&self, lane: Lane) -> Option<usize> {
        self.lanes.iter().position(|&l| l == lane)
    }
}

/// The lanes of one device's recorded spans over a zoomable, pannable time window.
pub(super) fn timeline_ui(
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
    let [w0, w1] = view.window.unwrap_or_else(|| following(history, last));
    zoom_buttons_ui(ui, lang, view, [w0, w1]);
    let lanes = lanes_of(history);
    let height = AXIS + LANE_HEIGHT * lanes.len() as f32;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::hover());
    for (i, &lane) in lanes.iter().enumerate() {
        let y = rect.top() + AXIS + i as f32 * LANE_HEIGHT;
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
    let geometry = Geometry {
        plot,
        w0,
        w1,
        lanes,
    };
    let response = ui.interact(
        plot,
        ui.make_persistent_id(("timeline", device)),
        Sense::click_and_drag(),
    );
    paint_steps(ui, lang, &geometry, history, last, *selected);
    paint_spans(ui, lang, &geometry, history, device, hits);
    navigate(ui, &response, &geometry, view);
    if response.clicked()
        && !response.double_clicked()
        && let Some(pos) = response.interact_pointer_pos()
    {
        let t = geometry.t_of(pos.x);
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

/// The window that follows the run: its last few steps.
fn following(history: &TraceHistory, last: &StepTrace) -> [f64; 2] {
    let first = history
        .steps
        .iter()
        .rev()
        .nth(FOLLOW_STEPS - 1)
        .or(history.steps.front())
        .map_or(last.start_ns, |s| s.start_ns);
    [first as f64, last.end_ns as f64]
}

/// Every lane a span was recorded on, in their thread order, with the main and kernel lanes
/// always there.
fn lanes_of(history: &TraceHistory) -> Vec<Lane> {
    let mut lanes: BTreeSet<(u32, Lane)> = history
        .spans
        .iter()
        .map(|s| (s.lane.tid(), s.lane))
        .collect();
    lanes.insert((Lane::Main.tid(), Lane::Main));
    lanes.insert((Lane::Kernels.tid(), Lane::Kernels));
    lanes.into_iter().map(|(_, l)| l).collect()
}

/// Zoom in, zoom out, follow the run again, and the window's width.
fn zoom_buttons_ui(ui: &mut egui::Ui, lang: Lang, view: &mut View, [w0, w1]: [f64; 2]) {
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
}

/// The background, striped by lane, and the steps: the current one shaded, the selected one
/// outlined, each numbered on the axis.
fn paint_steps(
    ui: &egui::Ui,
    lang: Lang,
    geometry: &Geometry,
    history: &TraceHistory,
    last: &StepTrace,
    selected: Option<u64>,
) {
    let Geometry { plot, w0, w1, .. } = *geometry;
    let painter = ui.painter_at(plot);
    let visuals = ui.visuals();
    painter.rect_filled(plot, 0.0, visuals.extreme_bg_color);
    for i in (1..geometry.lanes.len()).step_by(2) {
        let y = geometry.lane_top(i);
        let stripe = Rect::from_min_size(
            Pos2::new(plot.left(), y),
            Vec2::new(plot.width(), LANE_HEIGHT),
        );
        painter.rect_filled(stripe, 0.0, visuals.faint_bg_color);
    }
    for s in history
        .steps
        .iter()
        .filter(|s| (s.end_ns as f64) >= w0 && (s.start_ns as f64) <= w1)
    {
        let (x0, x1) = (
            geometry.x_of(s.start_ns as f64),
            geometry.x_of(s.end_ns as f64),
        );
        let band = Rect::from_min_max(Pos2::new(x0, plot.top()), Pos2::new(x1, plot.bottom()));
        if s.step == last.step {
            painter.rect_filled(band, 0.0, visuals.selection.bg_fill.gamma_multiply(0.25));
        }
        if Some(s.step) == selected {
            let stroke = Stroke::new(2.0, visuals.selection.stroke.color);
            painter.rect_stroke(band, 0.0, stroke, StrokeKind::Inside);
        }
        painter.line_segment(
            [Pos2::new(x0, plot.top()), Pos2::new(x0, plot.bottom())],
            Stroke::new(1.0, visuals.weak_text_color()),
        );
        if !s.kernels_timed
            && x1 - x0 > 80.0
            && let Some(row) = geometry.row_of(Lane::Kernels)
        {
            painter.text(
                Pos2::new(x0 + 4.0, geometry.lane_top(row) + 0.5 * LANE_HEIGHT),
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
}

/// The spans in the window, each in its lane and its category's colour (hollow where only the
/// host saw it end), remembered in `hits` for hovering.
fn paint_spans(
    ui: &egui::Ui,
    lang: Lang,
    geometry: &Geometry,
    history: &TraceHistory,
    device: Device,
    hits: &mut Vec<Hit>,
) {
    let Geometry { plot, w0, w1, .. } = *geometry;
    let painter = ui.painter_at(plot);
    for s in history
        .spans
        .iter()
        .filter(|s| (s.end_ns() as f64) >= w0 && (s.start_ns as f64) <= w1)
    {
        let Some(row) = geometry.row_of(s.lane) else {
            continue;
        };
        let y = geometry.lane_top(row) + 3.0;
        let x0 = geometry.x_of(s.start_ns as f64).max(plot.left());
        let x1 = geometry
            .x_of(s.end_ns() as f64)
            .min(plot.right())
            .max(x0 + 1.0);
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
}

/// Pan by dragging (or a horizontal scroll), zoom by pinch or Ctrl+wheel around the pointer,
/// double-click to follow the run again.
fn navigate(ui: &egui::Ui, response: &Response, geometry: &Geometry, view: &mut View) {
    let Geometry { plot, w0, w1, .. } = *geometry;
    if response.dragged() {
        let dt = -f64::from(response.drag_delta().x / plot.width()) * geometry.span_ns();
        view.window = Some([w0 + dt, w1 + dt]);
    }
    if response.hovered() {
        let (zoom, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta.x));
        if let Some(pointer) = response.hover_pos() {
            let [mut a, mut b] = view.window.unwrap_or([w0, w1]);
            if zoom != 1.0 {
                let t = geometry.t_of(pointer.x);
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
