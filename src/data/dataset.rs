//! A data set as read (a [`Table`]) and as trained on (a [`Dataset`]): every source produces a
//! table, and every table becomes a data set the same way.

use crate::i18n::Said;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// What the model learns to predict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// One class out of several: softmax cross-entropy, accuracy.
    #[default]
    Classification,
    /// A number: mean squared error, R² and mean absolute error.
    Regression,
}

impl Task {
    /// Lower-case name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Task::Classification => "classification",
            Task::Regression => "regression",
        }
    }
}

/// Width, height and channels of image samples, whose features are pixels in row-major,
/// channel-last order with values in `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageShape {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// 1 (grey) or 3 (RGB).
    pub channels: usize,
}

impl ImageShape {
    /// Features per image.
    pub fn len(&self) -> usize {
        self.width * self.height * self.channels
    }

    /// True for an image without pixels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rows as a loader read them, before the split: features as `f32`, and the target.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// Display name (the file's or folder's name, or the generator's).
    pub name: String,
    /// Where it came from (empty for generated data).
    pub path: String,
    /// `csv`, `idx`, `images` or `generated`.
    pub format: &'static str,
    /// Feature names, one per column of `x`.
    pub feature_names: Vec<String>,
    /// Every column of a CSV file, in order, whether used or not (for choosing the label).
    pub columns: Vec<String>,
    /// Classification or regression.
    pub task: Task,
    /// Why the task was chosen, when the loader chose it (e.g. "214 distinct numbers").
    pub task_reason: Said,
    /// Class names by index (empty for regression).
    pub class_names: Vec<String>,
    /// The label or target column (or the labels file).
    pub label_column: String,
    /// Why that column is the label (e.g. "named `label` (the first found of …)").
    pub label_reason: Said,
    /// What the loader left out, each with the first place that shows why (text columns,
    /// rows with missing values, files that are not images).
    pub notes: Vec<Said>,
    /// Rows left out because a value was missing.
    pub rows_with_missing_values: usize,
    /// Rows kept.
    pub rows: usize,
    /// The shape of each sample, for image data.
    pub image: Option<ImageShape>,
    /// `[rows, features]`, row-major, as read (not standardised).
    #[serde(skip)]
    pub x: Vec<f32>,
    /// Class index (as `f32`, exact for small integers) or target value, per row.
    #[serde(skip)]
    pub y: Vec<f32>,
}

/// The `format` of a text's table (see `text_data.rs`): its characters' numbers in one run.
pub const TEXT_FORMAT: &str = "text";

/// How a table is split and scaled for training.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// Share of rows held out as the test set.
    pub test_fraction: f32,
    /// Seed of the shuffle.
    pub seed: u64,
    /// Standardise each feature to mean 0 and standard deviation 1 (training part's statistics).
    pub standardise: bool,
    /// Characters a window of a text holds (a text is cut into windows of this many, each
    /// with the character after each position as its targets).
    pub context: usize,
}

impl Table {
    /// Features per row.
    pub fn features(&self) -> usize {
        self.feature_names.len()
    }

