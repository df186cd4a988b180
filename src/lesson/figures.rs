//! The figures a lesson's probes measured, and the headlines filled from them.
//!
//! A figure has a name (`speed.gpu.samples_per_s`: the probe, the device, the quantity), a value
//! with its unit, and whether it was measured or simulated. A headline names figures in braces,
//! `{speed.speedup}`, or the ratio of two, `{simulate.samples_per_s / speed.cpu.samples_per_s}`;
//! filling it renders each in the reader's language and marks every simulated one as such, so a
//! lesson's text cannot pass a prediction off as a measurement. A headline whose figures were not
//! all measured is not filled at all: no number is ever written in its place.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::i18n::{AuthorKey, Lang, LessonKey, Said};
use crate::units::{format_bytes, format_ms, format_rate, grouped};

/// A value and its unit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "unit", content = "value", rename_all = "snake_case")]
pub enum Quantity {
    /// Training samples per second.
    SamplesPerS(f64),
    /// A duration in ms.
    Ms(f64),
    /// A size in bytes.
    Bytes(f64),
    /// A share of a whole, 0 to 1.
    Share(f64),
    /// One quantity over another of the same unit.
    Ratio(f64),
    /// A plain number (a batch size, a count).
    Number(f64),
    /// Energy in joules.
    Joules(f64),
    /// A name (a device, an adapter, a profile).
    Text(String),
}

impl Quantity {
    /// The number, where the quantity has one.
    pub fn number(&self) -> Option<f64> {
        match *self {
            Quantity::SamplesPerS(x)
            | Quantity::Ms(x)
            | Quantity::Bytes(x)
            | Quantity::Share(x)
            | Quantity::Ratio(x)
            | Quantity::Number(x)
            | Quantity::Joules(x) => Some(x),
            Quantity::Text(_) => None,
        }
    }

    /// The value as a reader reads it in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Quantity::SamplesPerS(x) => {
                format!(
                    "{} {}",
                    format_rate(*x),
                    lang.tr(LessonKey::SamplesPerSecondUnit)
                )
            }
            Quantity::Ms(x) => format_ms(*x),
            Quantity::Bytes(x) => format_bytes(x.max(0.0) as u64),
            Quantity::Share(x) if *x <= 0.0 => "0%".to_owned(),
            // A small share keeps two significant digits: 0.0013% is not "0.0%".
            Quantity::Share(x) if *x < 0.001 => format!("{}%", significant(100.0 * x)),
            Quantity::Share(x) if *x < 0.1 => format!("{:.1}%", 100.0 * x),
            Quantity::Share(x) => format!("{:.0}%", 100.0 * x),
            Quantity::Ratio(x) => format!("{}×", significant(*x)),
            Quantity::Number(x) if x.fract() == 0.0 && x.abs() < 1e15 => grouped(x.abs() as u64),
            Quantity::Number(x) => significant(*x),
            Quantity::Joules(x) => crate::units::format_joules(*x),
            Quantity::Text(s) => s.clone(),
        }
    }
}

/// Two or three significant digits: `0.052`, `1.3`, `12`, `140`.
fn significant(x: f64) -> String {
    let a = x.abs();
    // Scientific only where plain digits would run long (a lesson's figures never do).
    if !x.is_finite() || (a != 0.0 && !(1e-6..1e9).contains(&a)) {
        crate::units::readable(x)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        // Two significant digits below 1.
        let digits = (-a.log10()).ceil().max(1.0) as usize + 1;
        format!("{x:.digits$}")
    }
}

/// A measured or simulated value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// The value (for a figure measured over several runs, their median).
    #[serde(flatten)]
    pub quantity: Quantity,
    /// Predicted by the simulator, not measured.
    pub simulated: bool,
    /// Estimated from a rated figure, not measured (energy where no counter can be read).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// How much the runs it was measured over disagreed: their interquartile range, in the
    /// value's own unit (0 for an exact count such as bytes; absent where it was measured once,
    /// for a name, and for a prediction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iqr: Option<f64>,
}

impl Figure {
    /// The interquartile range over the value (`None` where there is no spread or no value).
    pub fn relative_iqr(&self) -> Option<f64> {
        let x = self.quantity.number()?.abs();
        let iqr = self.iqr?;
        if x > 0.0 {
            Some(iqr / x)
        } else {
            (iqr == 0.0).then_some(0.0)
        }
    }
}

/// The figures of one run of a lesson's probes, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Figures(BTreeMap<String, Figure>);

