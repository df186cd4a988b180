//! Matrix products with a fused epilogue: the smallest in a plain loop, the rest through `gemm`
//! (see `matmul.rs`) on one thread or on all, as measured per shape (see `tuning.rs`).

use rayon::prelude::*;

use super::matmul::{self, GEMM_MIN_MACS, Layout, PARALLEL_MIN_MACS};
use super::tuning::{Choice, ShapeKey, Tuning};
use super::{CHUNK, CpuBackend, PARALLEL_MIN_ELEMENTS, Split};
use crate::backend::params::Activation;

/// What happens to each output of a matrix product after the sum.
#[derive(Clone, Copy)]
pub(super) enum Epilogue<'a> {
    /// `c = sum`.
    None,
    /// `c = act(sum + bias[j])`.
    BiasAct(&'a [f32], Activation),
    /// `c = sum * act'(aux[i, j])`.
    ActGrad(&'a [f32], Activation),
}

/// Applies the epilogue to row `i` of a product.
pub(super) fn finish_row(i: usize, c_row: &mut [f32], epilogue: Epilogue<'_>) {
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
    pub(super) fn product(
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
    pub(super) fn parallel(&self, len: usize) -> bool {
        let threshold = match self.split {
            Split::BySize => PARALLEL_MIN_ELEMENTS,
            Split::Always => 2 * CHUNK,
        };
        self.threads > 1 && len >= threshold
    }
}
