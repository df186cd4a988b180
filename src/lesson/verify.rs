//! A lesson run end to end without a window: its probes, then every step as the window would
//! show it — a prediction's right answer, an explanation's headline in both languages, a Try
//! step's change measured before and after. `batchscope lessons --verify` prints this, and it is
//! how the lessons are tested: a headline that cannot be filled from this machine's figures fails.

use std::sync::atomic::AtomicBool;

use serde::Serialize;

use super::figures::{Expr, Figure, Figures};
use super::format::{Direction, Lesson, StepKind};
use super::probe::{self, GpuPresence, Open, Plan, Tables};
use crate::i18n::{AuthorKey, Lang, Said};

/// A Try step measured: its figure before and after the change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TryReport {
    /// The figure that should move.
    pub figure: String,
    /// Before the change (from the lesson's probes).
    pub before: Option<Figure>,
    /// After it.
    pub after: Option<Figure>,
    /// Whether it moved the way the lesson expects (`None`: not measured on this machine).
    pub as_expected: Option<bool>,
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
    /// Every explanation's headline was filled from this run's figures, in both languages.
    pub passed: bool,
}

/// Runs `lesson`'s probes and reports each step.
pub fn verify(lesson: &Lesson, open: Open<'_>, plan: Plan, cancel: &AtomicBool) -> LessonReport {
    let outcome = probe::run(lesson, open, plan, cancel, &mut |_| {});
    let mut notes: Vec<String> = outcome.notes.iter().map(ToString::to_string).collect();
    let mut tables = Tables::default();
    let mut steps = Vec::new();
    for (i, step) in lesson.steps.iter().enumerate() {
        let mut report = StepReport {
            step: i + 1,
            kind: step.kind,
            headline: None,
            answer: None,
            answer_simulated: false,
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
                }
                None => report.missing = step.figure.iter().cloned().collect(),
            },
            StepKind::Try => {
                let tried = try_step(
                    lesson,
                    step,
                    &outcome.figures,
                    (open, plan, cancel),
                    &mut tables,
                );
                if let Err(why) = &tried {
                    notes.push(format!("step {}: {why}", i + 1));
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
        passed,
    }
}

/// Measures a Try step: runs again the probe its figure comes from, with the step's change.
pub fn try_step(
    lesson: &Lesson,
    step: &super::format::Step,
    before: &Figures,
    (open, plan, cancel): (Open<'_>, Plan, &AtomicBool),
    tables: &mut Tables,
) -> Result<TryReport, Said> {
    let (Some(figure), Some(change), Some(expect)) = (&step.figure, &step.set, step.expect) else {
        return Err(Said::new(AuthorKey::TryWithoutParts, &[]));
    };
    let expr = Expr::parse(figure)?;
    let probe_name = expr.names()[0].split('.').next().unwrap_or_default();
    let probe = lesson
        .probes
        .iter()
        .find(|p| p.name() == probe_name)
        .ok_or_else(|| Said::new(AuthorKey::NoProbeNamed, &[("name", &probe_name)]))?;
    let preset = lesson.preset.patched(&probe.set).patched(change);
    let after = probe::run_probe(probe, &preset, open, plan, cancel, tables)?.figures;
    let (before, after) = (before.eval(&expr), after.eval(&expr));
    let number = |f: &Option<Figure>| f.as_ref().and_then(|f| f.quantity.number());
    let as_expected = number(&before)
        .zip(number(&after))
        .map(|(b, a)| match expect {
            Direction::Rise => a > b,
            Direction::Fall => a < b,
        });
    Ok(TryReport {
        figure: figure.clone(),
        before,
        after,
        as_expected,
    })
}
