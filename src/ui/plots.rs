//! How every plot reads, at a desk and at a projector: three to seven ticks on each axis with SI
//! suffixes (`300 k`, `1 M`, `20 M`, never `300000`), tick labels in the text colour rather than
//! a faded grey, and in presenter mode thicker lines (legends, in body text, grow with presenter
//! mode's scale; a heading-sized legend would hide the curves).
//!
//! `egui_plot`'s own ticks fade in with their spacing and can leave a short axis with one label;
//! the spacer here picks a 1-2-5 step that gives at least three, and the labels are painted at
//! full strength once they fit.

use std::ops::RangeInclusive;

use egui::{Context, Id, Ui};
use egui_plot::{AxisHints, GridInput, GridMark, Plot};

/// Where presenter mode is kept for the plots (set by the app every frame).
fn presenter_id() -> Id {
    Id::unique("batchscope-plots-presenter")
}

/// Tells the plots whether presenter mode is on.
pub fn set_presenter(ctx: &Context, on: bool) {
    ctx.data_mut(|d| d.insert_temp(presenter_id(), on));
}

/// Whether presenter mode is on.
pub fn presenter(ctx: &Context) -> bool {
    ctx.data(|d| d.get_temp(presenter_id())).unwrap_or(false)
}

fn plot_shot_id() -> Id {
    Id::unique("batchscope-plots-shot")
}

/// Offers a right-click menu on a plot just shown in `ui` to save it alone as a PNG, with its
/// axes: the choice is kept for the app to take with [`take_plot_shot`] (the plots' functions
/// have no command list).
pub fn offer_png(ui: &Ui, response: &egui::Response, lang: crate::i18n::Lang) {
    // The plot's own response covers the area inside the axes; the y axis's labels lie to its
    // left from the layout's edge, the x axis's below it down to what the layout holds now.
    let placed = ui.min_rect();
    let rect = egui::Rect::from_min_max(
        egui::pos2(placed.left().min(response.rect.left()), response.rect.top()),
        egui::pos2(
            response.rect.right(),
            placed.bottom().max(response.rect.bottom()),
        ),
    );
    response.context_menu(|ui| {
        if ui
            .button(lang.tr(crate::i18n::LessonKey::SavePlot))
            .clicked()
        {
            ui.ctx()
                .data_mut(|d| d.insert_temp(plot_shot_id(), Some(rect)));
            ui.close();
        }
    });
}

/// The plot whose picture the user asked for this frame, once: its rectangle in points.
pub fn take_plot_shot(ctx: &Context) -> Option<egui::Rect> {
    ctx.data_mut(|d| d.remove_temp::<Option<egui::Rect>>(plot_shot_id()))
        .flatten()
}

/// The width of a plotted line: thicker at a projector.
pub fn line_width(ui: &Ui) -> f32 {
    if presenter(ui.ctx()) { 3.5 } else { 1.75 }
}

/// The smallest spacing of grid lines, in points: `egui_plot`'s default, set here because the
/// spacers below read the points per unit from it.
const GRID_MIN: f32 = 8.0;

/// The room a tick label needs on each axis, in points (`egui_plot` paints none closer).
const X_LABEL_ROOM: f32 = 48.0;
const Y_LABEL_ROOM: f32 = 16.0;

/// `plot` with readable linear axes: 1-2-5 ticks, SI suffixes, labels in the text colour. Call
/// it first: the axis labels and formatters set after it go onto these axes.
pub fn readable<'a>(plot: Plot<'a>, ui: &Ui) -> Plot<'a> {
    let color = ui.visuals().text_color();
    plot.custom_x_axes(vec![
        AxisHints::new_x()
            .formatter(si_tick)
            .label_spacing(X_LABEL_ROOM..=X_LABEL_ROOM + 1.0)
            .tick_label_color(color),
    ])
    .custom_y_axes(vec![
        AxisHints::new_y()
            .formatter(si_tick)
            .label_spacing(Y_LABEL_ROOM..=Y_LABEL_ROOM + 1.0)
            .tick_label_color(color),
    ])
    .grid_spacing(GRID_MIN..=300.0)
    .x_grid_spacer(|input| nice_marks(&input, X_LABEL_ROOM))
    .y_grid_spacer(|input| nice_marks(&input, Y_LABEL_ROOM))
}

