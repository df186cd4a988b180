//! The data preview: what a loaded data set holds before anything trains on it — rows,
//! features, classes with their counts or the target's range, what the loader left out — with a
//! scatter of two chosen features, or a grid of sample images with their labels.

use std::sync::Arc;

use egui::{Color32, RichText};
use egui_plot::{Legend, Plot, Points};

use super::command::UiCommand;
use super::labels::class_color;
use crate::data::formats::{IMAGE_SIDES, LoadOptions};
use crate::data::source::{DataSource, Loaded};
use crate::data::{Table, Task};
use crate::i18n::{Key, Lang};
use crate::train::TrainConfig;

/// Most points the scatter draws; larger sets are thinned evenly.
const MAX_SCATTER_POINTS: usize = 3000;
/// Sample images shown per class, and classes shown.
const GRID_SAMPLES: usize = 10;
const GRID_CLASSES: usize = 10;
/// Image sides offered for image folders.
const SIDES: [usize; 6] = [8, 16, 28, 32, 48, 64];

/// The state of the preview: which features the scatter shows, and the sample textures.
#[derive(Default)]
pub struct PreviewPanel {
    /// Feature index on the scatter's horizontal axis.
    pub x_feature: usize,
    /// Feature index on the vertical axis.
    pub y_feature: usize,
    /// The table the textures were made from, and one texture per class row.
    textures: Option<(Arc<Table>, Vec<egui::TextureHandle>)>,
    /// The table the axes were chosen for: a new table starts from its first two features.
    axes_for: Option<Arc<Table>>,
}

