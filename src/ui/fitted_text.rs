//! Text that fits its place without scrolling: a presenter with a clicker cannot scroll, so the
//! lesson panel in presenter mode, and the toolbar, are drawn at the largest text size at which
//! the whole of them shows.
//!
//! The size is found over a few passes of the same frame: the content is drawn, its extent
//! measured, and if it overflows the frame is discarded and drawn again smaller (text's area
//! grows with the square of its size, so the next size is scaled by the square root of the
//! overflow, a little more). The size only shrinks while the content stays the same; a new
//! step, language or window size starts again from the largest.

use std::hash::Hash;

/// What one fitted place remembers between passes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fit {
    /// A hash of what was drawn (the step, the language, the room it had).
    content: u64,
    /// The size that was drawn.
    size: f32,
}

/// Which way the content must fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Along {
    /// Its height within the room left below (a panel's text).
    Height,
    /// Its width within the room to the right (a row of buttons).
    Width,
}

/// Draws `content` at the largest size in `min..=max` at which it fits `along` the room `ui`
/// has (`content` gets the size to use); `key` says what is drawn, so that new content starts
/// again from `max`. Returns whether it fits (at `min` it may not) and where it was drawn.
pub fn fitted(
    ui: &mut egui::Ui,
    key: impl Hash,
    (min, max): (f32, f32),
    along: Along,
    content: impl FnOnce(&mut egui::Ui, f32),
) -> (bool, egui::Rect) {
    let room = ui.available_size();
    let content_hash = {
        use std::hash::Hasher as _;
        let mut hasher = std::hash::DefaultHasher::new();
        key.hash(&mut hasher);
        (room.x.round() as i32, room.y.round() as i32).hash(&mut hasher);
        hasher.finish()
    };
    let id = ui.scope_id().with("fitted");
    let remembered: Option<Fit> = ui.ctx().data(|d| d.get_temp(id));
    let size = match remembered {
        Some(fit) if fit.content == content_hash => fit.size,
        _ => max,
    };
    let drawn = ui.scope(|ui| content(ui, size)).response.rect;
    let (used, available) = match along {
        Along::Height => (drawn.height(), room.y),
        Along::Width => (drawn.width(), room.x),
    };
    let fits = used <= available + 0.5;
    let mut next = size;
    if !fits && size > min {
        let shrink = (available / used.max(1.0)).sqrt() * 0.98;
        next = (size * shrink).min(size - 0.5).max(min);
        ui.ctx().request_discard("fitting text to its place");
        ui.ctx().request_repaint();
    }
    ui.ctx().data_mut(|d| {
        d.insert_temp(
            id,
            Fit {
                content: content_hash,
                size: next,
            },
        );
    });
    (fits, drawn)
}

/// Sets every text style of `ui` to `factor` times the size `base` gives it: what is drawn
/// after this scales as a whole.
pub fn scale_text(ui: &mut egui::Ui, base: &egui::Style, factor: f32) {
    let style = ui.style_mut();
    for (text_style, font) in &mut style.text_styles {
        if let Some(original) = base.text_styles.get(text_style) {
            font.size = original.size * factor;
        }
    }
    style.spacing.interact_size.y = base.spacing.interact_size.y * factor.min(1.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long text in a short place is drawn smaller until it fits, then stays at that size;
    /// a short one keeps the largest size.
    #[test]
    fn text_shrinks_until_it_fits_and_a_short_text_keeps_the_largest_size() {
        let long = "word ".repeat(300);
        for (text, shrinks) in [(long.as_str(), true), ("A few words.", false)] {
            let text = text.to_owned();
            let mut harness = egui_kittest::Harness::builder()
                .with_size(egui::vec2(300.0, 200.0))
                .build_ui_state(
                    move |ui, sizes: &mut Vec<(f32, bool)>| {
                        let mut used = 0.0;
                        let (fits, _) = fitted(ui, "t", (6.0, 30.0), Along::Height, |ui, size| {
                            used = size;
                            ui.label(egui::RichText::new(&text).size(size));
                        });
                        sizes.push((used, fits));
                    },
                    Vec::new(),
                );
            harness.run_steps(8);
            let &(last, fits) = harness.state().last().expect("drawn");
            assert!(fits, "{:?}", harness.state());
            if shrinks {
                assert!(last < 30.0 && last > 6.0, "{last}");
            } else {
                assert_eq!(last, 30.0);
            }
        }
    }
}
