//! Files held in memory: what a browser's page was handed through its file picker or a drop.
//!
//! A page has no file system: the browser hands it a file's name and, once read, its bytes.
//! Those files are held here under their names, and the readers (a data set's, a lesson's, a
//! session's, weights') look here before the disk, so a handed file goes through the same
//! checks, budgets and messages as one opened by path on the desktop. Each hand-over replaces
//! what was held before: the page keeps the last files the user gave it (a data set is read
//! again when its options change, and when a run starts), never an accumulation of them.
//!
//! The desktop never holds anything (its files are opened by path); the tests hold files here
//! to run the page's readers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// One handed file.
#[derive(Clone, Debug)]
pub enum Held {
    /// Its bytes, as the browser read them.
    Read(Arc<[u8]>),
    /// Not read, because it is larger than a reader of any kind accepts: its size, for the
    /// refusal the reader makes (the same one as for a file of that size on disk).
    TooLarge(u64),
    /// The browser could not read it: its words.
    Unreadable(String),
}

impl Held {
    /// Its size in bytes, as the browser reported it.
    pub fn len(&self) -> u64 {
        match self {
            Held::Read(bytes) => bytes.len() as u64,
            Held::TooLarge(len) => *len,
            Held::Unreadable(_) => 0,
        }
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The most bytes a handed file is read with: the largest budget of any reader (a data set's,
/// 1 GiB), so every larger file is refused by its reader with its own message, without the page
/// first copying into its memory what it would throw away.
pub const MOST_READ: u64 = 1 << 30;

static HELD: Mutex<Vec<(PathBuf, Held)>> = Mutex::new(Vec::new());

/// Holds `files`, by name, in place of what was held before; returns the path each is held
/// under, in the order given.
pub fn hold(files: Vec<(String, Held)>) -> Vec<PathBuf> {
    let held: Vec<(PathBuf, Held)> = files
        .into_iter()
        .map(|(name, file)| (held_path(&name), file))
        .collect();
    let paths = held.iter().map(|(path, _)| path.clone()).collect();
    *HELD.lock().unwrap_or_else(PoisonError::into_inner) = held;
    paths
}

/// The file held under `path`, if one is.
pub fn get(path: &Path) -> Option<Held> {
    HELD.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(held, _)| held == path)
        .map(|(_, file)| file.clone())
}

/// Where a handed file named `name` is held: its name alone (a browser does not say where the
/// file was; a name with a folder in it keeps only its last part).
fn held_path(name: &str) -> PathBuf {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    PathBuf::from(if last.is_empty() { "unnamed" } else { last })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_over_replaces_what_was_held_and_keeps_names_only() {
        let first = hold(vec![("a.csv".into(), Held::Read(Arc::from(&b"x"[..])))]);
        assert_eq!(first, [PathBuf::from("a.csv")]);
        assert_eq!(get(Path::new("a.csv")).map(|h| h.len()), Some(1));
        let second = hold(vec![
            ("folder/b.csv".into(), Held::TooLarge(5 << 30)),
            (String::new(), Held::Unreadable("gone".into())),
        ]);
        assert_eq!(second, [PathBuf::from("b.csv"), PathBuf::from("unnamed")]);
        assert!(
            get(Path::new("a.csv")).is_none(),
            "the first pick is let go"
        );
        assert_eq!(get(Path::new("b.csv")).map(|h| h.len()), Some(5 << 30));
        assert!(get(Path::new("unnamed")).is_some_and(|h| h.is_empty()));
    }
}
