//! Following a guided lesson: opening one (where it was left), moving between its steps,
//! applying its preset, running its probes as a job once training has paused, and measuring a
//! Try step's change. The figures come back to the lesson panel; the columns then train with the
//! lesson's settings so that its Watch steps have something to show.

use super::BatchScopeApp;
use crate::i18n::{Arg, ErrKey, LessonKey, Said};
use crate::lesson::follow::LessonNews;
use crate::lesson::probe::{self, Tables};
use crate::lesson::verify;
use crate::lesson::{Following, Lesson};
use crate::ui::LessonCommand;
use crate::ui::lesson::{view_tab, widget_tab};
use crate::ui::open::OpenKind;

impl BatchScopeApp {
    /// Carries out a command of the lesson panel or the Lessons menu.
    pub(super) fn lesson_command(&mut self, command: LessonCommand) {
        let lang = self.state.lang;
        match command {
            LessonCommand::Open(id) => {
                if let Some(lesson) = self.state.lessons.iter().find(|l| l.id == id).cloned() {
                    self.open_lesson(lesson);
                }
            }
            LessonCommand::OpenFile => {
                self.panels
                    .opener
                    .start(OpenKind::Lesson, lang, self.notify());
            }
            LessonCommand::OpenPath(path) => {
                // Read off the UI thread; `lesson_read` takes it in.
                let work = move |ctx: crate::job::JobContext<super::jobs::Read>| {
                    let lesson = Lesson::read(&path);
                    ctx.send(super::jobs::Read::Lesson(path, lesson));
                };
                self.start_reading(work);
            }
            LessonCommand::Close => self.close_lesson(),
            LessonCommand::Next => {
                if self.state.lesson.as_mut().is_some_and(Following::forward) {
                    self.arrive();
                }
            }
            LessonCommand::Advance => {
                let untried = self.state.lesson.as_ref().is_some_and(|f| {
                    f.current().kind == crate::lesson::StepKind::Try
                        && f.outcome.is_some()
                        && f.trying.is_none()
                        && f.tried.get(f.step).is_some_and(Option::is_none)
                });
                if untried {
                    self.make_lesson_change();
                    self.measure_lesson_change();
                } else {
                    self.lesson_command(LessonCommand::Next);
                }
            }
            LessonCommand::Back => {
                if self.state.lesson.as_mut().is_some_and(Following::back) {
                    self.arrive();
                }
            }
            LessonCommand::Choose(i) => {
                if let Some(f) = self.state.lesson.as_mut()
                    && i < f.current().choices.len()
                {
                    let step = f.step;
                    f.chosen[step] = Some(i);
                }
            }
            LessonCommand::Measure => self.measure_lesson(),
            LessonCommand::CancelMeasure => {
                if let Some(job) = self.jobs.lesson.take() {
                    job.cancel();
                }
                self.jobs.pending_lesson = false;
                if let Some(f) = self.state.lesson.as_mut() {
                    f.measuring = None;
                    f.trying = None;
                }
            }
            LessonCommand::MakeChange => self.make_lesson_change(),
            LessonCommand::MeasureChange => self.measure_lesson_change(),
        }
    }

    /// Takes in a lesson file read off the UI thread: opens it, or says why it cannot be used.
    pub(super) fn lesson_read(&mut self, path: &std::path::Path, read: Result<Lesson, Said>) {
        match read {
            Ok(lesson) => {
                self.state.lesson_error = None;
                let lessons = &mut self.state.lessons;
                match lessons.iter_mut().find(|l| l.id == lesson.id) {
                    Some(same) => *same = lesson.clone(),
                    None => lessons.push(lesson.clone()),
                }
                self.open_lesson(lesson);
            }
            Err(why) => {
                let file = path.display().to_string();
                self.state.lesson_error = Some(file_error(&file, &why));
            }
        }
    }

    /// Opens `lesson` where the user left it: its preset goes into the setup and is applied.
    fn open_lesson(&mut self, lesson: Lesson) {
        self.close_lesson();
        let place = self
            .state
            .lesson_places
            .get(&lesson.id)
            .copied()
            .unwrap_or(0);
        self.apply_preset(&lesson);
        self.state.lesson = Some(Following::new(lesson, place));
        self.arrive();
    }

    /// Leaves the lesson; its place is kept for the next time.
    fn close_lesson(&mut self) {
        if let Some(job) = self.jobs.lesson.take() {
            job.cancel();
        }
        self.jobs.pending_lesson = false;
        self.state.lesson = None;
    }

    /// Puts a lesson's preset into the setup and applies it (a Reset).
    fn apply_preset(&mut self, lesson: &Lesson) {
        match probe::config_of(&lesson.preset) {
            Ok((config, enabled)) => {
                self.state.settings.config = config;
                self.state.settings.enabled = enabled;
                if let Some(view) = lesson.preset.view {
                    self.state.tab = view_tab(view);
                }
                self.reset();
            }
            Err(why) => {
                self.state.lesson_error = Some(file_error(&lesson.id, &why));
            }
        }
    }

    /// On arriving at a step: remember the place, show the tab of what it points at, and start
    /// the measurement once the lesson reaches its Run step.
    fn arrive(&mut self) {
        let Some(f) = &self.state.lesson else {
            return;
        };
        self.state.lesson_places.insert(f.lesson.id.clone(), f.step);
        if let Some(tab) = f.current().watch.and_then(widget_tab) {
            self.state.tab = tab;
        }
        if f.wants_measuring() {
            self.measure_lesson();
        }
    }

