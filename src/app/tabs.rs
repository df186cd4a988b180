//! The central area's views, one function per tab, each drawn from the state into its own
//! scroll area. `ui()` chooses the tab; nothing here changes the state.

use std::time::Duration;

use egui::RichText;

use super::Panels;
use super::state::AppState;
use crate::data::Dataset;
use crate::device::Device;
use crate::i18n::Lang;
use crate::lesson::Widget;
use crate::train::{DeviceRun, DeviceStatus, Session};
use crate::ui::column::ColumnPanel;
use crate::ui::lesson::framed;
use crate::ui::{Tab, UiCommand};

/// What every tab reads: the state, the run's session and the language.
pub(super) struct TabView<'a> {
    pub state: &'a AppState,
    pub session: Option<&'a Session>,
    pub lang: Lang,
}

impl TabView<'_> {
    fn data(&self) -> Option<&Dataset> {
        self.session.map(|s| &*s.data)
    }
}

/// Draws the chosen tab, and asks for the next frame soon where what it shows moves.
pub(super) fn tab_ui(
    ui: &mut egui::Ui,
    view: &TabView,
    panels: &mut Panels,
    commands: &mut Vec<UiCommand>,
) {
    let state = view.state;
    let running = state.is_running();
    let repaint_after = match state.tab {
        Tab::Training => {
            training_ui(ui, view, panels);
            None
        }
        Tab::Journey => {
            scrolled(ui, "journey", |ui| journey_ui(ui, view, panels, commands));
            // The timeline follows the run: draw again when new steps come.
            running.then_some(100)
        }
        Tab::Memory => {
            scrolled(ui, "memory", |ui| {
                let config = &state.settings.config;
                let (lang, data) = (view.lang, view.data());
                panels
                    .memory
                    .ui(ui, lang, &state.runs, config, data, commands);
            });
            running.then_some(200)
        }
        Tab::Experiments => {
            scrolled(ui, "experiments", |ui| {
                experiments_ui(ui, view, panels, commands);
            });
            None
        }
        Tab::Simulator => {
            scrolled(ui, "simulator", |ui| {
                simulator_ui(ui, view, panels, commands);
            });
            None
        }
        Tab::History => {
            scrolled(ui, "history", |ui| {
                panels.history.ui(ui, view.lang, &state.history, commands);
            });
            None
        }
        Tab::Precision => {
            scrolled(ui, "precision", |ui| {
                let (config, data) = (&state.settings.config, view.data());
                let comparison = state.comparison.as_ref();
                let runs = &state.runs;
                panels
                    .precision
                    .ui(ui, view.lang, runs, comparison, config, data, commands);
            });
            let comparing = state.comparison.as_ref().is_some_and(|c| c.running);
            (running || comparing).then_some(200)
        }
        Tab::Data => {
            scrolled(ui, "preview", |ui| {
                panels.preview.ui(
                    ui,
                    view.lang,
                    state.data.loaded.as_ref(),
                    &state.settings.config,
                    &state.settings.applied.source,
                    commands,
                );
            });
            None
        }
    };
    if let Some(ms) = repaint_after {
        ui.ctx().request_repaint_after(Duration::from_millis(ms));
    }
}

/// A tab's content in a vertical scroll area of its own (`id` keeps each tab's position).
fn scrolled(ui: &mut egui::Ui, id: &str, add: impl FnOnce(&mut egui::Ui)) {
    egui::ScrollArea::vertical().id_salt(id).show(ui, add);
}

