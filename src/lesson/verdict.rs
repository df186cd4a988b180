//! Whether a Try step's change moved a figure, judged from the figures a reader sees.
//!
//! Before and after are each measured until their runs agree (the sweeps' rule: the
//! interquartile range under 10% of the median, or a time cap), so each carries its spread. A
//! change is called only when it is larger than the noise — the wider of the two spreads, and
//! never less than what a run-to-run drift of this machine or the rounding on screen could
//! make — and when the two figures, as printed, differ. Otherwise it is "too close to call on
//! this machine", said as such. The direction is read from the same two numbers that are
//! printed beside it, so the verdict and the figures cannot disagree.

use serde::Serialize;

use super::figures::{Figure, Quantity};
use super::format::Direction;
use crate::i18n::{Lang, LessonKey};

/// Smallest noise assumed for a timed figure, as a share of its value. Two measurements of the
/// same setting made a few seconds apart (the "before" and the "after") differ by more than
/// either one's own spread shows: the machine's clocks and caches drift between them. Two
/// percent also exceeds the rounding of every timed figure on screen (three significant
/// digits), so a called change always shows in the printed numbers.
pub const TIMED_NOISE_FLOOR: f64 = 0.02;

/// Smallest noise assumed for a share of a step, in points of a share (1 percentage point):
/// larger than the rounding of a share on screen.
pub const SHARE_NOISE_FLOOR: f64 = 0.01;

/// What the two figures show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Moved {
    /// The figure grew by more than the noise.
    Rose,
    /// The figure shrank by more than the noise.
    Fell,
    /// The change is inside the noise (or does not show in the printed figures).
    TooClose,
}

/// A figure before and after a Try step's change, and what that shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The figure's name (`speed.cpu.samples_per_s`).
    pub figure: String,
    /// Measured with the lesson's settings.
    pub before: Figure,
    /// Measured with the change made.
    pub after: Figure,
    /// The noise a change must exceed to be called, in the figure's unit.
    pub noise: f64,
    /// What the figures show.
    pub moved: Moved,
    /// Which way the lesson expected the figure to move.
    pub expected: Direction,
    /// For a simulated figure, the profile it was predicted for (a name, for the reader).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
}

impl Change {
    /// Judges `before` against `after` (see the module's comment).
    pub fn judge(figure: &str, before: Figure, after: Figure, expected: Direction) -> Option<Self> {
        let (b, a) = (before.quantity.number()?, after.quantity.number()?);
        let noise = noise(&before, b, &after, a);
        let printed_same = [Lang::En, Lang::Zh]
            .iter()
            .any(|&lang| before.quantity.render(lang) == after.quantity.render(lang));
        let moved = if (a - b).abs() <= noise || printed_same {
            Moved::TooClose
        } else if a > b {
            Moved::Rose
        } else {
            Moved::Fell
        };
        Some(Self {
            figure: figure.to_owned(),
            before,
            after,
            noise,
            moved,
            expected,
            on: None,
        })
    }

    /// Whether the figure moved the way the lesson expected (`None`: too close to call).
    pub fn as_expected(&self) -> Option<bool> {
        match (self.moved, self.expected) {
            (Moved::TooClose, _) => None,
            (Moved::Rose, Direction::Rise) | (Moved::Fell, Direction::Fall) => Some(true),
            _ => Some(false),
        }
    }

    /// The noise as a reader reads it in `lang`: points of a share, or a percentage of the
    /// larger figure; "none" for figures that come out the same every time.
    pub fn render_noise(&self, lang: Lang) -> String {
        if self.noise == 0.0 {
            let key = if self.before.simulated {
                LessonKey::NoisePredicted
            } else {
                LessonKey::NoiseCounted
            };
            return lang.tr(key).to_owned();
        }
        if matches!(self.before.quantity, Quantity::Share(_)) {
            return format!("±{:.1} pt", 100.0 * self.noise);
        }
        let number = |f: &Figure| f.quantity.number().unwrap_or_default().abs();
        let base = number(&self.before).max(number(&self.after));
        format!("±{:.1}%", 100.0 * self.noise / base.max(f64::MIN_POSITIVE))
    }

