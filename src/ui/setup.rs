//! The setup panel: data set, model, optimizer and devices. Edits take effect on Reset, so a
//! run in progress is never changed under the user's feet.

use egui::{RichText, Slider};

use super::UiCommand;
use crate::backend::{Activation, Device};
use crate::data::file::{SHIPPED, shipped};
use crate::data::{MAX_CLASSES, Synthetic};
use crate::i18n::{Key, Lang};
use crate::nn::{ModelSpec, OptimizerKind};
use crate::train::TrainConfig;

/// The settings being edited, and the ones the current run uses.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupPanel {
    /// What the widgets show.
    pub config: TrainConfig,
    /// Which devices train, CPU then GPU.
    pub enabled: [bool; 2],
    /// The settings of the run in progress.
    pub applied: TrainConfig,
    /// The devices of the run in progress.
    pub applied_enabled: [bool; 2],
    /// Why the last Reset was refused, if it was.
    pub error: Option<String>,
}

impl Default for SetupPanel {
    fn default() -> Self {
        let config = TrainConfig::default();
        Self {
            applied: config.clone(),
            config,
            enabled: [true, true],
            applied_enabled: [true, true],
            error: None,
        }
    }
}

fn dataset_key(kind: Synthetic) -> Key {
    match kind {
        Synthetic::Spiral => Key::Spiral,
        Synthetic::Moons => Key::Moons,
        Synthetic::Circles => Key::Circles,
        Synthetic::Xor => Key::Xor,
        Synthetic::Blobs => Key::Blobs,
    }
}

fn shipped_key(name: &str) -> Key {
    match name {
        "iris" => Key::Iris,
        "wine" => Key::Wine,
        "breast_cancer" => Key::BreastCancer,
        "digits" => Key::Digits,
        "penguins" => Key::Penguins,
        "mnist" => Key::Mnist,
        _ => Key::FashionMnist,
    }
}

fn optimizer_key(kind: OptimizerKind) -> Key {
    match kind {
        OptimizerKind::Sgd => Key::Sgd,
        OptimizerKind::Momentum => Key::Momentum,
        OptimizerKind::Adam => Key::Adam,
    }
}

impl SetupPanel {
    /// Whether the widgets differ from the run in progress.
    pub fn is_changed(&self) -> bool {
        self.config != self.applied || self.enabled != self.applied_enabled
    }

