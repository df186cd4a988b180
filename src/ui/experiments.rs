//! The Experiments tab: vary one setting over a list of values, measure both devices at each
//! value (one device at a time; training pauses), and see where the GPU overtakes the CPU —
//! samples/s and step time against the value on log-log axes, the crossover marked, and a table
//! coloured against the best of each column.

use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points, VLine};

use super::command::UiCommand;
use super::labels::{SIMULATED_COLOR, device_color};
use crate::bench::sweep::{Crossover, Note, Parameter, Results, Shortfall, Sweep, Value};
use crate::bench::sweep_sim::SimulatedSweep;
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::sim::profile::{Kind, Profile};

/// The tab's own state: the setting chosen and the values typed.
#[derive(Clone, Debug)]
pub struct ExperimentsPanel {
    /// The setting to vary.
    pub parameter: Parameter,
    /// Its values, as typed.
    pub values: String,
}

impl Default for ExperimentsPanel {
    fn default() -> Self {
        Self {
            parameter: Parameter::Batch,
            values: preset(Parameter::Batch).to_owned(),
        }
    }
}

/// What the tab draws from.
#[derive(Clone, Copy)]
pub struct ExperimentsView<'a> {
    /// The last sweep, running or ended.
    pub results: Option<&'a Results>,
    /// A run exists whose settings the sweep starts from, and nothing else measures.
    pub can_run: bool,
    /// What the last CSV export did.
    pub exported: Option<&'a str>,
    /// The hardware profiles a sweep can be simulated on.
    pub profiles: &'a [Profile],
    /// The id of the profile chosen for the what-if line, if one is.
    pub chosen: Option<&'a str>,
    /// The sweep's values predicted on it, once a sweep exists.
    pub simulated: Option<&'a SimulatedSweep>,
}

/// The values a sweep of `parameter` starts from.
pub fn preset(parameter: Parameter) -> &'static str {
    match parameter {
        Parameter::Batch => "1,4,16,64,256,1024,4096",
        Parameter::Width => "16,64,256,1024,4096",
        Parameter::Depth => "1,2,4,8,16",
        Parameter::Threads => "1,2,4,8",
        Parameter::Workers => "0,1,2,4",
        Parameter::Precision => "fp32,fp16,bf16,mixed",
        Parameter::Context => "32,64,128,256,512",
    }
}

/// A swept setting's name in the translation table.
pub fn parameter_key(parameter: Parameter) -> Key {
    match parameter {
        Parameter::Batch => Key::SweepBatch,
        Parameter::Width => Key::SweepWidth,
        Parameter::Depth => Key::SweepDepth,
        Parameter::Threads => Key::SweepThreads,
        Parameter::Workers => Key::SweepWorkers,
        Parameter::Precision => Key::SweepPrecision,
        Parameter::Context => Key::SweepContext,
    }
}

/// A note of a sweep in `lang` (a device's or the settings' own reason stays as they said it).
pub fn note_text(lang: Lang, parameter: Parameter, note: &Note) -> String {
    match note {
        Note::SamplesRaised { from, to } => {
            lang.fmt(Key::SweepSamplesRaised, &[("from", from), ("to", to)])
        }
        Note::Skipped { device, value, why } => lang.fmt(
            Key::SweepSkipped,
            &[
                ("device", &device.as_str().to_uppercase()),
                ("setting", &lang.tr(parameter_key(parameter))),
                ("value", value),
                ("why", &why.text(lang)),
            ],
        ),
        Note::LeftOut { device, why } => lang.fmt(
            Key::SweepLeftOut,
            &[
                ("device", &device.as_str().to_uppercase()),
                ("why", &why.text(lang)),
            ],
        ),
        Note::Cancelled => lang.tr(Key::SweepCancelled).to_owned(),
        Note::CancelledByRun => lang.tr(Key::SweepCancelledByRun).to_owned(),
    }
}

