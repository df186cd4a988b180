//! The door for writing: the destination checked before any work, and the file written under a
//! temporary name beside it, then renamed, so that a failed write leaves nothing behind.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::what::{shown, special_kind};
use crate::i18n::{Arg, FileKey, Said};

/// Checks that `path` can be written, before the work that makes its contents: its folder
/// exists and is a folder, the path is not a folder, a device or a pipe, and a file can be
/// created beside it (tried, then removed).
pub fn check_destination(path: &Path) -> Result<(), Said> {
    let folder = folder_of(path);
    match std::fs::metadata(&folder) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(Said::new(
                FileKey::DestFolderIsFile,
                &[("path", &shown(path)), ("folder", &folder.display())],
            ));
        }
        Err(_) => {
            return Err(Said::new(
                FileKey::DestNoFolder,
                &[("path", &shown(path)), ("folder", &folder.display())],
            ));
        }
    }
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        let kind = Said::new(special_kind(&meta), &[]);
        return Err(Said::with(
            FileKey::DestNotRegular,
            &[
                ("path", Arg::Plain(&shown(path))),
                ("kind", Arg::Said(&kind)),
            ],
        ));
    }
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().readonly()
    {
        return Err(Said::new(
            FileKey::DestNotWritable,
            &[("path", &shown(path)), ("why", &"read-only")],
        ));
    }
    // The surest test of "can be written": write something beside it.
    let probe = temporary(path);
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Said::new(
            FileKey::DestNotWritable,
            &[("path", &shown(path)), ("why", &e)],
        )),
    }
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Said> {
    write_atomic_with(path, &mut |w| w.write_all(bytes))
}

/// Writes what `fill` writes to `path` whole or not at all: into a temporary file beside it,
/// flushed and synced, then renamed over it. On any failure the temporary file is removed and
/// `path` is as it was.
pub fn write_atomic_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Said> {
    // A browser's page writes no file: what it saves is handed to the user as a download.
    if !crate::platform::HAS_FILES {
        let mut bytes = Vec::new();
        return fill(&mut bytes)
            .map_err(|e| e.to_string())
            .and_then(|()| crate::platform::hand_out(path, &bytes))
            .map_err(|why| {
                Said::new(
                    FileKey::DestNotWritable,
                    &[("path", &shown(path)), ("why", &why)],
                )
            });
    }
    check_destination(path)?;
    let temporary = temporary(path);
    let written = (|| {
        let file = std::fs::File::create(&temporary)?;
        let mut out = std::io::BufWriter::new(file);
        fill(&mut out)?;
        let file = out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        Said::new(FileKey::WriteFailed, &[("path", &shown(path)), ("why", &e)])
    })
}

/// The folder `path` is in (the current one for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A name beside `path` for writing before the rename: hidden, and the process's own.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    folder_of(path).join(format!(".{name}.{}.partial", std::process::id()))
}
