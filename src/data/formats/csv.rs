//! CSV tables: header or none, delimiter sniffed, a label column chosen by the user (with a
//! sensible default), text labels mapped to classes, a numeric target for regression, and
//! missing values reported.

use std::collections::BTreeMap;

use super::common::{
    DataError, LoadOptions, MAX_AUTO_CLASSES, Progress, check_rows, classes_of, too_large,
};
use crate::data::dataset::{Table, Task};

/// Cells that mean "no value here": the row is left out and counted.
fn is_missing(field: &str) -> bool {
    matches!(
        field,
        "" | "?" | "NA" | "N/A" | "n/a" | "na" | "null" | "NULL" | "None" | "none"
    )
}

/// What a cell holds.
enum Cell {
    Missing,
    Number(f32),
    /// Parses as a float but is NaN, ±Inf, or beyond `f32`'s range.
    NotFinite,
    Text,
}

fn cell(field: &str) -> Cell {
    if is_missing(field) {
        return Cell::Missing;
    }
    match field.parse::<f32>() {
        Ok(v) if v.is_finite() => Cell::Number(v),
        Ok(_) => Cell::NotFinite,
        Err(_) => Cell::Text,
    }
}

fn not_finite(path: &str, line: u64, column: &str, field: &str) -> DataError {
    let lower = field.to_lowercase();
    let what = if lower.contains("nan") || lower.contains("inf") {
        "is not a finite number"
    } else {
        "is beyond the range of 32-bit floats (about ±3.4e38)"
    };
    DataError::Line {
        path: path.to_owned(),
        line,
        message: format!(
            "column `{column}`: `{field}` {what}; expected a finite number (leave the cell empty, \
             or write NA, to mark a missing value: that row is then left out)"
        ),
    }
}

/// Refuses bytes that are clearly not text, naming what they look like.
fn check_text(bytes: &[u8], path: &str) -> Result<(), DataError> {
    let refuse = |offset: usize, message: &str| DataError::Byte {
        path: path.to_owned(),
        offset: offset as u64,
        message: message.to_owned(),
    };
    if bytes.starts_with(b"\x89PNG") || bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        return Err(refuse(
            0,
            "this is an image, not a table: to train on images, open the folder that holds one \
             sub-folder of PNG or JPEG images per class",
        ));
    }
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(refuse(
            offset,
            "a zero byte: this is a binary file, not CSV text. BatchScope reads CSV text, IDX \
             files (e.g. train-images-idx3-ubyte.gz) and folders of PNG or JPEG images",
        ));
    }
    Ok(())
}

