//! Whether the machine's speed held while a calibration measured it. A calibration probes for
//! a minute or more; a build, a test run or a browser tab starting meanwhile slows every probe
//! after it, and a profile fitted to those probes predicts a slower machine than the one the
//! class will train on (a shared machine's error on the grid went from 6% to 23% that way). So
//! the FMA peak of every kernel thread at once is timed before the probes and after them: if it
//! moved by more than [`STEADY_WITHIN`], the profile says so wherever its predictions are shown.
//!
//! A build that starts after the first timing and ends before the last slows the probes between
//! and leaves both ends alike, so the peak is also checked during the probes, every
//! [`WATCH_EVERY_S`] seconds (the median of [`WATCH_REPEATS`] shorter repeats), and the slowest
//! of those checks counts as well.
//!
//! Each side takes the median of [`PEAK_REPEATS`] repeats of a tenth of a second: a burst that
//! slowed one repeat is left out, and load that lasts is not. (The fastest repeat would hide
//! load: measured here, three busy processes on two cores left the fastest 10 ms repeat at the
//! quiet machine's speed, as a short probe fits between two of the scheduler's switches.) Every
//! thread at once, because one busy process on a two-core machine slows the calibration's
//! two-thread probes and leaves a one-thread probe alone.

use serde::{Deserialize, Serialize};

/// The largest change of the FMA peak between before and after that counts as a steady
/// machine: the peak's own repeats on a quiet machine agree within a few percent.
pub const STEADY_WITHIN: f64 = 0.10;

/// Repeats of the peak probe on each side; their median counts.
pub const PEAK_REPEATS: usize = 5;

/// Seconds each repeat of the peak probe runs.
pub const PEAK_SECONDS: f64 = 0.1;

/// Seconds between two checks of the peak during the probes.
pub const WATCH_EVERY_S: f64 = 2.0;

/// Repeats of each check during the probes, of [`WATCH_SECONDS`] each; their median counts.
pub const WATCH_REPEATS: usize = 3;

/// Seconds each repeat of a check during the probes runs.
pub const WATCH_SECONDS: f64 = 0.05;

/// The machine's FMA peak, every kernel thread at once, before and after a calibration's
/// probes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steadiness {
    /// Before the probes, GFLOP/s: the median of [`PEAK_REPEATS`].
    pub before_gflops: f64,
    /// After the probes, GFLOP/s: the median of [`PEAK_REPEATS`].
    pub after_gflops: f64,
    /// The slowest check during the probes, GFLOP/s (each the median of [`WATCH_REPEATS`]);
    /// none where none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_during_gflops: Option<f64>,
}

impl Steadiness {
    /// From the speeds (GFLOP/s) of the peak's repeats before and after.
    pub fn from_repeats(before: &[f64], after: &[f64]) -> Self {
        Self {
            before_gflops: median(before),
            after_gflops: median(after),
            slowest_during_gflops: None,
        }
    }

    /// With the checks made during the probes, each the speeds of its repeats.
    #[must_use]
    pub fn with_checks_during(self, checks: &[Vec<f64>]) -> Self {
        let slowest = checks
            .iter()
            .map(|c| median(c))
            .fold(f64::INFINITY, f64::min);
        Self {
            slowest_during_gflops: slowest.is_finite().then_some(slowest),
            ..self
        }
    }

    /// The lowest peak seen: before, during or after.
    pub fn lowest_gflops(&self) -> f64 {
        let during = self.slowest_during_gflops.unwrap_or(f64::INFINITY);
        self.before_gflops.min(self.after_gflops).min(during)
    }

    /// How much the peak moved from before: after, or the slowest check during, whichever is
    /// farther, over before, less one (−0.2: a fifth slower).
    pub fn change(&self) -> f64 {
        if self.before_gflops <= 0.0 {
            return f64::INFINITY;
        }
        let after = self.after_gflops / self.before_gflops - 1.0;
        let during = self
            .slowest_during_gflops
            .map_or(0.0, |s| s / self.before_gflops - 1.0);
        if during.abs() > after.abs() {
            during
        } else {
            after
        }
    }

    /// Whether the machine's speed held: the peak moved by at most [`STEADY_WITHIN`] either
    /// way, after the probes and at every check during them (faster after is load that ended
    /// during the probes).
    pub fn steady(&self) -> bool {
        self.change().abs() <= STEADY_WITHIN
    }
}