/// Whether a value larger than every measured one was refused (skipped) on some device.
fn refused_above_measured(results: &Results) -> bool {
    let largest = results
        .points
        .iter()
        .filter_map(|p| p.value.number())
        .fold(f64::NEG_INFINITY, f64::max);
    results.notes.iter().any(|n| match n {
        Note::Skipped { value, .. } => value.number().is_some_and(|v| v > largest),
        _ => false,
    })
}

/// The crossover in `lang`.
pub fn crossover_text(lang: Lang, crossover: &Crossover) -> String {
    match crossover {
        Crossover::At { value, between } => lang.fmt(
            Key::CrossoverAt,
            &[
                ("value", &format!("{value:.0}")),
                ("low", &between[0]),
                ("high", &between[1]),
            ],
        ),
        Crossover::FromTheStart { value } => lang.fmt(Key::CrossoverFromStart, &[("value", value)]),
        Crossover::NotReached { reason, .. } => match *reason {
            Shortfall::NothingToCompare => lang.tr(Key::CrossoverNothing).to_owned(),
            Shortfall::SoftwareGpu => lang.tr(Key::CrossoverSoftware).to_owned(),
            Shortfall::StayedSlower { best_pct, at } => lang.fmt(
                Key::CrossoverSlower,
                &[("pct", &format!("{best_pct:.0}")), ("at", &at)],
            ),
        },
    }
}

impl ExperimentsPanel {
    /// Draws the tab.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        view: ExperimentsView<'_>,
        commands: &mut Vec<UiCommand>,
    ) {
        let ExperimentsView {
            results,
            can_run,
            exported,
            profiles,
            chosen,
            simulated,
        } = view;
        // The profile named in the UI's language (this machine's calibrated ones).
        let localized = simulated.map(|s| SimulatedSweep {
            name: profiles
                .iter()
                .find(|p| p.id == s.profile)
                .map_or_else(|| s.name.clone(), |p| super::labels::profile_name(lang, p)),
            ..s.clone()
        });
        let simulated = localized.as_ref();
        ui.label(lang.tr(Key::ExperimentsIntro));
        let running = results.is_some_and(|r| !r.ended);
        self.sweep_form_ui(ui, lang, running, can_run, commands);
        what_if_ui(ui, lang, profiles, chosen, commands);
        let Some(results) = results else {
            return;
        };
        if running {
            ui.add(
                egui::ProgressBar::new(results.progress())
                    .show_percentage()
                    .text(lang.tr(Key::SweepRunning)),
            );
        }
        ui.label(RichText::new(lang.tr(Key::SweepFairness)).small());
        for note in &results.notes {
            let text = note_text(lang, results.sweep.parameter, note);
            ui.label(
                RichText::new(text)
                    .small()
                    .color(ui.visuals().warn_fg_color),
            );
        }
        let crossovers = crossovers_ui(ui, lang, results, simulated);
        super::lesson::framed(ui, crate::lesson::Widget::SweepPlot, |ui| {
            let [measured, simulated_crossover] = &crossovers;
            let lines = [measured.as_ref(), simulated_crossover.as_ref()];
            plot_ui(ui, lang, results, lines, simulated);
        });
        table_ui(ui, lang, results, simulated);
        if !running && !results.points.is_empty() {
            ui.horizontal_wrapped(|ui| {
                if ui
                    .button(lang.tr(Key::SweepExport))
                    .on_hover_text(lang.tr(Key::SweepExportTip))
                    .clicked()
                {
                    commands.push(UiCommand::ExportSweep);
                }
                if let Some(note) = exported {
                    ui.label(RichText::new(note).weak());
                }
            });
        }
    }

    /// The setting to vary and its values, with Run (or Cancel while a sweep runs), and what
    /// is wrong with the values.
    fn sweep_form_ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        running: bool,
        can_run: bool,
        commands: &mut Vec<UiCommand>,
    ) {
        let parsed = Sweep::parse(&format!("{}={}", self.parameter.as_str(), self.values));
        ui.horizontal_wrapped(|ui| {
            let before = self.parameter;
            egui::ComboBox::from_label(lang.tr(Key::SweepVary))
                .selected_text(lang.tr(parameter_key(self.parameter)))
                .show_ui(ui, |ui| {
                    for p in Parameter::ALL {
                        ui.selectable_value(&mut self.parameter, p, lang.tr(parameter_key(p)));
                    }
                });
            if self.parameter != before {
                preset(self.parameter).clone_into(&mut self.values);
            }
            ui.add(egui::TextEdit::singleline(&mut self.values).desired_width(240.0))
                .on_hover_text(lang.tr(Key::SweepValuesTip));
            if running {
                if ui.button(lang.tr(Key::Cancel)).clicked() {
                    commands.push(UiCommand::CancelSweep);
                }
            } else {
                let enabled = can_run && parsed.is_ok();
                let button = ui
                    .add_enabled(enabled, egui::Button::new(lang.tr(Key::RunSweep)))
                    .on_hover_text(lang.tr(Key::RunSweepTip));
                if button.clicked()
                    && let Ok(sweep) = parsed.clone()
                {
                    commands.push(UiCommand::RunSweep(sweep));
                }
            }
        });
        if let Err(e) = &parsed {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }
}

