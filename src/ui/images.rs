//! What a model makes of images: test images with the class it predicts for each (green where
//! right, red where wrong), and for a CNN its first layer's filters and the feature maps they
//! make of one test image, drawn small. Everything comes from the device's last evaluation.

use egui::{Color32, RichText};

use crate::data::{Dataset, ImageShape};
use crate::i18n::{Key, Lang};
use crate::nn::FirstLayer;
use crate::train::{DeviceRun, SAMPLE_GRID};

/// Test images per row of the grid.
const GRID_COLUMNS: usize = 6;
/// Most filters and feature maps drawn.
const MAX_MAPS: usize = 16;
/// Colours of a right and a wrong prediction.
const RIGHT: Color32 = Color32::from_rgb(102, 187, 106);
const WRONG: Color32 = Color32::from_rgb(239, 83, 80);

/// `values` as pixels, scaled from their own smallest to their largest value: grey, or colour
/// for three channels. Shared with the data preview.
pub fn pixels(values: &[f32], shape: ImageShape) -> Vec<Color32> {
    let (lo, hi) = values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let level = |v: f32| (255.0 * (v - lo) / (hi - lo).max(1e-6)) as u8;
    (0..shape.width * shape.height)
        .map(|p| {
            let at = p * shape.channels;
            match values.get(at..at + shape.channels) {
                Some(&[r, g, b]) => Color32::from_rgb(level(r), level(g), level(b)),
                Some(&[v, ..]) => Color32::from_gray(level(v)),
                _ => Color32::BLACK,
            }
        })
        .collect()
}

/// Tiles of `w × h` pixels side by side in rows of `columns`, 1 pixel apart.
fn mosaic(tiles: &[Vec<Color32>], (w, h): (usize, usize), columns: usize) -> egui::ColorImage {
    let columns = columns.clamp(1, tiles.len().max(1));
    let rows = tiles.len().div_ceil(columns).max(1);
    let (width, height) = (columns * (w + 1) - 1, rows * (h + 1) - 1);
    let mut out = vec![Color32::from_gray(30); width * height];
    for (i, tile) in tiles.iter().enumerate() {
        let (x0, y0) = ((i % columns) * (w + 1), (i / columns) * (h + 1));
        for (p, &c) in tile.iter().enumerate().take(w * h) {
            out[(y0 + p / w) * width + x0 + p % w] = c;
        }
    }
    egui::ColorImage::new([width, height], out)
}

/// The first layer's filters (their first input channel, or colour for three) and maps.
fn first_layer_tiles(first: &FirstLayer) -> (Vec<Vec<Color32>>, Vec<Vec<Color32>>) {
    let shown = first.filters.min(MAX_MAPS);
    let channels = if first.channels_in == 3 { 3 } else { 1 };
    let filter_shape = ImageShape {
        width: first.kernel,
        height: first.kernel,
        channels,
    };
    let filters = (0..shown)
        .map(|f| {
            let values: Vec<f32> = (0..first.kernel * first.kernel)
                .flat_map(|p| {
                    (0..channels).map(move |c| (p * first.channels_in + c) * first.filters + f)
                })
                .map(|i| first.weights.get(i).copied().unwrap_or(0.0))
                .collect();
            pixels(&values, filter_shape)
        })
        .collect();
    let map_shape = ImageShape {
        width: first.width,
        height: first.height,
        channels: 1,
    };
    let maps = (0..shown)
        .map(|f| {
            let values: Vec<f32> = (0..first.width * first.height)
                .map(|p| {
                    first
                        .maps
                        .get(p * first.filters + f)
                        .copied()
                        .unwrap_or(0.0)
                })
                .collect();
            pixels(&values, map_shape)
        })
        .collect();
    (filters, maps)
}

/// The textures of one evaluation: the sample grid, and the filters and maps of a CNN.
struct Drawn {
    step: u64,
    grid: egui::TextureHandle,
    first_layer: Option<(egui::TextureHandle, egui::TextureHandle)>,
}

/// The view's state: the textures of the evaluation it drew last.
#[derive(Default)]
pub struct ImagesView {
    drawn: Option<Drawn>,
}

