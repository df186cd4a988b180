//! Saving and opening a session in the window (the file itself: [`super::session_file`]).

use std::path::{Path, PathBuf};

use super::BatchScopeApp;
use super::jobs::Read;
use super::restore::RestoreNote;
use super::session_file::{EXTENSION, read, to_text};
use crate::ui::LessonCommand;

impl BatchScopeApp {
    /// Saves the settings, the language and the lesson on screen at `path`.
    pub(super) fn save_session(&mut self, mut path: PathBuf) {
        if path.extension().is_none() {
            path.set_extension(EXTENSION);
        }
        let mut saved = self.saved();
        saved.config = self.state.settings.config.clone();
        saved.enabled = self.state.settings.enabled;
        let lesson = self
            .state
            .lesson
            .as_ref()
            .map(|f| (f.lesson.id.as_str(), f.step));
        let lang = self.state.lang;
        let written = to_text(&saved, lesson).and_then(|text| {
            crate::files::write_atomic(&path, text.as_bytes()).map_err(|e| e.text(lang).to_string())
        });
        self.state.screenshot_note = Some(match written {
            Ok(()) => lang.fmt(
                crate::i18n::LessonKey::SessionSaved,
                &[("path", &path.display())],
            ),
            Err(why) => lang.fmt(crate::i18n::LessonKey::SessionNotSaved, &[("why", &why)]),
        });
    }

    /// Reads a session file off the UI thread; [`Self::apply_session`] takes it in.
    pub(super) fn open_session(&mut self, path: &Path) {
        let path = path.to_path_buf();
        let work = move |ctx: crate::job::JobContext<Read>| {
            ctx.send(Read::Session(read(&path)));
        };
        self.start_reading(work);
    }

    /// Starts reading a user's file as a job (or says why it could not start).
    pub(super) fn start_reading(
        &mut self,
        work: impl FnOnce(crate::job::JobContext<Read>) + Send + 'static,
    ) {
        match crate::job::Job::spawn("read-file", self.notify(), work) {
            Ok(job) => self.jobs.reading = Some(job),
            Err(e) => self
                .state
                .restore_notes
                .push(RestoreNote::SessionUnreadable(crate::i18n::Said::verbatim(
                    e.to_string(),
                ))),
        }
    }

    /// Takes in a file read off the UI thread.
    pub(super) fn poll_reading(&mut self) {
        let Some(job) = self.jobs.reading.as_mut() else {
            return;
        };
        // Finished before the poll: everything it sent is in this poll.
        let finished = job.is_finished();
        let news = job.poll();
        if finished {
            self.jobs.reading = None;
        }
        for read in news {
            match read {
                Read::Session(Ok(session)) => self.apply_session(session),
                Read::Session(Err(why)) => {
                    self.state
                        .restore_notes
                        .push(RestoreNote::SessionUnreadable(why));
                }
                Read::Lesson(path, lesson) => self.lesson_read(&path, lesson),
                Read::Weights(path, values) => self.weights_read(&path, values),
            }
        }
    }

    /// Waits (at most ten seconds) for a file being read and takes it in.
    #[cfg(test)]
    pub(super) fn finish_reading(&mut self) {
        let start = web_time::Instant::now();
        while self.jobs.reading.is_some() && start.elapsed().as_secs() < 10 {
            self.poll_reading();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Applies a session read from its file: its settings, its lesson at its step.
    fn apply_session(&mut self, session: super::session_file::Session) {
        self.state.restore_notes.extend(session.notes);
        self.state.lang = session.saved.lang;
        self.state.sharing = session.saved.sharing;
        self.state.settings.config = session.saved.config;
        self.state.settings.enabled = session.saved.enabled;
        if let Some((id, step)) = session.lesson
            && self.state.lessons.iter().any(|l| l.id == id)
        {
            self.state.lesson_places.insert(id.clone(), step);
            // The lesson puts its own preset in; the session's settings follow it.
            let settings = self.state.settings.clone();
            self.lesson_command(LessonCommand::Open(id));
            self.state.settings.config = settings.config;
            self.state.settings.enabled = settings.enabled;
        }
        self.reset();
    }
}
