//! Open…: the system's file dialog (through the XDG desktop portal on Linux), and BatchScope's own
//! file browser where there is none.
//!
//! Where no portal (and no zenity) is installed, `rfd` returns "nothing chosen" without an error,
//! which cannot be told from a cancel. So before showing a system dialog the dialog's job asks the
//! system whether one exists (on Linux: whether the portal's file chooser answers on the session
//! bus, or zenity is installed) and says so; the in-app browser opens when the answer is no, and
//! is used from then on. The answer takes what it takes — on a busy machine the portal may need
//! seconds to start — and the window keeps drawing meanwhile.

use std::path::{Path, PathBuf};

use crate::i18n::{Key, Lang};
use crate::job::{Job, Notify};
use crate::platform::Picked;

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
    /// Where to save the sweep's points as CSV (a save dialog).
    SaveSweep,
    /// A lesson file of the teacher's own.
    Lesson,
    /// Where to save a screenshot of the window as PNG (a save dialog).
    SaveScreenshot,
    /// A session file to open.
    Session,
    /// Where to save the session (a save dialog).
    SaveSession,
    /// Where to save the model's weights as safetensors, its layers beside them (a save dialog).
    SaveModel,
    /// Weights saved as safetensors to load into the model.
    LoadModel,
}

fn title(kind: OpenKind, lang: Lang) -> &'static str {
    let key = match kind {
        OpenKind::SaveModel => return lang.tr(crate::i18n::LayerKey::SaveModel),
        OpenKind::LoadModel => return lang.tr(crate::i18n::LayerKey::LoadModel),
        OpenKind::File => Key::OpenFileTitle,
        OpenKind::Folder => Key::OpenFolderTitle,
        OpenKind::SaveTrace => Key::ExportTrace,
        OpenKind::SaveSweep => Key::SweepExport,
        OpenKind::Lesson => Key::OpenLessonTitle,
        OpenKind::SaveScreenshot => Key::SaveScreenshotTitle,
        OpenKind::Session | OpenKind::SaveSession => Key::SessionTitle,
    };
    lang.tr(key)
}

/// What the dialog's job answers.
#[derive(Debug)]
enum DialogAnswer {
    /// The user chose this.
    Chosen(PathBuf),
    /// The user closed the dialog without choosing.
    Cancelled,
    /// The system has no file dialog to show.
    NoSystemDialog,
}

/// Whether the desktop can show a file dialog (asked on the dialog's own thread).
pub type DialogProbe = fn() -> bool;

/// Whether the desktop has a file dialog: on Linux, the XDG desktop portal's file chooser answers
/// on the session bus (given the time the portal takes to start), or zenity, which `rfd` falls
/// back to, is installed. macOS and Windows always have theirs.
pub fn system_dialog_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        portal_file_chooser() || zenity_installed()
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Whether the portal's `FileChooser` interface answers for its version.
#[cfg(target_os = "linux")]
fn portal_file_chooser() -> bool {
    let Ok(connection) = zbus::blocking::Connection::session() else {
        return false;
    };
    let Ok(proxy) = zbus::blocking::Proxy::new(
        &connection,
        "org.freedesktop.portal.Desktop",
        "/org/freedesktop/portal/desktop",
        "org.freedesktop.portal.FileChooser",
    ) else {
        return false;
    };
    proxy.get_property::<u32>("version").is_ok()
}

#[cfg(target_os = "linux")]
fn zenity_installed() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join("zenity").is_file()))
}

/// The state of Open…: a system dialog waiting on its job, or the in-app browser.
pub struct FileOpener {
    pending: Option<(OpenKind, Job<DialogAnswer>)>,
    browser: Option<egui_file::FileDialog>,
    /// What the in-app browser was opened for.
    browser_kind: OpenKind,
    /// Set once the system turned out to have no file dialog; the in-app browser is used from
    /// then on.
    pub native_missing: bool,
    /// Where the last file came from, so the next dialog starts there.
    last_dir: Option<PathBuf>,
    /// How the job finds out whether a system dialog exists.
    probe: DialogProbe,
    /// What a browser's page was asked for that it cannot do (a folder), to say so.
    not_in_page: Option<OpenKind>,
}

impl Default for FileOpener {
    fn default() -> Self {
        Self::with_probe(system_dialog_available)
    }
}

impl FileOpener {
    /// An opener that asks `probe` whether a system dialog exists (tests pass their answer).
    pub fn with_probe(probe: DialogProbe) -> Self {
        Self {
            pending: None,
            browser: None,
            browser_kind: OpenKind::File,
            native_missing: false,
            last_dir: None,
            probe,
            not_in_page: None,
        }
    }

