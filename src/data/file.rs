//! Data sets from files: CSV tables and IDX images (plain or gzip), and the real sets that ship
//! in `datasets/`.
//!
//! Every refusal names the file, the line or byte offset, and what was expected, because the
//! user's own file is where most lessons go wrong first.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{Dataset, split_and_standardise};

/// Most classes a file may have: a network with more outputs than this is not a lesson.
pub const MAX_FILE_CLASSES: usize = 100;
/// Most bytes the values of one data set may take in memory (as `f32`).
pub const MAX_VALUES_BYTES: u64 = 1 << 30;
/// Fewest rows a file must have.
pub const MIN_ROWS: usize = 10;

/// Why a file could not be loaded.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DataError {
    /// The file could not be read.
    #[error("{path}: cannot read it: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's reason.
        message: String,
    },
    /// A CSV line could not be parsed.
    #[error("{path}, line {line}: {message}")]
    Csv {
        /// The file.
        path: String,
        /// 1-based line number.
        line: u64,
        /// What was expected.
        message: String,
    },
    /// An IDX file's header or size is wrong.
    #[error("{path}, byte {offset}: {message}")]
    Idx {
        /// The file.
        path: String,
        /// Byte offset (after decompression) where the problem is.
        offset: u64,
        /// What was expected.
        message: String,
    },
    /// The data is well-formed but outside what the app trains on.
    #[error("{path}: {message}")]
    Refused {
        /// The file.
        path: String,
        /// What is wrong, with the number and the limit.
        message: String,
    },
}

/// How to read a file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadOptions {
    /// The label column of a CSV, by name or by 0-based index; by default a column named
    /// `label`, `target`, `class`, `species` or `y`, else the last.
    pub label: Option<String>,
}

/// A loaded table before the split: features as `f32` rows, class indices, and what was done.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// Display name (the file name).
    pub name: String,
    /// Where it came from.
    pub path: String,
    /// `csv` or `idx`.
    pub format: &'static str,
    /// Feature column names.
    pub feature_names: Vec<String>,
    /// Class names, by index.
    pub class_names: Vec<String>,
    /// Name of the label column.
    pub label_column: String,
    /// Columns left out because they hold text, with the first line that shows it.
    pub ignored_columns: Vec<String>,
    /// Rows left out because a value was missing.
    pub rows_with_missing_values: usize,
    /// The first such row's line and column, for the message.
    pub first_missing: Option<String>,
    /// Rows kept.
    pub rows: usize,
    /// `[rows, features]`, row-major, as read (not yet standardised).
    #[serde(skip)]
    pub x: Vec<f32>,
    /// Class index per row.
    #[serde(skip)]
    pub y: Vec<f32>,
}

impl Table {
    /// Features per row.
    pub fn features(&self) -> usize {
        self.feature_names.len()
    }

    /// Rows per class, by index.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.class_names.len()];
        for &y in &self.y {
            counts[y as usize] += 1;
        }
        counts
    }

    /// Shuffles with `seed`, holds out `test_fraction`, and standardises with the training part.
    pub fn into_dataset(self, test_fraction: f32, seed: u64) -> Dataset {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let features = self.features();
        let classes = self.class_names.len();
        let mut data = split_and_standardise(
            &self.name,
            &self.x,
            &self.y,
            features,
            classes,
            test_fraction,
            &mut rng,
        );
        data.class_names = self.class_names;
        data.feature_names = self.feature_names;
        data
    }
}

/// A real data set that ships with the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shipped {
    /// Name on the command line and in saved settings.
    pub name: &'static str,
    /// File under `datasets/`.
    pub file: &'static str,
    /// Features per row (checked against the file by a test).
    pub features: usize,
    /// Classes (checked against the file by a test).
    pub classes: usize,
    /// What it is.
    pub about: &'static str,
}

