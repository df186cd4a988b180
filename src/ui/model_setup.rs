//! The model part of the setup panel: an MLP or a CNN, a CNN's convolution blocks and kernel,
//! the dense layers, the activation, two presets shaped like the classic small CNNs, and the
//! parameter count and FLOPs per sample as the settings change.

use egui::{RichText, Slider};

use crate::backend::Activation;
use crate::data::{ImageShape, Task};
use crate::i18n::{Key, Lang, LayerKey};
use crate::nn::{LayerSpec, ModelSpec};
use crate::train::TrainConfig;
use crate::train::config::{MAX_CONV_BLOCKS, MAX_CONV_CHANNELS};

/// What the model's ends are fixed to by the data: inputs, outputs, task, and the image shape
/// of image data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataShape {
    /// Features per sample.
    pub features: usize,
    /// Outputs of the model.
    pub outputs: usize,
    /// Classification or regression.
    pub task: Task,
    /// Each sample's image, for pixel data.
    pub image: Option<ImageShape>,
}

/// A CNN preset: its blocks, kernel and hidden dense layers.
struct Preset {
    name: Key,
    tip: Key,
    conv: &'static [usize],
    kernel: usize,
    hidden: &'static [usize],
}

/// Shaped like the classic small networks, at the sizes this app trains quickly.
const PRESETS: [Preset; 2] = [
    Preset {
        name: Key::PresetLenet,
        tip: Key::PresetLenetTip,
        conv: &[6, 16],
        kernel: 5,
        hidden: &[120, 84],
    },
    Preset {
        name: Key::PresetTinyVgg,
        tip: Key::PresetTinyVggTip,
        conv: &[10, 10],
        kernel: 3,
        hidden: &[],
    },
];

/// The model these settings build on data of `shape` (an MLP when the blocks cannot apply).
pub fn spec_for(config: &TrainConfig, shape: DataShape) -> ModelSpec {
    config.model_spec_for((shape.features, shape.outputs), shape.task, shape.image)
}

/// Draws the model settings into `ui`; `shape` is `None` until the data set is known.
pub fn model_ui(ui: &mut egui::Ui, lang: Lang, config: &mut TrainConfig, shape: Option<DataShape>) {
    ui.label(RichText::new(lang.tr(Key::Model)).strong());
    let images = shape.is_some_and(|s| s.image.is_some());
    let listed = config.model.is_some();
    ui.horizontal(|ui| {
        if ui
            .selectable_label(!listed && config.conv.is_empty(), lang.tr(Key::ModelMlp))
            .on_hover_text(lang.tr(Key::ModelMlpTip))
            .clicked()
        {
            config.model = None;
            config.conv.clear();
        }
        let cnn = ui
            .add_enabled(
                images,
                egui::Button::selectable(
                    !listed && !config.conv.is_empty(),
                    lang.tr(Key::ModelCnn),
                ),
            )
            .on_hover_text(lang.tr(Key::ModelCnnTip))
            .on_disabled_hover_text(lang.tr(Key::ModelCnnNeedsImages));
        if cnn.clicked() && (listed || config.conv.is_empty()) {
            config.model = None;
            if config.conv.is_empty() {
                config.conv = vec![8, 16];
                config.hidden.clear();
            }
        }
        if ui
            .selectable_label(listed, lang.tr(LayerKey::ModelList))
            .on_hover_text(lang.tr(LayerKey::ModelListTip))
            .clicked()
            && !listed
        {
            config.model = Some(shorthand_list(config, shape));
        }
    });
    if let Some(mut layers) = config.model.take() {
        let spec = shape.map(|shape| {
            let mut listed = config.clone();
            listed.model = Some(layers.clone());
            spec_for(&listed, shape)
        });
        super::layer_list::layer_list_ui(ui, lang, &mut layers, spec.as_ref());
        config.model = Some(layers);
    } else {
        if !config.conv.is_empty() {
            if !images && shape.is_some() {
                ui.label(RichText::new(lang.tr(Key::ModelCnnNeedsImages)).weak());
            }
            conv_ui(ui, lang, config);
        }
        super::lesson::framed(ui, crate::lesson::Widget::HiddenSetting, |ui| {
            hidden_ui(ui, lang, config);
        });
        egui::ComboBox::from_label(lang.tr(Key::Activation))
            .selected_text(config.activation.as_str())
            .show_ui(ui, |ui| {
                for act in Activation::CHOICES {
                    ui.selectable_value(&mut config.activation, act, act.as_str());
                }
            });
    }
    match shape {
        Some(shape) if !fits(&spec_for(config, shape)) => {
            ui.label(RichText::new(lang.tr(LayerKey::CountsUnknown)).weak());
        }
        Some(shape) => {
            let spec = spec_for(config, shape);
            let params = spec.parameter_count();
            ui.label(lang.fmt(
                Key::Parameters,
                &[("n", &crate::units::grouped(params as u64))],
            ))
            .on_hover_text(lang.tr(Key::ParametersTip));
            let flops = 2 * spec.forward_macs_per_sample() as u64;
            ui.label(lang.fmt(Key::FlopsPerSample, &[("n", &crate::units::grouped(flops))]))
                .on_hover_text(lang.tr(Key::FlopsPerSampleTip));
        }
        None => {
            ui.label(RichText::new(lang.tr(Key::ParametersUnknown)).weak());
        }
    }
}

