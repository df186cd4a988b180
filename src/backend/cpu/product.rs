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

wide! {
/// Applies the epilogue to row `i` of a product, one loop an activation kind (see `per_kind!`).
pub(super) fn finish_row<'a>(i: usize, c_row: &mut [f32], epilogue: Epilogue<'a>) {
    match epilogue {
        Epilogue::None => {}
        Epilogue::BiasAct(bias, act) => per_kind!(act, kind => {
            for (cj, bj) in c_row.iter_mut().zip(bias) {
                *cj = kind.apply(*cj + bj);
            }
        }),
        Epilogue::ActGrad(aux, act) => {
            let n = c_row.len();
            let aux_row = &aux[i * n..(i + 1) * n];
            per_kind!(act, kind => {
                for (cj, aj) in c_row.iter_mut().zip(aux_row) {
                    *cj *= kind.derivative_from_output(*aj);
                }
            });
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

/// Largest output of a product split along its inner dimension.
const INNER_SPLIT_MAX_OUTPUTS: usize = 64 * 64;
/// Shortest inner dimension worth splitting.
const INNER_SPLIT_MIN_K: usize = 1 << 14;

/// Whether a product is a small output summed over a long inner dimension, as a convolution's
/// weight gradient was when the CPU computed it as `patchesᵀ · dz` (9×8 outputs over 200,704
/// pixels for a 3×3 block of 8 filters at batch 256), and a narrow dense layer's is at a batch
/// of 16,384 or more. `gemm` splits its work over the output, so on such a product a second
/// thread did nothing (14 GFLOP/s on one thread and on two, measured); split along the inner
/// dimension instead, each thread sums its share of the rows, and the partial sums are added.
fn splits_inner(a_layout: Layout, b_layout: Layout, (m, n, k): (usize, usize, usize)) -> bool {
    a_layout == Layout::Transposed
        && b_layout == Layout::Normal
        && m * n <= INNER_SPLIT_MAX_OUTPUTS
        && k >= INNER_SPLIT_MIN_K
}

impl CpuBackend {
    /// `c = aᵀ · b` for `a` stored `[k, m]` and `b` stored `[k, n]`, each thread one run of the
    /// `k` rows on its own `gemm`, then the partial sums added in thread order.
    fn inner_split_product(
        &mut self,
        (a, b): (&[f32], &[f32]),
        (m, n, k): (usize, usize, usize),
        c: &mut [f32],
    ) {
        let parts = self.threads.max(1);
        let rows = k.div_ceil(parts);
        let mut partials = std::mem::take(&mut self.partials);
        partials.resize(parts * m * n, 0.0);
        self.pool.install(|| {
            partials
                .par_chunks_mut(m * n)
                .enumerate()
                .for_each(|(p, out)| {
                    let (k0, k1) = (p * rows, ((p + 1) * rows).min(k));
                    if k0 >= k1 {
                        out.fill(0.0);
                        return;
                    }
                    let (a, b) = (&a[k0 * m..k1 * m], &b[k0 * n..k1 * n]);
                    matmul::gemm(
                        a,
                        Layout::Transposed,
                        b,
                        Layout::Normal,
                        m,
                        n,
                        k1 - k0,
                        out,
                        1,
                    );
                });
        });
        c.copy_from_slice(&partials[..m * n]);
        for part in partials[m * n..].chunks_exact(m * n) {
            for (ci, pi) in c.iter_mut().zip(part) {
                *ci += pi;
            }
        }
        self.partials = partials;
    }

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
        let (split, timed) = choice.way();
        if split {
            self.pool.keep_awake();
        }
        let start = timed.then(web_time::Instant::now);
        if split && splits_inner(a_layout, b_layout, (m, n, k)) {
            self.inner_split_product((a, b), (m, n, k), c);
            for (i, row) in c.chunks_mut(n).enumerate() {
                finish_row(i, row, epilogue);
            }
        } else if split {
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
        let parallel = self.threads > 1 && len >= threshold;
        if parallel {
            self.pool.keep_awake();
        }
        parallel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small output summed over a long inner dimension, split over the threads along it,
    /// sums what one thread's product sums.
    #[test]
    fn a_product_split_along_its_inner_dimension_adds_the_same() {
        let (m, n, k) = (9, 8, 3 * INNER_SPLIT_MIN_K + 5);
        assert!(splits_inner(Layout::Transposed, Layout::Normal, (m, n, k)));
        let a: Vec<f32> = (0..k * m)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 8.0)
            .collect();
        let mut want = vec![0.0; m * n];
        small_product(
            &a,
            Layout::Transposed,
            &b,
            Layout::Normal,
            (m, n, k),
            &mut want,
            Epilogue::None,
        );
        for threads in [2, 3] {
            let mut cpu = CpuBackend::with_split(threads, Split::Always).expect("pool");
            let mut got = vec![0.0; m * n];
            let ta = (a.as_slice(), Layout::Transposed);
            cpu.product(
                ta,
                (&b, Layout::Normal),
                (m, n, k),
                &mut got,
                Epilogue::None,
            );
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-3 * w.abs().max(1.0),
                    "{threads}: {g} vs {w}"
                );
            }
        }
    }
}
