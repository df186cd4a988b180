//! An activation as a layer of its own (GELU always; the others where no product before them
//! can take them in its epilogue): it keeps its input, and its backward pass takes the
//! derivative there.

use super::layer::{Backward, Layer, Shape};
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

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
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
