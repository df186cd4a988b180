//! The step breakdown: the last steps as stacked bars of where their time went, a click choosing
//! the step the timeline and the diagram show, and the mean per category beneath.

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, StrokeKind, Vec2};

use super::palette::{category_color, category_key};
use crate::i18n::{Key, Lang};
use crate::trace::{Breakdown, Category, StepTrace};
use crate::units::format_ns;

/// The last steps as stacked bars of their breakdown, tallest step full height.
pub(super) fn breakdown_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    steps: &[&StepTrace],
    selected: &mut Option<u64>,
) {
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
