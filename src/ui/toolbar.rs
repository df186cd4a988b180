//! The toolbar: the title, Run / Pause / Step / Reset, how the devices share the machine, the
//! language. The Run button says what
//! the devices are doing, so it cannot disagree with the columns: Pause while any device trains,
//! "Pausing…" until every device has stopped after a pause, Run otherwise.

use egui::RichText;

use super::command::UiCommand;
use super::labels::device_title;
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::train::{DeviceRun, RunState, Sharing};

/// What the run button offers, from the devices' states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunButton {
    /// Nothing trains: Run.
    Run,
    /// A device trains: Pause.
    Pause,
    /// A pause was asked for and this device has not stopped yet.
    Pausing(Device),
}

impl RunButton {
    /// The button for the devices `runs`.
    pub fn of(runs: &[DeviceRun; 2]) -> Self {
        // The GPU first: its steps are the ones that can keep a pause waiting.
        let pausing = [Device::Gpu, Device::Cpu]
            .into_iter()
            .find(|&d| runs[d as usize].enabled && runs[d as usize].run_state == RunState::Pausing);
        if let Some(device) = pausing {
            RunButton::Pausing(device)
        } else if runs.iter().any(DeviceRun::is_running) {
            RunButton::Pause
        } else {
            RunButton::Run
        }
    }
}

/// The name and the tooltip of a way of sharing the machine.
pub fn sharing_texts(sharing: Sharing) -> (Key, Key) {
    match sharing {
        Sharing::TakingTurns => (Key::SharingTurns, Key::SharingTurnsTip),
        Sharing::Together => (Key::SharingTogether, Key::SharingTogetherTip),
        Sharing::SpareCore => (Key::SharingSpare, Key::SharingSpareTip),
    }
}

/// What the toolbar is drawn for besides the runs.
#[derive(Clone, Copy, Debug)]
pub struct ToolbarState<'a> {
    /// The UI's language.
    pub lang: Lang,
    /// What the keys do, in `lang`.
    pub keys: &'a str,
    /// Presenter mode: one line, its text as large as fits.
    pub presenting: bool,
}

/// Draws the toolbar; `lead` draws what comes first in the buttons' row (the Lessons menu),
/// `keys` says what the keys do (a lesson's keys while one is open). In presenter mode it is one
/// line, its text as large as fits: the lesson's buttons, Run, Step, Reset and the language.
pub fn toolbar_ui(
    ui: &mut egui::Ui,
    state: ToolbarState<'_>,
    runs: &[DeviceRun; 2],
    sharing: Sharing,
    commands: &mut Vec<UiCommand>,
    lead: impl FnOnce(&mut egui::Ui, &mut Vec<UiCommand>),
) {
    let ToolbarState {
        lang,
        keys,
        presenting,
    } = state;
    if presenting {
        use super::fitted_text::{Along, fitted, scale_text};
        let base = ui.style().as_ref().clone();
        let body = base
            .text_styles
            .get(&egui::TextStyle::Body)
            .map_or(15.0, |f| f.size);
        let key = ("toolbar", lang, RunButton::of(runs));
        fitted(ui, key, (8.0, body), Along::Width, |ui, size| {
            scale_text(ui, &base, size / body);
            ui.horizontal(|ui| {
                lead(ui, commands);
                ui.separator();
                run_buttons_ui(ui, lang, runs, commands);
                ui.separator();
                // One button for the other language: a switch that cannot be split over lines.
                let other = match lang {
                    Lang::En => Lang::Zh,
                    Lang::Zh => Lang::En,
                };
                if ui
                    .button(other.native_name())
                    .on_hover_text(lang.tr(Key::Language))
                    .clicked()
                {
                    commands.push(UiCommand::SetLanguage(other));
                }
            });
        });
        return;
    }
    ui.horizontal(|ui| {
        ui.heading(RichText::new(lang.tr(Key::AppTitle)).strong());
        ui.label(RichText::new(lang.tr(Key::Tagline)).weak());
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let id = egui::Id::unique(ABOUT_OPEN);
            if ui
                .button(lang.tr(Key::About))
                .on_hover_text(lang.tr(Key::AboutTip))
                .clicked()
            {
                ui.ctx().data_mut(|d| d.insert_temp(id, true));
            }
        });
    });
    about_window(ui.ctx(), lang);
    ui.horizontal_wrapped(|ui| {
        lead(ui, commands);
        ui.separator();
        run_buttons_ui(ui, lang, runs, commands);
        ui.separator();
        ui.label(lang.tr(Key::SharingLabel))
            .on_hover_text(lang.tr(Key::SharingTip));
        let (name, _) = sharing_texts(sharing);
        egui::ComboBox::from_id_salt("sharing")
            .selected_text(lang.tr(name))
            .show_ui(ui, |ui| {
                for choice in Sharing::ALL {
                    let (name, tip) = sharing_texts(choice);
                    if ui
                        .selectable_label(choice == sharing, lang.tr(name))
                        .on_hover_text(lang.tr(tip))
                        .clicked()
                        && choice != sharing
                    {
                        commands.push(UiCommand::SetSharing(choice));
                    }
                }
            })
            .response
            .on_hover_text(lang.tr(sharing_texts(sharing).1));
        ui.separator();
        // The language switch as one piece: its label and both languages never split.
        ui.horizontal(|ui| {
            ui.label(lang.tr(Key::Language));
            for l in Lang::ALL {
                if ui.selectable_label(lang == l, l.native_name()).clicked() {
                    commands.push(UiCommand::SetLanguage(l));
                }
            }
        });
        ui.separator();
        ui.label(RichText::new(keys).weak());
    });
}

