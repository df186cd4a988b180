//! A lesson file's checks: what serde cannot say of it — sizes, names, placeholders, and that
//! each step has what its kind needs — said to the teacher who wrote it, naming the field, the
//! step or the figure.

use super::figures::{Expr, placeholders};
use super::format::{
    Lesson, MAX_EPOCHS, MAX_FILE_BYTES, MAX_PROBES, MAX_STEPS, MAX_TEXT_CHARS, Probe, ProbeKind,
    Step, StepKind, Text,
};
use crate::files::FileKind;
use crate::i18n::{Arg, AuthorKey, Said};

impl Lesson {
    /// Reads and checks a lesson from TOML text. A TOML mistake is named by line and column,
    /// with a short excerpt (never the whole offending line, which may be a megabyte long).
    pub fn parse(text: &str) -> Result<Self, Said> {
        let lesson: Lesson = toml::from_str(text).map_err(|e| {
            let place = crate::files::Place::of(text, e.span().map_or(0, |s| s.start));
            Said::new(
                AuthorKey::NotALessonAt,
                &[
                    ("line", &place.line),
                    ("column", &place.column),
                    ("why", &crate::files::first_line(e.message())),
                    ("excerpt", &place.excerpt),
                ],
            )
        })?;
        lesson.check()?;
        Ok(lesson)
    }

    /// Reads and checks a lesson file, through the one door for a user's files: a regular file
    /// within [`MAX_FILE_BYTES`], UTF-8.
    pub fn read(path: &std::path::Path) -> Result<Self, Said> {
        debug_assert_eq!(FileKind::Lesson.budget_bytes(), MAX_FILE_BYTES);
        let text = crate::files::read_text(path, FileKind::Lesson)?;
        Self::parse(&text)
    }

    /// Checks what serde cannot: sizes, names, placeholders, and that each step has what its
    /// kind needs.
    fn check(&self) -> Result<(), Said> {
        let id_ok = !self.id.is_empty()
            && self.id.len() <= 40
            && self
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !id_ok {
            return Err(Said::new(AuthorKey::BadId, &[("id", &self.id)]));
        }
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            return Err(Said::new(
                AuthorKey::StepCount,
                &[("n", &self.steps.len()), ("max", &MAX_STEPS)],
            ));
        }
        if self.probes.len() > MAX_PROBES {
            return Err(Said::new(
                AuthorKey::ProbeCount,
                &[("n", &self.probes.len()), ("max", &MAX_PROBES)],
            ));
        }
        for (i, probe) in self.probes.iter().enumerate() {
            check_probe(probe).map_err(|e| within(AuthorKey::InProbe, i + 1, &e))?;
            if self.probes[..i].iter().any(|p| p.name() == probe.name()) {
                return Err(Said::new(
                    AuthorKey::SameProbeName,
                    &[("n", &(i + 1)), ("name", &probe.name())],
                ));
            }
        }
        check_texts(&[&self.title, &self.summary])
            .map_err(|e| Said::with(AuthorKey::InTitle, &[("why", Arg::Said(&e))]))?;
        // Every setting through the setup's own checks: a lesson cannot ask for a batch of a
        // billion, a hundred thousand layers or a learning rate that is not a number.
        super::probe::check_settings(&self.preset)
            .map_err(|e| Said::with(AuthorKey::InPreset, &[("why", Arg::Said(&e))]))?;
        for (i, probe) in self.probes.iter().enumerate() {
            super::probe::check_settings(&self.preset.patched(&probe.set))
                .map_err(|e| within(AuthorKey::InProbe, i + 1, &e))?;
        }
        let known = Known {
            names: self.producible(),
            text: self.text_figures(),
        };
        for (i, step) in self.steps.iter().enumerate() {
            check_step(step, &known).map_err(|e| within(AuthorKey::InStep, i + 1, &e))?;
            if let Some(change) = step.try_settings() {
                for probe in &self.probes {
                    let tried = self.preset.patched(&probe.set).patched(&change);
                    super::probe::check_settings(&tried)
                        .map_err(|e| within(AuthorKey::InStep, i + 1, &e))?;
                }
            }
        }
        Ok(())
    }

    /// The figures that are names, not numbers: which device was faster, a profile's or an
    /// adapter's name, a precision sweep's first and last formats. No headline divides by one.
    fn text_figures(&self) -> Vec<String> {
        let mut text: Vec<String> = super::format::CONTEXT
            .iter()
            .map(|&n| n.to_owned())
            .collect();
        for p in &self.probes {
            let name = p.name();
            let parts: &[&str] = match p.kind {
                ProbeKind::Speed => &["faster", "slower"],
                ProbeKind::Simulate => &["profile"],
                ProbeKind::Sweep
                    if p.vary
                        .as_deref()
                        .is_some_and(|v| v.starts_with("precision")) =>
                {
                    &["first", "last"]
                }
                _ => &[],
            };
            text.extend(parts.iter().map(|part| format!("{name}.{part}")));
        }
        text
    }
}

