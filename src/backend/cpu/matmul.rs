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

/// Most rows of a product `a · bᵀ` given to gemm as it stands rather than transposed.
const DIRECT_MAX_ROWS: usize = 32;
/// Fewest columns of such a product.
const DIRECT_MIN_COLS: usize = 128;

/// Whether `c = a · bᵀ` (an input gradient `dz · Wᵀ`) of `m` rows and `n` columns runs faster
/// handed to gemm as it stands than as its transpose. The transposed form makes gemm's left
/// operand `W` read along its rows, which gemm repacks at every call; with few rows there is
/// little product to spread that over. Measured on this project's 2-core Xeon (gemm 0.19, the
/// median of 31 runs, rows × columns × inner, GFLOP/s transposed → as it stands), one thread:
/// 16×1024×1024 30 → 83,
/// 32×256×256 79 → 122, 32×784×128 93 → 125; two threads: 16×1024×1024 22 → 114,
/// 32×256×256 62 → 160, 32×784×256 45 → 218. From 64 rows, or with 32 columns, the
/// transposed form won as often as it lost (128×256×256, one thread: 138 against 91).
fn direct_pays(a_layout: Layout, b_layout: Layout, m: usize, n: usize) -> bool {
    a_layout == Layout::Normal
        && b_layout == Layout::Transposed
        && m <= DIRECT_MAX_ROWS
        && n >= DIRECT_MIN_COLS
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
    let parallelism = if threads > 1 {
        gemm_common::Parallelism::Rayon(threads)
    } else {
        gemm_common::Parallelism::None
    };
    // What gemm computes, column-major: its rows and columns, the destination's (column,
    // row) strides, and its left and right operands with their (column, row) strides.
    let (rows, cols, dst, lhs, rhs) = if direct_pays(a_layout, b_layout, m, n) {
        // c = a · bᵀ as it stands: c and a row-major, b stored [n, k] read as its k × n
        // transpose (each column k values apart, consecutive along k).
        let (k_stride, n_stride) = (k as isize, n as isize);
        (m, n, (1, n_stride), (a, 1, k_stride), (b, k_stride, 1))
    } else {
        // gemm's kernels prefer a column-major destination; `c` is row-major, so they compute
        // its transpose, cᵀ = op(b)ᵀ · op(a)ᵀ (an n × m product): the operands swap, and each
        // stride pair swaps with them (as the `gemm` crate's own entry point does for such a
        // destination).
        let (a_rs, a_cs) = strides(a_layout, m, k);
        let (b_rs, b_cs) = strides(b_layout, k, n);
        (n, m, (n as isize, 1), (b, b_rs, b_cs), (a, a_rs, a_cs))
    };
    let gemm = gemm_f32::gemm::f32::get_gemm_fn();
    // SAFETY: either way gemm computes the m × n product c = op(a) · op(b) in place. It reads
    // op(a)'s value (i, kk) at i·a_rs + kk·a_cs and op(b)'s value (kk, j) at kk·b_rs + j·b_cs
    // for i < m, kk < k, j < n, where (rs, cs) are the operand's strides as stored (the direct
    // path's a and b are the Normal and Transposed layouts of `strides`); for both layouts the
    // largest such index is (rows − 1)·rs + (cols − 1)·cs = rows·cols − 1, inside each slice
    // by the length checks above. It writes c[i·n + j], at most m·n − 1. `c` is a unique
    // borrow, so it aliases neither input. With `read_dst` false and alpha 0 its old contents
    // are never read; beta 1 makes it c = a·b.
    unsafe {
        gemm(
            rows,
            cols,
            k,
            c.as_mut_ptr(),
            dst.0,
            dst.1,
            false,
            lhs.0.as_ptr(),
            lhs.1,
            lhs.2,
            rhs.0.as_ptr(),
            rhs.1,
            rhs.2,
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// A matrix read in place from a slice: `rows × cols` values, value `(i, j)` at
/// `i · row_stride + j · col_stride` (a head's queries inside the `[T, 3d]` rows of a sample's
/// `qkv`, say, or their transpose by swapping the strides).
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a> View<'a> {
    /// `data`'s first `rows × cols` values, row-major, rows `row_stride` apart.
    pub fn rows(data: &'a [f32], rows: usize, cols: usize, row_stride: usize) -> Self {
        Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride: 1,
        }
    }

    /// The transpose, read from the same values.
    #[must_use]
    pub fn t(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every value it names lies inside `data`.
    fn in_bounds(&self) -> bool {
        let last = (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride;
        last < self.data.len()
    }
}

/// `c = scale · a · b`, or `c += scale · a · b` where `accumulate`, on the calling thread; `c`
/// is `a.rows × b.cols` row-major in `c_data`, rows `c_stride` apart (at least `b.cols`, so no
/// two of its values share a place). Attention's per-head products read their operands where
/// they lie (see `sequence.rs`).
///
/// # Panics
/// When the shapes do not chain or a view reaches past its slice: the callers size them from
/// checked shapes, so a panic is a bug, and it is what keeps the `unsafe` call in bounds.
pub(super) fn gemm_view(
    a: View<'_>,
    b: View<'_>,
    (c_data, c_stride): (&mut [f32], usize),
    scale: f32,
    accumulate: bool,
) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(m > 0 && n > 0 && k > 0, "empty product {m}x{k}x{n}");
    assert_eq!(b.rows, k, "inner dimensions");
    assert!(a.in_bounds() && b.in_bounds(), "an operand past its slice");
    assert!(
        c_stride >= n && (m - 1) * c_stride + n <= c_data.len(),
        "dst"
    );
    let gemm = gemm_f32::gemm::f32::get_gemm_fn();
    let stride = |s: usize| s as isize;
    // SAFETY: as in `gemm` above, the kernel computes cᵀ = bᵀ · aᵀ: it reads b at
    // kk·b.row_stride + j·b.col_stride (kk < k, j < n) and a at i·a.row_stride + kk·a.col_stride
    // (i < m), each at most its view's last index, inside its slice by `in_bounds`; it writes c
    // at j + i·c_stride, at most (m − 1)·c_stride + n − 1, inside `c_data` by the check above,
    // with no two (i, j) at one place since c_stride ≥ n. `c_data` is a unique borrow, so it
    // aliases neither input. Without `accumulate`, alpha is 0 and `read_dst` false: the old
    // values of c are never read.
    unsafe {
        gemm(
            n,
            m,
            k,
            c_data.as_mut_ptr(),
            stride(c_stride),
            1,
            accumulate,
            b.data.as_ptr(),
            stride(b.row_stride),
            stride(b.col_stride),
            a.data.as_ptr(),
            stride(a.row_stride),
            stride(a.col_stride),
            if accumulate { 1.0 } else { 0.0 },
            scale,
            false,
            false,
            false,
            gemm_common::Parallelism::None,
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
        // The second shape takes the direct path for `a · bᵀ` (see `direct_pays`).
        for (m, n, k) in [
            (67, 45, 131),
            (DIRECT_MAX_ROWS - 3, DIRECT_MIN_COLS + 5, 77),
        ] {
            assert_eq!(
                direct_pays(Layout::Normal, Layout::Transposed, m, n),
                m < DIRECT_MAX_ROWS
            );
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

    /// Strided views (a head's columns inside wider rows, a transpose by swapped strides) give
    /// the product by definition, overwriting or accumulating, and leave the rest of `c` alone.
    #[test]
    fn strided_views_match_the_definition() {
        let (m, k, n) = (7, 5, 6);
        // `a` is columns 2..7 of an m × 9 matrix; `b` the transpose of an n × k block of rows
        // 11 wide.
        let wide: Vec<f32> = (0..m * 9).map(|i| (i as f32 * 0.37).sin()).collect();
        let other: Vec<f32> = (0..n * 11).map(|i| (i as f32 * 0.53).cos()).collect();
        let a = View::rows(&wide[2..], m, k, 9);
        let b = View::rows(&other, n, k, 11).t();
        let want = |i: usize, j: usize| -> f64 {
            (0..k)
                .map(|kk| f64::from(wide[i * 9 + 2 + kk]) * f64::from(other[j * 11 + kk]))
                .sum()
        };
        // `c` is columns 1..7 of an m × 8 matrix.
        let mut c = vec![1.0f32; m * 8];
        gemm_view(a, b, (&mut c[1..], 8), 0.5, false);
        gemm_view(a, b, (&mut c[1..], 8), 2.0, true);
        for i in 0..m {
            assert_eq!(c[i * 8], 1.0, "column 0 untouched");
            for j in 0..n {
                let (got, w) = (f64::from(c[i * 8 + 1 + j]), 2.5 * want(i, j));
                assert!(
                    (got - w).abs() < 1e-5 * (1.0 + w.abs()),
                    "[{i},{j}] {got} vs {w}"
                );
            }
            if i * 8 + 7 < c.len() {
                assert_eq!(c[i * 8 + 7], 1.0, "column 7 untouched");
            }
        }
    }
}
