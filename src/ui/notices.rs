//! What the user must see before anything else, at the top of the central area where they are
//! looking: settings that were refused (the run goes on with the ones it had), and settings that
//! were changed but not applied yet.

use egui::RichText;

use super::command::UiCommand;
use crate::i18n::{Key, Lang};
use crate::train::SessionError;

/// What the notices report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Notices<'a> {
    /// Saved settings that were not used at start, each already in the user's language.
    pub restored: &'a [String],
    /// Why the last Reset was refused.
    pub refused: Option<&'a SessionError>,
    /// Whether the setup differs from the run in progress.
    pub changed: bool,
}

/// Draws the notices (nothing when there are none).
pub fn notices_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    notices: Notices<'_>,
    commands: &mut Vec<UiCommand>,
) {
    let Notices {
        restored,
        refused,
        changed,
    } = notices;
    if !restored.is_empty() {
        let color = ui.visuals().warn_fg_color;
        egui::Frame::new()
            .fill(color.gamma_multiply(0.12))
            .inner_margin(6.0)
            .corner_radius(4.0)
            .show(ui, |ui| {
                for note in restored {
                    ui.label(RichText::new(note).color(color));
                }
                if ui.button(lang.tr(Key::RestoreDismiss)).clicked() {
                    commands.push(UiCommand::DismissRestoreNotes);
                }
            });
    }
    if let Some(error) = refused {
        let color = ui.visuals().error_fg_color;
        egui::Frame::new()
            .fill(color.gamma_multiply(0.12))
            .inner_margin(6.0)
            .corner_radius(4.0)
            .show(ui, |ui| {
                ui.label(RichText::new(lang.tr(Key::Settings)).strong().color(color));
                ui.label(RichText::new(error.text(lang)).color(color));
                ui.label(RichText::new(lang.tr(Key::SettingsKept)).small());
            });
    }
    if changed {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                RichText::new(lang.tr(Key::SettingsChanged)).color(ui.visuals().warn_fg_color),
            );
            if ui
                .button(lang.tr(Key::Reset))
                .on_hover_text(lang.tr(Key::ResetTip))
                .clicked()
            {
                commands.push(UiCommand::Reset);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::setting::SettingError;

    #[test]
    fn refused_settings_and_unapplied_changes_are_said_in_the_users_language() {
        let refused = SessionError::Setting(SettingError::BatchSize {
            value: 100_000,
            max: 65_536,
        });
        for (lang, title, text, changed) in [
            (
                Lang::En,
                "Invalid settings",
                "batch size 100000: choose between 1 and 65536",
                "Settings changed: press Reset (R) to apply them.",
            ),
            (
                Lang::Zh,
                "设置无效",
                "批大小 100000：请选择 1 到 65536 之间的值",
                "设置已更改：按“重置”（R 键）生效。",
            ),
        ] {
            let notices = Notices {
                restored: &[],
                refused: Some(&refused),
                changed: true,
            };
            let mut harness = crate::ui::testing::harness(
                |ui, commands: &mut Vec<UiCommand>| notices_ui(ui, lang, notices, commands),
                Vec::new(),
            );
            harness.run();
            for label in [title, text, changed] {
                assert!(harness.query_by_label(label).is_some(), "{lang:?}: {label}");
            }
            harness.get_by_label(lang.tr(Key::Reset)).click();
            harness.run();
            assert_eq!(harness.state(), &[UiCommand::Reset]);
        }
        // Nothing to say: nothing drawn.
        let harness = crate::ui::testing::harness(
            |ui, commands: &mut Vec<UiCommand>| {
                notices_ui(ui, Lang::En, Notices::default(), commands);
            },
            Vec::new(),
        );
        assert!(harness.query_by_label("Invalid settings").is_none());
        assert!(
            harness
                .query_by_label_contains("Settings changed")
                .is_none()
        );
    }

    #[test]
    fn notes_on_saved_settings_show_until_dismissed() {
        let restored = [
            "Saved setting not used: batch size (batch size 0: choose between 1 and 65536). \
             The default is used instead."
                .to_owned(),
        ];
        let mut harness = crate::ui::testing::harness(
            |ui, commands: &mut Vec<UiCommand>| {
                let notices = Notices {
                    restored: &restored,
                    ..Notices::default()
                };
                notices_ui(ui, Lang::En, notices, commands);
            },
            Vec::new(),
        );
        harness.run();
        assert!(harness.query_by_label(&restored[0]).is_some());
        harness.get_by_label("Dismiss").click();
        harness.run();
        assert_eq!(harness.state(), &[UiCommand::DismissRestoreNotes]);
    }
}
