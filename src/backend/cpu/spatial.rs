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

/// The `im2col` rows of one row of output pixels (`row` counts image rows over the batch):
/// each pixel's patch, zero outside the image. Within the image a patch row's `K` taps are `K ·
/// C_in` values side by side in the input (channels last), copied as one run; only the pixels
/// at the left and right borders go tap by tap. (Per-tap copies of one channel took 6 ms of a
/// 9 ms first-layer convolution at batch 256, measured.)
fn patch_image_row(x: &[f32], s: ConvShape, row: usize, out: &mut [f32]) {
    let (image, y) = (row / s.height, row % s.height);
    let (c, k, pad, w) = (s.channels_in, s.kernel, s.pad(), s.width);
    let run = k * c;
    let base = image * s.image_in();
    for (ox, patch) in out.chunks_exact_mut(s.patch()).enumerate() {
        for (ky, taps) in patch.chunks_exact_mut(run).enumerate() {
            let Some(yy) = (y + ky).checked_sub(pad).filter(|&v| v < s.height) else {
                taps.fill(0.0);
                continue;
            };
            let line = &x[base + yy * w * c..base + (yy + 1) * w * c];
            match ox.checked_sub(pad).filter(|&x0| x0 + k <= w) {
                Some(x0) => {
                    for (t, v) in taps.iter_mut().zip(&line[x0 * c..x0 * c + run]) {
                        *t = *v;
                    }
                }
                None => {
                    for (kx, tap) in taps.chunks_exact_mut(c).enumerate() {
                        match (ox + kx).checked_sub(pad).filter(|&v| v < w) {
                            Some(xx) => tap.copy_from_slice(&line[xx * c..(xx + 1) * c]),
                            None => tap.fill(0.0),
                        }
                    }
                }
            }
        }
    }
}

/// One image's gradient from its patches' gradients (`dcol`, `pixels × patch`): each output
/// pixel's patch added back onto the input values it was cut from, a patch row's `K · C_in`
/// values as one run as in [`patch_image_row`], then times `act'` of each input's activation.
/// The output pixels are visited last to first, so each input value receives its entries with
/// `ky`, then `kx`, ascending: the order the GPU's gather sums them in. (Gathering each input value's entries one tap at a time took 1.6 ms of a 14 ms step at
/// batch 256, measured.)
fn unpatch_image(dcol: &[f32], a_prev: &[f32], act: Activation, s: ConvShape, dx: &mut [f32]) {
    let (c, k, pad, w) = (s.channels_in, s.kernel, s.pad(), s.width);
    let run = k * c;
    dx.fill(0.0);
    for pixel in (0..s.pixels()).rev() {
        let (oy, ox) = (pixel / w, pixel % w);
        let patch = &dcol[pixel * s.patch()..(pixel + 1) * s.patch()];
        for (ky, taps) in patch.chunks_exact(run).enumerate() {
            let Some(yy) = (oy + ky).checked_sub(pad).filter(|&v| v < s.height) else {
                continue;
            };
            let line = &mut dx[yy * w * c..(yy + 1) * w * c];
            match ox.checked_sub(pad).filter(|&x0| x0 + k <= w) {
                Some(x0) => {
                    for (d, t) in line[x0 * c..x0 * c + run].iter_mut().zip(taps) {
                        *d += t;
                    }
                }
                None => {
                    for (kx, tap) in taps.chunks_exact(c).enumerate() {
                        if let Some(xx) = (ox + kx).checked_sub(pad).filter(|&v| v < w) {
                            for (d, t) in line[xx * c..(xx + 1) * c].iter_mut().zip(tap) {
                                *d += t;
                            }
                        }
                    }
                }
            }
        }
    }
    if act != Activation::Identity {
        for (d, a) in dx.iter_mut().zip(a_prev) {
            *d *= act.derivative_from_output(*a);
        }
    }
}

/// The four values of a 2×2 window in the order a tie is decided, (0,0), (0,1), (1,0), (1,1),
/// and which is the first of the largest, by the same comparisons on both devices (a NaN
/// never replaces the first value).
#[inline]
fn first_largest(v: [f32; 4]) -> (usize, f32) {
    let mut best = (0, v[0]);
    for (i, &x) in v.iter().enumerate().skip(1) {
        if x > best.1 {
            best = (i, x);
        }
    }
    best
}