impl Figures {
    /// Records a measured figure (or a name: an adapter's, a profile's).
    pub fn measured(&mut self, name: impl Into<String>, quantity: Quantity) {
        self.0.insert(
            name.into(),
            Figure {
                quantity,
                simulated: false,
                estimated: false,
                iqr: None,
            },
        );
    }

    /// Records a counted figure (bytes, kernels, values lost): the same every run, so its
    /// spread is zero and a change of it is never noise.
    pub fn counted(&mut self, name: impl Into<String>, quantity: Quantity) {
        self.measured_with_iqr(name, quantity, 0.0);
    }

    /// Records a figure measured over several runs: their median and interquartile range.
    pub fn measured_with_iqr(&mut self, name: impl Into<String>, quantity: Quantity, iqr: f64) {
        self.0.insert(
            name.into(),
            Figure {
                quantity,
                simulated: false,
                estimated: false,
                iqr: Some(iqr),
            },
        );
    }

    /// Records a simulated figure.
    pub fn simulated(&mut self, name: impl Into<String>, quantity: Quantity) {
        self.0.insert(
            name.into(),
            Figure {
                quantity,
                simulated: true,
                estimated: false,
                iqr: None,
            },
        );
    }

    /// Records a figure estimated from a rated figure (energy without a counter), measured
    /// over several runs as [`Figures::measured_with_iqr`]'s.
    pub fn estimated_with_iqr(&mut self, name: impl Into<String>, quantity: Quantity, iqr: f64) {
        self.0.insert(
            name.into(),
            Figure {
                quantity,
                simulated: false,
                estimated: true,
                iqr: Some(iqr),
            },
        );
    }

    /// The figure named `name`.
    pub fn get(&self, name: &str) -> Option<&Figure> {
        self.0.get(name)
    }

    /// Every figure, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Figure)> {
        self.0.iter()
    }

    /// Adds `other`'s figures (its win where both have one).
    pub fn extend(&mut self, other: Figures) {
        self.0.extend(other.0);
    }

    /// What `expr` evaluates to: a figure, or the ratio of two (simulated if either is).
    pub fn eval(&self, expr: &Expr) -> Option<Figure> {
        match expr {
            Expr::Name(name) => self.get(name).cloned(),
            Expr::Ratio(a, b) => {
                let (fa, fb) = (self.get(a)?, self.get(b)?);
                let (x, y) = (fa.quantity.number()?, fb.quantity.number()?);
                // The spread of a ratio: each side's relative spread, added (an upper bound for
                // small spreads).
                let iqr = fa
                    .relative_iqr()
                    .zip(fb.relative_iqr())
                    .map(|(ra, rb)| (ra + rb) * (x / y).abs());
                (y != 0.0 && (x / y).is_finite()).then(|| Figure {
                    quantity: Quantity::Ratio(x / y),
                    simulated: fa.simulated || fb.simulated,
                    estimated: fa.estimated || fb.estimated,
                    iqr,
                })
            }
        }
    }

    /// The number `expr` evaluates to.
    pub fn number(&self, expr: &Expr) -> Option<f64> {
        self.eval(expr)?.quantity.number()
    }

    /// `template` with each placeholder replaced by its figure in `lang` (simulated ones marked
    /// as such), or the placeholders whose figures are missing. Where a template names every
    /// part of one whole (the six parts of a recorded step, the simulator's four), those parts
    /// are rounded together so that, as printed, they add up to 100%.
    pub fn fill(&self, template: &str, lang: Lang) -> Result<String, Vec<String>> {
        let wholes = self.wholes(template);
        let mut out = String::with_capacity(template.len() + 32);
        let mut missing = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                missing.push(rest[open..].to_owned());
                break;
            };
            let inner = &rest[open + 1..open + close];
            match Expr::parse(inner).ok().and_then(|e| self.eval(&e)) {
                Some(figure) => {
                    match wholes.get(inner.trim()) {
                        Some(percent) => {
                            out.push_str(&percent.to_string());
                            out.push('%');
                        }
                        None => out.push_str(&figure.quantity.render(lang)),
                    }
                    if figure.simulated {
                        out.push_str(lang.tr(LessonKey::SimulatedMark));
                    } else if figure.estimated {
                        out.push_str(lang.tr(LessonKey::EstimatedMark));
                    }
                }
                None => missing.push(inner.trim().to_owned()),
            }
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(missing)
        }
    }
}

/// Parts of a step in a breakdown probe's figures (`breakdown.gpu.kernel_share`), in
/// [`crate::trace::Category::ALL`]'s order.
pub const SHARES: [&str; 6] = [
    "kernel_share",
    "memcpy_share",
    "sync_share",
    "data_loader_share",
    "cpu_exec_share",
    "other_share",
];

