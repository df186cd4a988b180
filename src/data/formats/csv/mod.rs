//! CSV tables: header or none, delimiter sniffed, a label column chosen by the user (with a
//! sensible default), text labels mapped to classes, a numeric target for regression, and
//! missing values reported.
//!
//! Rows are streamed: each is parsed into one `f32` store as it arrives and the memory budget is
//! checked before it is stored, so a file is refused at the line where it crosses the budget,
//! never after everything was held as text. Which columns are features is known only at the
//! end (a column that is mostly text is left out), so the store keeps every column and is
//! compacted in place once the file is read.

use std::io::{BufRead, Read};

mod cells;
mod store;
mod table;

pub use cells::{MAX_FEATURES, USUAL_LABELS};

use super::common::{DataError, LoadOptions};
use super::stream::data_error;
use crate::data::dataset::Table;
use crate::i18n::{DataKey, Said};
use crate::units::format_bytes;
use store::Store;

/// Refuses a start of file that is clearly not UTF-8 text, naming what it looks like.
fn check_text(head: &[u8], path: &str) -> Result<(), DataError> {
    let refuse = |offset: usize, key: DataKey| DataError::Byte {
        path: path.to_owned(),
        offset: offset as u64,
        message: Said::new(key, &[]),
    };
    if head.starts_with(b"\x89PNG") || head.starts_with(&[0xff, 0xd8, 0xff]) {
        return Err(refuse(0, DataKey::IsImage));
    }
    // UTF-16 (Windows' "Unicode text"): a byte-order mark, or a zero byte beside every ASCII one.
    let sample = &head[..head.len().min(512) & !1];
    let is_text = |b: u8| b.is_ascii_graphic() || b" \t\r\n".contains(&b);
    let pairs = sample.len() / 2;
    let ascii_pairs = |zero: usize| {
        sample
            .chunks_exact(2)
            .filter(|p| p[zero] == 0 && is_text(p[1 - zero]))
            .count()
    };
    let utf16 = head.starts_with(&[0xff, 0xfe])
        || head.starts_with(&[0xfe, 0xff])
        || (pairs >= 4 && (ascii_pairs(1) * 10 >= pairs * 9 || ascii_pairs(0) * 10 >= pairs * 9));
    if utf16 {
        return Err(refuse(0, DataKey::Utf16));
    }
    if let Some(offset) = head.iter().position(|&b| b == 0) {
        return Err(refuse(offset, DataKey::Binary));
    }
    Ok(())
}

/// Longest line accepted: 65,537 fields of up to 128 characters. A longer line is not a row of
/// a table, and refusing it here keeps the CSV reader from holding it whole.
pub const MAX_LINE_BYTES: u64 = 8 << 20;

/// Counts the bytes of each line as the text streams by, refusing a line longer than
/// [`MAX_LINE_BYTES`]; with `cr_only` it turns lone carriage returns (old Mac line endings)
/// into line feeds, so that lines are counted.
struct Lines<R> {
    inner: R,
    cr_only: bool,
    line: u64,
    length: u64,
    path: String,
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for b in &mut buf[..n] {
            if self.cr_only && *b == b'\r' {
                *b = b'\n';
            }
            if *b == b'\n' {
                self.line += 1;
                self.length = 0;
            } else {
                self.length += 1;
                if self.length > MAX_LINE_BYTES {
                    return Err(std::io::Error::other(DataError::Line {
                        path: self.path.clone(),
                        line: self.line,
                        message: Said::new(
                            DataKey::LongLine,
                            &[("max", &format_bytes(MAX_LINE_BYTES))],
                        ),
                    }));
                }
            }
        }
        Ok(n)
    }
}

/// Parses CSV `bytes` (already decompressed) read from `path`; `name` is what the table is
/// called.
pub fn parse(
    bytes: &[u8],
    path: &str,
    name: &str,
    options: &LoadOptions,
    _progress: super::common::Progress,
) -> Result<Table, DataError> {
    parse_stream(bytes, path, name, options)
}

/// Parses CSV text streamed from `reader` (see [`super::stream::open`]).
pub(crate) fn parse_stream(
    mut reader: impl BufRead,
    path: &str,
    name: &str,
    options: &LoadOptions,
) -> Result<Table, DataError> {
    let mut head = Vec::with_capacity(HEAD);
    (&mut reader)
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|e| data_error(e, path))?;
    if head.iter().all(u8::is_ascii_whitespace) && head.len() < HEAD {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: Said::new(DataKey::EmptyCsv, &[("n", &head.len())]),
        });
    }
    check_text(&head, path)?;
    // Spreadsheets often start UTF-8 files with a byte-order mark; it is not part of the header.
    let bom = if head.starts_with(&[0xef, 0xbb, 0xbf]) {
        3
    } else {
        0
    };
    let delimiter = sniff_delimiter(&head[bom..]);
    let bom = bom as u64;
    let cr_only = head.contains(&b'\r') && !head.contains(&b'\n');
    let mut head = std::io::Cursor::new(head);
    head.set_position(bom);
    let text = head.chain(reader);
    let input = Lines {
        inner: text,
        cr_only,
        line: 1,
        length: 0,
        path: path.to_owned(),
    };
    let mut reader = ::csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut store = Store::new(path, options.budget_bytes, bom as usize);
    let mut bytes = ::csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut bytes) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line = e.position().map_or(0, ::csv::Position::line);
                return Err(match e.into_kind() {
                    ::csv::ErrorKind::Io(io) => data_error(io, path),
                    other => DataError::Line {
                        path: path.to_owned(),
                        line,
                        message: Said::new(DataKey::NotCsv, &[("why", &format_args!("{other:?}"))]),
                    },
                });
            }
        }
        // Fields are trimmed of ASCII whitespace, as the reader's own `Trim::All` would; but it
        // rebuilds every record to do so, a third of the time of a large file: here only a
        // record that has such whitespace is rebuilt.
        if bytes.iter().any(padded) {
            bytes.trim();
        }
        let record = match ::csv::StringRecord::from_byte_record(bytes) {
            Ok(record) => record,
            Err(e) => return Err(not_utf8(e, path, bom)),
        };
        store.record(&record, options)?;
        bytes = record.into_byte_record();
    }
    store.finish(name, options)
}

