//! Whole-app flows of the guided lessons: every lesson walked by keyboard alone, with the part
//! of the window each step points at drawn and framed.
#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::flows::tests::{devices_settled, harness, step_until};
    use super::super::{AppOptions, GpuChoice};
    use crate::lesson::Plan;
    use crate::ui::LessonCommand;
    use crate::ui::UiCommand;
    use crate::ui::lesson::drawn_highlight;

    #[test]
    fn every_lesson_reaches_its_last_step_by_keyboard_and_frames_what_it_points_at() {
        // The CPU alone and short probes: this checks the walk and the frames, not the figures
        // (tests/lessons.rs checks those on the adapter).
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable("the lessons' walk test".into()),
            lesson_plan: Plan::quick(),
            ..AppOptions::default()
        });
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        let lessons = harness.state().state.lessons.clone();
        assert_eq!(lessons.len(), 10);
        for lesson in &lessons {
            harness
                .state_mut()
                .apply(UiCommand::Lesson(LessonCommand::Open(lesson.id.clone())));
            harness.step();
            for (i, step) in lesson.steps.iter().enumerate() {
                let shown = harness.state().state.lesson.as_ref().map(|f| f.step);
                assert_eq!(shown, Some(i), "{}", lesson.id);
                if let Some(widget) = step.watch {
                    // Drawn once the probes have run and the columns train the preset.
                    let start = Instant::now();
                    while drawn_highlight(&harness.ctx) != Some(widget)
                        && start.elapsed() < Duration::from_secs(60)
                    {
                        harness.step();
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    assert_eq!(
                        drawn_highlight(&harness.ctx),
                        Some(widget),
                        "{} step {}: {widget:?} was never drawn",
                        lesson.id,
                        i + 1
                    );
                }
                if i + 1 < lesson.steps.len() {
                    harness.key_press(egui::Key::ArrowRight);
                    harness.step();
                }
            }
            let measured = |app: &super::super::BatchScopeApp| {
                app.state
                    .lesson
                    .as_ref()
                    .is_some_and(|f| f.outcome.is_some())
            };
            assert!(
                step_until(&mut harness, Duration::from_secs(60), measured),
                "{}: measuring {:?}, failed {:?}, pending {}, job {}, running {}, runs {:?}",
                lesson.id,
                harness.state().state.lesson.as_ref().map(|f| f.measuring),
                harness
                    .state()
                    .state
                    .lesson
                    .as_ref()
                    .map(|f| f.failed.clone()),
                harness.state().jobs.pending_lesson,
                harness.state().jobs.lesson.is_some(),
                harness.state().state.is_running(),
                harness
                    .state()
                    .state
                    .runs
                    .iter()
                    .map(|r| (r.status.clone(), r.run_state))
                    .collect::<Vec<_>>(),
            );
            let f = harness.state().state.lesson.as_ref().expect("open");
            assert!(f.at_last(), "{}", lesson.id);
            // The headline was filled from this run's figures (the CPU's, here).
            let explain = lesson
                .steps
                .iter()
                .find(|s| s.kind == crate::lesson::StepKind::Explain)
                .expect("an explanation");
            let outcome = f.outcome.as_ref().expect("measured");
            let headline = explain.headline(&outcome.figures, outcome.gpu, crate::i18n::Lang::Zh);
            assert!(headline.is_ok(), "{}: {headline:?}", lesson.id);
            // ← goes back one step; the place is kept when the lesson is opened again.
            harness.key_press(egui::Key::ArrowLeft);
            harness.step();
            let back = lesson.steps.len() - 2;
            assert_eq!(
                harness.state().state.lesson.as_ref().map(|f| f.step),
                Some(back)
            );
            harness
                .state_mut()
                .apply(UiCommand::Lesson(LessonCommand::Close));
            assert_eq!(
                harness.state().state.lesson_places.get(&lesson.id),
                Some(&back)
            );
        }
    }
}
