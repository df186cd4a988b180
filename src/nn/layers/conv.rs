//! A convolution over channels-last images, `out = act(x ⊛ w + b)`, `w` `[K² · C_in, C_out]`:
//! each device's own kernels (`ComputeOps::conv_forward` and its gradients), the activation
//! fused where the model allows.

use rand_chacha::ChaCha8Rng;

use super::dense::{init_weights, missing};
use super::layer::{Backward, Layer, Need, ParamInit, Shape};
use crate::backend::{Activation, Backend, BackendError, ConvShape, Tensor};
use crate::data::ImageShape;

/// The output's shape: an image of the same size with a channel per filter.
pub(super) fn output(input: Shape, filters: usize, kernel: usize) -> Result<Shape, Need> {
    match input {
        _ if filters == 0 => Err(Need::Units),
        _ if kernel.is_multiple_of(2) => Err(Need::OddKernel),
        Shape::Image(image) if !image.is_empty() => Ok(Shape::Image(ImageShape {
            channels: filters,
            ..image
        })),
        _ => Err(Need::Image),
    }
}

/// A built convolution.
pub struct Conv {
    name: String,
    shape: ConvShape,
    epilogue: Activation,
}

impl Conv {
    pub(super) fn new(
        name: String,
        image: ImageShape,
        filters: usize,
        kernel: usize,
        epilogue: Activation,
    ) -> Self {
        let shape = ConvShape {
            height: image.height,
            width: image.width,
            channels_in: image.channels,
            channels_out: filters,
            kernel,
        };
        Self {
            name,
            shape,
            epilogue,
        }
    }
}

impl Layer for Conv {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "conv2d"
    }

    fn shape(&self) -> Shape {
        let s = self.shape;
        Shape::Image(ImageShape {
            height: s.height,
            width: s.width,
            channels: s.channels_out,
        })
    }

    /// A row a pixel, a column a filter.
    fn output(&self, rows: usize) -> (usize, usize) {
        (rows * self.shape.pixels(), self.shape.channels_out)
    }

    fn param_shapes(&self) -> Option<[(usize, usize); 2]> {
        let s = self.shape;
        Some([(s.patch(), s.channels_out), (1, s.channels_out)])
    }

    fn macs(&self) -> usize {
        let s = self.shape;
        s.pixels()
            .saturating_mul(s.patch())
            .saturating_mul(s.channels_out)
    }

    /// Fan-in the patch, `K² · C_in`, fan-out `K² · C_out`, as PyTorch counts them.
    fn params(&self, rng: &mut ChaCha8Rng, hidden: Activation) -> Option<ParamInit> {
        let s = self.shape;
        let (k, n) = (s.patch(), s.channels_out);
        let fans = (k, s.kernel * s.kernel * n);
        Some(ParamInit {
            shapes: self.param_shapes()?,
            values: [init_weights(rng, fans, k * n, hidden), vec![0.0; n]],
        })
    }

    fn epilogue(&self) -> Activation {
        self.epilogue
    }

    fn convolution(&self) -> Option<ConvShape> {
        Some(self.shape)
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
        backend.conv_forward(input, self.shape, (w, b, self.epilogue), out)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        let (w, _) = pass.params.ok_or_else(|| missing(&self.name))?;
        let grads = pass.grads.ok_or_else(|| missing(&self.name))?;
        backend.conv_backward_params(pass.input, self.shape, pass.dout, grads)?;
        if let Some(dx) = pass.dinput {
            // The model fuses no activation before a convolution: its input gradient has none.
            crate::backend::check_identity("conv_backward_input", pass.input_epilogue)?;
            backend.conv_backward_input(pass.dout, w, self.shape, dx)?;
        }
        Ok(())
    }
}
