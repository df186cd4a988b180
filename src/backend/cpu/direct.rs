//! A convolution computed directly from the images, in vector registers: the forward pass, the
//! weight gradient and the input gradient, with no patch matrix.
//!
//! Why not `im2col` and `gemm`: the patches hold `K²` copies of every input
//! value, written out and read back, and `gemm` packs an inner dimension of only 9 or 72. For the
//! small channel counts of a classroom CNN that traffic costs more than the arithmetic: measured
//! at batch 256 on MNIST, the first block (1 → 8 channels) ran at 2.4% of one core's FMA peak
//! that way and the second (8 → 16) at 17%; directly, 17% and 50%.
//!
//! Forward: the output channels of a tile of neighbouring pixels (8, or 4 with two vectors of
//! channels; two rows at a time where there are 32 vector registers) live in registers; for each
//! tap and input channel one vector of weights is loaded and multiplied with each pixel's input
//! value, broadcast. The weights (a few KiB) stay in the L1 cache and nothing is written but the
//! output. Each image is first copied into a zero-bordered, channel-by-channel one (a few KiB,
//! kept per thread), so that every pixel takes the same path: border pixels computed one at a
//! time, each a chain of dependent multiply-adds, had taken more time than all the others. Each
//! output sums its bias, then kernel row `ky`, input channel, kernel column `kx`, with fused
//! multiply-adds. The input gradient is this same kernel run on the output's gradient with the
//! transposed weights ([`pad_transposed_weights`]).
//!
//! Weight gradient: each tap's sum over every pixel of the image stays in registers (all nine
//! taps of a 3×3 kernel at once, so nine chains of multiply-adds are in flight), and is added
//! into the thread's partial gradient at the end of the image.
//!
//! `pulp` picks the widest instruction set the CPU has at run time (AVX-512, AVX2 with FMA,
//! NEON, or plain scalar code) and keeps the `unsafe` of the intrinsics inside that crate; for
//! 8 channels or fewer the backend may choose AVX2 over AVX-512 by timing both ([`arch`]).

// `pulp` compiles the kernel for an instruction set inside its dispatch function, so everything
// the kernel calls must be inlined there: a call that is not inlined runs without the vector
// instructions and passes the registers through memory. The loops over the accumulators are
// indexed, not iterators, for the same reason: iterators over them made the compiler keep them
// in memory, stored after every multiply-add (measured up to 2× slower).
#![expect(
    clippy::inline_always,
    clippy::needless_range_loop,
    reason = "the accumulators stay in registers only so (see above)"
)]

use std::cell::RefCell;

use pulp::{Simd, WithSimd};

use crate::backend::params::ConvShape;

/// Vectors of output channels computed at once: two when a pixel has more channels than one
/// vector holds.
const WIDE: usize = 2;

/// Output pixels computed together (their accumulators stay in registers: 8 with one vector of
/// channels, 4 with two, within the 16 registers of AVX2). A row narrower than that goes 4 or
/// 1 at a time; a row that is not a multiple ends with a tile overlapping the one before
/// (recomputing a few pixels, to the same values).
const PIXELS_NARROW: usize = 8;
const PIXELS_WIDE: usize = 4;

thread_local! {
    /// The image being convolved with its zero border, one per thread of the pool.
    static BORDERED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The instruction set a convolution runs on: the widest this CPU has, or with `narrow` the
/// widest whose vectors are at most 8 lanes (AVX2 where the widest is AVX-512).
#[cfg_attr(
    not(target_arch = "x86_64"),
    expect(unused_variables, reason = "only x86-64 has a narrower choice to make")
)]
pub(super) fn arch(narrow: bool) -> pulp::Arch {
    let widest = pulp::Arch::new();
    #[cfg(target_arch = "x86_64")]
    if narrow
        && matches!(widest, pulp::Arch::V4(_))
        && let Some(simd) = pulp::x86::V3::try_new()
    {
        return pulp::Arch::V3(simd);
    }
    widest
}

