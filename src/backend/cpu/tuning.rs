//! Choices between two ways of running an op, made by timing both in the first steps: whether a
//! matrix product runs on one thread or on all (per product shape), and whether a convolution
//! pass runs on the widest vectors or narrow ones (per pass, see `convolution.rs`).

use super::matmul::Layout;
use crate::backend::params::ConvShape;

/// A product's shape and layouts: the same key recurs at the same place in every step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct ShapeKey {
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) k: usize,
    pub(super) a_layout: Layout,
    pub(super) b_layout: Layout,
}

/// One pass of one convolution, as its instruction set is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct ConvKey {
    pub(super) shape: ConvShape,
    pub(super) pass: ConvPass,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum ConvPass {
    Forward,
    WeightGrad,
    InputGrad,
}

impl ConvKey {
    /// The channels the pass's vectors hold: the output's, or the input's for its gradient.
    pub(super) fn vector_channels(self) -> usize {
        match self.pass {
            ConvPass::Forward | ConvPass::WeightGrad => self.shape.channels_out,
            ConvPass::InputGrad => self.shape.channels_in,
        }
    }
}

/// Timing trials of the two ways (`false` and `true`) of running one op: for a product, one
/// thread and all threads.
///
/// Whether splitting a product pays depends on its shape as much as its size (measured here:
/// 256·784·128 ran no faster on two threads, 784·256·128 ran 1.7 times faster), so rather than a
/// size threshold each shape is timed both ways in its first steps and keeps the faster.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tuning {
    /// Fastest time seen each way, in ns.
    best_ns: [u64; 2],
    /// Trials run each way.
    trials: [u32; 2],
}

/// Trials per option before the faster one is kept.
pub(super) const TUNING_TRIALS: u32 = 3;

#[derive(Clone, Copy)]
pub(super) enum Choice {
    /// Time this call, run this way.
    Try(bool),
    /// The faster way is known.
    Decided(bool),
}

impl Choice {
    /// The way to run this call, and whether it is a trial to be timed.
    pub(super) fn way(self) -> (bool, bool) {
        match self {
            Choice::Decided(way) => (way, false),
            Choice::Try(way) => (way, true),
        }
    }
}

impl Tuning {
    pub(super) fn next(&self) -> Choice {
        match self.trials {
            [one, all] if one < TUNING_TRIALS || all < TUNING_TRIALS => Choice::Try(all < one),
            _ => Choice::Decided(self.best_ns[1] < self.best_ns[0]),
        }
    }

    pub(super) fn record(&mut self, split: bool, ns: u64) {
        let i = usize::from(split);
        self.best_ns[i] = if self.trials[i] == 0 {
            ns
        } else {
            self.best_ns[i].min(ns)
        };
        self.trials[i] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{Choice, TUNING_TRIALS, Tuning};

    #[test]
    fn tuning_tries_both_options_then_keeps_the_faster() {
        let mut t = Tuning::default();
        let mut tried = [0, 0];
        for _ in 0..2 * TUNING_TRIALS {
            let Choice::Try(split) = t.next() else {
                panic!("decided before trying both options {TUNING_TRIALS} times");
            };
            tried[usize::from(split)] += 1;
            // All threads take 60 µs, one thread 100 µs (with one slow outlier).
            let ns = if split {
                60_000
            } else if tried[0] == 1 {
                300_000
            } else {
                100_000
            };
            t.record(split, ns);
        }
        assert_eq!(tried, [TUNING_TRIALS, TUNING_TRIALS]);
        assert!(matches!(t.next(), Choice::Decided(true)));
        let mut slow_split = Tuning::default();
        for _ in 0..2 * TUNING_TRIALS {
            if let Choice::Try(split) = slow_split.next() {
                slow_split.record(split, if split { 90_000 } else { 50_000 });
            }
        }
        assert!(matches!(slow_split.next(), Choice::Decided(false)));
    }
}