    /// Rows per class, by index (empty for regression).
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.class_names.len()];
        if self.task == Task::Classification {
            for &y in &self.y {
                if let Some(c) = counts.get_mut(y as usize) {
                    *c += 1;
                }
            }
        }
        counts
    }

    /// Smallest, mean and largest target value (regression), `None` for classification.
    pub fn target_range(&self) -> Option<[f64; 3]> {
        if self.task != Task::Regression || self.y.is_empty() {
            return None;
        }
        let (mut lo, mut hi, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for &v in &self.y {
            let v = f64::from(v);
            lo = lo.min(v);
            hi = hi.max(v);
            sum += v;
        }
        Some([lo, sum / self.y.len() as f64, hi])
    }

    /// Bytes the values take in memory.
    pub fn size_in_bytes(&self) -> usize {
        (self.x.len() + self.y.len()) * std::mem::size_of::<f32>()
    }

    /// Shuffles with `split.seed`, holds out the test share, and scales with the training part.
    pub fn to_dataset(&self, split: Split) -> Dataset {
        self.split_with(split, &mut ChaCha8Rng::seed_from_u64(split.seed))
    }

    /// As [`Table::to_dataset`], drawing the shuffle from `rng` (the generators go on with the
    /// generator they drew the points from).
    pub(super) fn split_with(&self, split: Split, rng: &mut ChaCha8Rng) -> Dataset {
        if self.format == TEXT_FORMAT {
            return windowed(self, split, rng);
        }
        let features = self.features();
        let rows = self.y.len();
        let mut order: Vec<usize> = (0..rows).collect();
        order.shuffle(rng);
        let test_rows = if rows < 2 {
            0
        } else {
            ((rows as f32 * split.test_fraction).round() as usize).clamp(1, rows - 1)
        };
        let (test_idx, train_idx) = order.split_at(test_rows);
        let gather = |idx: &[usize]| {
            let mut gx = Vec::with_capacity(idx.len() * features);
            let mut gy = Vec::with_capacity(idx.len());
            for &i in idx {
                gx.extend_from_slice(&self.x[i * features..(i + 1) * features]);
                gy.push(self.y[i]);
            }
            (gx, gy)
        };
        let (mut train_x, mut train_y) = gather(train_idx);
        let (mut test_x, mut test_y) = gather(test_idx);
        if split.standardise {
            // Rows of numbers: each feature by its own statistics. Images: each channel by the
            // statistics of all its pixels, as image models are normalised, so a pixel means
            // the same wherever it is (per-pixel statistics cost a CNN 0.6 points of test
            // accuracy on MNIST, measured, and blow up the rare stroke in a border pixel).
            let stride = self.image.map_or(features, |image| image.channels.max(1));
            for f in 0..stride {
                let scale = Scale::of(train_x.iter().skip(f).step_by(stride).copied());
                for data in [&mut train_x, &mut test_x] {
                    for v in data.iter_mut().skip(f).step_by(stride) {
                        *v = scale.apply(*v);
                    }
                }
            }
        }
        // A regression target is always standardised: with targets in the hundreds, the first
        // steps' squared errors would be huge and a learning rate that suits one data set would
        // diverge on the next. Errors are reported back in the target's own units.
        let target_scale = match self.task {
            Task::Regression => {
                let scale = Scale::of(train_y.iter().copied());
                for v in train_y.iter_mut().chain(test_y.iter_mut()) {
                    *v = scale.apply(*v);
                }
                scale
            }
            Task::Classification => Scale::IDENTITY,
        };
        Dataset {
            name: self.name.clone(),
            features,
            task: self.task,
            class_names: self.class_names.clone(),
            target_name: self.label_column.clone(),
            target_scale,
            standardised: split.standardise,
            feature_names: self.feature_names.clone(),
            image: self.image,
            train_x,
            train_y,
            test_x,
            test_y,
            text: None,
        }
    }
}

/// A text's table cut into windows of `split.context` characters (at least 1, and at most what
/// leaves two windows), shuffled with `rng`, and split: each window's row holds its characters'
/// numbers, its targets the character after each.
fn windowed(table: &Table, split: Split, rng: &mut ChaCha8Rng) -> Dataset {
    let ids = &table.x;
    let context = split
        .context
        .clamp(1, (ids.len().saturating_sub(1) / 2).max(1));
    let windows = ids.len().saturating_sub(1) / context;
    let test = if windows < 2 {
        0
    } else {
        ((windows as f32 * split.test_fraction).round() as usize).clamp(1, windows - 1)
    };
    // The validation part is the end of the text, as nanoGPT splits it: its windows are of
    // passages the model never trained on, not interleaved with the training ones.
    let mut train_idx: Vec<usize> = (0..windows - test).collect();
    train_idx.shuffle(rng);
    let test_idx: Vec<usize> = (windows - test..windows).collect();
    let gather = |idx: &[usize]| {
        let mut x = Vec::with_capacity(idx.len() * context);
        let mut y = Vec::with_capacity(idx.len() * context);
        for &w in idx {
            let start = w * context;
            x.extend_from_slice(&ids[start..start + context]);
            y.extend_from_slice(&ids[start + 1..=start + context]);
        }
        (x, y)
    };
    let (train_x, train_y) = gather(&train_idx);
    let (test_x, test_y) = gather(&test_idx);
    Dataset {
        name: table.name.clone(),
        features: context,
        task: Task::Classification,
        class_names: table.class_names.clone(),
        target_name: table.label_column.clone(),
        target_scale: Scale::IDENTITY,
        standardised: false,
        feature_names: (1..=context).map(|i| format!("char {i}")).collect(),
        image: None,
        train_x,
        train_y,
        test_x,
        test_y,
        text: Some((
            std::sync::Arc::new(table.clone()),
            Split { context, ..split },
        )),
    }
}