/// Whether narrow vectors may be worth timing for `c_out` output channels: the widest
/// vector has more than 8 lanes, and narrow ones would need fewer lanes in all.
pub(super) fn narrow_differs(c_out: usize) -> bool {
    let (wide, narrow) = (lanes(false), lanes(true));
    wide != narrow && c_out.div_ceil(narrow) * narrow < c_out.div_ceil(wide) * wide
}

/// The vectors a pass runs on and the output channels padded to whole vectors of them: the
/// length of a padded weight row ([`pad_weights`]) and of a weight gradient's row.
#[derive(Clone, Copy, Debug)]
pub(super) struct Vectors {
    /// Whether the pass runs on [`arch`]`(true)`'s narrow vectors.
    pub(super) narrow: bool,
    /// `C_out` padded to whole vectors.
    pub(super) cp: usize,
}

impl Vectors {
    /// The vectors of [`arch`]`(narrow)` for `c_out` output channels.
    pub(super) fn new(c_out: usize, narrow: bool) -> Self {
        let lanes = lanes(narrow);
        Self {
            narrow,
            cp: c_out.div_ceil(lanes) * lanes,
        }
    }
}

/// The f32 lanes of a vector of [`arch`]`(narrow)`.
pub(super) fn lanes(narrow: bool) -> usize {
    struct Lanes;
    impl WithSimd for Lanes {
        type Output = usize;
        #[inline(always)]
        fn with_simd<S: Simd>(self, _: S) -> usize {
            S::F32_LANES
        }
    }
    arch(narrow).dispatch(Lanes)
}

/// Writes the weights `w` (`[K² · C_in, C_out]`) and `bias` into `padded` as rows of `cp`
/// values, `cp` a whole number of vectors, zero beyond `C_out`; the bias is the last row. The
/// kernel then loads whole vectors only.
pub(super) fn pad_weights(w: &[f32], bias: &[f32], cp: usize, padded: &mut Vec<f32>) {
    let c_out = bias.len();
    padded.clear();
    for row in w.chunks_exact(c_out).chain([bias]) {
        padded.extend_from_slice(row);
        padded.resize(padded.len() + cp - c_out, 0.0);
    }
}

/// Writes the weights of a convolution's transpose into `padded`, as [`pad_weights`] does
/// with a zero bias: the kernel turned half a circle and its channels swapped, `w'[(ky, kx, o),
/// c] = w[(K−1−ky, K−1−kx, c), o]`, so that convolving the output's gradient with them gives
/// the input's gradient.
pub(super) fn pad_transposed_weights(w: &[f32], s: ConvShape, cp: usize, padded: &mut Vec<f32>) {
    let (k, c_in, c_out) = (s.kernel, s.channels_in, s.channels_out);
    padded.clear();
    padded.resize((k * k * c_out + 1) * cp, 0.0);
    for ky in 0..k {
        for kx in 0..k {
            let tap = (k - 1 - ky) * k + (k - 1 - kx);
            for o in 0..c_out {
                let row = &mut padded[((ky * k + kx) * c_out + o) * cp..][..c_in];
                for (c, v) in row.iter_mut().enumerate() {
                    *v = w[(tap * c_in + c) * c_out + o];
                }
            }
        }
    }
}

/// One image's output pixels on `vectors`: `image` is its input values, `weights` come from
/// [`pad_weights`] with `vectors.cp` values a row, and `out` is its `H · W · C_out` outputs,
/// through ReLU if `relu`, else before the activation. (One call per image rather than per
/// row: the dispatch to the CPU's instruction set then costs nothing measurable.)
pub(super) fn conv_image(
    image: &[f32],
    weights: &[f32],
    s: ConvShape,
    relu: bool,
    vectors: Vectors,
    out: &mut [f32],
) {
    BORDERED.with_borrow_mut(|bordered| {
        border(image, s, bordered);
        arch(vectors.narrow).dispatch(OneImage {
            tile: Tile {
                image: bordered,
                weights,
                cp: vectors.cp,
                s,
                relu,
            },
            out,
        });
    });
}

