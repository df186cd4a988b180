//! The CPU device: plain `Vec<f32>` tensors and rayon-parallel kernels.
//!
//! Each kernel sums its products in the same order as the WGSL kernels (`k` ascending, one
//! accumulator per output), so the two devices agree to rounding in FP32.

use rayon::prelude::*;

use super::{Activation, AdamHyper, Backend, BackendError, Device, Storage, Tensor, checks};

/// Below this many multiply-adds a kernel runs on the calling thread: handing tiny work to the
/// rayon pool costs more than the work itself.
const PARALLEL_MIN_FLOPS: usize = 1 << 15;

/// How one operand of a matrix product is laid out in memory.
#[derive(Clone, Copy)]
enum Layout {
    /// Row-major as stored.
    Normal,
    /// The stored matrix is the transpose of the operand.
    Transposed,
}

/// What happens to each output of a matrix product after the sum.
#[derive(Clone, Copy)]
enum Epilogue<'a> {
    /// `c = sum`.
    None,
    /// `c = act(sum + bias[j])`.
    BiasAct(&'a [f32], Activation),
    /// `c = sum * act'(aux[i, j])`.
    ActGrad(&'a [f32], Activation),
}

/// The CPU backend. It owns a rayon pool so the thread count is the user's choice, not the
/// machine's.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    threads: usize,
}

impl CpuBackend {
    /// A backend with `threads` worker threads (0 = one per core).
    pub fn new(threads: usize) -> Result<Self, BackendError> {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
        } else {
            threads
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cpu-kernel-{i}"))
            .build()
            .map_err(|e| BackendError::Setup(format!("cannot start the CPU thread pool: {e}")))?;
        Ok(Self { pool, threads })
    }
}

fn host(t: &Tensor) -> &[f32] {
    match t.storage() {
        Storage::Cpu(v) => v,
        // Device checks run before every access.
        Storage::Gpu(_) => &[],
    }
}

fn host_mut(t: &mut Tensor) -> &mut [f32] {
    match t.storage_mut() {
        Storage::Cpu(v) => v,
        Storage::Gpu(_) => &mut [],
    }
}

/// `c[m, n] = epilogue(op(a)[m, k] · op(b)[k, n])`.
///
/// With `b` normal each row of `c` is built as a sum of scaled rows of `b` (contiguous, so the
/// inner loop vectorises); with `b` transposed each output is a dot product of two contiguous
/// rows. Either way the sum for one output runs over `k` in ascending order.
fn gemm(
    pool: &rayon::ThreadPool,
    a: &[f32],
    a_layout: Layout,
    b: &[f32],
    b_layout: Layout,
    m: usize,
    n: usize,
    k: usize,
    c: &mut [f32],
    epilogue: Epilogue<'_>,
) {
    let a_at = |i: usize, kk: usize| match a_layout {
        Layout::Normal => a[i * k + kk],
        Layout::Transposed => a[kk * m + i],
    };
    let row = |i: usize, c_row: &mut [f32]| {
        match b_layout {
            Layout::Normal => {
                c_row.fill(0.0);
                for kk in 0..k {
                    let aik = a_at(i, kk);
                    let b_row = &b[kk * n..(kk + 1) * n];
                    for (cj, bj) in c_row.iter_mut().zip(b_row) {
                        *cj += aik * bj;
                    }
                }
            }
            Layout::Transposed => {
                for (j, cj) in c_row.iter_mut().enumerate() {
                    let b_row = &b[j * k..(j + 1) * k];
                    let mut acc = 0.0f32;
                    for (kk, bk) in b_row.iter().enumerate() {
                        acc += a_at(i, kk) * bk;
                    }
                    *cj = acc;
                }
            }
        }
        match epilogue {
            Epilogue::None => {}
            Epilogue::BiasAct(bias, act) => {
                for (cj, bj) in c_row.iter_mut().zip(bias) {
                    *cj = act.apply(*cj + bj);
                }
            }
            Epilogue::ActGrad(aux, act) => {
                let aux_row = &aux[i * n..(i + 1) * n];
                for (cj, aj) in c_row.iter_mut().zip(aux_row) {
                    *cj *= act.derivative_from_output(*aj);
                }
            }
        }
    };
    if m * n * k < PARALLEL_MIN_FLOPS || pool.current_num_threads() == 1 {
        for (i, c_row) in c.chunks_mut(n).enumerate() {
            row(i, c_row);
        }
    } else {
        pool.install(|| {
            c.par_chunks_mut(n)
                .enumerate()
                .for_each(|(i, c_row)| row(i, c_row));
        });
    }
}

