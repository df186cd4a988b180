//! The CPU device: plain `Vec<f32>` tensors and rayon-parallel kernels.
//!
//! Matrix products go to the `gemm` crate (see `matmul.rs`), with bias, activation and the
//! activation's derivative applied in one pass over the output right after. The smallest
//! products, and everything element-wise, are plain loops here. Nothing in a step allocates,
//! except `gemm`'s own packing buffer for large products.
//!
//! Thread count by work size: a kernel uses the pool's threads only when its work is large
//! enough to pay for the hand-off (two threads lose to one on small work), so the CPU column is
//! never slower than the better of one and all threads.

mod matmul;

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::Lease;
use super::check_device;
use super::{Activation, AdamHyper, Backend, BackendError, Device, Storage, Tensor, checks};
use crate::memory::{MemorySnapshot, Role, SharedLedger};
use crate::precision::Half;
use crate::trace::{Category, Lane, Recorder};
use matmul::{GEMM_MIN_MACS, Layout, PARALLEL_MIN_MACS};

/// Element-wise kernels split over the pool from this many elements on, in chunks of `CHUNK`.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;
const CHUNK: usize = 1 << 12;

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
    pool: Arc<rayon::ThreadPool>,
    threads: usize,
    split: Split,
    /// Per product shape: one thread or all, chosen by timing both.
    tuning: HashMap<ShapeKey, Tuning>,
    recorder: Recorder,
    ledger: SharedLedger,
}

/// A CPU tensor's bytes, given back to the ledger when it is dropped.
struct CpuLease {
    ledger: SharedLedger,
    role: Role,
    bytes: u64,
}

impl Drop for CpuLease {
    fn drop(&mut self) {
        if let Ok(mut ledger) = self.ledger.lock() {
            // Host memory goes back to the system allocator: nothing stays reserved.
            ledger.free(self.role, self.bytes, self.bytes, false);
        }
    }
}

/// Matching chunks of parameter, gradient and Adam's two moments, as rayon's `zip` of four
/// chunk iterators yields them.
type AdamChunks<'a> = (((&'a mut [f32], &'a [f32]), &'a mut [f32]), &'a mut [f32]);

/// A product's shape and layouts: the same key recurs at the same place in every step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ShapeKey {
    m: usize,
    n: usize,
    k: usize,
    a_layout: Layout,
    b_layout: Layout,
}

/// Timing trials of one shape on one thread and on all threads.
///
/// Whether splitting a product pays depends on its shape as much as its size (measured here:
/// 256·784·128 ran no faster on two threads, 784·256·128 ran 1.7 times faster), so rather than a
/// size threshold each shape is timed both ways in its first steps and keeps the faster.
#[derive(Clone, Copy, Debug, Default)]
struct Tuning {
    /// Fastest time seen on one thread and on all threads, in ns.
    best_ns: [u64; 2],
    /// Trials run on one thread and on all threads.
    trials: [u32; 2],
}

/// Trials per option before the faster one is kept.
const TUNING_TRIALS: u32 = 3;

enum Choice {
    /// Time this call, on all threads or not.
    Try(bool),
    /// The faster option is known.
    Decided(bool),
}

impl Tuning {
    fn next(&self) -> Choice {
        match self.trials {
            [one, all] if one < TUNING_TRIALS || all < TUNING_TRIALS => Choice::Try(all < one),
            _ => Choice::Decided(self.best_ns[1] < self.best_ns[0]),
        }
    }

    fn record(&mut self, split: bool, ns: u64) {
        let i = usize::from(split);
        self.best_ns[i] = if self.trials[i] == 0 {
            ns
        } else {
            self.best_ns[i].min(ns)
        };
        self.trials[i] += 1;
    }
}

/// When a kernel is split over the pool's threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Split {
    /// When its work is large enough to pay for the hand-off (the default).
    #[default]
    BySize,
    /// Always, down to the smallest product: what the automatic choice avoids, for benchmarks.
    Always,
}

impl CpuBackend {
    /// A backend with `threads` worker threads (0 = one per core).
    pub fn new(threads: usize) -> Result<Self, BackendError> {
        Self::with_split(threads, Split::BySize)
    }

