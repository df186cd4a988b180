//! The desktop's: eframe's data directory and rfd's dialog.

use std::path::PathBuf;

use super::{Pick, Picked};

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
