//! A lesson being followed in the window: where the user is, what they predicted, what the
//! probes measured, and what each Try step's change did. The window's state holds one of these;
//! the panel draws it and the app changes it.

use super::format::{Lesson, Step, StepKind};
use super::probe::{Outcome, Progress};
use super::verify::TryReport;
use crate::device::Device;

/// What the lesson's job reports.
#[derive(Debug)]
pub enum LessonNews {
    /// What the probes measure now, and the share done.
    Progress(Progress),
    /// The device a Try step's change is being measured on.
    TryDevice(Option<Device>),
    /// The probes ended.
    Measured(Box<Outcome>),
    /// A Try step's change was measured (the step, and what it did).
    Tried(usize, Result<TryReport, crate::i18n::Said>),
}

/// The lesson open in the window.
#[derive(Clone, Debug, PartialEq)]
pub struct Following {
    /// The lesson.
    pub lesson: Lesson,
    /// The step shown, 0-based.
    pub step: usize,
    /// Each step's chosen answer (predictions only).
    pub chosen: Vec<Option<usize>>,
    /// What the probes measured, once they have.
    pub outcome: Option<Outcome>,
    /// The share of the probes done while they run.
    pub measuring: Option<f32>,
    /// What the probes measure now, while they run.
    pub doing: Option<Progress>,
    /// The probes wait for the training columns to stop (a software adapter's step can take
    /// a minute and cannot be cut short: its kernels are already submitted).
    pub waiting: bool,
    /// Why the probes could not start, if they could not.
    pub failed: Option<crate::i18n::Said>,
    /// Each Try step's measurement, once made.
    pub tried: Vec<Option<Result<TryReport, crate::i18n::Said>>>,
    /// The Try step being measured now, if one is.
    pub trying: Option<usize>,
    /// The device the Try step's change is being measured on.
    pub try_device: Option<Device>,
}

impl Following {
    /// Starts `lesson` at step `step` (clamped to its steps).
    pub fn new(lesson: Lesson, step: usize) -> Self {
        let n = lesson.steps.len();
        Self {
            step: step.min(n.saturating_sub(1)),
            chosen: vec![None; n],
            tried: vec![None; n],
            lesson,
            outcome: None,
            measuring: None,
            doing: None,
            waiting: false,
            failed: None,
            trying: None,
            try_device: None,
        }
    }

    /// The step shown.
    pub fn current(&self) -> &Step {
        &self.lesson.steps[self.step]
    }

    /// Moves to the next step; false at the last.
    pub fn forward(&mut self) -> bool {
        if self.step + 1 < self.lesson.steps.len() {
            self.step += 1;
            true
        } else {
            false
        }
    }

    /// Moves to the previous step; false at the first.
    pub fn back(&mut self) -> bool {
        if self.step > 0 {
            self.step -= 1;
            true
        } else {
            false
        }
    }

    /// Whether the step shown is the last.
    pub fn at_last(&self) -> bool {
        self.step + 1 == self.lesson.steps.len()
    }

    /// The lesson's own measurement of `device` at the lesson's settings — samples per second
    /// and step time from its first speed probe that changes no setting — for the columns to
    /// show beside their live figures.
    pub fn probe_rate(&self, device: Device) -> Option<(f64, f64)> {
        let outcome = self.outcome.as_ref()?;
        let probe = self.lesson.probes.iter().find(|p| {
            let same = super::format::Preset {
                devices: p.set.devices,
                ..super::format::Preset::default()
            };
            p.kind == super::format::ProbeKind::Speed && p.set == same
        })?;
        let dev = super::measure::device_name(device);
        let number = |part: &str| {
            let name = format!("{}.{dev}.{part}", probe.name());
            outcome.figures.get(&name)?.quantity.number()
        };
        Some((number("samples_per_s")?, number("step_ms")?))
    }

    /// The index of the lesson's Run step (where its probes run), if it has one.
    pub fn run_step(&self) -> Option<usize> {
        self.lesson
            .steps
            .iter()
            .position(|s| s.kind == StepKind::Run)
    }

    /// Whether the probes should start on arriving at the step shown: it is the Run step, or a
    /// later one needs figures, and nothing has been measured or is being measured.
    pub fn wants_measuring(&self) -> bool {
        let reached_run = self.run_step().is_none_or(|r| self.step >= r);
        reached_run
            && self.outcome.is_none()
            && self.measuring.is_none()
            && self.failed.is_none()
            && !self.lesson.probes.is_empty()
    }
}
