//! A convolution's three passes on the GPU, each one product that reads the patch matrix from
//! the images where they stand (an implicit GEMM, see `shaders/matmul_read.wgsl`): no patches
//! are made, so none are kept between the forward pass and the weight gradient either.
//!
//! Why not `im2col` and the product, as this backend did before: a 3 × 3 patch matrix is nine
//! times its images, written once and read back by the product in every pass, and held as
//! workspace from the forward pass to the backward. Reading the images inside the product's
//! tile loads costs a few integer operations per value loaded and none of that memory; the
//! products, their tiles, variants and split along `k` are the dense layers' own.

use super::GpuBackend;
use super::kernels::{Epilogue, Read};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, ConvShape};
use crate::backend::tensor::Tensor;
use crate::device::Device;

impl GpuBackend {
    /// `out = act(patches(x) · w + b)`: `[batch · pixels, channels_out]`.
    pub(super) fn conv_forward_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        (w, b, act): (&Tensor, &Tensor, Activation),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let batch = checks::conv_forward(Device::Gpu, x, s, (w, b), out)?;
        self.forward_product(
            "conv_forward",
            ((x, Read::Patches(s)), (w, Read::Strides(s.channels_out, 1))),
            b,
            act,
            (batch * s.pixels(), s.channels_out, s.patch()),
            out,
        )
    }

    /// `dw = patches(x)ᵀ · dz` and `db = Σ dz`, as a dense layer's (two kernels).
    pub(super) fn conv_backward_params_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        dz: &Tensor,
        (dw, db): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        let batch = checks::conv_backward_params(Device::Gpu, x, s, dz, (dw, db))?;
        let dims = (s.patch(), s.channels_out, batch * s.pixels());
        self.parameter_grads((x, Read::PatchesTransposed(s)), dz, (dw, db), dims)
    }

    /// `dx = dz ⊛ᵀ w`, the transposed convolution: the forward product run on the output's
    /// gradient, with the kernel turned half a circle and its channels swapped (read so, see
    /// [`Read::Flipped`]). No activation: it flows into pooled values.
    pub(super) fn conv_backward_input_op(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        s: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        let batch = checks::conv_backward_input(Device::Gpu, dz, w, s, dx)?;
        self.prepare(&[dz, w, dx])?;
        let (dzb, wb) = (self.operand(dz, 0)?, self.operand(w, 1)?);
        let dxb = self.output(dx, 2, false)?;
        // The transpose reads the output's channels and writes the input's.
        let t = ConvShape {
            channels_in: s.channels_out,
            channels_out: s.channels_in,
            ..s
        };
        self.matmul(
            "conv_backward_input",
            (dzb, Read::Patches(t)),
            (wb, Read::Flipped(t)),
            None,
            Epilogue::Sum,
            (batch * s.pixels(), s.channels_in, t.patch()),
            dxb,
        )?;
        self.store(dx, 2)
    }
}