    /// Whether a dialog (system or in-app) is open, or being opened.
    pub fn is_open(&self) -> bool {
        self.pending.is_some()
            || self
                .browser
                .as_ref()
                .is_some_and(egui_file::FileDialog::visible)
    }

    /// Opens a dialog for `kind`: on a job of its own, which asks whether the system has a
    /// dialog and shows it (it blocks until the user answers); or the in-app browser, once the
    /// system has said it has none.
    pub fn start(&mut self, kind: OpenKind, lang: Lang, notify: Notify) {
        if !crate::platform::HAS_FILES {
            self.start_in_page(kind, lang, notify);
            return;
        }
        if self.is_open() {
            return;
        }
        if self.native_missing {
            self.open_browser(kind, lang);
            return;
        }
        let start_dir = self.last_dir.clone();
        let title = title(kind, lang);
        let probe = self.probe;
        let spawned = Job::spawn("file-dialog", notify, move |ctx| {
            if !probe() {
                ctx.send(DialogAnswer::NoSystemDialog);
                return;
            }
            let chosen = system_dialog(kind, title, start_dir.as_deref());
            ctx.send(chosen.map_or(DialogAnswer::Cancelled, DialogAnswer::Chosen));
        });
        match spawned {
            Ok(job) => self.pending = Some((kind, job)),
            Err(_) => self.open_browser(kind, lang),
        }
    }

    /// A browser's page: its own picker for what it can open (files are read into memory and
    /// held), a download for what is saved (named as the desktop's dialog suggests), and a
    /// note for a folder. A picker some browsers never report closed must not lock Open…, so a
    /// new one replaces one still pending.
    fn start_in_page(&mut self, kind: OpenKind, lang: Lang, notify: Notify) {
        let (filters, what) = filters(kind);
        if matches!(what, Picked::Folder) {
            self.not_in_page = Some(kind);
            return;
        }
        let (job, ctx) = Job::detached(notify);
        self.pending = Some((kind, job));
        let answer = answer_with(ctx);
        match what {
            Picked::Save(name) => answer(Some(PathBuf::from(name))),
            _ => crate::platform::pick_later(
                crate::platform::Pick {
                    title: title(kind, lang),
                    start_dir: None,
                    filters,
                    what,
                },
                answer,
            ),
        }
    }

    /// Files dropped on the window, opened as data once they can be read (a browser's page
    /// reads them into memory first).
    pub fn take_dropped(&mut self, files: &[egui::DroppedFileHandle], notify: Notify) {
        let (job, ctx) = Job::detached(notify);
        self.pending = Some((OpenKind::File, job));
        crate::platform::take_dropped(files, answer_with(ctx));
    }

    /// Takes in the dialog job's answer: the chosen path and what it was chosen for, or nothing
    /// (the in-app browser opens where the system had no dialog).
    pub fn poll(&mut self, lang: Lang) -> Option<(OpenKind, PathBuf)> {
        let (kind, job) = self.pending.as_mut()?;
        let kind = *kind;
        let answer = match job.poll().into_iter().next() {
            Some(answer) => answer,
            // The thread ended without answering: the system dialog broke.
            None if job.is_finished() => DialogAnswer::NoSystemDialog,
            None => return None,
        };
        self.pending = None;
        self.take_answer(kind, answer, lang)
    }

    /// What the system answered to a dialog opened for `kind`.
    fn take_answer(
        &mut self,
        kind: OpenKind,
        answer: DialogAnswer,
        lang: Lang,
    ) -> Option<(OpenKind, PathBuf)> {
        match answer {
            DialogAnswer::Chosen(path) => Some((kind, self.remember(path))),
            DialogAnswer::Cancelled => None,
            // A page's picker that ended without an answer: there is no other to offer.
            DialogAnswer::NoSystemDialog if !crate::platform::HAS_FILES => None,
            DialogAnswer::NoSystemDialog => {
                self.native_missing = true;
                self.open_browser(kind, lang);
                None
            }
        }
    }