/// `(v − mean) / std`: standardisation with one part's statistics.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Scale {
    /// Subtracted first.
    pub mean: f64,
    /// Then divided by.
    pub std: f64,
}

impl Scale {
    /// Leaves values as they are.
    pub const IDENTITY: Scale = Scale {
        mean: 0.0,
        std: 1.0,
    };

    /// The mean and (population) standard deviation of `values`, in f64; a constant column
    /// keeps a deviation of 1 so it is only shifted.
    pub fn of(values: impl Iterator<Item = f32> + Clone) -> Self {
        let n = values.clone().count().max(1) as f64;
        let mean = values.clone().map(f64::from).sum::<f64>() / n;
        let var = values.map(|v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n;
        let std = if var > 1e-12 { var.sqrt() } else { 1.0 };
        Self { mean, std }
    }

    /// `(v − mean) / std`.
    pub fn apply(&self, v: f32) -> f32 {
        ((f64::from(v) - self.mean) / self.std) as f32
    }

    /// Back to the original units: `v · std + mean`.
    pub fn invert(&self, v: f32) -> f64 {
        f64::from(v) * self.std + self.mean
    }
}

/// A data set ready for training: shuffled, split, and scaled.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Display name.
    pub name: String,
    /// Features per sample.
    pub features: usize,
    /// Classification or regression.
    pub task: Task,
    /// Name of each class, by index (empty for regression).
    pub class_names: Vec<String>,
    /// Name of the label or target column.
    pub target_name: String,
    /// How the regression target was standardised ([`Scale::IDENTITY`] for classification).
    pub target_scale: Scale,
    /// Whether the features were standardised.
    pub standardised: bool,
    /// Name of each feature, by column.
    pub feature_names: Vec<String>,
    /// The shape of each sample, for image data.
    pub image: Option<ImageShape>,
    /// `[train_rows, features]`.
    pub train_x: Vec<f32>,
    /// Class index (as `f32`) or standardised target per training row.
    pub train_y: Vec<f32>,
    /// `[test_rows, features]`, scaled with the training part's statistics.
    pub test_x: Vec<f32>,
    /// Class index or standardised target per test row.
    pub test_y: Vec<f32>,
    /// A text's whole table and how it was split, to cut it again at another context length
    /// (a sweep of the context).
    pub text: Option<(std::sync::Arc<Table>, Split)>,
}

impl Dataset {
    /// Training rows (samples: a text's windows).
    pub fn train_rows(&self) -> usize {
        self.train_x.len() / self.features.max(1)
    }

    /// Test rows.
    pub fn test_rows(&self) -> usize {
        self.test_x.len() / self.features.max(1)
    }

    /// Targets a row: 1, or a text window's characters (the next character after each).
    pub fn targets_per_row(&self) -> usize {
        (self.train_y.len() / self.train_rows().max(1)).max(1)
    }

    /// Whether its samples are windows of a text's token ids (a language model's data).
    pub fn is_text(&self) -> bool {
        self.text.is_some() || self.targets_per_row() > 1
    }

    /// A text cut again into windows of `context` characters (split as before), or `None` for
    /// data that is not a text.
    pub fn with_context(&self, context: usize) -> Option<Dataset> {
        let (table, split) = self.text.as_ref()?;
        Some(table.to_dataset(Split { context, ..*split }))
    }

    /// Number of classes (0 for regression).
    pub fn classes(&self) -> usize {
        self.class_names.len()
    }