/// The measured crossover and the simulated one, said in words; returned for the plot.
fn crossovers_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    results: &Results,
    simulated: Option<&SimulatedSweep>,
) -> [Option<Crossover>; 2] {
    let crossover = results.crossover();
    if let Some(c) = &crossover {
        // "Try larger values" would contradict the notes above when the larger values were
        // the ones refused.
        let refused_larger = matches!(
            c,
            Crossover::NotReached {
                reason: Shortfall::StayedSlower { .. },
                ..
            }
        ) && refused_above_measured(results);
        let text = if refused_larger {
            lang.tr(Key::CrossoverSlowerRefused).to_owned()
        } else {
            crossover_text(lang, c)
        };
        ui.label(RichText::new(text).strong());
    }
    let simulated_crossover = simulated.and_then(|s| s.crossover_with_measured_cpu(results));
    if let (Some(s), Some(c)) = (simulated, &simulated_crossover) {
        ui.label(
            RichText::new(lang.fmt(
                Key::SweepSimCrossover,
                &[("name", &s.name), ("text", &crossover_text(lang, c))],
            ))
            .strong()
            .color(SIMULATED_COLOR),
        );
    }
    [crossover, simulated_crossover]
}

/// The what-if choice: a profile whose simulated line joins the measured ones.
fn what_if_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    profiles: &[Profile],
    chosen: Option<&str>,
    commands: &mut Vec<UiCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        let none = lang.tr(Key::SweepSimNone);
        let text = chosen
            .and_then(|id| profiles.iter().find(|p| p.id == id))
            .map_or_else(|| none.to_owned(), |p| super::labels::profile_name(lang, p));
        egui::ComboBox::from_label(lang.tr(Key::SweepSimOn))
            .selected_text(text)
            .show_ui(ui, |ui| {
                if ui.selectable_label(chosen.is_none(), none).clicked() && chosen.is_some() {
                    commands.push(UiCommand::SimulateSweepOn(None));
                }
                for p in profiles.iter().filter(|p| p.kind != Kind::Cpu) {
                    if ui
                        .selectable_label(
                            chosen == Some(p.id.as_str()),
                            super::labels::profile_name(lang, p),
                        )
                        .clicked()
                        && chosen != Some(p.id.as_str())
                    {
                        commands.push(UiCommand::SimulateSweepOn(Some(p.id.clone())));
                    }
                }
            })
            .response
            .on_hover_text(lang.tr(Key::SweepSimTip));
    });
}

/// Where a value sits on the plot's x axis: log10 of a count, or its place for a precision.
fn x_of(results: &Results, value: Value) -> f64 {
    match value.number() {
        Some(n) => n.max(1e-3).log10(),
        None => results
            .sweep
            .values
            .iter()
            .position(|&v| v == value)
            .unwrap_or(0) as f64,
    }
}

