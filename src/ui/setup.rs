//! The setup panel: data set, model, optimizer and devices. Edits take effect on Reset, so a
//! run in progress is never changed under the user's feet.

use egui::{RichText, Slider};

use super::command::{Tab, UiCommand};
use super::labels::{dataset_key, optimizer_key, precision_label, shipped_keys, weight_text};
use super::model_setup::{DataShape, model_ui};
use super::open::OpenKind;
use crate::backend::UploadMode;
use crate::data::Task;
use crate::data::dataloader::{Augment, MAX_PREFETCH, MAX_SHIFT_PX, MAX_WORKERS};
use crate::data::formats::display_name;
use crate::data::shipped::{SHIPPED, shipped};
use crate::data::source::{DataSource, Loaded};
use crate::data::{MAX_CLASSES, Synthetic};
use crate::i18n::{Key, Lang};
use crate::nn::OptimizerKind;
use crate::precision::Precision;
use crate::train::config::MAX_STOP_EPOCHS;
use crate::train::{Pipeline, StopAt, SyncPolicy, TrainConfig};

/// The loss weights the setup offers.
const LOSS_WEIGHTS: [f32; 4] = [1.0, 1e-3, 1e-6, 1e-8];

/// The setup panel (it keeps no state of its own: the settings being edited are the app's).
#[derive(Default)]
pub struct SetupPanel;

/// The settings the panel edits: what the next Reset applies.
pub struct SetupView<'a> {
    /// The settings being edited.
    pub config: &'a mut TrainConfig,
    /// Which devices train, CPU then GPU.
    pub enabled: &'a mut [bool; 2],
}

/// What the panel shows of the data layer: the loaded set, a load in progress, the last error.
#[derive(Clone, Copy, Default)]
pub struct DataView<'a> {
    /// The last data set loaded (and previewed).
    pub loaded: Option<&'a Loaded>,
    /// What is loading now, and the share done.
    pub loading: Option<(&'a str, f32)>,
    /// Why the last load failed.
    pub error: Option<&'a str>,
}

/// The name a source goes by in the panel.
fn source_name(lang: Lang, config: &TrainConfig) -> String {
    match &config.source {
        DataSource::Generated => lang.tr(dataset_key(config.data.kind)).to_owned(),
        DataSource::Shipped(name) => lang.tr(shipped_keys(name).0).to_owned(),
        DataSource::File { path, .. } => display_name(path),
    }
}

