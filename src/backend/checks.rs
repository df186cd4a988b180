//! The checks every backend runs before an op, in one place: same device, fitting shapes.
//! Each returns the dimensions the op needs, so a backend cannot check one shape and use another.

use super::error::BackendError;
use super::params::{Activation, ConvShape, PoolShape};
use super::tensor::{Tensor, check_device, check_shape};
use crate::device::Device;

/// `write`: the tensor is on `device` and has as many elements as the values.
pub(crate) fn write(device: Device, t: &Tensor, values: usize) -> Result<(), BackendError> {
    check_device(device, "write", &[t])?;
    if values == t.len() {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op: "write",
            detail: format!(
                "{values} values for `{}` of {} elements",
                t.label(),
                t.len()
            ),
        })
    }
}

/// `copy`: both tensors on `device`, the same shape.
pub(crate) fn copy(device: Device, src: &Tensor, dst: &Tensor) -> Result<(), BackendError> {
    check_device(device, "copy", &[src, dst])?;
    check_shape("copy", dst, src.rows(), src.cols())
}

/// `linear_forward`: returns `(batch, fan_in, fan_out)`.
pub(crate) fn linear_forward(
    device: Device,
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    out: &Tensor,
) -> Result<(usize, usize, usize), BackendError> {
    const OP: &str = "linear_forward";
    check_device(device, OP, &[x, w, b, out])?;
    let (batch, fan_in, fan_out) = (x.rows(), w.rows(), w.cols());
    check_shape(OP, x, batch, fan_in)?;
    check_shape(OP, b, 1, fan_out)?;
    check_shape(OP, out, batch, fan_out)?;
    Ok((batch, fan_in, fan_out))
}

/// `linear_backward_input`: returns `(batch, fan_in, fan_out)`.
pub(crate) fn linear_backward_input(
    device: Device,
    dz: &Tensor,
    w: &Tensor,
    a_prev: &Tensor,
    dz_prev: &Tensor,
) -> Result<(usize, usize, usize), BackendError> {
    const OP: &str = "linear_backward_input";
    check_device(device, OP, &[dz, w, a_prev, dz_prev])?;
    let (batch, fan_in, fan_out) = (dz.rows(), w.rows(), w.cols());
    check_shape(OP, dz, batch, fan_out)?;
    check_shape(OP, a_prev, batch, fan_in)?;
    check_shape(OP, dz_prev, batch, fan_in)?;
    Ok((batch, fan_in, fan_out))
}

/// `linear_backward_params`: returns `(batch, fan_in, fan_out)`.
pub(crate) fn linear_backward_params(
    device: Device,
    x: &Tensor,
    dz: &Tensor,
    dw: &Tensor,
    db: &Tensor,
) -> Result<(usize, usize, usize), BackendError> {
    const OP: &str = "linear_backward_params";
    check_device(device, OP, &[x, dz, dw, db])?;
    let (batch, fan_in, fan_out) = (x.rows(), x.cols(), dz.cols());
    check_shape(OP, dz, batch, fan_out)?;
    check_shape(OP, dw, fan_in, fan_out)?;
    check_shape(OP, db, 1, fan_out)?;
    Ok((batch, fan_in, fan_out))
}

/// `softmax_cross_entropy`: returns `(batch, classes)`.
pub(crate) fn softmax_cross_entropy(
    device: Device,
    logits: &Tensor,
    targets: &Tensor,
    dlogits: &Tensor,
    stats: &Tensor,
) -> Result<(usize, usize), BackendError> {
    const OP: &str = "softmax_cross_entropy";
    check_device(device, OP, &[logits, targets, dlogits, stats])?;
    let (batch, classes) = (logits.rows(), logits.cols());
    check_shape(OP, targets, batch, 1)?;
    check_shape(OP, dlogits, batch, classes)?;
    check_shape(OP, stats, 1, 3)?;
    Ok((batch, classes))
}