impl PreviewPanel {
    /// Draws the preview of `loaded`, with the split `config` would make of it; `training_on`
    /// is the source of the run in progress.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        loaded: Option<&Loaded>,
        config: &TrainConfig,
        training_on: &DataSource,
        commands: &mut Vec<UiCommand>,
    ) {
        let Some(loaded) = loaded else {
            // "No data set loaded" would be untrue while a generated set trains.
            if *training_on == DataSource::Generated {
                let name = lang.tr(super::labels::dataset_key(config.data.kind));
                ui.label(lang.fmt(Key::PreviewGenerated, &[("name", &name)]));
            } else {
                ui.label(lang.tr(Key::PreviewEmpty));
            }
            return;
        };
        // A generated set trains while a file stays loaded: say first which one is in use, so
        // the file's table below is not taken for the training data.
        if *training_on == DataSource::Generated {
            let name = lang.tr(super::labels::dataset_key(config.data.kind));
            let file = &loaded.table.name;
            ui.label(
                RichText::new(lang.fmt(
                    Key::PreviewFileKept,
                    &[("generated", &name), ("name", file)],
                ))
                .strong()
                .color(ui.visuals().warn_fg_color),
            );
        }
        let table = &loaded.table;
        ui.horizontal_wrapped(|ui| {
            ui.heading(RichText::new(&table.name).strong());
            ui.label(
                RichText::new(format!(
                    "{} · {}",
                    format_name(lang, table.format),
                    table.path
                ))
                .weak(),
            );
        });
        let text = table.format == crate::data::text_data::FORMAT;
        if text {
            super::text_preview::text_preview_ui(ui, lang, table, config);
        } else {
            summary_ui(ui, lang, table, config);
        }
        for note in &table.notes {
            ui.label(
                RichText::new(format!("· {}", note.text(lang)))
                    .small()
                    .weak(),
            );
        }
        if let DataSource::File { path, options } = &loaded.source
            && (!table.columns.is_empty() || table.format == "images")
        {
            read_options_ui(ui, lang, table, path, options, commands);
        }
        ui.horizontal(|ui| {
            let applied = *training_on == loaded.source;
            let text = if applied {
                lang.tr(Key::TrainingOnThis)
            } else {
                lang.tr(Key::TrainOnThis)
            };
            if ui
                .add_enabled(!applied, egui::Button::new(RichText::new(text).strong()))
                .on_hover_text(lang.tr(Key::TrainOnThisTip))
                .clicked()
            {
                commands.push(UiCommand::UseLoaded);
            }
        });
        if text {
            return;
        }
        ui.separator();
        if !self
            .axes_for
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(t, table))
        {
            self.axes_for = Some(Arc::clone(table));
            self.x_feature = 0;
            self.y_feature = 1.min(table.features().saturating_sub(1));
        }
        if table.image.is_some() {
            self.image_grid_ui(ui, lang, table);
        } else {
            self.scatter_ui(ui, lang, table);
        }
    }

    fn scatter_ui(&mut self, ui: &mut egui::Ui, lang: Lang, table: &Table) {
        let features = table.features();
        if features == 0 {
            return;
        }
        if self.x_feature >= features || self.y_feature >= features {
            self.x_feature = 0;
            self.y_feature = 1.min(features - 1);
        }
        ui.horizontal_wrapped(|ui| {
            ui.label(lang.tr(Key::Scatter));
            for (axis, index) in [
                (Key::AxisX, &mut self.x_feature),
                (Key::AxisY, &mut self.y_feature),
            ] {
                egui::ComboBox::from_label(lang.tr(axis))
                    .selected_text(&table.feature_names[*index])
                    .show_ui(ui, |ui| {
                        for (i, name) in table.feature_names.iter().enumerate() {
                            ui.selectable_value(index, i, name);
                        }
                    });
            }
        });
        let caption = match table.task {
            Task::Classification => lang.tr(Key::ScatterCaptionClasses),
            Task::Regression => lang.tr(Key::ScatterCaptionTarget),
        };
        ui.label(RichText::new(caption).small().weak());
        let (fx, fy) = (self.x_feature, self.y_feature);
        let step = table.rows.div_ceil(MAX_SCATTER_POINTS).max(1);
        let point = |row: usize| {
            [
                f64::from(table.x[row * features + fx]),
                f64::from(table.x[row * features + fy]),
            ]
        };
        let range = table.target_range();
        let shown = crate::ui::plots::readable(Plot::new("preview-scatter"), ui)
            .height(ui.available_height().clamp(240.0, 520.0))
            .legend(Legend::default().follow_insertion_order(true))
            .x_axis_label(table.feature_names[fx].clone())
            .y_axis_label(table.feature_names[fy].clone())
            .show(ui, |plot| match (table.task, range) {
                (Task::Regression, Some([lo, _, hi])) => {
                    // Eight colour bands from low (blue) to high (red) target values.
                    let mut bands: Vec<Vec<[f64; 2]>> = vec![Vec::new(); 8];
                    for row in (0..table.rows).step_by(step) {
                        let t = (f64::from(table.y[row]) - lo) / (hi - lo).max(1e-12);
                        bands[((t * 8.0) as usize).min(7)].push(point(row));
                    }
                    let width = (hi - lo) / 8.0;
                    for (i, band) in bands.into_iter().enumerate() {
                        let t = i as f32 / 7.0;
                        let from = lo + width * i as f64;
                        // Enough decimals to tell the bands apart, no more.
                        let decimals = (2.0 - width.log10().floor()).clamp(0.0, 6.0) as usize;
                        let name = format!("{from:.decimals$} – {:.decimals$}", from + width);
                        let color = Color32::from_rgb(
                            (60.0 + 195.0 * t) as u8,
                            90,
                            (255.0 - 195.0 * t) as u8,
                        );
                        plot.points(Points::new(name, band).radius(2.0).color(color));
                    }
                }
                _ => {
                    for (c, name) in table.class_names.iter().enumerate() {
                        let points: Vec<[f64; 2]> = (0..table.rows)
                            .step_by(step)
                            .filter(|&row| table.y[row] as usize == c)
                            .map(point)
                            .collect();
                        plot.points(
                            Points::new(name.clone(), points)
                                .radius(2.0)
                                .color(class_color(c)),
                        );
                    }
                }
            });
        crate::ui::plots::offer_png(ui, &shown.response, lang);
    }

    fn image_grid_ui(&mut self, ui: &mut egui::Ui, lang: Lang, table: &Arc<Table>) {
        let Some(shape) = table.image else {
            return;
        };
        let stale = self
            .textures
            .as_ref()
            .is_none_or(|(t, _)| !Arc::ptr_eq(t, table));
        if stale {
            let rows: Vec<egui::TextureHandle> = (0..table.class_names.len().min(GRID_CLASSES))
                .map(|c| {
                    let image = class_row_image(table, c);
                    ui.ctx().load_texture(
                        format!("preview-class-{c}"),
                        image,
                        egui::TextureOptions::NEAREST,
                    )
                })
                .collect();
            self.textures = Some((Arc::clone(table), rows));
        }
        let Some((_, rows)) = &self.textures else {
            return;
        };
        ui.label(lang.fmt(
            Key::SampleGrid,
            &[
                ("n", &GRID_SAMPLES),
                ("w", &shape.width),
                ("h", &shape.height),
            ],
        ));
        let tile = 36.0;
        egui::Grid::new("preview-grid")
            .num_columns(2)
            .show(ui, |ui| {
                for (c, texture) in rows.iter().enumerate() {
                    ui.label(RichText::new(&table.class_names[c]).color(class_color(c)));
                    let [w, h] = texture.size();
                    let scale = tile / h as f32;
                    ui.image((texture.id(), egui::vec2(w as f32 * scale, tile)));
                    ui.end_row();
                }
            });
        if table.class_names.len() > GRID_CLASSES {
            ui.label(
                RichText::new(lang.fmt(
                    Key::MoreClasses,
                    &[("n", &(table.class_names.len() - GRID_CLASSES))],
                ))
                .weak(),
            );
        }
    }
}

