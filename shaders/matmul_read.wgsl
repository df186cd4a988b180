// How the two product kernels read their operands; put in front of `matmul.wgsl` and
// `matmul_tiled.wgsl`, whose `Params` and bindings it uses.
//
// READ_STRIDES: element (i, kk) of op(a) is a[i * a_row_stride + kk * a_col_stride], so
// transposes cost nothing (likewise for b).
//
// A convolution is a product whose `a` is the patch matrix `im2col` would make: row
// (b·H + y)·W + x, column (ky·K + kx)·C + c holds x[b, y + ky − pad, x + kx − pad, c], zero
// outside the image. Here that matrix is never made: each value is read from the images where it
// stands as the product's tiles are filled (an implicit GEMM). A patch matrix is K² times the
// size of its images (9× for 3 × 3), so making it cost a full extra write and read of that much
// memory per pass, and its workspace; the arithmetic is the product's either way.
//
// READ_PATCHES: op(a)[pixel, tap], the forward pass (and the input gradient, on the output's
// gradient with the channels of `p.channels`).
// READ_PATCHES_T: op(a)[tap, pixel], the weight gradient's.
// READ_FLIPPED (b only): op(b)[tap, j] of the input gradient, the transposed convolution:
// the weights turned half a circle with their channels swapped,
// w[((K − 1 − ky)·K + (K − 1 − kx))·n + j, o] for tap (ky·K + kx)·C + o, w being [K²·n, C].
//
// How each operand is read is a pipeline constant, one pipeline per combination, so that the
// compiler removes the other reads: a software adapter (lavapipe) runs every arm of a switch it
// cannot prove uniform, and a `switch` on a uniform value made its dense products 12% slower.
override A_READ: u32 = READ_STRIDES;
override B_READ: u32 = READ_STRIDES;

// Patch matrix element (row, tap) of the channels-last images in `a` (the caller keeps row
// within the batch's pixels and tap below K²·C). Row (b·H + y)·W + x is pixel (y, x) of image b,
// so the tap's value sits (ky − pad)·W + kx − pad pixels further on: four divisions a value,
// two for the pixel's place and two for the tap's.
fn patch_value(row: u32, tap: u32) -> f32 {
    let line = row / p.width;
    let x = row - line * p.width;
    let y = line % p.height;
    let kyx = tap / p.channels;
    let c = tap - kyx * p.channels;
    let ky = kyx / p.kernel;
    let kx = kyx - ky * p.kernel;
    // Unsigned: y + ky − pad is outside the image when y + ky < pad or ≥ height + pad.
    let pad = p.kernel / 2u;
    if (y + ky < pad || y + ky >= p.height + pad || x + kx < pad || x + kx >= p.width + pad) {
        return 0.0;
    }
    return a[(row + (ky * p.width + kx) - pad * (p.width + 1u)) * p.channels + c];
}

// Element (i, kk) of op(a); the caller keeps i < m and kk < k.
fn load_a(i: u32, kk: u32) -> f32 {
    switch A_READ {
        case READ_PATCHES: { return patch_value(i, kk); }
        case READ_PATCHES_T: { return patch_value(kk, i); }
        default: { return a[i * p.a_row_stride + kk * p.a_col_stride]; }
    }
}

// Element (kk, j) of op(b); the caller keeps kk < k and j < n. Tap ky·K + kx turned half a
// circle is K² − 1 − (ky·K + kx).
fn load_b(kk: u32, j: u32) -> f32 {
    if (B_READ == READ_FLIPPED) {
        let kyx = kk / p.channels;
        let o = kk - kyx * p.channels;
        let tap = p.kernel * p.kernel - 1u - kyx;
        return b[(tap * p.n + j) * p.channels + o];
    }
    return b[kk * p.b_row_stride + j * p.b_col_stride];
}
