//! Open…: the system's file dialog (through the XDG desktop portal on Linux), and BatchScope's own
//! file browser where there is none.
//!
//! Where no portal (and no zenity) is installed, `rfd` returns "nothing chosen" at once and
//! without an error — indistinguishable from a cancel, except that no person cancels a dialog
//! within a fraction of a second. So an answer that fast means "there is no system dialog": the
//! in-app browser opens instead, and is used from then on.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::i18n::{Key, Lang};

/// An empty answer faster than this means the system dialog never showed.
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(400);

/// What the user wants to open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpenKind {
    #[default]
    /// A CSV or IDX file.
    File,
    /// A folder of images, one sub-folder per class.
    Folder,
    /// Where to save the recorded trace (a save dialog).
    SaveTrace,
}

fn title_key(kind: OpenKind) -> Key {
    match kind {
        OpenKind::File => Key::OpenFileTitle,
        OpenKind::Folder => Key::OpenFolderTitle,
        OpenKind::SaveTrace => Key::ExportTrace,
    }
}

struct Pending {
    kind: OpenKind,
    since: Instant,
    answer: Receiver<Option<PathBuf>>,
}

/// The state of Open…: a system dialog waiting on its thread, or the in-app browser.
#[derive(Default)]
pub struct FileOpener {
    pending: Option<Pending>,
    browser: Option<egui_file::FileDialog>,
    /// What the in-app browser was opened for.
    browser_kind: OpenKind,
    /// Set once the system dialog turned out not to exist; the in-app browser is used from then.
    pub native_missing: bool,
    /// Where the last file came from, so the next dialog starts there.
    last_dir: Option<PathBuf>,
}

impl FileOpener {
    /// Whether a dialog (system or in-app) is open.
    pub fn is_open(&self) -> bool {
        self.pending.is_some()
            || self
                .browser
                .as_ref()
                .is_some_and(egui_file::FileDialog::visible)
    }

    /// Opens the system dialog on a thread of its own (it blocks until the user answers), or the
    /// in-app browser where there is no system dialog.
    pub fn start(&mut self, kind: OpenKind, ctx: &egui::Context, lang: Lang) {
        if self.is_open() {
            return;
        }
        if self.native_missing {
            self.open_browser(kind, lang);
            return;
        }
        let (tx, answer) = mpsc::channel();
        let start_dir = self.last_dir.clone();
        let ctx = ctx.clone();
        let title = lang.tr(title_key(kind));
        let spawned = std::thread::Builder::new()
            .name("file-dialog".into())
            .spawn(move || {
                let mut dialog = rfd::FileDialog::new().set_title(title);
                if let Some(dir) = start_dir {
                    dialog = dialog.set_directory(dir);
                }
                let chosen = match kind {
                    OpenKind::File => dialog
                        .add_filter("CSV, IDX", &["csv", "tsv", "txt", "gz", "idx", "ubyte"])
                        .add_filter("*", &["*"])
                        .pick_file(),
                    OpenKind::Folder => dialog.pick_folder(),
                    OpenKind::SaveTrace => dialog
                        .add_filter("Chrome trace JSON", &["json"])
                        .set_file_name("batchscope-trace.json")
                        .save_file(),
                };
                let _ = tx.send(chosen);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.pending = Some(Pending {
                    kind,
                    since: Instant::now(),
                    answer,
                });
            }
            Err(_) => self.open_browser(kind, lang),
        }
    }

    fn open_browser(&mut self, kind: OpenKind, lang: Lang) {
        let mut browser = match kind {
            OpenKind::File => egui_file::FileDialog::open_file(),
            OpenKind::Folder => egui_file::FileDialog::select_folder(),
            OpenKind::SaveTrace => {
                egui_file::FileDialog::save_file().default_filename("batchscope-trace.json")
            }
        };
        if let Some(dir) = &self.last_dir {
            browser = browser.initial_path(dir.clone());
        }
        let mut browser = browser
            .title(lang.tr(title_key(kind)))
            .open_button_text(lang.tr(Key::OpenButton).into())
            .cancel_button_text(lang.tr(Key::Cancel).into())
            .file_label_text(lang.tr(Key::FileLabel).into())
            .show_hidden_checkbox_text(lang.tr(Key::ShowHidden).into())
            .refresh_button_hover_text(lang.tr(Key::Refresh).into())
            .parent_folder_button_hover_text(lang.tr(Key::ParentFolder).into())
            .show_new_folder(false)
            .show_rename(false)
            .default_size([560.0, 420.0]);
        browser.open();
        self.browser = Some(browser);
        self.browser_kind = kind;
    }

    /// Takes in the system dialog's answer and draws the in-app browser; returns the chosen path,
    /// and what it was chosen for, once there is one.
    pub fn show(&mut self, ctx: &egui::Context, lang: Lang) -> Option<(OpenKind, PathBuf)> {
        if let Some(pending) = &self.pending {
            let kind = pending.kind;
            match pending.answer.try_recv() {
                Ok(Some(path)) => {
                    self.pending = None;
                    return Some((kind, self.remember(path)));
                }
                Ok(None) => {
                    let (kind, quick) = (pending.kind, pending.since.elapsed() < NO_DIALOG_WITHIN);
                    self.pending = None;
                    if quick {
                        self.native_missing = true;
                        self.open_browser(kind, lang);
                    }
                }
                Err(mpsc::TryRecvError::Empty) => {}
                Err(mpsc::TryRecvError::Disconnected) => {
                    let kind = pending.kind;
                    self.pending = None;
                    self.native_missing = true;
                    self.open_browser(kind, lang);
                }
            }
        }
        let kind = self.browser_kind;
        let browser = self.browser.as_mut()?;
        browser.show(ctx);
        if browser.selected() {
            let path = browser.path().map(std::path::Path::to_path_buf);
            self.browser = None;
            return path.map(|p| (kind, self.remember(p)));
        }
        if !browser.visible() {
            self.browser = None;
        }
        None
    }

    fn remember(&mut self, path: PathBuf) -> PathBuf {
        self.last_dir = path.parent().map(std::path::Path::to_path_buf);
        path
    }
}
