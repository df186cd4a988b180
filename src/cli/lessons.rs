//! `batchscope lessons`: the guided lessons with their titles in both languages, and with
//! `--verify` each one run headless: its probes measured, every step shown as the window would
//! show it, each headline filled from this machine's figures in English and Chinese.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;

use super::failure::Failure;
use super::output::Out;
use crate::backend::{self, GpuChoice, OpenOptions};
use crate::device::Device;
use crate::lesson::verify::{LessonReport, verify};
use crate::lesson::{Lesson, Plan, Quantity, shipped};

/// The options of `batchscope lessons`.
#[expect(
    clippy::struct_excessive_bools,
    reason = "command-line switches, one per flag: bools are what clap gives them"
)]
#[derive(Args, Debug)]
pub(super) struct LessonsArgs {
    /// Run every lesson's probes for a short time and print each step's measured headline in
    /// both languages; exit code 1 if a headline could not be filled.
    #[arg(long)]
    verify: bool,
    /// Only the lesson with this id (repeatable).
    #[arg(long = "only", value_name = "ID")]
    only: Vec<String>,
    /// A lesson file of your own, read and checked instead of the shipped lessons (repeatable).
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
    /// Measure as long as the window does (steadier figures, a few seconds a probe) instead of
    /// the short verification runs.
    #[arg(long)]
    standard: bool,
    /// Start as if there were no GPU adapter: the lessons' GPU parts use their no-GPU wording.
    #[arg(long)]
    no_gpu: bool,
    /// Print JSON, one line per lesson.
    #[arg(long)]
    json: bool,
}

/// The lessons `args` name: the shipped ones, or the user's files.
fn chosen(args: &LessonsArgs) -> Result<Vec<Lesson>, Failure> {
    let lessons = if args.files.is_empty() {
        let (lessons, errors) = shipped::lessons();
        if let Some(e) = errors.first() {
            return Err(Failure::BadInput(format!(
                "a shipped lesson cannot be read: {e}"
            )));
        }
        lessons
    } else {
        args.files
            .iter()
            .map(|path| {
                Lesson::read(path).map_err(|why| {
                    Failure::BadInput(format!("lesson file {}: {why}", path.display()))
                })
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    if let Some(id) = args
        .only
        .iter()
        .find(|id| !lessons.iter().any(|l| &l.id == *id))
    {
        let ids: Vec<&str> = lessons.iter().map(|l| l.id.as_str()).collect();
        return Err(Failure::BadInput(format!(
            "--only {id}: no such lesson; the lessons are {}",
            ids.join(", ")
        )));
    }
    Ok(lessons
        .into_iter()
        .filter(|l| args.only.is_empty() || args.only.contains(&l.id))
        .collect())
}

pub(super) fn run(out: &mut Out, args: &LessonsArgs) -> Result<(), Failure> {
    let lessons = chosen(args)?;
    if !args.verify {
        for l in &lessons {
            if args.json {
                out.json(&serde_json::json!({
                    "id": l.id,
                    "section": l.section,
                    "title": { "en": l.title.en, "zh": l.title.zh },
                    "summary": { "en": l.summary.en, "zh": l.summary.zh },
                    "steps": l.steps.len(),
                    "probes": l.probes.iter().map(crate::lesson::format::Probe::name).collect::<Vec<_>>(),
                }))?;
            } else {
                out.line(format!("{:<18} {:>2}  {}", l.id, l.section, l.title.en))?;
                out.line(format!("{:<18} {:>2}  {}", "", "", l.title.zh))?;
            }
        }
        return Ok(());
    }
    let options = OpenOptions {
        gpu: if args.no_gpu {
            GpuChoice::Unavailable(crate::i18n::Said::new(crate::i18n::ErrKey::NoGpuFlag, &[]))
        } else {
            GpuChoice::Auto
        },
        tuning: crate::app::tuning_cache_path(),
        ..OpenOptions::default()
    };
    let open = |device: Device| backend::open(device, &options);
    let plan = if args.standard {
        Plan::standard()
    } else {
        Plan::quick()
    };
    let never = AtomicBool::new(false);
    let mut failed = Vec::new();
    for lesson in &lessons {
        let report = verify(lesson, &open, plan, &never);
        if args.json {
            out.json(&report)?;
        } else {
            print_report(out, lesson, &report)?;
        }
        if !report.passed {
            failed.push(report.id.clone());
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::CheckFailed(format!(
            "{} of {} lessons could not fill every headline from this machine's figures: {}",
            failed.len(),
            lessons.len(),
            failed.join(", ")
        )))
    }
}

fn print_report(out: &mut Out, lesson: &Lesson, r: &LessonReport) -> Result<(), Failure> {
    let gpu = match r.gpu {
        crate::lesson::GpuPresence::Hardware => "a hardware GPU",
        crate::lesson::GpuPresence::Software => "a software adapter (runs on the CPU)",
        crate::lesson::GpuPresence::None => "no GPU taking part",
    };
    out.line(format!("{} — {} (with {gpu})", r.id, lesson.title.en))?;
    for s in &r.steps {
        let kind = format!("step {} {:?}", s.step, s.kind).to_lowercase();
        if let Some([en, zh]) = &s.answer {
            let source = if s.answer_simulated {
                "the simulation's"
            } else {
                "the measurement's"
            };
            out.line(format!("  {kind}: {source} answer: {en} / {zh}"))?;
            if let Some([en, zh]) = &s.answer_real_gpu {
                out.line(format!(
                    "  {kind}: the simulator's answer for a real GPU: {en} / {zh}"
                ))?;
            }
        }
        if let Some([en, zh]) = &s.headline {
            out.line(format!("  {kind}:\n    en: {en}\n    zh: {zh}"))?;
        }
        if !s.missing.is_empty() {
            out.line(format!(
                "  {kind}: not measured here: {}",
                s.missing.join(", ")
            ))?;
        }
        if let Some(t) = &s.tried {
            let verdict = match t.as_expected() {
                Some(true) => "as the lesson expects",
                Some(false) => "the OPPOSITE of what the lesson expects, on this machine",
                None => "too close to call on this machine",
            };
            out.line(format!("  {kind} ({:.1} s): {verdict}", t.seconds))?;
            for c in &t.changes {
                out.line(format!(
                    "    {} [{} -> {}, noise {}, {:?}]",
                    c.describe(crate::i18n::Lang::En),
                    c.before.quantity.render(crate::i18n::Lang::En),
                    c.after.quantity.render(crate::i18n::Lang::En),
                    c.render_noise(crate::i18n::Lang::En),
                    c.moved,
                ))?;
            }
            for m in &t.missing {
                out.line(format!("    not measured here: {m}"))?;
            }
        }
    }
    let times: Vec<String> = r
        .timings
        .iter()
        .map(|t| format!("{} {:.1} s", t.probe, t.seconds))
        .collect();
    out.line(format!("  probe times: {}", times.join(", ")))?;
    for note in &r.notes {
        out.line(format!("  note: {note}"))?;
    }
    let simulated = r.figures.iter().filter(|(_, f)| f.simulated).count();
    let texts = r
        .figures
        .iter()
        .filter(|(_, f)| matches!(f.quantity, Quantity::Text(_)))
        .count();
    out.line(format!(
        "  {}: {} figures ({} measured, {simulated} simulated, {texts} names)",
        if r.passed { "passed" } else { "FAILED" },
        r.figures.iter().count(),
        r.figures.iter().count() - simulated - texts
    ))?;
    Ok(())
}