/// Whether every layer of `spec` takes what the one before gives (a shorthand always does).
fn fits(spec: &ModelSpec) -> bool {
    spec.list
        .as_ref()
        .is_none_or(|l| LayerSpec::shapes(&l.layers, l.input).is_ok())
}

/// The model set up now (its shorthand: convolution blocks, hidden widths, activation) as a
/// list of layers before the output layer, for the layer list to start from.
fn shorthand_list(config: &TrainConfig, shape: Option<DataShape>) -> Vec<LayerSpec> {
    let (features, outputs, task, image) = shape.map_or((1, 1, Task::Classification, None), |s| {
        (s.features, s.outputs, s.task, s.image)
    });
    let mut layers = config
        .model_spec_for((features, outputs), task, image)
        .layer_specs();
    // The data set's output layer is added again to whatever the list becomes.
    layers.pop();
    layers
}

/// The hidden (or, after convolution blocks, dense) layers' widths, with buttons to add and
/// remove one.
fn hidden_ui(ui: &mut egui::Ui, lang: Lang, config: &mut TrainConfig) {
    ui.label(lang.tr(if config.conv.is_empty() {
        Key::HiddenLayers
    } else {
        Key::DenseLayers
    }));
    for (i, width) in config.hidden.iter_mut().enumerate() {
        ui.add(
            Slider::new(width, 1..=1024)
                .logarithmic(true)
                .text(lang.fmt(Key::Layer, &[("n", &(i + 1))])),
        );
    }
    ui.horizontal(|ui| {
        if ui.button(lang.tr(Key::AddLayer)).clicked() && config.hidden.len() < 8 {
            let width = config.hidden.last().copied().unwrap_or(16);
            config.hidden.push(width);
        }
        if ui.button(lang.tr(Key::RemoveLayer)).clicked() {
            config.hidden.pop();
        }
    });
}

/// The convolution blocks (filters each), the kernel size and the presets.
fn conv_ui(ui: &mut egui::Ui, lang: Lang, config: &mut TrainConfig) {
    ui.label(lang.tr(Key::ConvBlocks))
        .on_hover_text(lang.tr(Key::ConvBlocksTip));
    for (i, filters) in config.conv.iter_mut().enumerate() {
        ui.add(
            Slider::new(filters, 1..=MAX_CONV_CHANNELS.min(64))
                .text(lang.fmt(Key::ConvBlock, &[("n", &(i + 1))])),
        );
    }
    ui.horizontal(|ui| {
        if ui.button(lang.tr(Key::AddConvBlock)).clicked() && config.conv.len() < MAX_CONV_BLOCKS {
            let filters = config.conv.last().map_or(8, |&c| (2 * c).min(64));
            config.conv.push(filters);
        }
        if ui.button(lang.tr(Key::RemoveConvBlock)).clicked() && config.conv.len() > 1 {
            config.conv.pop();
        }
    });
    ui.horizontal(|ui| {
        ui.label(lang.tr(Key::ConvKernel));
        for k in [3, 5] {
            ui.selectable_value(&mut config.conv_kernel, k, format!("{k}×{k}"));
        }
    });
    ui.horizontal(|ui| {
        ui.label(lang.tr(Key::Presets));
        for p in &PRESETS {
            if ui
                .button(lang.tr(p.name))
                .on_hover_text(lang.tr(p.tip))
                .clicked()
            {
                config.conv = p.conv.to_vec();
                config.conv_kernel = p.kernel;
                config.hidden = p.hidden.to_vec();
                config.activation = Activation::Relu;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::data::shipped::shipped;
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

    #[test]
    fn a_cnn_is_chosen_shaped_by_a_preset_and_counted_live() {
        let mut h = panel(Lang::En, "mnist");
        h.run();
        h.get_by_label("CNN").click();
        h.run();
        assert_eq!(h.state().conv, [8, 16]);
        assert!(h.state().hidden.is_empty(), "the classes follow the blocks");
        // conv 8, 16 then 10 classes: 80 + 1,168 + 7,850 parameters.
        assert!(h.query_by_label("Parameters: 9,098").is_some());
        // 2 × (784·9·8 + 196·72·16 + 784·10) multiply-adds.
        assert!(
            h.query_by_label("FLOPs per sample (forward): 580,160")
                .is_some()
        );
        h.get_by_label("LeNet-like").click();
        h.run();
        let c = h.state();
        assert_eq!((c.conv.as_slice(), c.conv_kernel), (&[6, 16][..], 5));
        assert_eq!(c.hidden, [120, 84]);
        h.get_by_label("MLP").click();
        h.run();
        assert!(h.state().conv.is_empty());
    }

    #[test]
    fn rows_of_numbers_offer_no_cnn_and_say_why_in_both_languages() {
        for (lang, needs) in [(Lang::En, "A CNN needs images"), (Lang::Zh, "CNN 需要图像")] {
            let mut h = panel(lang, "iris");
            h.run();
            h.get_by_label_contains("CNN").click();
            h.run();
            assert!(h.state().conv.is_empty(), "{lang:?}: a disabled choice");
            // A CNN restored onto data without images: the reason shows, the model is an MLP.
            h.state_mut().conv = vec![8];
            h.run();
            assert!(h.query_by_label_contains(needs).is_some(), "{lang:?}");
            let spec = spec_for(h.state(), shape_of("iris").expect("shipped"));
            assert!(spec.conv.is_none());
        }
    }
}
