//! The History tab: every finished run and sweep with its settings and headline figures, kept
//! across restarts; tick two or more to compare them side by side, restore one into the setup,
//! or delete it.

use std::collections::BTreeSet;

use egui::RichText;

use super::command::UiCommand;
use super::labels::{data_name, device_title, optimizer_key, precision_label};
use crate::bench::history::{Entry, History, RunFigures, What, format_local};
use crate::device::Device;
use crate::i18n::{Key, Lang, LeverKey};
use crate::units::{format_bytes, format_ms, format_rate};

/// The tab's own state: the entries ticked for comparison.
#[derive(Clone, Debug, Default)]
pub struct HistoryPanel {
    /// The numbers of the ticked entries.
    pub ticked: BTreeSet<u64>,
}

/// One row of the comparison: a name and each entry's value.
struct Row {
    name: String,
    values: Vec<String>,
}

impl HistoryPanel {
    /// Draws the tab.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        history: &History,
        commands: &mut Vec<UiCommand>,
    ) {
        ui.label(lang.tr(Key::HistoryIntro));
        ui.add_space(6.0);
        if history.entries.is_empty() {
            ui.label(RichText::new(lang.tr(Key::HistoryEmpty)).weak());
            return;
        }
        self.ticked.retain(|id| history.get(*id).is_some());
        // The table can be wider than the window: it scrolls sideways, the text above wraps.
        egui::ScrollArea::horizontal()
            .id_salt("history-table")
            .show(ui, |ui| {
                self.table_ui(ui, lang, history, commands);
                // Room for the floating scroll bar, which would cover the last row.
                ui.add_space(ui.spacing().scroll.bar_width + ui.spacing().scroll.bar_outer_margin);
            });
        let ticked: Vec<&Entry> = history
            .entries
            .iter()
            .filter(|e| self.ticked.contains(&e.id))
            .collect();
        ui.add_space(10.0);
        if ticked.len() < 2 {
            ui.label(RichText::new(lang.tr(Key::HistoryTickTwo)).weak());
            return;
        }
        ui.heading(lang.tr(Key::HistoryComparison));
        compare_ui(ui, lang, &ticked);
    }

    fn table_ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        history: &History,
        commands: &mut Vec<UiCommand>,
    ) {
        egui::Grid::new("history")
            .striped(true)
            .num_columns(10)
            .show(ui, |ui| {
                ui.label(RichText::new(lang.tr(Key::HistoryCompare)).strong());
                ui.label("");
                ui.label("");
                for key in [
                    Key::HistoryFinished,
                    Key::HistoryKind,
                    Key::Data,
                    Key::HistoryModel,
                    Key::HistoryCpuRate,
                    Key::HistoryGpuRate,
                    Key::HistoryResult,
                ] {
                    ui.label(RichText::new(lang.tr(key)).strong());
                }
                ui.end_row();
                // Newest first.
                for entry in history.entries.iter().rev() {
                    self.row_ui(ui, lang, entry, commands);
                }
            });
    }

    fn row_ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        entry: &Entry,
        commands: &mut Vec<UiCommand>,
    ) {
        let mut ticked = self.ticked.contains(&entry.id);
        if ui
            .checkbox(&mut ticked, format!("#{}", entry.id))
            .on_hover_text(lang.tr(Key::HistoryCompareTip))
            .changed()
        {
            if ticked {
                self.ticked.insert(entry.id);
            } else {
                self.ticked.remove(&entry.id);
            }
        }
        // The actions first: a wide table scrolls, and they must stay in sight.
        if ui
            .button(lang.tr(Key::HistoryRestore))
            .on_hover_text(lang.tr(Key::HistoryRestoreTip))
            .clicked()
        {
            commands.push(UiCommand::RestoreEntry(entry.id));
        }
        if ui
            .button(lang.tr(Key::HistoryDelete))
            .on_hover_text(lang.tr(Key::HistoryDeleteTip))
            .clicked()
        {
            commands.push(UiCommand::DeleteEntry(entry.id));
        }
        ui.label(format_local(entry.finished));
        ui.label(kind_text(lang, entry));
        ui.label(data_name(lang, &entry.data));
        ui.label(model_text(lang, entry));
        match &entry.what {
            What::Run { .. } => {
                for device in Device::ALL {
                    ui.label(entry.figures(device).map_or_else(
                        || "—".to_owned(),
                        |f| f.samples_per_s.map_or("—".to_owned(), format_rate),
                    ));
                }
                ui.label(result_text(lang, entry));
            }
            What::Sweep(sweep) => {
                for device in Device::ALL {
                    ui.label(sweep.best(device).map_or("—".to_owned(), |(value, rate)| {
                        lang.fmt(
                            Key::HistoryBestAt,
                            &[("rate", &format_rate(rate)), ("value", &value)],
                        )
                    }));
                }
                ui.label(result_text(lang, entry));
            }
        }
        ui.end_row();
    }
}

