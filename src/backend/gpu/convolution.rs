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
        self.prepare(&[x, w, b, out])?;
        let (xb, wb, bb) = (
            self.operand(x, 0)?,
            self.operand(w, 1)?,
            self.operand(b, 2)?,
        );
        let ob = self.output(out, 3, false)?;
        self.matmul(
            "conv_forward",
            (xb, Read::Patches(s)),
            (wb, Read::Strides(s.channels_out, 1)),
            Some(bb),
            (Epilogue::BiasActivation, act),
            (batch * s.pixels(), s.channels_out, s.patch()),
            ob,
        )?;
        self.store(out, 3)
    }

    /// `dw = patches(x)ᵀ · dz` and `db = Σ dz`, as two kernels as a dense layer's.
    pub(super) fn conv_backward_params_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        dz: &Tensor,
        (dw, db): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        let batch = checks::conv_backward_params(Device::Gpu, x, s, dz, (dw, db))?;
        self.prepare(&[x, dz, dw, db])?;
        let (xb, dzb) = (self.operand(x, 0)?, self.operand(dz, 1)?);
        let dz_again = dzb.clone();
        let (dwb, dbb) = (self.output(dw, 2, false)?, self.output(db, 3, false)?);
        let rows = batch * s.pixels();
        self.matmul(
            "weight_grad",
            (xb, Read::PatchesTransposed(s)),
            (dzb, Read::Strides(s.channels_out, 1)),
            None,
            (Epilogue::Sum, Activation::Identity),
            (s.patch(), s.channels_out, rows),
            dwb,
        )?;
        self.store(dw, 2)?;
        self.column_sums(
            ("bias_grad", "bias_grad_sum"),
            dz_again,
            (rows, s.channels_out),
            dbb,
        )?;
        self.store(db, 3)
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
            (Epilogue::Sum, Activation::Identity),
            (batch * s.pixels(), s.channels_in, t.patch()),
            dxb,
        )?;
        self.store(dx, 2)
    }
}
