//! What the app remembered, read back field by field: each setting is checked as the setup
//! checks it, and one that cannot be read or is out of range falls back to its default with a
//! note the window shows, so a damaged or hand-edited file never costs the other settings, never
//! starts a run the machine cannot hold, and never stops the app from opening or closing.

use std::path::PathBuf;

use ron::value::RawValue;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::bench::history::History;
use crate::data::DatasetSpec;
use crate::data::dataloader::Augment;
use crate::data::source::DataSource;
use crate::i18n::{Key, Lang, Said};
use crate::setting::SettingError;
use crate::train::{
    Pipeline, SessionError, Sharing, TrainConfig, check_accumulate, check_batch, check_checkpoint,
    check_conv, check_hidden, check_list_sizes, check_loss_weight, check_lr,
};

/// What the app remembers between runs: the language and the settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// UI language.
    pub lang: Lang,
    /// The settings of the last run.
    pub config: TrainConfig,
    /// Which devices were on.
    pub enabled: [bool; 2],
    /// How the devices shared the machine.
    pub sharing: Sharing,
}

impl Default for Saved {
    fn default() -> Self {
        Self {
            lang: Lang::default(),
            config: TrainConfig::default(),
            enabled: [true, true],
            sharing: Sharing::default(),
        }
    }
}

/// The storage key of [`Saved`].
pub const SAVED_KEY: &str = "batchscope-settings";

/// The storage key of where each lesson was left and presenter mode's scale (JSON).
pub const LESSONS_KEY: &str = "batchscope-lessons";

/// What the lessons remember between starts.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, Deserialize)]
#[serde(default)]
pub struct LessonMemory {
    /// The step each lesson was left at, by id.
    pub places: std::collections::BTreeMap<String, usize>,
    /// Presenter mode's UI scale.
    pub presenter_scale: Option<f32>,
    /// The UI scale outside presenter mode, where the window closed while presenting (egui
    /// keeps the scale it closed with: this gives the ordinary one back).
    pub zoom_outside: Option<f32>,
}

impl LessonMemory {
    /// What a stored text holds; a damaged one is forgotten (it is only where lessons were
    /// left), and a scale out of range is brought back into it.
    pub fn read(text: Option<&str>) -> Self {
        let Some(mut memory) = text.and_then(|t| serde_json::from_str::<Self>(t).ok()) else {
            return Self::default();
        };
        memory.presenter_scale = memory
            .presenter_scale
            .map(crate::ui::presenter::Presenter::clamp_scale);
        // A place past a lesson's last step is clamped when the lesson opens.
        memory.places.retain(|id, _| id.len() <= 40);
        memory.zoom_outside = memory
            .zoom_outside
            .filter(|z| z.is_finite() && (0.25..=4.0).contains(z));
        memory
    }
}

/// The storage key of the history of finished runs (JSON).
pub const HISTORY_KEY: &str = "batchscope-history";

/// The eframe storage key of the calibrated profiles (TOML, the format of
/// `assets/profiles.toml`).
pub const LOCAL_PROFILES_KEY: &str = "batchscope-local-profiles";

/// The stored history, and a note if entries of it could not be read.
pub fn history(text: Option<&str>) -> (History, Vec<RestoreNote>) {
    let Some(text) = text else {
        return (History::default(), Vec::new());
    };
    match History::from_json(text) {
        (history, Ok(0)) => (history, Vec::new()),
        (history, Ok(n)) => (history, vec![RestoreNote::HistoryLeftOut(n)]),
        (history, Err(why)) => (history, vec![RestoreNote::HistoryUnreadable(why)]),
    }
}

/// Why a saved setting was not used.
#[derive(Clone, Debug, PartialEq)]
pub enum RestoreNote {
    /// Nothing of the saved settings could be read: what the reader said.
    Unreadable(Said),
    /// A session file could not be read, or nothing of it: what the reader said.
    SessionUnreadable(Said),
    /// One setting fell back to its default.
    Field {
        /// Which setting.
        name: Key,
        /// Why.
        why: Why,
    },
    /// The data set of last time is no longer there.
    DataGone(PathBuf),
    /// Entries of the saved history could not be read and were left out: how many.
    HistoryLeftOut(usize),
    /// The saved history could not be read at all: what the reader said.
    HistoryUnreadable(String),
    /// The calibrated profiles saved last time could not be read: what the reader said.
    ProfilesUnreadable(String),
    /// The saved settings' file cannot be read safely: settings are kept in another file.
    SettingsElsewhere {
        /// Why the usual file was not read.
        why: Said,
        /// Where the settings are kept instead.
        instead: PathBuf,
    },
    /// The saved settings do not fit the data set they were saved with: defaults are used.
    DidNotFit {
        /// The data set.
        data: String,
        /// What did not fit.
        why: SessionError,
    },
}