/// The shipped data sets.
pub const SHIPPED: [Shipped; 7] = [
    Shipped {
        name: "iris",
        file: "iris/iris.csv",
        features: 4,
        classes: 3,
        about: "Iris flowers: 150 × 4 measurements, 3 species",
    },
    Shipped {
        name: "wine",
        file: "wine/wine.csv",
        features: 13,
        classes: 3,
        about: "Wine: 178 × 13 chemical measurements, 3 cultivars",
    },
    Shipped {
        name: "breast_cancer",
        file: "breast_cancer/breast_cancer.csv",
        features: 30,
        classes: 2,
        about: "Breast Cancer Wisconsin: 569 × 30, malignant or benign",
    },
    Shipped {
        name: "digits",
        file: "digits8x8/digits.csv",
        features: 64,
        classes: 10,
        about: "Handwritten digits, 8×8 pixels: 1,797 × 64, 10 classes",
    },
    Shipped {
        name: "penguins",
        file: "penguins/penguins_numeric.csv",
        features: 4,
        classes: 3,
        about: "Palmer penguins: 342 × 4 measurements, 3 species",
    },
    Shipped {
        name: "mnist",
        file: "mnist10k/mnist10k-images-idx3-ubyte.gz",
        features: 784,
        classes: 10,
        about: "MNIST digits, 28×28: 10,000 images, 10 classes",
    },
    Shipped {
        name: "fashion-mnist",
        file: "fashion-mnist/t10k-images-idx3-ubyte.gz",
        features: 784,
        classes: 10,
        about: "Fashion-MNIST, 28×28: 10,000 images, 10 classes",
    },
];

/// The shipped data set called `name`.
pub fn shipped(name: &str) -> Option<&'static Shipped> {
    SHIPPED.iter().find(|s| s.name == name)
}

/// Where the shipped files are: `BATCHSCOPE_DATASETS`, `datasets/` beside the executable, or the
/// source tree's `datasets/` (for `cargo run`).
pub fn datasets_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BATCHSCOPE_DATASETS") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|p| p.join("datasets")))
        && dir.is_dir()
    {
        return dir;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets"))
}

/// The path of a shipped data set by name, if the name is one.
pub fn shipped_path(name: &str) -> Option<PathBuf> {
    shipped(name).map(|s| datasets_dir().join(s.file))
}

/// Loads a CSV or IDX file.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Table, DataError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| io_error(&shown, &e))?;
    if meta.is_dir() {
        return Err(DataError::Refused {
            path: shown,
            message: "is a folder; image folders are not supported yet: give a CSV or IDX file"
                .into(),
        });
    }
    let name = path
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    let lower = name.to_lowercase();
    // `lower` is already lower-case, so the extension test is case-insensitive.
    if lower.contains("idx3") || lower.contains("idx1") || lower.rsplit('.').next() == Some("idx") {
        return load_idx(path, &name);
    }
    // Text grows by about 4× when parsed into f32 rows at worst; refuse what cannot fit.
    if meta.len() > MAX_VALUES_BYTES {
        return Err(DataError::Refused {
            path: shown,
            message: format!(
                "{} MiB is more than the {} MiB this app loads: use a sample of the rows",
                meta.len() >> 20,
                MAX_VALUES_BYTES >> 20
            ),
        });
    }
    let bytes = read_maybe_gzip(path)?;
    load_csv(&bytes, &shown, &name, options)
}

