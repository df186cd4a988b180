//! An activation as a layer of its own (GELU always; the others where no product before them
//! can take them in its epilogue): it keeps its input, and its backward pass takes the
//! derivative there.

use super::layer::{Backward, Layer, PlainCost, PlainWork, Shape};
use crate::backend::{Activation, Backend, BackendError, Tensor};

/// A built activation layer.
pub struct ActivationLayer {
    name: String,
    shape: Shape,
    /// Its input tensor's rows a sample (a convolution's output has a row a pixel), which its
    /// output keeps.
    rows_per_sample: usize,
    function: Activation,
}

impl ActivationLayer {
    pub(super) fn new(
        name: String,
        shape: Shape,
        rows_per_sample: usize,
        function: Activation,
    ) -> Self {
        Self {
            name,
            shape,
            rows_per_sample: rows_per_sample.max(1),
            function,
        }
    }
}

impl Layer for ActivationLayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        self.function.as_str()
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    /// Laid out as its input is.
    fn output(&self, rows: usize) -> (usize, usize) {
        let r = self.rows_per_sample;
        (rows * r, self.shape.values() / r)
    }

    fn plain_cost(&self) -> Option<PlainCost> {
        let n = self.shape.values();
        let (forward, backward) = flops_per_value(self.function);
        Some(PlainCost {
            name: self.function.as_str(),
            what: crate::i18n::LayerKey::WhatActivation,
            // Reads its input, writes its output.
            forward: PlainWork {
                flops: forward * n,
                values: 2 * n,
                params: 0,
            },
            // Reads its input and the output's gradient, writes the input's.
            backward: PlainWork {
                flops: backward * n,
                values: 3 * n,
                params: 0,
            },
        })
    }

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        _skip: Option<&Tensor>,
        _params: Option<(&Tensor, &Tensor)>,
        _saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        backend.activation_forward(input, self.function, out)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        let Some(dx) = pass.dinput else {
            return Ok(());
        };
        crate::backend::check_identity("activation_backward", pass.input_epilogue)?;
        backend.activation_backward(pass.input, pass.dout, self.function, dx)
    }
}

/// Operations a value of `function` and of its derivative times the gradient (an estimate:
/// `tanh` and `exp` count as one each, as FLOP counters count them). GELU's tanh form: `z³`,
/// two scalings, a sum, the tanh, `1 +` and two products forward.
fn flops_per_value(function: Activation) -> (usize, usize) {
    match function {
        Activation::Identity => (0, 0),
        Activation::Relu => (1, 1),
        Activation::Tanh => (1, 3),
        Activation::Sigmoid => (3, 3),
        Activation::Gelu => (8, 16),
    }
}
