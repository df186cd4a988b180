//! Where a run's data comes from, and loading it on a thread of its own so the window keeps
//! drawing (with progress, and a way to cancel) while a large file or image folder is read.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use web_time::Instant;

use serde::{Deserialize, Serialize};

use super::dataset::Table;
use super::formats::common::{DataError, LoadOptions};
use super::formats::load_with_progress;
use super::shipped::{load_shipped, shipped};
use super::text_data::{load_shipped_text, shipped_text};
use crate::i18n::{DataKey, Said};
use crate::job::{Job, Notify};

/// The data a run trains on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataSource {
    /// A 2-D generator, as the run's `DatasetSpec` describes.
    #[default]
    Generated,
    /// A shipped real data set, by name.
    Shipped(String),
    /// The user's own CSV file, IDX file or image folder.
    File {
        /// The file or folder.
        path: PathBuf,
        /// How to read it.
        options: LoadOptions,
    },
}

impl DataSource {
    /// Reads the source (not for [`DataSource::Generated`], which has nothing to read).
    pub fn load(&self, progress: &(dyn Fn(f32) -> bool + Sync)) -> Result<Table, DataError> {
        match self {
            DataSource::Generated => Err(DataError::Refused {
                path: "generated data".into(),
                message: Said::new(DataKey::Generated, &[]),
            }),
            DataSource::Shipped(name) => match (shipped(name), shipped_text(name)) {
                (Some(set), _) => load_shipped(set, progress),
                (None, Some(text)) => load_shipped_text(text, progress),
                (None, None) => Err(DataError::Refused {
                    path: name.clone(),
                    message: Said::new(DataKey::NotShipped, &[]),
                }),
            },
            DataSource::File { path, options } => load_with_progress(path, options, progress),
        }
    }

    /// The file's read options, for a file source.
    pub fn options(&self) -> Option<&LoadOptions> {
        match self {
            DataSource::File { options, .. } => Some(options),
            _ => None,
        }
    }
}

/// A loaded data set: its source and its rows.
#[derive(Clone)]
pub struct Loaded {
    /// Where it came from (and how it was read).
    pub source: DataSource,
    /// What was read.
    pub table: Arc<Table>,
}

/// What the loading thread reports.
enum LoadMessage {
    /// The share of the work done, in `[0, 1]`.
    Progress(f32),
    /// The table, or why it could not be read.
    Done(Box<Result<Table, DataError>>),
}

/// One load in progress on the `data-loader` thread (a [`Job`]).
pub struct LoadJob {
    /// What is being loaded.
    pub source: DataSource,
    /// When it started.
    pub started: Instant,
    progress: f32,
    job: Job<LoadMessage>,
}

impl LoadJob {
    /// Starts loading `source` on its own thread (in a browser's page: loads it now).
    pub fn spawn(source: DataSource, notify: Notify) -> std::io::Result<Self> {
        let job_source = source.clone();
        // In a browser's page, read at once (the shipped sets are inside the page).
        let job = Job::spawn_or_run("data-loader", notify, move |ctx| {
            let reported = AtomicU32::new(0);
            let report = |share: f32| {
                let old = f32::from_bits(reported.load(Ordering::Relaxed));
                // Wake the UI once per percent, not once per row.
                if share - old >= 0.01 {
                    reported.store(share.to_bits(), Ordering::Relaxed);
                    ctx.send(LoadMessage::Progress(share));
                }
                !ctx.cancelled()
            };
            let table = job_source.load(&report);
            ctx.send(LoadMessage::Done(Box::new(table)));
        })?;
        Ok(Self {
            source,
            started: Instant::now(),
            progress: 0.0,
            job,
        })
    }

    /// Share of the work done, in `[0, 1]`, as last polled.
    pub fn progress(&self) -> f32 {
        self.progress
    }

    /// Asks the thread to stop; it answers with [`DataError::Cancelled`].
    pub fn cancel(&self) {
        self.job.cancel();
    }

    /// Takes in what the thread reported: the result, once it is done.
    pub fn poll(&mut self) -> Option<Result<Table, DataError>> {
        for message in self.job.poll() {
            match message {
                LoadMessage::Progress(share) => self.progress = share,
                LoadMessage::Done(result) => return Some(*result),
            }
        }
        self.job.is_finished().then(|| Err(ended_without_answer()))
    }

    /// Waits for the result (tests and the command line).
    pub fn wait(mut self) -> Result<Table, DataError> {
        while let Some(message) = self.job.wait() {
            if let LoadMessage::Done(result) = message {
                return *result;
            }
        }
        Err(ended_without_answer())
    }
}

fn ended_without_answer() -> DataError {
    DataError::Io {
        path: "data loader".into(),
        message: Said::new(DataKey::ThreadEnded, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_loads_on_its_thread_and_reports_errors() {
        let job = LoadJob::spawn(DataSource::Shipped("iris".into()), crate::job::no_notify())
            .expect("spawn");
        let table = job.wait().expect("iris");
        assert_eq!(table.rows, 150);
        let missing = DataSource::File {
            path: PathBuf::from("/no/such/file.csv"),
            options: LoadOptions::default(),
        };
        let err = LoadJob::spawn(missing, crate::job::no_notify())
            .expect("spawn")
            .wait()
            .expect_err("missing");
        assert_eq!(
            err.to_string(),
            "/no/such/file.csv: does not exist: check the path, or pick the file with Open…"
        );
    }
}
