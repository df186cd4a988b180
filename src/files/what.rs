//! What a path is, in words: for messages about a file that is not a regular one.

use std::path::Path;

use crate::i18n::DataKey;

/// The path as messages show it.
pub(super) fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// What a file that is not a regular one is, in words.
#[cfg(unix)]
pub fn special_kind(meta: &std::fs::Metadata) -> DataKey {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        DataKey::KindFifo
    } else if t.is_char_device() {
        DataKey::KindCharDevice
    } else if t.is_block_device() {
        DataKey::KindBlockDevice
    } else if t.is_socket() {
        DataKey::KindSocket
    } else if t.is_dir() {
        DataKey::KindFolder
    } else {
        DataKey::KindSpecial
    }
}

/// What a file that is not a regular one is, in words.
#[cfg(not(unix))]
pub fn special_kind(meta: &std::fs::Metadata) -> DataKey {
    if meta.is_dir() {
        DataKey::KindFolder
    } else {
        DataKey::KindSpecial
    }
}
