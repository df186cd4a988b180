//! `batchscope data inspect`: loads and checks a data set file (or a shipped set), and
//! summarises what the app would train on — or says what is wrong with it.

use serde::Serialize;

use super::args::ReadArgs;
use super::failure::Failure;
use super::output::Out;
use super::run::load_named;
use crate::data::Table;

/// What `data inspect --json` prints: the table as loaded, and what follows from it.
#[derive(Serialize)]
struct InspectSummary<'a> {
    #[serde(flatten)]
    table: &'a Table,
    features: usize,
    class_counts: &'a [usize],
    target_range: Option<[f64; 3]>,
}

/// `data inspect`: what the app would train on, or why it refuses the file.
pub(super) fn run(
    out: &mut Out,
    path: &str,
    read: &ReadArgs,
    as_json: bool,
) -> Result<(), Failure> {
    let table = load_named(path, read)?;
    let counts = table.class_counts();
    if as_json {
        out.json(&InspectSummary {
            features: table.features(),
            class_counts: &counts,
            target_range: table.target_range(),
            table: &table,
        })?;
        return Ok(());
    }
    out.line(format!("{} ({}, {})", table.name, table.format, table.path))?;
    out.line(format!("rows: {}", table.rows))?;
    let shown: Vec<&str> = table
        .feature_names
        .iter()
        .take(8)
        .map(String::as_str)
        .collect();
    let more = table.features().saturating_sub(shown.len());
    out.line(format!(
        "features: {} ({}{})",
        table.features(),
        shown.join(", "),
        if more > 0 {
            format!(", … {more} more")
        } else {
            String::new()
        }
    ))?;
    if let Some(image) = table.image {
        out.line(format!(
            "images: {}×{}, {}",
            image.width,
            image.height,
            if image.channels == 3 { "RGB" } else { "grey" }
        ))?;
    }
    out.line(format!(
        "label column: {} ({})",
        table.label_column, table.label_reason
    ))?;
    out.line(format!(
        "task: {} ({})",
        table.task.as_str(),
        table.task_reason
    ))?;
    if let Some([lo, mean, hi]) = table.target_range() {
        // The values were read as f32: show them as f32, not with f64's extra digits.
        out.line(format!(
            "target: from {} to {}, mean {mean:.4}",
            lo as f32, hi as f32
        ))?;
    } else {
        let classes: Vec<String> = table
            .class_names
            .iter()
            .zip(&counts)
            .map(|(name, n)| format!("{name}: {n}"))
            .collect();
        out.line(format!(
            "classes: {} ({})",
            table.class_names.len(),
            classes.join(", ")
        ))?;
    }
    for note in &table.notes {
        out.line(format!("note: {note}"))?;
    }
    Ok(())
}
