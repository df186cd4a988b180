//! Steps: where each step's wall time went (the breakdown), and the recorded steps a device keeps
//! for the timeline.

use serde::Serialize;

use super::span::{Category, Lane, Span};

/// Where one step's wall time went: each instant counted once, in [`Category`] priority order,
/// so the parts add up to the step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// Time per category, in ns, indexed like [`Category::ALL`].
    pub parts_ns: [u64; 6],
    /// The step's wall time, in ns.
    pub wall_ns: u64,
    /// Time the device's kernels were running (any of them), in ns.
    pub device_busy_ns: u64,
}

impl Breakdown {
    /// Time spent in `category`, in ns.
    pub fn get(&self, category: Category) -> u64 {
        self.parts_ns[category.index()]
    }

    /// Share of the step spent in `category`, 0 to 1.
    pub fn share(&self, category: Category) -> f64 {
        self.get(category) as f64 / self.wall_ns.max(1) as f64
    }

    /// Share of the step the device's kernels were running.
    pub fn busy_share(&self) -> f64 {
        self.device_busy_ns as f64 / self.wall_ns.max(1) as f64
    }

    /// Sums the breakdowns of several steps.
    pub fn total<'a>(steps: impl IntoIterator<Item = &'a Breakdown>) -> Breakdown {
        let mut sum = Breakdown::default();
        for b in steps {
            for (s, p) in sum.parts_ns.iter_mut().zip(b.parts_ns) {
                *s += p;
            }
            sum.wall_ns += b.wall_ns;
            sum.device_busy_ns += b.device_busy_ns;
        }
        sum
    }

    /// Splits `[start_ns, end_ns)` among `spans`: at each instant, the highest-priority category
    /// of the spans that cover it (those [`Span::in_breakdown`]), or Other when none does.
    pub fn of(start_ns: u64, end_ns: u64, spans: &[Span]) -> Breakdown {
        let wall_ns = end_ns.saturating_sub(start_ns);
        // (time, +1 or -1, category index): a sweep over the clipped span edges.
        let mut edges: Vec<(u64, i32, usize)> = Vec::with_capacity(spans.len() * 2);
        let mut busy: Vec<(u64, u64)> = Vec::new();
        for s in spans.iter().filter(|s| s.in_breakdown()) {
            let (a, b) = (s.start_ns.max(start_ns), s.end_ns().min(end_ns));
            if a >= b {
                continue;
            }
            edges.push((a, 1, s.category.index()));
            edges.push((b, -1, s.category.index()));
            if s.lane == Lane::Kernels && s.category == Category::Kernel {
                busy.push((a, b));
            }
        }
        edges.sort_unstable();
        let mut parts_ns = [0u64; 6];
        let mut active = [0i32; 6];
        let mut t = start_ns;
        for (time, delta, category) in edges {
            let top = active.iter().position(|&n| n > 0).unwrap_or(5);
            parts_ns[top] += time - t;
            t = time;
            active[category] += delta;
        }
        parts_ns[Category::Other.index()] += end_ns.max(t) - t;
        Breakdown {
            parts_ns,
            wall_ns,
            device_busy_ns: union_length(&mut busy),
        }
    }
}

/// Total length covered by the intervals.
fn union_length(intervals: &mut [(u64, u64)]) -> u64 {
    intervals.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for &(a, b) in intervals.iter() {
        current = match current {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    total + current.map_or(0, |(a, b)| b - a)
}

/// One recorded training step: its wall-clock interval on the training thread, its breakdown,
/// and what the step is made of (the journey and the timeline draw these).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepTrace {
    /// Optimizer step number (1 for the first).
    pub step: u64,
    /// Start on the training thread, ns since the epoch.
    pub start_ns: u64,
    /// End on the training thread, ns since the epoch.
    pub end_ns: u64,
    /// Where the time went.
    pub breakdown: Breakdown,
    /// Whether the step ended by reading a value back from the device.
    pub synced: bool,
    /// Whether the device's kernels were timed in this step. Where they were not (GPU kernel
    /// timing is sampled on software adapters), the breakdown does not know the Kernel time and
    /// the step is left out of the breakdown views and the advice.
    pub kernels_timed: bool,
    /// Bytes of the batch copied to the device.
    pub batch_bytes: u64,
}

/// A stretch of recorded training: the steps and every span touching them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceChunk {
    /// Completed steps, oldest first.
    pub steps: Vec<StepTrace>,
    /// Spans of those steps (and of loader work for them), in no particular order.
    pub spans: Vec<Span>,
}

/// The last steps of a device's run, kept for the timeline (oldest dropped first).
#[derive(Clone, Debug, Default)]
pub struct TraceHistory {
    /// Steps, oldest first.
    pub steps: std::collections::VecDeque<StepTrace>,
    /// Spans of the steps kept.
    pub spans: Vec<Span>,
}

impl TraceHistory {
    /// The latest steps kept by [`TraceHistory::extend`].
    pub const MAX_STEPS: usize = 400;
    /// Steps with timed kernels kept however old they are (kernel timing may be sampled, and
    /// the breakdown needs them).
    pub const MAX_TIMED_STEPS: usize = 60;

