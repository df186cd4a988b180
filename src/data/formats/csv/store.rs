//! The store a CSV file streams into: every column of every row as `f32` (or a marker), with
//! what each column held, within the memory budget.

use std::collections::HashMap;

use super::cells::{
    Cell, MAX_FEATURES, MAX_LABEL_TEXTS, MISSING, NOT_FINITE, TEXT, cell, choose_label, marker,
};
use crate::data::formats::common::{DataError, LoadOptions};
use crate::i18n::{Arg, DataKey, Said};
use crate::units::format_bytes;

/// Up to this many label texts, a row's label is looked up by a scan rather than a hash.
const FEW_LABELS: usize = 16;

/// Where one column's first cell of a kind is: its line and its text.
pub(super) type Seen = Option<(u64, String)>;

/// The rows read so far, every column as `f32` (or a marker), with what each column held.
pub(super) struct Store<'p> {
    pub(super) path: &'p str,
    pub(super) budget: u64,
    pub(super) bom: usize,
    /// The first record, until the second says whether it is a header.
    pub(super) first: Option<(u64, ::csv::StringRecord)>,
    pub(super) names: Vec<String>,
    pub(super) has_header: bool,
    pub(super) label: usize,
    pub(super) label_reason: Said,
    pub(super) columns: usize,
    /// `rows × columns`, row-major.
    pub(super) values: Vec<f32>,
    /// Each row's line.
    pub(super) lines: Vec<u32>,
    /// Each row's label text, by index into `texts` (`u16::MAX`: one too many to keep).
    pub(super) label_ids: Vec<u16>,
    pub(super) texts: Vec<String>,
    pub(super) text_index: HashMap<String, u16>,
    pub(super) text_cells: Vec<usize>,
    pub(super) number_cells: Vec<usize>,
    pub(super) first_text: Vec<Seen>,
    pub(super) first_not_finite: Vec<Seen>,
    /// Fields per row, and the line that set it.
    pub(super) expected: Option<(usize, u64)>,
}

impl<'p> Store<'p> {
    pub(super) fn new(path: &'p str, budget: u64, bom: usize) -> Self {
        Self {
            path,
            budget,
            bom,
            first: None,
            names: Vec::new(),
            has_header: false,
            label: 0,
            label_reason: Said::default(),
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

    pub(super) fn line_error(&self, line: u64, message: Said) -> DataError {
        DataError::Line {
            path: self.path.to_owned(),
            line,
            message,
        }
    }

    pub(super) fn refused(&self, message: Said) -> DataError {
        DataError::Refused {
            path: self.path.to_owned(),
            message,
        }
    }

    /// Takes one record: the header decision on the second, then a row of the store.
    pub(super) fn record(
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
                message: Said::with(
                    DataKey::OnLine,
                    &[
                        ("line", Arg::Plain(&line)),
                        ("message", Arg::Said(&Said::new(DataKey::Binary, &[]))),
                    ],
                ),
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
                    return Err(self.line_error(line, Said::new(DataKey::UnclosedQuote, &[])));
                }
                Err(self.line_error(
                    line,
                    Said::new(
                        DataKey::Ragged,
                        &[("n", &record.len()), ("first", &first_line), ("len", &len)],
                    ),
                ))
            }
            Some(_) => Ok(()),
        }
    }

    fn check_columns(&self, columns: usize) -> Result<(), DataError> {
        if columns < 2 {
            return Err(self.refused(Said::new(DataKey::OneColumn, &[])));
        }
        if columns > MAX_FEATURES + 1 {
            return Err(self.refused(Said::new(
                DataKey::TooWide,
                &[("n", &columns), ("max", &MAX_FEATURES)],
            )));
        }
        Ok(())
    }

    /// Decides the header from the first two records, names the columns and picks the label.
    pub(super) fn start(
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
    pub(super) fn push_row(
        &mut self,
        line: u64,
        record: &::csv::StringRecord,
    ) -> Result<(), DataError> {
        let columns = self.columns;
        let rows = self.lines.len() as u64;
        // Each row costs its values and, beside them, its line and its label's text index.
        let needed = (self.values.len() + columns) as u64 * 4 + (rows + 1) * 6;
        if needed > self.budget {
            return Err(self.refused(Said::new(
                DataKey::OverBudget,
                &[
                    ("budget", &format_bytes(self.budget)),
                    ("line", &line),
                    ("rows", &(rows + 1)),
                    ("columns", &columns),
                ],
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
        // A few labels are found by a scan, cheaper than hashing each row's.
        let known = if self.texts.len() <= FEW_LABELS {
            self.texts.iter().position(|t| t == label).map(|i| i as u16)
        } else {
            self.text_index.get(label).copied()
        };
        let id = match known {
            Some(id) => id,
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