fn io_error(path: &str, e: &std::io::Error) -> DataError {
    DataError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

fn read_maybe_gzip(path: &Path) -> Result<Vec<u8>, DataError> {
    let shown = path.display().to_string();
    let raw = std::fs::read(path).map_err(|e| io_error(&shown, &e))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .take(MAX_VALUES_BYTES)
            .read_to_end(&mut out)
            .map_err(|e| DataError::Io {
                path: shown,
                message: format!("not valid gzip: {e}"),
            })?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// The delimiter that splits the first line into the most fields, among `, ; \t |`.
fn sniff_delimiter(text: &str) -> u8 {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    [b',', b';', b'\t', b'|']
        .into_iter()
        .max_by_key(|&d| first.bytes().filter(|&b| b == d).count())
        .unwrap_or(b',')
}

fn is_missing(field: &str) -> bool {
    matches!(
        field.trim(),
        "" | "?" | "NA" | "N/A" | "NaN" | "nan" | "null" | "NULL" | "None"
    )
}

fn parse_number(field: &str) -> Option<f32> {
    field.trim().parse::<f32>().ok().filter(|v| v.is_finite())
}

fn load_csv(
    bytes: &[u8],
    path: &str,
    name: &str,
    options: &LoadOptions,
) -> Result<Table, DataError> {
    let text = std::str::from_utf8(bytes).map_err(|e| DataError::Refused {
        path: path.to_owned(),
        message: format!(
            "is not UTF-8 text (byte {}): save it as UTF-8 CSV",
            e.valid_up_to()
        ),
    })?;
    let delimiter = sniff_delimiter(text);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(false)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut records: Vec<(u64, csv::StringRecord)> = Vec::new();
    for result in reader.records() {
        let record = result.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            DataError::Csv {
                path: path.to_owned(),
                line,
                message: match e.kind() {
                    csv::ErrorKind::UnequalLengths {
                        expected_len, len, ..
                    } => {
                        format!("{len} fields where the lines before have {expected_len}")
                    }
                    _ => e.to_string(),
                },
            }
        })?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        let line = record.position().map_or(0, csv::Position::line);
        records.push((line, record));
    }
    let Some((_, first)) = records.first() else {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: "has no rows".into(),
        });
    };
    let columns = first.len();
    if columns < 2 {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "has one column (delimiter `{}` found nothing to split): a data set needs at least \
                 one feature and a label",
                delimiter as char
            ),
        });
    }
    // A header is a first line with a field that is text where the second line has a number.
    let has_header = records.get(1).is_some_and(|(_, second)| {
        first
            .iter()
            .zip(second.iter())
            .any(|(a, b)| parse_number(a).is_none() && !is_missing(a) && parse_number(b).is_some())
    }) || first.iter().all(|f| parse_number(f).is_none());
    let names: Vec<String> = if has_header {
        first.iter().map(str::to_owned).collect()
    } else {
        (0..columns).map(|c| format!("column {c}")).collect()
    };
    let rows = if has_header {
        &records[1..]
    } else {
        &records[..]
    };
    let label = choose_label(&names, options, path)?;

    // A feature column is numeric if every present value parses.
    let mut text_columns: BTreeMap<usize, u64> = BTreeMap::new();
    for (line, record) in rows {
        for (c, field) in record.iter().enumerate() {
            if c != label && !is_missing(field) && parse_number(field).is_none() {
                text_columns.entry(c).or_insert(*line);
            }
        }
    }
    let features: Vec<usize> = (0..columns)
        .filter(|c| *c != label && !text_columns.contains_key(c))
        .collect();
    if features.is_empty() {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "no numeric feature columns besides the label `{}`",
                names[label]
            ),
        });
    }
    let mut x = Vec::with_capacity(rows.len() * features.len());
    let mut labels: Vec<&str> = Vec::with_capacity(rows.len());
    let mut missing_rows = 0;
    let mut first_missing = None;
    for (line, record) in rows {
        let missing_at = std::iter::once(label)
            .chain(features.iter().copied())
            .find(|&c| is_missing(&record[c]));
        if let Some(c) = missing_at {
            missing_rows += 1;
            first_missing.get_or_insert_with(|| format!("line {line}, column `{}`", names[c]));
            continue;
        }
        for &c in &features {
            x.push(parse_number(&record[c]).unwrap_or(0.0));
        }
        labels.push(record.get(label).unwrap_or(""));
    }
    let (class_names, y) = classes_of(&labels, &names[label], path)?;
    check_rows(path, labels.len(), missing_rows)?;
    let values_bytes = (x.len() * 4) as u64;
    if values_bytes > MAX_VALUES_BYTES {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "{} MiB of values is more than the {} MiB this app loads",
                values_bytes >> 20,
                MAX_VALUES_BYTES >> 20
            ),
        });
    }
    Ok(Table {
        name: name.to_owned(),
        path: path.to_owned(),
        format: "csv",
        feature_names: features.iter().map(|&c| names[c].clone()).collect(),
        class_names,
        label_column: names[label].clone(),
        ignored_columns: text_columns
            .iter()
            .map(|(&c, line)| format!("{} (text, e.g. line {line})", names[c]))
            .collect(),
        rows_with_missing_values: missing_rows,
        first_missing,
        rows: labels.len(),
        x,
        y,
    })
}