impl SetupPanel {
    /// Draws the panel: edits go into `view` and apply on Reset; what applies at once (the
    /// pipeline) and what must happen elsewhere (loading, opening) comes back as commands.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        view: SetupView<'_>,
        data: DataView,
        commands: &mut Vec<UiCommand>,
    ) {
        let SetupView { config, enabled } = view;
        ui.heading(lang.tr(Key::Setup));

        ui.separator();
        ui.label(RichText::new(lang.tr(Key::Data)).strong());
        data_source_ui(ui, lang, config, data, commands);
        match &config.source {
            DataSource::Generated => {
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
            DataSource::Shipped(name) => {
                ui.label(RichText::new(lang.tr(shipped_keys(name).1)).small().weak());
            }
            DataSource::File { .. } => {}
        }
        split_ui(ui, lang, config);

        ui.separator();
        model_ui(ui, lang, config, widths(config, data.loaded));
        ui.horizontal(|ui| {
            use crate::i18n::LayerKey;
            if ui
                .button(lang.tr(LayerKey::SaveModel))
                .on_hover_text(lang.tr(LayerKey::SaveModelTip))
                .clicked()
            {
                commands.push(UiCommand::Open(OpenKind::SaveModel));
            }
            if ui
                .button(lang.tr(LayerKey::LoadModel))
                .on_hover_text(lang.tr(LayerKey::LoadModelTip))
                .clicked()
            {
                commands.push(UiCommand::Open(OpenKind::LoadModel));
            }
        });

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
        let batch = ui
            .add(
                Slider::new(&mut config.batch, 1..=4096)
                    .logarithmic(true)
                    .text(lang.tr(Key::BatchSize)),
            )
            .on_hover_text(lang.tr(Key::BatchSizeTip));
        super::lesson::highlight(ui, crate::lesson::Widget::BatchSetting, batch.rect);
        super::levers::settings(ui, lang, config);
        let precision = egui::ComboBox::from_label(lang.tr(Key::PrecisionSetting))
            .selected_text(precision_label(lang, config.precision))
            .show_ui(ui, |ui| {
                for p in Precision::ALL {
                    ui.selectable_value(&mut config.precision, p, precision_label(lang, p));
                }
            })
            .response
            .on_hover_text(lang.tr(Key::PrecisionTip));
        super::lesson::highlight(ui, crate::lesson::Widget::PrecisionSetting, precision.rect);
        // A few decades rather than a free number: 1, and weights that make gradients small
        // enough for FP16 to lose (1e-6 is the designed case).
        egui::ComboBox::from_label(lang.tr(Key::LossWeight))
            .selected_text(weight_text(config.loss_weight))
            .show_ui(ui, |ui| {
                for w in LOSS_WEIGHTS {
                    ui.selectable_value(&mut config.loss_weight, w, weight_text(w));
                }
            })
            .response
            .on_hover_text(lang.tr(Key::LossWeightTip));
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

        loader_ui(ui, lang, config, commands);

        ui.separator();
        ui.label(RichText::new(lang.tr(Key::DevicesHeading)).strong());
        ui.checkbox(&mut enabled[0], lang.tr(Key::TrainOnCpu));
        ui.checkbox(&mut enabled[1], lang.tr(Key::TrainOnGpu));
    }
}

/// When training stops by itself: never, after N epochs, or at a test accuracy (or R²).
fn stop_ui(ui: &mut egui::Ui, lang: Lang, stop: &mut StopAt) {
    ui.horizontal(|ui| {
        ui.label(RichText::new(lang.tr(Key::StopAtLabel)).strong())
            .on_hover_text(lang.tr(Key::StopAtTip));
        let name = |s: StopAt| {
            lang.tr(match s {
                StopAt::Never => Key::StopNever,
                StopAt::Epochs(_) => Key::StopEpochs,
                StopAt::TestMetric(_) => Key::StopMetric,
            })
        };
        egui::ComboBox::from_id_salt("stop")
            .selected_text(name(*stop))
            .show_ui(ui, |ui| {
                for choice in [StopAt::Never, StopAt::Epochs(10), StopAt::TestMetric(0.9)] {
                    let same = std::mem::discriminant(&choice) == std::mem::discriminant(stop);
                    if ui.selectable_label(same, name(choice)).clicked() && !same {
                        *stop = choice;
                    }
                }
            })
            .response
            .on_hover_text(lang.tr(Key::StopAtTip));
        match stop {
            StopAt::Never => {}
            StopAt::Epochs(n) => {
                ui.add(egui::DragValue::new(n).range(1..=MAX_STOP_EPOCHS));
            }
            StopAt::TestMetric(x) => {
                ui.add(egui::DragValue::new(x).range(0.01..=1.0).speed(0.005));
            }
        }
    });
}

/// The data loader, the sync and upload settings (applied while training goes on) and the
/// augmentation (applied on Reset, as it changes what the model learns from).
fn loader_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    config: &mut TrainConfig,
    commands: &mut Vec<UiCommand>,
) {
    let before = config.pipeline;
    let pipeline = &mut config.pipeline;
    ui.separator();
    stop_ui(ui, lang, &mut pipeline.stop);
    input_ui(ui, lang, pipeline);
    sync_ui(ui, lang, pipeline);
    recording_ui(ui, lang, pipeline);
    memory_settings_ui(ui, lang, pipeline);
    if config.pipeline != before {
        commands.push(UiCommand::SetPipeline(config.pipeline));
    }
    augment_ui(ui, lang, &mut config.augment);
}

