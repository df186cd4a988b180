//! The CPU matrix product: the `gemm` crate's f32 kernels (`gemm-f32`) for everything but the
//! smallest products.
//!
//! Chosen by measurement on this project's 2-core machine (AMD EPYC with AVX-512), single
//! precision, GFLOP/s with one / two threads:
//!
//! | shape (m·k·n)   | gemm 0.19 (x86-v4) | matrixmultiply 0.3 (threading) | plain loop |
//! |-----------------|--------------------|--------------------------------|------------|
//! | 1024·784·512    | 209 / 424          | 151 / 169                      | ~4         |
//! | 128·784·128     | 205 / 327          | 154 / 128                      |            |
//! | 32·16·16        | 58 / 35            | 41 / 41                        |            |
//!
//! `gemm` has AVX2 and AVX-512 micro-kernels picked at run time, packs its operands in
//! cache-sized blocks, and splits work over the caller's rayon pool; matrixmultiply's threads did
//! not scale here. For the tiniest products the call's set-up outweighs the arithmetic, so products
//! under [`GEMM_MIN_MACS`] use the plain loop in `super` (the 2-input first layer of the
//! classroom networks, say). `gemm` sums in a blocked order with FMA, so the CPU and the WGSL
//! kernels agree to rounding rather than bit for bit (the parity test's 1e-4 holds with room).
//!
//! This is the crate's one `unsafe` call; the checks below make it sound.
#![expect(
    unsafe_code,
    reason = "the one call into gemm's unsafe API, checked above"
)]

/// Products with fewer multiply-adds than this use the plain loop.
pub(super) const GEMM_MIN_MACS: usize = 512;

/// Products with fewer multiply-adds run on one thread, where two lose to one here (measured:
/// 32·16·16 ran at 58 GFLOP/s on one thread and 35 on two). Larger ones are timed both ways.
pub(super) const PARALLEL_MIN_MACS: usize = 1 << 16;

/// How one operand of a product is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Layout {
    /// Row-major as stored.
    Normal,
    /// The stored matrix is the transpose of the operand (row-major `[cols, rows]`).
    Transposed,
}

/// `(row_stride, col_stride)` of an operand with `rows × cols` elements stored as `layout`.
fn strides(layout: Layout, rows: usize, cols: usize) -> (isize, isize) {
    match layout {
        Layout::Normal => (cols as isize, 1),
        Layout::Transposed => (1, rows as isize),
    }
}

/// `c[m, n] = op(a)[m, k] · op(b)[k, n]`, overwriting `c`, with `threads` rayon threads
/// (1 = on the calling thread). Must be called inside the pool it may use.
///
/// # Panics
/// When a slice's length is not the size its shape says: the callers check shapes first, so a
/// panic here is a bug, and it is what keeps the `unsafe` call in bounds.
pub(super) fn gemm(
    a: &[f32],
    a_layout: Layout,
    b: &[f32],
    b_layout: Layout,
    m: usize,
    n: usize,
    k: usize,
    c: &mut [f32],
    threads: usize,
) {
    assert!(m > 0 && n > 0 && k > 0, "empty product {m}x{k}x{n}");
    assert_eq!(a.len(), m * k, "lhs length");
    assert_eq!(b.len(), k * n, "rhs length");
    assert_eq!(c.len(), m * n, "dst length");
    let (a_rs, a_cs) = strides(a_layout, m, k);
    let (b_rs, b_cs) = strides(b_layout, k, n);
    let parallelism = if threads > 1 {
        gemm_common::Parallelism::Rayon(threads)
    } else {
        gemm_common::Parallelism::None
    };
    // gemm's kernels prefer a column-major destination; `c` is row-major, so they compute its
    // transpose, cᵀ = op(b)ᵀ · op(a)ᵀ (an n × m product): the operands swap, and each stride
    // pair swaps with them (as the `gemm` crate's own entry point does for such a destination).
    let gemm = gemm_f32::gemm::f32::get_gemm_fn();
    // SAFETY: with the transposition above, gemm reads b[j·b_cs + kk·b_rs] for j < n, kk < k and
    // a[kk·a_cs + i·a_rs] for kk < k, i < m, and writes c[j + i·n] for j < n, i < m. For both
    // layouts the largest such index is (rows − 1)·rs + (cols − 1)·cs = rows·cols − 1, inside
    // each slice by the length checks above. `c` is a unique borrow, so it aliases neither
    // input. With `read_dst` false and alpha 0 the old contents of `c` are never read; beta 1
    // makes it c = a·b.
    unsafe {
        gemm(
            n,
            m,
            k,
            c.as_mut_ptr(),
            n as isize,
            1,
            false,
            b.as_ptr(),
            b_rs,
            b_cs,
            a.as_ptr(),
            a_rs,
            a_cs,
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product by definition, in f64.
    fn reference(
        a: &[f32],
        al: Layout,
        b: &[f32],
        bl: Layout,
        m: usize,
        n: usize,
        k: usize,
    ) -> Vec<f64> {
        let at = |i: usize, kk: usize| match al {
            Layout::Normal => a[i * k + kk],
            Layout::Transposed => a[kk * m + i],
        };
        let bt = |kk: usize, j: usize| match bl {
            Layout::Normal => b[kk * n + j],
            Layout::Transposed => b[j * k + kk],
        };
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|kk| f64::from(at(i, kk)) * f64::from(bt(kk, j)))
                    .sum();
            }
        }
        c
    }

    #[test]
    fn every_layout_and_thread_count_matches_the_definition() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        let (m, n, k) = (67, 45, 131);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0)
            .collect();
        for al in [Layout::Normal, Layout::Transposed] {
            for bl in [Layout::Normal, Layout::Transposed] {
                let want = reference(&a, al, &b, bl, m, n, k);
                for threads in [1, 2] {
                    let mut c = vec![f32::NAN; m * n];
                    pool.install(|| gemm(&a, al, &b, bl, m, n, k, &mut c, threads));
                    for (i, (&g, &w)) in c.iter().zip(&want).enumerate() {
                        assert!(
                            (f64::from(g) - w).abs() < 1e-4 * (1.0 + w.abs()),
                            "{al:?} {bl:?} t{threads} [{i}]: {g} vs {w}"
                        );
                    }
                }
            }
        }
    }
}