/// Where egui keeps whether the About box is open.
const ABOUT_OPEN: &str = "about open";

/// The About box, where it is open: this build's version, commit, day, target and GPU APIs.
fn about_window(ctx: &egui::Context, lang: Lang) {
    let id = egui::Id::unique(ABOUT_OPEN);
    let mut open = ctx.data(|d| d.get_temp::<bool>(id)).unwrap_or(false);
    if !open {
        return;
    }
    let info = crate::build_info::this_build();
    egui::Window::new(lang.tr(Key::AboutTitle))
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            ui.label(lang.tr(Key::Tagline));
            ui.add_space(6.0);
            egui::Grid::new("about").num_columns(2).show(ui, |ui| {
                let backends = info.backends.join(", ");
                let rows = [
                    (Key::AboutVersion, info.version),
                    (Key::AboutCommit, info.commit),
                    (Key::AboutBuilt, info.date),
                    (Key::AboutTarget, info.target),
                    (Key::AboutBackends, backends.as_str()),
                    (Key::AboutLicence, env!("CARGO_PKG_LICENSE")),
                ];
                for (key, value) in rows {
                    let name = ui.label(lang.tr(key));
                    if key == Key::AboutBackends {
                        name.on_hover_text(lang.tr(Key::AboutBackendsTip));
                    }
                    ui.label(RichText::new(value).monospace());
                    ui.end_row();
                }
            });
        });
    ctx.data_mut(|d| d.insert_temp(id, open));
}