impl Backend for CpuBackend {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn name(&self) -> String {
        format!("CPU, {} threads", self.threads)
    }

    fn threads(&self) -> Option<usize> {
        Some(self.threads)
    }

    fn zeros(&mut self, label: &str, rows: usize, cols: usize) -> Result<Tensor, BackendError> {
        Ok(Tensor::new(
            label,
            rows,
            cols,
            Storage::Cpu(vec![0.0; rows * cols]),
        ))
    }

    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError> {
        checks::write(Device::Cpu, t, values.len())?;
        host_mut(t).copy_from_slice(values);
        Ok(())
    }

    fn read(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError> {
        checks::read(Device::Cpu, t)?;
        Ok(host(t).to_vec())
    }

    fn linear_forward(
        &mut self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_forward(Device::Cpu, x, w, b, out)?;
        gemm(
            &self.pool,
            host(x),
            Layout::Normal,
            host(w),
            Layout::Normal,
            batch,
            fan_out,
            fan_in,
            host_mut(out),
            Epilogue::BiasAct(host(b), act),
        );
        Ok(())
    }

    fn linear_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        a_prev: &Tensor,
        act_prev: Activation,
        dz_prev: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) =
            checks::linear_backward_input(Device::Cpu, dz, w, a_prev, dz_prev)?;
        gemm(
            &self.pool,
            host(dz),
            Layout::Normal,
            host(w),
            Layout::Transposed,
            batch,
            fan_in,
            fan_out,
            host_mut(dz_prev),
            Epilogue::ActGrad(host(a_prev), act_prev),
        );
        Ok(())
    }

    fn linear_backward_params(
        &mut self,
        x: &Tensor,
        dz: &Tensor,
        dw: &mut Tensor,
        db: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_backward_params(Device::Cpu, x, dz, dw, db)?;
        gemm(
            &self.pool,
            host(x),
            Layout::Transposed,
            host(dz),
            Layout::Normal,
            fan_in,
            fan_out,
            batch,
            host_mut(dw),
            Epilogue::None,
        );
        let dz = host(dz);
        let db = host_mut(db);
        for (j, dbj) in db.iter_mut().enumerate() {
            let mut acc = 0.0f32;
            for r in 0..batch {
                acc += dz[r * fan_out + j];
            }
            *dbj = acc;
        }
        Ok(())
    }

    fn softmax_cross_entropy(
        &mut self,
        logits: &Tensor,
        targets: &Tensor,
        dlogits: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, classes) =
            checks::softmax_cross_entropy(Device::Cpu, logits, targets, dlogits, stats)?;
        let z = host(logits);
        let y = host(targets);
        let dz = host_mut(dlogits);
        let scale = 1.0 / batch as f32;
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
                *dj = (p - onehot) * scale;
            }
        }
        let s = host_mut(stats);
        s[0] += loss_sum;
        s[1] += correct;
        s[2] += batch as f32;
        Ok(())
    }

    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError> {
        checks::elementwise(Device::Cpu, "sgd_step", param, &[grad])?;
        for (p, g) in host_mut(param).iter_mut().zip(host(grad)) {
            *p -= lr * g;
        }
        Ok(())
    }

    fn momentum_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        velocity: &mut Tensor,
        lr: f32,
        momentum: f32,
    ) -> Result<(), BackendError> {
        const OP: &str = "momentum_step";
        checks::elementwise(Device::Cpu, OP, param, &[grad, velocity])?;
        let velocity = host_mut(velocity);
        for ((p, g), v) in host_mut(param).iter_mut().zip(host(grad)).zip(velocity) {
            *v = momentum * *v + g;
            *p -= lr * *v;
        }
        Ok(())
    }

    fn adam_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError> {
        const OP: &str = "adam_step";
        checks::elementwise(Device::Cpu, OP, param, &[grad, m, v])?;
        let (bias1, bias2) = hyper.bias_corrections();
        let AdamHyper {
            lr,
            beta1,
            beta2,
            eps,
            ..
        } = hyper;
        let (m, v) = (host_mut(m), host_mut(v));
        for (((p, g), mi), vi) in host_mut(param).iter_mut().zip(host(grad)).zip(m).zip(v) {
            *mi = beta1 * *mi + (1.0 - beta1) * g;
            *vi = beta2 * *vi + (1.0 - beta2) * g * g;
            let m_hat = *mi / bias1;
            let v_hat = *vi / bias2;
            *p -= lr * m_hat / (v_hat.sqrt() + eps);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
}
