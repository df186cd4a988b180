//! Presenter mode at a projector's 1280×720: every step of every lesson, in both languages and at
//! every scale a presenter can choose, walked with the clicker's keys alone, its whole text
//! inside the lesson's visible area — no scroll bar to reach for — and the toolbar on one line.
#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::{Queryable as _, by};

    use super::super::{AppOptions, BatchScopeApp, GpuChoice};
    use crate::i18n::{Key, Lang};
    use crate::lesson::probe::{GpuPresence, Outcome};
    use crate::lesson::verdict::Change;
    use crate::lesson::verify::TryReport;
    use crate::lesson::{Figure, Figures, Lesson, Quantity, StepKind};
    use crate::ui::{LessonCommand, UiCommand};

    /// The app without workers (nothing trains), at 1280×720 in `lang`, in presenter mode at
    /// `scale`.
    fn presenting(lang: Lang, scale: f32) -> Harness<'static, BatchScopeApp> {
        let mut app = BatchScopeApp::new(AppOptions {
            start_workers: false,
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("the presenter test")),
            lesson_plan: crate::lesson::Plan::quick(),
            ..AppOptions::default()
        });
        app.state.presenter.scale = scale;
        let mut harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 720.0))
            .build_ui_state(|ui, app: &mut BatchScopeApp| app.frame(ui), app);
        harness.state_mut().apply(UiCommand::SetLanguage(lang));
        harness.run_steps(2);
        harness.key_press(egui::Key::F5);
        harness.run_steps(3);
        assert!((harness.ctx.zoom_factor() - scale).abs() < 1e-6);
        harness
    }

    /// A figure of the kind its name says, with long renderings: the most room a headline can
    /// take.
    fn long_figure(name: &str) -> Quantity {
        let part = name.rsplit('.').next().unwrap_or_default();
        match part {
            "faster" | "slower" => Quantity::Text("CPU".into()),
            "name" => Quantity::Text("llvmpipe (LLVM 15.0.6, 256 bits)".into()),
            "api" => Quantity::Text("Vulkan".into()),
            "profile" => Quantity::Text("NVIDIA GeForce RTX 3060 12 GB".into()),
            p if p.ends_with("samples_per_s") || p.ends_with("rows_per_s") => {
                Quantity::SamplesPerS(888_888.0)
            }
            p if p.ends_with("_ms") || p.starts_with("seconds") => Quantity::Ms(888.88),
            p if p.ends_with("_bytes") => Quantity::Bytes(888_888_888.0),
            p if p.ends_with("_share") || p == "accuracy" => Quantity::Share(0.888),
            "gain" | "speedup" => Quantity::Ratio(88.8),
            _ => Quantity::Number(88_888.0),
        }
    }

    /// Every figure `lesson` can produce, measured (or simulated, for a simulation's).
    fn outcome(lesson: &Lesson, gpu: GpuPresence) -> Outcome {
        let mut figures = Figures::default();
        let simulated: Vec<&str> = lesson
            .probes
            .iter()
            .filter(|p| p.kind == crate::lesson::format::ProbeKind::Simulate)
            .map(crate::lesson::format::Probe::name)
            .collect();
        for name in lesson.producible() {
            let q = long_figure(&name);
            if simulated.contains(&crate::lesson::format::probe_of(&name))
                && !name.ends_with(".profile")
            {
                figures.simulated(name, q);
            } else {
                figures.measured_with_iqr(name, q, 0.0);
            }
        }
        Outcome {
            figures,
            gpu,
            notes: Vec::new(),
            cancelled: false,
            sweep: None,
            serving: None,
            timings: Vec::new(),
        }
    }

    /// A Try step's result with every figure judged, one of them the other way and one too
    /// close to call, so that every text a result can show is shown.
    fn tried(step: &crate::lesson::Step) -> TryReport {
        let figure = |x: f64| Figure {
            quantity: Quantity::SamplesPerS(x),
            simulated: false,
            estimated: false,
            iqr: Some(x * 0.05),
        };
        let expect = step.expect.expect("a try step expects");
        let changes = step
            .try_figures()
            .iter()
            .enumerate()
            .filter_map(|(i, name)| {
                let after = [8_888_888.0, 88_888.0, 880_000.0][i % 3];
                Change::judge(name, figure(888_888.0), figure(after), expect)
            })
            .collect();
        TryReport {
            changes,
            missing: Vec::new(),
            seconds: 8.0,
        }
    }

    /// What reaches outside the lesson's visible area: the lesson's content as a whole, and
    /// each text drawn in the panel (below it is only the status bar).
    fn outside(harness: &Harness<'_, BatchScopeApp>) -> Vec<String> {
        let area = crate::ui::lesson::lesson_area(&harness.ctx).expect("the lesson is drawn");
        let content = crate::ui::lesson::lesson_content(&harness.ctx).expect("the lesson is drawn");
        let mut over = Vec::new();
        if !area.expand(1.0).contains_rect(content) {
            over.push(format!(
                "the lesson's content {content:?} is larger than {area:?}"
            ));
        }
        over.extend(
            harness
                .query_all(by().predicate(|n| n.bounding_box().is_some()))
                .filter(|n| n.rect().left() >= area.left() - 1.0 && n.rect().top() < area.bottom())
                .filter(|n| {
                    let r = n.rect();
                    r.bottom() > area.bottom() + 1.0 || r.right() > area.right() + 1.0
                })
                .map(|n| format!("{n:?} {:?} (area {area:?})", n.rect())),
        );
        over
    }

    /// Shows `lesson`'s step `step` measured as `gpu` would have it, and returns what does not
    /// fit.
    fn check_step(
        harness: &mut Harness<'_, BatchScopeApp>,
        lesson: &Lesson,
        gpu: GpuPresence,
    ) -> Vec<String> {
        // A lesson's data set loads on a thread: its progress line comes and goes with the
        // machine's load, so each step is checked once it is in (the CI machine is slower).
        let start = web_time::Instant::now();
        while harness.state().is_loading() && start.elapsed().as_secs() < 60 {
            harness.run_steps(1);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if let Some(f) = harness.state_mut().state.lesson.as_mut() {
            f.outcome = Some(outcome(lesson, gpu));
            let step = f.step;
            f.chosen[step] = Some(0);
            if f.current().kind == StepKind::Try {
                f.tried[step] = Some(Ok(tried(f.current())));
            }
        }
        harness.run_steps(8);
        outside(harness)
    }

    #[test]
    fn every_step_of_every_lesson_fits_the_presenter_screen_walked_by_keys_alone() {
        let lessons = crate::lesson::shipped::lessons().0;
        let mut failures = Vec::new();
        for lang in [Lang::En, Lang::Zh] {
            for scale in [1.25, 1.5, 2.0] {
                let mut harness = presenting(lang, scale);
                toolbar_is_one_line(&harness, lang, scale);
                for lesson in &lessons {
                    harness
                        .state_mut()
                        .apply(UiCommand::Lesson(LessonCommand::Open(lesson.id.clone())));
                    harness.run_steps(2);
                    // Every lesson from its first step, as a class meets it.
                    while harness
                        .state()
                        .state
                        .lesson
                        .as_ref()
                        .is_some_and(|f| f.step > 0)
                    {
                        harness.key_press(egui::Key::PageUp);
                        harness.run_steps(1);
                    }
                    for (i, step) in lesson.steps.iter().enumerate() {
                        let shown = harness.state().state.lesson.as_ref().map(|f| f.step);
                        assert_eq!(shown, Some(i), "{} by keys", lesson.id);
                        let cases: &[GpuPresence] = if step.kind == StepKind::Explain {
                            &[
                                GpuPresence::Software,
                                GpuPresence::Hardware,
                                GpuPresence::None,
                            ]
                        } else {
                            &[GpuPresence::Software]
                        };
                        for &gpu in cases {
                            let over = check_step(&mut harness, lesson, gpu);
                            if !over.is_empty() {
                                failures.push(format!(
                                    "{lang:?} at {scale}×, {} step {} ({gpu:?}): {over:?}",
                                    lesson.id,
                                    i + 1
                                ));
                            }
                        }
                        // The clicker's key: a measured Try step goes on to the next.
                        harness.key_press(egui::Key::PageDown);
                        harness.run_steps(1);
                    }
                    harness
                        .state_mut()
                        .apply(UiCommand::Lesson(LessonCommand::Close));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// The toolbar keeps one line: its buttons, from the lessons' menu to the language, in one
    /// row inside the window.
    fn toolbar_is_one_line(harness: &Harness<'_, BatchScopeApp>, lang: Lang, scale: f32) {
        let width = 1280.0 / scale;
        let rect = |label: &str| harness.get_by_label(label).rect();
        let first = rect(lang.tr(crate::i18n::LessonKey::Lessons));
        let last = rect(lang.tr(Key::Reset));
        let other = match lang {
            Lang::En => Lang::Zh,
            Lang::Zh => Lang::En,
        };
        let language = rect(other.native_name());
        for r in [last, language] {
            assert!(
                (r.center().y - first.center().y).abs() < 2.0,
                "{lang:?} at {scale}×: {first:?} {r:?}"
            );
            assert!(r.right() <= width + 1.0, "{lang:?} at {scale}×: {r:?}");
        }
    }

    /// Pressing the clicker's key on an unmeasured Try step makes the change and measures it:
    /// every action a lesson needs is reachable with the keys alone.
    #[test]
    fn the_next_key_on_a_try_step_makes_the_change_and_measures_it() {
        let mut harness = presenting(Lang::En, 1.5);
        let lesson = crate::lesson::shipped::find("first-run").expect("shipped");
        harness
            .state_mut()
            .apply(UiCommand::Lesson(LessonCommand::Open(lesson.id.clone())));
        let last = lesson.steps.len() - 1;
        if let Some(f) = harness.state_mut().state.lesson.as_mut() {
            f.outcome = Some(outcome(&lesson, GpuPresence::None));
            f.step = last;
        }
        harness.run_steps(2);
        harness.key_press(egui::Key::PageDown);
        harness.run_steps(1);
        let app = harness.state();
        let f = app.state.lesson.as_ref().expect("open");
        assert_eq!(f.step, last);
        assert_eq!(f.trying, Some(last), "the key measures the change");
        assert_eq!(app.state.settings.config.batch, 256, "and made it first");
        harness
            .state_mut()
            .apply(UiCommand::Lesson(LessonCommand::CancelMeasure));
    }
}
