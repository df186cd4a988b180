//! The CPU device: plain `Vec<f32>` tensors and rayon-parallel kernels.
//!
//! Matrix products go to the `gemm` crate (see `matmul.rs`), with bias, activation and the
//! activation's derivative applied in one pass over the output right after. The smallest
//! products, and everything element-wise, are plain loops here; convolutions are direct kernels
//! (`direct.rs`), pooling is in `spatial.rs`. Nothing in a step allocates, except `gemm`'s own
//! packing buffer for large products and, in a step whose ops are timed (`timed.rs`), each op's
//! label.
//!
//! Thread count by work size: a kernel uses the pool's threads only when its work is large
//! enough to pay for the hand-off (two threads lose to one on small work), so the CPU column is
//! never slower than the better of one and all threads.

/// Compiles a function of plain element-wise loops for AVX-512 and for AVX2 with FMA beside
/// the build's baseline (SSE2's four lanes on x86-64), and runs the widest the CPU has, chosen
/// once at the first call. The loops stay plain Rust that the compiler vectorises; no operation
/// is reordered and no multiply-add fused (Rust never contracts), so every lane width gives the
/// same bits. `pulp` (the convolutions' explicit SIMD, `direct.rs`) needs each closure inlined
/// into its dispatch to gain; `multiversion` compiles the whole body, closures included, for each
/// target. Measured on a 2-core AVX-512 VM: a GELU pass over 2²⁰ values 0.86 ms with SSE2, 0.43 ms
/// with AVX-512. rustfmt does not reach inside a macro's braces: what it wraps is laid out by
/// hand as rustfmt would.
macro_rules! wide {
    ($item:item) => {
        #[multiversion::multiversion(targets(
            "x86_64+avx512f+avx512vl+avx2+fma",
            "x86_64+avx2+fma"
        ))]
        $item
    };
}

/// Runs `$body` with `$kind` bound to `$act`'s kind as a constant, one copy of `$body` a kind: a
/// loop that matches on the kind at every value does not vectorise, one with a constant kind
/// does (the match folds away once `Activation::apply` is inlined).
macro_rules! per_kind {
    ($act:expr, $kind:ident => $body:expr) => {
        per_kind!(@ $act, $kind => $body; Identity Relu Tanh Sigmoid Gelu)
    };
    (@ $act:expr, $kind:ident => $body:expr; $($each:ident)*) => {
        match $act {
            $(Activation::$each => {
                let $kind = Activation::$each;
                $body
            })*
        }
    };
}

mod convolution;
mod decode;
mod direct;
mod matmul;
mod memory;
mod norm;
mod ops;
mod product;
mod sequence;
mod spatial;
mod timed;
mod tuning;
mod values;

use std::collections::HashMap;
use std::sync::Arc;

use crate::backend::error::BackendError;
use crate::backend::params::KernelTimes;
use crate::backend::tensor::{Tensor, WORKING_COPIES, WORKING_LABELS, largest_half};
use crate::backend::traits::{Backend, DeviceInfo, DeviceMemory, Instrumented};
use crate::device::Device;
use crate::memory::{Role, SharedLedger};
use crate::platform::{CPU_NAME, KernelPool};
use crate::precision::{DType, RoundingCensus};
use crate::trace::Recorder;
use tuning::{ShapeKey, Tuning};

/// Most kernel threads a CPU backend starts: far more than any CPU's cores, far fewer than
/// make starting the pool take minutes.
pub const MAX_THREADS: usize = 1024;

/// Refuses a thread count above [`MAX_THREADS`], saying the limit: the one check the backend,
/// the command line and a sweep of threads all make.
pub fn check_threads(threads: usize) -> Result<(), String> {
    if threads > MAX_THREADS {
        return Err(format!(
            "{threads} threads: choose at most {MAX_THREADS} (0 uses one per core)"
        ));
    }
    Ok(())
}
/// Element-wise kernels split over the pool from this many elements on, in chunks of `CHUNK`.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;
const CHUNK: usize = 1 << 12;