/// Copies `image` (channels last) into `bordered` channel by channel, each channel's plane with
/// `pad` zero pixels on every side: a tile's pixels then read one channel's values side by side.
fn border(image: &[f32], s: ConvShape, bordered: &mut Vec<f32>) {
    let (c, pad) = (s.channels_in, s.pad());
    let wp = s.width + 2 * pad;
    let plane = (s.height + 2 * pad) * wp;
    bordered.clear();
    bordered.resize(c * plane, 0.0);
    if c == 1 {
        let lines = bordered.chunks_exact_mut(wp).skip(pad);
        for (line, src) in lines.zip(image.chunks_exact(s.width)) {
            line[pad..pad + s.width].copy_from_slice(src);
        }
        return;
    }
    for (ci, plane) in bordered.chunks_exact_mut(plane).enumerate() {
        let lines = plane.chunks_exact_mut(wp).skip(pad);
        for (line, src) in lines.zip(image.chunks_exact(s.width * c)) {
            let dst = &mut line[pad..pad + s.width];
            for (d, v) in dst.iter_mut().zip(src.iter().skip(ci).step_by(c)) {
                *d = *v;
            }
        }
    }
}

struct OneImage<'a> {
    tile: Tile<'a>,
    out: &'a mut [f32],
}

impl WithSimd for OneImage<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let OneImage { tile, out } = self;
        let (h, w, c_out) = (tile.s.height, tile.s.width, tile.s.channels_out);
        let vectors = tile.cp / S::F32_LANES;
        // Two rows at a time where the registers hold both rows' accumulators (AVX-512 and
        // NEON have 32): each weight loaded, and each loop's bookkeeping, then serves twice
        // the multiply-adds (measured 1.4× faster than one row at a time).
        let two_rows = S::REGISTER_COUNT >= 32;
        let mut y = 0;
        while y < h {
            // Both rows' values are stored as whole vectors (a partial store in the loop made
            // the compiler keep the accumulators in memory).
            let rows = if two_rows && y + 2 <= h && tile.cp == c_out {
                2
            } else {
                1
            };
            let out = &mut out[y * w * c_out..(y + rows) * w * c_out];
            let mut v0 = 0;
            while v0 < vectors {
                if vectors - v0 >= WIDE {
                    tile.rows::<S, PIXELS_WIDE, WIDE>(simd, (y, rows, v0), out);
                    v0 += WIDE;
                } else {
                    tile.rows::<S, PIXELS_NARROW, 1>(simd, (y, rows, v0), out);
                    v0 += 1;
                }
            }
            y += rows;
        }
    }
}

/// What every tile of one image shares.
struct Tile<'a> {
    /// The input image with its zero border.
    image: &'a [f32],
    weights: &'a [f32],
    cp: usize,
    s: ConvShape,
    /// Whether the activation is ReLU, applied in the registers (others are applied after).
    relu: bool,
}