fn kind_text(lang: Lang, entry: &Entry) -> String {
    match &entry.what {
        What::Run {
            sharing: Some(sharing),
            ..
        } => {
            let (name, _) = super::toolbar::sharing_texts(*sharing);
            format!("{} ({})", lang.tr(Key::HistoryRun), lang.tr(name))
        }
        What::Run { sharing: None, .. } => lang.tr(Key::HistoryRun).to_owned(),
        What::Sweep(s) => {
            // The setting by its name in the reader's language (the file keeps the code name).
            let parameter = crate::bench::sweep::Parameter::parse(&s.parameter).map_or_else(
                || s.parameter.clone(),
                |p| lang.tr(super::experiments::parameter_key(p)).to_owned(),
            );
            lang.fmt(Key::HistorySweep, &[("parameter", &parameter)])
        }
    }
}

fn model_text(lang: Lang, entry: &Entry) -> String {
    let c = &entry.config;
    let hidden: Vec<String> = c.hidden.iter().map(ToString::to_string).collect();
    lang.fmt(
        Key::HistoryModelText,
        &[
            ("hidden", &hidden.join("×")),
            ("batch", &super::labels::batch_text(c)),
            ("precision", &precision_label(lang, c.precision)),
        ],
    )
}

fn result_text(lang: Lang, entry: &Entry) -> String {
    match &entry.what {
        What::Run { devices, .. } => {
            let parts: Vec<String> = devices
                .iter()
                .filter_map(|f| {
                    let metric = f.test_metric?;
                    let metric = if f.r2 {
                        format!("R² {metric:.3}")
                    } else {
                        format!("{:.1}%", metric * 100.0)
                    };
                    Some(format!("{} {metric}", device_title(lang, f.device)))
                })
                .collect();
            parts.join(" · ")
        }
        What::Sweep(s) => match s.crossover {
            Some(value) => lang.fmt(
                Key::HistoryCrossoverAt,
                &[("value", &format!("{value:.0}"))],
            ),
            None if s.software_gpu => lang.tr(Key::HistoryNoCrossoverSoftware).to_owned(),
            None => lang.tr(Key::HistoryNoCrossover).to_owned(),
        },
    }
}

/// The ticked entries side by side: one column each, a row per setting and figure, the rows
/// whose values differ in bold.
fn compare_ui(ui: &mut egui::Ui, lang: Lang, entries: &[&Entry]) {
    let rows = comparison_rows(lang, entries);
    egui::ScrollArea::horizontal()
        .id_salt("history-compare")
        .show(ui, |ui| {
            egui::Grid::new("history-compare")
                .striped(true)
                .num_columns(entries.len() + 1)
                .show(ui, |ui| {
                    ui.label("");
                    for e in entries {
                        ui.label(RichText::new(format!("#{}", e.id)).strong());
                    }
                    ui.end_row();
                    for row in rows {
                        let differs = row.values.iter().any(|v| *v != row.values[0]);
                        let name = RichText::new(row.name);
                        ui.label(if differs { name.strong() } else { name.weak() });
                        for value in row.values {
                            let text = RichText::new(value);
                            ui.label(if differs { text.strong() } else { text });
                        }
                        ui.end_row();
                    }
                });
            ui.add_space(ui.spacing().scroll.bar_width + ui.spacing().scroll.bar_outer_margin);
        });
}

