//! The seeded initial values of every layer's parameters, drawn on the host so both devices
//! start identical.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::spec::ModelSpec;
use crate::backend::Activation;

/// `(weights, biases)` per layer (convolutions first), on the host.
pub type LayerValues = Vec<(Vec<f32>, Vec<f32>)>;

/// Host-side initial values, convolutions first, from a generator seeded with `seed`.
///
/// Weights: He normal `N(0, 2 / fan_in)` before ReLU, Glorot normal `N(0, 2 / (fan_in +
/// fan_out))` before tanh and sigmoid; biases start at zero. A convolution's fan-in is its
/// patch, `K² · C_in`, its fan-out `K² · C_out`, as PyTorch counts them.
pub fn initial_parameters(spec: &ModelSpec, seed: u64) -> LayerValues {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let conv_fan_out = spec
        .conv_blocks()
        .into_iter()
        .map(|(c, _)| c.kernel * c.kernel * c.channels_out);
    let dense_fan_out = spec.layers.iter().skip(1).copied();
    spec.weight_shapes()
        .into_iter()
        .zip(conv_fan_out.chain(dense_fan_out))
        .map(|((fan_in, cols), fan_out)| {
            let variance = match spec.activation {
                Activation::Relu => 2.0 / fan_in as f32,
                _ => 2.0 / (fan_in + fan_out) as f32,
            };
            let normal = Normal::new(0.0, variance.sqrt()).unwrap_or_else(|_| {
                // Unreachable: the variance is finite and positive for positive widths.
                Normal::new(0.0, 1.0).unwrap_or_else(|_| unreachable!())
            });
            let weights = (0..fan_in * cols)
                .map(|_| normal.sample(&mut rng))
                .collect();
            (weights, vec![0.0; cols])
        })
        .collect()
}
