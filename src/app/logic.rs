//! `logic()`, eframe's per-frame hook, run before drawing: start what starts with the window,
//! take in what the workers and jobs reported, read the keyboard and the files dropped on the
//! window, and carry out what they ask for.

use std::io::Write as _;
use std::time::Duration;
use web_time::Instant;

use super::BatchScopeApp;
use crate::train::worker::Event;
use crate::train::{DeviceStatus, RunState};
use crate::ui::LessonCommand;
use crate::ui::UiCommand;
use crate::ui::fonts::install_style;
use crate::ui::mismatch::MismatchView;
use crate::ui::open::OpenKind;
use crate::ui::toolbar::RunButton;

impl BatchScopeApp {
    /// Takes in this frame's news and input; draws nothing.
    pub fn logic(&mut self, ctx: &egui::Context) {
        if !self.fonts_installed {
            install_style(ctx);
            self.fonts_installed = true;
        }
        if self.ctx.is_none() {
            self.ctx = Some(ctx.clone());
        }
        if self.started.is_none() {
            self.started = Some(Instant::now());
            if self.options.start_workers {
                self.start_workers();
            }
        }
        if let Some((source, after)) = self.queued_load.take() {
            self.start_load(source, after);
        }
        let events: Vec<Event> = self
            .jobs
            .workers
            .iter_mut()
            .flat_map(crate::train::handle::Worker::poll)
            .collect();
        for event in events {
            self.on_event(event);
        }
        self.poll_load();
        self.poll_comparison();
        self.poll_mismatch();
        self.start_pending_sweep();
        self.poll_sweep();
        self.start_pending_serving();
        self.poll_serving();
        self.start_pending_calibration();
        self.poll_calibration();
        self.start_pending_lesson();
        self.poll_lesson();
        self.poll_reading();
        self.poll_screenshot();
        self.state.presenter.apply(ctx);
        let mut commands = Vec::new();
        if let Some(chosen) = self.panels.opener.poll(self.state.lang) {
            commands.push(UiCommand::chosen(chosen));
        }
        if let Some(path) = self.session_pending.take() {
            commands.push(UiCommand::OpenSession(path));
        }
        if let Some(id) = self.lesson_pending.take() {
            commands.push(UiCommand::Lesson(LessonCommand::Open(id)));
        }
        self.keyboard(ctx, &mut commands);
        // Opened as data once readable: at once by path on the desktop, after reading into
        // memory in a browser's page (the opener answers then).
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        if !dropped.is_empty() {
            let notify = self.notify();
            self.panels.opener.take_dropped(&dropped, notify);
        }
        if self.autorun_pending
            && self
                .state
                .runs
                .iter()
                .all(|r| r.status != DeviceStatus::Starting)
        {
            self.autorun_pending = false;
            commands.push(UiCommand::Run);
        }
        self.run_commands(commands);
        self.exit_when_due(ctx);
    }

    /// Takes in one event of a worker: it goes to its device's run, which drops the events of
    /// runs that are over.
    pub fn on_event(&mut self, event: Event) {
        if let crate::train::worker::EventKind::Note(said) = &event.kind {
            self.state.screenshot_note = Some(said.text(self.state.lang).to_owned());
            return;
        }
        let status = matches!(
            event.kind,
            crate::train::worker::EventKind::Ready { .. }
                | crate::train::worker::EventKind::Unavailable(_)
        );
        self.state.runs[event.device as usize].apply(event);
        if status {
            // A device that cannot train shares nothing with the other.
            self.state.show_sharing();
        }
    }

