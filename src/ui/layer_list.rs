//! The setup's model as a list of layers: each row a layer with its settings, its output shape
//! and its parameters, the row that cannot take what the row above gives marked with why; rows
//! are added, removed, moved and changed in place, and a preset replaces the list. The data set
//! gives the input and the dense output layer, shown as fixed rows around the list.

use egui::{Color32, DragValue, RichText};

use crate::backend::Activation;
use crate::i18n::{Lang, LayerKey};
use crate::nn::{Footprint, LayerSpec, MAX_MODEL_LAYERS, MODEL_PRESETS, ModelSpec, footprints};
use crate::train::config::MAX_CONV_CHANNELS;
use crate::units::grouped;

/// The colour of the row that breaks the model, and of why.
const BROKEN: Color32 = Color32::from_rgb(220, 60, 50);

/// Widest dense layer the editor offers (as `--layers` allows).
const MAX_UNITS: usize = 4096;
/// The most heads the list offers.
const MAX_HEADS: usize = 64;

/// A new layer of each kind, as the Add buttons make it, with its name.
fn kinds() -> [(LayerSpec, LayerKey); 9] {
    [
        (LayerSpec::Dense { units: 16 }, LayerKey::KindDense),
        (
            LayerSpec::Conv2d {
                filters: 8,
                kernel: 3,
            },
            LayerKey::KindConv2d,
        ),
        (LayerSpec::MaxPool2d, LayerKey::KindMaxPool2d),
        (LayerSpec::Flatten, LayerKey::KindFlatten),
        (
            LayerSpec::Activation {
                function: Activation::Relu,
            },
            LayerKey::KindActivation,
        ),
        (LayerSpec::LayerNorm, LayerKey::KindLayerNorm),
        (
            LayerSpec::Embedding {
                vocab: 65,
                width: 64,
            },
            LayerKey::KindEmbedding,
        ),
        (LayerSpec::Attention { heads: 4 }, LayerKey::KindAttention),
        (LayerSpec::Residual { from: 0 }, LayerKey::KindResidual),
    ]
}

/// The name of `spec`'s kind.
fn kind_key(spec: LayerSpec) -> LayerKey {
    kinds()
        .into_iter()
        .find(|(k, _)| std::mem::discriminant(k) == std::mem::discriminant(&spec))
        .map_or(LayerKey::KindDense, |(_, key)| key)
}

/// The functions an activation layer offers: the hidden activations and GELU.
const FUNCTIONS: [Activation; 4] = [
    Activation::Relu,
    Activation::Tanh,
    Activation::Sigmoid,
    Activation::Gelu,
];

/// What one row shows of the model built from the list.
enum RowShape {
    /// It outputs this.
    Fits(crate::nn::Shape),
    /// It cannot take its input: why, in the UI's language.
    Breaks(String),
    /// A row above breaks: nothing to say.
    Unknown,
}

/// Each listed layer's row (the output layer last), and the footprints of the layers that fit.
fn rows(lang: Lang, spec: &ModelSpec) -> (Vec<RowShape>, Vec<Footprint>) {
    let Some(list) = &spec.list else {
        return (Vec::new(), Vec::new());
    };
    let (layers, input) = (&list.layers, list.input);
    match LayerSpec::shapes(layers, input) {
        Ok(shapes) => (
            shapes.into_iter().map(RowShape::Fits).collect(),
            footprints(layers, input).unwrap_or_default(),
        ),
        Err(e) => {
            let fitting = LayerSpec::shapes(&layers[..e.layer], input).unwrap_or_default();
            let why = lang.fmt(
                LayerKey::LayerBreaks,
                &[
                    ("layer", &(e.layer + 1)),
                    ("shape", &e.input),
                    ("needs", &e.needs.text(lang)),
                ],
            );
            let rows = fitting
                .into_iter()
                .map(RowShape::Fits)
                .chain(std::iter::once(RowShape::Breaks(why)))
                .chain(std::iter::repeat_with(|| RowShape::Unknown))
                .take(layers.len())
                .collect();
            (
                rows,
                footprints(&layers[..e.layer], input).unwrap_or_default(),
            )
        }
    }
}

/// What a row's buttons asked for.
enum Edit {
    Up(usize),
    Down(usize),
    Remove(usize),
}

