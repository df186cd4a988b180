//! Speaker notes: a second window (an egui viewport) for the presenter's own screen while the
//! projector shows the lesson. It holds what the class does not see: the step after this one,
//! the answer to a prediction before the class is told, the headline this run measured, the
//! lesson file's notes for the step, and how long the presentation has run.

use std::time::Duration;

use egui::RichText;

use crate::i18n::{Lang, LessonKey};
use crate::lesson::{Following, StepKind};

/// The speaker notes' viewport.
pub fn viewport_id() -> egui::ViewportId {
    egui::ViewportId::from_hash_of("batchscope-speaker-notes")
}

/// How the speaker notes' window opens: its own window, not on top of the projected one.
pub fn viewport_builder(lang: Lang) -> egui::ViewportBuilder {
    egui::ViewportBuilder::default()
        .with_title(lang.tr(LessonKey::SpeakerNotes))
        .with_inner_size([520.0, 640.0])
}

/// The notes' contents: the lesson open (if any), this run's figures for it, the time presenting.
pub fn speaker_notes_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    following: Option<&Following>,
    presenting_for: Duration,
) {
    let seconds = presenting_for.as_secs();
    ui.label(
        RichText::new(lang.fmt(
            LessonKey::PresentingFor,
            &[("time", &format!("{}:{:02}", seconds / 60, seconds % 60))],
        ))
        .strong(),
    );
    ui.separator();
    let Some(f) = following else {
        ui.label(lang.tr(LessonKey::NotesNoLesson));
        return;
    };
    let lesson = &f.lesson;
    let step = f.current();
    ui.heading(lesson.title.get(lang));
    ui.label(
        RichText::new(lang.fmt(
            LessonKey::StepOf,
            &[("n", &(f.step + 1)), ("total", &lesson.steps.len())],
        ))
        .strong(),
    );
    ui.label(step.text.get(lang));
    if let Some(notes) = &step.notes {
        ui.add_space(4.0);
        ui.label(RichText::new(lang.tr(LessonKey::NotesForStep)).strong());
        ui.label(notes.get(lang));
    }
    if let Some(outcome) = &f.outcome {
        match step.kind {
            StepKind::Predict => {
                if let Some((right, simulated)) = step.answer(&outcome.figures) {
                    let key = if simulated {
                        LessonKey::NotesAnswerSimulated
                    } else {
                        LessonKey::NotesAnswerMeasured
                    };
                    let answer = step.choices[right].get(lang);
                    ui.label(lang.fmt(key, &[("answer", &answer)]));
                    // On a software adapter, the real GPU's answer too, as the class will see.
                    if let Some(real) = step.real_gpu_answer(&outcome.figures, outcome.gpu)
                        && !simulated
                    {
                        let answer = step.choices[real].get(lang);
                        ui.label(lang.fmt(LessonKey::AnswerRealGpu, &[("answer", &answer)]));
                    }
                }
            }
            StepKind::Explain => {
                if let Ok(text) = step.headline(&outcome.figures, outcome.gpu, lang) {
                    ui.label(RichText::new(text).strong());
                }
            }
            StepKind::Run | StepKind::Watch | StepKind::Try => {}
        }
    } else {
        ui.label(lang.tr(LessonKey::NotMeasuredYet));
    }
    ui.separator();
    match lesson.steps.get(f.step + 1) {
        Some(next) => {
            ui.label(
                RichText::new(lang.fmt(LessonKey::NotesNext, &[("n", &(f.step + 2))])).strong(),
            );
            ui.label(next.text.get(lang));
        }
        None => {
            ui.label(lang.tr(LessonKey::LessonFinished));
        }
    }
    ui.separator();
    ui.label(lang.tr(LessonKey::LessonKeys));
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::ui::lesson::tests::following;

    fn drawn(f: Option<Following>, lang: Lang) -> egui_kittest::Harness<'static, ()> {
        crate::ui::testing::harness(
            move |ui, (): &mut ()| {
                speaker_notes_ui(ui, lang, f.as_ref(), Duration::from_secs(754));
            },
            (),
        )
    }

    /// The notes show the presenter what the class does not see yet: the measured answer to
    /// the prediction on screen, the step after it, the time presenting.
    #[test]
    fn the_notes_give_the_answer_the_next_step_and_the_time() {
        // The first run measured with a CPU 100× faster than a software GPU.
        let f = following(0, true);
        let next = f.lesson.steps[1].text.en.clone();
        let h = drawn(Some(f), Lang::En);
        assert!(h.query_by_label("Presenting for 12:34").is_some());
        assert!(
            h.query_by_label_contains("Measured answer: The CPU, clearly")
                .is_some()
        );
        assert!(h.query_by_label(&next).is_some(), "the next step's text");
        let h = drawn(None, Lang::Zh);
        assert!(
            h.query_by_label(Lang::Zh.tr(LessonKey::NotesNoLesson))
                .is_some()
        );
    }
}
