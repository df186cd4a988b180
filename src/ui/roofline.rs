//! The Simulator tab: what the applied training step would cost on a hardware profile, drawn
//! on the profile's roofline. The roof is the device's peak and its memory bandwidth (the
//! slanted part, up to the ridge point); each op of the step is a point at its arithmetic
//! intensity and the FLOP/s it would attain, coloured by what bounds it; the table below lists
//! the same ops with their predicted times. Every figure here is simulated, and says so; the
//! measured columns are shown beside the prediction for comparison.

use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points, VLine};

use super::command::UiCommand;
use super::labels::{op_name, profile_name};
use crate::backend::{AdapterSummary, KernelTimes};
use crate::bench::calibrate::Probing;
use crate::bench::calibrate_each::CalibrationStatus;
use crate::i18n::{Key, Lang};
use crate::nn::ModelSpec;
use crate::sim::cost::{Bound, Prediction, predict, step_ops_with};
use crate::sim::ecosystem::Stack;
use crate::sim::estimate::PRESETS;
use crate::sim::groups::measured_ops;
use crate::sim::memory_fit::{MemoryFit, Model, Stage, model_states_per_gpu};
use crate::sim::profile::{Kind, Profile};
use crate::train::TrainConfig;
use crate::units::{format_bytes, format_ms, format_rate, grouped};

/// The tab's own state: the profile chosen, and the one the GPU column's what-if line
/// predicts on.
#[derive(Clone, Debug)]
pub struct RooflinePanel {
    /// The id of the profile chosen (the first shipped one until the user picks).
    pub profile: Option<String>,
    /// The id of the profile of the GPU column's what-if line (none: no line).
    pub what_if: Option<String>,
    /// GPUs the large model's memory is spread over.
    pub gpus: u32,
}

impl Default for RooflinePanel {
    fn default() -> Self {
        Self {
            profile: None,
            what_if: None,
            gpus: 8,
        }
    }
}

/// The prediction for the applied settings on `profile`.
fn predict_step(profile: &Profile, config: &TrainConfig, spec: &ModelSpec) -> Prediction {
    let rule = config.recipe();
    let ops = step_ops_with(spec, config.batch, rule, profile.device(), config.levers());
    let loader = (
        f64::from(config.pipeline.loader.storage_latency_ms),
        config.pipeline.loader.workers > 0,
    );
    predict(
        profile,
        &ops,
        config.precision,
        config.effective_batch(),
        loader,
    )
}

/// The GPU column's what-if line: the applied step predicted on a GPU profile chosen here,
/// beside the measured columns, labelled simulated.
pub fn what_if_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    profiles: &[Profile],
    chosen: &mut Option<String>,
    config: &TrainConfig,
    spec: &ModelSpec,
) {
    let profile = chosen
        .as_ref()
        .and_then(|id| profiles.iter().find(|p| &p.id == id));
    ui.horizontal_wrapped(|ui| {
        let none = lang.tr(Key::SweepSimNone);
        egui::ComboBox::from_label(lang.tr(Key::WhatIfGpu))
            .selected_text(profile.map_or_else(|| none.to_owned(), |p| profile_name(lang, p)))
            .show_ui(ui, |ui| {
                ui.selectable_value(chosen, None, none);
                for p in profiles.iter().filter(|p| p.kind != Kind::Cpu) {
                    ui.selectable_value(chosen, Some(p.id.clone()), profile_name(lang, p));
                }
            })
            .response
            .on_hover_text(lang.tr(Key::WhatIfGpuTip));
    });
    if let Some(profile) = profile {
        let p = predict_step(profile, config, spec);
        ui.label(
            RichText::new(lang.fmt(
                Key::WhatIfLine,
                &[
                    ("name", &profile_name(lang, profile)),
                    ("rate", &format_rate(p.samples_per_s)),
                    ("step", &format_ms(p.step_time_ms)),
                    ("bound", &lang.tr(bound_key(p.bound))),
                ],
            ))
            .color(super::labels::SIMULATED_COLOR),
        );
    }
}