/// Draws the list `layers` (the model before its output layer) into `ui` and applies the
/// edits; `spec` is the model it builds on the data set, when the data set is known.
pub fn layer_list_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    layers: &mut Vec<LayerSpec>,
    spec: Option<&ModelSpec>,
) {
    ui.label(RichText::new(lang.tr(LayerKey::Layers)).strong())
        .on_hover_text(lang.tr(LayerKey::LayersTip));
    let (shapes, prints) = spec.map(|s| rows(lang, s)).unwrap_or_default();
    let params = |index: usize| -> usize {
        prints
            .iter()
            .filter(|f| f.index == index)
            .map(|f| f.params)
            .sum()
    };
    let mut edit = None;
    let count = layers.len();
    egui::Grid::new("layer list")
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            ui.label(RichText::new(lang.tr(LayerKey::ColumnLayer)).weak());
            ui.label("");
            ui.label(RichText::new(lang.tr(LayerKey::ColumnOutput)).weak());
            ui.label(RichText::new(lang.tr(LayerKey::ColumnParams)).weak());
            ui.end_row();
            ui.label(lang.tr(LayerKey::InputRow));
            ui.label("");
            ui.label(spec.map_or(String::new(), |s| s.input_shape().to_string()));
            ui.label("");
            ui.end_row();
            for (i, layer) in layers.iter_mut().enumerate() {
                let shape = shapes.get(i);
                let breaks = matches!(shape, Some(RowShape::Breaks(_)));
                let number = format!("{}{}", if breaks { "⚠ " } else { "" }, i + 1);
                let label = ui.label(if breaks {
                    RichText::new(number).color(BROKEN)
                } else {
                    RichText::new(number)
                });
                ui.horizontal(|ui| layer_settings(ui, lang, (i, label.id), layer));
                match shape {
                    Some(RowShape::Fits(s)) => {
                        ui.label(s.to_string());
                    }
                    Some(RowShape::Breaks(_)) => {
                        ui.label(RichText::new("⚠").color(BROKEN));
                    }
                    Some(RowShape::Unknown) | None => {
                        ui.label("—");
                    }
                }
                ui.label(if matches!(shape, Some(RowShape::Fits(_))) {
                    grouped(params(i) as u64)
                } else {
                    "—".to_owned()
                });
                ui.horizontal(|ui| {
                    let up = ui.add_enabled(i > 0, egui::Button::new("↑").small());
                    if up.on_hover_text(lang.tr(LayerKey::MoveUp)).clicked() {
                        edit = Some(Edit::Up(i));
                    }
                    let down = ui.add_enabled(i + 1 < count, egui::Button::new("↓").small());
                    if down.on_hover_text(lang.tr(LayerKey::MoveDown)).clicked() {
                        edit = Some(Edit::Down(i));
                    }
                    let remove = ui.add(egui::Button::new("🗙").small());
                    if remove.on_hover_text(lang.tr(LayerKey::Remove)).clicked() {
                        edit = Some(Edit::Remove(i));
                    }
                });
                ui.end_row();
            }
            if let Some(spec) = spec {
                output_row(ui, lang, spec, shapes.get(count), params(count));
            }
        });
    // Why the marked row breaks, under the list where it may wrap.
    if let Some(RowShape::Breaks(why)) = shapes.iter().find(|s| matches!(s, RowShape::Breaks(_))) {
        ui.add(egui::Label::new(RichText::new(why).color(BROKEN)).wrap());
    }
    match edit {
        Some(Edit::Up(i)) => layers.swap(i - 1, i),
        Some(Edit::Down(i)) => layers.swap(i, i + 1),
        Some(Edit::Remove(i)) => {
            layers.remove(i);
        }
        None => {}
    }
    ui.horizontal_wrapped(|ui| {
        ui.label(lang.tr(LayerKey::AddLayer));
        let full = layers.len() >= MAX_MODEL_LAYERS;
        for (new, key) in kinds() {
            let add = ui
                .add_enabled(!full, egui::Button::new(format!("+ {}", lang.tr(key))))
                .on_hover_text(lang.tr(LayerKey::AddLayerTip))
                .on_disabled_hover_text(
                    lang.fmt(LayerKey::ListFull, &[("max", &MAX_MODEL_LAYERS)]),
                );
            if add.clicked() {
                layers.push(new);
            }
        }
    });
    ui.horizontal(|ui| {
        ui.label(lang.tr(LayerKey::Preset))
            .on_hover_text(lang.tr(LayerKey::PresetTip));
        for preset in MODEL_PRESETS {
            if ui
                .button(preset.name)
                .on_hover_text(lang.tr(LayerKey::PresetTip))
                .clicked()
            {
                *layers = (preset.layers)();
            }
        }
    });
}

