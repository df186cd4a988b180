//! Layer normalisation and the activations that are layers of their own (GELU) on the CPU: row
//! by row over the pool when there are enough values to pay for it. Statistics are summed in
//! f32 in two passes (the mean, then the squared distances from it), as the GPU's kernel does.

use rayon::prelude::*;

use super::CpuBackend;
use super::values::{host_mut, put, slots, store, view, view_mut, widened};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, LAYER_NORM_EPS};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// Values an element-wise chunk takes, so a wide tensor splits over the pool however its rows
/// are shaped.
const CHUNK: usize = 4096;

/// `out[i] = act(x[i])`, one copy of the loop a kind (each closure its own type), so the kind is
/// a constant in each: a loop that matches on the kind at every value does not vectorise.
/// Measured on the baby GPT's CPU step at batch 12 (release, 2-core AVX-512 VM, `perf`): GELU
/// forward and backward went from 21% of the step with the match inside the loop to 8% with a
/// loop a kind. The loops are compiled for the build's baseline (SSE2's four lanes): running
/// them through `pulp`'s dispatch for AVX-512 measured no gain, the closure not being inlined
/// into the wider function.
fn apply_each(act: Activation, x: &[f32], out: &mut [f32]) {
    fn each(x: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
        for (o, &z) in out.iter_mut().zip(x) {
            *o = f(z);
        }
    }
    match act {
        Activation::Identity => each(x, out, |z| Activation::Identity.apply(z)),
        Activation::Relu => each(x, out, |z| Activation::Relu.apply(z)),
        Activation::Tanh => each(x, out, |z| Activation::Tanh.apply(z)),
        Activation::Sigmoid => each(x, out, |z| Activation::Sigmoid.apply(z)),
        Activation::Gelu => each(x, out, |z| Activation::Gelu.apply(z)),
    }
}

/// `dx[i] = dout[i] · act'(x[i])`, one copy of the loop a kind, as [`apply_each`].
fn derivative_each(act: Activation, (x, dout): (&[f32], &[f32]), dx: &mut [f32]) {
    fn each(x: &[f32], dout: &[f32], dx: &mut [f32], f: impl Fn(f32) -> f32) {
        for ((o, &z), &d) in dx.iter_mut().zip(x).zip(dout) {
            *o = d * f(z);
        }
    }
    match act {
        Activation::Identity => each(x, dout, dx, |z| Activation::Identity.derivative(z)),
        Activation::Relu => each(x, dout, dx, |z| Activation::Relu.derivative(z)),
        Activation::Tanh => each(x, dout, dx, |z| Activation::Tanh.derivative(z)),
        Activation::Sigmoid => each(x, dout, dx, |z| Activation::Sigmoid.derivative(z)),
        Activation::Gelu => each(x, dout, dx, |z| Activation::Gelu.derivative(z)),
    }
}

/// One row's mean and `1 / √(σ² + ε)` (the biased variance, as PyTorch's `LayerNorm`).
fn row_stats(x: &[f32]) -> (f32, f32) {
    let n = x.len().max(1) as f32;
    let mean = x.iter().sum::<f32>() / n;
    let variance = x.iter().map(|&v| (v - mean) * (v - mean)).sum::<f32>() / n;
    (mean, 1.0 / (variance + LAYER_NORM_EPS).sqrt())
}

/// One row of `LayerNorm`'s input gradient: `r · (g − mean(g) − x̂ · mean(g · x̂))` with
/// `g = dout · gamma`, `x̂ = (x − μ) · r`.
fn row_input_grad(x: &[f32], d: &[f32], gamma: &[f32], (mean, r): (f32, f32), dx: &mut [f32]) {
    let n = x.len().max(1) as f32;
    let (mut sum_g, mut sum_gx) = (0.0f32, 0.0f32);
    for ((&v, &dv), &g) in x.iter().zip(d).zip(gamma) {
        let (g, xhat) = (dv * g, (v - mean) * r);
        sum_g += g;
        sum_gx += g * xhat;
    }
    let (mean_g, mean_gx) = (sum_g / n, sum_gx / n);
    for (((o, &v), &dv), &g) in dx.iter_mut().zip(x).zip(d).zip(gamma) {
        let xhat = (v - mean) * r;
        *o = r * (dv * g - mean_g - xhat * mean_gx);
    }
}