/// What the tab draws from: the applied settings and the model they make, and what was
/// measured here (each device's step time, for comparison).
pub struct RooflineView<'a> {
    /// The applied settings.
    pub config: &'a TrainConfig,
    /// The model the settings make on the loaded data.
    pub spec: &'a ModelSpec,
    /// The measured step time of the CPU and the GPU, ms, where they have trained.
    pub measured_ms: [Option<f64>; 2],
    /// The last calibration, running or ended.
    pub calibration: Option<&'a CalibrationStatus>,
    /// Rows an evaluation handles at once (for the memory estimate).
    pub eval_rows: usize,
    /// The software stacks of the ecosystem card.
    pub stacks: &'a [Stack],
    /// This machine's GPU adapter, if it is up.
    pub adapter: Option<&'a AdapterSummary>,
    /// The ops of the latest step each device timed one by one, CPU then GPU.
    pub kernels: [Option<&'a KernelTimes>; 2],
}

fn bound_color(bound: Bound) -> Color32 {
    match bound {
        Bound::Compute => Color32::from_rgb(230, 120, 60),
        Bound::Memory => Color32::from_rgb(90, 160, 255),
        Bound::Overhead => Color32::from_rgb(200, 200, 90),
        Bound::Link => Color32::from_rgb(180, 120, 220),
    }
}

fn bound_key(bound: Bound) -> Key {
    match bound {
        Bound::Compute => Key::BoundCompute,
        Bound::Memory => Key::BoundMemory,
        Bound::Overhead => Key::BoundOverhead,
        Bound::Link => Key::BoundLink,
    }
}