/// The figures a lesson's probes produce, and which of them are names rather than numbers.
struct Known {
    names: Vec<String>,
    text: Vec<String>,
}

fn check_probe(probe: &Probe) -> Result<(), Said> {
    let name_ok = !probe.name().is_empty()
        && probe.name().len() <= 24
        && probe
            .name()
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !name_ok {
        return Err(Said::new(
            AuthorKey::BadProbeName,
            &[("name", &probe.name())],
        ));
    }
    let converge_fields = probe.epochs.is_some() || probe.target.is_some();
    if converge_fields && probe.kind != ProbeKind::Converge {
        return Err(Said::new(
            AuthorKey::ConvergeOnly,
            &[("kind", &probe.kind.as_str())],
        ));
    }
    if probe.epochs.is_some_and(|e| e == 0 || e > MAX_EPOCHS)
        || probe.target.is_some_and(|t| !(0.0..=1.0).contains(&t))
    {
        return Err(Said::new(AuthorKey::ConvergeRange, &[("max", &MAX_EPOCHS)]));
    }
    match (probe.kind, &probe.vary, &probe.profile) {
        // The sweep's own words on its syntax (the command line's `sweep --vary` shares them).
        (ProbeKind::Sweep, Some(vary), None) => crate::bench::sweep::Sweep::parse(vary)
            .map(drop)
            .map_err(|e| Said::new(AuthorKey::BadSweep, &[("why", &e)])),
        (ProbeKind::Sweep, ..) => Err(Said::new(AuthorKey::SweepNeedsVary, &[])),
        (ProbeKind::Simulate, None, Some(id)) => {
            let profiles = crate::sim::profile::shipped();
            if profiles.iter().any(|p| &p.id == id) {
                Ok(())
            } else {
                let ids: Vec<&str> = profiles.iter().map(|p| p.id.as_str()).collect();
                Err(Said::new(
                    AuthorKey::UnknownProfile,
                    &[("id", id), ("ids", &ids.join(", "))],
                ))
            }
        }
        (ProbeKind::Simulate, ..) => Err(Said::new(AuthorKey::SimulationNeedsProfile, &[])),
        (_, None, None) => Ok(()),
        (kind, ..) => Err(Said::new(
            AuthorKey::TakesNeither,
            &[("kind", &kind.as_str())],
        )),
    }
}

/// `why`, said of the `n`th probe or step (`key`).
fn within(key: AuthorKey, n: usize, why: &Said) -> Said {
    Said::with(key, &[("n", Arg::Plain(&n)), ("why", Arg::Said(why))])
}

fn check_texts(texts: &[&Text]) -> Result<(), Said> {
    for t in texts {
        for s in [&t.en, &t.zh] {
            if s.trim().is_empty() {
                return Err(Said::new(AuthorKey::EmptyText, &[]));
            }
            if s.chars().count() > MAX_TEXT_CHARS {
                return Err(Said::new(AuthorKey::LongText, &[("max", &MAX_TEXT_CHARS)]));
            }
        }
    }
    Ok(())
}