/// `mse_loss`: returns `(batch, outputs)`.
pub(crate) fn mse_loss(
    device: Device,
    pred: &Tensor,
    targets: &Tensor,
    dpred: &Tensor,
    stats: &Tensor,
) -> Result<(usize, usize), BackendError> {
    const OP: &str = "mse_loss";
    check_device(device, OP, &[pred, targets, dpred, stats])?;
    let (batch, outputs) = (pred.rows(), pred.cols());
    check_shape(OP, targets, batch, outputs)?;
    check_shape(OP, dpred, batch, outputs)?;
    check_shape(OP, stats, 1, 3)?;
    Ok((batch, outputs))
}

/// Element-wise updates: every tensor on `device` and shaped like `param`.
pub(crate) fn elementwise(
    device: Device,
    op: &'static str,
    param: &Tensor,
    others: &[&Tensor],
) -> Result<(), BackendError> {
    check_device(device, op, &[param])?;
    check_device(device, op, others)?;
    for t in others {
        check_shape(op, t, param.rows(), param.cols())?;
    }
    Ok(())
}

/// `read`: the tensor is on `device`.
pub(crate) fn read(device: Device, t: &Tensor) -> Result<(), BackendError> {
    check_device(device, "read", &[t])
}

/// Images of `image` values each in `t`: how many, or why not.
fn images(op: &'static str, t: &Tensor, image: usize) -> Result<usize, BackendError> {
    if image == 0 || t.is_empty() || !t.len().is_multiple_of(image) {
        return Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` has {} values, not a whole number of images of {image}",
                t.label(),
                t.len()
            ),
        });
    }
    Ok(t.len() / image)
}

/// `t` holds `batch` images of `image` values.
fn check_images(
    op: &'static str,
    t: &Tensor,
    batch: usize,
    image: usize,
) -> Result<(), BackendError> {
    if t.len() == batch * image {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` has {} values, not {batch} images of {image}",
                t.label(),
                t.len()
            ),
        })
    }
}

/// A convolution's geometry is one this app builds: an odd kernel, no empty dimension.
fn check_conv(op: &'static str, s: ConvShape) -> Result<(), BackendError> {
    if !s.kernel.is_multiple_of(2) && s.pixels() > 0 && s.channels_in > 0 && s.channels_out > 0 {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op,
            detail: format!(
                "a {}×{} kernel over {}×{} images of {} channels into {}: the kernel must be \
                 odd and no size zero",
                s.kernel, s.kernel, s.height, s.width, s.channels_in, s.channels_out
            ),
        })
    }
}

/// A convolution's forward pass (`ComputeOps::conv_forward`): returns the batch.
pub(crate) fn conv_forward(
    device: Device,
    x: &Tensor,
    s: ConvShape,
    (w, b): (&Tensor, &Tensor),
    out: &Tensor,
) -> Result<usize, BackendError> {
    const OP: &str = "conv_forward";
    check_device(device, OP, &[x, w, b, out])?;
    check_conv(OP, s)?;
    let batch = images(OP, x, s.image_in())?;
    check_shape(OP, w, s.patch(), s.channels_out)?;
    check_shape(OP, b, 1, s.channels_out)?;
    check_shape(OP, out, batch * s.pixels(), s.channels_out)?;
    Ok(batch)
}

/// A convolution's parameter gradients computed from its input images: returns the batch.
pub(crate) fn conv_backward_params(
    device: Device,
    x: &Tensor,
    s: ConvShape,
    dz: &Tensor,
    (dw, db): (&Tensor, &Tensor),
) -> Result<usize, BackendError> {
    const OP: &str = "conv_backward_params";
    check_device(device, OP, &[x, dz, dw, db])?;
    check_conv(OP, s)?;
    let batch = images(OP, x, s.image_in())?;
    check_shape(OP, dz, batch * s.pixels(), s.channels_out)?;
    check_shape(OP, dw, s.patch(), s.channels_out)?;
    check_shape(OP, db, 1, s.channels_out)?;
    Ok(batch)
}

