//! What the panels' tests share: a harness with the app's fonts, drawing a panel from synthetic
//! state (no worker threads, no waiting).
#![cfg(test)]

use egui_kittest::Harness;

use super::fonts::install_style;

/// A harness that draws `draw` with `state`, with the app's fonts (both languages render).
pub fn harness<'a, S>(draw: impl FnMut(&mut egui::Ui, &mut S) + 'a, state: S) -> Harness<'a, S> {
    Harness::builder()
        .with_size(egui::vec2(900.0, 1600.0))
        .with_context_setup(install_style)
        .build_ui_state(draw, state)
}
