//! The ops of a training step on the CPU: products through `product.rs`, everything element-wise
//! as plain loops, split over the pool when the work is large enough.

use ndarray::{ArrayView1, ArrayViewMut1, Zip};

use super::matmul::Layout;
use super::product::Epilogue;
use super::values::{host, host_mut, map_values, put, slots, store, view, view_mut, widened};
use super::{CpuBackend, flush_subnormal};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, AdamHyper};
use crate::backend::tensor::{Storage, Tensor, check_device};
use crate::device::Device;
use crate::precision::{DType, Half};

/// A slice as a 1-D array, for [`Zip`]: element-wise kernels name each operand once and
/// ndarray walks them together (and splits them over the pool).
fn vector(values: &[f32]) -> ArrayView1<'_, f32> {
    ArrayView1::from(values)
}

/// As [`vector`], to write.
fn vector_mut(values: &mut [f32]) -> ArrayViewMut1<'_, f32> {
    ArrayViewMut1::from(values)
}

impl CpuBackend {
    pub(super) fn copy_op(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        checks::copy(Device::Cpu, src, dst)?;
        if src.dtype() == dst.dtype() {
            match (src.storage(), dst.storage_mut()) {
                (Storage::CpuHalf(from), Storage::CpuHalf(to)) => to.copy_from_slice(from),
                (Storage::Cpu(from), Storage::Cpu(to)) => to.copy_from_slice(from),
                _ => {}
            }
        } else {
            let values = match src.storage() {
                Storage::Cpu(v) => std::borrow::Cow::Borrowed(v.as_slice()),
                _ => std::borrow::Cow::Owned(widened(src)),
            };
            put(dst, &values, &mut self.census);
        }
        Ok(())
    }

