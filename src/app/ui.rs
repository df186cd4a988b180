//! `ui()`: draws the window from the state — toolbar, setup, the notices and the central views —
//! and returns what the user asked for. It changes nothing but the panels' own view state.

use std::time::Duration;

use egui::RichText;

use super::state::AppState;
use super::tabs::{TabView, tab_ui};
use super::{BatchScopeApp, Panels};
use crate::i18n::{Key, Lang, LessonKey};
use crate::ui::notices::{Notices, notices_ui};
use crate::ui::setup::{DataView, SetupView};
use crate::ui::toolbar::{ToolbarState, toolbar_ui};
use crate::ui::{Tab, UiCommand};

impl BatchScopeApp {
    /// Draws one frame and returns the commands of the user's clicks.
    pub fn ui(&mut self, ui: &mut egui::Ui) -> Vec<UiCommand> {
        let mut commands = Vec::new();
        let ctx = ui.ctx().clone();
        let Self { state, panels, .. } = self;
        let lang = state.lang;
        // What the lesson's step points at is framed wherever it is drawn this frame.
        let watched = state.lesson.as_ref().and_then(|f| f.current().watch);
        crate::ui::lesson::set_highlight(&ctx, watched);
        crate::ui::plots::set_presenter(&ctx, state.presenter.on);
        egui::Panel::top("toolbar").show(ui, |ui| toolbar_panel_ui(ui, state, &mut commands));
        egui::Panel::bottom("status").show(ui, |ui| status_bar_ui(ui, state, &mut commands));
        // A presentation shows the lesson and the instruments, not the setup.
        if !state.presenter.on {
            egui::Panel::left("setup")
                .resizable(true)
                .default_size(270.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        setup_ui(ui, state, &mut panels.setup, &mut commands);
                    });
                });
        }
        lesson_panel_ui(ui, state, &mut commands);
        let view = TabView {
            state,
            session: self.session.as_deref(),
            lang,
        };
        egui::CentralPanel::default().show(ui, |ui| {
            central_ui(ui, &view, panels, &mut commands);
        });
        if let Some(chosen) = panels.opener.show(&ctx, lang) {
            commands.push(UiCommand::chosen(chosen));
        }
        if let Some(rect) = crate::ui::plots::take_plot_shot(&ctx) {
            commands.push(UiCommand::ExportPlotScreenshot(rect));
        }
        drop_overlay_ui(&ctx, lang);
        if state.presenter.on && state.presenter.blank {
            crate::ui::presenter::blank_ui(&ctx, lang);
        }
        if state.presenter.on && state.presenter.notes {
            speaker_notes_viewport(&ctx, state, &mut commands);
        }
        commands
    }
}

/// The toolbar: runs, sharing and keys, with the lessons menu and presenter's buttons.
fn toolbar_panel_ui(ui: &mut egui::Ui, state: &AppState, commands: &mut Vec<UiCommand>) {
    let lang = state.lang;
    let presenting = state.presenter.on;
    let notes_open = state.presenter.notes;
    let keys = if state.lesson.is_some() {
        lang.tr(LessonKey::LessonKeys)
    } else {
        lang.tr(Key::Keys)
    };
    let toolbar = ToolbarState {
        lang,
        keys,
        presenting,
    };
    toolbar_ui(
        ui,
        toolbar,
        &state.runs,
        state.sharing,
        commands,
        |ui, commands| {
            let (lessons, places) = (&state.lessons, &state.lesson_places);
            crate::ui::lesson::lessons_menu_ui(ui, lang, lessons, places, commands);
            if crate::ui::presenter::presenter_button_ui(ui, lang, presenting) {
                commands.push(UiCommand::SetPresenter(!presenting));
            }
            if presenting && crate::ui::presenter::notes_button_ui(ui, lang, notes_open) {
                commands.push(UiCommand::ToggleSpeakerNotes);
            }
        },
    );
}

/// The status bar: where the figures come from, the zoom keys, and the window's screenshot.
fn status_bar_ui(ui: &mut egui::Ui, state: &AppState, commands: &mut Vec<UiCommand>) {
    let lang = state.lang;
    ui.horizontal(|ui| {
        ui.label(RichText::new(lang.tr(Key::Measured)).small().weak());
        ui.separator();
        ui.label(RichText::new(lang.tr(LessonKey::ZoomHint)).small().weak());
        ui.separator();
        if ui
            .small_button(lang.tr(LessonKey::Screenshot))
            .on_hover_text(lang.tr(LessonKey::ScreenshotTip))
            .clicked()
        {
            commands.push(UiCommand::ExportScreenshot);
        }
        if let Some(note) = &state.screenshot_note {
            ui.label(RichText::new(note).small());
        }
    });
}

/// The setup panel: the settings being edited, and the data set's loading.
fn setup_ui(
    ui: &mut egui::Ui,
    state: &mut AppState,
    panel: &mut crate::ui::setup::SetupPanel,
    commands: &mut Vec<UiCommand>,
) {
    let lang = state.lang;
    let data_view = DataView {
        loaded: state.data.loaded.as_ref(),
        loading: state.data.loading.as_ref().map(|(n, p)| (n.text(lang), *p)),
        error: state.data.error.as_ref().map(|e| e.text(lang)),
    };
    let view = SetupView {
        config: &mut state.settings.config,
        enabled: &mut state.settings.enabled,
    };
    panel.ui(ui, lang, view, data_view, commands);
}

