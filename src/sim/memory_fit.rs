//! Memory on a profile: does a model and batch fit in a device's memory, the largest batch that
//! does, and — for the large models — the memory per GPU of data parallelism and of `ZeRO`'s
//! three stages across N GPUs (Rajbhandari et al., "`ZeRO`: Memory Optimizations Toward Training
//! Trillion Parameter Models", 2020, §5 and figure 1). Every figure is estimated.

use serde::Serialize;

use super::estimate::{self, Estimate};
use crate::nn::{ModelSpec, OptimizerKind};
use crate::precision::Precision;

/// A model and its training, as the estimator needs them.
#[derive(Clone, Copy, Debug)]
pub struct Model<'a> {
    /// The layers and loss.
    pub spec: &'a ModelSpec,
    /// The update rule.
    pub optimizer: OptimizerKind,
    /// The number formats.
    pub precision: Precision,
    /// Rows an evaluation handles at once.
    pub eval_rows: usize,
    /// Gradient accumulation and activation checkpointing, as pulled.
    pub levers: estimate::Levers,
}

impl Model<'_> {
    /// The estimate at `batch` rows a step.
    pub fn at(&self, batch: usize) -> Estimate {
        estimate::network_with(
            self.spec,
            self.optimizer,
            batch,
            self.precision,
            self.eval_rows,
            self.levers,
        )
    }
}

/// Whether a model and batch fit in a profile's memory, and the largest batch that does.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MemoryFit {
    /// What the model needs at the batch, bytes (estimated).
    pub needs_bytes: u64,
    /// The profile's memory, bytes.
    pub capacity_bytes: u64,
    /// `needs_bytes` fits in `capacity_bytes`.
    pub fits: bool,
    /// The largest batch that fits; none when not even one row does.
    pub largest_batch: Option<usize>,
}

impl MemoryFit {
    /// `model` at `batch` rows on a device of `capacity_bytes`.
    pub fn of(model: Model<'_>, batch: usize, capacity_bytes: f64) -> Self {
        let needs_bytes = model.at(batch).total();
        Self {
            needs_bytes,
            capacity_bytes: capacity_bytes as u64,
            fits: needs_bytes as f64 <= capacity_bytes,
            largest_batch: largest_batch(model, capacity_bytes),
        }
    }
}

/// The most rows [`largest_batch`] searches: 2^40, or half the address space where that is
/// smaller (a browser's 32-bit WebAssembly).
const MOST_ROWS: usize = match 1usize.checked_shl(40) {
    Some(n) => n,
    None => usize::MAX / 2,
};

/// The largest batch whose estimate fits `capacity_bytes`, searched up to 2^40 rows (see
/// [`MOST_ROWS`]); none when not even one row does.
pub fn largest_batch(model: Model<'_>, capacity_bytes: f64) -> Option<usize> {
    let fits = |batch: usize| model.at(batch).total() as f64 <= capacity_bytes;
    if !fits(1) {
        return None;
    }
    let (mut low, mut high) = (1usize, 2usize);
    while high <= MOST_ROWS && fits(high) {
        low = high;
        high *= 2;
    }
    if high > MOST_ROWS {
        return Some(low);
    }
    // fits(low), !fits(high)
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if fits(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    Some(low)
}

/// How the model states are spread over the GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Plain data parallelism: every GPU holds everything.
    DataParallel,
    /// `ZeRO` stage 1: the optimizer state is split across the GPUs.
    Zero1,
    /// `ZeRO` stage 2: the gradients too.
    Zero2,
    /// `ZeRO` stage 3: the parameters too.
    Zero3,
}

impl Stage {
    /// All four, from the most memory per GPU to the least.
    pub const ALL: [Stage; 4] = [
        Stage::DataParallel,
        Stage::Zero1,
        Stage::Zero2,
        Stage::Zero3,
    ];
}

/// Bytes of optimizer state per parameter for mixed-precision Adam: FP32 master weights,
/// momentum and variance (the paper's K = 12).
pub const ADAM_STATE_BYTES: f64 = 12.0;

/// Bytes of model states (parameters, gradients, optimizer state; no activations) per GPU for
/// `parameters` trained with mixed-precision Adam across `gpus`, at `stage`: the paper's
/// `(2 + 2 + K)Ψ`, `2Ψ + 2Ψ + KΨ/N`, `2Ψ + (2 + K)Ψ/N` and `(2 + 2 + K)Ψ/N`.
pub fn model_states_per_gpu(parameters: u64, gpus: u32, stage: Stage) -> f64 {
    let psi = parameters as f64;
    let n = f64::from(gpus.max(1));
    let k = ADAM_STATE_BYTES;
    match stage {
        Stage::DataParallel => (2.0 + 2.0 + k) * psi,
        Stage::Zero1 => 2.0 * psi + 2.0 * psi + k * psi / n,
        Stage::Zero2 => 2.0 * psi + (2.0 + k) * psi / n,
        Stage::Zero3 => (2.0 + 2.0 + k) * psi / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_per_gpu_memory_matches_the_papers_figure_for_7_5b_parameters_on_64_gpus() {
        // Figure 1 of the paper: Ψ = 7.5 B, N = 64, K = 12: 120, 31.4, 16.6 and 1.9 GB.
        let gb = |stage| model_states_per_gpu(7_500_000_000, 64, stage) / 1e9;
        assert!((gb(Stage::DataParallel) - 120.0).abs() < 0.05);
        assert!((gb(Stage::Zero1) - 31.4).abs() < 0.05);
        assert!((gb(Stage::Zero2) - 16.6).abs() < 0.05);
        assert!((gb(Stage::Zero3) - 1.875).abs() < 0.05);
        // One GPU: every stage holds everything.
        for stage in Stage::ALL {
            assert_eq!(model_states_per_gpu(1000, 1, stage), 16_000.0);
        }
    }

    #[test]
    fn the_largest_batch_that_fits_is_the_edge_of_the_estimate() {
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: vec![784, 512, 10],
            activation: crate::backend::Activation::Relu,
            loss: crate::nn::Loss::SoftmaxCrossEntropy,
        };
        let model = Model {
            spec: &spec,
            optimizer: OptimizerKind::Adam,
            precision: Precision::Fp32,
            eval_rows: 1024,
            levers: estimate::Levers::NONE,
        };
        let capacity = model.at(1000).total() as f64 + 1.0;
        let largest = largest_batch(model, capacity).expect("fits");
        assert!(model.at(largest).total() as f64 <= capacity);
        assert!(model.at(largest + 1).total() as f64 > capacity);
        assert!((1000..1100).contains(&largest), "{largest}");
        // Too small for even one row.
        assert_eq!(largest_batch(model, 1000.0), None);
    }
}
