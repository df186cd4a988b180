//! Whole-app flows of the guided lessons: every lesson walked by keyboard alone, with the part
//! of the window each step points at drawn and framed.
#[cfg(test)]
mod tests {
    use std::time::Duration;
    use web_time::Instant;

    use super::super::flows::tests::{devices_settled, harness, step_until};
    use super::super::{AppOptions, GpuChoice};
    use crate::lesson::Plan;
    use crate::ui::LessonCommand;
    use crate::ui::UiCommand;
    use crate::ui::lesson::drawn_highlight;

    #[test]
    fn every_lesson_reaches_its_last_step_by_keyboard_and_frames_what_it_points_at() {
        // The CPU alone and short probes: this checks the walk and the frames, not the figures
        // (tests/integration/lessons.rs checks those on the adapter).
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("the lessons' walk test")),
            lesson_plan: Plan::quick(),
            ..AppOptions::default()
        });
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        let lessons = harness.state().state.lessons.clone();
        assert_eq!(lessons.len(), crate::lesson::shipped::COUNT);
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
                    // On a Try step the key first makes the change and measures it; pressed
                    // again, it goes on.
                    if step.kind == crate::lesson::StepKind::Try
                        && harness.state().state.lesson.as_ref().map(|f| f.step) == Some(i)
                    {
                        harness.key_press(egui::Key::ArrowRight);
                        harness.step();
                    }
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

