//! The window's panels and what they share. A panel is a plain struct holding only its own view
//! state (zoom, chosen axes, textures) with a `ui` method that draws what it is given of the
//! app's state and returns what the user asked for as [`UiCommand`]s, which the app carries
//! out after drawing. No panel holds run state and none starts a thread.
//!
//! - [`command`]: the commands and the central area's views;
//! - [`labels`], [`fonts`]: names, colours and fonts shared by the panels;
//! - [`toolbar`], [`notices`], [`setup`], [`model_setup`], [`column`](mod@column), [`journey`], [`memory`], [`precision`],
//!   [`preview`], [`images`], [`open`], [`lesson`](mod@lesson), [`experiments`], [`serving`], [`history`], [`roofline`], [`ecosystem`]: the panels.

pub mod column;
pub mod command;
pub mod compare;
pub mod ecosystem;
pub mod energy;
pub mod experiments;
pub mod fitted_text;
pub mod fonts;
pub mod history;
pub mod images;
pub mod journey;
pub mod labels;
pub mod layer_list;
pub mod lesson;
pub mod levers;
pub mod memory;
pub mod mismatch;
pub mod model_setup;
pub mod notices;
pub mod op_kinds;
pub mod open;
pub mod plots;
pub mod precision;
pub mod presenter;
pub mod preview;
pub mod roofline;
pub mod serving;
pub mod serving_tokens;
pub mod setup;
pub mod speaker;
pub mod text_preview;
pub mod toolbar;
pub mod writing;

#[cfg(test)]
pub(crate) mod testing;

pub use command::{LessonCommand, Tab, UiCommand};

/// `add` in a top-down, left-aligned layout. `Ui::columns` lays its columns out justified, and a
/// justified label stretches each wrapped line to the full width: a Chinese line, with few
/// spaces to stretch, then shows wide gaps between its words.
pub fn left_aligned<R>(ui: &mut egui::Ui, add: impl FnOnce(&mut egui::Ui) -> R) -> R {
    ui.with_layout(egui::Layout::top_down(egui::Align::Min), add)
        .inner
}

#[cfg(test)]
mod tests {
    /// A label in one of `Ui::columns` is justified unless the column is left-aligned.
    #[test]
    fn a_left_aligned_column_does_not_justify_its_text() {
        let justified = |left: bool| {
            let mut result = None;
            let mut h = egui_kittest::Harness::builder()
                .with_size(egui::vec2(400.0, 200.0))
                .with_context_setup(super::fonts::install_style)
                .build_ui(|ui| {
                    ui.columns(2, |cols| {
                        let label = |ui: &mut egui::Ui| {
                            let text =
                                "与 GPU 轮流：只在自己的轮次内计时，因此这是 CPU 单独运行的速度。";
                            let (_, galley, _) = egui::Label::new(text).layout_in_ui(ui);
                            galley.job.justify
                        };
                        result = Some(if left {
                            super::left_aligned(&mut cols[0], label)
                        } else {
                            label(&mut cols[0])
                        });
                    });
                });
            h.run();
            drop(h);
            result.expect("drawn")
        };
        assert!(justified(false), "egui's columns justify");
        assert!(!justified(true));
    }
}
