//! What the desktop and a browser do differently, in one place: where the app keeps its files,
//! the system's file dialog or the browser's picker, dropped files, saved files, and the CPU
//! kernels' threads. The desktop's (`native.rs`) uses eframe's data directory and rfd's
//! blocking dialog; a browser's WebAssembly (`web.rs`) has neither (its storage is the
//! browser's, through eframe, and its files come through the browser's own picker), so the core
//! names no target and each target's code stays in its own file.

use std::path::{Path, PathBuf};

pub mod held;

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

/// What files handed over later answer: the path to read the first under, or `None` when the
/// user cancelled. A browser's are held in memory ([`crate::platform::held`]), where every reader
/// looks first.
pub type Answer = Box<dyn FnOnce(Option<PathBuf>) + Send>;

/// Asks for files to open, of `request`'s filters, without waiting for the answer: in a
/// browser, its own picker (several files at once, for an IDX pair), each file read into
/// memory and held, then `answer`; on the desktop, the system's dialog.
pub fn pick_later(request: Pick<'_>, answer: Answer) {
    target::pick_later(request, answer);
}

/// Files dropped on the window, answered once they can be read: on the desktop at once, by
/// path; in a browser once read into memory and held.
pub fn take_dropped(files: &[egui::DroppedFileHandle], answer: Answer) {
    target::take_dropped(files, answer);
}

/// Hands `bytes` to the user as a file named as `path` is: a browser's download (a page can
/// write no file). The desktop writes by path (`HAS_FILES`) and hands nothing out.
///
/// # Errors
/// Why the browser refused, in its words.
pub fn hand_out(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = path
        .file_name()
        .map_or_else(|| "batchscope".into(), |n| n.to_string_lossy());
    target::hand_out(&name, bytes)
}
