//! One door for every file a user hands BatchScope and one for every file it writes.
//!
//! Reading ([`read_text`], [`open_regular`]): only a regular file is opened — a named pipe, a
//! device, a socket or a folder is refused at once, saying what it is (a pipe would block the
//! reader forever, `/dev/zero` would never end). On Unix the file is opened without blocking and
//! checked again once open, so one swapped for a pipe in between is refused too. Its size is
//! checked while reading, against a budget that fits its kind, not from the size the system
//! reports (0 for a pipe or a device). Text must be UTF-8; a byte that is not is named by line
//! and column, and so is a parse error ([`parse_error`]), with a short excerpt, never the whole
//! offending line.
//!
//! Writing ([`check_destination`], [`write_atomic`]): the destination is checked before any
//! work (its folder exists, it is not a folder or a device, it can be written), and the file is
//! written under a temporary name beside it and renamed when complete, so a failure — a full
//! disk, a file-size limit — leaves nothing half-written.

mod what;
mod write;

use what::shown;
pub use what::special_kind;
pub use write::{check_destination, write_atomic, write_atomic_with};

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::i18n::{Arg, FileKey, Said};
use crate::platform::held::Held;

/// What a file is, for its messages and its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A lesson (TOML).
    Lesson,
    /// A saved session (RON).
    Session,
    /// Hardware profiles (TOML).
    Profile,
    /// The GPU's tuned kernel choice (JSON).
    KernelCache,
    /// The window's saved settings (RON).
    Settings,
    /// A model as a list of layers (TOML).
    Model,
    /// A model's weights (safetensors).
    Weights,
}

impl FileKind {
    /// The most bytes a file of this kind may have: far more than any real one.
    pub fn budget_bytes(self) -> u64 {
        match self {
            // The longest shipped lesson is a few KiB.
            FileKind::Lesson => 256 << 10,
            // A session, or a list of layers, is a few hundred bytes to a few KiB.
            FileKind::Session | FileKind::Model => 64 << 10,
            // A few dozen profiles, or 32 adapters' tunings, are tens of KiB.
            FileKind::Profile | FileKind::KernelCache => 1 << 20,
            // The run history lives in the settings.
            FileKind::Settings => 16 << 20,
            // The largest model the settings allow (64 Mi parameters) in f32, and its header.
            FileKind::Weights => (256 << 20) + (1 << 20),
        }
    }

    /// The kind in words, in the translation table.
    fn key(self) -> FileKey {
        match self {
            FileKind::Lesson => FileKey::WhatLesson,
            FileKind::Session => FileKey::WhatSession,
            FileKind::Profile => FileKey::WhatProfile,
            FileKind::KernelCache => FileKey::WhatKernelCache,
            FileKind::Settings => FileKey::WhatSettings,
            FileKind::Model => FileKey::WhatModel,
            FileKind::Weights => FileKey::WhatWeights,
        }
    }
}

/// Opens `path` for reading if it is a regular file; refuses anything else, saying what it is.
/// Returns the open file and its size as the system reports it.
pub fn open_regular(path: &Path) -> Result<(File, u64), Said> {
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, &e))?;
    refuse_special(path, &meta)?;
    let file = open_without_blocking(path).map_err(|e| cannot_read(path, &e))?;
    // What was opened, not what was there a moment before.
    let meta = file.metadata().map_err(|e| cannot_read(path, &e))?;
    refuse_special(path, &meta)?;
    Ok((file, meta.len()))
}

#[cfg(unix)]
fn open_without_blocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a named pipe with no writer returns at once instead of waiting for
    // one; for a regular file it changes nothing.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

fn refuse_special(path: &Path, meta: &std::fs::Metadata) -> Result<(), Said> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = Said::new(special_kind(meta), &[]);
    Err(Said::with(
        FileKey::NotRegular,
        &[
            ("path", Arg::Plain(&shown(path))),
            ("kind", Arg::Said(&kind)),
        ],
    ))
}

fn cannot_read(path: &Path, e: &std::io::Error) -> Said {
    Said::new(FileKey::CannotRead, &[("path", &shown(path)), ("why", e)])
}

/// That `path`, a `kind` of file, is past its budget.
fn too_large(path: &Path, kind: FileKind) -> Said {
    let what = Said::new(kind.key(), &[]);
    Said::with(
        FileKey::TooLarge,
        &[
            ("path", Arg::Plain(&shown(path))),
            (
                "max",
                Arg::Plain(&crate::units::format_bytes(kind.budget_bytes())),
            ),
            ("what", Arg::Said(&what)),
        ],
    )
}

