//! The real data sets that ship in `datasets/`, each with its source and licence beside it.
//!
//! Their files are compiled into the binary (6 MB, the images gzip-compressed as they ship), so
//! an installed app, a copied `.exe` or `cargo install` finds them wherever it runs, and never
//! looks in the source tree.

use std::path::PathBuf;

use super::dataset::{ImageShape, Table, Task};
use super::formats::common::{DataError, LoadOptions, Progress};
use super::formats::{csv, gunzip_if_needed, idx};

/// A real data set that ships with the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shipped {
    /// Name on the command line and in saved settings.
    pub name: &'static str,
    /// File under `datasets/` (for an IDX pair, the images).
    pub file: &'static str,
    /// Its contents, compiled in.
    pub contents: Contents,
    /// Features per row (checked against the file by a test).
    pub features: usize,
    /// Classification or regression.
    pub task: Task,
    /// Class names by label value (empty for regression; checked against the file by a test).
    pub class_names: &'static [&'static str],
    /// The image shape of each row, for pixel data.
    pub image: Option<ImageShape>,
    /// What it is, in English (the UI shows its own translated text).
    pub about: &'static str,
}

/// A shipped file's bytes, as they are under `datasets/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contents {
    /// A CSV file.
    Csv(&'static [u8]),
    /// An IDX pair, each gzip-compressed.
    Idx {
        /// The images file.
        images: &'static [u8],
        /// The labels file.
        labels: &'static [u8],
    },
}

/// The bytes of `datasets/$file`, compiled in.
macro_rules! shipped_file {
    ($file:literal) => {
        include_bytes!(concat!("../../datasets/", $file))
    };
}

impl Shipped {
    /// Width of the model's output layer.
    pub fn outputs(&self) -> usize {
        match self.task {
            Task::Classification => self.class_names.len(),
            Task::Regression => 1,
        }
    }
}

const DIGITS: &[&str] = &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

const fn grey(side: usize) -> ImageShape {
    ImageShape {
        width: side,
        height: side,
        channels: 1,
    }
}

/// The shipped data sets, classification first.
pub const SHIPPED: [Shipped; 9] = [
    Shipped {
        name: "iris",
        file: "iris/iris.csv",
        contents: Contents::Csv(shipped_file!("iris/iris.csv")),
        features: 4,
        task: Task::Classification,
        class_names: &["setosa", "versicolor", "virginica"],
        image: None,
        about: "Iris flowers: 150 × 4 measurements, 3 species",
    },
    Shipped {
        name: "wine",
        file: "wine/wine.csv",
        contents: Contents::Csv(shipped_file!("wine/wine.csv")),
        features: 13,
        task: Task::Classification,
        class_names: &["cultivar 1", "cultivar 2", "cultivar 3"],
        image: None,
        about: "Wine: 178 × 13 chemical measurements, 3 cultivars",
    },
    Shipped {
        name: "breast_cancer",
        file: "breast_cancer/breast_cancer.csv",
        contents: Contents::Csv(shipped_file!("breast_cancer/breast_cancer.csv")),
        features: 30,
        task: Task::Classification,
        class_names: &["malignant", "benign"],
        image: None,
        about: "Breast Cancer Wisconsin: 569 × 30 cell measurements, malignant or benign",
    },
    Shipped {
        name: "digits",
        file: "digits8x8/digits.csv",
        contents: Contents::Csv(shipped_file!("digits8x8/digits.csv")),
        features: 64,
        task: Task::Classification,
        class_names: DIGITS,
        image: Some(grey(8)),
        about: "Handwritten digits, 8×8 pixels: 1,797 images, 10 classes",
    },
    Shipped {
        name: "penguins",
        file: "penguins/penguins_numeric.csv",
        contents: Contents::Csv(shipped_file!("penguins/penguins_numeric.csv")),
        features: 4,
        task: Task::Classification,
        class_names: &["Adelie", "Chinstrap", "Gentoo"],
        image: None,
        about: "Palmer penguins: 342 × 4 measurements, 3 species",
    },
    Shipped {
        name: "mnist",
        file: "mnist10k/mnist10k-images-idx3-ubyte.gz",
        contents: Contents::Idx {
            images: shipped_file!("mnist10k/mnist10k-images-idx3-ubyte.gz"),
            labels: shipped_file!("mnist10k/mnist10k-labels-idx1-ubyte.gz"),
        },
        features: 784,
        task: Task::Classification,
        class_names: DIGITS,
        image: Some(grey(28)),
        about: "MNIST handwritten digits, 28×28: 10,000 images, 10 classes",
    },
    Shipped {
        name: "fashion-mnist",
        file: "fashion-mnist/t10k-images-idx3-ubyte.gz",
        contents: Contents::Idx {
            images: shipped_file!("fashion-mnist/t10k-images-idx3-ubyte.gz"),
            labels: shipped_file!("fashion-mnist/t10k-labels-idx1-ubyte.gz"),
        },
        features: 784,
        task: Task::Classification,
        class_names: &[
            "T-shirt/top",
            "Trouser",
            "Pullover",
            "Dress",
            "Coat",
            "Sandal",
            "Shirt",
            "Sneaker",
            "Bag",
            "Ankle boot",
        ],
        image: Some(grey(28)),
        about: "Fashion-MNIST clothing, 28×28: 10,000 images, 10 classes",
    },
    Shipped {
        name: "diabetes",
        file: "diabetes/diabetes.csv",
        contents: Contents::Csv(shipped_file!("diabetes/diabetes.csv")),
        features: 10,
        task: Task::Regression,
        class_names: &[],
        image: None,
        about: "Diabetes (regression): 442 patients × 10 measurements, disease progression after \
                one year",
    },
    Shipped {
        name: "autompg",
        file: "autompg/autompg.csv",
        contents: Contents::Csv(shipped_file!("autompg/autompg.csv")),
        features: 7,
        task: Task::Regression,
        class_names: &[],
        image: None,
        about: "Auto MPG (regression): 392 cars × 7 measurements, fuel use in miles per gallon",
    },
];

