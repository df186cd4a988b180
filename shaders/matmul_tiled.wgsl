// Register-tiled matrix product with a fused epilogue, for large products:
// c[m, n] = epilogue(op(a)[m, k] · op(b)[k, n]).
//
// `matmul.wgsl` computes one output per invocation, so each value it reads from workgroup
// memory feeds one multiply-add. Here a 16 × 16 workgroup computes a 64 × 64 tile of `c`, each
// invocation a 4 × 4 block of it: per step along `k` it reads four values of `a` and four of
// `b` from workgroup memory into registers and does sixteen multiply-adds with them, four
// times the arithmetic per load. The tiles of `a` and `b` (64 × 16 each, 8 KiB together) are
// staged in workgroup memory 16 values of `k` at a time, each invocation copying four of each.
//
// The same transposes as strides, the same epilogues, and the same order of summation for each
// output (`kk` ascending) as `matmul.wgsl`, so the two variants agree to rounding.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    epilogue: u32,
    a_row_stride: u32,
    a_col_stride: u32,
    b_row_stride: u32,
    b_col_stride: u32,
    act: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> aux: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

const BLOCK: u32 = 64u;
const STEP: u32 = 16u;
const PER: u32 = 4u;

// a_tile[kk][i]: the step's 16 values of `k` for the tile's 64 rows, kk-major so that an
// invocation's four rows are side by side; b_tile[kk][j] likewise for the 64 columns.
var<workgroup> a_tile: array<array<f32, 64>, 16>;
var<workgroup> b_tile: array<array<f32, 64>, 16>;

// `activate` and `activation_grad` come from `activation.wgsl`, put in front.

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) flat: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let row0 = wid.y * BLOCK;
    let col0 = wid.x * BLOCK;
    var acc: array<array<f32, 4>, 4>;
    for (var i = 0u; i < PER; i++) {
        for (var j = 0u; j < PER; j++) {
            acc[i][j] = 0.0;
        }
    }
    let steps = (p.k + STEP - 1u) / STEP;
    for (var t = 0u; t < steps; t++) {
        // 1024 values of each tile, four per invocation; out of range loads as zero. Neighbouring
        // invocations read neighbouring addresses: along `k` where it is contiguous, else along
        // the rows (or columns).
        for (var e = 0u; e < PER; e++) {
            let index = flat + e * 256u;
            var kk = index / BLOCK;
            var x = index % BLOCK;
            if (p.a_col_stride == 1u) {
                kk = index % STEP;
                x = index / STEP;
            }
            var k_at = t * STEP + kk;
            var a_value = 0.0;
            if (row0 + x < p.m && k_at < p.k) {
                a_value = a[(row0 + x) * p.a_row_stride + k_at * p.a_col_stride];
            }
            a_tile[kk][x] = a_value;
            kk = index / BLOCK;
            x = index % BLOCK;
            if (p.b_col_stride != 1u) {
                kk = index % STEP;
                x = index / STEP;
            }
            k_at = t * STEP + kk;
            var b_value = 0.0;
            if (k_at < p.k && col0 + x < p.n) {
                b_value = b[k_at * p.b_row_stride + (col0 + x) * p.b_col_stride];
            }
            b_tile[kk][x] = b_value;
        }
        workgroupBarrier();
        let count = min(STEP, p.k - t * STEP);
        for (var kk = 0u; kk < count; kk++) {
            var a_reg: array<f32, 4>;
            var b_reg: array<f32, 4>;
            for (var i = 0u; i < PER; i++) {
                a_reg[i] = a_tile[kk][lid.y * PER + i];
                b_reg[i] = b_tile[kk][lid.x * PER + i];
            }
            for (var i = 0u; i < PER; i++) {
                for (var j = 0u; j < PER; j++) {
                    acc[i][j] += a_reg[i] * b_reg[j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < PER; i++) {
        let row = row0 + lid.y * PER + i;
        for (var j = 0u; j < PER; j++) {
            let col = col0 + lid.x * PER + j;
            if (row >= p.m || col >= p.n) {
                continue;
            }
            let index = row * p.n + col;
            let sum = acc[i][j];
            switch p.epilogue {
                case EPILOGUE_BIAS_ACT: { c[index] = activate(sum + aux[col], p.act); }
                case EPILOGUE_ACT_GRAD: { c[index] = sum * activation_grad(aux[index], p.act); }
                default: { c[index] = sum; }
            }
        }
    }
}