/// The CPU backend. It owns a rayon pool so the thread count is the user's choice, not the
/// machine's.
pub struct CpuBackend {
    pool: Arc<KernelPool>,
    threads: usize,
    split: Split,
    /// Per product shape: one thread or all, chosen by timing both.
    tuning: HashMap<ShapeKey, Tuning>,
    /// Per convolution pass: the widest vectors or narrow ones, chosen by timing both.
    conv_tuning: HashMap<tuning::ConvKey, Tuning>,
    recorder: Recorder,
    ledger: SharedLedger,
    /// The f32 working copies 16-bit operands are widened into (none until a 16-bit tensor
    /// exists).
    working: Vec<Tensor>,
    /// What rounding into 16 bits lost since it was last taken.
    census: RoundingCensus,
    /// The ops of the latest step whose ops were timed.
    kernels: KernelClock,
    /// Each thread's partial sum of a product split along its inner dimension (a few
    /// thousand values, kept between steps so the step allocates nothing).
    partials: Vec<f32>,
    /// A convolution's weights padded to whole vectors for the direct kernel (kept between
    /// steps, like `partials`).
    padded_weights: Vec<f32>,
}

/// The per-op timing of the latest timed step.
#[derive(Debug, Default)]
struct KernelClock {
    /// Whether the ops of the step in progress are timed.
    timing: bool,
    /// The ops of the latest timed step (in progress while `timing`).
    times: Option<KernelTimes>,
}

impl KernelClock {
    /// Starts timing the next step's ops afresh, or stops, keeping the last timed step's.
    fn set(&mut self, on: bool) {
        self.timing = on;
        if on {
            self.times = Some(KernelTimes::default());
        }
    }
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
        check_threads(threads).map_err(BackendError::Setup)?;
        let threads = if threads == 0 {
            crate::device::cores()
        } else {
            threads
        };
        let pool = KernelPool::new(threads)
            .map_err(|e| BackendError::Setup(format!("cannot start the CPU thread pool: {e}")))?;
        Ok(Self {
            threads: pool.threads(),
            pool: Arc::new(pool),
            split,
            tuning: HashMap::new(),
            conv_tuning: HashMap::new(),
            recorder: Recorder::default(),
            ledger: SharedLedger::default(),
            working: Vec::new(),
            census: RoundingCensus::default(),
            kernels: KernelClock::default(),
            partials: Vec::new(),
            padded_weights: Vec::new(),
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
        for label in WORKING_LABELS {
            let copy = self.alloc_as(Role::Workspace, label, (1, len), DType::F32)?;
            self.working.push(copy);
        }
        Ok(())
    }

    /// The working copies, large enough for the 16-bit ones among `operands`, taken out of the
    /// backend for one op (the op puts them back).
    fn take_working(&mut self, operands: &[&Tensor]) -> Result<Vec<Tensor>, BackendError> {
        self.ensure_working(largest_half(operands))?;
        Ok(std::mem::take(&mut self.working))
    }
}

impl DeviceInfo for CpuBackend {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn name(&self) -> String {
        match self.split {
            Split::BySize => format!("{CPU_NAME}, {} threads", self.threads),
            Split::Always => format!("{CPU_NAME}, {} threads, every kernel split", self.threads),
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
}

impl Instrumented for CpuBackend {
    fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    fn take_rounding_census(&mut self) -> Result<RoundingCensus, BackendError> {
        Ok(std::mem::take(&mut self.census))
    }

    /// Times each op of the coming steps by the host clock (about 50 ns an op: enough to slow
    /// the smallest steps, so the caller times only some).
    fn time_kernels(&mut self, on: bool) {
        self.kernels.set(on);
    }

    fn kernel_times(&self) -> Option<&KernelTimes> {
        self.kernels.times.as_ref()
    }
}

/// Zero for a value below f32's smallest normal. An optimizer's state decays towards zero
/// where a gradient stays zero (a dead unit), and on x86 every operation on a subnormal value
/// takes a slow path: measured on this machine, a batch-1 Adam step of layers 2,256,256,3 took
/// 1.19 ms with subnormal state and 0.15 ms with it flushed. A state this small changes no
/// update (its step is far below the resolution of any weight it could change); WGSL lets GPUs
/// flush subnormals too, and PyTorch offers the same as `torch.set_flush_denormal(True)`.
#[inline]
pub(super) fn flush_subnormal(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE { 0.0 } else { x }
}
