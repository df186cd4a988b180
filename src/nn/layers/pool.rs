//! 2×2 max pooling with stride 2 over channels-last images; its backward pass applies the
//! derivative of the activation fused into the layer before (a convolution's).

use super::layer::{Backward, Layer, Need, PlainCost, PlainWork, Shape};
use crate::backend::{Backend, BackendError, PoolShape, Tensor};
use crate::data::ImageShape;

/// The output's shape: half the height and width (rounded down).
pub(super) fn output(input: Shape) -> Result<Shape, Need> {
    match input {
        Shape::Image(i) if i.height >= 2 && i.width >= 2 && i.channels > 0 => {
            Ok(Shape::Image(ImageShape {
                height: i.height / 2,
                width: i.width / 2,
                channels: i.channels,
            }))
        }
        _ => Err(Need::PoolSize),
    }
}

/// A built max pooling.
pub struct MaxPool {
    name: String,
    shape: PoolShape,
}

impl MaxPool {
    pub(super) fn new(name: String, image: ImageShape) -> Self {
        let shape = PoolShape {
            height: image.height,
            width: image.width,
            channels: image.channels,
        };
        Self { name, shape }
    }
}

impl Layer for MaxPool {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "max_pool2d"
    }

    fn shape(&self) -> Shape {
        Shape::Image(ImageShape {
            height: self.shape.out_height(),
            width: self.shape.out_width(),
            channels: self.shape.channels,
        })
    }

    fn suffixes(&self) -> (&'static str, &'static str) {
        ("pooled", "dpooled")
    }

    fn plain_cost(&self) -> Option<PlainCost> {
        let (input, output) = (self.shape.image_in(), self.shape.image_out());
        Some(PlainCost {
            name: "pooling",
            what: crate::i18n::LayerKey::WhatPooling,
            // A comparison a value read; each window's largest written.
            forward: PlainWork {
                flops: input,
                values: input + output,
                params: 0,
            },
            // Reads the input and the pooled gradient, writes the input's gradient.
            backward: PlainWork {
                flops: input,
                values: 2 * input + output,
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
        backend.max_pool(input, self.shape, out)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        let Some(dx) = pass.dinput else {
            return Ok(());
        };
        backend.max_pool_backward(pass.input, pass.dout, pass.input_epilogue, self.shape, dx)
    }
}
