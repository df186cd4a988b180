//! A residual connection: the output of an earlier layer added to this layer's input, as a
//! Transformer block adds its attention's and its MLP's outputs to the stream that runs past
//! them. Backward passes the gradient on unchanged, and the network adds it into the earlier
//! layer's gradient too (see [`Layer::skip`]).

use super::dense::missing;
use super::layer::{Backward, Layer, PlainCost, PlainWork, Shape};
use crate::backend::{Backend, BackendError, Tensor};

/// A built residual connection.
pub struct Residual {
    name: String,
    shape: Shape,
    /// The built layer whose output it adds.
    from: usize,
}

impl Residual {
    pub(super) fn new(name: String, shape: Shape, from: usize) -> Self {
        Self { name, shape, from }
    }
}

impl Layer for Residual {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "residual"
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn skip(&self) -> Option<usize> {
        Some(self.from)
    }

    fn plain_cost(&self) -> Option<PlainCost> {
        let n = self.shape.values();
        Some(PlainCost {
            name: "residual",
            what: crate::i18n::LayerKey::WhatResidual,
            // Reads two, writes one.
            forward: PlainWork {
                flops: n,
                values: 3 * n,
                params: 0,
            },
            // The copy into the input's gradient, and the sum into the earlier layer's.
            backward: PlainWork {
                flops: n,
                values: 5 * n,
                params: 0,
            },
        })
    }

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        skip: Option<&Tensor>,
        _params: Option<(&Tensor, &Tensor)>,
        _saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let skip = skip.ok_or_else(|| missing(&self.name))?;
        backend.add(input, skip, out)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        crate::backend::check_identity("residual_backward", pass.input_epilogue)?;
        let dx = pass.dinput.ok_or_else(|| missing(&self.name))?;
        backend.copy(pass.dout, dx)
    }
}