/// Why a field was not used.
#[derive(Clone, Debug, PartialEq)]
pub enum Why {
    /// It is outside the setting's range.
    Setting(SettingError),
    /// It could not be read as that setting (the reader's words).
    Format(String),
}

impl RestoreNote {
    /// The note in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        match self {
            RestoreNote::Unreadable(why) => {
                lang.fmt(Key::RestoreUnreadable, &[("why", &why.text(lang))])
            }
            RestoreNote::SessionUnreadable(why) => {
                lang.fmt(Key::SessionUnreadable, &[("why", &why.text(lang))])
            }
            RestoreNote::Field { name, why } => {
                let why = match why {
                    Why::Setting(e) => e.text(lang),
                    Why::Format(e) => e.clone(),
                };
                lang.fmt(
                    Key::RestoreField,
                    &[("name", &lang.tr(*name)), ("why", &why)],
                )
            }
            RestoreNote::DataGone(path) => lang.fmt(
                Key::RestoreDataGone,
                &[("path", &path.display().to_string())],
            ),
            RestoreNote::HistoryLeftOut(n) => lang.fmt(Key::HistoryLeftOut, &[("n", n)]),
            RestoreNote::ProfilesUnreadable(why) => {
                lang.fmt(Key::ProfilesUnreadable, &[("why", why)])
            }
            RestoreNote::HistoryUnreadable(why) => {
                lang.fmt(Key::HistoryUnreadable, &[("why", why)])
            }
            RestoreNote::SettingsElsewhere { why, instead } => lang.fmt(
                Key::SettingsElsewhere,
                &[
                    ("why", &why.text(lang)),
                    ("instead", &instead.display().to_string()),
                ],
            ),
            RestoreNote::DidNotFit { data, why } => lang.fmt(
                Key::RestoreDidNotFit,
                &[("data", data), ("why", &why.text(lang))],
            ),
        }
    }
}

/// A saved record with each field kept as RON text, to be read on its own.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RawSaved {
    lang: Option<Box<RawValue>>,
    config: Option<Box<RawValue>>,
    enabled: Option<Box<RawValue>>,
    sharing: Option<Box<RawValue>>,
}

/// The training settings with each field kept as RON text.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RawConfig {
    data: Option<Box<RawValue>>,
    source: Option<Box<RawValue>>,
    hidden: Option<Box<RawValue>>,
    model: Option<Box<RawValue>>,
    conv: Option<Box<RawValue>>,
    conv_kernel: Option<Box<RawValue>>,
    activation: Option<Box<RawValue>>,
    optimizer: Option<Box<RawValue>>,
    lr: Option<Box<RawValue>>,
    batch: Option<Box<RawValue>>,
    accumulate: Option<Box<RawValue>>,
    checkpoint: Option<Box<RawValue>>,
    seed: Option<Box<RawValue>>,
    augment: Option<Box<RawValue>>,
    precision: Option<Box<RawValue>>,
    loss_weight: Option<Box<RawValue>>,
    pipeline: Option<Box<RawValue>>,
}

/// RON options for the records of raw fields: a field present is a field given.
fn lenient() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