/// The input pipeline: loader workers, prefetch depth, the simulated storage, compression.
fn input_ui(ui: &mut egui::Ui, lang: Lang, pipeline: &mut Pipeline) {
    ui.label(RichText::new(lang.tr(Key::Loader)).strong());
    let workers = ui
        .add(Slider::new(&mut pipeline.loader.workers, 0..=MAX_WORKERS).text(lang.tr(Key::Workers)))
        .on_hover_text(lang.tr(Key::WorkersTip));
    super::lesson::highlight(ui, crate::lesson::Widget::WorkersSetting, workers.rect);
    ui.add(
        Slider::new(&mut pipeline.loader.prefetch, 1..=MAX_PREFETCH).text(lang.tr(Key::Prefetch)),
    )
    .on_hover_text(lang.tr(Key::PrefetchTip));
    let storage = ui
        .add(
            Slider::new(&mut pipeline.loader.storage_latency_ms, 0.0..=200.0)
                .suffix(format!(" ms ({})", lang.tr(Key::Simulated)))
                .text(lang.tr(Key::StorageLatency)),
        )
        .on_hover_text(lang.tr(Key::StorageLatencyTip));
    super::lesson::highlight(ui, crate::lesson::Widget::StorageSetting, storage.rect);
    ui.checkbox(&mut pipeline.loader.compressed, lang.tr(Key::Compressed))
        .on_hover_text(lang.tr(Key::CompressedTip));
}

/// When the host waits for the device, and how batches reach it.
fn sync_ui(ui: &mut egui::Ui, lang: Lang, pipeline: &mut Pipeline) {
    let sync_text = |sync: SyncPolicy| match sync {
        SyncPolicy::WhenShown => lang.tr(Key::SyncWhenShown).to_owned(),
        SyncPolicy::EveryStep => lang.tr(Key::SyncEveryStep).to_owned(),
        SyncPolicy::EverySteps(n) => lang.fmt(Key::SyncEveryN, &[("n", &n)]),
    };
    let sync = egui::ComboBox::from_label(lang.tr(Key::SyncSetting))
        .selected_text(sync_text(pipeline.sync))
        .show_ui(ui, |ui| {
            for sync in [
                SyncPolicy::WhenShown,
                SyncPolicy::EveryStep,
                SyncPolicy::EverySteps(10),
                SyncPolicy::EverySteps(50),
            ] {
                ui.selectable_value(&mut pipeline.sync, sync, sync_text(sync));
            }
        })
        .response
        .on_hover_text(lang.tr(Key::SyncSettingTip));
    super::lesson::highlight(ui, crate::lesson::Widget::SyncSetting, sync.rect);
    egui::ComboBox::from_label(lang.tr(Key::Upload))
        .selected_text(lang.tr(match pipeline.upload {
            UploadMode::WriteBuffer => Key::UploadWriteBuffer,
            UploadMode::StagingRing => Key::UploadRing,
        }))
        .show_ui(ui, |ui| {
            ui.selectable_value(
                &mut pipeline.upload,
                UploadMode::WriteBuffer,
                lang.tr(Key::UploadWriteBuffer),
            );
            ui.selectable_value(
                &mut pipeline.upload,
                UploadMode::StagingRing,
                lang.tr(Key::UploadRing),
            );
        })
        .response
        .on_hover_text(lang.tr(Key::UploadTip));
}

/// Whether spans are recorded for the journey, and how often the GPU's kernels are timed.
fn recording_ui(ui: &mut egui::Ui, lang: Lang, pipeline: &mut Pipeline) {
    ui.checkbox(&mut pipeline.record, lang.tr(Key::RecordSpans))
        .on_hover_text(lang.tr(Key::RecordSpansTip));
    let sampling_text = |n: u32| match n {
        0 => lang.tr(Key::SamplingAuto).to_owned(),
        1 => lang.tr(Key::SamplingEvery).to_owned(),
        n => lang.fmt(Key::SamplingOneIn, &[("n", &n)]),
    };
    egui::ComboBox::from_label(lang.tr(Key::KernelSampling))
        .selected_text(sampling_text(pipeline.kernel_timing_every))
        .show_ui(ui, |ui| {
            for n in [0, 1, 4, 16] {
                ui.selectable_value(&mut pipeline.kernel_timing_every, n, sampling_text(n));
            }
        })
        .response
        .on_hover_text(lang.tr(Key::KernelSamplingTip));
}