/// The parts of one whole, by their names' last part: a recorded step's six categories, and the
/// simulator's split of a predicted step.
const WHOLES: [&[&str]; 2] = [
    &SHARES,
    &["copy_share", "launch_share", "compute_share", "other_share"],
];

impl Figures {
    /// The whole percentages of every whole `template` names all the parts of, rounded by the
    /// largest remainder so that they add up to 100.
    fn wholes(&self, template: &str) -> std::collections::HashMap<String, u32> {
        let mut out = std::collections::HashMap::new();
        let named = placeholders(template).unwrap_or_default();
        let prefixes: Vec<&str> = named
            .iter()
            .filter_map(|n| n.rsplit_once('.').map(|(p, _)| p))
            .collect();
        for parts in WHOLES {
            for prefix in &prefixes {
                let names: Vec<String> = parts.iter().map(|p| format!("{prefix}.{p}")).collect();
                if !names.iter().all(|n| named.contains(n)) {
                    continue;
                }
                let shares: Option<Vec<f64>> = names
                    .iter()
                    .map(|n| match self.get(n)?.quantity {
                        Quantity::Share(x) => Some(x.max(0.0) * 100.0),
                        _ => None,
                    })
                    .collect();
                let Some(shares) = shares else { continue };
                if (shares.iter().sum::<f64>() - 100.0).abs() > 1e-6 {
                    continue;
                }
                for (name, percent) in names.into_iter().zip(largest_remainder(&shares)) {
                    out.insert(name, percent);
                }
            }
        }
        out
    }
}

/// Whole numbers as close to `values` (which add up to 100) as can be while adding up to 100:
/// each rounded down, then the shortfall given to the largest remainders.
fn largest_remainder(values: &[f64]) -> Vec<u32> {
    let mut whole: Vec<u32> = values.iter().map(|v| v.floor() as u32).collect();
    let short = 100u32.saturating_sub(whole.iter().sum());
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| {
        (values[b] - values[b].floor()).total_cmp(&(values[a] - values[a].floor()))
    });
    for &i in order.iter().take(short as usize) {
        whole[i] += 1;
    }
    whole
}

/// What a placeholder computes: a figure, or the ratio of two.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A figure by name.
    Name(String),
    /// The first figure over the second.
    Ratio(String, String),
}

impl Expr {
    /// Parses `name` or `name / name`.
    pub fn parse(text: &str) -> Result<Self, Said> {
        let name = |s: &str| {
            let s = s.trim();
            let ok = !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.".contains(c));
            if ok {
                Ok(s.to_owned())
            } else {
                Err(Said::new(AuthorKey::BadPlaceholder, &[("text", &text)]))
            }
        };
        match text.split_once('/') {
            Some((a, b)) => Ok(Expr::Ratio(name(a)?, name(b)?)),
            None => Ok(Expr::Name(name(text)?)),
        }
    }

    /// The figure names it reads.
    pub fn names(&self) -> Vec<&str> {
        match self {
            Expr::Name(a) => vec![a],
            Expr::Ratio(a, b) => vec![a, b],
        }
    }
}