fn choose_label(names: &[String], options: &LoadOptions, path: &str) -> Result<usize, DataError> {
    if let Some(wanted) = &options.label {
        if let Some(i) = names.iter().position(|n| n == wanted) {
            return Ok(i);
        }
        if let Ok(i) = wanted.parse::<usize>()
            && i < names.len()
        {
            return Ok(i);
        }
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "no column `{wanted}`; the columns are {} (or give an index from 0 to {})",
                names.join(", "),
                names.len() - 1
            ),
        });
    }
    let usual = ["label", "target", "class", "species", "y"];
    Ok(names
        .iter()
        .position(|n| usual.contains(&n.to_lowercase().as_str()))
        .unwrap_or(names.len() - 1))
}

/// Maps label values to class indices: integers in numeric order, text in alphabetical order.
fn classes_of(
    labels: &[&str],
    column: &str,
    path: &str,
) -> Result<(Vec<String>, Vec<f32>), DataError> {
    let numeric: Option<Vec<f32>> = labels.iter().map(|l| parse_number(l)).collect();
    let mut names: Vec<String> = if let Some(values) = &numeric {
        if values.iter().any(|v| v.fract() != 0.0) {
            return Err(DataError::Refused {
                path: path.to_owned(),
                message: format!(
                    "the label column `{column}` holds real numbers (a regression target); this \
                     version trains classifiers only: choose a column of classes with --label"
                ),
            });
        }
        let mut ints: Vec<i64> = values.iter().map(|&v| v as i64).collect();
        ints.sort_unstable();
        ints.dedup();
        ints.iter().map(i64::to_string).collect()
    } else {
        let mut text: Vec<String> = labels.iter().map(|l| (*l).to_owned()).collect();
        text.sort();
        text.dedup();
        text
    };
    if names.len() > MAX_FILE_CLASSES {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "the label column `{column}` has {} distinct values, more than the {MAX_FILE_CLASSES} \
                 classes this app trains on: is it the right column?",
                names.len()
            ),
        });
    }
    if names.len() < 2 {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "the label column `{column}` has one class only: a classifier needs two"
            ),
        });
    }
    let index: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let y = labels
        .iter()
        .map(|l| {
            let key = match &numeric {
                Some(_) => parse_number(l)
                    .map(|v| (v as i64).to_string())
                    .unwrap_or_default(),
                None => (*l).to_owned(),
            };
            index.get(key.as_str()).copied().unwrap_or(0) as f32
        })
        .collect();
    names.shrink_to_fit();
    Ok((names, y))
}

fn check_rows(path: &str, rows: usize, missing: usize) -> Result<(), DataError> {
    if rows < MIN_ROWS {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "{rows} usable rows ({missing} left out for missing values), fewer than the {MIN_ROWS} needed"
            ),
        });
    }
    Ok(())
}

