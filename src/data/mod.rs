//! Data sets: seeded 2-D generators, the shipped real sets and the user's own files.
//!
//! Every source produces a [`Table`] — the rows as read, with what the loader did to them — and
//! every table becomes a [`Dataset`] the same way: shuffled with a seed, split into a training
//! and a test part, features standardised with the training part's statistics (unless the user
//! turns that off), and a regression target standardised likewise.
//!
//! - [`formats`]: reading the user's files (CSV, IDX, image folders) behind one dispatcher;
//! - [`shipped`]: the real data sets that come with the app; `synthetic`: the 2-D generators;
//! - [`source`]: where a run's data comes from, and loading it on a background job;
//! - [`dataloader`]: the `DataLoader`, which cuts a data set into batches on worker threads.

pub mod dataloader;
mod dataset;
pub mod formats;
pub mod shipped;
pub mod source;
mod synthetic;
pub mod text_data;

pub use dataset::{Dataset, ImageShape, Scale, Split, Table, Task};
pub use synthetic::{DatasetSpec, MAX_CLASSES, MAX_SAMPLES, MIN_SAMPLES, Synthetic};
