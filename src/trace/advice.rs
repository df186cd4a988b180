//! Plain-language findings: each rule names the number that fired it and the setting to change.
//! The texts live in the translation table (`i18n`); this module only decides what fired.

use serde::Serialize;

use super::span::Category;
use super::step::{Breakdown, StepTrace};
use crate::device::Device;
use crate::i18n::{Key, Lang};

/// Data loading above this share of the step fires [`Finding::DataLoading`].
pub const DATA_LOADING_SHARE: f64 = 0.05;
/// GPU busy below this share fires [`Finding::SmallBatch`] when the batch is at most
/// [`SMALL_BATCH`] rows.
pub const BUSY_SHARE: f64 = 0.5;
/// Largest batch that counts as small.
pub const SMALL_BATCH: usize = 64;
/// Share of steps that end in a sync from which [`Finding::SyncEveryStep`] fires.
pub const SYNC_STEP_SHARE: f64 = 0.9;

/// What the rules need to know besides the recorded steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Context {
    /// Whether the steps ran on the GPU.
    pub gpu: bool,
    /// Rows per batch.
    pub batch: usize,
    /// Data-loader worker threads (0: the training thread loads).
    pub workers: usize,
}

/// One rule that fired, with the numbers that made it fire.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Finding {
    /// The training thread waits for data for a large share of each step.
    DataLoading {
        /// `DataLoader` share of the step time, 0 to 1.
        share: f64,
        /// Loader workers now.
        workers: usize,
    },
    /// The GPU is idle for most of the step and the batch is small.
    SmallBatch {
        /// Share of the step the GPU's kernels ran, 0 to 1.
        busy_share: f64,
        /// Rows per batch now.
        batch: usize,
    },
    /// Almost every step ends by reading a value back, draining the device's queue.
    SyncEveryStep {
        /// Share of the step spent waiting in syncs, 0 to 1.
        sync_share: f64,
        /// Share of steps that synced, 0 to 1.
        synced_steps: f64,
    },
    /// Copying the batch to the device takes longer than computing on it.
    TransfersOverCompute {
        /// Memcpy time per step, in ms.
        memcpy_ms: f64,
        /// Kernel time per step, in ms.
        kernel_ms: f64,
    },
}

impl Finding {
    /// The finding in plain words, with its numbers and the setting to change.
    pub fn text(&self, lang: Lang, device: Device) -> String {
        let pct = |share: f64| format!("{:.0}", share * 100.0);
        let device_name = match device {
            Device::Cpu => "CPU",
            Device::Gpu => "GPU",
        };
        match *self {
            Finding::DataLoading { share, workers } => lang.fmt(
                Key::AdviceDataLoading,
                &[
                    ("device", &device_name),
                    ("share", &pct(share)),
                    ("workers", &workers),
                ],
            ),
            Finding::SmallBatch { busy_share, batch } => lang.fmt(
                Key::AdviceSmallBatch,
                &[("busy", &pct(busy_share)), ("batch", &batch)],
            ),
            Finding::SyncEveryStep {
                sync_share,
                synced_steps,
            } => lang.fmt(
                Key::AdviceSyncEveryStep,
                &[("synced", &pct(synced_steps)), ("sync", &pct(sync_share))],
            ),
            Finding::TransfersOverCompute {
                memcpy_ms,
                kernel_ms,
            } => lang.fmt(
                Key::AdviceTransfers,
                &[
                    ("memcpy", &format!("{memcpy_ms:.3}")),
                    ("kernel", &format!("{kernel_ms:.3}")),
                ],
            ),
        }
    }
}

/// The findings for a stretch of steps, most pressing first.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Advice {
    /// Rules that fired.
    pub findings: Vec<Finding>,
}