/// Training: both losses on one axis, then a column per device, side by side where they fit.
fn training_ui(ui: &mut egui::Ui, view: &TabView, panels: &mut Panels) {
    let (state, lang) = (view.state, view.lang);
    let what_if = &mut panels.roofline.what_if;
    let step = view
        .session
        .map(|s| (&s.config, s.config.model_spec(&s.data)));
    // One column's figures; the GPU's with the simulator's what-if above.
    let mut column_ui = |ui: &mut egui::Ui, panel: &mut ColumnPanel, run: &DeviceRun| {
        if run.device == Device::Gpu
            && let Some((config, spec)) = &step
        {
            crate::ui::roofline::what_if_ui(ui, lang, &state.profiles, what_if, config, spec);
        }
        let widget = match run.device {
            Device::Cpu => Widget::CpuColumn,
            Device::Gpu => Widget::GpuColumn,
        };
        let lesson = state.lesson.as_ref().and_then(|f| f.probe_rate(run.device));
        framed(ui, widget, |ui| {
            panel.ui(ui, lang, run, view.data(), lesson);
        });
    };
    crate::ui::compare::loss_compared_ui(ui, lang, &state.runs);
    let columns = panels.columns.iter_mut().zip(&state.runs);
    if ui.available_width() < crate::ui::presenter::STACK_BELOW {
        // Too narrow for two columns side by side: the CPU's above the GPU's.
        scrolled(ui, "columns-stacked", |ui| {
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

/// The batch's journey: the timeline, the kinds of operation a step runs, the mismatch probe.
fn journey_ui(
    ui: &mut egui::Ui,
    view: &TabView,
    panels: &mut Panels,
    commands: &mut Vec<UiCommand>,
) {
    let (state, lang) = (view.state, view.lang);
    // Each device's step (the GPU updates a layer's weights and biases in one kernel).
    let ops = view.session.map(|s| {
        let c = &s.config;
        let spec = c.model_spec(&s.data);
        Device::ALL.map(|device| {
            let rule = c.recipe();
            crate::sim::cost::step_ops_with(&spec, c.batch, rule, device, c.levers())
        })
    });
    if let Some(message) = &state.trace_export {
        ui.label(RichText::new(message).weak());
    }
    panels.journey.ui(ui, lang, &state.runs, commands);
    ui.separator();
    framed(ui, Widget::OpKinds, |ui| {
        crate::ui::op_kinds::op_kinds_ui(ui, lang, &state.runs, ops.as_ref());
    });
    ui.separator();
    framed(ui, Widget::Mismatch, |ui| {
        crate::ui::mismatch::mismatch_ui(ui, lang, &state.mismatch, commands);
    });
}

/// Experiments: the sweeps, then serving; neither starts while the other runs.
fn experiments_ui(
    ui: &mut egui::Ui,
    view: &TabView,
    panels: &mut Panels,
    commands: &mut Vec<UiCommand>,
) {
    let (state, lang) = (view.state, view.lang);
    let session_exists = view.session.is_some();
    let sweeping = state.sweep.as_ref().is_some_and(|s| !s.ended);
    let serving = state.serving.as_ref().is_some_and(|s| !s.ended);
    let experiments = crate::ui::experiments::ExperimentsView {
        results: state.sweep.as_ref(),
        can_run: session_exists && !serving,
        exported: state.sweep_export.as_deref(),
        profiles: &state.profiles,
        chosen: state.sweep_profile.as_deref(),
        simulated: state.sweep_simulated.as_ref(),
    };
    panels.experiments.ui(ui, lang, experiments, commands);
    ui.separator();
    framed(ui, Widget::Serving, |ui| {
        let can_serve = session_exists && !sweeping;
        crate::ui::serving::serving_ui(ui, lang, state.serving.as_ref(), can_serve, commands);
    });
}

/// The simulator: this run's step on the profiles' GPUs, beside what was measured.
fn simulator_ui(
    ui: &mut egui::Ui,
    view: &TabView,
    panels: &mut Panels,
    commands: &mut Vec<UiCommand>,
) {
    let state = view.state;
    let Some(session) = view.session else {
        return;
    };
    let spec = session.config.model_spec(&session.data);
    let measured = |i: usize| state.runs[i].last_log.as_ref().map(|l| l.step_time_ms);
    let roofline = crate::ui::roofline::RooflineView {
        config: &session.config,
        spec: &spec,
        measured_ms: [measured(0), measured(1)],
        calibration: state.calibration.as_ref(),
        eval_rows: crate::train::eval_rows(&session.data),
        stacks: &state.stacks,
        adapter: match &state.runs[1].status {
            DeviceStatus::Ready { adapter, .. } => adapter.as_ref(),
            _ => None,
        },
        kernels: [
            state.runs[0].kernels.as_ref(),
            state.runs[1].kernels.as_ref(),
        ],
    };
    let profiles = &state.profiles;
    panels
        .roofline
        .ui(ui, view.lang, profiles, &roofline, commands);
}
