//! Whether the machine's speed held while a calibration measured it. A calibration probes for
//! a minute or more; a build, a test run or a browser tab starting meanwhile slows every probe
//! after it, and a profile fitted to those probes predicts a slower machine than the one the
//! class will train on (a shared machine's error on the grid went from 6% to 23% that way). So
//! the FMA peak of every kernel thread at once is timed before the probes and after them: if it
//! moved by more than [`STEADY_WITHIN`], the profile says so wherever its predictions are shown.
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

/// The machine's FMA peak, every kernel thread at once, before and after a calibration's
/// probes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steadiness {
    /// Before the probes, GFLOP/s: the median of [`PEAK_REPEATS`].
    pub before_gflops: f64,
    /// After the probes, GFLOP/s: the median of [`PEAK_REPEATS`].
    pub after_gflops: f64,
}

impl Steadiness {
    /// From the speeds (GFLOP/s) of the peak's repeats before and after.
    pub fn from_repeats(before: &[f64], after: &[f64]) -> Self {
        let median = |speeds: &[f64]| {
            let mut sorted = speeds.to_vec();
            sorted.sort_by(f64::total_cmp);
            super::curve_fit::median(&sorted)
        };
        Self {
            before_gflops: median(before),
            after_gflops: median(after),
        }
    }

    /// How much the peak moved: after over before, less one (−0.2: a fifth slower after).
    pub fn change(&self) -> f64 {
        if self.before_gflops > 0.0 {
            self.after_gflops / self.before_gflops - 1.0
        } else {
            f64::INFINITY
        }
    }

    /// Whether the machine's speed held: the peak moved by at most [`STEADY_WITHIN`] either
    /// way (faster after is load that ended during the probes).
    pub fn steady(&self) -> bool {
        self.change().abs() <= STEADY_WITHIN
    }
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
        lang.fmt(
            key,
            &[
                ("before", &format!("{:.1}", self.before_gflops)),
                ("after", &format!("{:.1}", self.after_gflops)),
                ("change", &format!("{:+.0}%", self.change() * 100.0)),
            ],
        )
    }
}

impl Steadiness {
    /// That the machine's speed moved during a grid check, in `lang` (for a check whose
    /// peak did move).
    pub fn said_of_check(&self, lang: crate::i18n::Lang) -> String {
        lang.fmt(
            crate::i18n::CalKey::GridUnsteady,
            &[
                ("before", &format!("{:.1}", self.before_gflops)),
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
}