#[cfg(test)]
mod presenter_tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable as _;

    use super::super::{AppOptions, BatchScopeApp};

    /// The app without workers (nothing trains), drawn at `width` × 800.
    fn drawn(width: f32) -> Harness<'static, BatchScopeApp> {
        let app = BatchScopeApp::new(AppOptions {
            start_workers: false,
            ..AppOptions::default()
        });
        let mut harness = Harness::builder()
            .with_size(egui::vec2(width, 800.0))
            .build_ui_state(|ui, app: &mut BatchScopeApp| app.frame(ui), app);
        harness.run_steps(3);
        harness
    }

    #[test]
    fn f5_scales_the_ui_hides_the_setup_and_gives_both_back() {
        let mut harness = drawn(1280.0);
        assert!(harness.query_by_label("Setup").is_some());
        harness.key_press(egui::Key::F5);
        harness.run_steps(3);
        assert!(harness.state().state.presenter.on);
        assert!((harness.ctx.zoom_factor() - 1.5).abs() < 1e-6);
        assert!(harness.query_by_label("Setup").is_none());
        // B blanks the screen, B again shows it.
        harness.key_press(egui::Key::B);
        harness.run_steps(2);
        assert!(harness.state().state.presenter.blank);
        harness.key_press(egui::Key::B);
        harness.run_steps(2);
        assert!(!harness.state().state.presenter.blank);
        // A scale changed while presenting is kept, within its range.
        harness.ctx.set_zoom_factor(3.0);
        harness.run_steps(2);
        assert!((harness.state().state.presenter.scale - 2.0).abs() < 1e-6);
        harness.key_press(egui::Key::Escape);
        harness.run_steps(3);
        assert!(!harness.state().state.presenter.on);
        assert!((harness.ctx.zoom_factor() - 1.0).abs() < 1e-6);
        assert!(harness.query_by_label("Setup").is_some());
    }

    /// N opens the speaker notes in presenter mode (here embedded, as egui shows a second
    /// viewport where the integration has none), with the open lesson's step; N closes them, and
    /// leaving presenter mode closes them too.
    #[test]
    fn n_opens_the_speaker_notes_with_the_lessons_step() {
        let mut harness = drawn(1280.0);
        harness.state_mut().apply(crate::ui::UiCommand::Lesson(
            crate::ui::LessonCommand::Open("first-run".into()),
        ));
        harness.key_press(egui::Key::N);
        harness.run_steps(2);
        assert!(
            !harness.state().state.presenter.notes,
            "only in presenter mode"
        );
        harness.key_press(egui::Key::F5);
        harness.run_steps(2);
        harness.key_press(egui::Key::N);
        harness.run_steps(3);
        assert!(harness.state().state.presenter.notes);
        assert!(harness.query_by_label_contains("Presenting for").is_some());
        assert!(harness.query_by_label("Next, step 2:").is_some());
        harness.key_press(egui::Key::N);
        harness.run_steps(3);
        assert!(harness.query_by_label_contains("Presenting for").is_none());
        harness.key_press(egui::Key::N);
        harness.key_press(egui::Key::Escape);
        harness.run_steps(3);
        assert!(!harness.state().state.presenter.notes);
        assert!(harness.query_by_label_contains("Presenting for").is_none());
    }

    /// At a projector's 1280×720 with a lesson open, presenter mode's scale leaves the central
    /// panel about 450 points wide. Tab by tab, in both languages, nothing drawn in it reaches
    /// under the lesson: one row that does not wrap (the tabs, a text field and its button, a
    /// file's path) widens the whole tab's layout, and its text and plots are then cut at the
    /// panel's edge.
    #[test]
    fn in_presenter_mode_no_tab_runs_under_the_lesson() {
        use crate::i18n::{Key, Lang};
        use egui_kittest::kittest::by;
        let tabs = [
            Key::TabTraining,
            Key::Journey,
            Key::MemoryTab,
            Key::PrecisionTab,
            Key::TabExperiments,
            Key::TabHistory,
            Key::TabSimulator,
            Key::TabData,
        ];
        for (lang, title) in [
            (Lang::En, "First run: the same network on two devices"),
            (Lang::Zh, "第一次运行：同一个网络，两种设备"),
        ] {
            let mut harness = drawn(1280.0);
            harness.set_size(egui::vec2(1280.0, 720.0));
            harness
                .state_mut()
                .apply(crate::ui::UiCommand::SetLanguage(lang));
            harness.state_mut().apply(crate::ui::UiCommand::Lesson(
                crate::ui::LessonCommand::Open("first-run".into()),
            ));
            harness.key_press(egui::Key::F5);
            harness.run_steps(4);
            for tab in tabs.map(|key| lang.tr(key)) {
                harness.get_by_label(tab).click();
                harness.run_steps(4);
                let edge = harness.get_by_label(title).rect().left();
                let top = harness.get_by_label(lang.tr(Key::TabTraining)).rect().top();
                let bottom = harness.get_by_label(lang.tr(Key::Measured)).rect().top();
                let inside =
                    |r: egui::Rect| r.left() < edge && r.top() >= top && r.bottom() <= bottom;
                let over: Vec<String> = harness
                    .query_all(by().predicate(|n| n.bounding_box().is_some()))
                    .filter(|n| inside(n.rect()) && n.rect().right() > edge + 1.0)
                    .map(|n| format!("{n:?} {:?}", n.rect()))
                    .collect();
                assert!(
                    over.is_empty(),
                    "{tab}: past the lesson's edge {edge}: {over:?}"
                );
            }
        }
    }

    #[test]
    fn below_1100_px_the_gpu_column_goes_under_the_cpu_column() {
        let heading = |harness: &Harness<'_, BatchScopeApp>, name: &str| {
            harness
                .query_all_by_label(name)
                .map(|n| n.rect())
                .min_by(|a, b| a.top().total_cmp(&b.top()))
                .expect("a column heading")
        };
        let wide = drawn(1280.0);
        let (cpu, gpu) = (heading(&wide, "CPU"), heading(&wide, "GPU"));
        assert!(gpu.left() > cpu.right(), "side by side: {cpu:?} {gpu:?}");
        let narrow = drawn(1000.0);
        let (cpu, gpu) = (heading(&narrow, "CPU"), heading(&narrow, "GPU"));
        assert!(gpu.top() > cpu.bottom() + 50.0, "stacked: {cpu:?} {gpu:?}");
        assert!((gpu.left() - cpu.left()).abs() < 5.0, "{cpu:?} {gpu:?}");
    }
}

#[cfg(test)]
mod session_tests {
    use super::super::{AppOptions, BatchScopeApp, GpuChoice};
    use crate::i18n::Lang;
    use crate::ui::{LessonCommand, UiCommand};

