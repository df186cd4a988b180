//! What a CSV cell holds, how the store marks cells that are not numbers, and which column is
//! the label: the rules the reader, the store and the table share.

use crate::data::formats::common::{DataError, LoadOptions, MAX_FILE_CLASSES};
use crate::i18n::{Arg, DataKey, Said};

/// Most feature columns a table may have: a 128 × 128 RGB image is 49,152; a table much wider
/// than this is a different kind of data (and would not fit one evaluation buffer on a GPU).
pub const MAX_FEATURES: usize = 65_536;

/// Label texts kept to name classes: more distinct texts than this cannot be classes.
pub(super) const MAX_LABEL_TEXTS: usize = 4 * MAX_FILE_CLASSES;

/// The names a label column usually has, in the order they are preferred.
pub const USUAL_LABELS: [&str; 5] = ["label", "target", "class", "species", "y"];

/// A cell's marker in the store when it holds no number (NaN payloads no parser produces).
pub(super) const MISSING: u32 = 0x7fc0_dead;
pub(super) const TEXT: u32 = 0x7fc0_beef;
pub(super) const NOT_FINITE: u32 = 0x7fc0_f00d;

pub(super) fn marker(bits: u32) -> f32 {
    f32::from_bits(bits)
}

pub(super) fn is_marker(v: f32, bits: u32) -> bool {
    v.to_bits() == bits
}

/// Cells that mean "no value here": the row is left out and counted.
pub(super) fn is_missing(field: &str) -> bool {
    matches!(
        field,
        "" | "?" | "NA" | "N/A" | "n/a" | "na" | "null" | "NULL" | "None" | "none"
    )
}

/// What a cell holds.
pub(super) enum Cell {
    Missing,
    Number(f32),
    /// Parses as a float but is NaN, ±Inf, or beyond `f32`'s range.
    NotFinite,
    Text,
}

pub(super) fn cell(field: &str) -> Cell {
    if is_missing(field) {
        return Cell::Missing;
    }
    match field.parse::<f32>() {
        Ok(v) if v.is_finite() => Cell::Number(v),
        Ok(_) => Cell::NotFinite,
        Err(_) => Cell::Text,
    }
}

pub(super) fn not_finite(path: &str, line: u64, column: &str, field: &str) -> DataError {
    let lower = field.to_lowercase();
    let what = Said::new(
        if lower.contains("nan") || lower.contains("inf") {
            DataKey::NotFiniteWord
        } else {
            DataKey::BeyondF32
        },
        &[],
    );
    DataError::Line {
        path: path.to_owned(),
        line,
        message: Said::with(
            DataKey::NotFinite,
            &[
                ("column", Arg::Plain(&column)),
                ("field", Arg::Plain(&field)),
                ("what", Arg::Said(&what)),
            ],
        ),
    }
}

/// The label column and why: the one asked for, or the first usual name in order of
/// preference, or the last column.
pub(super) fn choose_label(
    names: &[String],
    options: &LoadOptions,
    path: &str,
) -> Result<(usize, Said), DataError> {
    if let Some(wanted) = &options.label {
        if let Some(i) = names.iter().position(|n| n == wanted) {
            return Ok((i, Said::new(DataKey::LabelChosen, &[])));
        }
        if let Ok(i) = wanted.parse::<usize>()
            && i < names.len()
        {
            return Ok((i, Said::new(DataKey::LabelByIndex, &[("i", &i)])));
        }
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: Said::new(
                DataKey::NoColumn,
                &[
                    ("wanted", wanted),
                    ("columns", &names.join(", ")),
                    ("last", &(names.len() - 1)),
                ],
            ),
        });
    }
    for usual in USUAL_LABELS {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(usual)) {
            return Ok((
                i,
                Said::new(
                    DataKey::LabelNamed,
                    &[("name", &usual), ("names", &usual_labels_quoted())],
                ),
            ));
        }
    }
    Ok((
        names.len() - 1,
        Said::new(DataKey::LabelLast, &[("names", &usual_labels_quoted())]),
    ))
}

/// The usual label names as code, `label`, `target`, …: they are column
/// names, the same in every language.
fn usual_labels_quoted() -> String {
    USUAL_LABELS
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