/// 2×2 max pooling of one channels-last image, a window's four channel runs at a time so the
/// loop over channels runs without index arithmetic (looking each value up by its window and
/// channel took 2 ms of a 17 ms step at batch 256, measured). An odd last row or column
/// belongs to no window.
fn pool_image(image: &[f32], s: PoolShape, pooled: &mut [f32]) {
    let (c, row) = (s.channels, s.width * s.channels);
    let mut out = pooled.chunks_exact_mut(c);
    for oy in 0..s.out_height() {
        let (top, bottom) = image[2 * oy * row..].split_at(row);
        for ox in 0..s.out_width() {
            let at = 2 * ox * c;
            let (t, b) = (&top[at..at + 2 * c], &bottom[at..at + 2 * c]);
            let Some(o) = out.next() else { return };
            for (ch, o) in o.iter_mut().enumerate() {
                *o = first_largest([t[ch], t[c + ch], b[ch], b[c + ch]]).1;
            }
        }
    }
}

/// Max pooling's gradient for one image: each window's first largest value gets
/// `dout · act'(value)`, the others 0.
fn unpool_image(image: &[f32], dout: &[f32], act: Activation, s: PoolShape, grad: &mut [f32]) {
    let (c, row) = (s.channels, s.width * s.channels);
    // Every value of a window is written below; only an odd last row or column needs zeros.
    if s.height % 2 == 1 || s.width % 2 == 1 {
        grad.fill(0.0);
    }
    let mut d = dout.chunks_exact(c);
    for oy in 0..s.out_height() {
        let (top, bottom) = image[2 * oy * row..].split_at(row);
        let (g_top, g_bottom) = grad[2 * oy * row..].split_at_mut(row);
        for ox in 0..s.out_width() {
            let at = 2 * ox * c;
            let (t, b) = (&top[at..at + 2 * c], &bottom[at..at + 2 * c]);
            let (gt, gb) = (&mut g_top[at..at + 2 * c], &mut g_bottom[at..at + 2 * c]);
            let Some(d) = d.next() else { return };
            for (ch, &dv) in d.iter().enumerate() {
                let (best, v) = first_largest([t[ch], t[c + ch], b[ch], b[c + ch]]);
                let g = dv * act.derivative_from_output(v);
                let at = |i: usize| if best == i { g } else { 0.0 };
                (gt[ch], gt[c + ch], gb[ch], gb[c + ch]) = (at(0), at(1), at(2), at(3));
            }
        }
    }
}

impl CpuBackend {
    /// Runs `kernel` on each `len`-value chunk of `out` with its index, over the pool when
    /// `out` is large enough.
    pub(super) fn rows<F>(&self, out: &mut [f32], len: usize, kernel: F)
    where
        F: Fn((usize, &mut [f32])) + Sync + Send,
    {
        self.chunks(out, len, self.parallel(out.len()), kernel);
    }

    /// Runs `kernel` on each `len`-value chunk of `out` with its index, over the pool if
    /// `split`, else on the calling thread.
    pub(super) fn chunks<F>(&self, out: &mut [f32], len: usize, split: bool, kernel: F)
    where
        F: Fn((usize, &mut [f32])) + Sync + Send,
    {
        if split {
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
        let per_row = s.width * s.patch();
        self.rows(col_f, per_row, |(r, out)| patch_image_row(x_f, s, r, out));
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
        let patches = s.pixels() * s.patch();
        self.rows(dx_f, s.image_in(), |(b, out)| {
            let dcol = &d[b * patches..(b + 1) * patches];
            let a_prev = &a[b * s.image_in()..(b + 1) * s.image_in()];
            unpatch_image(dcol, a_prev, act, s, out);
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
            pool_image(&x_f[b * s.image_in()..(b + 1) * s.image_in()], s, pooled);
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
            unpool_image(image, d, act, s, grad);
        });
        store(dx, s2, &mut self.census);
        self.working = work;
        Ok(())
    }
}
