//! The desktop's: eframe's data directory and rfd's dialog.

use std::path::PathBuf;

use super::{Answer, Pick, Picked};

/// A rayon pool of its own, so the CPU's kernels run on the threads the user chose.
#[path = "kernel_pool.rs"]
mod kernel_pool;
pub use kernel_pool::KernelPool;

/// The desktop has files: its dialogs open and save them.
pub const HAS_FILES: bool = true;

/// The CPU column names the processor.
pub const CPU_NAME: &str = "CPU";

pub(super) fn storage_dir(app_id: &str) -> Option<PathBuf> {
    eframe::storage_dir(app_id)
}

pub(super) fn pick(request: Pick<'_>) -> Option<PathBuf> {
    let mut dialog = rfd::FileDialog::new().set_title(request.title);
    if let Some(dir) = request.start_dir {
        dialog = dialog.set_directory(dir);
    }
    for (name, extensions) in request.filters {
        dialog = dialog.add_filter(*name, extensions);
    }
    match request.what {
        Picked::File => dialog.pick_file(),
        Picked::Folder => dialog.pick_folder(),
        Picked::Save(name) => dialog.set_file_name(name).save_file(),
    }
}

/// The desktop's opener shows the system's dialog on a job of its own (`ui/open.rs`) and never
/// calls this: here the answer comes once the dialog closes.
pub(super) fn pick_later(request: Pick<'_>, answer: Answer) {
    answer(pick(request));
}

pub(super) fn take_dropped(files: &[egui::DroppedFileHandle], answer: Answer) {
    answer(files.first().map(|f| f.path().to_path_buf()));
}

pub(super) fn hand_out(_name: &str, _bytes: &[u8]) -> Result<(), String> {
    Err("the desktop app writes files where they are saved, and hands none out".into())
}
