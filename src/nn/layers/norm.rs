//! Layer normalisation over a row's features with a learned scale (`weight`, starting at 1) and
//! shift (`bias`, starting at 0), PyTorch's `LayerNorm(n)`: each row's mean and
//! `1 / √(σ² + ε)` are kept (f32, `[rows, 2]`) for backward.

use rand_chacha::ChaCha8Rng;

use super::dense::missing;
use super::layer::{Backward, Layer, Need, ParamInit, PlainCost, PlainWork, Shape};
use crate::backend::{Activation, Backend, BackendError, Tensor};
use crate::memory::Role;

/// The output's shape: the input's, a row of features.
pub(super) fn output(input: Shape) -> Result<Shape, Need> {
    match input {
        Shape::Flat(n) if n > 0 => Ok(input),
        Shape::Sequence { width, .. } if width > 0 => Ok(input),
        _ => Err(Need::Rows),
    }
}

/// A built layer normalisation.
pub struct LayerNorm {
    name: String,
    /// What it normalises: a row's features, or each position's of a sequence.
    shape: Shape,
    features: usize,
}

impl LayerNorm {
    pub(super) fn new(name: String, shape: Shape) -> Self {
        Self {
            name,
            shape,
            features: shape.row_width(),
        }
    }
}

impl Layer for LayerNorm {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "layer_norm"
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn param_shapes(&self) -> Option<[(usize, usize); 2]> {
        Some([(1, self.features), (1, self.features)])
    }

    fn params(&self, _rng: &mut ChaCha8Rng, _hidden: Activation) -> Option<ParamInit> {
        let n = self.features;
        Some(ParamInit {
            shapes: self.param_shapes()?,
            values: [vec![1.0; n], vec![0.0; n]],
        })
    }

    fn needs_input_gradient(&self) -> bool {
        true
    }

    /// Each row's mean and inverse deviation, kept for backward.
    fn saved(&self, rows: usize) -> Vec<(Role, &'static str, (usize, usize))> {
        let rows = rows * self.shape.rows_per_sample();
        vec![(Role::Activations, "stats", (rows, 2))]
    }

    fn plain_cost(&self) -> Option<PlainCost> {
        // A row's work, times the rows a sample (a sequence's positions).
        let (d, n) = (self.features, self.shape.rows_per_sample());
        Some(PlainCost {
            name: "layer norm",
            what: crate::i18n::LayerKey::WhatLayerNorm,
            // The mean (d), the variance (2d), then (x − μ) · r · γ + β (4d) and the rsqrt:
            // reads the row, writes it and its two statistics; reads γ and β.
            forward: PlainWork {
                flops: 8 * d * n,
                values: (2 * d + 2) * n,
                params: 2 * d,
            },
            // The input's gradient (x̂ again, γ·g, two sums and the combination: about 9d) and
            // the parameters' (x̂ and two sums: 5d), each kernel reading the row and its
            // gradient; reads γ, writes the gradients of γ and β.
            backward: PlainWork {
                flops: 14 * d * n,
                values: (5 * d + 4) * n,
                params: 3 * d,
            },
        })
    }

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        _skip: Option<&Tensor>,
        params: Option<(&Tensor, &Tensor)>,
        saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let params = params.ok_or_else(|| missing(&self.name))?;
        let stats = saved.first_mut().ok_or_else(|| missing(&self.name))?;
        backend.layer_norm(input, params, out, stats)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        let (gamma, _) = pass.params.ok_or_else(|| missing(&self.name))?;
        let grads = pass.grads.ok_or_else(|| missing(&self.name))?;
        let stats = pass.saved.first().ok_or_else(|| missing(&self.name))?;
        crate::backend::check_identity("layer_norm_backward", pass.input_epilogue)?;
        // LayerNorm's kernel writes the input's gradient with the parameters': a first
        // LayerNorm is given a scratch of the network's (`Layer::needs_input_gradient`).
        let dx = pass.dinput.ok_or_else(|| missing(&self.name))?;
        backend.layer_norm_backward(pass.input, pass.dout, (gamma, stats), dx, grads)
    }
}
