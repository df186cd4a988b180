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
use super::{
    Activation, AdamHyper, Backend, BackendError, DType, Device, Storage, Tensor, WORKING_COPIES,
    checks,
};
use crate::memory::{MemorySnapshot, Role, SharedLedger};
use crate::precision::{Half, RoundCount, RoundingCensus};
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
    /// The f32 working copies 16-bit operands are widened into (none until a 16-bit tensor
    /// exists).
    working: Vec<Tensor>,
    /// What rounding into 16 bits lost since it was last taken.
    census: RoundingCensus,
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
            working: Vec::new(),
            census: RoundingCensus::default(),
        })
    }

    /// Makes the working copies hold at least `len` values each.
    fn ensure_working(&mut self, len: usize) -> Result<(), BackendError> {
        let enough =
            self.working.len() == WORKING_COPIES && self.working.iter().all(|w| w.len() >= len);
        if len == 0 || enough {
            return Ok(());
        }
        self.working.clear();
        for i in 0..WORKING_COPIES {
            let label = super::WORKING_LABELS[i];
            let copy = self.alloc_as(Role::Workspace, label, (1, len), DType::F32)?;
            self.working.push(copy);
        }
        Ok(())
    }

    /// The working copies, large enough for the 16-bit ones among `operands`, taken out of the
    /// backend for one op (the op puts them back).
    fn take_working(&mut self, operands: &[&Tensor]) -> Result<Vec<Tensor>, BackendError> {
        self.ensure_working(super::largest_half(operands))?;
        Ok(std::mem::take(&mut self.working))
    }
}

fn host(t: &Tensor) -> &[f32] {
    match t.storage() {
        Storage::Cpu(v) => v,
        // Device and storage checks run before every access.
        Storage::CpuHalf(_) | Storage::Gpu(_) => &[],
    }
}

fn host_mut(t: &mut Tensor) -> &mut [f32] {
    match t.storage_mut() {
        Storage::Cpu(v) => v,
        Storage::CpuHalf(_) | Storage::Gpu(_) => &mut [],
    }
}

/// `t`'s values as a new f32 vector.
fn widened(t: &Tensor) -> Vec<f32> {
    match (t.storage(), t.dtype().half()) {
        (Storage::CpuHalf(bits), Some(format)) => {
            bits.iter().map(|&b| DType::widen(format, b)).collect()
        }
        _ => host(t).to_vec(),
    }
}

/// Stores f32 `values` into `t`, rounded for a 16-bit `t` (counting what that loses).
fn put(t: &mut Tensor, values: &[f32], census: &mut RoundingCensus) {
    let (format, role) = (t.dtype().half(), t.role());
    match (t.storage_mut(), format) {
        (Storage::CpuHalf(bits), Some(format)) => {
            narrow_into(bits, values, format, census.role_mut(role));
        }
        _ => host_mut(t).copy_from_slice(values),
    }
}

/// `t[i] = f(t[i])` for every value, through f32 for a 16-bit `t` (counting what the rounding
/// back loses).
fn map_values(t: &mut Tensor, f: impl Fn(f32) -> f32, census: &mut RoundingCensus) {
    let (format, role) = (t.dtype().half(), t.role());
    match (t.storage_mut(), format) {
        (Storage::CpuHalf(bits), Some(format)) => {
            let count = census.role_mut(role);
            for b in bits {
                let v = f(DType::widen(format, *b));
                *b = DType::narrow(format, v);
                count.count(v, DType::widen(format, *b));
            }
        }
        _ => {
            for v in host_mut(t) {
                *v = f(*v);
            }
        }
    }
}

/// The working copies' values, one slice each (empty where there is none).
fn slots(work: &mut [Tensor]) -> [&mut [f32]; WORKING_COPIES] {
    let mut it = work.iter_mut().map(host_mut);
    std::array::from_fn(|_| it.next().unwrap_or_default())
}

fn no_working_copy(t: &Tensor) -> BackendError {
    BackendError::Setup(format!(
        "no f32 working copy large enough for `{}` ({} values)",
        t.label(),
        t.len()
    ))
}

/// `t`'s values as f32: its own, or widened into `slot` when it is stored in 16 bits.
fn view<'a>(t: &'a Tensor, slot: &'a mut [f32]) -> Result<&'a [f32], BackendError> {
    if t.dtype() == DType::F32 {
        return Ok(host(t));
    }
    working_view(t, slot, true).map(|s| &*s)
}

/// Where an op writes `t`'s values in f32: `t` itself, or `slot` when it is stored in 16 bits
/// (with its values widened in first when `load`, for ops that update in place). [`store`] puts
/// them back.
fn view_mut<'a>(
    t: &'a mut Tensor,
    slot: &'a mut [f32],
    load: bool,
) -> Result<&'a mut [f32], BackendError> {
    if t.dtype() == DType::F32 {
        return Ok(host_mut(t));
    }
    working_view(t, slot, load)
}

