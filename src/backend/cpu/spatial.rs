//! 2×2 max pooling on the CPU, channels last (see [`PoolShape`]), image by image over the pool
//! when there are enough values to pay for it; and the helpers that split a kernel's output
//! into chunks over the pool, which the convolutions (`convolution.rs`) use too.

use rayon::prelude::*;

use super::CpuBackend;
use super::values::{slots, store, view, view_mut};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, PoolShape};
use crate::backend::tensor::Tensor;
use crate::device::Device;

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
        checks::fused_activation("max_pool_backward", act)?;
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
