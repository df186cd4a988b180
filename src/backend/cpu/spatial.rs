//! Convolution and pooling on the CPU, channels last (see [`ConvShape`]). A convolution is
//! `im2col`, then the dense layer's product through `gemm` (a strong CPU algorithm: the patches
//! make one large product, where a direct convolution would need its own blocking to come near
//! it), then `col2im` on the way back. Every output row is independent of the others, so rows
//! are split over the pool when there are enough values to pay for it.

use rayon::prelude::*;

use super::CpuBackend;
use super::values::{slots, store, view, view_mut};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, ConvShape, PoolShape};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// Row `r` of `im2col`: the patch around output pixel `r` (image `r / pixels`), zero outside.
fn patch_row(x: &[f32], s: ConvShape, r: usize, row: &mut [f32]) {
    let (image, pixel) = (r / s.pixels(), r % s.pixels());
    let (y, x0) = (pixel / s.width, pixel % s.width);
    let c = s.channels_in;
    let base = image * s.image_in();
    for (ky, taps) in row.chunks_exact_mut(s.kernel * c).enumerate() {
        let yy = (y + ky).checked_sub(s.pad()).filter(|&v| v < s.height);
        for (kx, tap) in taps.chunks_exact_mut(c).enumerate() {
            let xx = (x0 + kx).checked_sub(s.pad()).filter(|&v| v < s.width);
            match (yy, xx) {
                (Some(yy), Some(xx)) => {
                    let at = base + (yy * s.width + xx) * c;
                    tap.copy_from_slice(&x[at..at + c]);
                }
                _ => tap.fill(0.0),
            }
        }
    }
}

/// One input pixel's gradient (`c` channels): the sum of its entries in `dcol` over the kernel
/// positions that read it, ky then kx ascending, times `act'` of its activation.
fn unpatch_pixel(
    dcol: &[f32],
    a_prev: &[f32],
    act: Activation,
    s: ConvShape,
    p: usize,
    out: &mut [f32],
) {
    let (image, pixel) = (p / s.pixels(), p % s.pixels());
    let (y, x) = (pixel / s.width, pixel % s.width);
    let c = s.channels_in;
    out.fill(0.0);
    for ky in 0..s.kernel {
        // The output row whose patch has this pixel at row `ky`: y = oy + ky − pad.
        let Some(oy) = (y + s.pad()).checked_sub(ky).filter(|&v| v < s.height) else {
            continue;
        };
        for kx in 0..s.kernel {
            let Some(ox) = (x + s.pad()).checked_sub(kx).filter(|&v| v < s.width) else {
                continue;
            };
            let row = (image * s.pixels() + oy * s.width + ox) * s.patch();
            let at = row + (ky * s.kernel + kx) * c;
            for (o, d) in out.iter_mut().zip(&dcol[at..at + c]) {
                *o += d;
            }
        }
    }
    let a_at = p * c;
    for (o, a) in out.iter_mut().zip(&a_prev[a_at..a_at + c]) {
        *o *= act.derivative_from_output(*a);
    }
}

/// The input offset (within its image) of the first largest value of output pixel `q`'s window,
/// channel `ch`, scanning (0,0), (0,1), (1,0), (1,1).
fn window_argmax(image: &[f32], s: PoolShape, q: usize, ch: usize) -> usize {
    let (oy, ox) = (q / s.out_width(), q % s.out_width());
    let mut best = ((2 * oy) * s.width + 2 * ox) * s.channels + ch;
    for (dy, dx) in [(0, 1), (1, 0), (1, 1)] {
        let at = ((2 * oy + dy) * s.width + 2 * ox + dx) * s.channels + ch;
        if image[at] > image[best] {
            best = at;
        }
    }
    best
}

impl CpuBackend {
    /// Runs `kernel` on each `len`-value chunk of `out` with its index, over the pool when
    /// `out` is large enough.
    fn rows<F>(&self, out: &mut [f32], len: usize, kernel: F)
    where
        F: Fn((usize, &mut [f32])) + Sync + Send,
    {
        if self.parallel(out.len()) {
            self.pool
                .install(|| out.par_chunks_mut(len).enumerate().for_each(kernel));
        } else {
            out.chunks_mut(len).enumerate().for_each(kernel);
        }
    }

    pub(super) fn im2col_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        col: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::im2col(Device::Cpu, x, s, col)?;
        let mut work = self.take_working(&[x, col])?;
        let [s0, s1, ..] = slots(&mut work);
        let x_f = view(x, s0)?;
        let col_f = view_mut(col, &mut *s1, false)?;
        self.rows(col_f, s.patch(), |(r, row)| patch_row(x_f, s, r, row));
        store(col, s1, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn col2im_op(
        &mut self,
        dcol: &Tensor,
        a_prev: &Tensor,
        act: Activation,
        s: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::col2im(Device::Cpu, dcol, a_prev, s, dx)?;
        let mut work = self.take_working(&[dcol, a_prev, dx])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let (d, a) = (view(dcol, s0)?, view(a_prev, s1)?);
        let dx_f = view_mut(dx, &mut *s2, false)?;
        self.rows(dx_f, s.channels_in, |(p, out)| {
            unpatch_pixel(d, a, act, s, p, out);
        });
        store(dx, s2, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn max_pool_op(
        &mut self,
        x: &Tensor,
        s: PoolShape,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::max_pool(Device::Cpu, &[x], &[out], s)?;
        let mut work = self.take_working(&[x, out])?;
        let [s0, s1, ..] = slots(&mut work);
        let x_f = view(x, s0)?;
        let out_f = view_mut(out, &mut *s1, false)?;
        self.rows(out_f, s.image_out(), |(b, pooled)| {
            let image = &x_f[b * s.image_in()..(b + 1) * s.image_in()];
            for (q, px) in pooled.chunks_exact_mut(s.channels).enumerate() {
                for (ch, v) in px.iter_mut().enumerate() {
                    *v = image[window_argmax(image, s, q, ch)];
                }
            }
        });
        store(out, s1, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn max_pool_backward_op(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        s: PoolShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::max_pool(Device::Cpu, &[x, dx], &[dout], s)?;
        let mut work = self.take_working(&[x, dout, dx])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let (x_f, d_f) = (view(x, s0)?, view(dout, s1)?);
        let dx_f = view_mut(dx, &mut *s2, false)?;
        self.rows(dx_f, s.image_in(), |(b, grad)| {
            let image = &x_f[b * s.image_in()..(b + 1) * s.image_in()];
            let d = &d_f[b * s.image_out()..(b + 1) * s.image_out()];
            grad.fill(0.0);
            for q in 0..s.out_height() * s.out_width() {
                for ch in 0..s.channels {
                    let at = window_argmax(image, s, q, ch);
                    grad[at] = d[q * s.channels + ch] * act.derivative_from_output(image[at]);
                }
            }
        });
        store(dx, s2, &mut self.census);
        self.working = work;
        Ok(())
    }
}