    pub(super) fn linear_forward_op(
        &mut self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_forward(Device::Cpu, x, w, b, out)?;
        let mut work = self.take_working(&[x, w, b, out])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let (x_f, w_f, b_f) = (view(x, s0)?, view(w, s1)?, view(b, s2)?);
        self.product(
            (x_f, Layout::Normal),
            (w_f, Layout::Normal),
            (batch, fan_out, fan_in),
            view_mut(out, &mut *s3, false)?,
            Epilogue::BiasAct(b_f, act),
        );
        store(out, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn linear_backward_input_op(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        a_prev: &Tensor,
        act_prev: Activation,
        dz_prev: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) =
            checks::linear_backward_input(Device::Cpu, dz, w, a_prev, dz_prev)?;
        checks::fused_activation("linear_backward_input", act_prev)?;
        let mut work = self.take_working(&[dz, w, a_prev, dz_prev])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let (dz_f, w_f, a_f) = (view(dz, s0)?, view(w, s1)?, view(a_prev, s2)?);
        self.product(
            (dz_f, Layout::Normal),
            (w_f, Layout::Transposed),
            (batch, fan_in, fan_out),
            view_mut(dz_prev, &mut *s3, false)?,
            Epilogue::ActGrad(a_f, act_prev),
        );
        store(dz_prev, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn linear_backward_params_op(
        &mut self,
        x: &Tensor,
        dz: &Tensor,
        dw: &mut Tensor,
        db: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_backward_params(Device::Cpu, x, dz, dw, db)?;
        let mut work = self.take_working(&[x, dz, dw, db])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let (x_f, dz_f) = (view(x, s0)?, view(dz, s1)?);
        // Timed as two kernels, as the GPU runs them: the product, then the column sums.
        let clock = self.op_start();
        self.product(
            (x_f, Layout::Transposed),
            (dz_f, Layout::Normal),
            (fan_in, fan_out, batch),
            view_mut(dw, &mut *s2, false)?,
            Epilogue::None,
        );
        store(dw, s2, &mut self.census);
        self.op_end("weight_grad", clock);
        let clock = self.op_start();
        column_sums(dz_f, view_mut(db, &mut *s3, false)?);
        store(db, s3, &mut self.census);
        self.op_end("bias_grad", clock);
        self.working = work;
        Ok(())
    }

    pub(super) fn softmax_cross_entropy_op(
        &mut self,
        logits: &Tensor,
        targets: &Tensor,
        dlogits: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        let (batch, classes) =
            checks::softmax_cross_entropy(Device::Cpu, logits, targets, dlogits, stats)?;
        let mut work = self.take_working(&[logits, targets, dlogits, stats])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let z = view(logits, s0)?;
        let y = view(targets, s1)?;
        let dz = view_mut(dlogits, &mut *s2, false)?;
        let scale = grad_scale / batch as f32;
        let mut loss_sum = 0.0f32;
        let mut correct = 0.0f32;
        for r in 0..batch {
            let row = &z[r * classes..(r + 1) * classes];
            let target = y[r] as usize;
            // The first maximum wins ties, as in the shader and in torch.argmax.
            let (mut best, mut max) = (0usize, row[0]);
            for (j, &v) in row.iter().enumerate().skip(1) {
                if v > max {
                    best = j;
                    max = v;
                }
            }
            let mut sum = 0.0f32;
            for &v in row {
                sum += (v - max).exp();
            }
            let target_logit = row.get(target).copied().unwrap_or(max);
            loss_sum += sum.ln() - (target_logit - max);
            if best == target {
                correct += 1.0;
            }
            let d = &mut dz[r * classes..(r + 1) * classes];
            for (j, (dj, &v)) in d.iter_mut().zip(row).enumerate() {
                let p = (v - max).exp() / sum;
                let onehot = if j == target { 1.0 } else { 0.0 };
                // Once the classes are far apart, a wrong class's probability is a subnormal
                // float; every product of the backward pass would then run on subnormals, which
                // x86 cores multiply many times slower (Adam steps on the trained spiral took
                // 1.8x as long). Below f32's smallest normal it is zero for any purpose here.
                *dj = flush_subnormal((p - onehot) * scale);
            }
        }
        store(dlogits, s2, &mut self.census);
        let s = view_mut(stats, &mut *s3, true)?;
        s[0] += loss_sum;
        s[1] += correct;
        s[2] += batch as f32;
        store(stats, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn mse_loss_op(
        &mut self,
        pred: &Tensor,
        targets: &Tensor,
        dpred: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        let (batch, outputs) = checks::mse_loss(Device::Cpu, pred, targets, dpred, stats)?;
        let mut work = self.take_working(&[pred, targets, dpred, stats])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let (p, y) = (view(pred, s0)?, view(targets, s1)?);
        let d = view_mut(dpred, &mut *s2, false)?;
        let scale = 2.0 * grad_scale / (batch * outputs) as f32;
        let per_row = 1.0 / outputs as f32;
        let (mut squared_sum, mut abs_sum) = (0.0f32, 0.0f32);
        // Row by row, in the order the shader's invocation adds them within its row.
        for r in 0..batch {
            let (mut squared, mut abs) = (0.0f32, 0.0f32);
            for j in r * outputs..(r + 1) * outputs {
                let e = p[j] - y[j];
                squared += e * e;
                abs += e.abs();
                d[j] = e * scale;
            }
            squared_sum += squared * per_row;
            abs_sum += abs * per_row;
        }
        store(dpred, s2, &mut self.census);
        let s = view_mut(stats, &mut *s3, true)?;
        s[0] += squared_sum;
        s[1] += abs_sum;
        s[2] += batch as f32;
        store(stats, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn sgd_step_op(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        lr: f32,
    ) -> Result<(), BackendError> {
        checks::elementwise(Device::Cpu, "sgd_step", param, &[grad])?;
        let mut work = self.take_working(&[param, grad])?;
        let [s0, s1, ..] = slots(&mut work);
        let (p, g) = (view_mut(param, &mut *s0, true)?, view(grad, s1)?);
        let len = p.len();
        let zip = Zip::from(vector_mut(p)).and(vector(g));
        let update = |p: &mut f32, &g: &f32| *p -= lr * g;
        if self.parallel(len) {
            self.pool.install(|| zip.par_for_each(update));
        } else {
            zip.for_each(update);
        }
        store(param, s0, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn momentum_step_op(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        velocity: &mut Tensor,
        lr: f32,
        momentum: f32,
    ) -> Result<(), BackendError> {
        checks::elementwise(Device::Cpu, "momentum_step", param, &[grad, velocity])?;
        let mut work = self.take_working(&[param, grad, velocity])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let p = view_mut(param, &mut *s0, true)?;
        let g = view(grad, s1)?;
        let v = view_mut(velocity, &mut *s2, true)?;
        let len = p.len();
        let zip = Zip::from(vector_mut(p)).and(vector(g)).and(vector_mut(v));
        let update = |p: &mut f32, &g: &f32, v: &mut f32| {
            *v = flush_subnormal(momentum * *v + g);
            *p -= lr * *v;
        };
        if self.parallel(len) {
            self.pool.install(|| zip.par_for_each(update));
        } else {
            zip.for_each(update);
        }
        store(param, s0, &mut self.census);
        store(velocity, s2, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn adam_step_op(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError> {
        checks::elementwise(Device::Cpu, "adam_step", param, &[grad, m, v])?;
        let (bias1, bias2) = hyper.bias_corrections();
        let shrink = hyper.shrink();
        let AdamHyper {
            lr,
            beta1,
            beta2,
            eps,
            ..
        } = hyper;
        let mut work = self.take_working(&[param, grad, m, v])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let p = view_mut(param, &mut *s0, true)?;
        let g = view(grad, s1)?;
        let (m_f, v_f) = (view_mut(m, &mut *s2, true)?, view_mut(v, &mut *s3, true)?);
        let len = p.len();
        let zip = Zip::from(vector_mut(p))
            .and(vector(g))
            .and(vector_mut(m_f))
            .and(vector_mut(v_f));
        let update = |p: &mut f32, &g: &f32, m: &mut f32, v: &mut f32| {
            *m = flush_subnormal(beta1 * *m + (1.0 - beta1) * g);
            *v = flush_subnormal(beta2 * *v + (1.0 - beta2) * g * g);
            let m_hat = *m / bias1;
            let v_hat = *v / bias2;
            // AdamW's decoupled decay first (`shrink` is 1 for Adam: the same bits as before).
            *p = *p * shrink - lr * m_hat / (v_hat.sqrt() + eps);
        };
        if self.parallel(len) {
            self.pool.install(|| zip.par_for_each(update));
        } else {
            zip.for_each(update);
        }
        store(param, s0, &mut self.census);
        store(m, s2, &mut self.census);
        store(v, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    pub(super) fn round_to_op(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError> {
        check_device(Device::Cpu, "round_to", &[t])?;
        if t.dtype() == DType::F32 {
            let count = self.census.role_mut(t.role());
            for v in host_mut(t) {
                let x = *v;
                *v = format.round(x);
                count.count(x, *v);
            }
        } else {
            map_values(t, |v| format.round(v), &mut self.census);
        }
        Ok(())
    }

    pub(super) fn scale_op(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError> {
        check_device(Device::Cpu, "scale", &[t])?;
        map_values(t, |v| v * factor, &mut self.census);
        Ok(())
    }

    pub(super) fn count_non_finite_op(tensors: &[&Tensor]) -> Result<u64, BackendError> {
        check_device(Device::Cpu, "count_non_finite", tensors)?;
        let mut count = 0u64;
        for t in tensors {
            count += match t.storage() {
                Storage::CpuHalf(bits) => {
                    // Exponent bits all set: infinity or NaN, in either format.
                    let exponent: u16 = if t.dtype() == DType::Bf16 {
                        0x7f80
                    } else {
                        0x7c00
                    };
                    bits.iter().filter(|&&b| b & exponent == exponent).count()
                }
                _ => host(t).iter().filter(|v| !v.is_finite()).count(),
            } as u64;
        }
        Ok(count)
    }
}

wide! {
/// `db[j] = Σ_i dz[i, j]`, row by row so that the inner loop runs along contiguous memory.
///
/// Narrow rows (a convolution's few output channels, over every pixel of the batch) are taken
/// several at a time into running sums side by side, one per column and row of the group:
/// with one running sum per column, each addition waited for the one before it (measured: the
/// 1 → 8 block's bias gradient on MNIST at batch 256, 200,704 rows, took as long as its weight
/// gradient's 29 MFLOP).
pub(super) fn column_sums(dz: &[f32], db: &mut [f32]) {
    /// Running sums kept side by side: four AVX-512 vectors, eight AVX2 ones.
    const RUN: usize = 64;
    let cols = db.len();
    db.fill(0.0);
    if cols == 0 {
        return;
    }
    let width = (RUN / cols).max(1) * cols;
    if width == cols {
        for row in dz.chunks_exact(cols) {
            add_into(db, row);
        }
        return;
    }
    let mut run = [0.0f32; RUN];
    let run = &mut run[..width];
    let mut groups = dz.chunks_exact(width);
    for group in &mut groups {
        add_into(run, group);
    }
    for row in groups.remainder().chunks_exact(cols) {
        add_into(db, row);
    }
    for part in run.chunks_exact(cols) {
        add_into(db, part);
    }
}
}

/// `sums[j] += values[j]`.
fn add_into(sums: &mut [f32], values: &[f32]) {
    for (s, v) in sums.iter_mut().zip(values) {
        *s += v;
    }
}

#[cfg(test)]
mod tests {
    use super::column_sums;

    /// Every column of every width sums all its rows, whichever path the width takes (rows
    /// grouped, a remainder, or one row at a time). The values are multiples of 1/8 small
    /// enough that every sum is exact in f32, so any order must give the f64 sum exactly.
    #[test]
    fn column_sums_add_every_row_at_every_width() {
        for cols in [1, 3, 8, 16, 63, 64, 65, 200] {
            for rows in [0, 1, 7, 8, 9, 100, 1001] {
                let dz: Vec<f32> = (0..rows * cols)
                    .map(|i| ((i * 37) % 101) as f32 / 8.0 - 6.0)
                    .collect();
                let mut db = vec![f32::NAN; cols];
                column_sums(&dz, &mut db);
                for (j, got) in db.iter().enumerate() {
                    let want: f64 = (0..rows).map(|i| f64::from(dz[i * cols + j])).sum();
                    assert_eq!(f64::from(*got), want, "{rows}×{cols}: column {j}");
                }
            }
        }
    }
}
