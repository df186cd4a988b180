//! What would fit a memory budget: when a run does not fit, the estimator works out what the
//! same run needs at smaller batch sizes, so the out-of-memory message can name one that fits —
//! or say that none does, and what the run needs at its smallest.

use super::config::{TrainConfig, eval_rows};
use crate::backend::BackendError;
use crate::data::Dataset;
use crate::memory::FitAdvice;
use crate::sim::estimate;

/// Share of the budget the estimate may take: the rest is left for what the estimator does not
/// count (the GPU pool's rounding to its block sizes, BatchScope's own buffers).
const MARGIN: f64 = 0.9;

/// What fits `budget_bytes` of the run `config` on `data`: the largest of its batch size halved
/// (and halved again, down to 1) whose estimate fits, or that none does. `None` while the leak
/// setting is on: then memory grows until it runs out at any batch size.
pub fn advise(config: &TrainConfig, data: &Dataset, budget_bytes: u64) -> Option<FitAdvice> {
    if config.pipeline.keep_graphs {
        return None;
    }
    let spec = config.model_spec(data);
    let rows = eval_rows(data);
    let needs = |batch: usize| {
        estimate::network(&spec, config.optimizer, batch, config.precision, rows).total()
    };
    let fits = |bytes: u64| bytes as f64 <= budget_bytes as f64 * MARGIN;
    let mut batch = config.batch / 2;
    while batch >= 1 {
        let estimated_bytes = needs(batch);
        if fits(estimated_bytes) {
            return Some(FitAdvice::SmallerBatch {
                batch,
                estimated_bytes,
            });
        }
        batch /= 2;
    }
    Some(FitAdvice::NoBatchFits {
        estimated_bytes: needs(1),
    })
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

    /// The batch the message names really trains within the budget.
    #[test]
    fn out_of_memory_names_a_batch_that_fits_and_it_does() {
        let mut cpu = CpuBackend::new(1).expect("pool");
        let session = mnist(1024, 8 << 20);
        let Err(error) = Runner::new(&mut cpu, &session) else {
            panic!("batch 1024 should not fit 8 MiB");
        };
        let text = error.to_string();
        let BackendError::OutOfMemory(oom) = error else {
            panic!("{text}");
        };
        let Some(FitAdvice::SmallerBatch { batch, .. }) = oom.advice else {
            panic!("{text}");
        };
        assert!(
            text.contains(&format!("A batch size of {batch} would fit")),
            "{text}"
        );
        drop(Runner::new(&mut cpu, &mnist(batch, 8 << 20)).expect("the batch named fits"));
        assert!(cpu.memory().peak_allocated_bytes <= 8 << 20);
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
