//! Whether the machine's speed held while a calibration or a grid check measured it: the FMA
//! peak of every kernel thread before, during (between probes) and after (see
//! `sim::steadiness`).

use crate::backend::Backend;
use crate::sim::steadiness::{
    PEAK_REPEATS, PEAK_SECONDS, Steadiness, WATCH_EVERY_S, WATCH_REPEATS, WATCH_SECONDS,
};

/// Checks of the machine's speed between a calibration's probes or a grid's steps, at most
/// every [`WATCH_EVERY_S`] seconds (see `sim::steadiness`).
pub struct LoadWatch {
    last: web_time::Instant,
    checks: Vec<Vec<f64>>,
}

impl LoadWatch {
    pub fn new() -> Self {
        Self {
            last: web_time::Instant::now(),
            checks: Vec::new(),
        }
    }

    /// Times the FMA peak of every thread of the pool it is called in (the median of
    /// [`WATCH_REPEATS`] short repeats) when the last check is [`WATCH_EVERY_S`] old.
    pub fn look(&mut self) {
        if self.last.elapsed().as_secs_f64() < WATCH_EVERY_S {
            return;
        }
        let check = (0..WATCH_REPEATS)
            .map(|_| {
                rayon::broadcast(|_| super::peak::measure(WATCH_SECONDS).gflop_per_s)
                    .iter()
                    .sum()
            })
            .collect();
        self.checks.push(check);
        self.last = web_time::Instant::now();
    }

    /// How the speed went: the peaks `before` and `after` (see [`peak_repeats`]) and the
    /// checks made between.
    pub fn steadiness(&self, before: &[f64], after: &[f64]) -> Steadiness {
        Steadiness::from_repeats(before, after).with_checks_during(&self.checks)
    }
}

impl Default for LoadWatch {
    fn default() -> Self {
        Self::new()
    }
}

/// The FMA peak of every thread of the backend's pool at once (a GPU backend's: the host's
/// threads), [`PEAK_REPEATS`] times, GFLOP/s each.
pub fn peak_repeats(backend: &mut dyn Backend) -> Vec<f64> {
    let mut speeds = Vec::new();
    backend.enter(&mut |_| {
        speeds = (0..PEAK_REPEATS)
            .map(|_| {
                rayon::broadcast(|_| super::peak::measure(PEAK_SECONDS).gflop_per_s)
                    .iter()
                    .sum()
            })
            .collect();
    });
    speeds
}