    /// Applies the preset and runs the lesson's probes, once training has paused.
    fn measure_lesson(&mut self) {
        let Some(lesson) = self.state.lesson.as_ref().map(|f| f.lesson.clone()) else {
            return;
        };
        self.apply_preset(&lesson);
        self.pause();
        if let Some(job) = self.jobs.lesson.take() {
            job.cancel();
        }
        if let Some(f) = self.state.lesson.as_mut() {
            f.measuring = Some(0.0);
            f.outcome = None;
            f.failed = None;
            f.tried.iter_mut().for_each(|t| *t = None);
        }
        self.jobs.pending_lesson = true;
        self.start_pending_lesson();
    }

    /// Starts the probes asked for once no device trains (called every frame).
    pub(super) fn start_pending_lesson(&mut self) {
        if !self.jobs.pending_lesson {
            return;
        }
        let running = self.state.is_running();
        if let Some(f) = self.state.lesson.as_mut() {
            f.waiting = running;
        }
        if self.state.is_running() {
            // A load that finished meanwhile may have applied the preset with Run pressed (a
            // Reset keeps a run that was still pausing running): pause it again.
            if self
                .state
                .runs
                .iter()
                .any(|r| r.run_state == crate::train::RunState::Running)
            {
                self.pause();
            }
            return;
        }
        self.jobs.pending_lesson = false;
        let Some(lesson) = self.state.lesson.as_ref().map(|f| f.lesson.clone()) else {
            return;
        };
        let options = self.measuring_options();
        let plan = self.options.lesson_plan;
        let work = move |ctx: crate::job::JobContext<LessonNews>| {
            let open = |device| crate::backend::open(device, &options);
            let outcome = probe::run(&lesson, &open, plan, ctx.cancel_flag(), &mut |p| {
                ctx.send(LessonNews::Progress(p));
            });
            ctx.send(LessonNews::Measured(Box::new(outcome)));
        };
        match crate::job::Job::spawn("lesson", self.notify(), work) {
            Ok(job) => self.jobs.lesson = Some(job),
            Err(e) => {
                if let Some(f) = self.state.lesson.as_mut() {
                    f.measuring = None;
                    f.failed = Some(Said::new(ErrKey::NoLessonThread, &[("why", &e)]));
                }
            }
        }
    }

    /// Puts the Try step's change into the setup and applies it.
    fn make_lesson_change(&mut self) {
        let Some(change) = self
            .state
            .lesson
            .as_ref()
            .and_then(|f| f.current().try_settings())
        else {
            return;
        };
        let settings = &mut self.state.settings;
        if probe::apply(&change, &mut settings.config, &mut settings.enabled).is_ok() {
            self.reset();
        }
    }

    /// Measures the Try step's change (training pauses while it does).
    fn measure_lesson_change(&mut self) {
        let Some(f) = self.state.lesson.as_mut() else {
            return;
        };
        if f.outcome.is_none() || f.trying.is_some() {
            return;
        }
        let (lesson, index) = (f.lesson.clone(), f.step);
        f.trying = Some(index);
        self.pause();
        let options = self.measuring_options();
        let plan = self.options.lesson_plan;
        let work = move |ctx: crate::job::JobContext<LessonNews>| {
            let open = |device| crate::backend::open(device, &options);
            let step = &lesson.steps[index];
            let measuring = crate::lesson::Measuring {
                plan,
                cancel: ctx.cancel_flag(),
            };
            let mut tables = Tables::default();
            let tried = verify::try_step(&lesson, step, &open, measuring, &mut tables, &mut |d| {
                ctx.send(LessonNews::TryDevice(d));
            });
            ctx.send(LessonNews::Tried(index, tried));
        };
        match crate::job::Job::spawn("lesson-try", self.notify(), work) {
            Ok(job) => self.jobs.lesson = Some(job),
            Err(e) => {
                if let Some(f) = self.state.lesson.as_mut() {
                    f.trying = None;
                    f.tried[index] = Some(Err(Said::new(ErrKey::NoLessonThread, &[("why", &e)])));
                }
            }
        }
    }

    /// Takes in the lesson job's news.
    pub(super) fn poll_lesson(&mut self) {
        let Some(job) = self.jobs.lesson.as_mut() else {
            return;
        };
        let news = job.poll();
        let ended = job.is_finished();
        let mut measured = false;
        if let Some(f) = self.state.lesson.as_mut() {
            for n in news {
                match n {
                    LessonNews::Progress(p) => {
                        f.measuring = Some(p.done);
                        f.doing = Some(p);
                    }
                    LessonNews::TryDevice(d) => f.try_device = d,
                    LessonNews::Measured(outcome) => {
                        f.measuring = None;
                        f.doing = None;
                        if let Some(results) = &outcome.sweep {
                            self.state.sweep = Some(results.clone());
                        }
                        // The serving section shows the lesson's own measurement.
                        if let Some(serving) = &outcome.serving {
                            self.state.serving = Some(serving.clone());
                        }
                        f.outcome = Some(*outcome);
                        measured = true;
                    }
                    LessonNews::Tried(index, tried) => {
                        f.trying = None;
                        f.try_device = None;
                        if let Some(slot) = f.tried.get_mut(index) {
                            *slot = Some(tried);
                        }
                    }
                }
            }
            if ended {
                f.measuring = None;
                f.doing = None;
                f.trying = None;
                f.try_device = None;
            }
        }
        if ended {
            self.jobs.lesson = None;
        }
        if measured {
            // The columns, the journey and the memory view show the lesson's settings live.
            self.run();
        }
    }
}

/// Why a lesson file (or its preset) cannot be used, in both languages.
fn file_error(file: &str, why: &Said) -> Said {
    Said::with(
        LessonKey::LessonFileError,
        &[("file", Arg::Plain(&file)), ("why", Arg::Said(why))],
    )
}
