//! Saving and opening a session in the window (the file itself: [`super::session_file`]).

use std::path::{Path, PathBuf};

use super::BatchScopeApp;
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
        let written = to_text(&saved, lesson)
            .and_then(|text| std::fs::write(&path, text).map_err(|e| e.to_string()));
        self.state.screenshot_note = Some(match written {
            Ok(()) => lang.fmt(
                crate::i18n::LessonKey::SessionSaved,
                &[("path", &path.display())],
            ),
            Err(why) => lang.fmt(crate::i18n::LessonKey::SessionNotSaved, &[("why", &why)]),
        });
    }

    /// Opens a session file: its settings are applied, its lesson opened at its step.
    pub(super) fn open_session(&mut self, path: &Path) {
        let session = match read(path) {
            Ok(session) => session,
            Err(why) => {
                self.state.restore_notes.push(RestoreNote::Unreadable(why));
                return;
            }
        };
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
