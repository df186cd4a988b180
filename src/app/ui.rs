//! `ui()`: draws the window from the state — toolbar, setup, the notices and the central views —
//! and returns what the user asked for. It changes nothing but the panels' own view state.

use std::time::Duration;

use egui::RichText;

use super::BatchScopeApp;
use crate::i18n::{Key, Lang};
use crate::ui::column::ColumnPanel;
use crate::ui::notices::{Notices, notices_ui};
use crate::ui::setup::{DataView, SetupView};
use crate::ui::toolbar::toolbar_ui;
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
        egui::Panel::top("toolbar").show(ui, |ui| {
            let lessons = (&state.lessons, &state.lesson_places);
            let presenting = state.presenter.on;
            let notes_open = state.presenter.notes;
            let keys = if state.lesson.is_some() {
                lang.tr(crate::i18n::LessonKey::LessonKeys)
            } else {
                lang.tr(Key::Keys)
            };
            toolbar_ui(
                ui,
                (lang, keys, presenting),
                &state.runs,
                state.sharing,
                &mut commands,
                |ui, commands| {
                    crate::ui::lesson::lessons_menu_ui(ui, lang, lessons.0, lessons.1, commands);
                    if crate::ui::presenter::presenter_button_ui(ui, lang, presenting) {
                        commands.push(UiCommand::SetPresenter(!presenting));
                    }
                    if presenting && crate::ui::presenter::notes_button_ui(ui, lang, notes_open) {
                        commands.push(UiCommand::ToggleSpeakerNotes);
                    }
                },
            );
        });
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(RichText::new(lang.tr(Key::Measured)).small().weak());
                ui.separator();
                ui.label(
                    RichText::new(lang.tr(crate::i18n::LessonKey::ZoomHint))
                        .small()
                        .weak(),
                );
                ui.separator();
                if ui
                    .small_button(lang.tr(crate::i18n::LessonKey::Screenshot))
                    .on_hover_text(lang.tr(crate::i18n::LessonKey::ScreenshotTip))
                    .clicked()
                {
                    commands.push(UiCommand::ExportScreenshot);
                }
                if let Some(note) = &state.screenshot_note {
                    ui.label(RichText::new(note).small());
                }
            });
        });
        let data_view = DataView {
            loaded: state.data.loaded.as_ref(),
            loading: state.data.loading.as_ref().map(|(n, p)| (n.text(lang), *p)),
            error: state.data.error.as_ref().map(|e| e.text(lang)),
        };
        let presenting = state.presenter.on;
        // A presentation shows the lesson and the instruments, not the setup.
        if !presenting {
            egui::Panel::left("setup")
                .resizable(true)
                .default_size(270.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        let view = SetupView {
                            config: &mut state.settings.config,
                            enabled: &mut state.settings.enabled,
                        };
                        panels.setup.ui(ui, lang, view, data_view, &mut commands);
                    });
                });
        }
        if let Some(following) = &state.lesson {
            let context = crate::ui::lesson::LessonContext {
                change_made: following.current().try_settings().is_some_and(|set| {
                    crate::lesson::probe::holds(
                        &set,
                        &state.settings.config,
                        state.settings.enabled,
                    )
                }),
                tab: state.tab,
                body_size: crate::ui::presenter::BODY_SIZE[usize::from(presenting)],
                presenting,
            };
            if presenting {
                presented_lesson_ui(ui, lang, following, context, &mut commands);
            } else {
                egui::Panel::right("lesson")
                    .resizable(true)
                    .default_size(340.0)
                    .show(ui, |ui| {
                        egui::ScrollArea::vertical().show(ui, |ui| {
                            crate::ui::lesson::lesson_ui(
                                ui,
                                lang,
                                following,
                                &context,
                                &mut commands,
                            );
                        });
                    });
            }
        }
        let data = self
            .session
            .as_ref()
            .map(|s| std::sync::Arc::clone(&s.data));
        let running = state.is_running();
        let session_exists = self.session.is_some();
        let restored: Vec<String> = state
            .restore_notes
            .iter()
            .map(|note| note.text(lang))
            .collect();
        egui::CentralPanel::default().show(ui, |ui| {
            let notices = Notices {
                restored: &restored,
                refused: state.settings.error.as_ref(),
                changed: state.settings.is_changed(),
            };
            // The tabs first: a banner that comes and goes must not move them under the pointer.
            tabs_ui(ui, lang, state.tab, &mut commands);
            ui.separator();
            notices_ui(ui, lang, notices, &mut commands);
            if let Some(error) = &state.lesson_error {
                ui.colored_label(ui.visuals().error_fg_color, error.text(lang));
            }
            match state.tab {
                Tab::Training => {
                    let what_if = &mut panels.roofline.what_if;
                    let step = self
                        .session
                        .as_ref()
                        .map(|s| (&s.config, s.config.model_spec(&s.data)));
                    // One column's figures; the GPU's with the simulator's what-if above.
                    let mut column_ui = |ui: &mut egui::Ui, panel: &mut ColumnPanel, run| {
                        let run: &crate::train::DeviceRun = run;
                        if run.device == crate::device::Device::Gpu
                            && let Some((config, spec)) = &step
                        {
                            crate::ui::roofline::what_if_ui(
                                ui,
                                lang,
                                &state.profiles,
                                what_if,
                                (config, spec),
                            );
                        }
                        let widget = match run.device {
                            crate::device::Device::Cpu => crate::lesson::Widget::CpuColumn,
                            crate::device::Device::Gpu => crate::lesson::Widget::GpuColumn,
                        };
                        let lesson = state.lesson.as_ref().and_then(|f| f.probe_rate(run.device));
                        crate::ui::lesson::framed(ui, widget, |ui| {
                            panel.ui(ui, lang, run, data.as_deref(), lesson);
                        });
                    };
                    crate::ui::compare::loss_compared_ui(ui, lang, &state.runs);
                    let columns = panels.columns.iter_mut().zip(&state.runs);
                    if ui.available_width() < crate::ui::presenter::STACK_BELOW {
                        // Too narrow for two columns side by side: the CPU's above the GPU's.
                        egui::ScrollArea::vertical()
                            .id_salt("columns-stacked")
                            .show(ui, |ui| {
                                for (panel, run) in columns {
                                    column_ui(ui, panel, run);
                                    ui.separator();
                                }
                            });
                    } else {
                        ui.columns(2, |cols| {
                            for ((panel, run), ui) in columns.zip(cols.iter_mut()) {
                                crate::ui::left_aligned(ui, |ui| {
                                    egui::ScrollArea::vertical()
                                        .id_salt(("column", run.device))
                                        .show(ui, |ui| column_ui(ui, panel, run));
                                });
                            }
                        });
                    }
                }
                Tab::Journey => {
                    // Each device's step (the GPU updates a layer's weights and biases in one kernel).
                    let ops = self.session.as_ref().map(|s| {
                        let c = &s.config;
                        let spec = c.model_spec(&s.data);
                        crate::device::Device::ALL.map(|device| {
                            let rule = (c.optimizer, c.precision);
                            crate::sim::cost::step_ops(&spec, c.batch, rule, device)
                        })
                    });
                    egui::ScrollArea::vertical()
                        .id_salt("journey")
                        .show(ui, |ui| {
                            if let Some(message) = &state.trace_export {
                                ui.label(RichText::new(message).weak());
                            }
                            panels.journey.ui(ui, lang, &state.runs, &mut commands);
                            ui.separator();
                            crate::ui::lesson::framed(ui, crate::lesson::Widget::OpKinds, |ui| {
                                crate::ui::op_kinds::op_kinds_ui(
                                    ui,
                                    lang,
                                    &state.runs,
                                    ops.as_ref(),
                                );
                            });
                            ui.separator();
                            crate::ui::lesson::framed(ui, crate::lesson::Widget::Mismatch, |ui| {
                                crate::ui::mismatch::mismatch_ui(
                                    ui,
                                    lang,
                                    &state.mismatch,
                                    &mut commands,
                                );
                            });
                        });
                    // The timeline follows the run: draw again when new steps come.
                    if running {
                        ctx.request_repaint_after(Duration::from_millis(100));
                    }
                }
                Tab::Memory => {
                    egui::ScrollArea::vertical()
                        .id_salt("memory")
                        .show(ui, |ui| {
                            let config = &state.settings.config;
                            let runs = &state.runs;
                            panels.memory.ui(
                                ui,
                                lang,
                                runs,
                                config,
                                data.as_deref(),
                                &mut commands,
                            );
                        });
                    if running {
                        ctx.request_repaint_after(Duration::from_millis(200));
                    }
                }
                Tab::Experiments => {
                    egui::ScrollArea::vertical()
                        .id_salt("experiments")
                        .show(ui, |ui| {
                            let sweeping = state.sweep.as_ref().is_some_and(|s| !s.ended);
                            let serving = state.serving.as_ref().is_some_and(|s| !s.ended);
                            let view = crate::ui::experiments::ExperimentsView {
                                results: state.sweep.as_ref(),
                                can_run: session_exists && !serving,
                                exported: state.sweep_export.as_deref(),
                                profiles: &state.profiles,
                                chosen: state.sweep_profile.as_deref(),
                                simulated: state.sweep_simulated.as_ref(),
                            };
                            panels.experiments.ui(ui, lang, view, &mut commands);
                            ui.separator();
                            crate::ui::lesson::framed(ui, crate::lesson::Widget::Serving, |ui| {
                                crate::ui::serving::serving_ui(
                                    ui,
                                    lang,
                                    state.serving.as_ref(),
                                    session_exists && !sweeping,
                                    &mut commands,
                                );
                            });
                        });
                }
                Tab::Simulator => {
                    egui::ScrollArea::vertical()
                        .id_salt("simulator")
                        .show(ui, |ui| {
                            let Some(session) = &self.session else {
                                return;
                            };
                            let spec = session.config.model_spec(&session.data);
                            let measured =
                                |i: usize| state.runs[i].last_log.as_ref().map(|l| l.step_time_ms);
                            let view = crate::ui::roofline::RooflineView {
                                config: &session.config,
                                spec: &spec,
                                measured_ms: [measured(0), measured(1)],
                                calibration: state.calibration.as_ref(),
                                eval_rows: crate::train::eval_rows(&session.data),
                                stacks: &state.stacks,
                                adapter: match &state.runs[1].status {
                                    crate::train::DeviceStatus::Ready { adapter, .. } => {
                                        adapter.as_ref()
                                    }
                                    _ => None,
                                },
                                kernels: [
                                    state.runs[0].kernels.as_ref(),
                                    state.runs[1].kernels.as_ref(),
                                ],
                            };
                            panels
                                .roofline
                                .ui(ui, lang, &state.profiles, &view, &mut commands);
                        });
                }
                Tab::History => {
                    egui::ScrollArea::vertical()
                        .id_salt("history")
                        .show(ui, |ui| {
                            panels.history.ui(ui, lang, &state.history, &mut commands);
                        });
                }
                Tab::Precision => {
                    egui::ScrollArea::vertical()
                        .id_salt("precision")
                        .show(ui, |ui| {
                            panels.precision.ui(
                                ui,
                                lang,
                                &state.runs,
                                state.comparison.as_ref(),
                                (&state.settings.config, data.as_deref()),
                                &mut commands,
                            );
                        });
                    let comparing = state.comparison.as_ref().is_some_and(|c| c.running);
                    if running || comparing {
                        ctx.request_repaint_after(Duration::from_millis(200));
                    }
                }
                Tab::Data => {
                    egui::ScrollArea::vertical()
                        .id_salt("preview")
                        .show(ui, |ui| {
                            panels.preview.ui(
                                ui,
                                lang,
                                state.data.loaded.as_ref(),
                                &state.settings.config,
                                &state.settings.applied.source,
                                &mut commands,
                            );
                        });
                }
            }
        });
        if let Some(chosen) = panels.opener.show(&ctx) {
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
            ctx.request_repaint_after(std::time::Duration::from_secs(1));
        }
        commands
    }
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
    use crate::ui::fit::{Along, fitted, scale_text};
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