    /// The keyboard: Space runs or pauses, → steps, R resets, Ctrl+O opens a file. While a
    /// lesson is open, →, Space and Page Down show its next step, ← and Page Up the previous
    /// one (a presenter's clicker sends Page Down and Page Up).
    fn keyboard(&self, ctx: &egui::Context, commands: &mut Vec<UiCommand>) {
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::O)) {
            commands.push(UiCommand::Open(OpenKind::File));
        }
        if self.panels.opener.is_open() {
            return;
        }
        if !ctx.text_edit_focused() {
            self.presenter_keys(ctx, commands);
        }
        // A lesson's keys work whatever button was clicked last (a clicked widget keeps the
        // keyboard focus); only typing into a field keeps them.
        if self.state.lesson.is_some() && !ctx.text_edit_focused() {
            let pressed = |keys: &[egui::Key]| {
                ctx.input_mut(|i| {
                    keys.iter()
                        .any(|&k| i.consume_key(egui::Modifiers::NONE, k))
                })
            };
            let next = pressed(&[egui::Key::ArrowRight, egui::Key::Space, egui::Key::PageDown]);
            let back = pressed(&[egui::Key::ArrowLeft, egui::Key::PageUp]);
            if next || back {
                // The focused widget must not take the key too (Space would click it).
                ctx.memory_mut(|m| {
                    if let Some(id) = m.focused() {
                        m.surrender_focus(id);
                    }
                });
                let command = if next {
                    LessonCommand::Advance
                } else {
                    LessonCommand::Back
                };
                commands.push(UiCommand::Lesson(command));
            }
            return;
        }
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        ctx.input(|i| {
            if i.key_pressed(egui::Key::Space) {
                // The same choice the toolbar's button offers.
                match RunButton::of(&self.state.runs) {
                    RunButton::Run => commands.push(UiCommand::Run),
                    RunButton::Pause => commands.push(UiCommand::Pause),
                    RunButton::Pausing(_) => {}
                }
            }
            if i.key_pressed(egui::Key::ArrowRight) {
                commands.push(UiCommand::Step);
            }
            if i.key_pressed(egui::Key::R) {
                commands.push(UiCommand::Reset);
            }
        });
    }

    /// F5 turns presenter mode on and off; in it, B blanks the screen, F fills it, N opens the
    /// speaker notes, Esc leaves.
    fn presenter_keys(&self, ctx: &egui::Context, commands: &mut Vec<UiCommand>) {
        let presenter = self.state.presenter;
        let pressed = |key| ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, key));
        if pressed(egui::Key::F5) {
            commands.push(UiCommand::SetPresenter(!presenter.on));
        }
        if !presenter.on {
            return;
        }
        if pressed(egui::Key::B) || (presenter.blank && ctx.input(|i| i.pointer.any_click())) {
            commands.push(UiCommand::ToggleBlank);
        }
        if pressed(egui::Key::F) {
            commands.push(UiCommand::ToggleFullscreen);
        }
        if pressed(egui::Key::N) {
            commands.push(UiCommand::ToggleSpeakerNotes);
        }
        if pressed(egui::Key::Escape) {
            commands.push(UiCommand::SetPresenter(false));
        }
    }

    /// Takes in the sweep's reports.
    fn poll_sweep(&mut self) {
        let Some(job) = self.jobs.sweep.as_mut() else {
            return;
        };
        let reports = job.poll();
        let ended = job.is_finished();
        if let Some(results) = self.state.sweep.as_mut() {
            for report in reports {
                results.apply(report);
            }
            results.ended |= ended;
        }
        if ended {
            self.jobs.sweep = None;
            self.keep_sweep();
        }
    }

    /// An ended sweep goes into the history, if it measured a point.
    pub(super) fn keep_sweep(&mut self) {
        let (Some(results), Some(session)) = (&self.state.sweep, &self.session) else {
            return;
        };
        let enabled = self.state.settings.applied_enabled;
        let entry = crate::bench::history::Entry::sweep(
            &session.config,
            &session.data.name,
            enabled,
            results,
        );
        if let Some(entry) = entry {
            self.state.history.push(entry);
        }
    }

    /// Takes in what the device-mismatch lesson found.
    fn poll_mismatch(&mut self) {
        let Some(job) = self.jobs.mismatch.as_mut() else {
            return;
        };
        for outcome in job.poll() {
            self.state.mismatch = match outcome {
                Ok(m) => MismatchView::Done(m),
                Err(why) => MismatchView::Unavailable(why),
            };
        }
        if job.is_finished() {
            if self.state.mismatch == MismatchView::Running {
                self.state.mismatch = MismatchView::Unavailable(crate::i18n::Said::new(
                    crate::i18n::ErrKey::LessonThreadEnded,
                    &[],
                ));
            }
            self.jobs.mismatch = None;
        }
    }

    /// Takes in the comparison's reports.
    fn poll_comparison(&mut self) {
        let Some(job) = self.jobs.comparison.as_mut() else {
            return;
        };
        let reports = job.poll();
        let ended = job.is_finished();
        if let Some(comparison) = self.state.comparison.as_mut() {
            for report in reports {
                comparison.apply(report);
            }
            if ended {
                comparison.ended();
            }
        }
        if ended {
            self.jobs.comparison = None;
        }
    }

    /// The window tests' `--exit-after-secs`: print what each column did, then close.
    fn exit_when_due(&mut self, ctx: &egui::Context) {
        let (Some(limit), Some(started)) = (self.options.exit_after, self.started) else {
            return;
        };
        if started.elapsed() >= limit && !self.summary_printed {
            self.summary_printed = true;
            // The window test reads this line; with its reader gone there is nothing to tell.
            let _ = writeln!(std::io::stdout(), "{}", self.summary_json());
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        } else {
            ctx.request_repaint_after(Duration::from_millis(200));
        }
    }

    /// What each column shows, as JSON (printed by `--exit-after-secs`).
    pub fn summary_json(&self) -> String {
        let columns: Vec<serde_json::Value> = self
            .state
            .runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "device": r.device,
                    "status": match &r.status {
                        _ if !r.enabled => "disabled".to_owned(),
                        DeviceStatus::Starting => "starting".to_owned(),
                        DeviceStatus::Ready { name, .. } => format!("ready: {name}"),
                        DeviceStatus::Unavailable(reason) => format!("unavailable: {reason}"),
                    },
                    "running": r.run_state != RunState::Paused,
                    "sharing": r.sharing,
                    "steps": r.steps(),
                    "samples_per_s": r.last_log.as_ref().map(|l| l.samples_per_s),
                    "train_accuracy": r.last_eval.as_ref().and_then(|e| e.train.accuracy),
                    "has_boundary": r.boundary.is_some(),
                    "error": r.error.as_ref().map(ToString::to_string),
                    "tuning_notes": r.tuning_notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
                })
            })
            .collect();
        let notes: Vec<String> = self
            .state
            .restore_notes
            .iter()
            .map(|n| n.text(crate::i18n::Lang::En))
            .collect();
        serde_json::json!({ "window": true, "columns": columns, "notes": notes }).to_string()
    }
}
