//! The seeded initial values of every layer's parameters, drawn on the host so both devices
//! start identical.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::layers::{Layer, ParamInit};
use super::spec::ModelSpec;

/// `(weights, biases)` per layer that has parameters, first layer first, on the host.
pub type LayerValues = Vec<(Vec<f32>, Vec<f32>)>;

/// Each built layer's parameters and their initial values, drawn in layer order from one
/// generator seeded with `seed` (see each kind's module for its rule: He or Glorot normal
/// weights by the model's hidden activation, zero biases, `LayerNorm`'s scale 1 and shift 0).
pub(super) fn layer_parameters(
    spec: &ModelSpec,
    layers: &[Box<dyn Layer>],
    seed: u64,
) -> Vec<Option<ParamInit>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let hidden = spec.hidden_activation();
    layers.iter().map(|l| l.params(&mut rng, hidden)).collect()
}

/// The initial `(weights, biases)` of every layer that has parameters, as
/// [`Network`](super::Network) starts from them: the same on every device for one seed.
pub fn initial_parameters(spec: &ModelSpec, seed: u64) -> LayerValues {
    let Ok(layers) = super::layers::build(&spec.layer_specs(), spec.input_shape()) else {
        return Vec::new();
    };
    layer_parameters(spec, &layers, seed)
        .into_iter()
        .flatten()
        .map(|p| {
            let [w, b] = p.values;
            (w, b)
        })
        .collect()
}
