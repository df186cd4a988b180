//! What would fit a memory budget: when a run does not fit, the estimator works out what the
//! same update needs as more and smaller micro-batches (gradient accumulation), so the
//! out-of-memory message can name one that fits and trains the same updates — or say that none
//! does, and what the run needs at its smallest.

use super::config::{TrainConfig, eval_rows};
use crate::backend::BackendError;
use crate::data::Dataset;
use crate::memory::FitAdvice;
use crate::sim::estimate::{self, Levers};

/// Share of the budget the estimate may take: the rest is left for what the estimator does not
/// count (the GPU pool's rounding to its block sizes, BatchScope's own buffers).
const MARGIN: f64 = 0.9;

/// What fits `budget_bytes` of the run `config` on `data`: the largest micro-batch below the
/// run's that divides its update's rows and whose estimate, with the gradients' sums, fits —
/// so that the updates are the run's own — or that none does. `None` while the leak setting is
/// on: then memory grows until it runs out at any batch size.
pub fn advise(config: &TrainConfig, data: &Dataset, budget_bytes: u64) -> Option<FitAdvice> {
    if config.pipeline.keep_graphs {
        return None;
    }
    let spec = config.model_spec(data);
    let rows = eval_rows(data);
    let update = config.effective_batch();
    let needs = |micro: usize| {
        let levers = Levers {
            micro_batches: u32::try_from(update / micro).unwrap_or(u32::MAX),
            checkpoint: config.checkpoint,
        };
        estimate::network_with(
            &spec,
            config.optimizer,
            micro,
            config.precision,
            rows,
            levers,
        )
        .total()
    };
    let fits = |bytes: u64| bytes as f64 <= budget_bytes as f64 * MARGIN;
    for micro in divisors_below(update, config.batch) {
        let estimated_bytes = needs(micro);
        if fits(estimated_bytes) {
            return Some(FitAdvice::Accumulate {
                micro,
                micro_batches: u32::try_from(update / micro).unwrap_or(u32::MAX),
                estimated_bytes,
            });
        }
    }
    Some(FitAdvice::NoBatchFits {
        estimated_bytes: needs(1),
    })
}

/// The divisors of `n` below `below`, largest first.
fn divisors_below(n: usize, below: usize) -> Vec<usize> {
    let mut found: Vec<usize> = (1..=n.isqrt())
        .filter(|d| n.is_multiple_of(*d))
        .flat_map(|d| [d, n / d])
        .filter(|&d| d < below)
        .collect();
    found.sort_unstable_by(|a, b| b.cmp(a));
    found.dedup();
    found
}

/// `error` with the advice of [`advise`] added, if it is an out-of-memory error.
pub fn with_advice(error: BackendError, config: &TrainConfig, data: &Dataset) -> BackendError {
    match error {
        BackendError::OutOfMemory(mut oom) if oom.advice.is_none() => {
            oom.advice = advise(config, data, oom.budget_bytes);
            BackendError::OutOfMemory(oom)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::DeviceMemory;
    use crate::backend::cpu::CpuBackend;
    use crate::data::source::DataSource;
    use crate::train::{Runner, Session};

    fn mnist(batch: usize, host_budget: u64) -> Session {
        let mut config = TrainConfig {
            source: DataSource::Shipped("mnist".into()),
            hidden: vec![128],
            batch,
            ..TrainConfig::default()
        };
        config.pipeline.host_budget_bytes = Some(host_budget);
        Session::new(config).expect("valid")
    }

    /// The accumulation the message names really trains within the budget, and updates as the
    /// run asked would.
    #[test]
    fn out_of_memory_names_an_accumulation_that_fits_and_it_does() {
        let mut cpu = CpuBackend::new(1).expect("pool");
        let session = mnist(1024, 8 << 20);
        let Err(error) = Runner::new(&mut cpu, &session) else {
            panic!("batch 1024 should not fit 8 MiB");
        };
        let text = error.to_string();
        let BackendError::OutOfMemory(oom) = error else {
            panic!("{text}");
        };
        let Some(FitAdvice::Accumulate {
            micro,
            micro_batches,
            ..
        }) = oom.advice
        else {
            panic!("{text}");
        };
        assert_eq!(micro * micro_batches as usize, 1024, "the same update");
        assert!(
            text.contains(&format!(
                "{micro_batches} micro-batches of {micro} would fit"
            )),
            "{text}"
        );
        let mut fitting = mnist(micro, 8 << 20);
        fitting.config.accumulate = micro_batches;
        let mut runner = Runner::new(&mut cpu, &fitting).expect("the accumulation named fits");
        runner.step(&mut cpu, true).expect("a step");
        assert_eq!(runner.batch(), 1024);
        assert!(cpu.memory().peak_allocated_bytes <= 8 << 20);
    }

    #[test]
    fn divisors_come_largest_first_and_below_the_bound() {
        assert_eq!(divisors_below(100, 100), [50, 25, 20, 10, 5, 4, 2, 1]);
        assert_eq!(
            divisors_below(1024, 512),
            [256, 128, 64, 32, 16, 8, 4, 2, 1]
        );
        assert_eq!(divisors_below(49, 10), [7, 1]);
        assert!(divisors_below(1, 1).is_empty());
    }

    #[test]
    fn where_no_batch_fits_the_message_says_so_and_what_would() {
        let mut cpu = CpuBackend::new(1).expect("pool");
        // 784 × 128 weights alone take 0.4 MB, with Adam 1.6 MB.
        let session = mnist(64, 1 << 20);
        let text = Runner::new(&mut cpu, &session)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(text.contains("No batch size fits"), "{text}");
        assert!(
            text.contains("Use fewer or narrower layers, or a budget above"),
            "{text}"
        );
    }
}