impl Tile<'_> {
    /// `rows` (1 or 2) output rows from `y` on, in tiles of `P` pixels and `V` vectors.
    #[inline(always)]
    fn rows<S: Simd, const P: usize, const V: usize>(
        &self,
        simd: S,
        (y, rows, v0): (usize, usize, usize),
        out: &mut [f32],
    ) {
        // The kernel's side as a constant for the sizes this app builds, so the loop over its
        // columns unrolls and each tap's slice is checked once (measured: 41% → 47% of one
        // core's FMA peak for the 8 → 16 block on MNIST, 12.5% → 16% for the 1 → 8 one).
        match (rows, self.s.kernel) {
            (2, 3) => self.row::<S, P, V, 2, true, 3>(simd, (y, v0), out),
            (2, 5) => self.row::<S, P, V, 2, true, 5>(simd, (y, v0), out),
            (2, _) => self.row::<S, P, V, 2, true, 0>(simd, (y, v0), out),
            (_, 3) => self.row::<S, P, V, 1, false, 3>(simd, (y, v0), out),
            (_, 5) => self.row::<S, P, V, 1, false, 5>(simd, (y, v0), out),
            _ => self.row::<S, P, V, 1, false, 0>(simd, (y, v0), out),
        }
    }

    /// `R` output rows from `y` on (`out` holds them), vectors of channels `v0..v0 + V`, in
    /// tiles of `P` pixels (fewer where the row is narrower).
    #[inline(always)]
    fn row<
        S: Simd,
        const P: usize,
        const V: usize,
        const R: usize,
        const FULL: bool,
        const K: usize,
    >(
        &self,
        simd: S,
        (y, v0): (usize, usize),
        out: &mut [f32],
    ) {
        let w = self.s.width;
        let mut ox = 0;
        while ox < w {
            ox = if P == PIXELS_NARROW && !w.is_multiple_of(P) && w.is_multiple_of(P - 1) {
                // Tiles of 7 for widths like MNIST's 28 and 14, which 8 does not divide: no
                // pixel is computed twice (measured: the 8 → 16 block on 14×14 images went from
                // 47% to 50% of one core's FMA peak, the 1 → 8 block from 16% to 17%).
                self.run::<S, { PIXELS_NARROW - 1 }, V, R, FULL, K>(simd, (y, ox, v0), out);
                ox + P - 1
            } else if w >= P {
                let start = ox.min(w - P);
                self.run::<S, P, V, R, FULL, K>(simd, (y, start, v0), out);
                start + P
            } else if w >= PIXELS_WIDE {
                let start = ox.min(w - PIXELS_WIDE);
                self.run::<S, PIXELS_WIDE, V, R, FULL, K>(simd, (y, start, v0), out);
                start + PIXELS_WIDE
            } else {
                self.run::<S, 1, V, R, FULL, K>(simd, (y, ox, v0), out);
                ox + 1
            };
        }
    }

    /// `P` pixels from `ox` on in each of `R` rows from `y` on, `V` vectors of channels from
    /// `v0` on.
    #[inline(always)]
    fn run<
        S: Simd,
        const P: usize,
        const V: usize,
        const R: usize,
        const FULL: bool,
        const K: usize,
    >(
        &self,
        simd: S,
        (y, ox, v0): (usize, usize, usize),
        out: &mut [f32],
    ) {
        let lanes = S::F32_LANES;
        let k = if K == 0 { self.s.kernel } else { K };
        let (c, w, c_out) = (self.s.channels_in, self.s.width, self.s.channels_out);
        let channels = v0 * lanes;
        let bias = &self.weights[k * k * c * self.cp + channels..];
        let b: [S::f32s; V] = std::array::from_fn(|v| load::<S>(&bias[v * lanes..]));
        let mut acc = [[b; P]; R];
        let wp = w + 2 * self.s.pad();
        let plane = (self.s.height + 2 * self.s.pad()) * wp;
        for ky in 0..k {
            for ci in 0..c {
                // Each row's values of channel `ci` under kernel row `ky`, for every kernel
                // column: side by side, so each column's `P` values are one checked slice.
                let lines: [&[f32]; R] = std::array::from_fn(|r| {
                    let start = ci * plane + (y + r + ky) * wp + ox;
                    &self.image[start..start + P + k - 1]
                });
                for kx in 0..k {
                    let wrow = &self.weights[((ky * k + kx) * c + ci) * self.cp + channels..];
                    let wv: [S::f32s; V] = std::array::from_fn(|v| load::<S>(&wrow[v * lanes..]));
                    for r in 0..R {
                        let inputs = &lines[r][kx..kx + P];
                        for p in 0..P {
                            let xv = simd.splat_f32s(inputs[p]);
                            for v in 0..V {
                                acc[r][p][v] = simd.mul_add_e_f32s(xv, wv[v], acc[r][p][v]);
                            }
                        }
                    }
                }
            }
        }
        // Indexed loops, not iterators, here too: an iterator over `acc` made the compiler keep
        // it in memory through the whole tile.
        if self.relu {
            let zero = simd.splat_f32s(0.0);
            for r in 0..R {
                for p in 0..P {
                    for v in 0..V {
                        acc[r][p][v] = simd.max_f32s(acc[r][p][v], zero);
                    }
                }
            }
        }
        for r in 0..R {
            for p in 0..P {
                let at = (r * w + ox + p) * c_out;
                let dst = &mut out[at..at + c_out];
                for v in 0..V {
                    let start = channels + v * lanes;
                    let end = (start + lanes).min(c_out);
                    // A copy: a reference to `acc` itself would keep all of it in memory,
                    // stored after every multiply-add (measured 1.5× slower).
                    let a = acc[r][p][v];
                    if FULL || end - start == lanes {
                        let values = std::slice::from_ref(&a);
                        dst[start..end].copy_from_slice(bytemuck::cast_slice(values));
                    } else if start < end {
                        simd.partial_store_f32s(&mut dst[start..end], a);
                    }
                }
            }
        }
    }
}

