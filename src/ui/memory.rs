//! Where the memory goes: per device a bar stacked by role, allocated against reserved over time
//! with the peak and the budget, "release cached"; the estimator's figures and formulas for the
//! model being set up, a batch-size sweep, and a few large models (all labelled estimated).

use egui::{Pos2, Rect, RichText, Sense, Vec2};
use egui_plot::{HLine, Legend, Line, Plot, PlotPoints};

use super::command::UiCommand;
use super::labels::{device_title, role_color, role_key};
use crate::data::Dataset;
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::memory::{MemorySnapshot, Role};
use crate::sim::estimate::{self, PRESETS, Scheme};
use crate::train::{DeviceRun, TrainConfig};
use crate::units::{format_bytes, grouped};

/// Batch sizes of the estimated sweep.
const SWEEP: [usize; 6] = [1, 8, 32, 128, 512, 2048];

/// The memory view (it keeps no state of its own: the columns hold the reports).
#[derive(Default)]
pub struct MemoryPanel;

impl MemoryPanel {
    /// Draws both devices' memory and the estimator for `config` on `data`.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        runs: &[DeviceRun; 2],
        config: &TrainConfig,
        data: Option<&Dataset>,
        commands: &mut Vec<UiCommand>,
    ) {
        ui.heading(lang.tr(Key::MemoryTab));
        ui.label(RichText::new(lang.tr(Key::MemoryIntro)).weak());
        if config.precision != crate::precision::Precision::Fp32 {
            ui.label(
                RichText::new(lang.tr(Key::PrecisionStorage)).color(ui.visuals().warn_fg_color),
            );
        }
        for run in runs.iter().filter(|r| r.enabled) {
            let Some(m) = run.memory else {
                continue;
            };
            ui.separator();
            super::lesson::framed(ui, crate::lesson::Widget::MemoryChart, |ui| {
                device_ui(ui, lang, run, &m, commands);
            });
        }
        if let Some(data) = data {
            ui.separator();
            estimator_ui(ui, lang, config, data);
            large_models_ui(ui, lang);
        }
    }
}

fn device_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    run: &DeviceRun,
    m: &MemorySnapshot,
    commands: &mut Vec<UiCommand>,
) {
    let title = device_title(lang, run.device);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(title).strong().size(18.0));
        ui.label(lang.fmt(
            Key::Allocated,
            &[("bytes", &format_bytes(m.allocated_bytes))],
        ))
        .on_hover_text(lang.tr(Key::AllocatedTip));
        ui.label(lang.fmt(Key::Reserved, &[("bytes", &format_bytes(m.reserved_bytes))]))
            .on_hover_text(lang.tr(Key::ReservedTip));
        ui.label(lang.fmt(
            Key::PeakMemory,
            &[("bytes", &format_bytes(m.peak_allocated_bytes))],
        ));
        ui.label(match m.budget_bytes {
            Some(b) => lang.fmt(Key::BudgetIs, &[("bytes", &format_bytes(b))]),
            None => lang.tr(Key::NoBudget).to_owned(),
        });
        if let crate::train::DeviceStatus::Ready {
            adapter: Some(adapter),
            ..
        } = &run.status
            && adapter.shares_host_memory()
        {
            ui.label(RichText::new(lang.tr(Key::UnifiedMemory)).color(ui.visuals().warn_fg_color));
        }
        if run.device == Device::Gpu
            && ui
                .button(lang.tr(Key::ReleaseCached))
                .on_hover_text(lang.tr(Key::ReleaseCachedTip))
                .clicked()
        {
            commands.push(UiCommand::ReleaseCached);
        }
    });
    if run.memory_stale {
        ui.label(
            RichText::new(lang.tr(Key::MemoryPreviousModel)).color(ui.visuals().warn_fg_color),
        );
    }
    // One bar, stacked by role, against the reserved total (and the budget where set).
    let full = m
        .budget_bytes
        .unwrap_or(m.reserved_bytes)
        .max(m.reserved_bytes)
        .max(1) as f32;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), 26.0), Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, ui.visuals().extreme_bg_color);
    let mut x = rect.left();
    for role in Role::ALL {
        let w = m.role(role) as f32 / full * rect.width();
        if w > 0.0 {
            painter.rect_filled(
                Rect::from_min_size(Pos2::new(x, rect.top()), Vec2::new(w, rect.height())),
                0.0,
                role_color(role),
            );
            x += w;
        }
    }
    let reserved_x = rect.left() + m.reserved_bytes as f32 / full * rect.width();
    painter.vline(
        reserved_x,
        rect.y_range(),
        egui::Stroke::new(2.0, ui.visuals().text_color()),
    );
    ui.horizontal_wrapped(|ui| {
        for role in Role::ALL {
            let text = format!("{} {}", lang.tr(role_key(role)), format_bytes(m.role(role)));
            super::labels::swatch(ui, role_color(role), text);
        }
    });
    if run.memory_history.len() >= 2 {
        let mib = |v: f64| v / f64::from(1u32 << 20);
        let allocated: PlotPoints = run
            .memory_history
            .iter()
            .map(|p| [p[0], mib(p[1])])
            .collect();
        let reserved: PlotPoints = run
            .memory_history
            .iter()
            .map(|p| [p[0], mib(p[2])])
            .collect();
        let width = crate::ui::plots::line_width(ui);
        let shown = crate::ui::plots::readable(Plot::new(("memory", run.device)), ui)
            .height(130.0)
            .legend(Legend::default())
            .include_x(0.0)
            .y_axis_label("MiB")
            // From zero, so a flat line reads as flat, not as noise around a value.
            .include_y(0.0)
            .include_y(mib(m.peak_reserved_bytes.max(m.budget_bytes.unwrap_or(0)) as f64) * 1.1)
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.line(Line::new(lang.tr(Key::AllocatedShort), allocated).width(width));
                plot.line(Line::new(lang.tr(Key::ReservedShort), reserved).width(width));
                if let Some(b) = m.budget_bytes {
                    plot.hline(HLine::new(lang.tr(Key::BudgetShort), mib(b as f64)).width(width));
                }
            });
        crate::ui::plots::offer_png(ui, &shown.response, lang);
    }
}

