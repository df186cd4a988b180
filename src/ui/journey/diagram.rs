//! The hardware diagram: the boxes a device's step goes through (storage, cores, RAM, bus,
//! VRAM, compute units), lit by what the step did, and a replay that walks one step's recorded
//! path slowly enough for a class to follow.

use egui::{Align2, FontId, Pos2, Rect, RichText, Sense, Stroke, StrokeKind, Vec2};

use super::palette::category_color;
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::trace::{Category, Lane, Span, StepTrace, TraceHistory};
use crate::ui::labels::span_name;
use crate::units::format_ns;

/// How long the replay of one step lasts, in seconds.
const REPLAY_S: f64 = 8.0;

/// A step's path replayed on the hardware diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Replay {
    device: Device,
    step: u64,
    /// UI time (s) when it started.
    started_s: f64,
}

/// What the diagram did this frame.
pub(super) struct Drawn {
    /// The step whose replay was started (the view holds on to it while newer steps arrive).
    pub replayed: Option<u64>,
    /// How far the replay is through its step (0 to 1), while one plays.
    pub progress: Option<f32>,
}

/// The diagram of `step`, with its Replay button.
pub(super) fn diagram_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    device: Device,
    history: &TraceHistory,
    step: &StepTrace,
    replay: &mut Option<Replay>,
) -> Drawn {
    let now_s = ui.input(|i| i.time);
    let mut replayed = None;
    ui.horizontal(|ui| {
        ui.label(RichText::new(lang.tr(Key::Diagram)).strong())
            .on_hover_text(lang.tr(Key::DiagramTip));
        let replay_label = format!(
            "▶ {} ({})",
            lang.tr(Key::Replay),
            lang.fmt(Key::SpanStep, &[("n", &step.step)])
        );
        if ui.button(replay_label).clicked() {
            *replay = Some(Replay {
                device,
                step: step.step,
                started_s: now_s,
            });
            replayed = Some(step.step);
        }
    });
    let (t, playing) = replay_time(replay, device, step, now_s);
    if playing {
        ui.ctx().request_repaint();
    }
    // What is active at `t` (while replaying), or what the step did at all (at rest).
    let active: Vec<&Span> = history
        .spans
        .iter()
        .filter(|s| s.step == step.step)
        .filter(|s| {
            !playing || (s.start_ns as f64 <= t && t <= s.end_ns().max(s.start_ns + 1) as f64)
        })
        .collect();
    let lit: Vec<(Unit, Category)> = active.iter().flat_map(|s| units_for(s, device)).collect();
    paint_units(ui, lang, &units_of(device), &lit, playing);
    // Where in the step the replay is, and at what speed.
    let wall = (step.end_ns - step.start_ns).max(1) as f64;
    let progress = ((t - step.start_ns as f64) / wall).clamp(0.0, 1.0) as f32;
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
    Drawn {
        replayed,
        progress: playing.then_some(progress),
    }
}

/// The moment of `step` the diagram shows (ns since the run's epoch) and whether a replay is
/// playing: the step stretched to [`REPLAY_S`] seconds; at rest, the end of the step.
fn replay_time(
    replay: &mut Option<Replay>,
    device: Device,
    step: &StepTrace,
    now_s: f64,
) -> (f64, bool) {
    let wall = (step.end_ns - step.start_ns).max(1) as f64;
    match *replay {
        Some(r) if r.device == device && r.step == step.step => {
            let f = (now_s - r.started_s) / REPLAY_S;
            if f >= 1.0 {
                *replay = None;
                (step.end_ns as f64, false)
            } else {
                (step.start_ns as f64 + f * wall, true)
            }
        }
        _ => (step.end_ns as f64, false),
    }
}

/// The boxes in a row joined by arrows, each filled with the colour of the first category that
/// lights it (brighter while a replay plays).
fn paint_units(
    ui: &mut egui::Ui,
    lang: Lang,
    units: &[Unit],
    lit: &[(Unit, Category)],
    playing: bool,
) {
    let height = 70.0;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::hover());
    let painter = ui.painter_at(rect);
    let gap = 14.0;
    let w = (rect.width() - gap * (units.len() as f32 - 1.0)) / units.len() as f32;
    let text = ui.visuals().text_color();
    for (i, unit) in units.iter().enumerate() {
        let x = rect.left() + i as f32 * (w + gap);
        let r = Rect::from_min_size(Pos2::new(x, rect.top() + 8.0), Vec2::new(w, 44.0));
        let first = lit.iter().filter(|(u, _)| u == unit).map(|(_, c)| *c).min();
        let fill = first.map_or(ui.visuals().extreme_bg_color, |c| {
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