    fn open_browser(&mut self, kind: OpenKind, lang: Lang) {
        let mut browser = match kind {
            OpenKind::File | OpenKind::Lesson | OpenKind::Session | OpenKind::LoadModel => {
                egui_file::FileDialog::open_file()
            }
            OpenKind::SaveModel => {
                egui_file::FileDialog::save_file().default_filename("model.safetensors")
            }
            OpenKind::SaveSession => {
                egui_file::FileDialog::save_file().default_filename("lesson.batchscope")
            }
            OpenKind::Folder => egui_file::FileDialog::select_folder(),
            OpenKind::SaveTrace => {
                egui_file::FileDialog::save_file().default_filename("batchscope-trace.json")
            }
            OpenKind::SaveSweep => {
                egui_file::FileDialog::save_file().default_filename("batchscope-sweep.csv")
            }
            OpenKind::SaveScreenshot => {
                egui_file::FileDialog::save_file().default_filename("batchscope.png")
            }
        };
        if let Some(dir) = &self.last_dir {
            browser = browser.initial_path(dir.clone());
        }
        // Only the files this kind can open are listed (folders always are).
        if let Some(extensions) = opens(kind) {
            browser = browser.show_files_filter(Box::new(move |path: &std::path::Path| {
                shown(path, extensions)
            }));
        }
        let mut browser = browser
            .title(title(kind, lang))
            .open_button_text(lang.tr(Key::OpenButton).into())
            .save_button_text(lang.tr(Key::SaveButton).into())
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

    /// Draws the in-app browser, if it is open; returns the chosen path, and what it was chosen
    /// for, once there is one.
    pub fn show(&mut self, ctx: &egui::Context, lang: Lang) -> Option<(OpenKind, PathBuf)> {
        if let Some(kind) = self.not_in_page {
            let mut open = true;
            egui::Window::new(title(kind, lang))
                .collapsible(false)
                .resizable(false)
                .open(&mut open)
                .show(ctx, |ui| {
                    ui.label(lang.tr(crate::i18n::BrowserKey::NotInPage));
                });
            if !open {
                self.not_in_page = None;
            }
            return None;
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

/// Where a picked or dropped file's answer goes: the dialog job's channel.
fn answer_with(ctx: crate::job::JobContext<DialogAnswer>) -> crate::platform::Answer {
    Box::new(move |chosen| {
        ctx.send(chosen.map_or(DialogAnswer::Cancelled, DialogAnswer::Chosen));
    })
}

/// Shows the system's dialog for `kind` and waits for the user's answer.
fn system_dialog(kind: OpenKind, title: &str, start_dir: Option<&Path>) -> Option<PathBuf> {
    let (filters, what) = filters(kind);
    crate::platform::pick(crate::platform::Pick {
        title,
        start_dir,
        filters,
        what,
    })
}

/// The named filters a dialog for `kind` offers, and what it picks.
fn filters(
    kind: OpenKind,
) -> (
    &'static [(&'static str, &'static [&'static str])],
    Picked<'static>,
) {
    const ANY: (&str, &[&str]) = ("*", &["*"]);
    const SESSION: (&str, &[&str]) = ("BatchScope session", &["batchscope"]);
    const WEIGHTS: (&str, &[&str]) = ("safetensors", &["safetensors"]);
    match kind {
        OpenKind::File => (
            &[
                ("CSV, IDX", &["csv", "tsv", "txt", "gz", "idx", "ubyte"]),
                ANY,
            ],
            Picked::File,
        ),
        OpenKind::Folder => (&[], Picked::Folder),
        OpenKind::SaveTrace => (
            &[("Chrome trace JSON", &["json"])],
            Picked::Save("batchscope-trace.json"),
        ),
        OpenKind::SaveSweep => (&[("CSV", &["csv"])], Picked::Save("batchscope-sweep.csv")),
        OpenKind::Session => (&[SESSION, ANY], Picked::File),
        OpenKind::SaveSession => (&[SESSION], Picked::Save("lesson.batchscope")),
        OpenKind::SaveScreenshot => (&[("PNG", &["png"])], Picked::Save("batchscope.png")),
        OpenKind::Lesson => (
            &[("BatchScope lesson (TOML)", &["toml"]), ANY],
            Picked::File,
        ),
        OpenKind::SaveModel => (&[WEIGHTS], Picked::Save("model.safetensors")),
        OpenKind::LoadModel => (&[WEIGHTS, ANY], Picked::File),
    }
}

/// The file name endings a kind of file to open is listed by (`None`: saving, or a folder).
fn opens(kind: OpenKind) -> Option<&'static [&'static str]> {
    match kind {
        // MNIST's files are named `train-images-idx3-ubyte`, with no extension of their own.
        OpenKind::File => Some(&["csv", "tsv", "txt", "gz", "idx", "ubyte"]),
        OpenKind::Lesson => Some(&["toml"]),
        OpenKind::Session => Some(&["batchscope"]),
        OpenKind::LoadModel => Some(&["safetensors"]),
        OpenKind::Folder
        | OpenKind::SaveModel
        | OpenKind::SaveSession
        | OpenKind::SaveTrace
        | OpenKind::SaveSweep
        | OpenKind::SaveScreenshot => None,
    }
}