/// Whether `field` starts or ends with ASCII whitespace.
fn padded(field: &[u8]) -> bool {
    field.first().is_some_and(u8::is_ascii_whitespace)
        || field.last().is_some_and(u8::is_ascii_whitespace)
}

/// Bytes looked at before parsing: the delimiter, the encoding and the file's kind.
const HEAD: usize = 64 << 10;

/// A record that is not UTF-8, with the byte where it stops being so.
fn not_utf8(e: ::csv::FromUtf8Error, path: &str, bom: u64) -> DataError {
    let (field, valid_up_to) = (e.utf8_error().field(), e.utf8_error().valid_up_to());
    let record = e.into_byte_record();
    let (line, start) = record.position().map_or((0, 0), |p| (p.line(), p.byte()));
    let before: usize = record.iter().take(field).map(|f| f.len() + 1).sum();
    DataError::Byte {
        path: path.to_owned(),
        offset: bom + start + (before + valid_up_to) as u64,
        message: Said::new(DataKey::NotUtf8, &[("line", &line)]),
    }
}

/// The delimiter that splits the first non-blank line into the most fields, among `, ; \t |`.
fn sniff_delimiter(head: &[u8]) -> u8 {
    let first = head
        .split(|&b| b == b'\n' || b == b'\r')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or(&[]);
    [b',', b';', b'\t', b'|']
        .into_iter()
        .max_by_key(|&d| first.split(|&b| b == d).count())
        .unwrap_or(b',')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Task;
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
    fn padded_fields_are_trimmed_and_many_labels_keep_their_classes() {
        // Whitespace around a field is not part of it (only a padded record is rebuilt).
        let text = format!(
            " a , b ,kind \n{}",
            rows(20, |i| format!(
                "{i} ,  {}, {}",
                i * 3,
                ["cat", "dog"][i % 2]
            ))
        );
        let t = csv(&text, None).expect("valid");
        assert_eq!(t.feature_names, ["a", "b"]);
        assert_eq!(t.label_column, "kind");
        assert_eq!(t.class_names, ["cat", "dog"]);
        // More label texts than a scan looks through: found by their hash, in first-seen order.
        let text = format!("x,kind\n{}", rows(60, |i| format!("{i},c{:02}", i % 30)));
        let t = csv(&text, None).expect("valid");
        assert_eq!(t.class_names.len(), 30);
        assert_eq!(t.class_names[0], "c00");
        assert_eq!(t.class_names[29], "c29");
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
            t.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
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
            t.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
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
        assert!(
            t.task_reason.to_string().contains("fractions"),
            "{}",
            t.task_reason
        );
        assert!(t.class_names.is_empty());
        assert_eq!(t.target_range(), Some([0.5, 10.0, 19.5]));
        let many = rows(300, |i| format!("{i},{i}"));
        let t = csv(&many, None).expect("regression");
        assert_eq!(t.task, Task::Regression);
        assert!(
            t.task_reason.to_string().contains("300 distinct"),
            "{}",
            t.task_reason
        );
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

    #[test]
    fn utf16_is_named_with_or_without_its_mark_and_binary_is_not_taken_for_it() {
        let text = "a,b,label\n1,2,0\n3,4,1\n";
        for big_endian in [false, true] {
            let bytes: Vec<u8> = text
                .encode_utf16()
                .flat_map(|u| {
                    if big_endian {
                        u.to_be_bytes()
                    } else {
                        u.to_le_bytes()
                    }
                })
                .collect();
            let err = parse(
                &bytes,
                "u.csv",
                "u.csv",
                &LoadOptions::default(),
                &no_progress,
            )
            .expect_err("utf-16");
            assert!(err.to_string().contains("UTF-16"), "{err}");
        }
        let binary: Vec<u8> = (0..64u8)
            .flat_map(|i| [0, i.wrapping_mul(37) | 0x80])
            .collect();
        let err = parse(
            &binary,
            "b.csv",
            "b.csv",
            &LoadOptions::default(),
            &no_progress,
        )
        .expect_err("binary");
        assert!(err.to_string().contains("a zero byte"), "{err}");
    }
}