/// Samples/s and step time against the value, log-log, one line per device measured and a
/// dashed one for the simulated profile; the crossovers marked (measured GPU against CPU, then
/// simulated profile against the measured CPU).
fn plot_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    results: &Results,
    crossovers: [Option<&Crossover>; 2],
    simulated: Option<&SimulatedSweep>,
) {
    let numeric = results.sweep.values.iter().all(|v| v.number().is_some());
    let power = crate::ui::plots::si_log10_tick;
    let names: Vec<String> = results.sweep.values.iter().map(Value::to_string).collect();
    let x_label = move |mark: egui_plot::GridMark, range: &std::ops::RangeInclusive<f64>| {
        if numeric {
            power(mark, range)
        } else {
            names
                .get(mark.value.round().max(0.0) as usize)
                .filter(|_| (mark.value - mark.value.round()).abs() < 1e-6)
                .cloned()
                .unwrap_or_default()
        }
    };
    for (id, key, of) in [
        ("sweep-rate", Key::SamplesPerSecond, 0usize),
        ("sweep-step", Key::StepTimeMs, 1),
    ] {
        ui.label(lang.tr(key));
        let x_label = x_label.clone();
        let width = crate::ui::plots::line_width(ui);
        let shown = crate::ui::plots::readable(Plot::new(id), ui)
            .x_grid_spacer(egui_plot::log_grid_spacer(10))
            .y_grid_spacer(egui_plot::log_grid_spacer(10))
            .height(170.0)
            // Samples per second rise with the batch: the bottom right is where the lines
            // are not.
            .legend(Legend::default().position(egui_plot::Corner::RightBottom))
            .x_axis_formatter(x_label)
            .y_axis_formatter(power)
            .allow_scroll(false)
            .show(ui, |plot| {
                // A point at (value, samples/s or step time), on the plot's log axes.
                let at = |value, rate: f64, step: f64| {
                    let y = if of == 0 { rate } else { step };
                    [x_of(results, value), y.max(1e-9).log10()]
                };
                for device in Device::ALL {
                    let points: Vec<[f64; 2]> = results
                        .points
                        .iter()
                        .filter(|p| p.device == device)
                        .map(|p| at(p.value, p.samples_per_s, p.step_time_ms))
                        .collect();
                    let name = lang.fmt(
                        Key::SweepMeasuredLine,
                        &[("device", &device.as_str().to_uppercase())],
                    );
                    plot.line(
                        Line::new(name.clone(), PlotPoints::from(points.clone()))
                            .color(device_color(device))
                            .width(width),
                    );
                    plot.points(
                        Points::new(name, PlotPoints::from(points))
                            .radius(3.0)
                            .color(device_color(device)),
                    );
                }
                if let Some(s) = simulated {
                    let points: Vec<[f64; 2]> = s
                        .points
                        .iter()
                        .map(|p| at(p.value, p.samples_per_s, p.step_time_ms))
                        .collect();
                    let name = lang.fmt(Key::SweepSimulatedLine, &[("name", &s.name)]);
                    plot.line(
                        Line::new(name.clone(), PlotPoints::from(points.clone()))
                            .color(SIMULATED_COLOR)
                            .style(egui_plot::LineStyle::dashed_dense())
                            .width(width),
                    );
                    plot.points(
                        Points::new(name, PlotPoints::from(points))
                            .radius(3.0)
                            .shape(egui_plot::MarkerShape::Diamond)
                            .color(SIMULATED_COLOR),
                    );
                }
                for (crossover, key, colour) in [
                    (
                        crossovers[0],
                        Key::Crossover,
                        Color32::from_rgb(240, 180, 60),
                    ),
                    (crossovers[1], Key::SweepSimCrossoverLine, SIMULATED_COLOR),
                ] {
                    if let Some(Crossover::At { value, .. }) = crossover {
                        plot.vline(VLine::new(lang.tr(key), value.log10()).color(colour));
                    }
                }
            });
        crate::ui::plots::offer_png(ui, &shown.response, lang);
    }
}

