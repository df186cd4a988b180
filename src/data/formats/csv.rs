//! CSV tables: header or none, delimiter sniffed, a label column chosen by the user (with a
//! sensible default), text labels mapped to classes, a numeric target for regression, and
//! missing values reported.
//!
//! Rows are streamed: each is parsed into one `f32` store as it arrives and the memory budget is
//! checked before it is stored, so a file is refused at the line where it crosses the budget,
//! never after everything was held as text. Which columns are features is known only at the
//! end (a column that is mostly text is left out), so the store keeps every column and is
//! compacted in place once the file is read.

use std::collections::HashMap;
use std::io::{BufRead, Read};

use super::common::{
    DataError, LoadOptions, MAX_AUTO_CLASSES, MAX_FILE_CLASSES, check_rows, classes_of,
};
use super::stream::data_error;
use crate::data::dataset::{Table, Task};
use crate::units::format_bytes;

/// Most feature columns a table may have: a 128 × 128 RGB image is 49,152; a table much wider
/// than this is a different kind of data (and would not fit one evaluation buffer on a GPU).
pub const MAX_FEATURES: usize = 65_536;

/// Label texts kept to name classes: more distinct texts than this cannot be classes.
const MAX_LABEL_TEXTS: usize = 4 * MAX_FILE_CLASSES;

/// The names a label column usually has, in the order they are preferred.
pub const USUAL_LABELS: [&str; 5] = ["label", "target", "class", "species", "y"];

/// A cell's marker in the store when it holds no number (NaN payloads no parser produces).
const MISSING: u32 = 0x7fc0_dead;
const TEXT: u32 = 0x7fc0_beef;
const NOT_FINITE: u32 = 0x7fc0_f00d;

fn marker(bits: u32) -> f32 {
    f32::from_bits(bits)
}

fn is_marker(v: f32, bits: u32) -> bool {
    v.to_bits() == bits
}

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

/// Refuses a start of file that is clearly not UTF-8 text, naming what it looks like.
fn check_text(head: &[u8], path: &str) -> Result<(), DataError> {
    let refuse = |offset: usize, message: &str| DataError::Byte {
        path: path.to_owned(),
        offset: offset as u64,
        message: message.to_owned(),
    };
    if head.starts_with(b"\x89PNG") || head.starts_with(&[0xff, 0xd8, 0xff]) {
        return Err(refuse(
            0,
            "this is an image, not a table: to train on images, open the folder that holds one \
             sub-folder of PNG or JPEG images per class",
        ));
    }
    // UTF-16 (Windows' "Unicode text"): a byte-order mark, or a zero byte beside every ASCII one.
    let sample = &head[..head.len().min(512) & !1];
    let zeros_at = |parity: usize| {
        sample
            .iter()
            .skip(parity)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count()
    };
    let utf16 = head.starts_with(&[0xff, 0xfe])
        || head.starts_with(&[0xfe, 0xff])
        || (sample.len() >= 8
            && (zeros_at(0) * 10 >= sample.len() * 4 || zeros_at(1) * 10 >= sample.len() * 4));
    if utf16 {
        return Err(refuse(
            0,
            "this is UTF-16 text (as Windows' \"Unicode text\" saves it), not UTF-8: save it as \
             CSV UTF-8 (in a spreadsheet: Save As, CSV UTF-8), or convert it with `iconv -f \
             UTF-16 -t UTF-8 in.csv > out.csv`",
        ));
    }
    if let Some(offset) = head.iter().position(|&b| b == 0) {
        return Err(refuse(offset, BINARY));
    }
    Ok(())
}

const BINARY: &str = "a zero byte: this is a binary file, not CSV text. BatchScope reads CSV \
                      text, IDX files (e.g. train-images-idx3-ubyte.gz) and folders of PNG or \
                      JPEG images";

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
                        message: format!(
                            "the line is longer than {}: a row of a table is far shorter \
                             (is this a table, with one row per line?)",
                            format_bytes(MAX_LINE_BYTES)
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
            message: format!(
                "is empty ({} bytes): expected CSV text, an optional header line and then one \
                 row per sample, with values separated by commas, semicolons or tabs",
                head.len()
            ),
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
        .trim(::csv::Trim::All)
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
                        message: format!("cannot be read as CSV: {other:?}"),
                    },
                });
            }
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
        message: format!(
            "(line {line}) is not UTF-8 text: save the file as UTF-8 CSV (in a spreadsheet: \
             Save As, CSV UTF-8)"
        ),
    }
}

