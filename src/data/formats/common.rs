//! What every format's parser shares: the error type, the read options and limits, reading a
//! file (gzip or not) within the memory budget, and the checks every table must pass.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::dataset::Task;
use crate::i18n::{Arg, DataKey, Said};
use crate::units::format_bytes;

/// Most classes a file may have: a network with more outputs than this is not a lesson.
pub const MAX_FILE_CLASSES: usize = 100;
/// The default memory budget of one data set: most bytes its values may take as `f32`, and most
/// bytes a file (or its decompressed contents) may have.
pub const MAX_VALUES_BYTES: u64 = 1 << 30;
/// Fewest rows a file must have.
pub const MIN_ROWS: usize = 10;
/// Integer labels with at most this many distinct values are read as classes when the task is
/// chosen automatically; more, or any fraction, make the column a regression target.
pub const MAX_AUTO_CLASSES: usize = 20;

/// Why a data set could not be loaded.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum DataError {
    /// The file or folder could not be read at all.
    #[error("{}", self.said())]
    Io {
        /// The file.
        path: String,
        /// The system's reason, and what to do.
        message: Said,
    },
    /// A line of a text file is wrong.
    #[error("{}", self.said())]
    Line {
        /// The file.
        path: String,
        /// 1-based line number.
        line: u64,
        /// What was found and what was expected.
        message: Said,
    },
    /// A byte of a binary file (or of a text file's encoding) is wrong.
    #[error("{}", self.said())]
    Byte {
        /// The file.
        path: String,
        /// Byte offset where the problem is: in the file itself for a damaged gzip stream,
        /// otherwise in the decompressed contents.
        offset: u64,
        /// What was found and what was expected.
        message: Said,
    },
    /// The data is well-formed but outside what the app trains on.
    #[error("{}", self.said())]
    Refused {
        /// The file or folder.
        path: String,
        /// What is wrong, with the number and the limit.
        message: Said,
    },
    /// The user cancelled the load.
    #[error("{}", self.said())]
    Cancelled {
        /// The file or folder.
        path: String,
    },
}

impl DataError {
    /// The whole message in both languages: the file, the place in it, and what is wrong.
    pub fn said(&self) -> Said {
        match self {
            DataError::Io { path: p, message } | DataError::Refused { path: p, message } => {
                Said::with(
                    DataKey::At,
                    &[("path", Arg::Plain(p)), ("message", Arg::Said(message))],
                )
            }
            DataError::Line {
                path: p,
                line,
                message,
            } => Said::with(
                DataKey::AtLine,
                &[
                    ("path", Arg::Plain(p)),
                    ("line", Arg::Plain(line)),
                    ("message", Arg::Said(message)),
                ],
            ),
            DataError::Byte {
                path: p,
                offset,
                message,
            } => Said::with(
                DataKey::AtByte,
                &[
                    ("path", Arg::Plain(p)),
                    ("offset", Arg::Plain(offset)),
                    ("message", Arg::Said(message)),
                ],
            ),
            DataError::Cancelled { path: p } => Said::with(
                DataKey::At,
                &[
                    ("path", Arg::Plain(p)),
                    ("message", Arg::Said(&Said::new(DataKey::Cancelled, &[]))),
                ],
            ),
        }
    }
}

/// Side and colour of images read from a folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageOptions {
    /// Every image is resized to `side × side` pixels.
    pub side: usize,
    /// Keep red, green and blue (3 features per pixel) instead of grey (1).
    pub rgb: bool,
}

impl Default for ImageOptions {
    fn default() -> Self {
        Self {
            side: 28,
            rgb: false,
        }
    }
}

/// Smallest and largest image side the app resizes to.
pub const IMAGE_SIDES: std::ops::RangeInclusive<usize> = 4..=128;

/// How to read a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LoadOptions {
    /// The label column of a CSV, by name or by 0-based index; by default a column named
    /// `label`, `target`, `class`, `species` or `y`, else the last.
    #[serde(default)]
    pub label: Option<String>,
    /// Classification or regression; `None` lets the label column decide (text or at most
    /// [`MAX_AUTO_CLASSES`] integers: classes; otherwise a regression target).
    #[serde(default)]
    pub task: Option<Task>,
    /// For image folders.
    #[serde(default)]
    pub image: ImageOptions,
    /// The memory budget: most bytes a file, its decompressed contents, or its values as `f32`
    /// may take; anything larger is refused with both numbers.
    #[serde(skip, default = "default_budget")]
    pub budget_bytes: u64,
}

fn default_budget() -> u64 {
    MAX_VALUES_BYTES
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            label: None,
            task: None,
            image: ImageOptions::default(),
            budget_bytes: MAX_VALUES_BYTES,
        }
    }
}

/// Called with the share of the work done, in `[0, 1]`; returning `false` cancels the load.
pub type Progress<'a> = &'a (dyn Fn(f32) -> bool + Sync);