/// A figure expression's names are all producible.
fn check_expr(text: &str, known: &Known) -> Result<(), Said> {
    let expr = Expr::parse(text)?;
    for name in expr.names() {
        if !known.names.iter().any(|k| k == name) {
            return Err(Said::new(
                AuthorKey::NotAFigure,
                &[("name", &name), ("known", &known.names.join(", "))],
            ));
        }
        if matches!(expr, Expr::Ratio(..)) && known.text.iter().any(|t| t == name) {
            return Err(Said::new(AuthorKey::RatioOfText, &[("name", &name)]));
        }
    }
    Ok(())
}

fn check_step(step: &Step, known: &Known) -> Result<(), Said> {
    check_texts(&[&step.text])?;
    if let Some(notes) = &step.notes {
        check_texts(&[notes])?;
    }
    check_texts(&step.choices.iter().collect::<Vec<_>>())?;
    match step.kind {
        StepKind::Predict => {
            let Some(figure) = &step.figure else {
                return Err(Said::new(AuthorKey::PredictNeedsFigure, &[]));
            };
            check_expr(figure, known)?;
            if let Some(instead) = &step.without_gpu {
                check_expr(instead, known)?;
            }
            if step.choices.len() < 2 || step.choices.len() > 6 {
                return Err(Said::new(AuthorKey::PredictChoices, &[]));
            }
            if step.bounds.len() + 1 != step.choices.len() {
                return Err(Said::new(
                    AuthorKey::PredictBounds,
                    &[
                        ("choices", &step.choices.len()),
                        ("needed", &(step.choices.len() - 1)),
                        ("given", &step.bounds.len()),
                    ],
                ));
            }
            if !step.bounds.iter().all(|b| b.is_finite())
                || step.bounds.windows(2).any(|w| w[0] >= w[1])
            {
                return Err(Said::new(AuthorKey::BoundsOrder, &[]));
            }
        }
        StepKind::Explain => {
            if step.headlines.is_empty() {
                return Err(Said::new(AuthorKey::ExplainNeedsHeadline, &[]));
            }
            for h in &step.headlines {
                check_texts(&[&Text {
                    en: h.en.clone(),
                    zh: h.zh.clone(),
                }])?;
                let (en, zh) = (placeholders(&h.en)?, placeholders(&h.zh)?);
                let (mut a, mut b) = (en.clone(), zh);
                a.sort();
                a.dedup();
                b.sort();
                b.dedup();
                if a != b {
                    return Err(Said::new(
                        AuthorKey::HeadlineFiguresDiffer,
                        &[("en", &format!("{a:?}")), ("zh", &format!("{b:?}"))],
                    ));
                }
                for p in en {
                    check_expr(&p, known)?;
                }
                match (&h.figure, h.min, h.max) {
                    (None, None, None) => {}
                    (Some(f), lo, hi) if lo.is_some() || hi.is_some() => {
                        check_expr(f, known)?;
                        if lo.zip(hi).is_some_and(|(a, b)| a >= b)
                            || [lo, hi].into_iter().flatten().any(|x| !x.is_finite())
                        {
                            return Err(Said::new(AuthorKey::HeadlineMinMax, &[]));
                        }
                    }
                    _ => {
                        return Err(Said::new(AuthorKey::HeadlineCondition, &[]));
                    }
                }
            }
        }
        StepKind::Try => {
            let (Some(_), Some(_), Some(_)) = (&step.figure, &step.set, &step.expect) else {
                return Err(Said::new(AuthorKey::TryNeeds, &[]));
            };
            for figure in step.try_figures() {
                check_expr(figure, known)?;
            }
            for text in [&step.if_opposite, &step.if_too_close]
                .into_iter()
                .flatten()
            {
                check_texts(&[text])?;
            }
        }
        StepKind::Run | StepKind::Watch => {}
    }
    Ok(())
}