fn comparison_rows(lang: Lang, entries: &[&Entry]) -> Vec<Row> {
    let row = |key: Key, value: &dyn Fn(&Entry) -> String| Row {
        name: lang.tr(key).to_owned(),
        values: entries.iter().map(|e| value(e)).collect(),
    };
    let mut rows = vec![
        row(Key::HistoryKind, &|e| kind_text(lang, e)),
        row(Key::Data, &|e| data_name(lang, &e.data)),
        row(Key::HistoryModel, &|e| model_text(lang, e)),
        row(Key::HistoryOptimizer, &|e| {
            format!(
                "{}, {} {}",
                lang.tr(optimizer_key(e.config.optimizer)),
                lang.tr(Key::LearningRateShort),
                e.config.lr
            )
        }),
        row(Key::HistoryResult, &|e| result_text(lang, e)),
    ];
    for device in Device::ALL {
        let figure = |name: &str, f: &dyn Fn(&RunFigures) -> Option<String>| Row {
            name: format!("{} · {}", device_title(lang, device), name),
            values: entries
                .iter()
                .map(|e| e.figures(device).and_then(f).unwrap_or_else(|| "—".into()))
                .collect(),
        };
        rows.push(figure(lang.tr(Key::HistoryDeviceName), &|f| {
            Some(super::labels::backend_name(lang, &f.name))
        }));
        rows.push(figure(lang.tr(Key::HistorySamples), &|f: &RunFigures| {
            f.samples_per_s.map(format_rate)
        }));
        rows.push(figure(lang.tr(Key::StepTime), &|f: &RunFigures| {
            f.step_time_ms.map(format_ms)
        }));
        rows.push(figure(
            lang.tr(LeverKey::EnergyPerStep),
            &|f: &RunFigures| {
                let source = f.energy_source?;
                Some(super::energy::joules_text(lang, f.energy_j?, source))
            },
        ));
        rows.push(figure(
            lang.tr(LeverKey::SamplesPerJoule),
            &|f: &RunFigures| f.samples_per_j.map(|s| format!("{s:.0}")),
        ));
        rows.push(figure(lang.tr(Key::HistorySteps), &|f: &RunFigures| {
            Some(f.steps.to_string())
        }));
        rows.push(figure(lang.tr(Key::HistoryEvalStep), &|f: &RunFigures| {
            f.eval_step.map(|s| s.to_string())
        }));
        rows.push(figure(lang.tr(Key::HistoryTestLoss), &|f: &RunFigures| {
            f.test_loss.map(|l| format!("{l:.4}"))
        }));
        rows.push(figure(
            lang.tr(Key::HistoryTimeToTarget),
            &|f: &RunFigures| f.time_to_target_s.map(|s| crate::units::format_ns(s * 1e9)),
        ));
        rows.push(figure(
            lang.tr(Key::HistoryPeakMemory),
            &|f: &RunFigures| f.peak_memory.map(format_bytes),
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::train::worker::{Event, EventKind};
    use crate::train::{DeviceRun, Sharing, StepLog, TrainConfig};

    fn run_entry(batch: usize, rate: f64) -> Entry {
        let mut run = DeviceRun::new(Device::Cpu);
        run.apply(Event {
            device: Device::Cpu,
            generation: 0,
            kind: EventKind::Log(Box::new(StepLog {
                device: Device::Cpu,
                step: 10,
                epoch: 0,
                batch: 32,
                micro_batch: 32,
                // 12.5 mJ a step over the 10 steps, estimated.
                energy: Some(crate::train::StepEnergy {
                    per_step_j: 0.0125,
                    samples_per_j: 2560.0,
                    total_j: 0.125,
                    source: crate::energy::EnergySource::Estimated,
                    basis: String::new(),
                    rated: Some((21.2, false)),
                }),
                loss: 0.5,
                accuracy: Some(0.5),
                mae: None,
                samples_per_s: rate,
                tokens_per_s: None,
                step_time_ms: batch as f64 / rate * 1e3,
                loss_scale: None,
                skipped_steps: None,
                kernel_time_ms: None,
                kernels: None,
                rounding: None,
            })),
        });
        let config = TrainConfig {
            batch,
            ..TrainConfig::default()
        };
        let runs = [run, DeviceRun::new(Device::Gpu)];
        Entry::run(
            &config,
            "spiral",
            [true, false],
            &runs,
            Sharing::TakingTurns,
        )
        .expect("run")
    }

    fn history() -> History {
        let mut history = History::default();
        history.push(run_entry(32, 12_000.0));
        history.push(run_entry(256, 48_000.0));
        history
    }

    fn harness(
        history: History,
        lang: Lang,
    ) -> egui_kittest::Harness<'static, (HistoryPanel, Vec<UiCommand>)> {
        let mut h = crate::ui::testing::harness(
            move |ui, (panel, commands): &mut (HistoryPanel, Vec<UiCommand>)| {
                panel.ui(ui, lang, &history, commands);
            },
            (HistoryPanel::default(), Vec::new()),
        );
        // A scroll area places its content on the frame after the first.
        h.run();
        h
    }

    #[test]
    fn entries_are_listed_with_their_figures_and_their_buttons_ask_to_restore_or_delete() {
        let mut h = harness(history(), Lang::En);
        assert!(h.query_by_label("12.0 k").is_some());
        assert!(h.query_by_label("48.0 k").is_some());
        let restore: Vec<_> = h.query_all_by_label("Restore").collect();
        assert_eq!(restore.len(), 2);
        // The newest is listed first.
        restore[0].click();
        h.run();
        assert_eq!(h.state().1, [UiCommand::RestoreEntry(2)]);
        h.state_mut().1.clear();
        h.query_all_by_label("Delete")
            .nth(1)
            .expect("delete")
            .click();
        h.run();
        assert_eq!(h.state().1, [UiCommand::DeleteEntry(1)]);
    }

    #[test]
    fn ticking_two_entries_compares_them_side_by_side_in_both_languages() {
        let mut h = harness(history(), Lang::En);
        assert!(h.query_by_label("Comparison").is_none());
        h.get_by_label("#1").click();
        h.run();
        assert!(h.state().0.ticked.contains(&1), "{:?}", h.state().0);
        h.get_by_label("#2").click();
        h.run();
        assert!(h.query_by_label("Comparison").is_some());
        // The row whose values differ is there with both values.
        assert!(h.query_all_by_label_contains("batch 256").count() >= 2);
        assert!(h.query_by_label("CPU · Samples/s").is_some());
        // The energy of each, labelled as estimated.
        assert!(h.query_by_label("CPU · Energy a step").is_some());
        assert_eq!(h.query_all_by_label("12.50 mJ (estimated)").count(), 2);
        let mut h = harness(history(), Lang::Zh);
        h.get_by_label("#1").click();
        h.get_by_label("#2").click();
        h.run();
        assert!(h.query_by_label("并排对比").is_some());
        assert!(h.query_by_label("CPU · 每步能耗").is_some());
        assert_eq!(h.query_all_by_label("12.50 mJ（估算）").count(), 2);
        assert!(h.query_all_by_label("恢复").count() == 2);
    }

    #[test]
    fn an_empty_history_says_how_it_fills() {
        let h = harness(History::default(), Lang::En);
        assert!(h.query_by_label_contains("No finished runs yet").is_some());
    }
}