/// Up to [`GRID_SAMPLES`] images of class `c` side by side, each scaled to its own range.
fn class_row_image(table: &Table, class: usize) -> egui::ColorImage {
    let Some(shape) = table.image else {
        return egui::ColorImage::new([1, 1], vec![Color32::BLACK]);
    };
    let features = table.features();
    let (w, h) = (shape.width, shape.height);
    let samples: Vec<usize> = (0..table.rows)
        .filter(|&r| table.y[r] as usize == class)
        .take(GRID_SAMPLES)
        .collect();
    let gap = 1;
    let width = (w + gap) * GRID_SAMPLES;
    let mut pixels = vec![Color32::from_gray(30); width * h];
    for (i, &row) in samples.iter().enumerate() {
        let values = &table.x[row * features..(row + 1) * features];
        for (p, color) in super::images::pixels(values, shape).into_iter().enumerate() {
            pixels[(p / w) * width + i * (w + gap) + p % w] = color;
        }
    }
    egui::ColorImage::new([width, h], pixels)
}

fn summary_ui(ui: &mut egui::Ui, lang: Lang, table: &Table, config: &TrainConfig) {
    let test_rows = ((table.rows as f32 * config.data.test_fraction).round() as usize)
        .clamp(1, table.rows.saturating_sub(1).max(1));
    egui::Grid::new("preview-summary")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(lang.tr(Key::Rows));
            ui.label(lang.fmt(
                Key::RowsSplit,
                &[
                    ("n", &table.rows),
                    ("train", &(table.rows - test_rows)),
                    ("test", &test_rows),
                ],
            ));
            ui.end_row();
            ui.label(lang.tr(Key::Features));
            let shown: Vec<&str> = table
                .feature_names
                .iter()
                .take(6)
                .map(String::as_str)
                .collect();
            let more = table.features().saturating_sub(shown.len());
            let mut text = format!("{}: {}", table.features(), shown.join(", "));
            if more > 0 {
                text += &lang.fmt(Key::AndMore, &[("n", &more)]);
            }
            ui.label(text);
            ui.end_row();
            if let Some(shape) = table.image {
                ui.label(lang.tr(Key::Images));
                ui.label(format!(
                    "{}×{}, {}",
                    shape.width,
                    shape.height,
                    lang.tr(if shape.channels == 3 {
                        Key::Rgb
                    } else {
                        Key::Grey
                    })
                ));
                ui.end_row();
            }
            ui.label(lang.tr(Key::Task));
            let task = lang.tr(match table.task {
                Task::Classification => Key::Classification,
                Task::Regression => Key::Regression,
            });
            if table.task_reason.is_empty() {
                ui.label(task);
            } else {
                ui.label(format!("{task} ({})", table.task_reason.text(lang)));
            }
            ui.end_row();
            ui.label(lang.tr(Key::LabelColumn));
            let reason = table.label_reason.text(lang);
            if reason.is_empty() {
                ui.label(&table.label_column);
            } else if table.label_column.is_empty() {
                ui.label(reason);
            } else {
                ui.label(format!("{} ({reason})", table.label_column));
            }
            ui.end_row();
            if let Some([lo, mean, hi]) = table.target_range() {
                ui.label(lang.tr(Key::TargetRange));
                ui.label(lang.fmt(
                    Key::TargetRangeValue,
                    &[
                        ("lo", &(lo as f32)),
                        ("mean", &format!("{mean:.4}")),
                        ("hi", &(hi as f32)),
                    ],
                ));
                ui.end_row();
            } else {
                ui.label(lang.tr(Key::ClassCounts));
                class_counts_ui(ui, table);
                ui.end_row();
            }
            ui.label(lang.tr(Key::Standardise));
            ui.label(lang.tr(if config.data.standardise {
                Key::StandardiseOn
            } else {
                Key::StandardiseOff
            }));
            ui.end_row();
            ui.label(lang.tr(Key::InMemory));
            ui.label(format!(
                "{} (f32)",
                crate::units::format_bytes(table.size_in_bytes() as u64)
            ));
            ui.end_row();
        });
}