    /// Width of the model's output layer: the classes, or 1 for a regression target.
    pub fn outputs(&self) -> usize {
        match self.task {
            Task::Classification => self.classes(),
            Task::Regression => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(task: Task, x: Vec<f32>, y: Vec<f32>) -> Table {
        Table {
            name: "t".into(),
            path: String::new(),
            format: "generated",
            feature_names: vec!["a".into(), "b".into()],
            columns: Vec::new(),
            task,
            task_reason: Said::default(),
            class_names: if task == Task::Classification {
                vec!["0".into(), "1".into()]
            } else {
                Vec::new()
            },
            label_column: "y".into(),
            label_reason: Said::verbatim("the generator's class"),
            notes: Vec::new(),
            rows_with_missing_values: 0,
            rows: y.len(),
            image: None,
            x,
            y,
        }
    }

    #[test]
    fn images_are_standardised_per_channel_so_a_pixel_means_the_same_everywhere() {
        // 2×2 images of two channels: channel 0 grows along the row, channel 1 is 100 + that.
        let rows = 50;
        let x: Vec<f32> = (0..rows * 8)
            .map(|i| {
                let (pixel, channel) = ((i % 8) / 2, i % 2);
                (pixel + i / 8) as f32 + 100.0 * channel as f32
            })
            .collect();
        let y: Vec<f32> = (0..rows).map(|i| (i % 2) as f32).collect();
        let mut t = table(Task::Classification, x, y);
        t.feature_names = (0..8).map(|i| format!("p{i}")).collect();
        t.image = Some(ImageShape {
            width: 2,
            height: 2,
            channels: 2,
        });
        let d = t.to_dataset(Split {
            test_fraction: 0.2,
            seed: 3,
            standardise: true,
            context: 64,
        });
        // One scale per channel: within a row the pixels keep their order and spacing, and
        // the two channels, 100 apart before, now read alike.
        let first = &d.train_x[..8];
        assert!(
            (first[2] - first[0]) > 0.0
                && ((first[4] - first[2]) - (first[2] - first[0])).abs() < 1e-5
        );
        assert!((first[0] - first[1]).abs() < 1e-5, "{first:?}");
        let mean: f32 = d.train_x.iter().sum::<f32>() / d.train_x.len() as f32;
        assert!(mean.abs() < 1e-4, "{mean}");
    }

    #[test]
    fn the_split_standardises_with_the_training_part_only_and_can_be_turned_off() {
        let rows = 100;
        let x: Vec<f32> = (0..rows * 2).map(|i| i as f32 * 3.0 + 10.0).collect();
        let y: Vec<f32> = (0..rows).map(|i| (i % 2) as f32).collect();
        let t = table(Task::Classification, x, y);
        let split = Split {
            test_fraction: 0.2,
            seed: 3,
            standardise: true,
            context: 64,
        };
        let d = t.to_dataset(split);
        assert_eq!((d.train_rows(), d.test_rows()), (80, 20));
        let mean: f32 = d.train_x.iter().step_by(2).sum::<f32>() / 80.0;
        assert!(mean.abs() < 1e-4, "{mean}");
        let raw = t.to_dataset(Split {
            standardise: false,
            ..split
        });
        // Same seed, same rows on each side; only the scaling differs.
        assert_eq!(raw.train_y, d.train_y);
        assert!(raw.train_x.iter().all(|&v| v >= 10.0));
    }

    #[test]
    fn a_regression_target_is_standardised_and_inverted_back() {
        let rows = 50;
        let x: Vec<f32> = (0..rows * 2).map(|i| i as f32).collect();
        let y: Vec<f32> = (0..rows).map(|i| 100.0 + 4.0 * i as f32).collect();
        let d = table(Task::Regression, x, y.clone()).to_dataset(Split {
            test_fraction: 0.2,
            seed: 1,
            standardise: true,
            context: 64,
        });
        assert_eq!(d.outputs(), 1);
        assert!(d.target_scale.std > 1.0);
        let mean: f32 = d.train_y.iter().sum::<f32>() / d.train_rows() as f32;
        assert!(mean.abs() < 1e-4);
        let back = d.target_scale.invert(d.test_y[0]);
        assert!(
            y.iter().any(|&v| (f64::from(v) - back).abs() < 1e-3),
            "{back}"
        );
    }
}
