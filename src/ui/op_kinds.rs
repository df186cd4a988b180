//! The journey tab's grouping of a step by kind of op (the article's first section): per
//! device, each kind's share of the step's FLOPs beside its share of the measured kernel time,
//! so that matrix products are seen to be most of the arithmetic and the rest a larger share of
//! the time than of the work.

use egui::RichText;

use super::labels::device_title;
use crate::i18n::{Key, Lang};
use crate::sim::cost::Op;
use crate::sim::groups::{OpGroup, shares};
use crate::train::DeviceRun;
use crate::units::format_ns;

fn group_key(group: OpGroup) -> Key {
    match group {
        OpGroup::MatrixProducts => Key::GroupProducts,
        OpGroup::Convolutions => Key::GroupConvolutions,
        OpGroup::Attention => Key::GroupAttention,
        OpGroup::Elementwise => Key::GroupElementwise,
        OpGroup::Loss => Key::GroupLoss,
        OpGroup::Optimizer => Key::GroupOptimizer,
        OpGroup::Other => Key::GroupOther,
    }
}

/// A share as a bar `width` wide with its percentage.
fn share_bar(ui: &mut egui::Ui, share: f64, width: f32) {
    ui.add(
        egui::ProgressBar::new(share as f32)
            .desired_width(width)
            .text(format!("{:.1}%", share * 100.0)),
    );
}

/// Draws the grouping for each device of the run, given each device's step's ops in the order
/// of [`Device::ALL`] (`None` before the settings are applied).
///
/// [`Device::ALL`]: crate::device::Device::ALL
pub fn op_kinds_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    runs: &[DeviceRun; 2],
    ops: Option<&[Vec<Op>; 2]>,
) {
    ui.label(RichText::new(lang.tr(Key::KindsTitle)).strong().size(18.0));
    ui.label(RichText::new(lang.tr(Key::KindsCaption)).weak());
    let Some(ops) = ops else {
        ui.label(lang.tr(Key::KindsNoModel));
        return;
    };
    for run in runs.iter().filter(|r| r.enabled) {
        ui.add_space(4.0);
        ui.label(RichText::new(device_title(lang, run.device)).strong());
        let device = crate::device::Device::ALL
            .iter()
            .position(|&d| d == run.device);
        let ops = &ops[device.unwrap_or(0)];
        let rows = shares(ops, run.kernels.as_ref());
        // Two bars, the kind's name and the time share the width: a narrow panel (presenter
        // mode beside a lesson) gets narrower bars, not a table cut at its edge.
        let bar = ((ui.available_width() - 240.0) / 2.0).clamp(60.0, 140.0);
        egui::Grid::new(("op_kinds", run.device))
            .striped(true)
            .num_columns(4)
            .show(ui, |ui| {
                ui.label(lang.tr(Key::KindsGroup));
                ui.label(lang.tr(Key::KindsFlops));
                ui.label(lang.tr(Key::KindsTime));
                ui.label("");
                ui.end_row();
                for row in &rows {
                    ui.label(lang.tr(group_key(row.group)));
                    share_bar(ui, row.flops_share, bar);
                    if let (Some(share), Some(ns)) = (row.time_share, row.time_ns) {
                        share_bar(ui, share, bar);
                        ui.label(format_ns(ns as f64));
                    } else {
                        ui.label("");
                        ui.label("");
                    }
                    ui.end_row();
                }
            });
        if run.kernels.is_none() {
            ui.label(RichText::new(lang.tr(Key::KindsNotYet)).weak());
        }
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable;

    use super::*;
    use crate::backend::{Activation, KernelTimes};
    use crate::device::Device;
    use crate::nn::{Loss, ModelSpec, OptimizerKind};
    use crate::sim::cost::{Recipe, step_ops};

    fn ops() -> Vec<Op> {
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: vec![2, 16, 16, 3],
            activation: Activation::Relu,
            loss: Loss::SoftmaxCrossEntropy,
        };
        step_ops(&spec, 32, Recipe::fp32(OptimizerKind::Adam), Device::Gpu)
    }

    fn runs() -> [DeviceRun; 2] {
        let mut cpu = DeviceRun::new(Device::Cpu);
        cpu.kernels = Some(KernelTimes {
            kernels: vec![
                ("linear_forward".into(), 600),
                ("softmax_cross_entropy".into(), 300),
                ("adam_step".into(), 900),
                ("bias_grad".into(), 200),
            ],
            total_ns: 2000,
        });
        [cpu, DeviceRun::new(Device::Gpu)]
    }

    #[test]
    fn each_kind_shows_its_share_of_flops_and_of_measured_time_in_both_languages() {
        for lang in Lang::ALL {
            let (runs, ops) = (runs(), [ops(), ops()]);
            let h = crate::ui::testing::harness(
                move |ui, (): &mut ()| op_kinds_ui(ui, lang, &runs, Some(&ops)),
                (),
            );
            for key in [Key::GroupProducts, Key::GroupLoss, Key::GroupOptimizer] {
                // One row per device.
                assert_eq!(h.query_all_by_label(lang.tr(key)).count(), 2, "{lang:?}");
            }
            // The CPU's measured shares: Adam 900 of 2000 ns, the loss 300.
            h.get_by_label("45.0%");
            h.get_by_label("15.0%");
            // The GPU has not timed a step yet.
            h.get_by_label(lang.tr(Key::KindsNotYet));
        }
    }

    #[test]
    fn before_a_model_is_applied_it_says_so() {
        let runs = runs();
        let h = crate::ui::testing::harness(
            move |ui, (): &mut ()| op_kinds_ui(ui, Lang::Zh, &runs, None),
            (),
        );
        h.get_by_label(Lang::Zh.tr(Key::KindsNoModel));
    }
}