/// The placeholders of `text`, checked to be well formed.
pub fn placeholders(text: &str) -> Result<Vec<String>, Said> {
    let wrong = |key| Err(Said::new(key, &[("text", &text)]));
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return wrong(AuthorKey::CloseWithoutOpen);
        }
        let Some(close) = rest[open + 1..].find(['{', '}']) else {
            return wrong(AuthorKey::OpenWithoutClose);
        };
        let inner = &rest[open + 1..open + 1 + close];
        if rest[open + 1 + close..].starts_with('{') {
            return wrong(AuthorKey::BraceInside);
        }
        Expr::parse(inner)?;
        found.push(inner.trim().to_owned());
        rest = &rest[open + close + 2..];
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Figures {
        let mut f = Figures::default();
        f.measured("speed.cpu.samples_per_s", Quantity::SamplesPerS(70_000.0));
        f.measured("speed.gpu.samples_per_s", Quantity::SamplesPerS(1_000.0));
        f.simulated("simulate.samples_per_s", Quantity::SamplesPerS(2_100_000.0));
        f
    }

    #[test]
    fn a_headline_is_filled_from_figures_and_marks_the_simulated_ones() {
        let f = figures();
        let en = f
            .fill(
                "CPU {speed.cpu.samples_per_s}: {speed.cpu.samples_per_s / speed.gpu.samples_per_s} the GPU's; an H100 {simulate.samples_per_s / speed.cpu.samples_per_s}.",
                Lang::En,
            )
            .expect("filled");
        assert_eq!(
            en,
            "CPU 70.0 k samples/s: 70.0× the GPU's; an H100 30.0× (simulated)."
        );
        let zh = f
            .fill("模拟 {simulate.samples_per_s}", Lang::Zh)
            .expect("filled");
        assert_eq!(zh, "模拟 2.10 M 样本/秒（模拟）");
    }

    /// An estimated figure (energy without a counter) is marked as estimated in both
    /// languages, and so is a ratio it enters; a measured one is not marked.
    #[test]
    fn an_estimated_figure_is_marked_as_such() {
        let mut f = Figures::default();
        f.estimated_with_iqr("speed.cpu.energy_j", Quantity::Joules(0.0125), 0.0);
        f.measured_with_iqr("speed.gpu.energy_j", Quantity::Joules(0.025), 0.0);
        let template =
            "{speed.cpu.energy_j}, {speed.gpu.energy_j}, {speed.gpu.energy_j / speed.cpu.energy_j}";
        assert_eq!(
            f.fill(template, Lang::En).expect("filled"),
            "12.50 mJ (estimated), 25.00 mJ, 2.00× (estimated)"
        );
        assert_eq!(
            f.fill("{speed.cpu.energy_j}", Lang::Zh).expect("filled"),
            "12.50 mJ（估算）"
        );
    }

    #[test]
    fn a_missing_figure_leaves_the_headline_unfilled() {
        let f = figures();
        let missing = f
            .fill(
                "{speed.gpu.step_ms} and {speed.cpu.samples_per_s}",
                Lang::En,
            )
            .expect_err("a figure is missing");
        assert_eq!(missing, vec!["speed.gpu.step_ms".to_owned()]);
        // A ratio over zero is missing too, never infinite.
        let mut f = Figures::default();
        f.measured("a.x", Quantity::Number(1.0));
        f.measured("a.y", Quantity::Number(0.0));
        assert!(f.fill("{a.x / a.y}", Lang::En).is_err());
    }

    #[test]
    fn placeholders_are_checked_for_shape() {
        assert_eq!(
            placeholders("a {x.y} b {p.q / r.s}").expect("fine"),
            vec!["x.y".to_owned(), "p.q / r.s".to_owned()]
        );
        for bad in ["{x", "x}", "{a {b}}", "{Caps}", "{a / b / c}", "{}"] {
            assert!(placeholders(bad).is_err(), "{bad}");
        }
    }

    /// Named all together, the parts of one whole are printed so that they add up to 100%.
    #[test]
    fn the_parts_of_a_whole_add_up_to_100_percent_as_printed() {
        let mut f = Figures::default();
        for (part, x) in [
            ("copy_share", 0.216),
            ("launch_share", 0.335),
            ("compute_share", 0.314),
            ("other_share", 0.135),
        ] {
            f.simulated(format!("sim.{part}"), Quantity::Share(x));
        }
        let text = f
            .fill(
                "{sim.copy_share} {sim.launch_share} {sim.compute_share} {sim.other_share}",
                Lang::En,
            )
            .expect("filled");
        let sum: u32 = text
            .split_whitespace()
            .filter_map(|w| w.split('%').next()?.parse::<u32>().ok())
            .sum();
        assert_eq!(sum, 100, "{text}");
        // A part named alone keeps its own rounding.
        assert_eq!(
            f.fill("{sim.copy_share}", Lang::En).expect("filled"),
            "22% (simulated)"
        );
        assert_eq!(largest_remainder(&[33.4, 33.3, 33.3]), vec![34, 33, 33]);
    }

    #[test]
    fn numbers_keep_two_or_three_significant_digits() {
        assert_eq!(significant(0.0523), "0.052");
        assert_eq!(significant(0.5), "0.50");
        assert_eq!(significant(1.333), "1.33");
        assert_eq!(significant(12.34), "12.3");
        assert_eq!(significant(140.4), "140");
        assert_eq!(Quantity::Share(0.052).render(Lang::En), "5.2%");
        assert_eq!(Quantity::Share(0.52).render(Lang::En), "52%");
        assert_eq!(Quantity::Share(0.000_013).render(Lang::En), "0.0013%");
        assert_eq!(Quantity::Share(0.0).render(Lang::En), "0%");
        assert_eq!(Quantity::Number(1024.0).render(Lang::En), "1,024");
    }
}
