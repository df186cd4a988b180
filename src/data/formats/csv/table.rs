//! The table a CSV store becomes: text columns left out, rows with missing values dropped, the
//! store compacted in place, and the label column read as classes or a regression target.

use super::cells::{MAX_LABEL_TEXTS, MISSING, NOT_FINITE, TEXT, is_marker, not_finite};
use super::store::Store;
use crate::data::dataset::{Table, Task};
use crate::data::formats::common::{
    DataError, LoadOptions, MAX_AUTO_CLASSES, check_rows, classes_of, too_many_classes,
};
use crate::i18n::{Arg, DataKey, Said};

impl Store<'_> {
    /// The table: text columns left out, rows with missing values dropped, the store compacted
    /// in place to the feature columns, and the label read as classes or a target.
    pub(super) fn finish(mut self, name: &str, options: &LoadOptions) -> Result<Table, DataError> {
        if let Some((line, first)) = self.first.take() {
            self.start(&first, None, options)?;
            if !self.has_header {
                self.push_row(line, &first)?;
            }
        }
        if self.names.is_empty() {
            return Err(self.refused(Said::new(DataKey::BlankOnly, &[])));
        }
        if self.lines.is_empty() {
            return Err(self.refused(Said::new(
                DataKey::HeaderOnly,
                &[("names", &self.names.join(", "))],
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
            return Err(self.refused(Said::new(
                DataKey::NoFeatures,
                &[("label", &self.names[label])],
            )));
        }
        let mut notes: Vec<Said> = (0..columns)
            .filter(|&c| c != label && is_text_column(c))
            .map(|c| {
                let (line, example) = self.first_text[c].clone().unwrap_or_default();
                Said::new(
                    DataKey::TextColumn,
                    &[
                        ("name", &self.names[c]),
                        ("line", &line),
                        ("example", &example),
                    ],
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
                    Said::new(
                        DataKey::LineColumn,
                        &[("line", &self.lines[r]), ("column", &self.names[c])],
                    )
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
            notes.push(Said::with(
                DataKey::MissingRows,
                &[
                    ("n", Arg::Plain(&missing_rows)),
                    ("first", Arg::Said(first)),
                ],
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
                Said::new(
                    DataKey::NotANumber,
                    &[("column", &self.names[c]), ("field", field)],
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
    ) -> Result<(Task, Said, Vec<String>, Vec<f32>), DataError> {
        let column = &self.names[self.label];
        if let Some(r) = targets.iter().position(|&v| is_marker(v, NOT_FINITE)) {
            let line = u64::from(self.lines[r]);
            let field = self.text_of(r).unwrap_or("the value");
            return Err(not_finite(self.path, line, column, field));
        }
        let first_text = targets.iter().position(|&v| is_marker(v, TEXT));
        let regression = |reason: Said| (Task::Regression, reason, Vec::new(), targets.to_vec());
        match (options.task, first_text) {
            (Some(Task::Regression), Some(r)) => Err(self.line_error(
                u64::from(self.lines[r]),
                Said::new(
                    DataKey::RegressionText,
                    &[
                        ("column", column),
                        ("field", &self.text_of(r).unwrap_or("?")),
                    ],
                ),
            )),
            (Some(Task::Regression), None) => Ok(regression(Said::new(DataKey::LabelChosen, &[]))),
            (Some(Task::Classification), _) => {
                let (names, y) = self.classes(targets)?;
                let chosen = Said::new(DataKey::LabelChosen, &[]);
                Ok((Task::Classification, chosen, names, y))
            }
            (None, Some(_)) => {
                let (names, y) = self.classes(targets)?;
                let reason = Said::new(DataKey::TextLabels, &[]);
                Ok((Task::Classification, reason, names, y))
            }
            (None, None) => {
                if let Some(r) = targets.iter().position(|v| v.fract() != 0.0) {
                    return Ok(regression(Said::new(
                        DataKey::Fractions,
                        &[("value", &targets[r]), ("line", &self.lines[r])],
                    )));
                }
                let distinct = distinct_whole(targets);
                if distinct.len() > MAX_AUTO_CLASSES {
                    return Ok(regression(Said::new(
                        DataKey::ManyWholeNumbers,
                        &[("n", &distinct.len()), ("max", &MAX_AUTO_CLASSES)],
                    )));
                }
                let (names, y) = self.classes(targets)?;
                Ok((
                    Task::Classification,
                    Said::new(DataKey::FewWholeNumbers, &[("n", &names.len())]),
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
                Said::verbatim(values.len().to_string())
            } else {
                Said::new(DataKey::MoreThan, &[("n", &MAX_LABEL_TEXTS)])
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