/// The median of `speeds` (NaN for none).
fn median(speeds: &[f64]) -> f64 {
    let mut sorted = speeds.to_vec();
    sorted.sort_by(f64::total_cmp);
    super::curve_fit::median(&sorted)
}

impl Steadiness {
    /// What it means for the profile's predictions, in `lang`: a warning when the machine's
    /// speed moved, a note that it held otherwise.
    pub fn said(&self, lang: crate::i18n::Lang) -> String {
        let key = if self.steady() {
            crate::i18n::CalKey::Steady
        } else {
            crate::i18n::CalKey::Unsteady
        };
        self.said_as(key, lang)
    }

    /// That the machine's speed moved during a grid check, in `lang` (for a check whose
    /// peak did move).
    pub fn said_of_check(&self, lang: crate::i18n::Lang) -> String {
        self.said_as(crate::i18n::CalKey::GridUnsteady, lang)
    }

    /// The message `key` in `lang`, filled with the peaks and the change.
    fn said_as(&self, key: crate::i18n::CalKey, lang: crate::i18n::Lang) -> String {
        lang.fmt(
            key,
            &[
                ("before", &format!("{:.1}", self.before_gflops)),
                ("lowest", &format!("{:.1}", self.lowest_gflops())),
                ("after", &format!("{:.1}", self.after_gflops)),
                ("change", &format!("{:+.0}%", self.change() * 100.0)),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Synthetic probe timings: a peak that moved by a fifth is caught either way; one slowed
    /// repeat among fast ones, or a drift of a few percent, is not.
    #[test]
    fn a_peak_that_moved_by_a_fifth_is_caught_and_noise_is_not() {
        let quiet = [98.0, 100.0, 99.5, 97.0, 100.0];
        // Load that lasts, with one repeat that fell between the other work's turns.
        let slowed = [80.0, 79.0, 99.5, 78.5, 79.6];
        let moved = Steadiness::from_repeats(&quiet, &slowed);
        assert!((moved.change() + 0.2).abs() < 1e-9, "{moved:?}");
        assert!(!moved.steady());
        let recovered = Steadiness::from_repeats(&slowed, &quiet);
        assert!(
            !recovered.steady(),
            "load that ended during the probes is caught too"
        );
        let burst = [100.0, 55.0, 99.5, 100.0, 60.0];
        assert!(
            Steadiness::from_repeats(&quiet, &burst).steady(),
            "one slowed repeat"
        );
        let drift = [96.0, 95.5, 96.0, 94.0, 95.0];
        assert!(
            Steadiness::from_repeats(&quiet, &drift).steady(),
            "4% is noise"
        );
        assert!(
            !Steadiness::from_repeats(&[], &quiet).steady(),
            "no peak before"
        );
        let said = moved.said(crate::i18n::Lang::En);
        assert!(
            said.contains("99.5 GFLOP/s before") && said.contains("(-20%)"),
            "{said}"
        );
        assert!(moved.said(crate::i18n::Lang::Zh).contains("重新校准"));
    }

    /// Load that started after the first timing and ended before the last leaves both ends
    /// alike: a check during the probes that fell by a fifth is caught, and said.
    #[test]
    fn a_dip_between_before_and_after_is_caught_by_the_checks_during() {
        let quiet = [98.0, 100.0, 99.5, 97.0, 100.0];
        let ends = Steadiness::from_repeats(&quiet, &quiet);
        assert!(ends.steady());
        let checks = vec![
            vec![99.0, 98.0, 99.5],
            vec![80.0, 79.0, 98.0],
            vec![99.0; 3],
        ];
        let dipped = ends.with_checks_during(&checks);
        assert_eq!(dipped.slowest_during_gflops, Some(80.0));
        assert!((dipped.change() + 0.2).abs() < 0.01, "{dipped:?}");
        assert!(!dipped.steady());
        let said = dipped.said(crate::i18n::Lang::En);
        assert!(said.contains("80.0 at its lowest"), "{said}");
        assert!(dipped.said(crate::i18n::Lang::Zh).contains("期间最低 80.0"));
        // Checks that held, or none at all, leave a steady machine steady.
        assert!(ends.with_checks_during(&[vec![97.0, 99.0, 98.0]]).steady());
        assert_eq!(ends.with_checks_during(&[]).slowest_during_gflops, None);
    }
}