impl RooflinePanel {
    /// Draws the tab.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        profiles: &[Profile],
        view: &RooflineView<'_>,
        commands: &mut Vec<UiCommand>,
    ) {
        ui.label(lang.tr(Key::SimIntro));
        calibration_ui(ui, lang, view.calibration, commands);
        let Some(first) = profiles.first() else {
            return;
        };
        let chosen = self
            .profile
            .as_ref()
            .and_then(|id| profiles.iter().find(|p| &p.id == id))
            .unwrap_or(first);
        egui::ComboBox::from_label(lang.tr(Key::SimProfile))
            .selected_text(profile_name(lang, chosen))
            .show_ui(ui, |ui| {
                for p in profiles {
                    if ui
                        .selectable_label(p.id == chosen.id, profile_name(lang, p))
                        .clicked()
                    {
                        self.profile = Some(p.id.clone());
                    }
                }
            });
        let prediction = predict_step(chosen, view.config, view.spec);
        ui.label(
            RichText::new(lang.fmt(
                Key::SimHeadline,
                &[
                    ("name", &profile_name(lang, chosen)),
                    ("step", &format_ms(prediction.step_time_ms)),
                    ("rate", &format_rate(prediction.samples_per_s)),
                    ("bound", &lang.tr(bound_key(prediction.bound))),
                ],
            ))
            .strong(),
        );
        // A calibration taken while the machine's speed moved says so beside its predictions,
        // and its last grid check says how right it was.
        if let Some(steadiness) = chosen.steadiness.filter(|s| !s.steady()) {
            ui.colored_label(ui.visuals().warn_fg_color, steadiness.said(lang));
        }
        if let Some(grid) = &chosen.grid_check {
            ui.label(grid.said(lang));
        }
        match local_device(chosen) {
            Some(index) => check_ui(ui, lang, &prediction, index, view.measured_ms[index]),
            None => {
                for (device, measured) in ["CPU", "GPU"].into_iter().zip(view.measured_ms) {
                    if let Some(ms) = measured {
                        ui.label(lang.fmt(
                            Key::SimMeasuredHere,
                            &[("device", &device), ("step", &format_ms(ms))],
                        ));
                    }
                }
            }
        }
        let measured = local_device(chosen).and_then(|i| view.kernels[i]);
        super::lesson::framed(ui, crate::lesson::Widget::Roofline, |ui| {
            roofline_ui(ui, lang, chosen, &prediction, measured);
        });
        ops_table_ui(ui, lang, &prediction);
        ui.separator();
        self.memory_ui(ui, lang, chosen, view);
        ui.separator();
        super::lesson::framed(ui, crate::lesson::Widget::Ecosystem, |ui| {
            super::ecosystem::ecosystem_ui(ui, lang, chosen, view.stacks, view.adapter);
        });
    }

    /// Memory on the profile: whether this model and batch fit, the largest batch that does,
    /// and a large model's memory per GPU with data parallelism and `ZeRO`'s stages.
    fn memory_ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        profile: &Profile,
        view: &RooflineView<'_>,
    ) {
        let c = view.config;
        let model = Model {
            spec: view.spec,
            optimizer: c.optimizer,
            precision: c.precision,
            eval_rows: view.eval_rows,
            levers: c.levers(),
        };
        let capacity = profile.mem_gb.value * 1e9;
        let fit = MemoryFit::of(model, c.batch, capacity);
        let key = if fit.fits {
            Key::SimMemoryFits
        } else {
            Key::SimMemoryDoesNotFit
        };
        let largest = fit.largest_batch.map_or_else(
            || lang.tr(Key::SimMemoryNone).to_owned(),
            |b| grouped(b as u64),
        );
        ui.label(RichText::new(lang.tr(Key::SimMemoryTitle)).strong());
        ui.label(lang.fmt(
            key,
            &[
                ("batch", &grouped(c.batch as u64)),
                ("needs", &format_bytes(fit.needs_bytes)),
                ("capacity", &format_bytes(fit.capacity_bytes)),
                ("largest", &largest),
            ],
        ));
        let Some(large) = PRESETS.last().copied() else {
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.label(lang.fmt(
                Key::SimZeroTitle,
                &[
                    ("model", &large.name),
                    ("params", &grouped(large.parameters)),
                ],
            ));
            ui.add(
                egui::DragValue::new(&mut self.gpus)
                    .range(1..=4096)
                    .suffix(lang.tr(Key::SimZeroGpus)),
            )
            .on_hover_text(lang.tr(Key::SimZeroTip));
        });
        egui::Grid::new("zero").striped(true).show(ui, |ui| {
            for stage in Stage::ALL {
                let bytes = model_states_per_gpu(large.parameters, self.gpus, stage);
                ui.label(lang.tr(stage_key(stage)));
                ui.label(format_bytes(bytes as u64));
                let (fits, colour) = if bytes <= capacity {
                    (Key::SimZeroFits, ui.visuals().text_color())
                } else {
                    (Key::SimZeroDoesNotFit, ui.visuals().warn_fg_color)
                };
                ui.label(
                    RichText::new(lang.fmt(fits, &[("capacity", &format_bytes(capacity as u64))]))
                        .color(colour),
                );
                ui.end_row();
            }
        });
        ui.label(RichText::new(lang.tr(Key::SimZeroNote)).small());
    }
}

fn stage_key(stage: Stage) -> Key {
    match stage {
        Stage::DataParallel => Key::SimStageDp,
        Stage::Zero1 => Key::SimStageZero1,
        Stage::Zero2 => Key::SimStageZero2,
        Stage::Zero3 => Key::SimStageZero3,
    }
}

/// The column a calibrated profile describes (0: the CPU, 1: the GPU); none for a shipped one.
fn local_device(profile: &Profile) -> Option<usize> {
    match profile.id.as_str() {
        "local-cpu" => Some(0),
        "local-gpu" => Some(1),
        _ => None,
    }
}