/// Whether the in-app browser lists `path` among files ending in one of `extensions`: by its
/// extension, or by a name ending in one (`…-idx3-ubyte`), in any case.
fn shown(path: &std::path::Path, extensions: &[&str]) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    extensions
        .iter()
        .any(|e| name.ends_with(&format!(".{e}")) || name.ends_with(&format!("-{e}")))
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::ui::testing::harness;

    fn drawn() -> egui_kittest::Harness<'static, FileOpener> {
        harness(
            |ui, opener: &mut FileOpener| {
                assert!(
                    opener.show(ui.ctx(), Lang::En).is_none(),
                    "nothing is chosen here"
                );
            },
            FileOpener::default(),
        )
    }

    #[test]
    fn the_browser_lists_only_the_files_a_kind_opens() {
        let data = opens(OpenKind::File).expect("files");
        for name in [
            "iris.csv",
            "TRAIN.CSV",
            "t10k-images-idx3-ubyte",
            "x.idx3-ubyte.gz",
        ] {
            assert!(shown(std::path::Path::new(name), data), "{name}");
        }
        for name in ["notes.pdf", "photo.png", "README"] {
            assert!(!shown(std::path::Path::new(name), data), "{name}");
        }
        let lesson = opens(OpenKind::Lesson).expect("lessons");
        assert!(shown(std::path::Path::new("my.toml"), lesson));
        assert!(!shown(std::path::Path::new("my.csv"), lesson));
        assert!(opens(OpenKind::SaveTrace).is_none());
    }

    /// Whenever the system says it has no dialog — after a moment or after many frames on a
    /// busy machine — the in-app browser opens, and is used from then on.
    #[test]
    fn no_system_dialog_opens_the_in_app_browser_whenever_the_answer_comes() {
        let mut h = drawn();
        h.run_steps(30);
        let opened =
            h.state_mut()
                .take_answer(OpenKind::File, DialogAnswer::NoSystemDialog, Lang::En);
        assert!(opened.is_none());
        h.run_steps(3);
        assert!(h.state().native_missing);
        assert!(h.state().is_open());
        assert!(h.query_by_label_contains("Open a data set file").is_some());
    }

    /// A dropped file is opened as data once it can be read: on the desktop, by its path, at
    /// the next look at the opener.
    #[test]
    fn a_dropped_file_is_answered_as_data_to_open() {
        #[derive(Debug)]
        struct Dropped(PathBuf);
        impl egui::DroppedFile for Dropped {
            fn path(&self) -> &Path {
                &self.0
            }
            fn bytes(&self) -> Result<Vec<u8>, String> {
                Err("not read here".into())
            }
        }
        let mut opener = FileOpener::with_probe(|| false);
        let file = PathBuf::from("/data/iris.csv");
        let dropped: egui::DroppedFileHandle = std::sync::Arc::new(Dropped(file.clone()));
        opener.take_dropped(&[dropped], crate::job::no_notify());
        assert_eq!(opener.poll(Lang::En), Some((OpenKind::File, file)));
        assert!(!opener.is_open(), "nothing is left pending");
    }

    /// What a page cannot do is said, in the window, not offered as a broken dialog.
    #[test]
    fn a_page_says_what_it_cannot_open() {
        let mut h = drawn();
        h.state_mut().not_in_page = Some(OpenKind::Folder);
        h.run_steps(2);
        assert!(
            h.query_by_label_contains("does not open image folders")
                .is_some()
        );
    }

    /// A cancel is a cancel, however quick: nothing opens, and the system dialog stays in use.
    #[test]
    fn a_cancelled_system_dialog_opens_nothing_and_a_choice_is_remembered() {
        let mut h = drawn();
        let answer = h
            .state_mut()
            .take_answer(OpenKind::Folder, DialogAnswer::Cancelled, Lang::En);
        assert!(answer.is_none());
        h.run_steps(3);
        assert!(!h.state().native_missing);
        assert!(!h.state().is_open());
        let chosen = PathBuf::from("/data/pets/cats");
        let answer = h.state_mut().take_answer(
            OpenKind::Folder,
            DialogAnswer::Chosen(chosen.clone()),
            Lang::En,
        );
        assert_eq!(answer, Some((OpenKind::Folder, chosen)));
        assert_eq!(h.state().last_dir, Some(PathBuf::from("/data/pets")));
    }
}