/// Where one column's first cell of a kind is: its line and its text.
type Seen = Option<(u64, String)>;

/// The rows read so far, every column as `f32` (or a marker), with what each column held.
struct Store<'p> {
    path: &'p str,
    budget: u64,
    bom: usize,
    /// The first record, until the second says whether it is a header.
    first: Option<(u64, ::csv::StringRecord)>,
    names: Vec<String>,
    has_header: bool,
    label: usize,
    label_reason: String,
    columns: usize,
    /// `rows × columns`, row-major.
    values: Vec<f32>,
    /// Each row's line.
    lines: Vec<u32>,
    /// Each row's label text, by index into `texts` (`u16::MAX`: one too many to keep).
    label_ids: Vec<u16>,
    texts: Vec<String>,
    text_index: HashMap<String, u16>,
    text_cells: Vec<usize>,
    number_cells: Vec<usize>,
    first_text: Vec<Seen>,
    first_not_finite: Vec<Seen>,
    /// Fields per row, and the line that set it.
    expected: Option<(usize, u64)>,
}

impl<'p> Store<'p> {
    fn new(path: &'p str, budget: u64, bom: usize) -> Self {
        Self {
            path,
            budget,
            bom,
            first: None,
            names: Vec::new(),
            has_header: false,
            label: 0,
            label_reason: String::new(),
            columns: 0,
            values: Vec::new(),
            lines: Vec::new(),
            label_ids: Vec::new(),
            texts: Vec::new(),
            text_index: HashMap::new(),
            text_cells: Vec::new(),
            number_cells: Vec::new(),
            first_text: Vec::new(),
            first_not_finite: Vec::new(),
            expected: None,
        }
    }

    fn line_error(&self, line: u64, message: String) -> DataError {
        DataError::Line {
            path: self.path.to_owned(),
            line,
            message,
        }
    }

    fn refused(&self, message: String) -> DataError {
        DataError::Refused {
            path: self.path.to_owned(),
            message,
        }
    }

    /// Takes one record: the header decision on the second, then a row of the store.
    fn record(
        &mut self,
        record: &::csv::StringRecord,
        options: &LoadOptions,
    ) -> Result<(), DataError> {
        if record.iter().all(str::is_empty) {
            return Ok(());
        }
        let line = record.position().map_or(0, ::csv::Position::line);
        if let Some(offset) = record.as_slice().bytes().position(|b| b == 0) {
            let start = record.position().map_or(0, ::csv::Position::byte);
            return Err(DataError::Byte {
                path: self.path.to_owned(),
                offset: self.bom as u64 + start + offset as u64,
                message: format!("(line {line}) {BINARY}"),
            });
        }
        self.check_fields(record, line)?;
        match self.first.take() {
            None if self.names.is_empty() => {
                self.check_columns(record.len())?;
                self.first = Some((line, record.clone()));
                Ok(())
            }
            Some((first_line, first)) => {
                self.start(&first, Some(record), options)?;
                if !self.has_header {
                    self.push_row(first_line, &first)?;
                }
                self.push_row(line, record)
            }
            None => self.push_row(line, record),
        }
    }

    /// Every record has as many fields as the first.
    fn check_fields(&mut self, record: &::csv::StringRecord, line: u64) -> Result<(), DataError> {
        match self.expected {
            None => {
                self.expected = Some((record.len(), line));
                Ok(())
            }
            Some((len, first_line)) if record.len() != len => {
                // A quote that is never closed swallows the line breaks after it.
                if record.iter().any(|f| f.contains('\n')) {
                    return Err(self.line_error(
                        line,
                        "a quoted field that starts here runs over the end of the line: a `\"` \
                         is opened and not closed (or closed later than meant); close it, or \
                         remove the stray quote"
                            .to_owned(),
                    ));
                }
                Err(self.line_error(
                    line,
                    format!(
                        "{} fields where line {first_line} has {len}: every row needs the same \
                         columns (a missing value is an empty field between two delimiters)",
                        record.len()
                    ),
                ))
            }
            Some(_) => Ok(()),
        }
    }

    fn check_columns(&self, columns: usize) -> Result<(), DataError> {
        if columns < 2 {
            return Err(self.refused(
                "has one column (no `,`, `;`, tab or `|` splits its first line): a data set \
                 needs at least one feature column and a label column"
                    .into(),
            ));
        }
        if columns > MAX_FEATURES + 1 {
            return Err(self.refused(format!(
                "has {columns} columns, more than the {MAX_FEATURES} feature columns (and a \
                 label) BatchScope trains on: keep fewer columns (a table this wide is usually \
                 the wrong way round: one row per sample, one column per feature)"
            )));
        }
        Ok(())
    }

