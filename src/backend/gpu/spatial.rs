//! 2×2 max pooling and its gradient on the GPU: one pass of `shaders/spatial.wgsl` each, through
//! working copies for 16-bit tensors as every op here.

use super::GpuBackend;
use super::kernels::{KernelId, SpatialParams};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, PoolShape};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// What one pass reads and writes: `src`, `dst`, and the backward pass's second input.
struct Pass<'a> {
    kernel: KernelId,
    /// The span's name.
    label: &'static str,
    src: &'a Tensor,
    aux: Option<&'a Tensor>,
    dst: &'a mut Tensor,
    /// Height, width and channels.
    geometry: [usize; 3],
    act: Activation,
}

impl GpuBackend {
    fn spatial(&mut self, pass: Pass<'_>) -> Result<(), BackendError> {
        let Pass {
            kernel,
            label,
            src,
            aux,
            dst,
            geometry: [height, width, channels],
            act,
        } = pass;
        let all: Vec<&Tensor> = [Some(src), aux, Some(&*dst)]
            .into_iter()
            .flatten()
            .collect();
        self.prepare(&all)?;
        let len = dst.len() as u32;
        let (groups_x, groups_y) = self.stream.groups(len);
        let params = SpatialParams {
            len,
            groups_x,
            height: height as u32,
            width: width as u32,
            channels: channels as u32,
            act: act.code(),
            ..SpatialParams::default()
        };
        let mut bindings = vec![self.operand(src, 0)?, self.output(dst, 1, false)?];
        if let Some(aux) = aux {
            bindings.push(self.operand(aux, 2)?);
        }
        self.stream.dispatch(
            &mut self.recorder,
            kernel,
            label,
            &params,
            &bindings,
            (groups_x, groups_y),
        )?;
        self.store(dst, 1)
    }

    pub(super) fn max_pool_op(
        &mut self,
        x: &Tensor,
        s: PoolShape,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::max_pool(Device::Gpu, &[x], &[out], s)?;
        self.spatial(Pass {
            kernel: KernelId::MaxPool,
            label: "max_pool",
            src: x,
            aux: None,
            dst: out,
            geometry: [s.height, s.width, s.channels],
            act: Activation::Identity,
        })
    }

    pub(super) fn max_pool_backward_op(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        s: PoolShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::max_pool(Device::Gpu, &[x, dx], &[dout], s)?;
        checks::fused_activation("max_pool_backward", act)?;
        self.spatial(Pass {
            kernel: KernelId::MaxPoolBackward,
            label: "max_pool_backward",
            src: x,
            aux: Some(dout),
            dst: dx,
            geometry: [s.height, s.width, s.channels],
            act,
        })
    }
}
