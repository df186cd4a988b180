//! Where a run's data comes from, and loading it on a thread of its own so the window keeps
//! drawing (with progress, and a way to cancel) while a large file or image folder is read.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::dataset::Table;
use super::formats::common::{DataError, LoadOptions};
use super::formats::load_with_progress;
use super::shipped::{load_shipped, shipped};

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
                message: "is made by a generator, not loaded".into(),
            }),
            DataSource::Shipped(name) => match shipped(name) {
                Some(set) => load_shipped(set, progress),
                None => Err(DataError::Refused {
                    path: name.clone(),
                    message: "is not a shipped data set".into(),
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

/// Called when a job has news (the UI passes `ctx.request_repaint`).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// One load in progress on the `data-loader` thread.
pub struct LoadJob {
    /// What is being loaded.
    pub source: DataSource,
    /// When it started.
    pub started: Instant,
    progress: Arc<AtomicU32>,
    cancel: Arc<AtomicBool>,
    result: Receiver<Result<Table, DataError>>,
}

impl LoadJob {
    /// Starts loading `source` on its own thread.
    pub fn spawn(source: DataSource, notify: Notify) -> std::io::Result<Self> {
        let progress = Arc::new(AtomicU32::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, result) = mpsc::channel();
        let job_source = source.clone();
        let (job_progress, job_cancel) = (Arc::clone(&progress), Arc::clone(&cancel));
        std::thread::Builder::new()
            .name("data-loader".into())
            .spawn(move || {
                let report = |share: f32| {
                    let old = f32::from_bits(job_progress.load(Ordering::Relaxed));
                    // Wake the UI once per percent, not once per row.
                    if share - old >= 0.01 {
                        job_progress.store(share.to_bits(), Ordering::Relaxed);
                        notify();
                    }
                    !job_cancel.load(Ordering::Relaxed)
                };
                let table = job_source.load(&report);
                let _ = tx.send(table);
                notify();
            })?;
        Ok(Self {
            source,
            started: Instant::now(),
            progress,
            cancel,
            result,
        })
    }

    /// Share of the work done, in `[0, 1]`.
    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }

    /// Asks the thread to stop; it answers with [`DataError::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// The result, once the thread is done.
    pub fn poll(&self) -> Option<Result<Table, DataError>> {
        match self.result.try_recv() {
            Ok(result) => Some(result),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(DataError::Io {
                path: "data loader".into(),
                message: "the loading thread ended without an answer".into(),
            })),
        }
    }

    /// Waits for the result (tests and the command line).
    pub fn wait(self) -> Result<Table, DataError> {
        self.result.recv().unwrap_or_else(|_| {
            Err(DataError::Io {
                path: "data loader".into(),
                message: "the loading thread ended without an answer".into(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_loads_on_its_thread_and_reports_errors() {
        let job =
            LoadJob::spawn(DataSource::Shipped("iris".into()), Arc::new(|| {})).expect("spawn");
        let table = job.wait().expect("iris");
        assert_eq!(table.rows, 150);
        let missing = DataSource::File {
            path: PathBuf::from("/no/such/file.csv"),
            options: LoadOptions::default(),
        };
        let err = LoadJob::spawn(missing, Arc::new(|| {}))
            .expect("spawn")
            .wait()
            .expect_err("missing");
        assert_eq!(
            err.to_string(),
            "/no/such/file.csv: does not exist: check the path, or pick the file with Open…"
        );
    }
}