/// Marks every 1, 2 or 5 × 10ᵏ: the largest such step that leaves at least three marks in view,
/// made larger where the axis is too short for their labels to be `room` points apart.
pub fn nice_marks(input: &GridInput, room: f32) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return Vec::new();
    }
    let per_point = input.base_step_size / f64::from(GRID_MIN);
    let shortest = per_point * f64::from(room) * 1.05;
    let mut step = nice_step(span / 3.0);
    while step < shortest {
        step = next_nice(step);
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|i| GridMark {
            value: i as f64 * step,
            step_size: step,
        })
        .collect()
}

/// The largest 1, 2 or 5 × 10ᵏ at most `at_most` (which is positive).
fn nice_step(at_most: f64) -> f64 {
    let power = 10f64.powf(at_most.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s <= at_most * (1.0 + 1e-9))
        .unwrap_or(power)
}

/// The 1-2-5 step after `step`.
fn next_nice(step: f64) -> f64 {
    let power = 10f64.powf(step.log10().floor());
    let mantissa = (step / power).round();
    if mantissa < 2.0 {
        2.0 * power
    } else if mantissa < 5.0 {
        5.0 * power
    } else {
        10.0 * power
    }
}

/// A linear axis's tick: as many decimals as its step needs, with an SI suffix from a thousand.
pub fn si_tick(mark: GridMark, _range: &RangeInclusive<f64>) -> String {
    let step = mark.step_size.abs().max(f64::MIN_POSITIVE);
    // Snap to the step, so that 0.30000000000000004 reads 0.3 and -1e-17 reads 0.
    let value = (mark.value / step).round() * step;
    if value == 0.0 {
        return "0".to_owned();
    }
    let (divisor, suffix) = si_scale(value.abs().max(step));
    let decimals = (-(step / divisor).log10()).ceil().clamp(0.0, 6.0) as usize;
    let text = format!("{:.decimals$}", value / divisor);
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    let text = if text == "-0" { "0".to_owned() } else { text };
    format!("{text}{suffix}")
}

/// A log₁₀ axis's tick: the value 10^mark, to three significant figures with an SI suffix.
pub fn si_log10_tick(mark: GridMark, _range: &RangeInclusive<f64>) -> String {
    si_value(10f64.powf(mark.value))
}

