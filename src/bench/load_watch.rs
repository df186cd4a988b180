//! Whether the machine's speed held while a calibration or a grid check measured it: the FMA
//! peak of every kernel thread before, during (between probes) and after (see
//! `sim::steadiness`).

use crate::backend::Backend;
use crate::sim::steadiness::{
    PEAK_REPEATS, PEAK_SECONDS, Steadiness, WATCH_EVERY_S, WATCH_REPEATS, WATCH_SECONDS,
};

/// The machine's speed through a calibration or a grid check: timed when it starts, at most
/// every [`WATCH_EVERY_S`] seconds between its probes or steps, and when it ends.
pub struct LoadWatch {
    before: Vec<f64>,
    last: web_time::Instant,
    checks: Vec<Vec<f64>>,
}

impl LoadWatch {
    /// Starts watching: the FMA peak of every thread of `backend`'s pool, [`PEAK_REPEATS`]
    /// repeats of [`PEAK_SECONDS`].
    pub fn start(backend: &mut dyn Backend) -> Self {
        Self {
            before: peak_repeats(backend, PEAK_REPEATS, PEAK_SECONDS),
            last: web_time::Instant::now(),
            checks: Vec::new(),
        }
    }

    /// Times the FMA peak of every thread of the pool it is called in ([`WATCH_REPEATS`]
    /// repeats of [`WATCH_SECONDS`]) when the last check is [`WATCH_EVERY_S`] old.
    pub fn look(&mut self) {
        if self.last.elapsed().as_secs_f64() < WATCH_EVERY_S {
            return;
        }
        self.checks.push(repeats(WATCH_REPEATS, WATCH_SECONDS));
        self.last = web_time::Instant::now();
    }

    /// How the speed went: the peak when it started, the checks made between, and the peak
    /// now, timed as at the start.
    pub fn finish(self, backend: &mut dyn Backend) -> Steadiness {
        let after = peak_repeats(backend, PEAK_REPEATS, PEAK_SECONDS);
        Steadiness::from_repeats(&self.before, &after).with_checks_during(&self.checks)
    }
}

/// The FMA peak of every thread of the backend's pool at once (a GPU backend's: the host's
/// threads), `count` repeats of `seconds`, GFLOP/s each.
fn peak_repeats(backend: &mut dyn Backend, count: usize, seconds: f64) -> Vec<f64> {
    let mut speeds = Vec::new();
    backend.enter(&mut |_| speeds = repeats(count, seconds));
    speeds
}

/// The FMA peak of every thread of the pool it is called in, `count` repeats of `seconds`.
fn repeats(count: usize, seconds: f64) -> Vec<f64> {
    (0..count)
        .map(|_| {
            rayon::broadcast(|_| super::peak::measure(seconds).gflop_per_s)
                .iter()
                .sum()
        })
        .collect()
}
