//! The batch journey: per device, the recorded steps as lanes of spans (zoom, pan, hover), the
//! step breakdown as stacked bars, the advice that fired, and a hardware diagram that replays
//! one step's recorded path slowly enough for a class to follow.

mod breakdown;
mod diagram;
mod palette;
mod timeline;

pub use palette::{category_color, category_key, lane_name};
pub use timeline::Hit;

use egui::RichText;

use super::command::UiCommand;
use super::labels::device_title;
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::trace::advice::Advice;
use crate::trace::{Breakdown, Category, StepTrace};
use crate::train::DeviceRun;
use crate::units::format_ns;

/// Steps the breakdown and the advice look at.
const BREAKDOWN_STEPS: usize = 60;

/// The journey view's state.
#[derive(Default)]
pub struct JourneyPanel {
    views: [timeline::View; 2],
    /// The step the diagram shows, per device (the latest when `None`).
    selected: [Option<u64>; 2],
    replay: Option<diagram::Replay>,
    /// Spans drawn in the last frame.
    pub hits: Vec<Hit>,
    /// How far the replay is through its step (0 to 1), while one plays.
    pub replay_progress: Option<f32>,
}

impl JourneyPanel {
    /// Shows `[start_ns, end_ns]` of `device`'s timeline (the view stops following the run).
    pub fn show_range(&mut self, device: Device, start_ns: u64, end_ns: u64) {
        self.views[device as usize].window = Some([start_ns as f64, end_ns as f64]);
    }

    /// Draws every device that has recorded steps.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lang: Lang,
        runs: &[DeviceRun; 2],
        commands: &mut Vec<UiCommand>,
    ) {
        self.hits.clear();
        self.replay_progress = None;
        ui.horizontal(|ui| {
            ui.heading(lang.tr(Key::Journey));
            if ui
                .button(lang.tr(Key::ExportTrace))
                .on_hover_text(lang.tr(Key::ExportTraceTip))
                .clicked()
            {
                commands.push(UiCommand::ExportTrace);
            }
        });
        legend_ui(ui, lang);
        let mut any = false;
        for run in runs
            .iter()
            .filter(|r| r.enabled && !r.trace.steps.is_empty())
        {
            any = true;
            ui.separator();
            self.device_ui(ui, lang, run);
        }
        if !any {
            ui.separator();
            ui.label(RichText::new(lang.tr(Key::TimelineEmpty)).weak());
        }
    }

    fn device_ui(&mut self, ui: &mut egui::Ui, lang: Lang, run: &DeviceRun) {
        let device = run.device;
        let history = &run.trace;
        // Steps whose kernels were not timed (sampling on a software adapter) have no honest
        // breakdown: the bars, the means and the advice leave them out.
        let recent = history.timed_steps(BREAKDOWN_STEPS);
        let total = Breakdown::total(recent.iter().map(|s| &s.breakdown));
        let n = recent.len().max(1) as f64;
        let title = device_title(lang, device);
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(title).strong().size(18.0));
            if recent.is_empty() {
                return;
            }
            ui.label(lang.fmt(
                Key::MeanStep,
                &[("ms", &format_ns(total.wall_ns as f64 / n))],
            ));
            ui.label(lang.fmt(
                Key::BusyShare,
                &[
                    ("device", &title),
                    ("busy", &format!("{:.0}", total.busy_share() * 100.0)),
                ],
            ));
        });
        ui.label(RichText::new(lang.tr(Key::Timeline)).strong())
            .on_hover_text(lang.tr(Key::TimelineTip));
        let view = &mut self.views[device as usize];
        let selected = &mut self.selected[device as usize];
        super::lesson::framed(ui, crate::lesson::Widget::Timeline, |ui| {
            timeline::timeline_ui(ui, lang, device, history, view, selected, &mut self.hits);
        });

        ui.label(RichText::new(lang.tr(Key::Breakdown)).strong())
            .on_hover_text(lang.tr(Key::BreakdownTip));
        if recent.is_empty() {
            ui.label(RichText::new(lang.tr(Key::NoTimedSteps)).weak());
        } else {
            let before = *selected;
            super::lesson::framed(ui, crate::lesson::Widget::StepBreakdown, |ui| {
                breakdown::breakdown_ui(ui, lang, &recent, selected);
            });
            // A bar clicked: the timeline shows that step.
            if *selected != before
                && let Some(s) = selected.and_then(|n| history.steps.iter().find(|t| t.step == n))
            {
                let margin = (s.end_ns - s.start_ns) as f64 * 0.25;
                self.views[device as usize].window =
                    Some([s.start_ns as f64 - margin, s.end_ns as f64 + margin]);
            }
        }

        ui.label(RichText::new(lang.tr(Key::Advice)).strong());
        let steps: Vec<StepTrace> = recent.iter().map(|s| (*s).clone()).collect();
        let advice = run
            .trace_context
            .map(|context| Advice::of(&steps, context))
            .unwrap_or_default();
        if advice.findings.is_empty() {
            ui.label(RichText::new(lang.tr(Key::NoAdvice)).weak());
        }
        for finding in &advice.findings {
            ui.label(
                RichText::new(format!("⚠ {}", finding.text(lang, device)))
                    .color(ui.visuals().warn_fg_color),
            );
        }

        let step = selected
            .and_then(|s| history.steps.iter().find(|t| t.step == s))
            .or_else(|| history.steps.back());
        if let Some(step) = step {
            let drawn = diagram::diagram_ui(ui, lang, device, history, step, &mut self.replay);
            if drawn.replayed.is_some() {
                // Hold on to this step while newer ones arrive.
                self.selected[device as usize] = drawn.replayed;
            }
            if drawn.progress.is_some() {
                self.replay_progress = drawn.progress;
            }
        }
    }
}

