//! A session file (`*.batchscope`): the settings, the devices, the language and the lesson and
//! step on screen, small enough to hand to students. It is read as saved settings are — field by
//! field, each checked, a field that cannot be used named in a note and replaced by its default —
//! so a damaged or hostile file costs only what is wrong in it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::restore::{self, RestoreNote, Saved};
use crate::i18n::Lang;
use crate::train::{Sharing, TrainConfig};

/// The extension of session files.
pub const EXTENSION: &str = "batchscope";

/// What a session file holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct SessionFile<'a> {
    lang: Lang,
    config: &'a TrainConfig,
    enabled: [bool; 2],
    sharing: Sharing,
    lesson: Option<&'a str>,
    step: usize,
}

/// The lesson part of a session file, read leniently.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RawLesson {
    lesson: Option<String>,
    step: Option<usize>,
}

/// A session read back: settings (each checked), the lesson and step, and notes on what was not
/// used.
#[derive(Debug)]
pub struct Session {
    /// The settings.
    pub saved: Saved,
    /// The lesson open, and its step.
    pub lesson: Option<(String, usize)>,
    /// What could not be used, and why.
    pub notes: Vec<RestoreNote>,
}

/// Whether `path` names a session file.
pub fn is_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// The text of a session file.
pub fn to_text(saved: &Saved, lesson: Option<(&str, usize)>) -> Result<String, String> {
    let file = SessionFile {
        lang: saved.lang,
        config: &saved.config,
        enabled: saved.enabled,
        sharing: saved.sharing,
        lesson: lesson.map(|(id, _)| id),
        step: lesson.map_or(0, |(_, step)| step),
    };
    ron::ser::to_string_pretty(&file, ron::ser::PrettyConfig::default()).map_err(|e| e.to_string())
}

/// Reads a session from its text.
pub fn from_text(text: &str) -> Session {
    let (saved, notes) = restore::restore(text);
    // Said of a session file, not of the app's saved settings.
    let notes = notes
        .into_iter()
        .map(|n| match n {
            RestoreNote::Unreadable(why) => RestoreNote::SessionUnreadable(why),
            other => other,
        })
        .collect();
    let options =
        ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let raw: RawLesson = options.from_str(text).unwrap_or_default();
    let lesson = raw
        .lesson
        .filter(|id| id.len() <= 40)
        .map(|id| (id, raw.step.unwrap_or(0)));
    Session {
        saved,
        lesson,
        notes,
    }
}

/// Reads a session file through the one door for a user's files (a regular file, within a
/// session's budget, UTF-8).
pub fn read(path: &Path) -> Result<Session, crate::i18n::Said> {
    let text = crate::files::read_text(path, crate::files::FileKind::Session)?;
    let session = from_text(&text);
    // Not a session at all: refused whole, so that the window keeps what it has (its note
    // says nothing was changed) instead of taking the defaults.
    if let Some(RestoreNote::SessionUnreadable(why)) = session
        .notes
        .iter()
        .find(|n| matches!(n, RestoreNote::SessionUnreadable(_)))
    {
        return Err(why.clone());
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_round_trips_and_a_damaged_one_keeps_what_it_can() {
        let saved = Saved {
            lang: Lang::Zh,
            config: TrainConfig {
                batch: 256,
                hidden: vec![64, 32],
                ..TrainConfig::default()
            },
            enabled: [true, false],
            ..Saved::default()
        };
        let text = to_text(&saved, Some(("batching", 3))).expect("written");
        let back = from_text(&text);
        assert!(back.notes.is_empty(), "{:?}", back.notes);
        assert_eq!(back.saved, saved);
        assert_eq!(back.lesson, Some(("batching".to_owned(), 3)));
        // A batch no run accepts is named, and the rest stays.
        let damaged = text.replace("batch: 256", "batch: 99999999");
        let back = from_text(&damaged);
        assert_eq!(back.notes.len(), 1, "{:?}", back.notes);
        assert_eq!(back.saved.config.hidden, vec![64, 32]);
        assert_eq!(back.saved.lang, Lang::Zh);
        // Not a session at all: the defaults, a note, no lesson.
        let back = from_text("\u{0}\u{1}garbage(((");
        assert_eq!(back.saved, Saved::default());
        assert!(!back.notes.is_empty());
        assert_eq!(back.lesson, None);
    }
}