impl Advice {
    /// Applies every rule to the steps of `steps` whose kernels were timed.
    pub fn of(steps: &[StepTrace], context: Context) -> Self {
        let steps: Vec<&StepTrace> = steps.iter().filter(|s| s.kernels_timed).collect();
        let mut findings = Vec::new();
        if steps.is_empty() {
            return Self { findings };
        }
        let total = Breakdown::total(steps.iter().map(|s| &s.breakdown));
        let n = steps.len() as f64;
        let data = total.share(Category::DataLoader);
        if data > DATA_LOADING_SHARE {
            findings.push(Finding::DataLoading {
                share: data,
                workers: context.workers,
            });
        }
        let synced = steps.iter().filter(|s| s.synced).count() as f64 / n;
        if steps.len() >= 2 && synced >= SYNC_STEP_SHARE {
            findings.push(Finding::SyncEveryStep {
                sync_share: total.share(Category::Sync),
                synced_steps: synced,
            });
        }
        if context.gpu {
            let busy = total.busy_share();
            if busy < BUSY_SHARE && context.batch <= SMALL_BATCH {
                findings.push(Finding::SmallBatch {
                    busy_share: busy,
                    batch: context.batch,
                });
            }
            let memcpy = total.get(Category::Memcpy);
            let kernel = total.get(Category::Kernel);
            if memcpy > kernel {
                findings.push(Finding::TransfersOverCompute {
                    memcpy_ms: memcpy as f64 / n / 1e6,
                    kernel_ms: kernel as f64 / n / 1e6,
                });
            }
        }
        Self { findings }
    }

    /// Whether a rule of the same kind as `finding` fired.
    pub fn has(&self, rule: fn(&Finding) -> bool) -> bool {
        self.findings.iter().any(rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(parts_ms: [f64; 6], busy_ms: f64, synced: bool) -> StepTrace {
        let parts_ns = parts_ms.map(|ms| (ms * 1e6) as u64);
        StepTrace {
            step: 1,
            start_ns: 0,
            end_ns: parts_ns.iter().sum(),
            breakdown: Breakdown {
                parts_ns,
                wall_ns: parts_ns.iter().sum(),
                device_busy_ns: (busy_ms * 1e6) as u64,
            },
            synced,
            kernels_timed: true,
            batch_bytes: 0,
        }
    }

    const GPU: Context = Context {
        gpu: true,
        batch: 1,
        workers: 0,
    };

    #[test]
    fn each_rule_fires_on_its_number_and_not_below_it() {
        // [Kernel, Memcpy, Sync, DataLoader, CPU Exec, Other] in ms.
        let busy = step([8.0, 0.5, 0.5, 0.4, 0.4, 0.2], 8.0, false);
        assert!(Advice::of(&[busy.clone(), busy], GPU).findings.is_empty());
        // 1 ms of 10 waits for data: 10% > 5%.
        let starved = step([7.0, 0.5, 0.5, 1.0, 0.5, 0.5], 7.0, false);
        assert_eq!(
            Advice::of(&[starved], GPU).findings,
            [Finding::DataLoading {
                share: 0.1,
                workers: 0
            }]
        );
        // The GPU busy 2 ms of 10 with one row per batch; on the CPU the rule does not apply.
        let idle = step([2.0, 0.5, 0.5, 0.2, 6.6, 0.2], 2.0, false);
        assert!(
            Advice::of(std::slice::from_ref(&idle), GPU)
                .has(|f| matches!(f, Finding::SmallBatch { .. }))
        );
        let big = Context { batch: 512, ..GPU };
        assert!(
            !Advice::of(std::slice::from_ref(&idle), big)
                .has(|f| matches!(f, Finding::SmallBatch { .. }))
        );
        let cpu = Context { gpu: false, ..GPU };
        assert!(Advice::of(&[idle], cpu).findings.is_empty());
        // Copies longer than the kernels.
        let copying = step([3.0, 4.0, 0.5, 0.2, 0.3, 2.0], 3.0, false);
        assert!(
            Advice::of(&[copying], big).has(|f| matches!(f, Finding::TransfersOverCompute { .. }))
        );
        // Every step synced.
        let synced = step([8.0, 0.5, 0.5, 0.4, 0.4, 0.2], 8.0, true);
        let advice = Advice::of(&[synced.clone(), synced.clone()], big);
        assert!(advice.has(|f| matches!(f, Finding::SyncEveryStep { .. })));
        let once = Advice::of(
            &[synced, step([8.0, 0.5, 0.5, 0.4, 0.4, 0.2], 8.0, false)],
            big,
        );
        assert!(!once.has(|f| matches!(f, Finding::SyncEveryStep { .. })));
    }
}