    /// Adds a chunk and forgets, with their spans, steps that are neither among the latest
    /// [`TraceHistory::MAX_STEPS`] nor among the latest [`TraceHistory::MAX_TIMED_STEPS`] with
    /// timed kernels.
    pub fn extend(&mut self, chunk: TraceChunk) {
        self.steps.extend(chunk.steps);
        self.spans.extend(chunk.spans);
        if self.steps.len() <= Self::MAX_STEPS {
            return;
        }
        let recent_from = self.steps.len() - Self::MAX_STEPS;
        let mut timed_left = Self::MAX_TIMED_STEPS;
        let mut keep = vec![false; self.steps.len()];
        for (i, s) in self.steps.iter().enumerate().rev() {
            let timed = s.kernels_timed && timed_left > 0;
            if timed {
                timed_left -= 1;
            }
            keep[i] = i >= recent_from || timed;
        }
        let mut flags = keep.into_iter();
        self.steps.retain(|_| flags.next().unwrap_or(false));
        let steps = &self.steps;
        // Steps are in order: a binary search finds whether a span's step is kept.
        self.spans
            .retain(|s| steps.binary_search_by_key(&s.step, |t| t.step).is_ok());
    }

    /// The latest `n` steps whose kernels were timed, oldest first.
    pub fn timed_steps(&self, n: usize) -> Vec<&StepTrace> {
        let mut steps: Vec<&StepTrace> = self
            .steps
            .iter()
            .rev()
            .filter(|s| s.kernels_timed)
            .take(n)
            .collect();
        steps.reverse();
        steps
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.steps.clear();
        self.spans.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::span::{Category, Clock, Lane, Span};

    fn span(lane: Lane, category: Category, start_ns: u64, end_ns: u64) -> Span {
        Span {
            lane,
            category,
            name: "t",
            start_ns,
            duration_ns: end_ns - start_ns,
            bytes: 0,
            step: 1,
            clock: Clock::Host,
        }
    }

    #[test]
    fn each_instant_counts_once_for_the_highest_priority_category() {
        // Step [0, 100): data 0–20, CPU exec 15–40, kernel 30–70 (GPU), sync 60–90.
        let spans = [
            span(Lane::Main, Category::DataLoader, 0, 20),
            span(Lane::Main, Category::CpuExec, 15, 40),
            span(Lane::Kernels, Category::Kernel, 30, 70),
            span(Lane::Sync, Category::Sync, 60, 90),
        ];
        let b = Breakdown::of(0, 100, &spans);
        // Kernel 30–70 = 40; Sync 70–90 = 20 (60–70 is kernel); DataLoader 0–20 = 20;
        // CPU Exec 20–30 = 10; Other 90–100 = 10.
        assert_eq!(b.get(Category::Kernel), 40);
        assert_eq!(b.get(Category::Sync), 20);
        assert_eq!(b.get(Category::DataLoader), 20);
        assert_eq!(b.get(Category::CpuExec), 10);
        assert_eq!(b.get(Category::Memcpy), 0);
        assert_eq!(b.get(Category::Other), 10);
        assert_eq!(b.parts_ns.iter().sum::<u64>(), b.wall_ns);
        assert_eq!(b.device_busy_ns, 40);
    }

    #[test]
    fn spans_are_clipped_to_the_step_and_loader_workers_do_not_count() {
        // A kernel running from the previous step into this one, and a worker decoding beside it.
        let spans = [
            span(Lane::Kernels, Category::Kernel, 0, 150),
            span(Lane::Kernels, Category::Kernel, 140, 160),
            span(Lane::Loader(0), Category::DataLoader, 100, 200),
        ];
        let b = Breakdown::of(100, 200, &spans);
        assert_eq!(b.get(Category::Kernel), 60);
        assert_eq!(b.get(Category::DataLoader), 0);
        assert_eq!(b.get(Category::Other), 40);
        // Overlapping kernels are busy time once.
        assert_eq!(b.device_busy_ns, 60);
        assert!((b.busy_share() - 0.6).abs() < 1e-12);
    }

    #[test]
    fn a_step_with_no_spans_is_all_other() {
        let b = Breakdown::of(10, 30, &[]);
        assert_eq!((b.get(Category::Other), b.wall_ns), (20, 20));
    }

    #[test]
    fn the_history_forgets_old_steps_and_their_spans() {
        let mut history = TraceHistory::default();
        for step in 1..=(TraceHistory::MAX_STEPS as u64 + 10) {
            let mut s = span(Lane::Main, Category::CpuExec, step * 10, step * 10 + 5);
            s.step = step;
            history.extend(TraceChunk {
                steps: vec![StepTrace {
                    step,
                    start_ns: step * 10,
                    end_ns: step * 10 + 10,
                    breakdown: Breakdown::default(),
                    synced: false,
                    kernels_timed: true,
                    batch_bytes: 0,
                }],
                spans: vec![s],
            });
        }
        assert_eq!(history.steps.len(), TraceHistory::MAX_STEPS);
        assert_eq!(history.steps.front().map(|s| s.step), Some(11));
        assert_eq!(history.spans.len(), TraceHistory::MAX_STEPS);
    }

    #[test]
    fn the_history_keeps_the_latest_timed_steps_however_old() {
        let mut history = TraceHistory::default();
        let n = TraceHistory::MAX_STEPS as u64 * 3;
        for step in 1..=n {
            let mut s = span(Lane::Main, Category::CpuExec, step * 10, step * 10 + 5);
            s.step = step;
            history.extend(TraceChunk {
                steps: vec![StepTrace {
                    step,
                    start_ns: step * 10,
                    end_ns: step * 10 + 10,
                    breakdown: Breakdown::default(),
                    synced: false,
                    // One step in 100 has its kernels timed.
                    kernels_timed: step % 100 == 0,
                    batch_bytes: 0,
                }],
                spans: vec![s],
            });
        }
        let timed = history.timed_steps(usize::MAX);
        let steps: Vec<u64> = timed.iter().map(|s| s.step).collect();
        assert_eq!(steps, (1..=12).map(|k| k * 100).collect::<Vec<u64>>());
        assert_eq!(history.steps.len(), TraceHistory::MAX_STEPS + 8);
        // Every kept step kept its span, and no other span is left.
        assert_eq!(history.spans.len(), history.steps.len());
    }
}