/// Whether the backward pass's graphs are kept, and the memory budgets, in MiB.
fn memory_settings_ui(ui: &mut egui::Ui, lang: Lang, pipeline: &mut Pipeline) {
    ui.label(lang.tr(Key::MemorySettings));
    ui.checkbox(&mut pipeline.keep_graphs, lang.tr(Key::KeepGraphs))
        .on_hover_text(lang.tr(Key::KeepGraphsTip));
    for (budget, key) in [
        (&mut pipeline.vram_budget_bytes, Key::VramBudget),
        (&mut pipeline.host_budget_bytes, Key::HostBudget),
    ] {
        ui.horizontal(|ui| {
            let mut on = budget.is_some();
            if ui
                .checkbox(&mut on, lang.tr(key))
                .on_hover_text(lang.tr(Key::BudgetTip))
                .changed()
            {
                *budget = on.then_some(256 << 20);
            }
            if let Some(bytes) = budget.as_mut() {
                let mut mib = (*bytes >> 20).max(1);
                if ui
                    .add(
                        egui::DragValue::new(&mut mib)
                            .range(1..=1_048_576)
                            .suffix(" MiB"),
                    )
                    .changed()
                {
                    *bytes = mib << 20;
                }
            }
        });
    }
}

/// Augmentation of each batch: noise, flips and shifts.
fn augment_ui(ui: &mut egui::Ui, lang: Lang, augment: &mut Augment) {
    ui.label(lang.tr(Key::Augmentation))
        .on_hover_text(lang.tr(Key::AugmentTip));
    ui.add(Slider::new(&mut augment.noise, 0.0..=0.5).text(lang.tr(Key::AugmentNoise)))
        .on_hover_text(lang.tr(Key::AugmentTip));
    ui.horizontal(|ui| {
        ui.checkbox(&mut augment.flip, lang.tr(Key::AugmentFlip));
        ui.add(
            Slider::new(&mut augment.shift_px, 0..=MAX_SHIFT_PX)
                .suffix(" px")
                .text(lang.tr(Key::AugmentShift)),
        );
    })
    .response
    .on_hover_text(lang.tr(Key::AugmentTip));
}

/// The data's side of the model the settings describe, where it is known: from the
/// generator, the loaded table, or a shipped set's description.
fn widths(config: &TrainConfig, loaded: Option<&Loaded>) -> Option<DataShape> {
    let outputs = |task: Task, classes: usize| match task {
        Task::Classification => classes,
        Task::Regression => 1,
    };
    match &config.source {
        DataSource::Generated => {
            let classes = if config.data.kind.has_class_choice() {
                config.data.classes
            } else {
                2
            };
            Some(DataShape {
                features: 2,
                outputs: classes,
                task: Task::Classification,
                image: None,
            })
        }
        source => match loaded.filter(|l| l.source == *source) {
            Some(l) => Some(DataShape {
                // A text is read in windows of the context length.
                features: if l.table.format == crate::data::text_data::FORMAT {
                    config.data.context
                } else {
                    l.table.features()
                },
                outputs: outputs(l.table.task, l.table.class_names.len()),
                task: l.table.task,
                image: l.table.image,
            }),
            None => match source {
                DataSource::Shipped(name) => shipped(name).map(|s| DataShape {
                    features: s.features,
                    outputs: s.outputs(),
                    task: s.task,
                    image: s.image,
                }),
                _ => None,
            },
        },
    }
}

