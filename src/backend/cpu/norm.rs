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

wide! {
/// `out[i] = act(x[i])`, one copy of the loop a kind (see `per_kind!`). Measured on the baby
/// GPT's CPU step at batch 12 (release, 2-core AVX-512 VM, `perf`): GELU forward and backward
/// went from 21% of the step with the match inside the loop to 8% with a loop a kind, in SSE2's
/// four lanes; with AVX-512's sixteen, at batch 32, from 10% to 5.5%.
fn apply_each(act: Activation, x: &[f32], out: &mut [f32]) {
    per_kind!(act, kind => {
        for (o, &z) in out.iter_mut().zip(x) {
            *o = kind.apply(z);
        }
    });
}
}

wide! {
/// `dx[i] = dout[i] · act'(x[i])`, one copy of the loop a kind, as [`apply_each`].
fn derivative_each(act: Activation, (x, dout): (&[f32], &[f32]), dx: &mut [f32]) {
    per_kind!(act, kind => {
        for ((o, &z), &d) in dx.iter_mut().zip(x).zip(dout) {
            *o = d * kind.derivative(z);
        }
    });
}
}

/// Running sums a row's statistics keep side by side: one AVX-512 vector, two AVX2 ones, four
/// SSE2 ones. One running sum makes every addition wait for the one before and cannot vectorise;
/// sixteen summed lane by lane, then added in order, can, and the order is set by the lanes, not
/// by the vector width, so every width gives the same bits.
const LANES: usize = 16;

/// `Σ f(x[i], y[i], z[i])` as sixteen running sums (see [`LANES`]), then the rest in order.
#[inline]
fn lane_sum(x: &[f32], y: &[f32], z: &[f32], f: impl Fn(f32, f32, f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let mut chunks = (
        x.chunks_exact(LANES),
        y.chunks_exact(LANES),
        z.chunks_exact(LANES),
    );
    for ((xc, yc), zc) in (&mut chunks.0).zip(&mut chunks.1).zip(&mut chunks.2) {
        for (((l, &a), &b), &c) in lanes.iter_mut().zip(xc).zip(yc).zip(zc) {
            *l += f(a, b, c);
        }
    }
    let mut total = lanes.iter().sum::<f32>();
    let (xs, ys, zs) = chunks;
    for ((&a, &b), &c) in xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .zip(zs.remainder())
    {
        total += f(a, b, c);
    }
    total
}

wide! {
/// One row's mean and `1 / √(σ² + ε)` (the biased variance, as PyTorch's `LayerNorm`).
fn row_stats(x: &[f32]) -> (f32, f32) {
    let n = x.len().max(1) as f32;
    let mean = lane_sum(x, x, x, |v, _, _| v) / n;
    let variance = lane_sum(x, x, x, |v, _, _| (v - mean) * (v - mean)) / n;
    (mean, 1.0 / (variance + LAYER_NORM_EPS).sqrt())
}
}

wide! {
/// One row of `LayerNorm`'s output: `(x − μ) · r · gamma + beta`.
fn normalize_row(
    x: &[f32],
    (mean, r): (f32, f32),
    (gamma, beta): (&[f32], &[f32]),
    out: &mut [f32],
) {
    for (((o, &v), &g), &b) in out.iter_mut().zip(x).zip(gamma).zip(beta) {
        *o = (v - mean) * r * g + b;
    }
}
}

wide! {
/// One row's share of `LayerNorm`'s parameter gradients: `dgamma += dout · x̂`, `dbeta += dout`.
fn add_param_grads(
    (x, d): (&[f32], &[f32]),
    (mean, r): (f32, f32),
    (dg, db): (&mut [f32], &mut [f32]),
) {
    for (((g, b), &v), &dv) in dg.iter_mut().zip(db.iter_mut()).zip(x).zip(d) {
        *g += dv * (v - mean) * r;
        *b += dv;
    }
}
}

wide! {
/// One row of `LayerNorm`'s input gradient: `r · (g − mean(g) − x̂ · mean(g · x̂))` with
/// `g = dout · gamma`, `x̂ = (x − μ) · r`.
fn row_input_grad(x: &[f32], d: &[f32], gamma: &[f32], (mean, r): (f32, f32), dx: &mut [f32]) {
    let n = x.len().max(1) as f32;
    let sum_g = lane_sum(x, d, gamma, |_, dv, g| dv * g);
    let sum_gx = lane_sum(x, d, gamma, |v, dv, g| dv * g * ((v - mean) * r));
    let (mean_g, mean_gx) = (sum_g / n, sum_gx / n);
    for (((o, &v), &dv), &g) in dx.iter_mut().zip(x).zip(d).zip(gamma) {
        let xhat = (v - mean) * r;
        *o = r * (dv * g - mean_g - xhat * mean_gx);
    }
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
            normalize_row(x, (mean, r), (&gamma_f, &beta_f), out);
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
            add_param_grads((x, d), (stat[0], stat[1]), (&mut dg, &mut db));
        }
        store(dx, s2, &mut self.census);
        self.working = work;
        put(dgamma, &dg, &mut self.census);
        put(dbeta, &db, &mut self.census);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen running sums then the rest add every value once, at every length around a
    /// multiple of the lanes (values are multiples of 1/8 whose sums are exact in f32, so any
    /// order must give the f64 sum).
    #[test]
    fn lane_sums_add_every_value_once() {
        for len in [0, 1, 15, 16, 17, 31, 32, 33, 128, 130] {
            let x: Vec<f32> = (0..len)
                .map(|i| ((i * 37) % 29) as f32 / 8.0 - 1.5)
                .collect();
            let y: Vec<f32> = (0..len).map(|i| ((i * 11) % 13) as f32 / 8.0).collect();
            let want: f64 = x.iter().zip(&y).map(|(&a, &b)| f64::from(a * b)).sum();
            let got = lane_sum(&x, &y, &x, |a, b, _| a * b);
            assert_eq!(f64::from(got), want, "length {len}");
        }
    }

    /// A row's statistics and the normalised row match their definitions in f64.
    #[test]
    fn a_rows_statistics_and_normal_form_match_the_definition() {
        let n = 37;
        let x: Vec<f32> = (0..n)
            .map(|i| (i as f32 * 0.71).sin() * 3.0 + 1.0)
            .collect();
        let (gamma, beta): (Vec<f32>, Vec<f32>) = (0..n)
            .map(|i| (1.0 + i as f32 / 50.0, i as f32 / 10.0 - 1.0))
            .unzip();
        let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
        let var = x
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        let r = 1.0 / (var + f64::from(LAYER_NORM_EPS)).sqrt();
        let (got_mean, got_r) = row_stats(&x);
        assert!(
            (f64::from(got_mean) - mean).abs() < 1e-6,
            "{got_mean} vs {mean}"
        );
        assert!((f64::from(got_r) - r).abs() < 1e-5 * r, "{got_r} vs {r}");
        let mut out = vec![0.0; n];
        normalize_row(&x, (got_mean, got_r), (&gamma, &beta), &mut out);
        for (i, &o) in out.iter().enumerate() {
            let want = (f64::from(x[i]) - mean) * r * f64::from(gamma[i]) + f64::from(beta[i]);
            assert!((f64::from(o) - want).abs() < 1e-5, "[{i}] {o} vs {want}");
        }
    }
}