/// The dense output layer the data set adds: its shape and parameters where the list fits.
fn output_row(
    ui: &mut egui::Ui,
    lang: Lang,
    spec: &ModelSpec,
    shape: Option<&RowShape>,
    params: usize,
) {
    ui.label(lang.tr(LayerKey::OutputRow));
    ui.label(lang.tr(LayerKey::OutputKind))
        .on_hover_text(lang.tr(LayerKey::OutputKindTip));
    if let Some(RowShape::Fits(s)) = shape {
        ui.label(s.to_string());
        ui.label(grouped(params as u64));
    } else {
        ui.label(spec.outputs().to_string());
        ui.label("—");
    }
    ui.end_row();
}

/// Row `i`'s kind and settings (read out with the row's number, `label`): choosing another kind
/// puts a new layer of it in the row.
fn layer_settings(
    ui: &mut egui::Ui,
    lang: Lang,
    (i, label): (usize, egui::Id),
    layer: &mut LayerSpec,
) {
    egui::ComboBox::from_id_salt(("layer kind", i))
        .selected_text(lang.tr(kind_key(*layer)))
        .show_ui(ui, |ui| {
            for (new, key) in kinds() {
                let same = kind_key(*layer) == key;
                if ui.selectable_label(same, lang.tr(key)).clicked() && !same {
                    *layer = new;
                }
            }
        })
        .response
        .labelled_by(label);
    match layer {
        LayerSpec::Dense { units } => {
            let value = ui.add(DragValue::new(units).range(1..=MAX_UNITS));
            value.labelled_by(ui.label(lang.tr(LayerKey::Units)).id);
        }
        LayerSpec::Conv2d { filters, kernel } => {
            let value = ui.add(DragValue::new(filters).range(1..=MAX_CONV_CHANNELS));
            value.labelled_by(ui.label(lang.tr(LayerKey::Filters)).id);
            for k in [3, 5] {
                ui.selectable_value(kernel, k, format!("{k}×{k}"));
            }
        }
        LayerSpec::Activation { function } => {
            egui::ComboBox::from_id_salt(("layer function", i))
                .selected_text(function.as_str())
                .show_ui(ui, |ui| {
                    for f in FUNCTIONS {
                        ui.selectable_value(function, f, f.as_str());
                    }
                })
                .response
                .labelled_by(label);
        }
        LayerSpec::Embedding { width, .. } => {
            // Its vocabulary is the data set's, as the output layer's width is.
            ui.label(lang.tr(LayerKey::Vocabulary))
                .on_hover_text(lang.tr(LayerKey::VocabularyTip));
            let value = ui.add(DragValue::new(width).range(1..=MAX_UNITS));
            value.labelled_by(ui.label(lang.tr(LayerKey::Width)).id);
        }
        LayerSpec::Attention { heads } => {
            let value = ui.add(DragValue::new(heads).range(1..=MAX_HEADS));
            value.labelled_by(ui.label(lang.tr(LayerKey::Heads)).id);
        }
        LayerSpec::Residual { from } => {
            // Shown counted from 1, as the rows are.
            let mut shown = *from + 1;
            let value = ui.add(DragValue::new(&mut shown).range(1..=i.max(1)));
            value.labelled_by(ui.label(lang.tr(LayerKey::AddsLayer)).id);
            *from = shown.saturating_sub(1);
        }
        LayerSpec::MaxPool2d | LayerSpec::Flatten | LayerSpec::LayerNorm => {}
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::data::shipped::shipped;
    use crate::train::TrainConfig;
    use crate::ui::model_setup::{DataShape, model_ui, spec_for};
    use crate::ui::testing::harness;

    fn shape_of(name: &str) -> Option<DataShape> {
        shipped(name).map(|s| DataShape {
            features: s.features,
            outputs: s.outputs(),
            task: s.task,
            image: s.image,
        })
    }

    fn panel(lang: Lang, data: &str) -> egui_kittest::Harness<'static, TrainConfig> {
        let shape = shape_of(data);
        harness(
            move |ui, config: &mut TrainConfig| model_ui(ui, lang, config, shape),
            TrainConfig::default(),
        )
    }

    fn list(h: &egui_kittest::Harness<'static, TrainConfig>) -> Vec<LayerSpec> {
        h.state().model.clone().unwrap_or_default()
    }

    /// The layer list starts from the model set up, and each edit (adding, moving, removing,
    /// a preset) changes the model, its rows and the live counts.
    #[test]
    fn the_layer_list_edits_the_model_and_counts_it_live() {
        let mut h = panel(Lang::En, "iris");
        h.run();
        h.get_by_label("Layer list").click();
        h.run();
        let relu = LayerSpec::Activation {
            function: Activation::Relu,
        };
        let dense = LayerSpec::Dense { units: 16 };
        assert_eq!(list(&h), [dense, relu, dense, relu]);
        // The default MLP on iris: 4·16+16 + 16·16+16 + 16·3+3 parameters, as before.
        assert!(h.query_by_label("Parameters: 403").is_some());
        assert!(h.query_by_label("Dense (added)").is_some());
        h.get_by_label("+ LayerNorm").click();
        h.run();
        assert_eq!(list(&h).last(), Some(&LayerSpec::LayerNorm));
        // LayerNorm's scale and shift: 32 more.
        assert!(h.query_by_label("Parameters: 435").is_some());
        // Moved up past the activation, then removed.
        let ups: Vec<_> = h.get_all_by_label("↑").collect();
        ups[4].click();
        h.run();
        assert_eq!(list(&h)[3], LayerSpec::LayerNorm);
        h.get_all_by_label("🗙").nth(3).expect("a row").click();
        h.run();
        assert_eq!(list(&h), [dense, relu, dense, relu]);
        // The Transformer-like preset, counted live: 4·64+64 + 128 + 64·64+64 + 128 + 64·3+3.
        h.get_by_label("mlp-layernorm").click();
        h.run();
        assert_eq!(list(&h).len(), 6);
        assert!(h.query_by_label("Parameters: 4,931").is_some());
        // Back to the shorthand: the list is dropped, the MLP is as it was.
        h.get_by_label("MLP").click();
        h.run();
        assert_eq!(h.state().model, None);
        assert!(h.query_by_label("Parameters: 403").is_some());
    }

    /// A convolution on rows of numbers cannot run: its row says why, in each language, the
    /// rows below say nothing, and the settings check refuses the model.
    #[test]
    fn the_row_that_breaks_the_model_is_marked_in_both_languages() {
        for (lang, why) in [
            (
                Lang::En,
                "Layer 2 gets 4 but needs an image (height × width × channels)",
            ),
            (
                Lang::Zh,
                "第 2 层得到 4，但它需要一张图像（高 × 宽 × 通道）",
            ),
        ] {
            let mut h = panel(lang, "iris");
            h.state_mut().model = Some(vec![LayerSpec::LayerNorm]);
            h.run();
            h.get_by_label(&format!("+ {}", lang.tr(LayerKey::KindConv2d)))
                .click();
            h.run();
            assert!(h.query_by_label(why).is_some(), "{lang:?}");
            assert!(h.query_by_label("⚠ 2").is_some(), "{lang:?}");
            // No count of a model that cannot be built.
            let counts = lang.tr(LayerKey::CountsUnknown);
            assert!(h.query_by_label(counts).is_some(), "{lang:?}");
            let config = TrainConfig {
                source: crate::data::source::DataSource::Shipped("iris".into()),
                ..h.state().clone()
            };
            let refused = crate::train::Session::new(config).map(drop);
            assert!(
                matches!(
                    refused,
                    Err(crate::train::SessionError::Setting(
                        crate::setting::SettingError::ModelShape { .. }
                    ))
                ),
                "{refused:?}"
            );
            // A row's kind changed in place mends it.
            h.state_mut().model = Some(vec![LayerSpec::LayerNorm, LayerSpec::Flatten]);
            h.run();
            assert!(h.query_by_label(why).is_none(), "{lang:?}");
            let spec = spec_for(h.state(), shape_of("iris").expect("shipped"));
            assert_eq!(spec.parameter_count(), 8 + 4 * 3 + 3);
        }
    }
}