    /// Decides the header from the first two records, names the columns and picks the label.
    fn start(
        &mut self,
        first: &::csv::StringRecord,
        second: Option<&::csv::StringRecord>,
        options: &LoadOptions,
    ) -> Result<(), DataError> {
        // A header is a first line with a text field where the second line has a number, or a
        // first line of text only.
        self.has_header = second.is_some_and(|second| {
            first
                .iter()
                .zip(second.iter())
                .any(|(a, b)| matches!(cell(a), Cell::Text) && matches!(cell(b), Cell::Number(_)))
        }) || first.iter().all(|f| matches!(cell(f), Cell::Text));
        self.columns = first.len();
        self.names = if self.has_header {
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
            (0..self.columns).map(|c| format!("column {c}")).collect()
        };
        let (label, reason) = choose_label(&self.names, options, self.path)?;
        self.label = label;
        self.label_reason = reason;
        self.text_cells = vec![0; self.columns];
        self.number_cells = vec![0; self.columns];
        self.first_text = vec![None; self.columns];
        self.first_not_finite = vec![None; self.columns];
        Ok(())
    }

    /// Stores one row, refusing it if it would take the store past the budget.
    fn push_row(&mut self, line: u64, record: &::csv::StringRecord) -> Result<(), DataError> {
        let columns = self.columns;
        let rows = self.lines.len() as u64;
        // Each row costs its values and, beside them, its line and its label's text index.
        let needed = (self.values.len() + columns) as u64 * 4 + (rows + 1) * 6;
        if needed > self.budget {
            return Err(self.refused(format!(
                "its values take more than the {} memory budget for one data set by line {line} \
                 ({} rows × {columns} columns as 32-bit floats): use a sample of the rows",
                format_bytes(self.budget),
                rows + 1
            )));
        }
        if self.values.len() + columns > self.values.capacity() {
            // Grow by doubling, but never past what the budget allows.
            let most = (self.budget / 4) as usize + columns;
            let target = (self.values.capacity() * 2).max(4096).min(most);
            self.values
                .reserve_exact(target.max(self.values.len() + columns) - self.values.len());
        }
        for (c, field) in record.iter().enumerate() {
            let value = match cell(field) {
                Cell::Number(v) => {
                    self.number_cells[c] += 1;
                    v
                }
                Cell::Missing => marker(MISSING),
                Cell::NotFinite => {
                    self.number_cells[c] += 1;
                    if self.first_not_finite[c].is_none() {
                        self.first_not_finite[c] = Some((line, field.to_owned()));
                    }
                    marker(NOT_FINITE)
                }
                Cell::Text => {
                    self.text_cells[c] += 1;
                    if self.first_text[c].is_none() {
                        self.first_text[c] = Some((line, field.to_owned()));
                    }
                    marker(TEXT)
                }
            };
            self.values.push(value);
        }
        let label = &record[self.label];
        let id = match self.text_index.get(label) {
            Some(&id) => id,
            None if self.texts.len() < MAX_LABEL_TEXTS => {
                let id = self.texts.len() as u16;
                self.texts.push(label.to_owned());
                self.text_index.insert(label.to_owned(), id);
                id
            }
            None => u16::MAX,
        };
        self.label_ids.push(id);
        self.lines.push(u32::try_from(line).unwrap_or(u32::MAX));
        Ok(())
    }
}