    /// A backend that splits kernels over its threads as `split` says.
    pub fn with_split(threads: usize, split: Split) -> Result<Self, BackendError> {
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
        Ok(Self {
            pool: Arc::new(pool),
            threads,
            split,
            tuning: HashMap::new(),
            recorder: Recorder::default(),
            ledger: SharedLedger::default(),
        })
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

/// Applies the epilogue to row `i` of a product.
fn finish_row(i: usize, c_row: &mut [f32], epilogue: Epilogue<'_>) {
    match epilogue {
        Epilogue::None => {}
        Epilogue::BiasAct(bias, act) => {
            for (cj, bj) in c_row.iter_mut().zip(bias) {
                *cj = act.apply(*cj + bj);
            }
        }
        Epilogue::ActGrad(aux, act) => {
            let n = c_row.len();
            let aux_row = &aux[i * n..(i + 1) * n];
            for (cj, aj) in c_row.iter_mut().zip(aux_row) {
                *cj *= act.derivative_from_output(*aj);
            }
        }
    }
}

/// `c[m, n] = op(a)[m, k] · op(b)[k, n]` for products too small for `gemm`, then the epilogue.
///
/// With `b` normal each row of `c` is built as a sum of scaled rows of `b` (contiguous, so the
/// inner loop vectorises); with `b` transposed each output is a dot product of two contiguous
/// rows. Either way the sum for one output runs over `k` in ascending order, as in the shader.
fn small_product(
    a: &[f32],
    a_layout: Layout,
    b: &[f32],
    b_layout: Layout,
    (m, n, k): (usize, usize, usize),
    c: &mut [f32],
    epilogue: Epilogue<'_>,
) {
    let a_at = |i: usize, kk: usize| match a_layout {
        Layout::Normal => a[i * k + kk],
        Layout::Transposed => a[kk * m + i],
    };
    for (i, c_row) in c.chunks_mut(n).enumerate() {
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
        finish_row(i, c_row, epilogue);
    }
}

impl CpuBackend {
    /// `c[m, n] = epilogue(op(a)[m, k] · op(b)[k, n])`, on as many threads as the work merits.
    fn product(
        &mut self,
        (a, a_layout): (&[f32], Layout),
        (b, b_layout): (&[f32], Layout),
        (m, n, k): (usize, usize, usize),
        c: &mut [f32],
        epilogue: Epilogue<'_>,
    ) {
        let macs = m * n * k;
        if macs < GEMM_MIN_MACS && self.split == Split::BySize {
            small_product(a, a_layout, b, b_layout, (m, n, k), c, epilogue);
            return;
        }
        let key = ShapeKey {
            m,
            n,
            k,
            a_layout,
            b_layout,
        };
        let choice = match self.split {
            _ if self.threads == 1 => Choice::Decided(false),
            Split::Always => Choice::Decided(true),
            Split::BySize if macs < PARALLEL_MIN_MACS => Choice::Decided(false),
            Split::BySize => self
                .tuning
                .get(&key)
                .map_or(Choice::Try(false), Tuning::next),
        };
        let (split, timed) = match choice {
            Choice::Decided(split) => (split, false),
            Choice::Try(split) => (split, true),
        };
        let start = timed.then(std::time::Instant::now);
        if split {
            let threads = self.threads;
            let parallel_epilogue = self.parallel(m * n);
            self.pool.install(|| {
                matmul::gemm(a, a_layout, b, b_layout, m, n, k, c, threads);
                // The epilogue reads and writes `c` once more, while it is still in cache.
                if parallel_epilogue && !matches!(epilogue, Epilogue::None) {
                    c.par_chunks_mut(n)
                        .enumerate()
                        .for_each(|(i, row)| finish_row(i, row, epilogue));
                } else {
                    for (i, row) in c.chunks_mut(n).enumerate() {
                        finish_row(i, row, epilogue);
                    }
                }
            });
        } else {
            // On the calling thread: outside `enter`, handing work to the pool costs
            // microseconds, more than a small product.
            matmul::gemm(a, a_layout, b, b_layout, m, n, k, c, 1);
            for (i, row) in c.chunks_mut(n).enumerate() {
                finish_row(i, row, epilogue);
            }
        }
        if let Some(start) = start {
            let ns = start.elapsed().as_nanos() as u64;
            self.tuning.entry(key).or_default().record(split, ns);
        }
    }

    /// Whether element-wise work of `len` values is worth splitting over the pool.
    fn parallel(&self, len: usize) -> bool {
        let threshold = match self.split {
            Split::BySize => PARALLEL_MIN_ELEMENTS,
            Split::Always => 2 * CHUNK,
        };
        self.threads > 1 && len >= threshold
    }
}

impl Backend for CpuBackend {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn name(&self) -> String {
        match self.split {
            Split::BySize => format!("CPU, {} threads", self.threads),
            Split::Always => format!("CPU, {} threads, every kernel split", self.threads),
        }
    }

    fn threads(&self) -> Option<usize> {
        Some(self.threads)
    }

    fn as_dyn(&mut self) -> &mut dyn Backend {
        self
    }

    fn enter(&mut self, f: &mut (dyn FnMut(&mut dyn Backend) + Send)) {
        let pool = Arc::clone(&self.pool);
        // Inside the pool, the `install` calls of the kernels run in place.
        pool.install(|| f(self));
    }

    fn alloc(
        &mut self,
        role: Role,
        label: &str,
        rows: usize,
        cols: usize,
    ) -> Result<Tensor, BackendError> {
        let bytes = (rows * cols * std::mem::size_of::<f32>()) as u64;
        {
            let mut ledger = self
                .ledger
                .lock()
                .map_err(|_| BackendError::Setup("the memory ledger is poisoned".into()))?;
            if !ledger.fits(bytes) {
                let oom = ledger.out_of_memory(Device::Cpu, label, role, bytes);
                return Err(BackendError::OutOfMemory(Box::new(oom)));
            }
            ledger.allocate(role, bytes, bytes, true);
        }
        let lease = Lease(Box::new(CpuLease {
            ledger: std::sync::Arc::clone(&self.ledger),
            role,
            bytes,
        }));
        Ok(Tensor::new(
            label,
            role,
            rows,
            cols,
            Storage::Cpu(vec![0.0; rows * cols]),
            lease,
        ))
    }

    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        checks::copy(Device::Cpu, src, dst)?;
        host_mut(dst).copy_from_slice(host(src));
        Ok(())
    }

    fn memory(&self) -> MemorySnapshot {
        self.ledger.lock().map(|l| l.snapshot()).unwrap_or_default()
    }

    fn set_memory_budget(&mut self, budget_bytes: Option<u64>) {
        if let Ok(mut l) = self.ledger.lock() {
            l.set_budget(budget_bytes);
        }
    }

    fn reset_peak_memory(&mut self) {
        if let Ok(mut l) = self.ledger.lock() {
            l.reset_peaks();
        }
    }

    fn scale(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError> {
        check_device(Device::Cpu, "scale", &[t])?;
        for v in host_mut(t) {
            *v *= factor;
        }
        Ok(())
    }

    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError> {
        check_device(Device::Cpu, "round_to", &[t])?;
        for v in host_mut(t) {
            *v = format.round(*v);
        }
        Ok(())
    }

    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError> {
        checks::write(Device::Cpu, t, values.len())?;
        let start = self.recorder.now_ns();
        host_mut(t).copy_from_slice(values);
        // On the CPU the "device" memory is the same RAM: the copy is the whole transfer.
        let bytes = std::mem::size_of_val(values) as u64;
        self.recorder.span(
            Lane::Transfer,
            Category::Memcpy,
            "copy into tensor (RAM)",
            start,
            bytes,
        );
        Ok(())
    }

    fn read(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError> {
        checks::read(Device::Cpu, t)?;
        // Every CPU op has finished when it returns: there is nothing to wait for.
        let start = self.recorder.now_ns();
        let values = host(t).to_vec();
        let bytes = t.size_in_bytes() as u64;
        self.recorder.span(
            Lane::Readback,
            Category::Memcpy,
            "copy to host (RAM)",
            start,
            bytes,
        );
        Ok(values)
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
        self.product(
            (host(x), Layout::Normal),
            (host(w), Layout::Normal),
            (batch, fan_out, fan_in),
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
        self.product(
            (host(dz), Layout::Normal),
            (host(w), Layout::Transposed),
            (batch, fan_in, fan_out),
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
        self.product(
            (host(x), Layout::Transposed),
            (host(dz), Layout::Normal),
            (fan_in, fan_out, batch),
            host_mut(dw),
            Epilogue::None,
        );
        // Row by row, so the inner loop runs along contiguous memory; each column still sums
        // its rows in ascending order, as the shader does.
        let db = host_mut(db);
        db.fill(0.0);
        for row in host(dz).chunks_exact(fan_out) {
            for (dbj, v) in db.iter_mut().zip(row) {
                *dbj += v;
            }
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

    fn mse_loss(
        &mut self,
        pred: &Tensor,
        targets: &Tensor,
        dpred: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, outputs) = checks::mse_loss(Device::Cpu, pred, targets, dpred, stats)?;
        let (p, y, d) = (host(pred), host(targets), host_mut(dpred));
        let scale = 2.0 / (batch * outputs) as f32;
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
        let s = host_mut(stats);
        s[0] += squared_sum;
        s[1] += abs_sum;
        s[2] += batch as f32;
        Ok(())
    }

    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError> {
        checks::elementwise(Device::Cpu, "sgd_step", param, &[grad])?;
        let (p, g) = (host_mut(param), host(grad));
        let kernel = |(p, g): (&mut [f32], &[f32])| {
            for (p, g) in p.iter_mut().zip(g) {
                *p -= lr * g;
            }
        };
        if self.parallel(p.len()) {
            self.pool.install(|| {
                p.par_chunks_mut(CHUNK)
                    .zip(g.par_chunks(CHUNK))
                    .for_each(kernel);
            });
        } else {
            kernel((p, g));
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
        checks::elementwise(Device::Cpu, "momentum_step", param, &[grad, velocity])?;
        let (p, g, v) = (host_mut(param), host(grad), host_mut(velocity));
        let kernel = |((p, g), v): ((&mut [f32], &[f32]), &mut [f32])| {
            for ((p, g), v) in p.iter_mut().zip(g).zip(v) {
                *v = momentum * *v + g;
                *p -= lr * *v;
            }
        };
        if self.parallel(p.len()) {
            self.pool.install(|| {
                p.par_chunks_mut(CHUNK)
                    .zip(g.par_chunks(CHUNK))
                    .zip(v.par_chunks_mut(CHUNK))
                    .for_each(kernel);
            });
        } else {
            kernel(((p, g), v));
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
        checks::elementwise(Device::Cpu, "adam_step", param, &[grad, m, v])?;
        let (bias1, bias2) = hyper.bias_corrections();
        let AdamHyper {
            lr,
            beta1,
            beta2,
            eps,
            ..
        } = hyper;
        let (p, g, m, v) = (host_mut(param), host(grad), host_mut(m), host_mut(v));
        let kernel = |(((p, g), m), v): AdamChunks<'_>| {
            for (((p, g), mi), vi) in p.iter_mut().zip(g).zip(m).zip(v) {
                *mi = beta1 * *mi + (1.0 - beta1) * g;
                *vi = beta2 * *vi + (1.0 - beta2) * g * g;
                let m_hat = *mi / bias1;
                let v_hat = *vi / bias2;
                *p -= lr * m_hat / (v_hat.sqrt() + eps);
            }
        };
        if self.parallel(p.len()) {
            self.pool.install(|| {
                p.par_chunks_mut(CHUNK)
                    .zip(g.par_chunks(CHUNK))
                    .zip(m.par_chunks_mut(CHUNK))
                    .zip(v.par_chunks_mut(CHUNK))
                    .for_each(kernel);
            });
        } else {
            kernel((((p, g), m), v));
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }
}

#[cfg(test)]
mod tests {
    use super::{Choice, TUNING_TRIALS, Tuning};

    #[test]
    fn tuning_tries_both_options_then_keeps_the_faster() {
        let mut t = Tuning::default();
        let mut tried = [0, 0];
        for _ in 0..2 * TUNING_TRIALS {
            let Choice::Try(split) = t.next() else {
                panic!("decided before trying both options {TUNING_TRIALS} times");
            };
            tried[usize::from(split)] += 1;
            // All threads take 60 µs, one thread 100 µs (with one slow outlier).
            let ns = if split {
                60_000
            } else if tried[0] == 1 {
                300_000
            } else {
                100_000
            };
            t.record(split, ns);
        }
        assert_eq!(tried, [TUNING_TRIALS, TUNING_TRIALS]);
        assert!(matches!(t.next(), Choice::Decided(true)));
        let mut slow_split = Tuning::default();
        for _ in 0..2 * TUNING_TRIALS {
            if let Choice::Try(split) = slow_split.next() {
                slow_split.record(split, if split { 90_000 } else { 50_000 });
            }
        }
        assert!(matches!(slow_split.next(), Choice::Decided(false)));
    }
}