/// One bar per class, as long as its share of the rows.
fn class_counts_ui(ui: &mut egui::Ui, table: &Table) {
    let counts = table.class_counts();
    let max = counts.iter().copied().max().unwrap_or(1).max(1);
    ui.vertical(|ui| {
        for (c, (name, &n)) in table.class_names.iter().zip(&counts).enumerate().take(20) {
            ui.horizontal(|ui| {
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(120.0, 10.0), egui::Sense::hover());
                let filled = rect.with_max_x(rect.min.x + rect.width() * n as f32 / max as f32);
                ui.painter().rect_filled(filled, 2.0, class_color(c));
                ui.label(format!("{name}: {n}"));
            });
        }
        if counts.len() > 20 {
            ui.label(format!("… {}", counts.len() - 20));
        }
    });
}

/// The label column, task and image options of a file, each change re-reading it.
fn read_options_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    table: &Table,
    path: &std::path::Path,
    options: &LoadOptions,
    commands: &mut Vec<UiCommand>,
) {
    let mut changed = options.clone();
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(lang.tr(Key::HowToRead)).strong());
        if !table.columns.is_empty() {
            egui::ComboBox::from_label(lang.tr(Key::LabelColumn))
                .selected_text(&table.label_column)
                .show_ui(ui, |ui| {
                    for name in &table.columns {
                        if ui
                            .selectable_label(*name == table.label_column, name)
                            .clicked()
                        {
                            changed.label = Some(name.clone());
                        }
                    }
                });
            ui.label(lang.tr(Key::Task));
            for (task, key) in [
                (None, Key::TaskAuto),
                (Some(Task::Classification), Key::Classification),
                (Some(Task::Regression), Key::Regression),
            ] {
                if ui
                    .selectable_label(options.task == task, lang.tr(key))
                    .on_hover_text(lang.tr(Key::TaskTip))
                    .clicked()
                {
                    changed.task = task;
                }
            }
        }
        if table.format == "images" {
            egui::ComboBox::from_label(lang.tr(Key::ImageSide))
                .selected_text(format!("{0}×{0}", options.image.side))
                .show_ui(ui, |ui| {
                    for side in SIDES.into_iter().filter(|s| IMAGE_SIDES.contains(s)) {
                        if ui
                            .selectable_label(options.image.side == side, format!("{side}×{side}"))
                            .clicked()
                        {
                            changed.image.side = side;
                        }
                    }
                });
            for (rgb, key) in [(false, Key::Grey), (true, Key::Rgb)] {
                if ui
                    .selectable_label(options.image.rgb == rgb, lang.tr(key))
                    .clicked()
                {
                    changed.image.rgb = rgb;
                }
            }
        }
    });
    if changed != *options {
        commands.push(UiCommand::Load(DataSource::File {
            path: path.to_path_buf(),
            options: changed,
        }));
    }
}