/// The settings a saved text holds, each valid, and a note for each that was not used.
pub fn restore(text: &str) -> (Saved, Vec<RestoreNote>) {
    let mut notes = Vec::new();
    let raw: RawSaved = match lenient().from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            return (
                Saved::default(),
                vec![RestoreNote::Unreadable(ron_error("RON", text, &e))],
            );
        }
    };
    let d = Saved::default();
    let lang = take(
        raw.lang.as_deref(),
        Key::SavedLang,
        d.lang,
        |_| Ok(()),
        &mut notes,
    );
    // Neither device would leave a Run button that does nothing.
    let enabled = take(
        raw.enabled.as_deref(),
        Key::SavedDevices,
        d.enabled,
        |e: &[bool; 2]| {
            if e.contains(&true) {
                Ok(())
            } else {
                Err(SettingError::NoDevice)
            }
        },
        &mut notes,
    );
    let sharing = take(
        raw.sharing.as_deref(),
        Key::SavedSharing,
        d.sharing,
        |_| Ok(()),
        &mut notes,
    );
    let config = match raw
        .config
        .as_deref()
        .map(|c| lenient().from_str(c.get_ron()))
    {
        None => TrainConfig::default(),
        Some(Ok(config)) => restore_config(&config, &mut notes),
        Some(Err(e)) => {
            notes.push(RestoreNote::Unreadable(Said::verbatim(
                crate::files::first_line(&e.to_string()),
            )));
            TrainConfig::default()
        }
    };
    (
        Saved {
            lang,
            config,
            enabled,
            sharing,
        },
        notes,
    )
}

/// A note when the app's storage file exists but holds nothing readable (eframe then starts
/// with empty storage and says nothing): a truncated or damaged `app.ron`.
pub fn unreadable_storage(app_id: &str) -> Vec<RestoreNote> {
    let Some(path) = crate::platform::storage_dir(app_id).map(|dir| dir.join("app.ron")) else {
        return Vec::new();
    };
    unreadable_file(&path)
}

/// A note when `path` exists, is not empty and is not a readable RON record.
fn unreadable_file(path: &std::path::Path) -> Vec<RestoreNote> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Vec::new();
    };
    if meta.is_file() && meta.len() == 0 {
        return Vec::new();
    }
    let why = match crate::files::read_text(path, crate::files::FileKind::Settings) {
        Err(why) => why,
        Ok(text) => match ron::from_str::<ron::Value>(&text) {
            Ok(_) => return Vec::new(),
            Err(e) => ron_error(&path.display().to_string(), &text, &e),
        },
    };
    vec![RestoreNote::Unreadable(why)]
}

/// A RON reader's error at its line and column in `text`, with a short excerpt.
pub fn ron_error(path: &str, text: &str, e: &ron::error::SpannedError) -> Said {
    crate::files::parse_error_at_line(
        path,
        text,
        e.span.start.line,
        e.span.start.col,
        &e.code.to_string(),
    )
}

/// The storage file eframe would read at start, or where to keep the settings instead when
/// that file cannot be read safely (a named pipe would block eframe's start for ever, a device
/// would never end): the place to use, and a note saying why.
pub fn storage_guard(app_id: &str) -> (Option<std::path::PathBuf>, Vec<RestoreNote>) {
    let Some(dir) = crate::platform::storage_dir(app_id) else {
        return (None, Vec::new());
    };
    let path = dir.join("app.ron");
    if std::fs::symlink_metadata(&path).is_err() {
        return (None, Vec::new());
    }
    // Checked, not read: eframe reads it next.
    match crate::files::check_readable(&path, crate::files::FileKind::Settings) {
        Ok(()) => (None, Vec::new()),
        Err(why) => {
            let instead = dir.join("app-instead.ron");
            let note = RestoreNote::SettingsElsewhere {
                why,
                instead: instead.clone(),
            };
            (Some(instead), vec![note])
        }
    }
}