/// The first `t.len()` values of `slot`, holding the 16-bit `t`'s values widened when `load`.
fn working_view<'a>(
    t: &Tensor,
    slot: &'a mut [f32],
    load: bool,
) -> Result<&'a mut [f32], BackendError> {
    let Some(s) = slot.get_mut(..t.len()) else {
        return Err(no_working_copy(t));
    };
    if let (Storage::CpuHalf(bits), Some(format), true) = (t.storage(), t.dtype().half(), load) {
        for (d, &b) in s.iter_mut().zip(bits) {
            *d = DType::widen(format, b);
        }
    }
    Ok(s)
}

/// Rounds an op's f32 result in `slot` into a 16-bit `t` (nothing to do for an f32 `t`),
/// counting what it loses into `census`.
fn store(t: &mut Tensor, slot: &[f32], census: &mut RoundingCensus) {
    let (format, role) = (t.dtype().half(), t.role());
    if let (Storage::CpuHalf(bits), Some(format)) = (t.storage_mut(), format) {
        narrow_into(bits, slot, format, census.role_mut(role));
    }
}

/// `bits[i] = narrow(values[i])`, counting what the rounding loses.
fn narrow_into(bits: &mut [u16], values: &[f32], format: Half, count: &mut RoundCount) {
    for (b, &v) in bits.iter_mut().zip(values) {
        *b = DType::narrow(format, v);
        count.count(v, DType::widen(format, *b));
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

    fn alloc_as(
        &mut self,
        role: Role,
        label: &str,
        (rows, cols): (usize, usize),
        dtype: DType,
    ) -> Result<Tensor, BackendError> {
        let bytes = (rows * cols * dtype.bytes()) as u64;
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
        let storage = match dtype {
            DType::F32 => Storage::Cpu(vec![0.0; rows * cols]),
            DType::F16 | DType::Bf16 => Storage::CpuHalf(vec![0; rows * cols]),
        };
        let tensor = Tensor::new(label, role, rows, cols, dtype, storage, lease);
        if dtype != DType::F32 {
            self.ensure_working(rows * cols)?;
        }
        Ok(tensor)
    }

    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
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
        map_values(t, |v| v * factor, &mut self.census);
        Ok(())
    }

    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError> {
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

    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError> {
        checks::write(Device::Cpu, t, values.len())?;
        let start = self.recorder.now_ns();
        put(t, values, &mut self.census);
        // On the CPU the "device" memory is the same RAM: the copy is the whole transfer.
        let bytes = t.size_in_bytes() as u64;
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
        let values = widened(t);
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

    fn linear_backward_params(
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
        self.product(
            (x_f, Layout::Transposed),
            (dz_f, Layout::Normal),
            (fan_in, fan_out, batch),
            view_mut(dw, &mut *s2, false)?,
            Epilogue::None,
        );
        store(dw, s2, &mut self.census);
        // Row by row, so the inner loop runs along contiguous memory; each column still sums
        // its rows in ascending order, as the shader does.
        let db_f = view_mut(db, &mut *s3, false)?;
        db_f.fill(0.0);
        for row in dz_f.chunks_exact(fan_out) {
            for (dbj, v) in db_f.iter_mut().zip(row) {
                *dbj += v;
            }
        }
        store(db, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    fn softmax_cross_entropy(
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
                *dj = (p - onehot) * scale;
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

    fn mse_loss(
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

    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError> {
        checks::elementwise(Device::Cpu, "sgd_step", param, &[grad])?;
        let mut work = self.take_working(&[param, grad])?;
        let [s0, s1, ..] = slots(&mut work);
        let (p, g) = (view_mut(param, &mut *s0, true)?, view(grad, s1)?);
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
        store(param, s0, &mut self.census);
        self.working = work;
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
        let mut work = self.take_working(&[param, grad, velocity])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let p = view_mut(param, &mut *s0, true)?;
        let g = view(grad, s1)?;
        let v = view_mut(velocity, &mut *s2, true)?;
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
        store(param, s0, &mut self.census);
        store(velocity, s2, &mut self.census);
        self.working = work;
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
        let mut work = self.take_working(&[param, grad, m, v])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let p = view_mut(param, &mut *s0, true)?;
        let g = view(grad, s1)?;
        let (m_f, v_f) = (view_mut(m, &mut *s2, true)?, view_mut(v, &mut *s3, true)?);
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
                    .zip(m_f.par_chunks_mut(CHUNK))
                    .zip(v_f.par_chunks_mut(CHUNK))
                    .for_each(kernel);
            });
        } else {
            kernel((((p, g), m_f), v_f));
        }
        store(param, s0, &mut self.census);
        store(m, s2, &mut self.census);
        store(v, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    fn clear_caches(&mut self) {
        self.working.clear();
    }

    fn count_non_finite(&mut self, tensors: &[&Tensor]) -> Result<u64, BackendError> {
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

    fn take_rounding_census(&mut self) -> Result<RoundingCensus, BackendError> {
        Ok(std::mem::take(&mut self.census))
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
