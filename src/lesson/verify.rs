//! A lesson run end to end without a window: its probes, then every step as the window would
//! show it — a prediction's right answer, an explanation's headline in both languages, a Try
//! step's change measured before and after. `batchscope lessons --verify` prints this, and it is
//! how the lessons are tested: a headline that cannot be filled from this machine's figures fails.

use std::sync::atomic::AtomicBool;
use web_time::Instant;

use serde::Serialize;

use super::figures::{Expr, Figures, Quantity};
use super::format::{Devices, Lesson, Preset, StepKind, probe_of};
use super::measure::{Measuring, Plan};
use super::probe::{self, GpuPresence, Open, ProbeTime, Tables};
use super::verdict::Change;
use crate::device::Device;
use crate::i18n::{AuthorKey, Lang, Said};

/// A Try step measured: its figures before and after the change, each with its noise and what
/// the two show.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TryReport {
    /// Each figure that should move, judged.
    pub changes: Vec<Change>,
    /// Figures the step names that this machine did not measure (a device it lacks).
    pub missing: Vec<String>,
    /// How long the two measurements took, in seconds.
    pub seconds: f64,
}

impl TryReport {
    /// Whether the figures moved the way the lesson expects: `Some(false)` if any went the
    /// other way, `Some(true)` if every one went the expected way, `None` otherwise (too close
    /// to call, or nothing measured).
    pub fn as_expected(&self) -> Option<bool> {
        let verdicts: Vec<Option<bool>> = self.changes.iter().map(Change::as_expected).collect();
        if verdicts.contains(&Some(false)) {
            Some(false)
        } else if !verdicts.is_empty() && verdicts.iter().all(|v| *v == Some(true)) {
            Some(true)
        } else {
            None
        }
    }

    /// Every change in one sentence each, in `lang`.
    pub fn describe(&self, lang: Lang) -> Vec<String> {
        self.changes.iter().map(|c| c.describe(lang)).collect()
    }
}

/// One step as the window would show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    /// 1-based.
    pub step: usize,
    /// What the step does.
    pub kind: StepKind,
    /// An explanation's headline, English then Chinese.
    pub headline: Option<[String; 2]>,
    /// A prediction's right answer, English then Chinese.
    pub answer: Option<[String; 2]>,
    /// The answer was read from a simulated figure, not a measured one.
    pub answer_simulated: bool,
    /// Where a software adapter gave the measured answer: the simulator's for a real GPU,
    /// English then Chinese.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_real_gpu: Option<[String; 2]>,
    /// Figures a headline or a prediction needed that this machine did not measure.
    pub missing: Vec<String>,
    /// A Try step's measurement.
    pub tried: Option<TryReport>,
}

/// A lesson verified.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LessonReport {
    /// The lesson's id.
    pub id: String,
    /// What stood in for the GPU.
    pub gpu: GpuPresence,
    /// Every figure its probes measured or simulated.
    pub figures: Figures,
    /// What could not be measured, and why.
    pub notes: Vec<String>,
    /// Each step.
    pub steps: Vec<StepReport>,
    /// How long each probe took, and each Try step's two measurements.
    pub timings: Vec<ProbeTime>,
    /// Every explanation's headline was filled from this run's figures, in both languages.
    pub passed: bool,
}