/// A table's format as the preview names it.
fn format_name(lang: Lang, format: &str) -> String {
    match format {
        "images" => lang.tr(Key::ImageFolder).to_owned(),
        "generated" => lang.tr(Key::Generators).to_owned(),
        other => other.to_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::i18n::Said;
    use crate::ui::testing::harness;

    /// Twenty fruit: weight and diameter, ten apples and ten pears.
    fn fruit() -> Loaded {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for i in 0..20 {
            x.extend([150.0 + i as f32, 7.0 + (i % 3) as f32]);
            y.push((i % 2) as f32);
        }
        Loaded {
            source: DataSource::File {
                path: "/data/fruit.csv".into(),
                options: LoadOptions::default(),
            },
            table: Arc::new(Table {
                name: "fruit.csv".into(),
                path: "/data/fruit.csv".into(),
                format: "csv",
                feature_names: vec!["weight".into(), "diameter".into()],
                columns: vec!["weight".into(), "diameter".into(), "kind".into()],
                task: Task::Classification,
                task_reason: Said::verbatim("the label column holds text"),
                class_names: vec!["apple".into(), "pear".into()],
                label_column: "kind".into(),
                label_reason: Said::default(),
                notes: Vec::new(),
                rows_with_missing_values: 0,
                rows: 20,
                image: None,
                x,
                y,
            }),
        }
    }

    #[test]
    fn the_preview_summarises_the_table_and_offers_to_train_on_it() {
        let loaded = fruit();
        let config = TrainConfig::default();
        let mut h = harness(
            move |ui, (panel, commands): &mut (PreviewPanel, Vec<UiCommand>)| {
                let running_on = DataSource::Generated;
                panel.ui(ui, Lang::En, Some(&loaded), &config, &running_on, commands);
            },
            (PreviewPanel::default(), Vec::new()),
        );
        assert!(h.query_by_label("fruit.csv").is_some());
        assert!(
            h.query_by_label_contains("Training on “Spiral”, generated")
                .is_some()
        );
        assert!(h.query_by_label("apple: 10").is_some());
        assert!(h.query_by_label("pear: 10").is_some());
        assert!(h.query_by_label("Scatter of two features:").is_some());
        h.get_by_label("Train on this data set").click();
        h.run();
        assert_eq!(h.state().1, [UiCommand::UseLoaded]);
    }

    #[test]
    fn the_data_set_in_training_says_so() {
        let loaded = fruit();
        let config = TrainConfig::default();
        let h = harness(
            move |ui, panel: &mut PreviewPanel| {
                let running_on = loaded.source.clone();
                panel.ui(
                    ui,
                    Lang::Zh,
                    Some(&loaded),
                    &config,
                    &running_on,
                    &mut Vec::new(),
                );
            },
            PreviewPanel::default(),
        );
        assert!(h.query_by_label("正在使用此数据集训练").is_some());
    }

    /// Nothing loaded: while a generated set trains the panel names it and says why there is no
    /// table, rather than that no data set is loaded; otherwise it says how to load one.
    #[test]
    fn a_generated_set_is_named_not_called_missing() {
        for (source, expected) in [
            (
                DataSource::Generated,
                "Training on “Spiral”, a set BatchScope generates",
            ),
            (DataSource::Shipped("iris".into()), "No data set loaded yet"),
        ] {
            let config = TrainConfig::default();
            let h = harness(
                move |ui, panel: &mut PreviewPanel| {
                    panel.ui(ui, Lang::En, None, &config, &source, &mut Vec::new());
                },
                PreviewPanel::default(),
            );
            assert!(h.query_by_label_contains(expected).is_some(), "{expected}");
        }
    }
}
