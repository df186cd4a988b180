//! Text as training data: a corpus as a [`Table`] (its characters' numbers in one run, its
//! vocabulary as the classes), cut into windows of the context length when it is split, each
//! window's targets the character after each of its positions; and the two texts that ship.
//!
//! The windows do not overlap (an epoch reads each character once, where nanoGPT draws random
//! offsets), and the validation part is the text's last windows, as nanoGPT holds out the last
//! 10%: passages the model never trains on.

use super::dataset::{Table, Task};
use super::formats::common::{DataError, Progress};
use super::formats::text::{self, Corpus};
use crate::i18n::Said;

pub use super::dataset::TEXT_FORMAT as FORMAT;

/// Most windows of each part an evaluation reads: a text's training part is tens of thousands
/// of windows, and evaluating them all would take longer than the training between two
/// evaluations (nanoGPT estimates its losses on 200 batches too).
pub const EVAL_WINDOWS: usize = 512;

/// Most logits an evaluation of one part reads back (64 MiB of f32): with the 2,897 characters
/// of the poems and a context of 64, 90 windows.
pub const EVAL_LOGITS: usize = 16 << 20;

/// A text that ships, compiled in (1.3 MB in all).
pub struct ShippedText {
    /// Its name on the command line.
    pub name: &'static str,
    /// Its file under `datasets/`.
    pub file: &'static str,
    pub bytes: &'static [u8],
    /// What it is, in English.
    pub about: &'static str,
}

/// The texts that ship, each with its source and licence beside it in `datasets/`.
pub const SHIPPED_TEXTS: [ShippedText; 2] = [
    ShippedText {
        name: "shakespeare",
        file: "shakespeare/shakespeare.txt",
        bytes: include_bytes!("../../datasets/shakespeare/shakespeare.txt"),
        about: "Eight plays of Shakespeare (public domain): 1.16 M characters, 75 distinct",
    },
    ShippedText {
        name: "poems",
        file: "poems/poems.txt",
        bytes: include_bytes!("../../datasets/poems/poems.txt"),
        about: "634 Tang poems in simplified Chinese (public domain): 46 k characters, 2,897 distinct",
    },
];

/// The shipped text called `name`.
pub fn shipped_text(name: &str) -> Option<&'static ShippedText> {
    SHIPPED_TEXTS.iter().find(|t| t.name == name)
}

/// Reads the shipped text `set` into a table.
pub fn load_shipped_text(set: &ShippedText, progress: Progress) -> Result<Table, DataError> {
    let shown = format!("datasets/{}", set.file);
    let corpus = text::parse(set.bytes, &shown, set.name)?;
    if !progress(0.95) {
        return Err(DataError::Cancelled { path: shown });
    }
    Ok(table(&corpus, &shown))
}

/// A corpus as a table: its characters' numbers in `x`, its vocabulary as the class names.
pub fn table(corpus: &Corpus, path: &str) -> Table {
    Table {
        name: corpus.name.clone(),
        path: path.to_owned(),
        format: FORMAT,
        feature_names: Vec::new(),
        columns: Vec::new(),
        task: Task::Classification,
        task_reason: Said::default(),
        class_names: corpus.vocab.iter().map(char::to_string).collect(),
        label_column: "next character".into(),
        label_reason: Said::default(),
        notes: Vec::new(),
        rows_with_missing_values: 0,
        rows: corpus.ids.len(),
        image: None,
        x: corpus.ids.iter().map(|&i| f32::from(i)).collect(),
        y: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Split;

    /// Both shipped texts read, and a window's targets are its characters shifted by one.
    #[test]
    fn shipped_texts_cut_into_windows_whose_targets_are_the_next_characters() {
        for set in &SHIPPED_TEXTS {
            let table = load_shipped_text(set, &|_| true).expect("reads");
            let split = Split {
                test_fraction: 0.1,
                seed: 1,
                standardise: true,
                context: 32,
            };
            let data = table.to_dataset(split);
            assert_eq!(data.features, 32);
            assert_eq!(data.targets_per_row(), 32, "{}", set.name);
            assert!(data.is_text() && !data.standardised);
            let windows = (table.rows - 1) / 32;
            assert_eq!(data.train_rows() + data.test_rows(), windows);
            let test = (windows as f32 * 0.1).round() as usize;
            assert_eq!(data.test_rows(), test);
            // The validation part is the end of the text, in order.
            let start = (windows - test) * 32;
            assert_eq!(data.test_x[..32], table.x[start..start + 32]);
            // Each window is a stretch of the text, its targets the same shifted by one.
            let (x, y) = (&data.train_x[..32], &data.train_y[..32]);
            let text: Vec<f32> = table.x.clone();
            let at = text
                .windows(33)
                .position(|w| w[..32] == *x && w[1..] == *y)
                .expect("a stretch of the text");
            assert_eq!(at % 32, 0, "windows start at multiples of the context");
        }
    }
}