/// A progress callback that never cancels.
pub fn no_progress(_: f32) -> bool {
    true
}

/// The file or folder name, for display.
pub fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// An I/O error as the user should read it: what happened, and what to do.
pub(crate) fn io_error(path: &str, e: &std::io::Error) -> DataError {
    let message = match e.kind() {
        std::io::ErrorKind::NotFound => Said::new(DataKey::NotFound, &[]),
        std::io::ErrorKind::PermissionDenied => Said::new(DataKey::PermissionDenied, &[]),
        _ => Said::new(DataKey::CannotRead, &[("why", &e)]),
    };
    DataError::Io {
        path: path.to_owned(),
        message,
    }
}

/// The refusal of something larger than the memory budget.
pub(crate) fn too_large(path: &str, what: &Said, bytes: u64, budget: u64) -> DataError {
    DataError::Refused {
        path: path.to_owned(),
        message: Said::with(
            DataKey::TooLarge,
            &[
                ("what", Arg::Said(what)),
                ("bytes", Arg::Plain(&format_bytes(bytes))),
                ("budget", Arg::Plain(&format_bytes(budget))),
            ],
        ),
    }
}

/// Fails with [`DataError::Refused`] when fewer than [`MIN_ROWS`] rows remain.
pub(crate) fn check_rows(path: &str, rows: usize, missing: usize) -> Result<(), DataError> {
    if rows < MIN_ROWS {
        let message = if missing > 0 {
            Said::new(
                DataKey::FewRowsMissing,
                &[("rows", &rows), ("missing", &missing), ("min", &MIN_ROWS)],
            )
        } else {
            Said::new(DataKey::FewRows, &[("rows", &rows), ("min", &MIN_ROWS)])
        };
        return Err(DataError::Refused {
            path: path.to_owned(),
            message,
        });
    }
    Ok(())
}

/// The refusal of a label column with more distinct values (`count`) than classes.
pub(crate) fn too_many_classes(path: &str, column: &str, count: &Said) -> DataError {
    DataError::Refused {
        path: path.to_owned(),
        message: Said::with(
            DataKey::TooManyClasses,
            &[
                ("column", Arg::Plain(&column)),
                ("count", Arg::Said(count)),
                ("max", Arg::Plain(&MAX_FILE_CLASSES)),
            ],
        ),
    }
}

/// Class names for label texts: integers in numeric order, other text in alphabetical order;
/// and each label's class index. Refuses one class, or more than [`MAX_FILE_CLASSES`].
pub(crate) fn classes_of(
    labels: &[&str],
    column: &str,
    path: &str,
) -> Result<(Vec<String>, Vec<f32>), DataError> {
    // Whole numbers, `3` or `3.0` alike, are classes by value.
    let integers: Option<Vec<i64>> = labels
        .iter()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.fract() == 0.0 && v.abs() < 1e15)
                .map(|v| v as i64)
        })
        .collect();
    let names: Vec<String> = if let Some(ints) = &integers {
        let mut sorted = ints.clone();
        sorted.sort_unstable();
        sorted.dedup();
        sorted.iter().map(i64::to_string).collect()
    } else {
        let mut text: Vec<String> = labels.iter().map(|l| (*l).to_owned()).collect();
        text.sort();
        text.dedup();
        text
    };
    if names.len() > MAX_FILE_CLASSES {
        let count = Said::verbatim(names.len().to_string());
        return Err(too_many_classes(path, column, &count));
    }
    if names.len() < 2 {
        let value = names
            .first()
            .map_or_else(|| Said::new(DataKey::NoValue, &[]), Said::verbatim);
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: Said::with(
                DataKey::OneClass,
                &[
                    ("column", Arg::Plain(&column)),
                    ("value", Arg::Said(&value)),
                ],
            ),
        });
    }
    let index: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let y = match integers {
        Some(ints) => ints
            .iter()
            .map(|v| index.get(v.to_string().as_str()).copied().unwrap_or(0) as f32)
            .collect(),
        None => labels
            .iter()
            .map(|l| index.get(l).copied().unwrap_or(0) as f32)
            .collect(),
    };
    Ok((names, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_labels_sort_numerically_and_text_alphabetically() {
        let (names, y) = classes_of(&["10", "2", "2.0", "10", "3"], "c", "f").expect("valid");
        assert_eq!(names, ["2", "3", "10"]);
        assert_eq!(y, [2.0, 0.0, 0.0, 2.0, 1.0]);
        let (names, y) = classes_of(&["dog", "cat", "dog"], "c", "f").expect("valid");
        assert_eq!(names, ["cat", "dog"]);
        assert_eq!(y, [1.0, 0.0, 1.0]);
        let err = classes_of(&["a", "a"], "kind", "f.csv").expect_err("one class");
        assert_eq!(
            err.to_string(),
            "f.csv: the label column `kind` has one class only (a): a classifier needs at least two"
        );
    }
}