impl Store<'_> {
    /// The table: text columns left out, rows with missing values dropped, the store compacted
    /// in place to the feature columns, and the label read as classes or a target.
    fn finish(mut self, name: &str, options: &LoadOptions) -> Result<Table, DataError> {
        if let Some((line, first)) = self.first.take() {
            self.start(&first, None, options)?;
            if !self.has_header {
                self.push_row(line, &first)?;
            }
        }
        if self.names.is_empty() {
            return Err(self.refused("holds only blank lines: expected rows of values".into()));
        }
        if self.lines.is_empty() {
            return Err(self.refused(format!(
                "has a header line ({}) but no data rows below it",
                self.names.join(", ")
            )));
        }
        let (columns, label) = (self.columns, self.label);
        // A column is text (and left out) if most of its values are text; otherwise a text
        // value in it is an error, reported with its line.
        let is_text_column = |c: usize| self.text_cells[c] > self.number_cells[c];
        let features: Vec<usize> = (0..columns)
            .filter(|&c| c != label && !is_text_column(c))
            .collect();
        if features.is_empty() {
            return Err(self.refused(format!(
                "has no numeric feature columns besides the label `{}`: every other column \
                 holds text",
                self.names[label]
            )));
        }
        let mut notes: Vec<String> = (0..columns)
            .filter(|&c| c != label && is_text_column(c))
            .map(|c| {
                let (line, example) = self.first_text[c].clone().unwrap_or_default();
                format!(
                    "column `{}` left out: it holds text (e.g. line {line}: `{example}`)",
                    self.names[c]
                )
            })
            .collect();
        self.first_bad_cell(&features)?;

        // Compact in place: row `r`'s features go to row `kept`, never after where they were.
        let width = features.len();
        let (mut kept, mut missing_rows) = (0, 0);
        let mut first_missing = None;
        let mut targets = Vec::with_capacity(self.lines.len());
        for r in 0..self.lines.len() {
            let row = r * columns;
            let gap = features
                .iter()
                .chain(std::iter::once(&label))
                .find(|&&c| is_marker(self.values[row + c], MISSING));
            if let Some(&c) = gap {
                missing_rows += 1;
                first_missing.get_or_insert_with(|| {
                    format!("line {}, column `{}`", self.lines[r], self.names[c])
                });
                continue;
            }
            for (k, &c) in features.iter().enumerate() {
                self.values[kept * width + k] = self.values[row + c];
            }
            targets.push(self.values[row + label]);
            self.lines[kept] = self.lines[r];
            self.label_ids[kept] = self.label_ids[r];
            kept += 1;
        }
        self.values.truncate(kept * width);
        self.values.shrink_to_fit();
        self.lines.truncate(kept);
        self.label_ids.truncate(kept);
        if let Some(first) = &first_missing {
            notes.push(format!(
                "{missing_rows} rows with missing values left out (first: {first})"
            ));
        }
        check_rows(self.path, kept, missing_rows)?;
        let (task, task_reason, class_names, y) = self.target(&targets, options)?;
        let names = std::mem::take(&mut self.names);
        Ok(Table {
            name: name.to_owned(),
            path: self.path.to_owned(),
            format: "csv",
            feature_names: features.iter().map(|&c| names[c].clone()).collect(),
            label_column: names[label].clone(),
            label_reason: std::mem::take(&mut self.label_reason),
            columns: names,
            task,
            task_reason,
            class_names,
            notes,
            rows_with_missing_values: missing_rows,
            rows: kept,
            image: None,
            x: self.values,
            y,
        })
    }

    /// The first cell, in file order, that is text or not finite in a numeric feature column.
    fn first_bad_cell(&self, features: &[usize]) -> Result<(), DataError> {
        let text = features
            .iter()
            .filter_map(|&c| self.first_text[c].as_ref().map(|seen| (seen, c, true)));
        let infinite = features.iter().filter_map(|&c| {
            self.first_not_finite[c]
                .as_ref()
                .map(|seen| (seen, c, false))
        });
        let first = text
            .chain(infinite)
            .min_by_key(|((line, _), c, _)| (*line, features.iter().position(|f| f == c)));
        match first {
            None => Ok(()),
            Some(((line, field), c, false)) => {
                Err(not_finite(self.path, *line, &self.names[c], field))
            }
            Some(((line, field), c, true)) => Err(self.line_error(
                *line,
                format!(
                    "column `{}`: `{field}` is not a number; the column holds numbers \
                     elsewhere, so a number was expected (leave the cell empty, or write NA, \
                     to mark a missing value)",
                    self.names[c]
                ),
            )),
        }
    }

    /// The task, why it was chosen, the class names and the target per kept row; `targets` are
    /// the label cells of the kept rows.
    fn target(
        &self,
        targets: &[f32],
        options: &LoadOptions,
    ) -> Result<(Task, String, Vec<String>, Vec<f32>), DataError> {
        let column = &self.names[self.label];
        if let Some(r) = targets.iter().position(|&v| is_marker(v, NOT_FINITE)) {
            let line = u64::from(self.lines[r]);
            let field = self.text_of(r).unwrap_or("the value");
            return Err(not_finite(self.path, line, column, field));
        }
        let first_text = targets.iter().position(|&v| is_marker(v, TEXT));
        let regression = |reason: String| (Task::Regression, reason, Vec::new(), targets.to_vec());
        match (options.task, first_text) {
            (Some(Task::Regression), Some(r)) => Err(self.line_error(
                u64::from(self.lines[r]),
                format!(
                    "column `{column}`: `{}` is not a number, and a regression target must be \
                     numeric: choose classification, or another column",
                    self.text_of(r).unwrap_or("?")
                ),
            )),
            (Some(Task::Regression), None) => Ok(regression("chosen".to_owned())),
            (Some(Task::Classification), _) => {
                let (names, y) = self.classes(targets)?;
                Ok((Task::Classification, "chosen".to_owned(), names, y))
            }
            (None, Some(_)) => {
                let (names, y) = self.classes(targets)?;
                Ok((Task::Classification, "text labels".to_owned(), names, y))
            }
            (None, None) => {
                if let Some(r) = targets.iter().position(|v| v.fract() != 0.0) {
                    return Ok(regression(format!(
                        "the label column holds fractions, e.g. {} on line {}",
                        targets[r], self.lines[r]
                    )));
                }
                let distinct = distinct_whole(targets);
                if distinct.len() > MAX_AUTO_CLASSES {
                    return Ok(regression(format!(
                        "the label column holds {} distinct whole numbers, more than the \
                         {MAX_AUTO_CLASSES} read as classes",
                        distinct.len()
                    )));
                }
                let (names, y) = self.classes(targets)?;
                Ok((
                    Task::Classification,
                    format!("{} distinct whole numbers", names.len()),
                    names,
                    y,
                ))
            }
        }
    }

    /// The label text of kept row `r`, if it was kept.
    fn text_of(&self, r: usize) -> Option<&str> {
        self.texts
            .get(usize::from(self.label_ids[r]))
            .map(String::as_str)
    }

    /// Class names and each kept row's class, from the label texts the kept rows use.
    fn classes(&self, targets: &[f32]) -> Result<(Vec<String>, Vec<f32>), DataError> {
        let column = &self.names[self.label];
        if self.label_ids.contains(&u16::MAX) {
            // More distinct texts than could be classes: say how many when they are numbers.
            let many = if targets.iter().all(|v| !v.is_nan()) {
                let mut values: Vec<u32> = targets.iter().map(|v| v.to_bits()).collect();
                values.sort_unstable();
                values.dedup();
                values.len().to_string()
            } else {
                format!("more than {MAX_LABEL_TEXTS}")
            };
            return Err(too_many_classes(self.path, column, &many));
        }
        let mut used = vec![false; self.texts.len()];
        for &id in &self.label_ids {
            used[usize::from(id)] = true;
        }
        let ids: Vec<usize> = (0..self.texts.len()).filter(|&i| used[i]).collect();
        let texts: Vec<&str> = ids.iter().map(|&i| self.texts[i].as_str()).collect();
        let (names, class_of_text) = classes_of(&texts, column, self.path)?;
        let mut class_of_id = vec![0.0; self.texts.len()];
        for (&id, &class) in ids.iter().zip(&class_of_text) {
            class_of_id[id] = class;
        }
        let y = self
            .label_ids
            .iter()
            .map(|&id| class_of_id[usize::from(id)])
            .collect();
        Ok((names, y))
    }
}