/// Category swatches with their names.
fn legend_ui(ui: &mut egui::Ui, lang: Lang) {
    ui.horizontal_wrapped(|ui| {
        for c in Category::ALL {
            super::labels::swatch(ui, category_color(c), lang.tr(category_key(c)));
        }
    });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::trace::{Clock, Lane, Span, TraceChunk, TraceHistory};
    use crate::ui::testing::harness;

    /// A CPU run that recorded `steps` steps of 100 µs: a wait for the batch, the copy, the
    /// kernels.
    fn recorded(steps: u64) -> [DeviceRun; 2] {
        let mut cpu = DeviceRun::new(Device::Cpu);
        let mut chunk = TraceChunk::default();
        for step in 1..=steps {
            let start = step * 100_000;
            let span = |lane, category, name, from: u64, to: u64| Span {
                lane,
                category,
                name,
                start_ns: start + from,
                duration_ns: to - from,
                bytes: if category == Category::Memcpy {
                    4096
                } else {
                    0
                },
                step,
                clock: Clock::Host,
            };
            let spans = vec![
                span(
                    Lane::Main,
                    Category::DataLoader,
                    "wait for batch",
                    0,
                    10_000,
                ),
                span(
                    Lane::Transfer,
                    Category::Memcpy,
                    "copy into tensor (RAM)",
                    10_000,
                    20_000,
                ),
                span(Lane::Kernels, Category::Kernel, "forward", 20_000, 90_000),
            ];
            chunk.steps.push(StepTrace {
                step,
                start_ns: start,
                end_ns: start + 100_000,
                breakdown: Breakdown::of(start, start + 100_000, &spans),
                synced: true,
                kernels_timed: true,
                batch_bytes: 4096,
            });
            chunk.spans.extend(spans);
        }
        let mut history = TraceHistory::default();
        history.extend(chunk);
        cpu.trace = history;
        [cpu, DeviceRun::new(Device::Gpu)]
    }

    #[test]
    fn the_timeline_draws_each_lane_and_a_hovered_span_says_how_long_it_took() {
        let runs = recorded(20);
        let mut h = harness(
            move |ui, (panel, commands): &mut (JourneyPanel, Vec<UiCommand>)| {
                panel.ui(ui, Lang::En, &runs, commands);
            },
            (JourneyPanel::default(), Vec::new()),
        );
        for lane in ["training thread", "host→device copy", "CPU kernels (rayon)"] {
            assert!(h.query_by_label(lane).is_some(), "lane {lane}");
        }
        assert!(h.query_by_label_contains("Step breakdown").is_some());
        // Zoom onto one step's kernel span and hover it.
        h.state_mut()
            .0
            .show_range(Device::Cpu, 2_000_000, 2_100_000);
        h.run();
        let hit = h
            .state()
            .0
            .hits
            .iter()
            .find(|hit| hit.span.category == Category::Kernel && hit.span.step == 20)
            .cloned()
            .expect("the kernel span is drawn");
        h.ctx
            .global_style_mut(|s| s.interaction.tooltip_delay = 0.0);
        h.hover_at(hit.rect.center());
        h.run();
        assert!(h.query_by_label("forward").is_some());
        assert!(h.query_by_label("70.0 µs · Kernel").is_some());
        h.get_by_label("Export trace…").click();
        h.run();
        assert_eq!(h.state().1, [UiCommand::ExportTrace]);
    }

    #[test]
    fn with_nothing_recorded_the_view_says_how_to_record() {
        let runs = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
        let h = harness(
            move |ui, panel: &mut JourneyPanel| panel.ui(ui, Lang::Zh, &runs, &mut Vec::new()),
            JourneyPanel::default(),
        );
        assert!(h.query_by_label_contains("尚无记录").is_some());
    }
}