/// Width of the estimate's role and bytes columns with the grid's spacing, in points.
const ESTIMATE_FIGURE_COLUMNS: f32 = 200.0;

fn estimator_ui(ui: &mut egui::Ui, lang: Lang, config: &TrainConfig, data: &Dataset) {
    let e = config.estimate(data);
    ui.label(RichText::new(lang.tr(Key::Estimator)).strong())
        .on_hover_text(lang.tr(Key::EstimatorTip));
    // The formulas wrap within the panel: a CNN's run past 1,280 pixels, and a grid wider than
    // the panel widened everything below it (the bars by batch size ran off the edge).
    let formula_width = (ui.available_width() - ESTIMATE_FIGURE_COLUMNS).max(200.0);
    egui::Grid::new("estimate")
        .striped(true)
        .max_col_width(formula_width)
        .show(ui, |ui| {
            for line in &e.lines {
                ui.label(RichText::new(lang.tr(role_key(line.role))).color(role_color(line.role)));
                ui.label(format_bytes(line.bytes));
                ui.add(egui::Label::new(RichText::new(line.formula.text(lang)).weak()).wrap());
                ui.end_row();
            }
        });
    ui.label(RichText::new(lang.tr(Key::SweepTitle)).strong());
    // Stacked bars of the estimate at each batch size: activations grow, parameters do not.
    let sweeps: Vec<_> = SWEEP
        .iter()
        .map(|&b| (b, config.estimate_at(data, b)))
        .collect();
    let tallest = sweeps
        .iter()
        .map(|(_, e)| e.total())
        .max()
        .unwrap_or(1)
        .max(1) as f32;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), 110.0), Sense::hover());
    let painter = ui.painter_at(rect);
    let w = rect.width() / SWEEP.len() as f32;
    for (i, (batch, e)) in sweeps.iter().enumerate() {
        let x = rect.left() + i as f32 * w + 6.0;
        let mut y = rect.bottom() - 16.0;
        for line in &e.lines {
            let h = line.bytes as f32 / tallest * (rect.height() - 32.0);
            painter.rect_filled(
                Rect::from_min_max(Pos2::new(x, y - h), Pos2::new(x + w - 12.0, y)),
                0.0,
                role_color(line.role),
            );
            y -= h;
        }
        painter.text(
            Pos2::new(x + (w - 12.0) / 2.0, rect.bottom() - 8.0),
            egui::Align2::CENTER_CENTER,
            format!("{batch}"),
            egui::FontId::proportional(12.0),
            ui.visuals().text_color(),
        );
        painter.text(
            Pos2::new(x + (w - 12.0) / 2.0, y - 8.0),
            egui::Align2::CENTER_CENTER,
            format_bytes(e.total()),
            egui::FontId::proportional(12.0),
            ui.visuals().text_color(),
        );
    }
}

