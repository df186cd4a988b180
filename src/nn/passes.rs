//! The tensors a pass through the network writes, and the forward pass over them: the same code
//! for a multi-layer perceptron and a CNN, whose convolution blocks come first.
//!
//! A convolution is each device's own (`ComputeOps::conv_forward`, `conv_backward_params`,
//! `conv_backward_input`), and neither makes a patch matrix: the CPU convolves straight from the
//! images in vector registers, the GPU runs the dense layers' tiled products with the patches
//! read from the images where they stand (an implicit GEMM). `bench --kernels` reports each
//! device's convolution GFLOP/s.

use super::spec::ModelSpec;
use crate::backend::{Activation, Backend, BackendError, ConvShape, PoolShape, Tensor};
use crate::memory::Role;
use crate::precision::{DType, Half};

/// A convolution block's own tensors in the forward pass.
pub(super) struct ConvTensors {
    pub(super) conv: ConvShape,
    pub(super) pool: PoolShape,
    /// The activated convolution before pooling, `[rows · H · W, C_out]`.
    pub(super) out: Tensor,
}

/// Everything a forward pass of some rows writes.
pub(super) struct Forward {
    /// `[0]` is the input batch, `[l + 1]` the output of layer `l` as the next layer reads it
    /// (a convolution block's pooled output).
    pub(super) activations: Vec<Tensor>,
    /// One per convolution block, in order.
    pub(super) conv: Vec<ConvTensors>,
}

/// A convolution block's tensors in the backward pass.
pub(super) struct ConvGrads {
    /// Gradient with respect to the block's pooled output.
    pub(super) dpooled: Tensor,
}

/// The activation after layer `l` (convolution blocks counted first): the spec's, but none
/// after the output layer (softmax belongs to the loss).
pub(super) fn layer_activation(spec: &ModelSpec, l: usize) -> Activation {
    // Counted without building the blocks' shapes: this runs for every layer of every step.
    let conv = spec.conv.as_ref().map_or(0, |c| c.channels.len());
    if l + 1 == conv + spec.layers.len() - 1 {
        Activation::Identity
    } else {
        spec.activation
    }
}

/// What a pass's tensors are for.
#[derive(Clone, Copy, Debug)]
pub(super) enum Pass {
    /// Training, its tensors stored as the precision says and counted by their roles.
    Training(DType),
    /// Evaluation, in f32, its tensors counted as workspace.
    Evaluation,
}

impl Forward {
    /// The tensors of a pass of `rows` rows.
    pub(super) fn alloc(
        backend: &mut dyn Backend,
        spec: &ModelSpec,
        rows: usize,
        pass: Pass,
    ) -> Result<Self, BackendError> {
        let mut make = |role: Role, label: String, shape: (usize, usize)| match pass {
            Pass::Training(dtype) => backend.alloc_as(role, &label, shape, dtype),
            Pass::Evaluation => {
                let label = format!("eval {label}");
                backend.alloc_as(Role::Workspace, &label, shape, DType::F32)
            }
        };
        let mut activations = vec![make(Role::Inputs, "input".into(), (rows, spec.inputs()))?];
        let mut conv = Vec::new();
        for (c, (shape, pool)) in spec.conv_blocks().into_iter().enumerate() {
            let pixels = rows * shape.pixels();
            let out = make(
                Role::Activations,
                format!("conv{c}.output"),
                (pixels, shape.channels_out),
            )?;
            let pooled = (rows, pool.image_out());
            activations.push(make(Role::Activations, format!("conv{c}.pooled"), pooled)?);
            conv.push(ConvTensors {
                conv: shape,
                pool,
                out,
            });
        }
        for (d, &width) in spec.layers.iter().enumerate().skip(1) {
            let label = format!("layer{}.output", d - 1);
            activations.push(make(Role::Activations, label, (rows, width))?);
        }
        Ok(Self { activations, conv })
    }

    /// The gradients of each layer's pre-activation output (`dz`, a workspace that lives only
    /// during backward) and the convolution blocks' own.
    pub(super) fn alloc_grads(
        &self,
        backend: &mut dyn Backend,
        dtype: DType,
    ) -> Result<(Vec<Tensor>, Vec<ConvGrads>), BackendError> {
        let mut dz = Vec::new();
        let mut grads = Vec::new();
        for (c, t) in self.conv.iter().enumerate() {
            let shape = (t.out.rows(), t.out.cols());
            let label = format!("conv{c}.dz");
            dz.push(backend.alloc_as(Role::Workspace, &label, shape, dtype)?);
            let pooled = &self.activations[c + 1];
            let label = format!("conv{c}.dpooled");
            let shape = (pooled.rows(), pooled.cols());
            let dpooled = backend.alloc_as(Role::Workspace, &label, shape, dtype)?;
            grads.push(ConvGrads { dpooled });
        }
        let dense = &self.activations[self.conv.len() + 1..];
        for (d, a) in dense.iter().enumerate() {
            let label = format!("layer{d}.dz");
            let shape = (a.rows(), a.cols());
            dz.push(backend.alloc_as(Role::Workspace, &label, shape, dtype)?);
        }
        Ok((dz, grads))
    }

    /// Every output the backward pass reads: each block's convolution and pooled outputs, each
    /// dense layer's output (not the input).
    pub(super) fn outputs(&self) -> Vec<&Tensor> {
        let conv = self.conv.iter().map(|t| &t.out);
        conv.chain(&self.activations[1..]).collect()
    }

    /// The forward pass with `params` (layer `l`'s weights and bias): layer outputs rounded to
    /// `format` where one is given (the pooled maximums are values already rounded, so they
    /// are not rounded again).
    pub(super) fn run<'p>(
        &mut self,
        backend: &mut dyn Backend,
        spec: &ModelSpec,
        params: impl Fn(usize) -> (&'p Tensor, &'p Tensor),
        format: Option<Half>,
    ) -> Result<(), BackendError> {
        for l in 0..self.activations.len() - 1 {
            let (w, b) = params(l);
            let act = layer_activation(spec, l);
            let (done, rest) = self.activations.split_at_mut(l + 1);
            if let Some(t) = self.conv.get_mut(l) {
                backend.conv_forward(&done[l], t.conv, (w, b, act), &mut t.out)?;
                round(backend, format, &mut t.out)?;
                backend.max_pool(&t.out, t.pool, &mut rest[0])?;
            } else {
                backend.linear_forward(&done[l], w, b, act, &mut rest[0])?;
                round(backend, format, &mut rest[0])?;
            }
        }
        Ok(())
    }
}

/// Rounds an f32 tensor's values to `format` (a 16-bit tensor's are already rounded).
pub(super) fn round(
    backend: &mut dyn Backend,
    format: Option<Half>,
    t: &mut Tensor,
) -> Result<(), BackendError> {
    match format {
        Some(f) if t.dtype() == DType::F32 => backend.round_to(t, f),
        _ => Ok(()),
    }
}