/// The training settings of a saved record, field by field.
fn restore_config(raw: &RawConfig, notes: &mut Vec<RestoreNote>) -> TrainConfig {
    let d = TrainConfig::default();
    let n = notes;
    let (accumulate, checkpoint) = restore_levers(raw, &d, n);
    let mut config = TrainConfig {
        data: take(
            raw.data.as_deref(),
            Key::SavedData,
            d.data,
            DatasetSpec::validate_split,
            n,
        ),
        source: take(
            raw.source.as_deref(),
            Key::SavedSource,
            d.source,
            |_| Ok(()),
            n,
        ),
        conv: take(
            raw.conv.as_deref(),
            Key::SavedConv,
            d.conv,
            |c| check_conv(c, 3),
            n,
        ),
        conv_kernel: take(
            raw.conv_kernel.as_deref(),
            Key::SavedConvKernel,
            d.conv_kernel,
            |&k| check_conv(&[], k),
            n,
        ),
        hidden: take(
            raw.hidden.as_deref(),
            Key::SavedHidden,
            d.hidden,
            |h| check_hidden(h),
            n,
        ),
        model: take(
            raw.model.as_deref(),
            Key::SavedModel,
            d.model,
            |m| m.as_deref().map_or(Ok(()), check_list_sizes),
            n,
        ),
        activation: take(
            raw.activation.as_deref(),
            Key::SavedActivation,
            d.activation,
            |_| Ok(()),
            n,
        ),
        optimizer: take(
            raw.optimizer.as_deref(),
            Key::SavedOptimizer,
            d.optimizer,
            |_| Ok(()),
            n,
        ),
        lr: take(raw.lr.as_deref(), Key::SavedLr, d.lr, |&lr| check_lr(lr), n),
        batch: take(
            raw.batch.as_deref(),
            Key::SavedBatch,
            d.batch,
            |&b| check_batch(b),
            n,
        ),
        accumulate,
        checkpoint,
        seed: take(raw.seed.as_deref(), Key::SavedSeed, d.seed, |_| Ok(()), n),
        augment: take(
            raw.augment.as_deref(),
            Key::SavedAugment,
            d.augment,
            Augment::validate,
            n,
        ),
        precision: take(
            raw.precision.as_deref(),
            Key::SavedPrecision,
            d.precision,
            |_| Ok(()),
            n,
        ),
        loss_weight: take(
            raw.loss_weight.as_deref(),
            Key::SavedLossWeight,
            d.loss_weight,
            |&w| check_loss_weight(w),
            n,
        ),
        pipeline: take(
            raw.pipeline.as_deref(),
            Key::SavedPipeline,
            d.pipeline,
            Pipeline::validate,
            n,
        ),
    };
    if let DataSource::File { path, .. } = &config.source
        && !path.exists()
    {
        n.push(RestoreNote::DataGone(path.clone()));
        config.source = DataSource::Generated;
    }
    config
}

/// The memory levers' saved settings: micro-batches accumulated (checked against the data set
/// when the run starts; here only its range) and blocks a checkpointed segment.
fn restore_levers(raw: &RawConfig, d: &TrainConfig, n: &mut Vec<RestoreNote>) -> (u32, u32) {
    let accumulate = take(
        raw.accumulate.as_deref(),
        Key::SavedAccumulate,
        d.accumulate,
        |&a| check_accumulate(a),
        n,
    );
    let checkpoint = take(
        raw.checkpoint.as_deref(),
        Key::SavedCheckpoint,
        d.checkpoint,
        |&c| check_checkpoint(c),
        n,
    );
    (accumulate, checkpoint)
}

/// A saved field read as a `T` that passes `check`, or `default` (with a note when the field
/// was there but not usable).
fn take<T: DeserializeOwned>(
    raw: Option<&RawValue>,
    name: Key,
    default: T,
    check: impl Fn(&T) -> Result<(), SettingError>,
    notes: &mut Vec<RestoreNote>,
) -> T {
    let Some(raw) = raw else {
        return default;
    };
    let why = match raw.into_rust::<T>() {
        Ok(v) => match check(&v) {
            Ok(()) => return v,
            Err(e) => Why::Setting(e),
        },
        Err(e) => Why::Format(e.to_string()),
    };
    notes.push(RestoreNote::Field { name, why });
    default
}