    /// The change in one sentence in `lang`: the figure in words, before → after, and what it
    /// shows against what the lesson expected.
    pub fn describe(&self, lang: Lang) -> String {
        let shown = |f: &Figure| {
            let mut text = f.quantity.render(lang);
            if f.simulated {
                text.push_str(lang.tr(LessonKey::SimulatedMark));
            }
            text
        };
        let (before, after) = (shown(&self.before), shown(&self.after));
        let mut figure = super::names::figure_label(&self.figure, lang);
        if let Some(profile) = &self.on {
            figure = lang.fmt(
                LessonKey::FigOnDevice,
                &[("part", &figure), ("device", profile)],
            );
        }
        // A sentence starts with a capital, whatever its figure's name starts with.
        if let Some(first) = figure.chars().next() {
            figure = first.to_uppercase().chain(figure.chars().skip(1)).collect();
        }
        let moved = match self.moved {
            Moved::Rose => lang.tr(LessonKey::MovedRose),
            Moved::Fell => lang.tr(LessonKey::MovedFell),
            Moved::TooClose => "",
        };
        let args: [(&str, &dyn std::fmt::Display); 5] = [
            ("figure", &figure),
            ("before", &before),
            ("after", &after),
            ("moved", &moved),
            ("noise", &self.render_noise(lang)),
        ];
        let key = match self.as_expected() {
            Some(true) => LessonKey::TryAsExpected,
            Some(false) => LessonKey::TryOpposite,
            None => LessonKey::TryTooClose,
        };
        lang.fmt(key, &args)
    }
}

/// The noise a change from `b` to `a` must exceed (see the module's comment). Counted figures
/// (a spread of exactly zero: bytes, kernels, values lost) and the simulator's predictions are
/// the same every time they are made: only a timed figure gets a floor.
fn noise(before: &Figure, b: f64, after: &Figure, a: f64) -> f64 {
    let spread = before.iqr.unwrap_or(0.0).max(after.iqr.unwrap_or(0.0));
    if is_exact(before) && is_exact(after) {
        return spread;
    }
    let floor = match before.quantity {
        Quantity::Share(_) => SHARE_NOISE_FLOOR,
        _ => TIMED_NOISE_FLOOR * b.abs().max(a.abs()),
    };
    spread.max(floor)
}

/// A figure that comes out the same every time: counted, or predicted.
fn is_exact(f: &Figure) -> bool {
    f.simulated || f.iqr == Some(0.0)
}

#[cfg(test)]
mod tests {
    use rand::{Rng as _, SeedableRng as _};

    use super::*;

    fn figure(quantity: Quantity, iqr: f64) -> Figure {
        Figure {
            quantity,
            simulated: false,
            estimated: false,
            iqr: Some(iqr),
        }
    }

    fn rate(x: f64, iqr_share: f64) -> Figure {
        figure(Quantity::SamplesPerS(x), x * iqr_share)
    }

    #[test]
    fn a_change_inside_the_noise_is_too_close_to_call() {
        let name = "speed.cpu.samples_per_s";
        // 1.00 M ± 5% → 1.04 M ± 3%: a 4% rise inside a 5% spread.
        let c = Change::judge(name, rate(1.0e6, 0.05), rate(1.04e6, 0.03), Direction::Rise)
            .expect("numbers");
        assert_eq!(c.moved, Moved::TooClose);
        assert_eq!(c.as_expected(), None);
        let en = c.describe(Lang::En);
        assert!(en.contains("Too close to call on this machine"), "{en}");
        assert!(en.contains("1.00 M samples/s → 1.04 M samples/s"), "{en}");
        assert!(en.starts_with("Samples per second on the CPU"), "{en}");
        assert!(en.contains("±4.8%"), "{en}");
        assert!(c.describe(Lang::Zh).contains("在本机上难以判断"));
        // Quiet runs (±0.1%) still do not call a 1% change: the drift between measurements.
        let c = Change::judge(
            name,
            rate(1.0e6, 0.001),
            rate(1.01e6, 0.001),
            Direction::Rise,
        )
        .expect("numbers");
        assert_eq!(c.moved, Moved::TooClose);
        // Out of the noise: called, either way.
        let c = Change::judge(name, rate(1.0e6, 0.02), rate(1.69e6, 0.02), Direction::Rise)
            .expect("numbers");
        assert_eq!((c.moved, c.as_expected()), (Moved::Rose, Some(true)));
        let c = Change::judge(name, rate(3.1e6, 0.02), rate(1.7e6, 0.02), Direction::Rise)
            .expect("numbers");
        assert_eq!((c.moved, c.as_expected()), (Moved::Fell, Some(false)));
        assert!(c.describe(Lang::En).contains("the opposite"));
    }