impl ImagesView {
    /// Draws the sample grid and, for a CNN, its first layer; nothing before an evaluation.
    pub fn ui(&mut self, ui: &mut egui::Ui, lang: Lang, run: &DeviceRun, data: &Dataset) {
        let (Some(eval), Some(shape)) = (&run.last_eval, data.image) else {
            return;
        };
        if eval.samples.is_empty() {
            return;
        }
        if self.drawn.as_ref().is_none_or(|d| d.step != eval.step) {
            let shown = eval.samples.len().min(SAMPLE_GRID);
            let tiles: Vec<_> = (0..shown)
                .filter_map(|r| data.test_x.get(r * data.features..(r + 1) * data.features))
                .map(|values| pixels(values, shape))
                .collect();
            let size = (shape.width, shape.height);
            let ctx = ui.ctx();
            let load =
                |name: String, image| ctx.load_texture(name, image, egui::TextureOptions::NEAREST);
            let grid = load(
                format!("samples-{}", run.device),
                mosaic(&tiles, size, GRID_COLUMNS),
            );
            let first_layer = eval.first_layer.as_ref().map(|first| {
                let (filters, maps) = first_layer_tiles(first);
                let k = (first.kernel, first.kernel);
                let columns = MAX_MAPS.min(8);
                (
                    load(
                        format!("filters-{}", run.device),
                        mosaic(&filters, k, columns),
                    ),
                    load(
                        format!("maps-{}", run.device),
                        mosaic(&maps, (first.width, first.height), columns),
                    ),
                )
            });
            self.drawn = Some(Drawn {
                step: eval.step,
                grid,
                first_layer,
            });
        }
        let Some(drawn) = &self.drawn else {
            return;
        };
        ui.label(lang.tr(Key::PredictedSamples))
            .on_hover_text(lang.tr(Key::PredictedSamplesTip));
        let tile = 40.0;
        let scale = tile / shape.height as f32;
        let [w, h] = drawn.grid.size();
        let response = ui.image((drawn.grid.id(), egui::vec2(w as f32, h as f32) * scale));
        // Each image's predicted class in its corner, coloured by whether it is right.
        let painter = ui.painter_at(response.rect);
        let font = egui::FontId::proportional(13.0);
        for (r, &predicted) in eval.samples.iter().enumerate() {
            let truth = data.test_y.get(r).map_or(usize::MAX, |&y| y as usize);
            let (col, row) = (r % GRID_COLUMNS, r / GRID_COLUMNS);
            let corner = response.rect.min
                + egui::vec2(
                    (col * (shape.width + 1)) as f32 * scale + 2.0,
                    (row * (shape.height + 1)) as f32 * scale + 1.0,
                );
            let name = data
                .class_names
                .get(predicted as usize)
                .map_or("?", String::as_str);
            let color = if predicted as usize == truth {
                RIGHT
            } else {
                WRONG
            };
            let galley = painter.layout_no_wrap(name.to_owned(), font.clone(), color);
            let back = egui::Rect::from_min_size(corner, galley.size()).expand(1.0);
            painter.rect_filled(back, 2.0, Color32::from_black_alpha(170));
            painter.galley(corner, galley, color);
        }
        if let Some((filters, maps)) = &drawn.first_layer {
            ui.label(lang.tr(Key::LearnedFilters))
                .on_hover_text(lang.tr(Key::LearnedFiltersTip));
            let [w, h] = filters.size();
            // About 30 points a filter, however small its kernel.
            let kernel = eval.first_layer.as_ref().map_or(h, |f| f.kernel) as f32;
            let scale = (30.0 / kernel.max(1.0)).min(ui.available_width() * 0.95 / w as f32);
            ui.image((filters.id(), egui::vec2(w as f32, h as f32) * scale));
            ui.label(lang.tr(Key::FeatureMaps))
                .on_hover_text(lang.tr(Key::FeatureMapsTip));
            let [w, h] = maps.size();
            let scale = (ui.available_width() * 0.95 / w as f32).clamp(0.5, 3.0);
            ui.image((maps.id(), egui::vec2(w as f32, h as f32) * scale));
        } else if data.image.is_some() {
            ui.label(RichText::new(lang.tr(Key::FiltersNeedCnn)).weak());
        }
    }
}