/// The local profiles kept from an earlier session; a damaged store is a note, not an error.
pub fn restore_local_profiles(
    text: Option<&str>,
) -> (Vec<crate::sim::profile::Profile>, Option<RestoreNote>) {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return (Vec::new(), None);
    };
    match crate::sim::profile::parse(text) {
        Ok(profiles) => (
            profiles
                .into_iter()
                .filter(|p| p.id.starts_with("local-"))
                .collect(),
            None,
        ),
        Err(why) => (Vec::new(), Some(RestoreNote::ProfilesUnreadable(why))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Activation;
    use crate::data::formats::LoadOptions;
    use crate::train::SyncPolicy;

    fn saved_text(saved: &Saved) -> String {
        ron::to_string(saved).expect("serialise")
    }

    #[test]
    fn valid_settings_come_back_whole() {
        let dir = std::env::temp_dir();
        let mut saved = Saved {
            lang: Lang::Zh,
            enabled: [true, false],
            ..Saved::default()
        };
        saved.config.hidden = vec![64, 32, 8];
        saved.config.activation = Activation::Tanh;
        saved.config.pipeline.sync = SyncPolicy::EverySteps(5);
        saved.config.source = DataSource::File {
            path: dir.clone(),
            options: LoadOptions::default(),
        };
        let (back, notes) = restore(&saved_text(&saved));
        assert_eq!(notes, []);
        assert_eq!(back.lang, Lang::Zh);
        assert_eq!(back.enabled, [true, false]);
        assert_eq!(back.config, saved.config);
        saved.config.source = DataSource::Shipped("iris".into());
        assert_eq!(restore(&saved_text(&saved)).0.config, saved.config);
    }

    #[test]
    fn each_bad_field_falls_back_alone_with_a_note() {
        let mut saved = Saved::default();
        saved.config.hidden = vec![4; 100_000];
        saved.config.batch = 0;
        saved.config.lr = 32.0;
        saved.config.seed = 99;
        saved.enabled = [false, false];
        saved.config.source = DataSource::File {
            path: "/no/such/data.csv".into(),
            options: LoadOptions::default(),
        };
        let (back, notes) = restore(&saved_text(&saved));
        let defaults = TrainConfig::default();
        assert_eq!(back.config.hidden, defaults.hidden);
        assert_eq!(back.config.batch, defaults.batch);
        assert_eq!(back.config.lr, defaults.lr);
        assert_eq!(back.config.seed, 99, "a good field is kept");
        assert_eq!(back.config.source, DataSource::Generated);
        let texts: Vec<String> = notes.iter().map(|n| n.text(Lang::En)).collect();
        assert_eq!(back.enabled, [true, true]);
        assert_eq!(texts.len(), 5, "{texts:?}");
        assert!(texts[0].contains("no device chosen"), "{texts:?}");
        assert!(texts[1].contains("100000 hidden layers"), "{texts:?}");
        assert!(texts[2].contains("learning rate 32"), "{texts:?}");
        assert!(texts[3].contains("batch size 0"), "{texts:?}");
        assert!(texts[4].contains("/no/such/data.csv"), "{texts:?}");
        assert!(notes[1].text(Lang::Zh).contains("100000"), "in Chinese too");
    }

    #[test]
    fn a_damaged_storage_file_is_noticed() {
        let dir = std::env::temp_dir().join(format!("batchscope-restore-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("folder");
        let path = dir.join("app.ron");
        std::fs::write(&path, "{\"batchscope-settings\": \"(lang: En").expect("write");
        let notes = unreadable_file(&path);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].text(Lang::En).contains("app.ron"), "{notes:?}");
        std::fs::write(&path, "{\"egui\": \"()\"}").expect("write");
        assert_eq!(unreadable_file(&path), []);
        assert_eq!(unreadable_file(&dir.join("none.ron")), []);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_record_gives_the_defaults_and_says_so() {
        let text = saved_text(&Saved::default());
        for damaged in [
            &text[..text.len() / 2],
            "",
            "\u{0}\u{1}binary",
            "42",
            "(lang: Klingon, config: (batch: \"many\"), enabled: (1, 2, 3))",
        ] {
            let (back, notes) = restore(damaged);
            assert_eq!(back.config, TrainConfig::default(), "{damaged:?}");
            assert!(!notes.is_empty(), "no note for {damaged:?}");
            assert!(!notes[0].text(Lang::En).is_empty());
        }
    }
}

#[cfg(test)]
mod lesson_memory_tests {
    use super::LessonMemory;

    #[test]
    fn lesson_places_and_the_presenter_scale_come_back_and_damage_is_forgotten() {
        let kept = LessonMemory::read(Some(r#"{"places":{"batching":3},"presenter_scale":1.75}"#));
        assert_eq!(kept.places.get("batching"), Some(&3));
        assert_eq!(kept.presenter_scale, Some(1.75));
        let clamped = LessonMemory::read(Some(r#"{"presenter_scale":40.0}"#));
        assert_eq!(clamped.presenter_scale, Some(2.0));
        for damaged in ["{", "[1,2]", "\u{0}\u{1}", r#"{"places":{"a":-1}}"#] {
            assert_eq!(
                LessonMemory::read(Some(damaged)),
                LessonMemory::default(),
                "{damaged}"
            );
        }
        assert_eq!(LessonMemory::read(None), LessonMemory::default());
    }
}