    #[test]
    fn a_share_is_judged_in_points_and_bytes_exactly() {
        let share = |x| figure(Quantity::Share(x), 0.004);
        // 5.5% → 44% of the step: far outside a point of noise, and the other way.
        let c = Change::judge(
            "breakdown.cpu.data_loader_share",
            share(0.055),
            share(0.44),
            Direction::Fall,
        )
        .expect("numbers");
        assert_eq!((c.moved, c.as_expected()), (Moved::Rose, Some(false)));
        assert!(c.render_noise(Lang::En).ends_with("pt"));
        let bytes = |x| figure(Quantity::Bytes(x), 0.0);
        let c = Change::judge(
            "memory.cpu.activations_bytes",
            bytes(1_048_576.0),
            bytes(4_194_304.0),
            Direction::Rise,
        )
        .expect("numbers");
        assert_eq!(c.moved, Moved::Rose);
        // A change too small to show in the printed figures is not called.
        let c = Change::judge(
            "memory.cpu.activations_bytes",
            bytes(1_048_576.0),
            bytes(1_048_600.0),
            Direction::Rise,
        )
        .expect("numbers");
        assert_eq!(c.moved, Moved::TooClose);
    }

    /// The printed number of a rendered figure, in the figure's base unit.
    fn printed(text: &str) -> f64 {
        let number: String = text
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
            .filter(|c| *c != ',')
            .collect();
        let x: f64 = number.parse().expect("a number first");
        let rest = &text[number.len()..];
        // Longer units first: " MiB" before " M".
        let scale = [
            (" GiB", 1_073_741_824.0),
            (" MiB", 1_048_576.0),
            (" KiB", 1024.0),
            (" ms", 1.0),
            (" µs", 1e-3),
            (" M", 1e6),
            (" k", 1e3),
            ("%", 0.01),
            ("×", 1.0),
        ]
        .into_iter()
        .find(|(unit, _)| rest.starts_with(unit))
        .map_or(1.0, |(_, s)| s);
        x * scale
    }

    /// Thousands of synthetic before/after pairs across every unit and size: whenever a change
    /// is called, the printed figures beside it moved the same way, and a change inside the
    /// noise is never called.
    #[test]
    fn a_verdict_never_opposes_the_figures_it_prints() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(34);
        let units: [fn(f64) -> Quantity; 6] = [
            Quantity::SamplesPerS,
            Quantity::Ms,
            Quantity::Bytes,
            |x| Quantity::Share(x.fract()),
            Quantity::Ratio,
            Quantity::Number,
        ];
        for i in 0..20_000 {
            let unit = units[i % units.len()];
            let scale = 10f64.powf(rng.random_range(-3.0..7.0));
            let b = scale * rng.random_range(0.5..2.0);
            let a = b * rng.random_range(0.8..1.25);
            let (qb, qa) = (unit(b), unit(a));
            let (nb, na) = (qb.number().expect("n"), qa.number().expect("n"));
            let (ib, ia) = (
                nb * rng.random_range(0.0..0.1),
                na * rng.random_range(0.0..0.1),
            );
            let c = Change::judge(
                "x.cpu.step_ms",
                figure(qb, ib),
                figure(qa, ia),
                Direction::Rise,
            )
            .expect("numbers");
            let (pb, pa) = (
                printed(&c.before.quantity.render(Lang::En)),
                printed(&c.after.quantity.render(Lang::En)),
            );
            match c.moved {
                Moved::Rose => assert!(pa > pb && na - nb > c.noise, "{c:?}"),
                Moved::Fell => assert!(pa < pb && nb - na > c.noise, "{c:?}"),
                Moved::TooClose => {}
            }
            if (na - nb).abs() <= ib.max(ia) {
                assert_eq!(c.moved, Moved::TooClose, "{c:?}");
            }
        }
    }
}
