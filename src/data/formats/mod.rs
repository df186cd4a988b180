//! Loading the user's own data: one entry point, [`load`], for a CSV file, an IDX file (plain or
//! gzip) or a folder of images with one sub-folder per class; and [`text`], plain text for a
//! character-level language model (a corpus, not a table of samples).
//!
//! A format is a parser in a file of its own that imports what the parsers share from
//! [`common`] (errors, options, limits, checks); this dispatcher picks the parser. A new format
//! touches its own file and this one.
//!
//! Every refusal names the file, the line or byte offset, and what was expected, because the
//! user's own file is where most lessons go wrong first. Nothing here panics on any input: the
//! fuzz tests in `tests/integration/data_input.rs` feed random bytes and mutated files to every parser.

pub mod common;
pub mod csv;
pub mod idx;
pub mod images;
pub mod stream;
pub mod text;

use std::path::Path;

pub use common::{
    DataError, IMAGE_SIDES, ImageOptions, LoadOptions, MAX_AUTO_CLASSES, MAX_FILE_CLASSES,
    MAX_VALUES_BYTES, MIN_ROWS, Progress, display_name, no_progress,
};
pub use csv::{MAX_FEATURES, USUAL_LABELS};
pub use stream::gunzip_if_needed;

use std::io::BufRead;

use common::io_error;

use crate::data::dataset::Table;

/// Loads a CSV file, an IDX file or an image folder.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Table, DataError> {
    load_with_progress(path, options, &no_progress)
}

/// As [`load`], reporting progress (and stopping when `progress` returns `false`).
pub fn load_with_progress(
    path: &Path,
    options: &LoadOptions,
    progress: Progress,
) -> Result<Table, DataError> {
    let shown = path.display().to_string();
    // A file a browser's page was handed is held in memory (never a folder: a page is not
    // given those); `stream::open` reads it.
    if crate::platform::held::get(path).is_none() {
        let meta = std::fs::metadata(path).map_err(|e| io_error(&shown, &e))?;
        if meta.is_dir() {
            return images::load_folder(path, options, progress);
        }
    }
    let name = display_name(path);
    let text = std::path::Path::new(&name.to_lowercase())
        .extension()
        .is_some_and(|e| e == "txt")
        || name.to_lowercase().ends_with(".txt.gz");
    if text {
        let corpus = text::load(path, options.budget_bytes, progress)?;
        return Ok(crate::data::text_data::table(&corpus, &shown));
    }
    let mut reader = stream::open(path, options.budget_bytes, progress, (0.0, 0.9))?;
    let head = reader
        .fill_buf()
        .map_err(|e| stream::data_error(e, &shown))?;
    let lower = name.to_lowercase();
    // `lower` is already lower-case, so the name tests are case-insensitive.
    let named_idx =
        lower.contains("idx3") || lower.contains("idx1") || lower.rsplit('.').next() == Some("idx");
    if named_idx || idx::has_magic(head) {
        return idx::load_pair(path, &name, reader, options.budget_bytes, progress);
    }
    let table = csv::parse_stream(reader, &shown, &name, options)?;
    if !progress(0.95) {
        return Err(DataError::Cancelled { path: shown });
    }
    Ok(table)
}