/// Adds one image's contribution to a convolution's weight gradient into `dw` (`[K² · C_in,
/// cp]`, padded like [`pad_weights`]' rows) on `vectors`: `dw[(ky, kx, c), o] += Σ_pixels
/// x[y + ky − pad, x + kx − pad, c] · dz[y, x, o]`, straight from the image, without its
/// patches.
pub(super) fn weight_grad_image(
    image: &[f32],
    dz: &[f32],
    s: ConvShape,
    vectors: Vectors,
    dw: &mut [f32],
) {
    BORDERED.with_borrow_mut(|bordered| {
        border(image, s, bordered);
        arch(vectors.narrow).dispatch(GradImage {
            image: bordered,
            dz,
            s,
            cp: vectors.cp,
            dw,
        });
    });
}

struct GradImage<'a> {
    /// The input image, bordered and planar (see [`border`]).
    image: &'a [f32],
    dz: &'a [f32],
    s: ConvShape,
    cp: usize,
    dw: &'a mut [f32],
}

impl WithSimd for GradImage<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let vectors = self.cp / S::F32_LANES;
        let mut v0 = 0;
        while v0 < vectors {
            // Each kernel row's taps are summed in registers over the whole image (3 or 5 sums
            // in flight per vector of filters, more with two vectors).
            if vectors - v0 >= WIDE {
                self.taps::<S, WIDE>(simd, v0);
                v0 += WIDE;
            } else {
                self.taps::<S, 1>(simd, v0);
                v0 += 1;
            }
        }
    }
}