/// Runs `lesson`'s probes and reports each step.
pub fn verify(lesson: &Lesson, open: Open<'_>, plan: Plan, cancel: &AtomicBool) -> LessonReport {
    let outcome = probe::run(lesson, open, plan, cancel, &mut |_| {});
    let mut notes: Vec<String> = outcome.notes.iter().map(ToString::to_string).collect();
    let mut timings = outcome.timings.clone();
    let mut tables = Tables::default();
    let mut steps = Vec::new();
    for (i, step) in lesson.steps.iter().enumerate() {
        let mut report = StepReport {
            step: i + 1,
            kind: step.kind,
            headline: None,
            answer: None,
            answer_simulated: false,
            answer_real_gpu: None,
            missing: Vec::new(),
            tried: None,
        };
        match step.kind {
            StepKind::Explain => {
                let both = [Lang::En, Lang::Zh]
                    .map(|lang| step.headline(&outcome.figures, outcome.gpu, lang));
                match both {
                    [Ok(en), Ok(zh)] => report.headline = Some([en, zh]),
                    [Err(m), _] | [_, Err(m)] => report.missing = m,
                }
            }
            StepKind::Predict => match step.answer(&outcome.figures) {
                Some((i, simulated)) => {
                    let c = &step.choices[i];
                    report.answer = Some([c.en.clone(), c.zh.clone()]);
                    report.answer_simulated = simulated;
                    report.answer_real_gpu = step
                        .real_gpu_answer(&outcome.figures, outcome.gpu)
                        .filter(|_| !simulated)
                        .map(|i| [step.choices[i].en.clone(), step.choices[i].zh.clone()]);
                }
                None => report.missing = step.figure.iter().cloned().collect(),
            },
            StepKind::Try => {
                let measuring = Measuring { plan, cancel };
                let tried = try_step(lesson, step, open, measuring, &mut tables, &mut |_| {});
                match &tried {
                    Ok(t) => timings.push(ProbeTime {
                        probe: format!("step {} (before and after)", i + 1),
                        seconds: t.seconds,
                    }),
                    Err(why) => notes.push(format!("step {}: {why}", i + 1)),
                }
                report.tried = tried.ok();
            }
            StepKind::Run | StepKind::Watch => {}
        }
        steps.push(report);
    }
    let passed = !outcome.cancelled
        && steps
            .iter()
            .all(|s| s.kind != StepKind::Explain || s.headline.is_some());
    LessonReport {
        id: lesson.id.clone(),
        gpu: outcome.gpu,
        figures: outcome.figures,
        notes,
        steps,
        timings,
        passed,
    }
}

/// Measures a Try step: the probe its figures come from, run afresh with the lesson's settings
/// and then with the step's change, one device at a time and each until its runs agree, so
/// that before and after were measured alike; each figure is then judged against its noise.
pub fn try_step(
    lesson: &Lesson,
    step: &super::format::Step,
    open: Open<'_>,
    measuring: Measuring<'_>,
    tables: &mut Tables,
    doing: &mut dyn FnMut(Option<Device>),
) -> Result<TryReport, Said> {
    let (Some(change), Some(expect)) = (&step.set, step.expect) else {
        return Err(Said::new(AuthorKey::TryWithoutParts, &[]));
    };
    let names = step.try_figures();
    let mut probes: Vec<&str> = Vec::new();
    for name in names.iter().map(|f| probe_of(f)) {
        if !probes.contains(&name) {
            probes.push(name);
        }
    }
    let started = Instant::now();
    // Only the devices the step's figures are about are measured.
    let on = |dev: &str| names.iter().any(|n| n.contains(&format!(".{dev}.")));
    let devices = match (on("cpu"), on("gpu")) {
        (true, false) => Some(Devices::Cpu),
        (false, true) => Some(Devices::Gpu),
        _ => None,
    };
    let only = Preset {
        devices,
        ..Preset::default()
    };
    let start = lesson
        .preset
        .patched(step.from.as_ref().unwrap_or(&Preset::default()));
    let (mut before, mut after) = (Figures::default(), Figures::default());
    for name in probes {
        let probe = lesson
            .probes
            .iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| Said::new(AuthorKey::NoProbeNamed, &[("name", &name)]))?;
        let base = start.patched(&probe.set).patched(&only);
        let mut run = |preset: &Preset| {
            probe::run_probe(probe, preset, open, measuring, tables, doing).map(|m| m.figures)
        };
        before.extend(run(&base)?);
        after.extend(run(&base.patched(change))?);
    }
    let mut report = TryReport {
        changes: Vec::new(),
        missing: Vec::new(),
        seconds: 0.0,
    };
    for name in names {
        let expr = Expr::parse(name)?;
        let judged = before
            .eval(&expr)
            .zip(after.eval(&expr))
            .and_then(|(b, a)| Change::judge(name, b, a, expect))
            .map(|mut change| {
                // A prediction is named with the hardware it was made for.
                let profile = format!("{}.profile", probe_of(name));
                if change.before.simulated
                    && let Some(Quantity::Text(p)) = before.get(&profile).map(|f| &f.quantity)
                {
                    change.on = Some(p.clone());
                }
                change
            });
        match judged {
            Some(change) => report.changes.push(change),
            None => report.missing.push(name.to_owned()),
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