/// The table in the style of `torch.utils.benchmark.Compare`: one row per value, each device's
/// samples/s and step time, coloured against the best of its column, a mark where the runs
/// spread more than asked.
/// A point's energy, as its step time's tooltip says it: a step's joules, an estimate marked as
/// one, and the samples per joule.
fn energy_tip(lang: Lang, p: &crate::bench::sweep::Point) -> Option<String> {
    use crate::i18n::LeverKey;
    let (joules, per_j, source) = (p.energy_j?, p.samples_per_j?, p.energy_source?);
    Some(format!(
        "{}: {}\n{}: {per_j:.0}",
        lang.tr(LeverKey::EnergyPerStep),
        super::energy::joules_text(lang, joules, source),
        lang.tr(LeverKey::SamplesPerJoule),
    ))
}

fn table_ui(ui: &mut egui::Ui, lang: Lang, results: &Results, simulated: Option<&SimulatedSweep>) {
    let best = |device: Device| {
        results
            .points
            .iter()
            .filter(|p| p.device == device)
            .map(|p| p.samples_per_s)
            .fold(0.0f64, f64::max)
    };
    let bests = [best(Device::Cpu), best(Device::Gpu)];
    egui::Grid::new("sweep-table")
        .striped(true)
        .num_columns(7)
        .show(ui, |ui| {
            ui.label(RichText::new(lang.tr(parameter_key(results.sweep.parameter))).strong());
            for device in Device::ALL {
                let name = device.as_str().to_uppercase();
                ui.label(
                    RichText::new(format!("{name} {}", lang.tr(Key::SamplesPerSecond))).strong(),
                );
                ui.label(RichText::new(format!("{name} {}", lang.tr(Key::StepTimeMs))).strong());
            }
            ui.label(RichText::new("GPU / CPU").strong());
            if let Some(s) = simulated {
                ui.label(
                    RichText::new(lang.fmt(Key::SweepSimulatedColumn, &[("name", &s.name)]))
                        .strong()
                        .color(SIMULATED_COLOR),
                );
            }
            ui.end_row();
            for &value in &results.sweep.values {
                ui.label(value.to_string());
                for device in Device::ALL {
                    let Some(p) = results.point(device, value) else {
                        ui.label("—");
                        ui.label("—");
                        continue;
                    };
                    let share = p.samples_per_s / bests[device as usize].max(1e-12);
                    // Full colour for the best, fading with the share of it.
                    let color = device_color(device)
                        .gamma_multiply((0.35 + 0.65 * share as f32).clamp(0.35, 1.0));
                    let text = if p.noisy {
                        format!("{:.0} ({})", p.samples_per_s, lang.tr(Key::Noisy))
                    } else {
                        format!("{:.0}", p.samples_per_s)
                    };
                    ui.label(RichText::new(text).color(color))
                        .on_hover_text(lang.fmt(
                            Key::SweepPointTip,
                            &[
                                ("iqr", &format!("{:.1}", p.iqr_pct)),
                                ("runs", &p.runs),
                                ("steps", &p.steps_per_run),
                            ],
                        ));
                    let step = ui.label(format!("{:.4}", p.step_time_ms));
                    if let Some(tip) = energy_tip(lang, p) {
                        step.on_hover_text(tip);
                    }
                }
                let ratio = results
                    .point(Device::Gpu, value)
                    .zip(results.point(Device::Cpu, value))
                    .map(|(g, c)| g.samples_per_s / c.samples_per_s);
                ui.label(ratio.map_or_else(|| "—".to_owned(), |r| format!("{r:.2}×")));
                if let Some(s) = simulated {
                    let point = s.points.iter().find(|p| p.value == value);
                    ui.label(
                        RichText::new(
                            point.map_or_else(
                                || "—".to_owned(),
                                |p| format!("{:.0}", p.samples_per_s),
                            ),
                        )
                        .color(SIMULATED_COLOR),
                    );
                }
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::bench::sweep::{Point, Report};

    fn view(results: Option<&Results>) -> ExperimentsView<'_> {
        ExperimentsView {
            results,
            can_run: true,
            exported: None,
            profiles: &[],
            chosen: None,
            simulated: None,
        }
    }

    fn point(device: Device, batch: usize, samples_per_s: f64, noisy: bool) -> Point {
        Point {
            device,
            parameter: Parameter::Batch,
            value: Value::Count(batch),
            samples_per_s,
            step_time_ms: batch as f64 / samples_per_s * 1e3,
            step_time_min_ms: 0.0,
            step_time_max_ms: 0.0,
            iqr_pct: if noisy { 25.0 } else { 4.0 },
            noisy,
            runs: 5,
            steps_per_run: 100,
            gflop_per_s: 0.0,
            dispatches_per_step: None,
            energy_j: None,
            samples_per_j: None,
            energy_source: None,
        }
    }

    /// A point's energy is said in its step time's tooltip, an estimate marked as one, in both
    /// languages; a point without energy has no such tooltip.
    #[test]
    fn a_points_energy_is_in_its_tooltip_in_both_languages() {
        let mut p = point(Device::Cpu, 64, 1000.0, false);
        assert!(energy_tip(Lang::En, &p).is_none());
        p.energy_j = Some(0.0125);
        p.samples_per_j = Some(5120.0);
        p.energy_source = Some(crate::energy::EnergySource::Estimated);
        assert_eq!(
            energy_tip(Lang::En, &p).as_deref(),
            Some("Energy a step: 12.50 mJ (estimated)\nSamples per joule: 5120")
        );
        assert_eq!(
            energy_tip(Lang::Zh, &p).as_deref(),
            Some("每步能耗: 12.50 mJ（估算）\n每焦耳样本数: 5120")
        );
    }

    fn results() -> Results {
        let sweep = Sweep::parse("batch=16,64,256").expect("sweep");
        let mut r = Results::new(sweep, &Device::ALL);
        for (batch, cpu, gpu) in [
            (16, 1000.0, 250.0),
            (64, 1000.0, 500.0),
            (256, 1000.0, 2000.0),
        ] {
            r.apply(Report::Point(point(Device::Cpu, batch, cpu, batch == 64)));
            r.apply(Report::Point(point(Device::Gpu, batch, gpu, false)));
        }
        r.ended = true;
        r
    }

    #[test]
    fn the_tab_shows_both_devices_the_crossover_and_the_table_in_both_languages() {
        for (lang, crossover, noisy) in [
            (Lang::En, "The GPU overtakes the CPU at about 128", "noisy"),
            (Lang::Zh, "GPU 在约 128 处超过 CPU", "波动大"),
        ] {
            let results = results();
            let mut panel = ExperimentsPanel::default();
            let mut harness = crate::ui::testing::harness(
                move |ui, commands: &mut Vec<UiCommand>| {
                    panel.ui(ui, lang, view(Some(&results)), commands);
                },
                Vec::new(),
            );
            harness.run();
            assert!(
                harness.query_by_label_contains(crossover).is_some(),
                "{lang:?}"
            );
            assert!(
                harness.query_by_label("2000").is_some(),
                "the GPU's rate at 256"
            );
            assert!(
                harness.query_by_label("2.00×").is_some(),
                "the ratio at 256"
            );
            assert!(harness.query_by_label(&format!("1000 ({noisy})")).is_some());
            // An ended sweep can be exported.
            let export = if lang == Lang::En {
                "Export CSV…"
            } else {
                "导出 CSV…"
            };
            harness.get_by_label(export).click();
            harness.run();
            assert_eq!(harness.state(), &[UiCommand::ExportSweep]);
        }
    }

    #[test]
    fn run_sends_the_sweep_typed_and_cancel_stops_a_running_one() {
        let mut panel = ExperimentsPanel {
            parameter: Parameter::Batch,
            values: "8, 32".to_owned(),
        };
        let mut harness = crate::ui::testing::harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                panel.ui(ui, Lang::En, view(None), commands);
            },
            Vec::new(),
        );
        harness.run();
        harness.get_by_label("Run sweep").click();
        harness.run();
        assert_eq!(
            harness.state(),
            &[UiCommand::RunSweep(
                Sweep::parse("batch=8,32").expect("sweep")
            )]
        );
        let mut running = results();
        running.ended = false;
        let mut panel = ExperimentsPanel::default();
        let mut harness = crate::ui::testing::harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                panel.ui(ui, Lang::En, view(Some(&running)), commands);
            },
            Vec::new(),
        );
        harness.run();
        harness.get_by_label("Cancel").click();
        harness.run();
        assert_eq!(harness.state(), &[UiCommand::CancelSweep]);
    }

    #[test]
    fn a_profile_adds_a_simulated_line_and_its_crossover_with_the_measured_cpu() {
        use crate::bench::sweep_sim::SimPoint;
        use crate::sim::cost::Bound;
        // A simulated GPU at 100, 900 and 4000 samples/s against the CPU's measured 1000.
        let simulated = SimulatedSweep {
            profile: "nvidia-t4".into(),
            name: "NVIDIA T4".into(),
            points: [(16, 100.0), (64, 900.0), (256, 4000.0)]
                .into_iter()
                .map(|(batch, rate)| SimPoint {
                    simulated: true,
                    value: Value::Count(batch),
                    samples_per_s: rate,
                    step_time_ms: batch as f64 / rate * 1e3,
                    bound: Bound::Overhead,
                })
                .collect(),
        };
        for (lang, line, column, headline) in [
            (
                Lang::En,
                "NVIDIA T4 (simulated)",
                "NVIDIA T4 samples/s (simulated)",
                "NVIDIA T4, simulated, against this CPU, measured: The GPU overtakes the CPU at about",
            ),
            (
                Lang::Zh,
                "NVIDIA T4（模拟）",
                "NVIDIA T4 样本/秒（模拟）",
                "模拟的 NVIDIA T4 对比本机实测的 CPU：GPU 在约",
            ),
        ] {
            let results = results();
            let simulated = simulated.clone();
            let profiles = crate::sim::profile::shipped();
            let mut panel = ExperimentsPanel::default();
            let mut harness = crate::ui::testing::harness(
                move |ui, commands: &mut Vec<UiCommand>| {
                    let view = ExperimentsView {
                        chosen: Some("nvidia-t4"),
                        simulated: Some(&simulated),
                        profiles: &profiles,
                        ..view(Some(&results))
                    };
                    panel.ui(ui, lang, view, commands);
                },
                Vec::new(),
            );
            harness.run();
            assert!(
                harness.query_by_label_contains(headline).is_some(),
                "{lang:?}"
            );
            assert!(harness.query_by_label(column).is_some(), "{lang:?}");
            assert!(harness.query_by_label("4000").is_some());
            // The legend names each line measured or simulated.
            assert!(
                harness.query_all_by_label_contains(line).count() >= 2,
                "{lang:?}"
            );
            let measured = if lang == Lang::En {
                "CPU (measured)"
            } else {
                "CPU（实测）"
            };
            assert!(
                harness.query_all_by_label_contains(measured).count() >= 2,
                "{lang:?}"
            );
        }
        // Choosing a profile, or none, asks for it.
        let mut panel = ExperimentsPanel::default();
        let profiles = crate::sim::profile::shipped();
        let mut harness = crate::ui::testing::harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                let view = ExperimentsView {
                    profiles: &profiles,
                    ..view(None)
                };
                panel.ui(ui, Lang::En, view, commands);
            },
            Vec::new(),
        );
        harness.run();
        harness.get_by_label("What if: simulate on").click();
        harness.run();
        harness.get_by_label("NVIDIA H100 SXM").click();
        harness.run();
        assert_eq!(
            harness.state(),
            &[UiCommand::SimulateSweepOn(Some("nvidia-h100-sxm".into()))]
        );
    }
}