/// The distinct whole numbers among `values`, sorted.
fn distinct_whole(values: &[f32]) -> Vec<i64> {
    let mut distinct: Vec<i64> = values.iter().map(|&v| v as i64).collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
}

/// The refusal of a label column with more distinct values than classes.
fn too_many_classes(path: &str, column: &str, count: &str) -> DataError {
    DataError::Refused {
        path: path.to_owned(),
        message: format!(
            "the label column `{column}` has {count} distinct values, more than the \
             {MAX_FILE_CLASSES} classes this app trains on: is it the right column? (a numeric \
             target can be trained as regression)"
        ),
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

/// The label column and why: the one asked for, or the first usual name in order of
/// preference, or the last column.
fn choose_label(
    names: &[String],
    options: &LoadOptions,
    path: &str,
) -> Result<(usize, String), DataError> {
    if let Some(wanted) = &options.label {
        if let Some(i) = names.iter().position(|n| n == wanted) {
            return Ok((i, "chosen".to_owned()));
        }
        if let Ok(i) = wanted.parse::<usize>()
            && i < names.len()
        {
            return Ok((i, format!("chosen by index {i}")));
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
    for usual in USUAL_LABELS {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(usual)) {
            return Ok((
                i,
                format!(
                    "named `{usual}` (the first found of {})",
                    USUAL_LABELS.join(", ")
                ),
            ));
        }
    }
    Ok((
        names.len() - 1,
        format!(
            "the last column (none is named {})",
            USUAL_LABELS.join(", ")
        ),
    ))
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