/// The model checked where it can be: this machine's profile's prediction against the step
/// its column measured, with the error.
fn check_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    prediction: &Prediction,
    index: usize,
    measured_ms: Option<f64>,
) {
    let device = ["CPU", "GPU"][index];
    let Some(measured) = measured_ms.filter(|m| *m > 0.0) else {
        ui.label(lang.fmt(Key::SimCheckWaiting, &[("device", &device)]));
        return;
    };
    let error = prediction.step_time_ms / measured - 1.0;
    let text = lang.fmt(
        Key::SimCheck,
        &[
            ("predicted", &format_ms(prediction.step_time_ms)),
            ("measured", &format_ms(measured)),
            ("device", &device),
            ("error", &format!("{:+.0}%", error * 100.0)),
        ],
    );
    let colour = if error.abs() <= 0.25 {
        ui.visuals().text_color()
    } else {
        ui.visuals().warn_fg_color
    };
    ui.label(RichText::new(text).color(colour));
}

/// What a calibration is probing, in `lang`.
fn probing_text(lang: Lang, what: &Probing) -> String {
    match *what {
        Probing::UpdateRules { values } => {
            lang.fmt(Key::ProbingUpdates, &[("values", &grouped(values as u64))])
        }
        Probing::Products {
            fan_in,
            fan_out,
            batch,
        } => lang.fmt(
            Key::ProbingProducts,
            &[("in", &fan_in), ("out", &fan_out), ("batch", &batch)],
        ),
        Probing::TooSlow {
            fan_in,
            fan_out,
            batch,
        } => lang.fmt(
            Key::ProbingTooSlow,
            &[("in", &fan_in), ("out", &fan_out), ("batch", &batch)],
        ),
        Probing::TinySteps => lang.tr(Key::ProbingTinySteps).to_owned(),
        Probing::MidSteps => lang.tr(Key::ProbingMidSteps).to_owned(),
        Probing::RuleSteps => lang.tr(Key::ProbingRuleSteps).to_owned(),
        Probing::Grid { done, of } => lang.fmt(
            crate::i18n::CalKey::ProbingGrid,
            &[("done", &done), ("of", &of)],
        ),
    }
}

/// The Calibrate button, or the calibration's progress with Cancel, and how the last one
/// ended.
fn calibration_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    status: Option<&CalibrationStatus>,
    commands: &mut Vec<UiCommand>,
) {
    let running = status.is_some_and(|s| !s.ended);
    ui.horizontal_wrapped(|ui| {
        if running {
            // Cancel first, where it stays put: after the progress text, whose length changes
            // with every probe, it moved under the pointer (and a test's click missed it).
            if ui.button(lang.tr(Key::Cancel)).clicked() {
                commands.push(UiCommand::CancelCalibration);
            }
            ui.spinner();
            if let Some((device, what)) = status.and_then(|s| s.doing.as_ref()) {
                ui.label(lang.fmt(
                    Key::SimCalibrating,
                    &[
                        ("device", &device.as_str().to_uppercase()),
                        ("what", &probing_text(lang, what)),
                    ],
                ));
            }
        } else if ui
            .button(lang.tr(Key::SimCalibrate))
            .on_hover_text(lang.tr(Key::SimCalibrateTip))
            .clicked()
        {
            commands.push(UiCommand::Calibrate);
        }
    });
    let Some(status) = status else {
        return;
    };
    for (device, why) in &status.failures {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            lang.fmt(
                Key::SimCalibrationFailed,
                &[
                    ("device", &device.as_str().to_uppercase()),
                    ("why", &why.text(lang)),
                ],
            ),
        );
    }
    if status.ended && status.cancelled {
        ui.label(lang.tr(Key::SimCalibrationCancelled));
    } else if status.ended && !status.made.is_empty() {
        ui.label(lang.fmt(Key::SimCalibrated, &[("names", &status.made.join(", "))]));
    }
}

/// One bound's points on the roofline: its name, colour, points and each point's op.
type Series = (String, Color32, Vec<[f64; 2]>, Vec<String>);