    fn app() -> BatchScopeApp {
        BatchScopeApp::new(AppOptions {
            start_workers: false,
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("the session test")),
            lesson_plan: crate::lesson::Plan::quick(),
            ..AppOptions::default()
        })
    }

    #[test]
    fn a_session_file_brings_back_the_settings_language_lesson_and_step() {
        let path =
            std::env::temp_dir().join(format!("batchscope-{}.batchscope", std::process::id()));
        let mut first = app();
        first.apply(UiCommand::SetLanguage(Lang::Zh));
        first.apply(UiCommand::Lesson(LessonCommand::Open("memory".into())));
        first.apply(UiCommand::Lesson(LessonCommand::Next));
        first.state.settings.config.batch = 512;
        first.apply(UiCommand::SaveSession(path.clone()));
        assert!(path.exists(), "{:?}", first.state.screenshot_note);

        let mut second = app();
        second.apply(UiCommand::OpenSession(path.clone()));
        second.finish_reading();
        assert_eq!(second.state.lang, Lang::Zh);
        let lesson = second.state.lesson.as_ref().expect("the lesson is open");
        assert_eq!((lesson.lesson.id.as_str(), lesson.step), ("memory", 1));
        assert_eq!(second.state.settings.config.batch, 512);
        // Applied once MNIST is in memory: its load has started.
        assert!(second.is_loading() || second.state.settings.applied.batch == 512);
        assert!(
            second.state.restore_notes.is_empty(),
            "{:?}",
            second.state.restore_notes
        );

        // A damaged file: what is wrong is named, the rest is used, nothing panics.
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, text.replace("batch: 512", "batch: -4")).expect("write");
        let mut third = app();
        third.apply(UiCommand::OpenSession(path.clone()));
        third.finish_reading();
        assert_eq!(
            third.state.restore_notes.len(),
            1,
            "{:?}",
            third.state.restore_notes
        );
        assert_eq!(third.state.lang, Lang::Zh);
        // Not a session at all: refused whole, and the window keeps what it had.
        std::fs::write(&path, "\u{0}garbage(((").expect("write");
        let mut garbled = app();
        garbled.apply(UiCommand::SetLanguage(Lang::Zh));
        garbled.state.settings.config.batch = 77;
        garbled.apply(UiCommand::OpenSession(path.clone()));
        garbled.finish_reading();
        assert_eq!(garbled.state.restore_notes.len(), 1);
        assert!(
            garbled.state.restore_notes[0]
                .text(Lang::En)
                .contains("nothing was changed")
        );
        assert_eq!(garbled.state.lang, Lang::Zh);
        assert_eq!(garbled.state.settings.config.batch, 77);
        let _ = std::fs::remove_file(&path);
        // A missing file: a note, and the window goes on as it was.
        let mut fourth = app();
        fourth.apply(UiCommand::OpenSession(path));
        fourth.finish_reading();
        assert_eq!(fourth.state.restore_notes.len(), 1);
        assert!(fourth.state.lesson.is_none());
    }

    /// A named pipe with no writer and an endless device, opened as session files and as lesson
    /// files: each is refused at once with what it is, and the window goes on.
    #[cfg(unix)]
    #[test]
    fn a_pipe_or_a_device_as_a_session_file_is_refused_without_waiting() {
        let fifo = std::env::temp_dir().join(format!("batchscope-{}.fifo", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        for path in [fifo.clone(), "/dev/zero".into()] {
            let mut opened = app();
            let start = web_time::Instant::now();
            opened.apply(UiCommand::OpenSession(path.clone()));
            opened.finish_reading();
            assert!(
                opened.jobs.reading.is_none(),
                "{path:?} is still being read"
            );
            assert!(start.elapsed().as_secs() < 5, "{path:?}");
            let notes: Vec<String> = opened
                .state
                .restore_notes
                .iter()
                .map(|n| n.text(Lang::En))
                .collect();
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(notes[0].contains("not a regular file"), "{notes:?}");
            assert!(notes[0].contains(&path.display().to_string()), "{notes:?}");
            // The same as a lesson file: its error is shown where lesson errors are.
            let mut window = app();
            window.apply(UiCommand::Lesson(LessonCommand::OpenPath(path.clone())));
            window.finish_reading();
            assert!(
                window.jobs.reading.is_none(),
                "{path:?} is still being read"
            );
            let error = window.state.lesson_error.as_ref().map(|e| e.text(Lang::En));
            assert!(
                error.is_some_and(|e| e.contains("not a regular file")),
                "{:?}",
                window.state.lesson_error
            );
            assert!(window.state.lesson.is_none());
        }
        let _ = std::fs::remove_file(&fifo);
    }
}
