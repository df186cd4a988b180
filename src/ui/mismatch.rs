//! The device-mismatch lesson on the journey tab (the article's third section): one real op
//! with the model on the GPU and the batch on the CPU, the backend's typed error it returns, and
//! the copy that fixes it. What is shown comes from running it (see `train::mismatch`).

use egui::RichText;

use super::command::UiCommand;
use super::labels::device_title;
use crate::backend::BackendError;
use crate::i18n::{Key, Lang};
use crate::train::mismatch::Mismatch;

/// Where the lesson stands.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum MismatchView {
    /// Not run yet.
    #[default]
    NotRun,
    /// Opening the GPU and running the op.
    Running,
    /// Run: the error and the fix.
    Done(Mismatch),
    /// No GPU to run it on, and why.
    Unavailable(crate::i18n::Said),
}

/// Draws the lesson: its text, the button, and what the run found.
pub fn mismatch_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    view: &MismatchView,
    commands: &mut Vec<UiCommand>,
) {
    ui.label(
        RichText::new(lang.tr(Key::MismatchTitle))
            .strong()
            .size(18.0),
    );
    ui.label(lang.tr(Key::MismatchIntro));
    let running = *view == MismatchView::Running;
    if ui
        .add_enabled(!running, egui::Button::new(lang.tr(Key::MismatchRun)))
        .on_hover_text(lang.tr(Key::MismatchRunTip))
        .clicked()
    {
        commands.push(UiCommand::DemonstrateMismatch);
    }
    match view {
        MismatchView::NotRun => {}
        MismatchView::Running => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(lang.tr(Key::MismatchRunning));
            });
        }
        MismatchView::Unavailable(why) => {
            ui.label(lang.fmt(Key::MismatchNoGpu, &[("why", &why.text(lang))]));
        }
        MismatchView::Done(m) => done_ui(ui, lang, m),
    }
}

fn done_ui(ui: &mut egui::Ui, lang: Lang, m: &Mismatch) {
    ui.label(lang.tr(Key::MismatchError));
    // Verbatim, as a developer would meet it in a log: the string is the backend's.
    ui.label(
        RichText::new(m.error.to_string())
            .monospace()
            .color(ui.visuals().error_fg_color),
    );
    if let BackendError::DeviceMismatch {
        expected,
        found,
        op,
    } = &m.error
    {
        ui.label(lang.fmt(
            Key::MismatchMeaning,
            &[
                ("op", op),
                ("expected", &device_title(lang, *expected)),
                ("found", &device_title(lang, *found)),
            ],
        ));
    }
    let adapter = if m.software {
        lang.fmt(Key::MismatchSoftware, &[("adapter", &m.adapter)])
    } else {
        m.adapter.clone()
    };
    let row: Vec<String> = m.fixed_row.iter().map(|v| format!("{v:.3}")).collect();
    ui.label(lang.fmt(
        Key::MismatchFix,
        &[
            ("bytes", &m.copied_bytes),
            ("adapter", &adapter),
            ("row", &format!("[{}]", row.join(", "))),
        ],
    ));
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::*;
    use crate::device::Device;

    fn done() -> MismatchView {
        MismatchView::Done(Mismatch {
            adapter: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            software: true,
            error: BackendError::DeviceMismatch {
                expected: Device::Gpu,
                found: Device::Cpu,
                op: "linear_forward",
            },
            fixed_row: vec![0.05, 0.075, 0.1, 0.125],
            copied_bytes: 64,
        })
    }

    fn harness(lang: Lang, view: MismatchView) -> Harness<'static, Vec<UiCommand>> {
        crate::ui::testing::harness(
            move |ui, commands: &mut Vec<UiCommand>| mismatch_ui(ui, lang, &view, commands),
            Vec::new(),
        )
    }

    #[test]
    fn the_error_shows_verbatim_and_is_explained_in_both_languages() {
        for (lang, meaning, fix, software) in [
            (
                Lang::En,
                "still in the CPU",
                "The fix: copy the batch to the GPU first (64 bytes",
                "a software adapter",
            ),
            (
                Lang::Zh,
                "还在 CPU",
                "解决办法：先把批次复制到 GPU（64 字节",
                "软件适配器",
            ),
        ] {
            let h = harness(lang, done());
            h.get_by_label(
                "expected all tensors on the same device, found gpu and cpu (in linear_forward)",
            );
            assert_eq!(
                h.query_all_by_label_contains(meaning).count(),
                1,
                "{lang:?}"
            );
            assert_eq!(h.query_all_by_label_contains(fix).count(), 1, "{lang:?}");
            assert_eq!(
                h.query_all_by_label_contains("[0.050, 0.075, 0.100, 0.125]")
                    .count(),
                1
            );
            assert_eq!(
                h.query_all_by_label_contains(software).count(),
                1,
                "{lang:?}"
            );
        }
    }

    #[test]
    fn the_button_asks_for_the_run_and_is_off_while_it_runs() {
        let mut h = harness(Lang::En, MismatchView::NotRun);
        h.get_by_label(Lang::En.tr(Key::MismatchRun)).click();
        h.run();
        assert_eq!(h.state(), &vec![UiCommand::DemonstrateMismatch]);
        let mut running = harness(Lang::Zh, MismatchView::Running);
        running.get_by_label(Lang::Zh.tr(Key::MismatchRun)).click();
        // The spinner repaints for ever: a few frames, not `run`.
        running.run_steps(3);
        assert!(
            running.state().is_empty(),
            "a disabled button must not ask again"
        );
        running.get_by_label(Lang::Zh.tr(Key::MismatchRunning));
    }

    #[test]
    fn without_a_gpu_it_says_why() {
        let h = harness(
            Lang::Zh,
            MismatchView::Unavailable(crate::i18n::Said::verbatim("no adapter found")),
        );
        assert_eq!(h.query_all_by_label_contains("no adapter found").count(), 1);
        assert_eq!(h.query_all_by_label_contains("只有一个设备时").count(), 1);
    }
}