impl GradImage<'_> {
    /// Every tap's sums for vectors of filters `v0..v0 + V`, input channel by input channel:
    /// a 3×3 kernel's nine taps at once (nine chains of multiply-adds in flight), a 5×5
    /// kernel's row by row (five taps, two partial sums each, within the registers).
    #[inline(always)]
    fn taps<S: Simd, const V: usize>(&mut self, simd: S, v0: usize) {
        for ci in 0..self.s.channels_in {
            match self.s.kernel {
                3 => self.sums::<S, V, 3, 3, 1>(simd, (ci, 0, v0)),
                5 => {
                    for ky in 0..5 {
                        self.sums::<S, V, 5, 1, 2>(simd, (ci, ky, v0));
                    }
                }
                _ => unreachable!("kernels are 3 or 5 wide (checked)"),
            }
        }
    }

    /// The sums of the `K × KY` taps of kernel rows `ky0..ky0 + KY` over input channel `ci`,
    /// over every pixel, each tap's in `SPLIT` partial sums (pixels taken in turn) so that
    /// enough chains of multiply-adds are in flight; added into `dw` at the end.
    #[inline(always)]
    fn sums<S: Simd, const V: usize, const K: usize, const KY: usize, const SPLIT: usize>(
        &mut self,
        simd: S,
        (ci, ky0, v0): (usize, usize, usize),
    ) {
        let lanes = S::F32_LANES;
        let (h, w, c_out) = (self.s.height, self.s.width, self.s.channels_out);
        let wp = w + 2 * self.s.pad();
        let plane = (h + 2 * self.s.pad()) * wp;
        let channels = v0 * lanes;
        let zero = simd.splat_f32s(0.0);
        let mut acc_rows = [[[[zero; V]; SPLIT]; K]; KY];
        for y in 0..h {
            let lines: [&[f32]; KY] = std::array::from_fn(|r| {
                let start = ci * plane + (y + ky0 + r) * wp;
                &self.image[start..start + wp]
            });
            let dz_row = &self.dz[y * w * c_out..];
            for x in 0..w {
                // Whole vectors where the image's gradient goes on past this pixel's channels:
                // lanes past `C_out` only reach the padding columns of `dw`.
                let dz = &dz_row[x * c_out + channels..];
                let mut d = [zero; V];
                for v in 0..V {
                    let first = v * lanes;
                    d[v] = if first + lanes <= dz.len() {
                        load::<S>(&dz[first..])
                    } else {
                        simd.partial_load_f32s(&dz[first.min(dz.len())..])
                    };
                }
                let split = x % SPLIT;
                for r in 0..KY {
                    let inputs = &lines[r][x..x + K];
                    for kx in 0..K {
                        let xv = simd.splat_f32s(inputs[kx]);
                        for v in 0..V {
                            acc_rows[r][kx][split][v] =
                                simd.mul_add_e_f32s(xv, d[v], acc_rows[r][kx][split][v]);
                        }
                    }
                }
            }
        }
        let (k, c) = (self.s.kernel, self.s.channels_in);
        for r in 0..KY {
            for kx in 0..K {
                let row = (((ky0 + r) * k + kx) * c + ci) * self.cp + channels;
                for v in 0..V {
                    let at = row + v * lanes;
                    let mut sum = load::<S>(&self.dw[at..]);
                    for part in 0..SPLIT {
                        sum = simd.add_f32s(sum, acc_rows[r][kx][part][v]);
                    }
                    let values = std::slice::from_ref(&sum);
                    self.dw[at..at + lanes].copy_from_slice(bytemuck::cast_slice(values));
                }
            }
        }
    }
}