/// Parses CSV `bytes` (already decompressed) read from `path`; `name` is what the table is
/// called.
pub fn parse(
    bytes: &[u8],
    path: &str,
    name: &str,
    options: &LoadOptions,
    progress: Progress,
) -> Result<Table, DataError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "is empty ({} bytes): expected CSV text, an optional header line and then one \
                 row per sample, with values separated by commas, semicolons or tabs",
                bytes.len()
            ),
        });
    }
    check_text(bytes, path)?;
    // Spreadsheets often start UTF-8 files with a byte-order mark; it is not part of the header.
    let bom = if bytes.starts_with(&[0xef, 0xbb, 0xbf]) {
        3
    } else {
        0
    };
    let text = std::str::from_utf8(&bytes[bom..]).map_err(|e| {
        let offset = bom + e.valid_up_to();
        let line = bytes[..offset].split(|&b| b == b'\n').count();
        DataError::Byte {
            path: path.to_owned(),
            offset: offset as u64,
            message: format!(
                "(line {line}) is not UTF-8 text: save the file as UTF-8 CSV (in a spreadsheet: \
                 Save As, CSV UTF-8)"
            ),
        }
    })?;
    let delimiter = sniff_delimiter(text);
    let records = read_records(text, delimiter, path, progress)?;
    let Some((_, first)) = records.first() else {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: "holds only blank lines: expected rows of values".into(),
        });
    };
    let columns = first.len();
    if columns < 2 {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: "has one column (no `,`, `;`, tab or `|` splits its first line): a data set \
                      needs at least one feature column and a label column"
                .into(),
        });
    }
    // A header is a first line with a text field where the second line has a number, or a
    // first line of text only.
    let has_header = records.get(1).is_some_and(|(_, second)| {
        first
            .iter()
            .zip(second.iter())
            .any(|(a, b)| matches!(cell(a), Cell::Text) && matches!(cell(b), Cell::Number(_)))
    }) || first.iter().all(|f| matches!(cell(f), Cell::Text));
    let names: Vec<String> = if has_header {
        first
            .iter()
            .enumerate()
            .map(|(c, n)| {
                if n.is_empty() {
                    format!("column {c}")
                } else {
                    n.to_owned()
                }
            })
            .collect()
    } else {
        (0..columns).map(|c| format!("column {c}")).collect()
    };
    let rows = if has_header {
        &records[1..]
    } else {
        &records[..]
    };
    if rows.is_empty() {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "has a header line ({}) but no data rows below it",
                names.join(", ")
            ),
        });
    }
    let label = choose_label(&names, options, path)?;

    // A column is text (and left out) if most of its values are text; otherwise a text value
    // in it is an error, reported with its line.
    let mut text_cells = vec![0usize; columns];
    let mut number_cells = vec![0usize; columns];
    let mut first_text: BTreeMap<usize, (u64, String)> = BTreeMap::new();
    for (line, record) in rows {
        for (c, field) in record.iter().enumerate() {
            match cell(field) {
                Cell::Text => {
                    text_cells[c] += 1;
                    first_text
                        .entry(c)
                        .or_insert_with(|| (*line, field.to_owned()));
                }
                Cell::Number(_) | Cell::NotFinite => number_cells[c] += 1,
                Cell::Missing => {}
            }
        }
    }
    let is_text_column = |c: usize| text_cells[c] > number_cells[c];
    let features: Vec<usize> = (0..columns)
        .filter(|&c| c != label && !is_text_column(c))
        .collect();
    if features.is_empty() {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: format!(
                "has no numeric feature columns besides the label `{}`: every other column \
                 holds text",
                names[label]
            ),
        });
    }
    let mut notes: Vec<String> = (0..columns)
        .filter(|&c| c != label && is_text_column(c))
        .map(|c| {
            let (line, example) = first_text.get(&c).cloned().unwrap_or_default();
            format!(
                "column `{}` left out: it holds text (e.g. line {line}: `{example}`)",
                names[c]
            )
        })
        .collect();

    let mut x = Vec::with_capacity(rows.len() * features.len());
    let mut labels: Vec<(u64, &str)> = Vec::with_capacity(rows.len());
    let mut missing_rows = 0;
    let mut first_missing = None;
    for (line, record) in rows {
        let start = x.len();
        let mut missing_at = None;
        for &c in &features {
            match cell(&record[c]) {
                Cell::Number(v) => x.push(v),
                Cell::Missing => {
                    missing_at.get_or_insert(c);
                }
                Cell::NotFinite => return Err(not_finite(path, *line, &names[c], &record[c])),
                Cell::Text => {
                    return Err(DataError::Line {
                        path: path.to_owned(),
                        line: *line,
                        message: format!(
                            "column `{}`: `{}` is not a number; the column holds numbers \
                             elsewhere, so a number was expected (leave the cell empty, or \
                             write NA, to mark a missing value)",
                            names[c], &record[c]
                        ),
                    });
                }
            }
        }
        if is_missing(&record[label]) {
            missing_at.get_or_insert(label);
        }
        if let Some(c) = missing_at {
            missing_rows += 1;
            first_missing.get_or_insert_with(|| format!("line {line}, column `{}`", names[c]));
            x.truncate(start);
            continue;
        }
        labels.push((*line, &record[label]));
    }
    if let Some(first) = &first_missing {
        notes.push(format!(
            "{missing_rows} rows with missing values left out (first: {first})"
        ));
    }
    check_rows(path, labels.len(), missing_rows)?;
    let values_bytes = (x.len() * 4) as u64;
    if values_bytes > options.budget_bytes {
        return Err(too_large(
            path,
            "its values take",
            values_bytes,
            options.budget_bytes,
        ));
    }
    let (task, task_reason, class_names, y) = target_of(&labels, &names[label], path, options)?;
    Ok(Table {
        name: name.to_owned(),
        path: path.to_owned(),
        format: "csv",
        feature_names: features.iter().map(|&c| names[c].clone()).collect(),
        columns: names.clone(),
        task,
        task_reason,
        class_names,
        label_column: names[label].clone(),
        notes,
        rows_with_missing_values: missing_rows,
        rows: labels.len(),
        image: None,
        x,
        y,
    })
}

