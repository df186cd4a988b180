//! Convolution patches and pooling on the GPU: one pass of `shaders/spatial.wgsl` each, through
//! working copies for 16-bit tensors as every op here.

use super::GpuBackend;
use super::kernels::{KernelId, SpatialParams};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, ConvShape, PoolShape};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// What one pass reads and writes: `src`, `dst`, and the backward passes' second input.
struct Pass<'a> {
    kernel: (KernelId, &'static str),
    src: &'a Tensor,
    aux: Option<&'a Tensor>,
    dst: &'a mut Tensor,
    /// Height, width, channels and kernel side.
    geometry: [usize; 4],
    act: Activation,
}

impl GpuBackend {
    fn spatial(&mut self, pass: Pass<'_>) -> Result<(), BackendError> {
        let Pass {
            kernel,
            src,
            aux,
            dst,
            geometry: [height, width, channels, side],
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
            kernel: side as u32,
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
            &params,
            &bindings,
            (groups_x, groups_y),
        )?;
        self.store(dst, 1)
    }

    pub(super) fn im2col_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        col: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::im2col(Device::Gpu, x, s, col)?;
        self.spatial(Pass {
            kernel: (KernelId::Im2col, "im2col"),
            src: x,
            aux: None,
            dst: col,
            geometry: [s.height, s.width, s.channels_in, s.kernel],
            act: Activation::Identity,
        })
    }

    pub(super) fn col2im_op(
        &mut self,
        dcol: &Tensor,
        a_prev: &Tensor,
        act: Activation,
        s: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::col2im(Device::Gpu, dcol, a_prev, s, dx)?;
        self.spatial(Pass {
            kernel: (KernelId::Col2im, "col2im"),
            src: dcol,
            aux: Some(a_prev),
            dst: dx,
            geometry: [s.height, s.width, s.channels_in, s.kernel],
            act,
        })
    }

    pub(super) fn max_pool_op(
        &mut self,
        x: &Tensor,
        s: PoolShape,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::max_pool(Device::Gpu, &[x], &[out], s)?;
        self.spatial(Pass {
            kernel: (KernelId::MaxPool, "max_pool"),
            src: x,
            aux: None,
            dst: out,
            geometry: [s.height, s.width, s.channels, 0],
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
        self.spatial(Pass {
            kernel: (KernelId::MaxPoolBackward, "max_pool_backward"),
            src: x,
            aux: Some(dout),
            dst: dx,
            geometry: [s.height, s.width, s.channels, 0],
            act,
        })
    }
}
