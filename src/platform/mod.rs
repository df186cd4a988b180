//! What the desktop and a browser do differently, in one place: where the app keeps its files,
//! the system's file dialog, and the CPU kernels' threads. The desktop's (`native.rs`) uses eframe's data directory and
//! rfd's blocking dialog; a browser's WebAssembly (`web.rs`) has neither (its storage is the
//! browser's, through eframe, and its files come through the browser's own picker), so the core
//! names no target and each target's code stays in its own file.

use std::path::{Path, PathBuf};

#[cfg_attr(target_arch = "wasm32", path = "web.rs")]
#[cfg_attr(not(target_arch = "wasm32"), path = "native.rs")]
mod target;

/// What a file dialog asks for.
#[derive(Clone, Copy, Debug)]
pub struct Pick<'a> {
    /// The dialog's title.
    pub title: &'a str,
    /// Where it opens.
    pub start_dir: Option<&'a Path>,
    /// Named filters, each with its extensions (`*` for any), first first.
    pub filters: &'a [(&'a str, &'a [&'a str])],
    /// What it picks.
    pub what: Picked<'a>,
}

/// A file to open, a folder, or a file to save under a suggested name.
#[derive(Clone, Copy, Debug)]
pub enum Picked<'a> {
    File,
    Folder,
    Save(&'a str),
}

/// The threads the CPU's kernels run on: a rayon pool of its own on the desktop. A browser's
/// WebAssembly without shared memory has one thread, the page's: there every kernel runs on it
/// (rayon's global pool falls back to the calling thread), and the CPU column says so.
pub use target::{CPU_NAME, HAS_FILES, KernelPool};

/// The folder where the app named `app_id` keeps its settings and caches, where there is one.
pub fn storage_dir(app_id: &str) -> Option<PathBuf> {
    target::storage_dir(app_id)
}

/// Shows the system's dialog and waits for the user's answer (`None`: cancelled, or no dialog
/// on this target).
pub fn pick(request: Pick<'_>) -> Option<PathBuf> {
    target::pick(request)
}