impl CpuBackend {
    pub(super) fn activation_forward_op(
        &mut self,
        x: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::activation(Device::Cpu, "activation_forward", &[x, out])?;
        let mut work = self.take_working(&[x, out])?;
        let [s0, s1, ..] = slots(&mut work);
        let x_f = view(x, s0)?;
        let out_f = view_mut(out, &mut *s1, false)?;
        self.rows(out_f, CHUNK, |(i, chunk)| {
            apply_each(act, &x_f[i * CHUNK..], chunk);
        });
        store(out, s1, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn activation_backward_op(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::activation(Device::Cpu, "activation_backward", &[x, dout, dx])?;
        let mut work = self.take_working(&[x, dout, dx])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let (x_f, d_f) = (view(x, s0)?, view(dout, s1)?);
        let dx_f = view_mut(dx, &mut *s2, false)?;
        self.rows(dx_f, CHUNK, |(i, chunk)| {
            let (x, d) = (&x_f[i * CHUNK..], &d_f[i * CHUNK..]);
            derivative_each(act, (x, d), chunk);
        });
        store(dx, s2, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn layer_norm_op(
        &mut self,
        x: &Tensor,
        (gamma, beta): (&Tensor, &Tensor),
        out: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (_, n) = checks::layer_norm(
            Device::Cpu,
            "layer_norm",
            (&[x, out], &[gamma, beta]),
            stats,
        )?;
        let (gamma_f, beta_f) = (widened(gamma), widened(beta));
        let mut work = self.take_working(&[x, out])?;
        let [s0, s1, ..] = slots(&mut work);
        let x_f = view(x, s0)?;
        let out_f = view_mut(out, &mut *s1, false)?;
        let row = |((x, out), stat): ((&[f32], &mut [f32]), &mut [f32])| {
            let (mean, r) = row_stats(x);
            for (((o, &v), &g), &b) in out.iter_mut().zip(x).zip(&gamma_f).zip(&beta_f) {
                *o = (v - mean) * r * g + b;
            }
            stat.copy_from_slice(&[mean, r]);
        };
        let stats_f = host_mut(stats);
        if self.parallel(out_f.len()) {
            self.pool.install(|| {
                x_f.par_chunks(n)
                    .zip(out_f.par_chunks_mut(n))
                    .zip(stats_f.par_chunks_mut(2))
                    .for_each(row);
            });
        } else {
            x_f.chunks(n)
                .zip(out_f.chunks_mut(n))
                .zip(stats_f.chunks_mut(2))
                .for_each(row);
        }
        store(out, s1, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn layer_norm_backward_op(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        (gamma, stats): (&Tensor, &Tensor),
        dx: &mut Tensor,
        (dgamma, dbeta): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        let (_, n) = checks::layer_norm(
            Device::Cpu,
            "layer_norm_backward",
            (&[x, dout, dx], &[gamma, dgamma, dbeta]),
            stats,
        )?;
        let (gamma_f, stats_f) = (widened(gamma), widened(stats));
        let mut work = self.take_working(&[x, dout, dx])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let (x_f, d_f) = (view(x, s0)?, view(dout, s1)?);
        let dx_f = view_mut(dx, &mut *s2, false)?;
        self.rows(dx_f, n, |(r, dx)| {
            let at = r * n..(r + 1) * n;
            let stat = (stats_f[2 * r], stats_f[2 * r + 1]);
            row_input_grad(&x_f[at.clone()], &d_f[at], &gamma_f, stat, dx);
        });
        // The parameters' gradients sum over the rows: a pass of its own, row after row, so
        // each column's sum is taken in one order.
        let (mut dg, mut db) = (vec![0.0f32; n], vec![0.0f32; n]);
        for ((x, d), stat) in x_f.chunks(n).zip(d_f.chunks(n)).zip(stats_f.chunks(2)) {
            let (mean, r) = (stat[0], stat[1]);
            for (((g, b), &v), &dv) in dg.iter_mut().zip(db.iter_mut()).zip(x).zip(d) {
                *g += dv * (v - mean) * r;
                *b += dv;
            }
        }
        store(dx, s2, &mut self.census);
        self.working = work;
        put(dgamma, &dg, &mut self.census);
        put(dbeta, &db, &mut self.census);
        Ok(())
    }
}