/// What the largest well-known models need before any activation, estimated.
fn large_models_ui(ui: &mut egui::Ui, lang: Lang) {
    ui.label(RichText::new(lang.tr(Key::LargeModels)).strong())
        .on_hover_text(lang.tr(Key::LargeModelsTip));
    let mut equal = false;
    egui::Grid::new("presets").striped(true).show(ui, |ui| {
        for p in PRESETS {
            let fp32 = estimate::preset(p, Scheme::Fp32Adam).total();
            let mixed = estimate::preset(p, Scheme::MixedAdam).total();
            equal |= fp32 == mixed;
            ui.label(p.name);
            ui.label(lang.fmt(
                Key::PresetLine,
                &[
                    ("params", &grouped(p.parameters)),
                    ("fp32", &format_bytes(fp32)),
                    ("mixed", &format_bytes(mixed)),
                ],
            ));
            ui.end_row();
        }
    });
    if equal {
        // Equal totals read like a mistake: they are the bytes per parameter, counted.
        ui.label(RichText::new(lang.tr(Key::LargeModelsEqual)).weak());
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::data::DatasetSpec;
    use crate::ui::testing::harness;

    #[test]
    fn each_device_shows_its_roles_allocated_and_reserved_and_the_gpu_can_release_its_cache() {
        let mut gpu = DeviceRun::new(Device::Gpu);
        let mut m = MemorySnapshot::default();
        m.bytes_by_role[Role::Parameters.index()] = 371 * 4;
        m.bytes_by_role[Role::Activations.index()] = 32 * 35 * 4;
        m.allocated_bytes = 6 << 10;
        m.reserved_bytes = 3 << 20;
        m.peak_allocated_bytes = 7 << 10;
        gpu.memory = Some(m);
        gpu.memory_history = vec![[1.0, 6144.0, 3_145_728.0], [2.0, 6144.0, 3_145_728.0]];
        let runs = [DeviceRun::new(Device::Cpu), gpu];
        let data = crate::data::Dataset::generate(&DatasetSpec::default()).expect("spiral");
        let config = TrainConfig::default();
        let mut h = harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                MemoryPanel.ui(ui, Lang::En, &runs, &config, Some(&data), commands);
            },
            Vec::new(),
        );
        for label in ["allocated 6.0 KiB", "reserved 3.0 MiB", "peak 7.0 KiB"] {
            assert!(h.query_by_label(label).is_some(), "{label}");
        }
        assert!(h.query_all_by_label_contains("Parameters").next().is_some());
        assert!(
            h.query_by_label("Estimated for these settings (the same on the CPU and the GPU)")
                .is_some()
        );
        h.get_by_label("Release cached").click();
        h.run();
        assert_eq!(h.state(), &[UiCommand::ReleaseCached]);
    }
}