/// `value` to three significant figures, with `k`, `M`, `G` or `T` from a thousand (1.5 k,
/// 20 M); below one, plain decimals (0.25, 0.001).
pub fn si_value(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let (divisor, suffix) = si_scale(value.abs());
    let scaled = value / divisor;
    let digits = if scaled.abs() >= 1.0 {
        (scaled.abs().log10().floor() as i32 + 1).max(1)
    } else if scaled == 0.0 {
        1
    } else {
        scaled.abs().log10().floor() as i32 + 1
    };
    let decimals = (3 - digits).clamp(0, 9) as usize;
    let text = format!("{scaled:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// The SI prefix for numbers of `magnitude`: none below a thousand.
fn si_scale(magnitude: f64) -> (f64, &'static str) {
    [(1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k")]
        .into_iter()
        .find(|&(d, _)| magnitude >= d * (1.0 - 1e-9))
        .unwrap_or((1.0, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A right-click on a plot offers to save it alone; choosing that hands its rectangle to the
    /// app once.
    #[test]
    fn a_plots_menu_asks_for_its_own_picture() {
        use crate::i18n::{Lang, LessonKey};
        use egui_kittest::kittest::Queryable as _;
        let mut h = crate::ui::testing::harness(
            |ui, shown: &mut Option<egui::Rect>| {
                let plot = readable(Plot::new("test-plot"), ui)
                    .height(200.0)
                    .width(300.0);
                let response = plot.show(ui, |_| {}).response;
                offer_png(ui, &response, Lang::Zh);
                *shown = Some(ui.min_rect());
            },
            None,
        );
        h.run();
        let rect = h.state().expect("drawn");
        for pressed in [true, false] {
            h.event(egui::Event::PointerButton {
                pos: rect.center(),
                button: egui::PointerButton::Secondary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            });
        }
        h.run();
        assert_eq!(take_plot_shot(&h.ctx), None, "nothing chosen yet");
        h.get_by_label(Lang::Zh.tr(LessonKey::SavePlot)).click();
        h.run();
        assert_eq!(take_plot_shot(&h.ctx), Some(rect));
        assert_eq!(take_plot_shot(&h.ctx), None, "taken once");
    }

    fn tick(value: f64, step: f64) -> String {
        si_tick(
            GridMark {
                value,
                step_size: step,
            },
            &(0.0..=1.0),
        )
    }

    #[test]
    fn ticks_carry_si_suffixes_and_only_the_decimals_their_step_needs() {
        assert_eq!(tick(300_000.0, 100_000.0), "300 k");
        assert_eq!(tick(1_000_000.0, 500_000.0), "1 M");
        assert_eq!(tick(1_500_000.0, 500_000.0), "1.5 M");
        assert_eq!(tick(20_000_000.0, 5_000_000.0), "20 M");
        assert_eq!(tick(0.1 + 0.2, 0.1), "0.3");
        assert_eq!(tick(-1e-17, 0.5), "0");
        assert_eq!(tick(0.0, 200_000.0), "0");
        assert_eq!(tick(0.02, 0.01), "0.02");
        assert_eq!(tick(500.0, 100.0), "500");
        assert_eq!(tick(1000.0, 200.0), "1 k");
        assert_eq!(si_value(199_526.2), "200 k");
        assert_eq!(si_value(1e6), "1 M");
        assert_eq!(si_value(0.25), "0.25");
        assert_eq!(si_value(0.001), "0.001");
        assert_eq!(si_value(12.0), "12");
        assert_eq!(si_value(2.5e9), "2.5 G");
    }

    #[test]
    fn every_axis_gets_at_least_three_ticks_on_a_1_2_5_step() {
        for (lo, hi) in [
            (0.0, 1.0),
            (-0.03, 0.03),
            (0.0, 2.3),
            (0.0, 300_000.0),
            (12.0, 13.0),
            (0.0, 7.0),
            (1e-3, 5e-3),
        ] {
            // A 400-point axis: room for every label.
            let marks = nice_marks(
                &GridInput {
                    bounds: (lo, hi),
                    base_step_size: (hi - lo) / 400.0 * f64::from(GRID_MIN),
                },
                Y_LABEL_ROOM,
            );
            assert!(
                (3..=8).contains(&marks.len()),
                "{lo}..{hi}: {} marks",
                marks.len()
            );
            let step = marks[0].step_size;
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6),
                "{lo}..{hi}: step {step}"
            );
        }
        let none = nice_marks(
            &GridInput {
                bounds: (1.0, 1.0),
                base_step_size: 0.0,
            },
            Y_LABEL_ROOM,
        );
        assert!(none.is_empty());
        // An 80-point axis from 0 to 1: steps of 0.2 would be 16 points apart, too close for
        // their labels, so the step grows to 0.5 and three labels still fit.
        let short = nice_marks(
            &GridInput {
                bounds: (0.0, 1.0),
                base_step_size: 1.0 / 80.0 * f64::from(GRID_MIN),
            },
            Y_LABEL_ROOM,
        );
        assert_eq!(
            short.iter().map(|m| m.value).collect::<Vec<_>>(),
            vec![0.0, 0.5, 1.0]
        );
        assert_eq!(next_nice(0.2), 0.5);
        assert_eq!(next_nice(5.0), 10.0);
    }
}
