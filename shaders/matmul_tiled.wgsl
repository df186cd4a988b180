// Register-tiled matrix product with a fused epilogue, for large products:
// c[m, n] = epilogue(op(a)[m, k] · op(b)[k, n]).
//
// `matmul.wgsl` computes one output per invocation, so each value it reads from workgroup
// memory feeds one multiply-add. Here a 16 × 16 workgroup computes a BLOCK_M × BLOCK_N tile of
// `c`, each invocation a PER_M × PER_N block of it: per step along `k` it reads PER_M values of
// `a` and PER_N of `b` from workgroup memory into registers and does PER_M · PER_N
// multiply-adds with them (16 with 4 × 4 blocks: four times the arithmetic per load). The tiles
// of `a` and `b` are staged in workgroup memory STEP values of `k` at a time, the invocations
// copying them together.
//
// PER_M, PER_N and STEP are generated in front of this file, one pipeline per variant
// (`MatmulChoice` in backend/identity.rs): WGSL needs constant sizes for the register arrays.
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
    // Values of `k` each workgroup along z sums (all of `k` unless the product is split).
    k_chunk: u32,
    // A convolution's images (see `matmul_read.wgsl`): height, width, channels, kernel side.
    height: u32,
    width: u32,
    channels: u32,
    kernel: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> aux: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

const BLOCK_M: u32 = 16u * PER_M;
const BLOCK_N: u32 = 16u * PER_N;
// Values of each tile every invocation copies per step.
const A_LOADS: u32 = BLOCK_M * STEP / 256u;
const B_LOADS: u32 = BLOCK_N * STEP / 256u;

// a_tile[kk][i]: the step's STEP values of `k` for the tile's BLOCK_M rows, kk-major so that an
// invocation's rows are side by side; b_tile[kk][j] likewise for the BLOCK_N columns.
var<workgroup> a_tile: array<array<f32, BLOCK_M>, STEP>;
var<workgroup> b_tile: array<array<f32, BLOCK_N>, STEP>;

// `activate` and `activation_grad` come from `activation.wgsl`, `load_a` and `load_b` from
// `matmul_read.wgsl`, both put in front.

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) flat: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let row0 = wid.y * BLOCK_M;
    let col0 = wid.x * BLOCK_N;
    var acc: array<array<f32, PER_N>, PER_M>;
    for (var i = 0u; i < PER_M; i++) {
        for (var j = 0u; j < PER_N; j++) {
            acc[i][j] = 0.0;
        }
    }
    let steps = (p.k + STEP - 1u) / STEP;
    for (var t = 0u; t < steps; t++) {
        // Out of range loads as zero. Neighbouring invocations read neighbouring addresses:
        // along `k` where it is contiguous, else along the rows (or columns).
        for (var e = 0u; e < A_LOADS; e++) {
            let index = flat + e * 256u;
            var kk = index / BLOCK_M;
            var x = index % BLOCK_M;
            if (p.a_col_stride == 1u) {
                kk = index % STEP;
                x = index / STEP;
            }
            let k_at = t * STEP + kk;
            var a_value = 0.0;
            if (row0 + x < p.m && k_at < p.k) {
                a_value = load_a(row0 + x, k_at);
            }
            a_tile[kk][x] = a_value;
        }
        for (var e = 0u; e < B_LOADS; e++) {
            let index = flat + e * 256u;
            var kk = index / BLOCK_N;
            var x = index % BLOCK_N;
            if (p.b_col_stride != 1u) {
                kk = index % STEP;
                x = index / STEP;
            }
            let k_at = t * STEP + kk;
            var b_value = 0.0;
            if (k_at < p.k && col0 + x < p.n) {
                b_value = load_b(k_at, col0 + x);
            }
            b_tile[kk][x] = b_value;
        }
        workgroupBarrier();
        let count = min(STEP, p.k - t * STEP);
        for (var kk = 0u; kk < count; kk++) {
            var a_reg: array<f32, PER_M>;
            var b_reg: array<f32, PER_N>;
            for (var i = 0u; i < PER_M; i++) {
                a_reg[i] = a_tile[kk][lid.y * PER_M + i];
            }
            for (var j = 0u; j < PER_N; j++) {
                b_reg[j] = b_tile[kk][lid.x * PER_N + j];
            }
            for (var i = 0u; i < PER_M; i++) {
                for (var j = 0u; j < PER_N; j++) {
                    acc[i][j] += a_reg[i] * b_reg[j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < PER_M; i++) {
        let row = row0 + lid.y * PER_M + i;
        for (var j = 0u; j < PER_N; j++) {
            let col = col0 + lid.x * PER_N + j;
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
