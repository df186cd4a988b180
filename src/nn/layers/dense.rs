//! A fully connected layer: `out = act(x · w + b)`, `w` `[inputs, units]`, the activation fused
//! into the product's epilogue where the model allows (see the module's notes). Over a sequence
//! it multiplies every position's row by the same weights (PyTorch's `Linear` on `[B, T, d]`).

use rand_chacha::ChaCha8Rng;

use super::layer::{Backward, Layer, Need, ParamInit, Shape};
use crate::backend::{Activation, Backend, BackendError, Tensor};

/// The output's shape: `units` values from a row of them.
pub(super) fn output(input: Shape, units: usize) -> Result<Shape, Need> {
    match input {
        _ if units == 0 => Err(Need::Units),
        Shape::Flat(n) if n > 0 => Ok(Shape::Flat(units)),
        Shape::Sequence { len, width } if width > 0 => Ok(Shape::Sequence { len, width: units }),
        Shape::Flat(_) | Shape::Sequence { .. } => Err(Need::Units),
        Shape::Image(_) => Err(Need::Rows),
    }
}

/// A built dense layer.
pub struct Dense {
    name: String,
    inputs: usize,
    units: usize,
    /// Positions a sample, where it reads a sequence.
    positions: Option<usize>,
    epilogue: Activation,
}

impl Dense {
    /// A dense layer of `units` over `input` (a row, or each position of a sequence).
    pub(super) fn new(name: String, input: Shape, units: usize, epilogue: Activation) -> Self {
        let positions = match input {
            Shape::Sequence { len, .. } => Some(len),
            _ => None,
        };
        Self {
            name,
            inputs: input.row_width(),
            units,
            positions,
            epilogue,
        }
    }
}

/// Initial weights: He normal `N(0, 2 / fan_in)` before ReLU, Glorot normal
/// `N(0, 2 / (fan_in + fan_out))` otherwise; biases zero.
pub(super) fn init_weights(
    rng: &mut ChaCha8Rng,
    (fan_in, fan_out): (usize, usize),
    values: usize,
    hidden: Activation,
) -> Vec<f32> {
    use rand_distr::{Distribution, Normal};
    let variance = match hidden {
        Activation::Relu => 2.0 / fan_in as f32,
        _ => 2.0 / (fan_in + fan_out) as f32,
    };
    let normal = Normal::new(0.0, variance.sqrt()).unwrap_or_else(|_| {
        // Unreachable: the variance is finite and positive for positive widths.
        Normal::new(0.0, 1.0).unwrap_or_else(|_| unreachable!())
    });
    (0..values).map(|_| normal.sample(rng)).collect()
}

impl Layer for Dense {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "dense"
    }

    fn shape(&self) -> Shape {
        match self.positions {
            Some(len) => Shape::Sequence {
                len,
                width: self.units,
            },
            None => Shape::Flat(self.units),
        }
    }

    fn param_shapes(&self) -> Option<[(usize, usize); 2]> {
        Some([(self.inputs, self.units), (1, self.units)])
    }

    fn macs(&self) -> usize {
        let positions = self.positions.unwrap_or(1);
        self.inputs
            .saturating_mul(self.units)
            .saturating_mul(positions)
    }

    fn params(&self, rng: &mut ChaCha8Rng, hidden: Activation) -> Option<ParamInit> {
        let (k, n) = (self.inputs, self.units);
        let weights = init_weights(rng, (k, n), k * n, hidden);
        Some(ParamInit {
            shapes: self.param_shapes()?,
            values: [weights, vec![0.0; n]],
        })
    }

    fn epilogue(&self) -> Activation {
        self.epilogue
    }

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        _skip: Option<&Tensor>,
        params: Option<(&Tensor, &Tensor)>,
        _saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (w, b) = params.ok_or_else(|| missing(&self.name))?;
        backend.linear_forward(input, w, b, self.epilogue, out)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        let (w, _) = pass.params.ok_or_else(|| missing(&self.name))?;
        let (dw, db) = pass.grads.ok_or_else(|| missing(&self.name))?;
        backend.linear_backward_params(pass.input, pass.dout, dw, db)?;
        if let Some(dx) = pass.dinput {
            backend.linear_backward_input(pass.dout, w, pass.input, pass.input_epilogue, dx)?;
        }
        Ok(())
    }
}

/// A layer's parameters were not given to it: a network built wrongly, said as a setup error.
pub(super) fn missing(name: &str) -> BackendError {
    BackendError::Setup(format!("`{name}` was run without its parameters"))
}