/// Reads one IDX file: magic `0 0 type dims`, big-endian dimensions, then the values.
fn read_idx(path: &Path) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let shown = path.display().to_string();
    let bytes = read_maybe_gzip(path)?;
    let bad = |offset: u64, message: String| DataError::Idx {
        path: shown.clone(),
        offset,
        message,
    };
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] != 0 {
        return Err(bad(
            0,
            "expected an IDX header (0x00 0x00 type dims)".into(),
        ));
    }
    if bytes[2] != 0x08 {
        return Err(bad(
            2,
            format!(
                "value type 0x{:02x}; only unsigned bytes (0x08) are supported",
                bytes[2]
            ),
        ));
    }
    let dims = bytes[3] as usize;
    if dims == 0 || dims > 4 || bytes.len() < 4 + 4 * dims {
        return Err(bad(
            3,
            format!("{dims} dimensions; expected 1 (labels) to 3 (images)"),
        ));
    }
    let shape: Vec<usize> = (0..dims)
        .map(|d| {
            let o = 4 + 4 * d;
            u32::from_be_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) as usize
        })
        .collect();
    let count: usize = shape.iter().product();
    let header = 4 + 4 * dims;
    if bytes.len() != header + count {
        return Err(bad(
            header as u64,
            format!(
                "the header says {} values ({shape:?}) but {} bytes follow",
                count,
                bytes.len() - header
            ),
        ));
    }
    Ok((shape, bytes[header..].to_vec()))
}

/// Given the images or the labels file, the other one: `images-idx3` ↔ `labels-idx1`.
fn idx_pair(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let name = path.file_name()?.to_str()?;
    let dir = path.parent().unwrap_or(Path::new("."));
    if name.contains("images-idx3") {
        Some((
            path.to_path_buf(),
            dir.join(name.replace("images-idx3", "labels-idx1")),
        ))
    } else if name.contains("labels-idx1") {
        Some((
            dir.join(name.replace("labels-idx1", "images-idx3")),
            path.to_path_buf(),
        ))
    } else {
        None
    }
}