/// Run (or Pause, or "Pausing…"), Step and Reset.
fn run_buttons_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    runs: &[DeviceRun; 2],
    commands: &mut Vec<UiCommand>,
) {
    let button = match RunButton::of(runs) {
        RunButton::Pausing(device) => {
            let text = lang.fmt(Key::PausingWait, &[("device", &device_title(lang, device))]);
            ui.add_enabled(false, egui::Button::new(text))
                .on_disabled_hover_text(lang.tr(Key::PausingTip))
        }
        RunButton::Pause => {
            let button = ui
                .button(lang.tr(Key::Pause))
                .on_hover_text(lang.tr(Key::RunTip));
            if button.clicked() {
                commands.push(UiCommand::Pause);
            }
            button
        }
        RunButton::Run => {
            let button = ui
                .button(lang.tr(Key::Run))
                .on_hover_text(lang.tr(Key::RunTip));
            if button.clicked() {
                commands.push(UiCommand::Run);
            }
            button
        }
    };
    super::lesson::highlight(ui, crate::lesson::Widget::RunButton, button.rect);
    if ui
        .button(lang.tr(Key::Step))
        .on_hover_text(lang.tr(Key::StepTip))
        .clicked()
    {
        commands.push(UiCommand::Step);
    }
    if ui
        .button(lang.tr(Key::Reset))
        .on_hover_text(lang.tr(Key::ResetTip))
        .clicked()
    {
        commands.push(UiCommand::Reset);
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;

    fn runs(cpu: RunState, gpu: RunState) -> [DeviceRun; 2] {
        let mut runs = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
        runs[0].run_state = cpu;
        runs[1].run_state = gpu;
        runs
    }

    /// Draws the toolbar for `runs` in `lang` and returns the commands of a click on `label`.
    fn click(runs: &[DeviceRun; 2], lang: Lang, label: &str) -> Vec<UiCommand> {
        let mut commands = Vec::new();
        let mut harness = crate::ui::testing::harness(
            |ui, commands: &mut Vec<UiCommand>| {
                toolbar_ui(
                    ui,
                    ToolbarState {
                        lang,
                        keys: "",
                        presenting: false,
                    },
                    runs,
                    Sharing::default(),
                    commands,
                    |_, _| {},
                );
            },
            Vec::new(),
        );
        harness.get_by_label(label).click();
        harness.run();
        commands.append(harness.state_mut());
        commands
    }

    #[test]
    fn the_about_box_names_this_build_in_both_languages() {
        let info = crate::build_info::this_build();
        for (lang, button, title, backends) in [
            (
                Lang::En,
                "About",
                "About BatchScope",
                "GPU APIs in this build",
            ),
            (
                Lang::Zh,
                "关于",
                "关于 BatchScope 批次透视",
                "本版本包含的 GPU 接口",
            ),
        ] {
            let runs = runs(RunState::Paused, RunState::Paused);
            let mut harness = crate::ui::testing::harness(
                |ui, commands: &mut Vec<UiCommand>| {
                    let state = ToolbarState {
                        lang,
                        keys: "",
                        presenting: false,
                    };
                    toolbar_ui(ui, state, &runs, Sharing::default(), commands, |_, _| {});
                },
                Vec::new(),
            );
            assert!(harness.query_by_label(title).is_none(), "closed at first");
            harness.get_by_label(button).click();
            harness.run();
            harness.get_by_label(title);
            harness.get_by_label(backends);
            harness.get_by_label(info.commit);
            harness.get_by_label(info.target);
            harness.get_by_label(&info.backends.join(", "));
            // Opening it is no command to the app.
            assert!(harness.state().is_empty());
        }
    }

    #[test]
    fn the_run_button_follows_the_devices() {
        use RunState::{Paused, Pausing, Running};
        assert_eq!(
            click(&runs(Paused, Paused), Lang::En, "Run"),
            [UiCommand::Run]
        );
        assert_eq!(
            click(&runs(Running, Paused), Lang::En, "Pause"),
            [UiCommand::Pause]
        );
        assert_eq!(
            click(&runs(Paused, Running), Lang::Zh, "暂停"),
            [UiCommand::Pause]
        );
        assert_eq!(
            click(&runs(Paused, Paused), Lang::En, "Reset"),
            [UiCommand::Reset]
        );
        // A disabled device does not count.
        let mut off = runs(Paused, Running);
        off[1].enabled = false;
        assert_eq!(RunButton::of(&off), RunButton::Run);
        assert_eq!(
            RunButton::of(&runs(Pausing, Running)),
            RunButton::Pausing(Device::Cpu)
        );
        assert_eq!(
            RunButton::of(&runs(Pausing, Pausing)),
            RunButton::Pausing(Device::Gpu)
        );
    }

    #[test]
    fn while_the_gpu_finishes_its_step_the_button_says_pausing_and_takes_no_click() {
        let runs = runs(RunState::Paused, RunState::Pausing);
        let mut harness = crate::ui::testing::harness(
            |ui, commands: &mut Vec<UiCommand>| {
                toolbar_ui(
                    ui,
                    ToolbarState {
                        lang: Lang::En,
                        keys: "",
                        presenting: false,
                    },
                    &runs,
                    Sharing::default(),
                    commands,
                    |_, _| {},
                );
            },
            Vec::new(),
        );
        harness.run();
        let button = harness.get_by_label("Pausing… (waiting for the GPU's step)");
        button.click();
        harness.run();
        assert!(harness.state().is_empty(), "{:?}", harness.state());
        assert!(harness.query_by_label("Run").is_none());
        assert!(harness.query_by_label("Pause").is_none());
    }
}