/// A convolution's input gradient: returns the batch.
pub(crate) fn conv_backward_input(
    device: Device,
    dz: &Tensor,
    w: &Tensor,
    s: ConvShape,
    dx: &Tensor,
) -> Result<usize, BackendError> {
    const OP: &str = "conv_backward_input";
    check_device(device, OP, &[dz, w, dx])?;
    check_conv(OP, s)?;
    let batch = images(OP, dx, s.image_in())?;
    check_shape(OP, dz, batch * s.pixels(), s.channels_out)?;
    check_shape(OP, w, s.patch(), s.channels_out)?;
    Ok(batch)
}

/// `max_pool` and its backward pass: returns the batch. `x` and `dx` are inputs, `out` and
/// `dout` outputs of the pooling.
pub(crate) fn max_pool(
    device: Device,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    s: PoolShape,
) -> Result<usize, BackendError> {
    const OP: &str = "max_pool";
    let all: Vec<&Tensor> = inputs.iter().chain(outputs).copied().collect();
    check_device(device, OP, &all)?;
    if s.image_out() == 0 {
        return Err(BackendError::Shape {
            op: OP,
            detail: format!(
                "{}×{} images of {} channels are too small to pool 2×2",
                s.height, s.width, s.channels
            ),
        });
    }
    let batch = images(OP, inputs[0], s.image_in())?;
    for t in &inputs[1..] {
        check_images(OP, t, batch, s.image_in())?;
    }
    for t in outputs {
        check_images(OP, t, batch, s.image_out())?;
    }
    Ok(batch)
}

/// An activation an op applies from its output (an epilogue's derivative): all but GELU, whose
/// derivative needs its input and which is therefore a layer of its own.
pub(crate) fn fused_activation(op: &'static str, act: Activation) -> Result<(), BackendError> {
    if act.fuses() {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op,
            detail: format!(
                "{} cannot be applied from its output: it is an activation layer of its own",
                act.as_str()
            ),
        })
    }
}

/// `activation_forward` and `activation_backward`: every tensor on `device`, all one shape.
pub(crate) fn activation(
    device: Device,
    op: &'static str,
    tensors: &[&Tensor],
) -> Result<(), BackendError> {
    check_device(device, op, tensors)?;
    let Some(first) = tensors.first() else {
        return Ok(());
    };
    for t in &tensors[1..] {
        check_shape(op, t, first.rows(), first.cols())?;
    }
    Ok(())
}

/// `layer_norm` and its backward pass: `rows` on `[rows, n]` (`rows_like`), `[1, n]`
/// (`params`), and `stats` `[rows, 2]` in f32. Returns `(rows, n)`.
pub(crate) fn layer_norm(
    device: Device,
    op: &'static str,
    (rows_like, params): (&[&Tensor], &[&Tensor]),
    stats: &Tensor,
) -> Result<(usize, usize), BackendError> {
    let all: Vec<&Tensor> = rows_like
        .iter()
        .chain(params)
        .chain(std::iter::once(&stats))
        .copied()
        .collect();
    check_device(device, op, &all)?;
    let Some(x) = rows_like.first() else {
        return Ok((0, 0));
    };
    let (rows, n) = (x.rows(), x.cols());
    for t in rows_like {
        check_shape(op, t, rows, n)?;
    }
    for t in params {
        check_shape(op, t, 1, n)?;
    }
    check_shape(op, stats, rows, 2)?;
    if stats.dtype() != crate::precision::DType::F32 || n == 0 {
        return Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` must be f32 and the rows must have features ({n})",
                stats.label()
            ),
        });
    }
    Ok((rows, n))
}

/// An op that applies no activation derivative to its input gradient was handed one: a model
/// built with an activation fused where the next layer cannot undo it.
pub fn check_identity(op: &'static str, act: Activation) -> Result<(), BackendError> {
    if act == Activation::Identity {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op,
            detail: format!(
                "the input gradient cannot go through {}: leave that activation a layer of its own",
                act.as_str()
            ),
        })
    }
}
