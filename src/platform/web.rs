//! A browser's: no data directory of the app's own (eframe keeps its storage in the browser's),
//! and no blocking dialog (a browser's file picker answers later, through an event, and its
//! files are read asynchronously: see `files.rs`).

#[path = "web_files.rs"]
mod files;
pub(super) use files::{hand_out, pick_later, take_dropped};

use std::path::PathBuf;

use super::Pick;

/// The page's one thread: WebAssembly without shared memory cannot start others, so the
/// kernels' parallel loops run in place (rayon's global pool falls back to the calling thread).
/// A page has no file system of its own: its files come through the browser's picker or a
/// drop, read into memory ([`crate::platform::held`]).
pub const HAS_FILES: bool = false;

/// The CPU column names what runs on the processor: the browser's WebAssembly.
pub const CPU_NAME: &str = "WebAssembly";

pub struct KernelPool;

impl KernelPool {
    /// The page's thread, whatever was asked for.
    ///
    /// # Errors
    /// Never: the signature is the desktop's.
    pub fn new(_threads: usize) -> Result<Self, String> {
        Ok(Self)
    }

    /// Runs `f` on the page's thread.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        f()
    }

    /// Nothing to keep awake: there are no other threads.
    pub fn keep_awake(&self) {}

    /// One: the page's.
    pub fn threads(&self) -> usize {
        1
    }
}

pub(super) fn storage_dir(_app_id: &str) -> Option<PathBuf> {
    None
}

pub(super) fn pick(_request: Pick<'_>) -> Option<PathBuf> {
    None
}