/// All non-blank records with their 1-based line numbers; every record must have as many
/// fields as the first.
fn read_records(
    text: &str,
    delimiter: u8,
    path: &str,
    progress: Progress,
) -> Result<Vec<(u64, ::csv::StringRecord)>, DataError> {
    let mut reader = ::csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .trim(::csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut records: Vec<(u64, ::csv::StringRecord)> = Vec::new();
    let mut expected: Option<(usize, u64)> = None;
    for result in reader.records() {
        let record = result.map_err(|e| DataError::Line {
            path: path.to_owned(),
            line: e.position().map_or(0, ::csv::Position::line),
            message: e.to_string(),
        })?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        let line = record.position().map_or(0, ::csv::Position::line);
        match expected {
            None => expected = Some((record.len(), line)),
            Some((len, first_line)) if record.len() != len => {
                return Err(DataError::Line {
                    path: path.to_owned(),
                    line,
                    message: format!(
                        "{} fields where line {first_line} has {len}: every row needs the same \
                         columns (a missing value is an empty field between two delimiters)",
                        record.len()
                    ),
                });
            }
            Some(_) => {}
        }
        if records.len() % 4096 == 4095 {
            let done = record.position().map_or(0, ::csv::Position::byte) as f32;
            if !progress(0.2 + 0.7 * done / text.len().max(1) as f32) {
                return Err(DataError::Cancelled {
                    path: path.to_owned(),
                });
            }
        }
        records.push((line, record));
    }
    Ok(records)
}

/// The delimiter that splits the first line into the most fields, among `, ; \t |`.
fn sniff_delimiter(text: &str) -> u8 {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    [b',', b';', b'\t', b'|']
        .into_iter()
        .max_by_key(|&d| first.bytes().filter(|&b| b == d).count())
        .unwrap_or(b',')
}

/// The label column: the one asked for, or one with a usual name, or the last.
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

/// The task, why it was chosen, the class names and the target per row.
fn target_of(
    labels: &[(u64, &str)],
    column: &str,
    path: &str,
    options: &LoadOptions,
) -> Result<(Task, String, Vec<String>, Vec<f32>), DataError> {
    let texts: Vec<&str> = labels.iter().map(|(_, l)| *l).collect();
    let mut numbers = Vec::with_capacity(labels.len());
    let mut first_text = None;
    for &(line, l) in labels {
        match cell(l) {
            Cell::Number(v) => numbers.push(v),
            Cell::NotFinite => return Err(not_finite(path, line, column, l)),
            _ => {
                first_text.get_or_insert((line, l));
            }
        }
    }
    let regression = |reason: String| (Task::Regression, reason, Vec::new(), numbers.clone());
    match (options.task, first_text) {
        (Some(Task::Regression), Some((line, l))) => Err(DataError::Line {
            path: path.to_owned(),
            line,
            message: format!(
                "column `{column}`: `{l}` is not a number, and a regression target must be \
                 numeric: choose classification, or another column"
            ),
        }),
        (Some(Task::Regression), None) => Ok(regression("chosen".to_owned())),
        (Some(Task::Classification), _) => {
            let (names, y) = classes_of(&texts, column, path)?;
            Ok((Task::Classification, "chosen".to_owned(), names, y))
        }
        (None, Some(_)) => {
            let (names, y) = classes_of(&texts, column, path)?;
            Ok((Task::Classification, "text labels".to_owned(), names, y))
        }
        (None, None) => {
            if let Some((line, v)) = labels
                .iter()
                .zip(&numbers)
                .find(|(_, v)| v.fract() != 0.0)
                .map(|((line, _), v)| (line, v))
            {
                return Ok(regression(format!(
                    "the label column holds fractions, e.g. {v} on line {line}"
                )));
            }
            let mut distinct: Vec<i64> = numbers.iter().map(|&v| v as i64).collect();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() > MAX_AUTO_CLASSES {
                return Ok(regression(format!(
                    "the label column holds {} distinct whole numbers, more than the \
                     {MAX_AUTO_CLASSES} read as classes",
                    distinct.len()
                )));
            }
            let (names, y) = classes_of(&texts, column, path)?;
            Ok((
                Task::Classification,
                format!("{} distinct whole numbers", names.len()),
                names,
                y,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::common::no_progress;

    fn csv(text: &str, label: Option<&str>) -> Result<Table, DataError> {
        csv_with(
            text,
            &LoadOptions {
                label: label.map(str::to_owned),
                ..LoadOptions::default()
            },
        )
    }

    fn csv_with(text: &str, options: &LoadOptions) -> Result<Table, DataError> {
        parse(
            text.as_bytes(),
            "test.csv",
            "test.csv",
            options,
            &no_progress,
        )
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
        assert_eq!(
            t.notes,
            ["1 rows with missing values left out (first: line 14, column `b`)"]
        );
        assert_eq!(t.class_counts(), [6, 6]);
        assert_eq!(&t.x[..4], &[0.0, 0.0, 1.0, 2.0]);
    }

    #[test]
    fn no_header_last_column_and_text_features_left_out() {
        let text = rows(20, |i| format!("{i},name{i},{}", i % 3));
        let t = csv(&text, None).expect("valid");
        assert_eq!(t.feature_names, ["column 0"]);
        assert_eq!(
            t.notes,
            ["column `column 1` left out: it holds text (e.g. line 1: `name0`)"]
        );
        assert_eq!(t.class_names, ["0", "1", "2"]);
        assert_eq!(t.task, Task::Classification);
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_header() {
        let text = format!(
            "\u{feff}x,label\n{}",
            rows(12, |i| format!("{i},{}", i % 2))
        );
        let t = csv(&text, None).expect("valid");
        assert_eq!(t.feature_names, ["x"]);
        assert_eq!(t.label_column, "label");
    }

    #[test]
    fn the_task_follows_the_label_column_unless_chosen() {
        let fractions = format!("x,y\n{}", rows(20, |i| format!("{i},{i}.5")));
        let t = csv(&fractions, None).expect("regression");
        assert_eq!(t.task, Task::Regression);
        assert!(t.task_reason.contains("fractions"), "{}", t.task_reason);
        assert!(t.class_names.is_empty());
        assert_eq!(t.target_range(), Some([0.5, 10.0, 19.5]));
        let many = rows(300, |i| format!("{i},{i}"));
        let t = csv(&many, None).expect("regression");
        assert_eq!(t.task, Task::Regression);
        assert!(t.task_reason.contains("300 distinct"), "{}", t.task_reason);
        let err = csv_with(
            &many,
            &LoadOptions {
                task: Some(Task::Classification),
                ..LoadOptions::default()
            },
        )
        .expect_err("too many classes")
        .to_string();
        assert!(
            err.contains("300 distinct values") && err.contains("100 classes"),
            "{err}"
        );
        let text_labels = rows(12, |i| format!("{i},{}", ["a", "b"][i % 2]));
        let err = csv_with(
            &text_labels,
            &LoadOptions {
                task: Some(Task::Regression),
                ..LoadOptions::default()
            },
        )
        .expect_err("text target")
        .to_string();
        assert!(
            err.contains("line 1") && err.contains("`a` is not a number"),
            "{err}"
        );
    }

    #[test]
    fn refusals_name_the_line_the_column_and_the_limit() {
        let ragged = format!("{}1,2\n", rows(11, |i| format!("{i},{i},0")));
        let err = csv(&ragged, None).expect_err("ragged");
        assert_eq!(
            err.to_string(),
            "test.csv, line 12: 2 fields where line 1 has 3: every row needs the same columns \
             (a missing value is an empty field between two delimiters)"
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
}