/// The shipped data set called `name`.
pub fn shipped(name: &str) -> Option<&'static Shipped> {
    SHIPPED.iter().find(|s| s.name == name)
}

/// The file of the shipped data set `name` in this source tree: for tests that read the file
/// itself, and for `cargo run` users who want to look at it. The app never reads it.
pub fn source_tree_path(name: &str) -> Option<PathBuf> {
    shipped(name)
        .map(|s| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets")).join(s.file))
}

/// Loads a shipped data set from the bytes compiled in, with its real class names and image
/// shape.
pub fn load_shipped(set: &Shipped, progress: Progress) -> Result<Table, DataError> {
    let options = LoadOptions {
        task: Some(set.task),
        ..LoadOptions::default()
    };
    let shown = format!("datasets/{}", set.file);
    let mut table = match set.contents {
        Contents::Csv(bytes) => csv::parse(bytes, &shown, set.name, &options, progress)?,
        Contents::Idx { images, labels } => {
            // Only named in messages; every shipped IDX set is named as a pair.
            let labels_shown =
                idx::pair_names(&shown).map_or_else(|| shown.clone(), |(_, labels)| labels);
            let file = |bytes: &[u8], shown: String| -> Result<idx::IdxFile, DataError> {
                let raw = gunzip_if_needed(bytes.to_vec(), &shown, options.budget_bytes)?;
                let (shape, values) = idx::parse(&raw, &shown)?;
                Ok(idx::IdxFile {
                    shown,
                    shape,
                    values,
                })
            };
            let images = file(images, shown.clone())?;
            let labels = file(labels, labels_shown)?;
            idx::pair_table(set.name, images, labels)?
        }
    };
    if !progress(0.95) {
        return Err(DataError::Cancelled { path: shown });
    }
    set.name.clone_into(&mut table.name);
    if set.task == Task::Classification && table.class_names.len() == set.class_names.len() {
        table.class_names = set.class_names.iter().map(|&n| n.to_owned()).collect();
    }
    if table.image.is_none() {
        table.image = set.image;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::dataset::Split;
    use crate::data::formats::common::no_progress;

    #[test]
    fn every_shipped_set_loads_with_its_names_and_shape() {
        for s in &SHIPPED {
            let t = load_shipped(s, &no_progress).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert!(t.rows >= 150, "{}: {} rows", s.name, t.rows);
            assert_eq!(t.features(), s.features, "{}", s.name);
            assert_eq!(t.task, s.task, "{}", s.name);
            assert_eq!(t.class_names, s.class_names, "{}", s.name);
            assert_eq!(t.x.len(), t.rows * t.features(), "{}", s.name);
            if let Some(shape) = t.image {
                assert_eq!(shape.len(), t.features(), "{}", s.name);
            }
        }
        let mnist = load_shipped(shipped("mnist").expect("mnist"), &no_progress).expect("mnist");
        assert_eq!((mnist.rows, mnist.features()), (10_000, 784));
        assert_eq!(mnist.class_counts().iter().sum::<usize>(), 10_000);
        // Shipped sorted by label: the split must shuffle, so both parts hold every class.
        let data = mnist.to_dataset(Split {
            test_fraction: 0.2,
            seed: 1,
            standardise: true,
            context: 64,
        });
        for c in 0..10 {
            assert!(
                data.test_y.contains(&(c as f32)),
                "class {c} missing from the test part"
            );
        }
        // Auto MPG's car names are text: left out, and said so.
        let auto = load_shipped(shipped("autompg").expect("autompg"), &no_progress).expect("mpg");
        assert_eq!(auto.label_column, "mpg");
        assert!(
            auto.notes
                .iter()
                .any(|n| n.to_string().contains("car_name")),
            "{:?}",
            auto.notes
        );
    }
}