/// The lesson being followed, in a side panel (fitted to its width when presenting).
fn lesson_panel_ui(ui: &mut egui::Ui, state: &AppState, commands: &mut Vec<UiCommand>) {
    let Some(following) = &state.lesson else {
        return;
    };
    let (lang, presenting) = (state.lang, state.presenter.on);
    let context = crate::ui::lesson::LessonContext {
        change_made: following.current().try_settings().is_some_and(|set| {
            crate::lesson::probe::holds(&set, &state.settings.config, state.settings.enabled)
        }),
        tab: state.tab,
        body_size: crate::ui::presenter::BODY_SIZE[usize::from(presenting)],
        presenting,
    };
    if presenting {
        presented_lesson_ui(ui, lang, following, context, commands);
        return;
    }
    egui::Panel::right("lesson")
        .resizable(true)
        .default_size(340.0)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                crate::ui::lesson::lesson_ui(ui, lang, following, &context, commands);
            });
        });
}

/// The central area: the tabs, the notices under them, then the chosen tab.
fn central_ui(
    ui: &mut egui::Ui,
    view: &TabView,
    panels: &mut Panels,
    commands: &mut Vec<UiCommand>,
) {
    let (state, lang) = (view.state, view.lang);
    let restored: Vec<String> = state
        .restore_notes
        .iter()
        .map(|note| note.text(lang))
        .collect();
    let notices = Notices {
        restored: &restored,
        refused: state.settings.error.as_ref(),
        changed: state.settings.is_changed(),
    };
    // The tabs first: a banner that comes and goes must not move them under the pointer.
    tabs_ui(ui, lang, state.tab, commands);
    ui.separator();
    notices_ui(ui, lang, notices, commands);
    if let Some(error) = &state.lesson_error {
        ui.colored_label(ui.visuals().error_fg_color, error.text(lang));
    }
    tab_ui(ui, view, panels, commands);
}

/// The speaker's notes in a window of their own, with the clock since the presentation began.
fn speaker_notes_viewport(ctx: &egui::Context, state: &AppState, commands: &mut Vec<UiCommand>) {
    let lang = state.lang;
    let following = state.lesson.as_ref();
    let since = state
        .presenter
        .since
        .map(|t| t.elapsed())
        .unwrap_or_default();
    let closed = ctx.show_viewport_immediate(
        crate::ui::speaker::viewport_id(),
        crate::ui::speaker::viewport_builder(lang),
        |ui, _class| {
            egui::CentralPanel::default().show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    crate::ui::speaker::speaker_notes_ui(ui, lang, following, since);
                });
            });
            ui.ctx().input(|i| i.viewport().close_requested())
        },
    );
    if closed {
        commands.push(UiCommand::ToggleSpeakerNotes);
    }
    // The clock moves once a second.
    ctx.request_repaint_after(Duration::from_secs(1));
}

/// The lesson panel in presenter mode: wider, and with no scroll bar — its whole text is drawn
/// at the largest size at which it fits (a presenter with a clicker cannot scroll).
fn presented_lesson_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    following: &crate::lesson::Following,
    context: crate::ui::lesson::LessonContext,
    commands: &mut Vec<UiCommand>,
) {
    use crate::ui::fitted_text::{Along, fitted, scale_text};
    use crate::ui::presenter::{BODY_SIZE, MIN_BODY_SIZE};
    // A fixed width: the text is fitted to it, and a panel that followed the text's width
    // would make the two chase each other.
    let width = (ui.available_width() * 0.45).max(280.0);
    egui::Panel::right("lesson-presenting")
        .resizable(false)
        .exact_size(width)
        .show(ui, |ui| {
            crate::ui::lesson::set_lesson_area(ui.ctx(), ui.clip_rect());
            let base = ui.style().as_ref().clone();
            // What is drawn: a new step, answer, measurement or result starts from the largest.
            let key = (
                &following.lesson.id,
                following.step,
                lang,
                following.outcome.is_some(),
                following.measuring.is_some(),
                following.trying,
                following.tried.get(following.step).map(Option::is_some),
                following.chosen.get(following.step).copied().flatten(),
                context.tab,
                context.change_made,
            );
            let (_, drawn) = fitted(
                ui,
                key,
                (MIN_BODY_SIZE, BODY_SIZE[1]),
                Along::Height,
                |ui, size| {
                    scale_text(ui, &base, size / BODY_SIZE[1]);
                    let context = crate::ui::lesson::LessonContext {
                        body_size: size,
                        ..context
                    };
                    crate::ui::lesson::lesson_ui(ui, lang, following, &context, commands);
                },
            );
            crate::ui::lesson::set_lesson_content(ui.ctx(), drawn);
        });
}

/// The central area's views, as tabs.
fn tabs_ui(ui: &mut egui::Ui, lang: Lang, current: Tab, commands: &mut Vec<UiCommand>) {
    // Wrapped: a row of tabs wider than the panel widens the panel's layout, and every column,
    // label and plot below it would then run past the window's edge (presenter mode's scale).
    ui.horizontal_wrapped(|ui| {
        for (tab, key) in [
            (Tab::Training, Key::TabTraining),
            (Tab::Journey, Key::Journey),
            (Tab::Memory, Key::MemoryTab),
            (Tab::Precision, Key::PrecisionTab),
            (Tab::Experiments, Key::TabExperiments),
            (Tab::History, Key::TabHistory),
            (Tab::Simulator, Key::TabSimulator),
            (Tab::Data, Key::TabData),
        ] {
            if ui.selectable_label(current == tab, lang.tr(key)).clicked() {
                commands.push(UiCommand::ShowTab(tab));
            }
        }
    });
}

/// While files hover over the window, it says that dropping them opens them.
fn drop_overlay_ui(ctx: &egui::Context, lang: Lang) {
    if ctx.input(|i| i.raw.hovered_files.is_empty()) {
        return;
    }
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::unique("drop-overlay"),
    ));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(160));
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        lang.tr(Key::DropToOpen),
        egui::FontId::proportional(28.0),
        egui::Color32::WHITE,
    );
}