#[cfg(test)]
mod cnn_tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::data::source::DataSource;
    use crate::train::Session;
    use crate::ui::testing::harness;

    /// A CNN's memory is estimated once for both devices, in both languages: neither makes
    /// patch matrices, and the workspace line says so.
    #[test]
    fn a_cnns_estimate_is_shown_once_and_says_it_makes_no_patches() {
        let config = TrainConfig {
            source: DataSource::Shipped("digits".into()),
            conv: vec![4],
            hidden: Vec::new(),
            ..TrainConfig::default()
        };
        let session = Session::new(config).expect("digits");
        for lang in Lang::ALL {
            let (config, data) = (session.config.clone(), session.data.clone());
            let runs = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
            let h = harness(
                move |ui, commands: &mut Vec<UiCommand>| {
                    MemoryPanel.ui(ui, lang, &runs, &config, Some(&data), commands);
                },
                Vec::new(),
            );
            let title = lang.tr(Key::Estimator);
            assert_eq!(h.query_all_by_label(title).count(), 1, "{title}");
            let no_patches = match lang {
                Lang::En => "no patches",
                Lang::Zh => "不展开图块",
            };
            let direct = h.query_all_by_label_contains(no_patches);
            assert_eq!(direct.count(), 1, "the workspace line");
            // A CNN's workspace formula is wider than the panel: it wraps instead of widening
            // the panel (and the bars by batch size below it) past the window's edge.
            let panel = h.ctx.content_rect();
            for line in h.query_all_by_label_contains("backward temporaries") {
                let right = line.rect().right();
                assert!(
                    right <= panel.right(),
                    "{lang:?}: a formula ends at x = {right}"
                );
            }
        }
    }
}

#[cfg(test)]
mod device_tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::backend::AdapterSummary;
    use crate::train::DeviceStatus;
    use crate::ui::testing::harness;

    fn gpu_of_type(device_type: &str) -> DeviceRun {
        let mut run = DeviceRun::new(Device::Gpu);
        run.status = DeviceStatus::Ready {
            name: "test adapter".into(),
            adapter: Some(AdapterSummary {
                name: "test adapter".into(),
                device_type: device_type.into(),
                ..AdapterSummary::default()
            }),
            cpu_threads: None,
        };
        run.memory = Some(MemorySnapshot::default());
        run
    }

    /// An integrated GPU (or a software adapter) says that its memory is the host's; a discrete
    /// one does not, in both languages.
    #[test]
    fn a_gpu_sharing_the_hosts_memory_says_unified_memory() {
        for lang in Lang::ALL {
            for (device_type, shown) in [
                ("IntegratedGpu", true),
                ("Cpu", true),
                ("DiscreteGpu", false),
            ] {
                let runs = [DeviceRun::new(Device::Cpu), gpu_of_type(device_type)];
                let config = TrainConfig::default();
                let h = harness(
                    move |ui, commands: &mut Vec<UiCommand>| {
                        MemoryPanel.ui(ui, lang, &runs, &config, None, commands);
                    },
                    Vec::new(),
                );
                let found = h.query_by_label(lang.tr(Key::UnifiedMemory)).is_some();
                assert_eq!(found, shown, "{device_type} {lang:?}");
            }
        }
    }

    /// After a Reset the device still holds the old model until the new one is built: its
    /// memory is labelled as the previous model's until this run's first report, in both
    /// languages.
    #[test]
    fn the_previous_models_memory_is_labelled_until_the_new_one_reports() {
        use crate::precision::Precision;
        use crate::train::worker::{Event, EventKind};
        let label_shown = |gpu: &DeviceRun, lang: Lang| {
            let runs = [DeviceRun::new(Device::Cpu), gpu.clone()];
            let config = TrainConfig::default();
            let h = harness(
                move |ui, commands: &mut Vec<UiCommand>| {
                    MemoryPanel.ui(ui, lang, &runs, &config, None, commands);
                },
                Vec::new(),
            );
            h.query_by_label(lang.tr(Key::MemoryPreviousModel))
                .is_some()
        };
        // The memory report of run `generation`'s model, built.
        let built = |generation: u64| Event {
            device: Device::Gpu,
            generation,
            kind: EventKind::Memory {
                step: 0,
                snapshot: MemorySnapshot::default(),
            },
        };
        let mut gpu = gpu_of_type("DiscreteGpu");
        gpu.start_run(1, Precision::Fp32, true);
        gpu.apply(built(1));
        for lang in Lang::ALL {
            assert!(!label_shown(&gpu, lang), "{lang:?}: the run's own memory");
        }
        gpu.start_run(2, Precision::Fp32, true);
        for lang in Lang::ALL {
            assert!(
                label_shown(&gpu, lang),
                "{lang:?}: before the new model reports"
            );
        }
        gpu.apply(built(2));
        for lang in Lang::ALL {
            assert!(!label_shown(&gpu, lang), "{lang:?}: after it reports");
        }
    }
}