/// One vector from the first lanes of `values`.
#[inline(always)]
fn load<S: Simd>(values: &[f32]) -> S::f32s {
    bytemuck::pod_read_unaligned(bytemuck::cast_slice(&values[..S::F32_LANES]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The convolution of one image on instruction set `simd`, as [`conv_image`] runs it on the
    /// widest one.
    fn on<S: Simd>(simd: S, image: &[f32], (w, bias): (&[f32], &[f32]), s: ConvShape) -> Vec<f32> {
        let cp = s.channels_out.div_ceil(S::F32_LANES) * S::F32_LANES;
        let (mut weights, mut bordered) = (Vec::new(), Vec::new());
        pad_weights(w, bias, cp, &mut weights);
        border(image, s, &mut bordered);
        let mut out = vec![f32::NAN; s.pixels() * s.channels_out];
        let tile = Tile {
            image: &bordered,
            weights: &weights,
            cp,
            s,
            relu: true,
        };
        simd.vectorize(OneImage {
            tile,
            out: &mut out,
        });
        out
    }

    /// The weight gradient of one image on instruction set `simd`, unpadded.
    fn grad_on<S: Simd>(simd: S, image: &[f32], dz: &[f32], s: ConvShape) -> Vec<f32> {
        let cp = s.channels_out.div_ceil(S::F32_LANES) * S::F32_LANES;
        let mut bordered = Vec::new();
        border(image, s, &mut bordered);
        let mut dw = vec![0.0; s.patch() * cp];
        simd.vectorize(GradImage {
            image: &bordered,
            dz,
            s,
            cp,
            dw: &mut dw,
        });
        dw.chunks_exact(cp)
            .flat_map(|row| row[..s.channels_out].to_vec())
            .collect()
    }

    /// The input gradient of one image on instruction set `simd`: the forward kernel on `dz`
    /// with the transposed weights.
    fn input_grad_on<S: Simd>(simd: S, dz: &[f32], w: &[f32], s: ConvShape) -> Vec<f32> {
        let t = ConvShape {
            channels_in: s.channels_out,
            channels_out: s.channels_in,
            ..s
        };
        let cp = t.channels_out.div_ceil(S::F32_LANES) * S::F32_LANES;
        let (mut weights, mut bordered) = (Vec::new(), Vec::new());
        pad_transposed_weights(w, s, cp, &mut weights);
        border(dz, t, &mut bordered);
        let mut dx = vec![f32::NAN; s.image_in()];
        let tile = Tile {
            image: &bordered,
            weights: &weights,
            cp,
            s: t,
            relu: false,
        };
        simd.vectorize(OneImage { tile, out: &mut dx });
        dx
    }

    /// The input value that tap `(ky, kx)` of output pixel `(y, x)` reads, if inside.
    fn tap(s: ConvShape, (y, x): (usize, usize), (ky, kx): (usize, usize)) -> Option<usize> {
        let iy = (y + ky).checked_sub(s.pad()).filter(|&v| v < s.height)?;
        let ix = (x + kx).checked_sub(s.pad()).filter(|&v| v < s.width)?;
        Some(iy * s.width + ix)
    }

    /// The gradients by their definitions, in f64: `dw[(ky, kx, c), o] = Σ x[tap] dz[o]` and
    /// `dx[tap, c] = Σ w[(ky, kx, c), o] dz[o]` over output pixels and taps.
    fn reference_grads(x: &[f32], dz: &[f32], w: &[f32], s: ConvShape) -> (Vec<f64>, Vec<f64>) {
        let (c, k, o_n) = (s.channels_in, s.kernel, s.channels_out);
        let mut dw = vec![0.0; s.patch() * o_n];
        let mut dx = vec![0.0; s.image_in()];
        for y in 0..s.height {
            for xx in 0..s.width {
                for (ky, kx) in (0..k).flat_map(|ky| (0..k).map(move |kx| (ky, kx))) {
                    let Some(i) = tap(s, (y, xx), (ky, kx)) else {
                        continue;
                    };
                    for ci in 0..c {
                        for o in 0..o_n {
                            let g = f64::from(dz[(y * s.width + xx) * o_n + o]);
                            let row = (ky * k + kx) * c + ci;
                            dw[row * o_n + o] += f64::from(x[i * c + ci]) * g;
                            dx[i * c + ci] += f64::from(w[row * o_n + o]) * g;
                        }
                    }
                }
            }
        }
        (dw, dx)
    }

    /// The definition, in f64: zero padding, taps `(ky, kx, c)`, then ReLU.
    fn reference(image: &[f32], w: &[f32], bias: &[f32], s: ConvShape) -> Vec<f64> {
        let (c, k, pad) = (s.channels_in, s.kernel, s.pad() as isize);
        let mut out = Vec::new();
        for y in 0..s.height as isize {
            for x in 0..s.width as isize {
                for o in 0..s.channels_out {
                    let mut sum = f64::from(bias[o]);
                    for ky in 0..k {
                        for kx in 0..k {
                            let (iy, ix) = (y + ky as isize - pad, x + kx as isize - pad);
                            if iy < 0 || ix < 0 || iy >= s.height as isize || ix >= s.width as isize
                            {
                                continue;
                            }
                            for ci in 0..c {
                                let v = image[(iy as usize * s.width + ix as usize) * c + ci];
                                let wt = w[((ky * k + kx) * c + ci) * s.channels_out + o];
                                sum += f64::from(v) * f64::from(wt);
                            }
                        }
                    }
                    out.push(sum.max(0.0));
                }
            }
        }
        out
    }

    /// Every instruction set this CPU has computes the definitions of the forward pass and of
    /// both gradients (the tests elsewhere only reach the widest): plain scalar code, and AVX2 and AVX-512 where present, over shapes
    /// that take every path (one and two vectors of filters, whole vectors two rows at a time,
    /// odd heights, rows narrower than a tile and not a multiple of it).
    #[test]
    fn every_instruction_set_computes_the_definitions() {
        let shapes = [
            (1, 8, 28, 28, 3),
            (8, 16, 14, 14, 3),
            (3, 17, 5, 13, 3),
            (2, 32, 7, 9, 5),
            (4, 40, 3, 2, 3),
            (1, 3, 2, 3, 5),
            (5, 64, 6, 21, 3),
            (3, 8, 4, 14, 5),
        ];
        for (c_in, c_out, height, width, kernel) in shapes {
            let s = ConvShape {
                height,
                width,
                channels_in: c_in,
                channels_out: c_out,
                kernel,
            };
            let values = |n: usize, seed: usize| -> Vec<f32> {
                (0..n)
                    .map(|i| (((i * 7 + seed) % 23) as f32 - 11.0) / 13.0)
                    .collect()
            };
            let image = values(s.image_in(), 1);
            let w = values(s.patch() * c_out, 5);
            let bias = values(c_out, 9);
            let want = reference(&image, &w, &bias, s);
            let dz = values(s.pixels() * c_out, 3);
            let (want_dw, want_dx) = reference_grads(&image, &dz, &w, s);
            let grads = |isa: &str, dw: Vec<f32>, dx: Vec<f32>| {
                for (what, got, want) in [("dw", dw, &want_dw), ("dx", dx, &want_dx)] {
                    assert_eq!(got.len(), want.len());
                    for (i, (g, w)) in got.iter().zip(want).enumerate() {
                        assert!(
                            (f64::from(*g) - w).abs() <= 1e-4 * (1.0 + w.abs()),
                            "{isa} {s:?}: {what}[{i}] is {g}, the definition {w}"
                        );
                    }
                }
            };
            grads(
                "scalar",
                grad_on(pulp::Scalar, &image, &dz, s),
                input_grad_on(pulp::Scalar, &dz, &w, s),
            );
            #[cfg(target_arch = "x86_64")]
            {
                let v3 = pulp::x86::V3::try_new().map(|simd| {
                    let dw = grad_on(simd, &image, &dz, s);
                    let dx = input_grad_on(simd, &dz, &w, s);
                    let out = on(simd, &image, (&w, &bias), s);
                    grads("avx2", dw.clone(), dx.clone());
                    (dw, dx, out)
                });
                let v4 = pulp::x86::V4::try_new().map(|simd| {
                    let dw = grad_on(simd, &image, &dz, s);
                    let dx = input_grad_on(simd, &dz, &w, s);
                    let out = on(simd, &image, (&w, &bias), s);
                    grads("avx512", dw.clone(), dx.clone());
                    (dw, dx, out)
                });
                // The backend times both and keeps the faster for narrow layers (see
                // `convolution.rs`), which is only sound if the choice changes no result.
                if let (Some(v3), Some(v4)) = (v3, v4) {
                    assert!(v3 == v4, "{s:?}: AVX2 and AVX-512 results differ");
                }
            }
            #[cfg_attr(
                not(target_arch = "x86_64"),
                expect(unused_mut, reason = "only x86-64 adds its vector units")
            )]
            let mut results = vec![("scalar", on(pulp::Scalar, &image, (&w, &bias), s))];
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(simd) = pulp::x86::V3::try_new() {
                    results.push(("avx2", on(simd, &image, (&w, &bias), s)));
                }
                if let Some(simd) = pulp::x86::V4::try_new() {
                    results.push(("avx512", on(simd, &image, (&w, &bias), s)));
                }
            }
            for (isa, got) in results {
                assert_eq!(got.len(), want.len());
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (f64::from(*g) - w).abs() <= 1e-4 * (1.0 + w.abs()),
                        "{isa} {s:?}: output {i} is {g}, the definition {w}"
                    );
                }
            }
        }
    }
}