fn load_idx(path: &Path, name: &str) -> Result<Table, DataError> {
    let shown = path.display().to_string();
    let (images_path, labels_path) = idx_pair(path).ok_or_else(|| DataError::Refused {
        path: shown.clone(),
        message: "an IDX file's name must contain `images-idx3` or `labels-idx1`, so its partner can be found".into(),
    })?;
    let (shape, pixels) = read_idx(&images_path)?;
    let (label_shape, labels) = read_idx(&labels_path)?;
    if shape.len() != 3 || label_shape.len() != 1 || label_shape[0] != shape[0] {
        return Err(DataError::Refused {
            path: shown,
            message: format!(
                "images {shape:?} and labels {label_shape:?} do not pair up: expected N×H×W and N"
            ),
        });
    }
    let (rows, height, width) = (shape[0], shape[1], shape[2]);
    let x: Vec<f32> = pixels.iter().map(|&p| f32::from(p) / 255.0).collect();
    let mut ints: Vec<u8> = labels.clone();
    ints.sort_unstable();
    ints.dedup();
    let labels_text: Vec<String> = labels.iter().map(u8::to_string).collect();
    let refs: Vec<&str> = labels_text.iter().map(String::as_str).collect();
    let (class_names, y) = classes_of(&refs, "labels", &shown)?;
    check_rows(&shown, rows, 0)?;
    Ok(Table {
        name: name.replace("-images-idx3-ubyte", "").replace(".gz", ""),
        path: shown,
        format: "idx",
        feature_names: (0..height * width)
            .map(|i| format!("pixel {},{}", i / width, i % width))
            .collect(),
        class_names,
        label_column: labels_path.display().to_string(),
        ignored_columns: Vec::new(),
        rows_with_missing_values: 0,
        first_missing: None,
        rows,
        x,
        y,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str, label: Option<&str>) -> Result<Table, DataError> {
        let options = LoadOptions {
            label: label.map(str::to_owned),
        };
        load_csv(text.as_bytes(), "test.csv", "test.csv", &options)
    }

    fn rows(n: usize, f: impl Fn(usize) -> String) -> String {
        (0..n).map(|i| f(i) + "\n").collect()
    }

    #[test]
    fn header_delimiter_text_labels_and_missing_values() {
        let text = format!(
            "a;b;kind\n{}3;?;cat\n",
            rows(12, |i| format!("{i};{};{}", i * 2, ["cat", "dog"][i % 2]))
        );
        let t = csv(&text, None).expect("valid");
        assert_eq!(t.feature_names, ["a", "b"]);
        assert_eq!(t.label_column, "kind");
        assert_eq!(t.class_names, ["cat", "dog"]);
        assert_eq!(t.rows, 12);
        assert_eq!(t.rows_with_missing_values, 1);
        assert_eq!(t.first_missing.as_deref(), Some("line 14, column `b`"));
        assert_eq!(t.class_counts(), [6, 6]);
        assert_eq!(&t.x[..4], &[0.0, 0.0, 1.0, 2.0]);
    }

    #[test]
    fn no_header_last_column_and_text_features_left_out() {
        let text = rows(20, |i| format!("{i},name{i},{}", i % 3));
        let t = csv(&text, None).expect("valid");
        assert_eq!(t.feature_names, ["column 0"]);
        assert_eq!(t.ignored_columns, ["column 1 (text, e.g. line 1)"]);
        assert_eq!(t.class_names, ["0", "1", "2"]);
    }

    #[test]
    fn refusals_name_the_line_the_column_and_the_limit() {
        let ragged = format!("{}1,2\n", rows(11, |i| format!("{i},{i},0")));
        let err = csv(&ragged, None).expect_err("ragged");
        assert_eq!(
            err.to_string(),
            "test.csv, line 12: 2 fields where the lines before have 3"
        );
        let regression = rows(20, |i| format!("{i},{i}.5"));
        assert!(
            csv(&regression, None)
                .expect_err("regression")
                .to_string()
                .contains("regression target")
        );
        let many = rows(300, |i| format!("{i},{i}"));
        let err = csv(&many, None).expect_err("too many classes").to_string();
        assert!(
            err.contains("300 distinct values") && err.contains("100 classes"),
            "{err}"
        );
        let few = "x,label\n1,0\n2,1\n";
        assert!(
            csv(few, None)
                .expect_err("few")
                .to_string()
                .contains("2 usable rows")
        );
        let err = csv("x,y,label\n1,2,0\n", Some("kind"))
            .expect_err("no such column")
            .to_string();
        assert!(
            err.contains("no column `kind`") && err.contains("x, y, label"),
            "{err}"
        );
    }

    #[test]
    fn every_shipped_set_loads() {
        for s in SHIPPED {
            let path = shipped_path(s.name).expect("shipped");
            let t =
                load(&path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert!(t.rows >= 150, "{}: {} rows", s.name, t.rows);
            assert_eq!(
                (t.features(), t.class_names.len()),
                (s.features, s.classes),
                "{}",
                s.name
            );
            assert_eq!(t.x.len(), t.rows * t.features(), "{}", s.name);
        }
        let mnist = load(
            &shipped_path("mnist").expect("mnist"),
            &LoadOptions::default(),
        )
        .expect("mnist");
        assert_eq!(
            (mnist.rows, mnist.features(), mnist.class_names.len()),
            (10_000, 784, 10)
        );
        // Shipped sorted by label: the split must shuffle, so both parts hold every class.
        let data = mnist.into_dataset(0.2, 1);
        for c in 0..10 {
            assert!(
                data.test_y.contains(&(c as f32)),
                "class {c} missing from the test part"
            );
        }
    }

    #[test]
    fn idx_errors_give_the_offset() {
        let dir = std::env::temp_dir().join(format!("batchscope-idx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let images = dir.join("t-images-idx3-ubyte");
        let mut bytes = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2];
        bytes.extend([1, 2, 3, 4, 5, 6, 7]); // one byte short of 2×2×2
        std::fs::write(&images, &bytes).expect("write");
        std::fs::write(
            dir.join("t-labels-idx1-ubyte"),
            [0, 0, 8, 1, 0, 0, 0, 2, 0, 1],
        )
        .expect("write");
        let err = load(&images, &LoadOptions::default())
            .expect_err("short")
            .to_string();
        assert!(
            err.contains("byte 16") && err.contains("8 values") && err.contains("7 bytes follow"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
