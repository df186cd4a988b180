//! A browser's: no data directory of the app's own (eframe keeps its storage in the browser's),
//! and no blocking dialog (a browser's file picker answers later, through an event).

use std::path::PathBuf;

use super::Pick;

pub(super) fn storage_dir(_app_id: &str) -> Option<PathBuf> {
    None
}

pub(super) fn pick(_request: Pick<'_>) -> Option<PathBuf> {
    None
}
