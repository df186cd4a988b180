//! Files held in memory: what a browser's page was handed through its file picker or a drop.
//!
//! A page has no file system: the browser hands it a file's name and, once read, its bytes.
//! Those files are held here under their names, and the readers (a data set's, a lesson's, a
//! session's, weights') look here before the disk, so a handed file goes through the same
//! checks, budgets and messages as one opened by path on the desktop. The page keeps what the
//! user gave it (a data set is read again when its options change and when a run starts, so a
//! lesson opened after it must not let it go): a file of the same name replaces the older one,
//! and past [`MOST_HELD`] bytes together the oldest go first.
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

    /// The bytes it takes in the page's memory.
    fn in_memory(&self) -> u64 {
        match self {
            Held::Read(bytes) => bytes.len() as u64,
            Held::TooLarge(_) | Held::Unreadable(_) => 0,
        }
    }
}

/// The most bytes a handed file is read with: the largest budget of any reader (a data set's,
/// 1 GiB), so every larger file is refused by its reader with its own message, without the page
/// first copying into its memory what it would throw away.
pub const MOST_READ: u64 = 1 << 30;

/// The most bytes held together: past it, the oldest files are let go (never those of the
/// hand-over just made).
pub const MOST_HELD: u64 = MOST_READ;

/// The held files, oldest first.
static HELD: Mutex<Vec<(PathBuf, Held)>> = Mutex::new(Vec::new());

/// Holds `files` by name, each in place of one of the same name; returns the path each is held
/// under, in the order given.
pub fn hold(files: Vec<(String, Held)>) -> Vec<PathBuf> {
    hold_within(files, MOST_HELD)
}

/// [`hold`], with at most `budget` bytes held together.
fn hold_within(files: Vec<(String, Held)>, budget: u64) -> Vec<PathBuf> {
    let new: Vec<(PathBuf, Held)> = files
        .into_iter()
        .map(|(name, file)| (held_path(&name), file))
        .collect();
    let paths: Vec<PathBuf> = new.iter().map(|(path, _)| path.clone()).collect();
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    held.retain(|(path, _)| !paths.contains(path));
    held.extend(new);
    let mut total: u64 = held.iter().map(|(_, file)| file.in_memory()).sum();
    while total > budget && held.len() > paths.len() {
        total -= held.remove(0).1.in_memory();
    }
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
    fn files_are_held_by_name_and_the_oldest_let_go_past_the_budget() {
        let bytes = |n: usize| Held::Read(Arc::from(vec![7u8; n]));
        let first = hold(vec![("a.csv".into(), bytes(1))]);
        assert_eq!(first, [PathBuf::from("a.csv")]);
        // A lesson opened after a data set keeps the data set.
        let second = hold(vec![
            ("folder/lesson.toml".into(), bytes(2)),
            (String::new(), Held::Unreadable("gone".into())),
        ]);
        assert_eq!(
            second,
            [PathBuf::from("lesson.toml"), PathBuf::from("unnamed")]
        );
        assert_eq!(get(Path::new("a.csv")).map(|h| h.len()), Some(1));
        assert!(get(Path::new("unnamed")).is_some_and(|h| h.is_empty()));
        // The same name replaces; a file too large to read takes no memory.
        hold(vec![
            ("a.csv".into(), bytes(3)),
            ("b.csv".into(), Held::TooLarge(5 << 30)),
        ]);
        assert_eq!(get(Path::new("a.csv")).map(|h| h.len()), Some(3));
        assert_eq!(get(Path::new("b.csv")).map(|h| h.len()), Some(5 << 30));
        // Past the budget the oldest go, never the newest hand-over.
        let large = 100 - 2;
        hold_within(vec![("large.csv".into(), bytes(large))], 100);
        assert!(get(Path::new("lesson.toml")).is_none(), "the oldest went");
        assert!(get(Path::new("a.csv")).is_none());
        assert_eq!(
            get(Path::new("large.csv")).map(|h| h.len()),
            Some(large as u64)
        );
    }
}
