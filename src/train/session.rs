//! A session: a data set and the settings to train on it, checked, and shared by both devices'
//! workers.

use std::sync::Arc;
use web_time::Instant;

use super::config::TrainConfig;
use crate::data::formats::{DataError, no_progress};
use crate::data::source::DataSource;
use crate::data::{Dataset, Table};
use crate::i18n::{Lang, Said};
use crate::setting::SettingError;

/// Why a session could not start: a setting out of range, or a data set that could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// A setting the run cannot use.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// The data set could not be read.
    #[error(transparent)]
    Data(#[from] DataError),
}

impl SessionError {
    /// The error in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        match self {
            SessionError::Setting(e) => e.text(lang),
            SessionError::Data(e) => e.said().text(lang).to_owned(),
        }
    }

    /// The error in both languages.
    pub fn said(&self) -> Said {
        match self {
            SessionError::Setting(e) => Said::each(|lang| e.text(lang)),
            SessionError::Data(e) => e.said(),
        }
    }
}

/// A data set and the settings to train on it, shared by both devices' workers.
#[derive(Clone, Debug)]
pub struct Session {
    /// The settings.
    pub config: TrainConfig,
    /// The generated data.
    pub data: Arc<Dataset>,
    /// The origin of every recorded span of runs of this session, shared by both devices so
    /// their timelines (and an exported trace) share one time axis.
    pub epoch: Instant,
}

impl Session {
    /// Generates or loads the data set and checks the settings. (The app loads files on a
    /// thread of its own and calls [`Session::from_table`].)
    pub fn new(config: TrainConfig) -> Result<Self, SessionError> {
        if config.source == DataSource::Generated {
            let data = Dataset::generate(&config.data)?;
            return Self::with_data(config, data);
        }
        let table = config.source.load(&no_progress)?;
        Self::from_table(config, &table)
    }

    /// Splits and scales a loaded table as the settings say, and checks the settings.
    pub fn from_table(config: TrainConfig, table: &Table) -> Result<Self, SessionError> {
        config.data.validate_split()?;
        let data = table.to_dataset(config.data.split());
        Self::with_data(config, data)
    }

    /// Checks the settings against a data set made elsewhere (benchmarks, files).
    pub fn with_data(config: TrainConfig, data: Dataset) -> Result<Self, SessionError> {
        config.validate(&data)?;
        Ok(Self {
            config,
            data: Arc::new(data),
            epoch: Instant::now(),
        })
    }
}