/// Whether `path` could be read as a `kind` of file: a regular file within its budget. Reads
/// nothing (for a file another reader then reads, such as eframe's settings).
pub fn check_readable(path: &Path, kind: FileKind) -> Result<(), Said> {
    let (_, len) = open_regular(path)?;
    if len > kind.budget_bytes() {
        return Err(too_large(path, kind));
    }
    Ok(())
}

/// The bytes of the regular file `path`, a `kind` of file, refused past its budget (counted as
/// they are read, not only from the reported size).
pub fn read_bytes(path: &Path, kind: FileKind) -> Result<Vec<u8>, Said> {
    if let Some(file) = crate::platform::held::get(path) {
        return read_held(path, &file, kind);
    }
    let (file, len) = open_regular(path)?;
    let max_bytes = kind.budget_bytes();
    if len > max_bytes {
        return Err(too_large(path, kind));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot_read(path, &e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(path, kind));
    }
    Ok(bytes)
}

/// A file a browser's page was handed, read as [`read_bytes`] reads one from disk.
fn read_held(path: &Path, file: &Held, kind: FileKind) -> Result<Vec<u8>, Said> {
    match file {
        Held::Read(bytes) if bytes.len() as u64 <= kind.budget_bytes() => Ok(bytes.to_vec()),
        Held::Read(_) | Held::TooLarge(_) => Err(too_large(path, kind)),
        Held::Unreadable(why) => Err(cannot_read(path, &std::io::Error::other(why.clone()))),
    }
}

/// The text of the regular file `path`, a `kind` of file: within its budget, and UTF-8 (a byte
/// that is not is named by line and column).
pub fn read_text(path: &Path, kind: FileKind) -> Result<String, Said> {
    let bytes = read_bytes(path, kind)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // The text up to the bad byte is valid: count its lines there.
        let before = String::from_utf8_lossy(&bytes[..at]);
        let place = Place::of(&before, before.len());
        Said::new(
            FileKey::NotUtf8,
            &[
                ("path", &shown(path)),
                ("line", &place.line),
                ("column", &place.column),
                ("byte", &format!("0x{:02X}", bytes[at])),
            ],
        )
    })
}

/// Where in a text a byte offset is: line and column from 1, and a short excerpt around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// At most [`EXCERPT_CHARS`] characters of the line around the place, `…` where cut.
    pub excerpt: String,
}

/// The longest excerpt a message quotes: a file's one-megabyte line is not echoed back.
pub const EXCERPT_CHARS: usize = 60;

impl Place {
    /// The place of byte `offset` (clamped to the text, and to a character boundary) in `text`.
    pub fn of(text: &str, offset: usize) -> Self {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        let line = text[..offset].matches('\n').count() + 1;
        let column = text[line_start..offset].chars().count() + 1;
        let line_text = &text[line_start..line_end];
        let chars: Vec<char> = line_text.trim_end_matches('\r').chars().collect();
        let at = column - 1;
        let from = at.saturating_sub(EXCERPT_CHARS / 2);
        let to = (from + EXCERPT_CHARS).min(chars.len());
        let from = to.saturating_sub(EXCERPT_CHARS).min(from);
        let mut excerpt: String = chars[from..to].iter().collect();
        if from > 0 {
            excerpt.insert(0, '…');
        }
        if to < chars.len() {
            excerpt.push('…');
        }
        Self {
            line,
            column,
            excerpt,
        }
    }
}

/// A parse error of `path` at byte `offset` of `text`: the file, the line and column, what was
/// wrong (`why`, the parser's words without its own excerpt), and a short excerpt.
pub fn parse_error(path: &str, text: &str, offset: usize, why: &str) -> Said {
    let place = Place::of(text, offset);
    Said::new(
        FileKey::ParseAt,
        &[
            ("path", &path),
            ("line", &place.line),
            ("column", &place.column),
            ("why", &first_line(why)),
            ("excerpt", &place.excerpt),
        ],
    )
}

/// A parse error of `path` at 1-based `line` and `column` (in characters) of `text`, as RON and
/// JSON readers report them.
pub fn parse_error_at_line(path: &str, text: &str, line: usize, column: usize, why: &str) -> Said {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = &text[start.min(text.len())..];
    let offset = start
        + rest
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i);
    parse_error(path, text, offset, why)
}

/// A parser's message without the excerpt some parsers add below it: its first line, cut to a
/// readable length.
pub fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default().trim();
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod generated;