/// The test share, and the context length of a language model or else standardisation.
fn split_ui(ui: &mut egui::Ui, lang: Lang, config: &mut TrainConfig) {
    ui.add(Slider::new(&mut config.data.test_fraction, 0.05..=0.5).text(lang.tr(Key::TestShare)))
        .on_hover_text(lang.tr(Key::TestShareTip));
    if config.model.as_deref().is_some_and(crate::nn::reads_tokens) {
        // A language model's window: what attention's T² grows with.
        ui.add(
            Slider::new(&mut config.data.context, 8..=512)
                .logarithmic(true)
                .text(lang.tr(Key::ContextLength)),
        )
        .on_hover_text(lang.tr(Key::ContextLengthTip));
    } else {
        ui.checkbox(&mut config.data.standardise, lang.tr(Key::StandardiseBox))
            .on_hover_text(lang.tr(Key::StandardiseTip));
    }
}

/// A heading and the shipped sets `names` under it in the source chooser, each loaded (and
/// previewed) when chosen, and chosen once it is in memory.
fn shipped_choices(
    ui: &mut egui::Ui,
    lang: Lang,
    (heading, names): (Key, impl Iterator<Item = &'static str>),
    current: &DataSource,
    commands: &mut Vec<UiCommand>,
) {
    ui.separator();
    ui.label(RichText::new(lang.tr(heading)).weak());
    for name in names {
        let source = DataSource::Shipped(name.to_owned());
        let (title, about) = shipped_keys(name);
        if ui
            .selectable_label(*current == source, lang.tr(title))
            .on_hover_text(lang.tr(about))
            .clicked()
        {
            commands.push(UiCommand::Load(source));
        }
    }
}

/// The source chooser, Open…, the load in progress and the last error.
fn data_source_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    config: &mut TrainConfig,
    data: DataView,
    commands: &mut Vec<UiCommand>,
) {
    // Room for the label beside it, however long a file name is.
    egui::ComboBox::from_label(lang.tr(Key::Source))
        .width((ui.available_width() - 70.0).max(80.0))
        .truncate()
        .selected_text(source_name(lang, config))
        .show_ui(ui, |ui| {
            ui.label(RichText::new(lang.tr(Key::Generators)).weak());
            for kind in Synthetic::ALL {
                let on = config.source == DataSource::Generated && config.data.kind == kind;
                if ui
                    .selectable_label(on, lang.tr(dataset_key(kind)))
                    .clicked()
                {
                    config.source = DataSource::Generated;
                    config.data.kind = kind;
                    config.suit_data(false);
                }
            }
            for (task, heading) in [
                (Task::Classification, Key::RealData),
                (Task::Regression, Key::RealRegression),
            ] {
                let names = SHIPPED.iter().filter(|s| s.task == task).map(|s| s.name);
                shipped_choices(ui, lang, (heading, names), &config.source, commands);
            }
            let texts = crate::data::text_data::SHIPPED_TEXTS.iter().map(|t| t.name);
            shipped_choices(ui, lang, (Key::Texts, texts), &config.source, commands);
            if let Some(loaded) = data
                .loaded
                .filter(|l| matches!(l.source, DataSource::File { .. }))
            {
                ui.separator();
                ui.label(RichText::new(lang.tr(Key::YourData)).weak());
                if ui
                    .selectable_label(config.source == loaded.source, &loaded.table.name)
                    .clicked()
                {
                    config.source = loaded.source.clone();
                }
            }
        });
    ui.horizontal(|ui| {
        if ui
            .button(lang.tr(Key::OpenFile))
            .on_hover_text(lang.tr(Key::OpenFileTip))
            .clicked()
        {
            commands.push(UiCommand::Open(OpenKind::File));
        }
        if ui
            .button(lang.tr(Key::OpenFolder))
            .on_hover_text(lang.tr(Key::OpenFolderTip))
            .clicked()
        {
            commands.push(UiCommand::Open(OpenKind::Folder));
        }
        if data.loaded.is_some()
            && ui
                .button(lang.tr(Key::Preview))
                .on_hover_text(lang.tr(Key::PreviewTip))
                .clicked()
        {
            commands.push(UiCommand::ShowTab(Tab::Data));
        }
    });
    if let Some((what, share)) = data.loading {
        ui.horizontal(|ui| {
            ui.add(
                egui::ProgressBar::new(share)
                    .desired_width(150.0)
                    .text(lang.fmt(Key::Loading, &[("name", &what)])),
            );
            if ui.button(lang.tr(Key::Cancel)).clicked() {
                commands.push(UiCommand::CancelLoad);
            }
        });
    }
    if let Some(error) = data.error {
        egui::Frame::new()
            .fill(ui.visuals().error_fg_color.gamma_multiply(0.12))
            .inner_margin(6.0)
            .corner_radius(4.0)
            .show(ui, |ui| {
                ui.label(
                    RichText::new(lang.tr(Key::DataErrorTitle))
                        .strong()
                        .color(ui.visuals().error_fg_color),
                );
                ui.label(RichText::new(error).color(ui.visuals().error_fg_color));
                ui.label(RichText::new(lang.tr(Key::DataErrorKept)).small());
                if ui.small_button(lang.tr(Key::Dismiss)).clicked() {
                    commands.push(UiCommand::DismissDataError);
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::ui::testing::harness;

    /// What the panel edits and what it asks for.
    #[derive(Default)]
    struct Edited {
        config: TrainConfig,
        enabled: [bool; 2],
        commands: Vec<UiCommand>,
    }

    fn setup(data: DataView<'static>) -> egui_kittest::Harness<'static, Edited> {
        setup_in(Lang::En, data)
    }

    fn setup_in(lang: Lang, data: DataView<'static>) -> egui_kittest::Harness<'static, Edited> {
        let mut panel = SetupPanel;
        harness(
            move |ui, e: &mut Edited| {
                let view = SetupView {
                    config: &mut e.config,
                    enabled: &mut e.enabled,
                };
                panel.ui(ui, lang, view, data, &mut e.commands);
            },
            Edited {
                enabled: [true, true],
                ..Edited::default()
            },
        )
    }

    #[test]
    fn the_setup_shows_the_model_and_asks_for_files_and_shipped_sets() {
        let mut h = setup(DataView::default());
        // 2 inputs, 16, 16, 3 classes: 2·16+16 + 16·16+16 + 16·3+3.
        assert!(h.query_by_label("Parameters: 371").is_some());
        h.get_by_label("Open file…").click();
        h.run();
        h.get_by_label("Open folder…").click();
        h.run();
        assert_eq!(
            h.state().commands,
            [
                UiCommand::Open(OpenKind::File),
                UiCommand::Open(OpenKind::Folder)
            ]
        );
        h.state_mut().commands.clear();
        h.get_by_label("Source").click();
        h.run();
        h.get_by_label("Iris flowers").click();
        h.run();
        assert_eq!(
            h.state().commands,
            [UiCommand::Load(DataSource::Shipped("iris".into()))]
        );
        // Editing a setting changes the draft only; a pipeline setting applies at once.
        h.state_mut().commands.clear();
        h.get_by_label("Record spans").click();
        h.run();
        assert!(!h.state().config.pipeline.record);
        assert!(matches!(
            h.state().commands.as_slice(),
            [UiCommand::SetPipeline(p)] if !p.record
        ));
    }

    #[test]
    fn a_load_in_progress_can_be_cancelled_and_a_failed_one_dismissed() {
        let mut h = setup(DataView {
            loaded: None,
            loading: Some(("big.csv", 0.4)),
            error: Some("big.csv, line 7: 3 fields, expected 4"),
        });
        assert!(h.query_by_label_contains("Loading big.csv…").is_some());
        assert!(h.query_by_label("Could not load the data set").is_some());
        assert!(
            h.query_by_label("big.csv, line 7: 3 fields, expected 4")
                .is_some()
        );
        h.get_by_label("Cancel").click();
        h.run();
        h.get_by_label("Dismiss").click();
        h.run();
        assert_eq!(
            h.state().commands,
            [UiCommand::CancelLoad, UiCommand::DismissDataError]
        );
    }
}