    /// Whether `device` is enabled in the run in progress.
    pub fn applied_enabled(&self, device: Device) -> bool {
        self.applied_enabled[device as usize]
    }

    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, lang: Lang, commands: &mut Vec<UiCommand>) {
        let Self {
            config,
            enabled,
            error,
            ..
        } = self;
        ui.heading(lang.tr(Key::Setup));

        ui.separator();
        ui.label(RichText::new(lang.tr(Key::Data)).strong());
        let selected = match config.shipped.as_deref().and_then(shipped) {
            Some(s) => lang.tr(shipped_key(s.name)),
            None => lang.tr(dataset_key(config.data.kind)),
        };
        egui::ComboBox::from_label(lang.tr(Key::Source))
            .selected_text(selected)
            .show_ui(ui, |ui| {
                ui.label(RichText::new(lang.tr(Key::Generators)).weak());
                for kind in Synthetic::ALL {
                    let on = config.shipped.is_none() && config.data.kind == kind;
                    if ui
                        .selectable_label(on, lang.tr(dataset_key(kind)))
                        .clicked()
                    {
                        config.shipped = None;
                        config.data.kind = kind;
                    }
                }
                ui.separator();
                ui.label(RichText::new(lang.tr(Key::RealData)).weak());
                for s in &SHIPPED {
                    let on = config.shipped.as_deref() == Some(s.name);
                    if ui
                        .selectable_label(on, lang.tr(shipped_key(s.name)))
                        .on_hover_text(s.about)
                        .clicked()
                    {
                        config.shipped = Some(s.name.to_owned());
                    }
                }
            });
        if let Some(s) = config.shipped.as_deref().and_then(shipped) {
            ui.label(RichText::new(s.about).small().weak());
        } else {
            ui.add(
                Slider::new(&mut config.data.samples, 100..=20_000)
                    .logarithmic(true)
                    .text(lang.tr(Key::Samples)),
            );
            if config.data.kind.has_class_choice() {
                ui.add(
                    Slider::new(&mut config.data.classes, 2..=MAX_CLASSES)
                        .text(lang.tr(Key::Classes)),
                );
            }
            ui.add(Slider::new(&mut config.data.noise, 0.0..=1.0).text(lang.tr(Key::Noise)));
        }
        ui.add(
            Slider::new(&mut config.data.test_fraction, 0.05..=0.5).text(lang.tr(Key::TestShare)),
        );

        ui.separator();
        ui.label(RichText::new(lang.tr(Key::Model)).strong());
        ui.label(lang.tr(Key::HiddenLayers));
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
        egui::ComboBox::from_label(lang.tr(Key::Activation))
            .selected_text(config.activation.as_str())
            .show_ui(ui, |ui| {
                for act in Activation::CHOICES {
                    ui.selectable_value(&mut config.activation, act, act.as_str());
                }
            });
        let (features, classes) = match config.shipped.as_deref().and_then(shipped) {
            Some(s) => (s.features, s.classes),
            None if config.data.kind.has_class_choice() => (2, config.data.classes),
            None => (2, 2),
        };
        let mut layers = vec![features];
        layers.extend(&config.hidden);
        layers.push(classes);
        let params = ModelSpec {
            layers,
            activation: config.activation,
        }
        .parameter_count();
        ui.label(lang.fmt(Key::Parameters, &[("n", &params)]))
            .on_hover_text(lang.tr(Key::ParametersTip));

        ui.separator();
        ui.label(RichText::new(lang.tr(Key::Training)).strong());
        egui::ComboBox::from_label(lang.tr(Key::Optimizer))
            .selected_text(lang.tr(optimizer_key(config.optimizer)))
            .show_ui(ui, |ui| {
                for kind in OptimizerKind::ALL {
                    ui.selectable_value(&mut config.optimizer, kind, lang.tr(optimizer_key(kind)));
                }
            });
        ui.add(
            Slider::new(&mut config.lr, 1e-4..=1.0)
                .logarithmic(true)
                .text(lang.tr(Key::LearningRate)),
        );
        ui.add(
            Slider::new(&mut config.batch, 1..=4096)
                .logarithmic(true)
                .text(lang.tr(Key::BatchSize)),
        )
        .on_hover_text(lang.tr(Key::BatchSizeTip));
        ui.horizontal(|ui| {
            let label = ui.label(lang.tr(Key::Seed));
            ui.add(egui::DragValue::new(&mut config.seed))
                .labelled_by(label.id)
                .on_hover_text(lang.tr(Key::SeedTip));
            let label = ui.label(lang.tr(Key::DataSeed));
            ui.add(egui::DragValue::new(&mut config.data.seed))
                .labelled_by(label.id)
                .on_hover_text(lang.tr(Key::SeedTip));
        });

        ui.separator();
        ui.label(RichText::new(lang.tr(Key::DevicesHeading)).strong());
        ui.checkbox(&mut enabled[0], lang.tr(Key::TrainOnCpu));
        ui.checkbox(&mut enabled[1], lang.tr(Key::TrainOnGpu));

        if let Some(error) = error {
            ui.separator();
            ui.label(
                RichText::new(lang.tr(Key::Settings))
                    .strong()
                    .color(ui.visuals().error_fg_color),
            );
            ui.label(RichText::new(error.as_str()).color(ui.visuals().error_fg_color));
        }
        if self.config != self.applied || self.enabled != self.applied_enabled {
            ui.separator();
            ui.label(
                RichText::new(lang.tr(Key::SettingsChanged)).color(ui.visuals().warn_fg_color),
            );
            if ui
                .button(lang.tr(Key::Reset))
                .on_hover_text(lang.tr(Key::ResetTip))
                .clicked()
            {
                commands.push(UiCommand::Reset);
            }
        }
    }
}