/// The roof and the ops, on log-log axes of intensity (FLOP/byte) and TFLOP/s.
/// The roof, each op of the step where the model puts it, and, on this machine's own profile,
/// where the ops of a step timed one by one really were (`measured`).
fn roofline_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    profile: &Profile,
    prediction: &Prediction,
    measured: Option<&KernelTimes>,
) {
    let peak = prediction.peak_tflops;
    let bandwidth_tb = profile.mem_bw_gbs.value / 1e3;
    let ridge = peak / bandwidth_tb;
    let roof: Vec<[f64; 2]> = (-30..=40)
        .map(|k| {
            let intensity = 10f64.powf(f64::from(k) / 10.0);
            let attainable = (intensity * bandwidth_tb).min(peak);
            [intensity.log10(), attainable.log10()]
        })
        .collect();
    let power = crate::ui::plots::si_log10_tick;
    // One series of points per bound, and each point's op, for the hover label.
    let series: Vec<Series> = [Bound::Compute, Bound::Memory, Bound::Overhead]
        .into_iter()
        .map(|bound| {
            let ops: Vec<&crate::sim::cost::OpCost> = prediction
                .ops
                .iter()
                .filter(|c| c.bound == bound && c.op.flops > 0.0)
                .collect();
            let points: Vec<[f64; 2]> = ops
                .iter()
                .map(|c| {
                    [
                        c.op.intensity().max(1e-3).log10(),
                        c.attained_tflops.max(1e-9).log10(),
                    ]
                })
                .collect();
            let labels: Vec<String> = ops
                .iter()
                .map(|c| {
                    lang.fmt(
                        Key::SimHover,
                        &[
                            ("op", &op_name(lang, &c.op)),
                            ("intensity", &format!("{:.2}", c.op.intensity())),
                            ("tflops", &format!("{:.3}", c.attained_tflops)),
                            ("time", &format_ms(c.time_ms)),
                            ("bound", &lang.tr(bound_key(bound))),
                        ],
                    )
                })
                .collect();
            (
                lang.tr(bound_key(bound)).to_owned(),
                bound_color(bound),
                points,
                labels,
            )
        })
        .filter(|s| !s.2.is_empty())
        .chain(measured.map(|k| measured_series(lang, prediction, k)))
        .collect();
    let hover: Vec<(String, Vec<String>)> = series
        .iter()
        .map(|(name, _, _, labels)| (name.clone(), labels.clone()))
        .collect();
    ui.label(lang.tr(Key::SimAxes));
    let shown = crate::ui::plots::readable(Plot::new("roofline"), ui)
        .x_grid_spacer(egui_plot::log_grid_spacer(10))
        .y_grid_spacer(egui_plot::log_grid_spacer(10))
        .height(260.0)
        // Under the roof's flat part, bottom right, no op is drawn: the legend goes there.
        .legend(Legend::default().position(egui_plot::Corner::RightBottom))
        .x_axis_formatter(power)
        .y_axis_formatter(power)
        .allow_scroll(false)
        .label_formatter(move |position| match position {
            egui_plot::HoverPosition::NearDataPoint {
                plot_name, index, ..
            } => hover
                .iter()
                .find(|(name, _)| name == plot_name)
                .and_then(|(_, labels)| labels.get(*index).cloned()),
            egui_plot::HoverPosition::Elsewhere { .. } => None,
        })
        .show(ui, |plot| {
            plot.line(
                Line::new(lang.tr(Key::SimRoof), PlotPoints::from(roof))
                    .color(Color32::LIGHT_GRAY)
                    .width(2.0),
            );
            plot.vline(
                VLine::new(lang.tr(Key::SimRidge), ridge.log10())
                    .color(Color32::GRAY)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            let measured_name = lang.tr(Key::SimMeasuredPoints);
            for (name, colour, points, _) in series {
                let hollow = name == measured_name;
                plot.points(
                    Points::new(name, points)
                        .radius(if hollow { 6.0 } else { 4.0 })
                        .filled(!hollow)
                        .color(colour),
                );
            }
        });
    crate::ui::plots::offer_png(ui, &shown.response, lang);
    ui.label(
        RichText::new(lang.fmt(
            Key::SimRoofNote,
            &[
                ("peak", &format!("{peak:.1}")),
                ("bandwidth", &format!("{:.0}", profile.mem_bw_gbs.value)),
                ("ridge", &format!("{ridge:.1}")),
            ],
        ))
        .small(),
    );
}

/// The ops of a step timed one by one on this machine, at the FLOP/s they reached.
fn measured_series(lang: Lang, prediction: &Prediction, kernels: &KernelTimes) -> Series {
    let ops: Vec<crate::sim::cost::Op> = prediction.ops.iter().map(|c| c.op.clone()).collect();
    let (mut points, mut labels) = (Vec::new(), Vec::new());
    for (i, ns) in measured_ops(&ops, kernels) {
        let op = &ops[i];
        if op.flops <= 0.0 || ns == 0 {
            continue;
        }
        let tflops = op.flops / ns as f64 / 1e3;
        points.push([op.intensity().max(1e-3).log10(), tflops.max(1e-9).log10()]);
        labels.push(lang.fmt(
            Key::SimMeasuredHover,
            &[
                ("op", &op_name(lang, op)),
                ("intensity", &format!("{:.2}", op.intensity())),
                ("tflops", &format!("{tflops:.4}")),
                ("time", &format_ms(ns as f64 / 1e6)),
            ],
        ));
    }
    (
        lang.tr(Key::SimMeasuredPoints).to_owned(),
        Color32::WHITE,
        points,
        labels,
    )
}

/// Each op's predicted time and bound.
fn ops_table_ui(ui: &mut egui::Ui, lang: Lang, prediction: &Prediction) {
    egui::Grid::new("sim-ops").striped(true).show(ui, |ui| {
        for key in [
            Key::SimOp,
            Key::SimFlops,
            Key::SimBytes,
            Key::SimTime,
            Key::SimBound,
        ] {
            ui.label(RichText::new(lang.tr(key)).strong());
        }
        ui.end_row();
        for c in &prediction.ops {
            ui.label(op_name(lang, &c.op));
            ui.label(format!("{:.3e}", c.op.flops));
            ui.label(format!("{:.3e}", c.op.bytes));
            ui.label(format_ms(c.time_ms));
            ui.label(RichText::new(lang.tr(bound_key(c.bound))).color(bound_color(c.bound)));
            ui.end_row();
        }
    });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::sim::profile::shipped;

    struct State {
        panel: RooflinePanel,
        config: TrainConfig,
        spec: ModelSpec,
    }

    fn harness(lang: Lang) -> egui_kittest::Harness<'static, State> {
        let config = TrainConfig::default();
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: vec![2, 16, 16, 3],
            activation: crate::backend::Activation::Relu,
            loss: crate::nn::Loss::SoftmaxCrossEntropy,
        };
        let profiles = shipped();
        let mut h = crate::ui::testing::harness(
            move |ui, s: &mut State| {
                let view = RooflineView {
                    config: &s.config,
                    spec: &s.spec,
                    measured_ms: [Some(0.05), None],
                    calibration: None,
                    eval_rows: 720,
                    stacks: &[],
                    adapter: None,
                    kernels: [None, None],
                };
                s.panel.ui(ui, lang, &profiles, &view, &mut Vec::new());
            },
            State {
                panel: RooflinePanel::default(),
                config,
                spec,
            },
        );
        h.run();
        h
    }

    #[test]
    fn the_step_is_drawn_op_by_op_and_every_prediction_says_simulated() {
        let h = harness(Lang::En);
        assert!(h.query_by_label("layer 1 forward").is_some());
        assert!(h.query_by_label("layer 2 input gradient").is_some());
        // The headline names the profile and says simulated.
        assert!(
            h.query_by_label_contains("Simulated on NVIDIA T4")
                .is_some()
        );
        assert!(
            h.query_by_label_contains("(simulated, not measured)")
                .is_some()
        );
        assert!(h.query_by_label_contains("Measured here: CPU").is_some());
    }

    #[test]
    fn a_calibrations_progress_is_told_in_the_uis_language_with_cancel_first() {
        let status = CalibrationStatus {
            doing: Some((
                crate::device::Device::Cpu,
                Probing::Products {
                    fan_in: 3,
                    fan_out: 96,
                    batch: 8,
                },
            )),
            ..CalibrationStatus::default()
        };
        for (lang, text) in [
            (Lang::En, "the products of a 3×96 layer at batch 8"),
            (Lang::Zh, "3×96 层在批大小 8 时的矩阵乘法"),
        ] {
            let status = status.clone();
            let mut h = crate::ui::testing::harness(
                move |ui, commands: &mut Vec<UiCommand>| {
                    calibration_ui(ui, lang, Some(&status), commands);
                },
                Vec::new(),
            );
            h.run_steps(2);
            let progress = h.get_by_label_contains(text).rect();
            let cancel = h.get_by_label(lang.tr(Key::Cancel));
            assert!(cancel.rect().right() <= progress.left(), "{lang:?}");
            cancel.click();
            h.run_steps(2);
            assert_eq!(h.state(), &vec![UiCommand::CancelCalibration]);
        }
    }

    #[test]
    fn the_ops_are_named_in_the_uis_language() {
        let h = harness(Lang::Zh);
        h.get_by_label("第 1 层 前向");
        h.get_by_label("第 2 层 输入梯度");
        h.get_by_label("第 3 层 更新权重和偏置");
        h.get_by_label("损失及其梯度");
        assert!(h.query_by_label("layer 1 forward").is_none());
    }

    #[test]
    fn on_this_machines_profile_the_ops_of_a_timed_step_are_drawn_as_measured() {
        let mut local = shipped()
            .into_iter()
            .find(|p| p.kind == Kind::Cpu)
            .expect("a CPU profile");
        local.id = "local-cpu".into();
        // Calibrated while something else ran: the peak a fifth lower after the probes.
        local.steadiness = Some(crate::sim::steadiness::Steadiness {
            before_gflops: 100.0,
            after_gflops: 80.0,
            slowest_during_gflops: None,
        });
        let profiles = vec![local];
        let labels = [
            "linear_forward",
            "linear_forward",
            "linear_forward",
            "softmax_cross_entropy",
            "weight_grad",
            "bias_grad",
            "linear_backward_input",
            "weight_grad",
            "bias_grad",
            "linear_backward_input",
            "weight_grad",
            "bias_grad",
        ];
        let kernels = KernelTimes {
            kernels: labels.iter().map(|l| ((*l).to_owned(), 1000)).collect(),
            total_ns: 12_000,
        };
        for (lang, with) in [
            (Lang::En, Some(&kernels)),
            (Lang::Zh, Some(&kernels)),
            (Lang::En, None),
        ] {
            let kernels = with.cloned();
            let profiles = profiles.clone();
            let mut h = crate::ui::testing::harness(
                move |ui, panel: &mut RooflinePanel| {
                    let config = TrainConfig::default();
                    let spec = ModelSpec {
                        conv: None,
                        list: None,
                        layers: vec![2, 16, 16, 3],
                        activation: crate::backend::Activation::Relu,
                        loss: crate::nn::Loss::SoftmaxCrossEntropy,
                    };
                    let view = RooflineView {
                        config: &config,
                        spec: &spec,
                        measured_ms: [Some(0.05), None],
                        calibration: None,
                        eval_rows: 720,
                        stacks: &[],
                        adapter: None,
                        kernels: [kernels.as_ref(), None],
                    };
                    panel.ui(ui, lang, &profiles, &view, &mut Vec::new());
                },
                RooflinePanel::default(),
            );
            h.run();
            let legend = h
                .query_all_by_label(lang.tr(Key::SimMeasuredPoints))
                .count();
            assert_eq!(legend > 0, with.is_some(), "{lang:?}");
            let warning = match lang {
                Lang::En => "Calibrated while this machine's speed moved",
                Lang::Zh => "校准期间本机速度发生了变化",
            };
            assert!(h.query_by_label_contains(warning).is_some(), "{lang:?}");
        }
    }

    #[test]
    fn choosing_a_profile_changes_the_prediction_in_both_languages() {
        for (lang, t4, h100) in [
            (
                Lang::En,
                "Simulated on NVIDIA T4",
                "Simulated on NVIDIA H100 SXM",
            ),
            (Lang::Zh, "模拟：NVIDIA T4", "模拟：NVIDIA H100 SXM"),
        ] {
            let mut h = harness(lang);
            assert!(h.query_by_label_contains(t4).is_some(), "{lang:?}");
            h.state_mut().panel.profile = Some("nvidia-h100-sxm".into());
            h.run();
            assert!(h.query_by_label_contains(t4).is_none());
            assert!(h.query_by_label_contains(h100).is_some(), "{lang:?}");
        }
    }

    #[test]
    fn the_gpu_columns_what_if_line_predicts_on_the_profile_chosen_and_says_simulated() {
        for (lang, t4, h100, simulated) in [
            (
                Lang::En,
                "NVIDIA T4: ",
                "NVIDIA H100 SXM: ",
                "(simulated, not measured)",
            ),
            (
                Lang::Zh,
                "NVIDIA T4：",
                "NVIDIA H100 SXM：",
                "（模拟值，非实测）",
            ),
        ] {
            let profiles = shipped();
            let config = TrainConfig::default();
            let spec = ModelSpec {
                conv: None,
                list: None,
                layers: vec![2, 16, 16, 3],
                activation: crate::backend::Activation::Relu,
                loss: crate::nn::Loss::SoftmaxCrossEntropy,
            };
            let mut h = crate::ui::testing::harness(
                move |ui, chosen: &mut Option<String>| {
                    what_if_ui(ui, lang, &profiles, chosen, &config, &spec);
                },
                None,
            );
            h.run();
            assert!(
                h.query_by_label_contains(simulated).is_none(),
                "none chosen"
            );
            *h.state_mut() = Some("nvidia-t4".into());
            h.run();
            // One line names the profile and says simulated.
            assert!(h.query_by_label_contains(t4).is_some(), "{lang:?}");
            assert!(h.query_by_label_contains(simulated).is_some(), "{lang:?}");
            *h.state_mut() = Some("nvidia-h100-sxm".into());
            h.run();
            assert!(h.query_by_label_contains(t4).is_none());
            assert!(h.query_by_label_contains(h100).is_some(), "{lang:?}");
        }
    }

    #[test]
    fn memory_on_a_profile_says_what_fits_and_zero_spreads_a_large_model() {
        let mut h = harness(Lang::En);
        // The spiral's small MLP fits a T4 many times over.
        assert!(
            h.query_by_label_contains(
                "of this profile's 14.9 GiB: it fits. The largest batch that fits:"
            )
            .is_some()
        );
        // A 7B model over 8 GPUs: data parallelism needs 108 GB on each, which a T4 does not
        // have; ZeRO stage 3 needs 13.5 GB, which it does.
        assert_eq!(
            h.query_all_by_label("does not fit in one GPU's 14.9 GiB")
                .count(),
            3,
            "data parallel, stage 1 and stage 2"
        );
        assert_eq!(
            h.query_all_by_label("fits in each GPU's 14.9 GiB").count(),
            1
        );
        // On 64 GPUs stage 2 fits too.
        h.state_mut().panel.gpus = 64;
        h.run();
        assert_eq!(
            h.query_all_by_label("fits in each GPU's 14.9 GiB").count(),
            2
        );
    }
}
