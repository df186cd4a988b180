// Tiled matrix product with a fused epilogue: c[m, n] = epilogue(op(a)[m, k] · op(b)[k, n]).
//
// Each TILE x TILE workgroup computes one tile of `c`. It walks along `k` in steps of TILE, and
// at each step its invocations copy one tile of `a` and of `b` into workgroup memory (one
// element each), wait at a barrier, and then every invocation reads TILE values from each tile
// instead of from global memory: a value is loaded once and used TILE times. TILE is chosen per
// adapter (16, or 8 where a workgroup cannot have 256 invocations) as a pipeline constant.
//
// Transposes are strides: element (i, kk) of op(a) is a[i * a_row_stride + kk * a_col_stride],
// so xᵀ and wᵀ cost nothing. The sum for one output runs over kk in ascending order, exactly as
// the CPU kernel does, which keeps the two devices within rounding of each other.
//
// A thin product with a long `k` (a convolution's weight gradient: 72 × 16 outputs summed over
// 50,176 pixels) has too few outputs to keep a GPU busy, one invocation each. It is split along
// `k`: workgroup z sums values k_chunk · z up to k_chunk · (z + 1) and writes its partial sums
// to layer z of `c`; `column_sum.wgsl` then adds the layers in order (EPILOGUE_SUM only).

struct Params {
    m: u32,
    n: u32,
    k: u32,
    // EPILOGUE_SUM: c = sum; EPILOGUE_BIAS_ACT: c = act(sum + aux[j]) (bias);
    // EPILOGUE_ACT_GRAD: c = sum * act'(aux[i, j]).
    epilogue: u32,
    a_row_stride: u32,
    a_col_stride: u32,
    b_row_stride: u32,
    b_col_stride: u32,
    // ACT_IDENTITY, ACT_RELU, ACT_TANH or ACT_SIGMOID.
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

// The workgroup's edge, at most 16 (the size of the tile arrays below).
override TILE: u32 = 16u;

var<workgroup> a_tile: array<array<f32, 16>, 16>;
var<workgroup> b_tile: array<array<f32, 16>, 16>;

// `activate` and `activation_grad` come from `activation.wgsl`, `load_a` and `load_b` from
// `matmul_read.wgsl`, both put in front.

@compute @workgroup_size(TILE, TILE, 1)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let row = wid.y * TILE + lid.y;
    let col = wid.x * TILE + lid.x;
    let k_begin = wid.z * p.k_chunk;
    let k_end = min(p.k, k_begin + p.k_chunk);
    var acc = 0.0;
    let tiles = (k_end - k_begin + TILE - 1u) / TILE;
    for (var t = 0u; t < tiles; t++) {
        let a_k = k_begin + t * TILE + lid.x;
        let b_k = k_begin + t * TILE + lid.y;
        // Out-of-range elements load as zero, so partial tiles add nothing.
        var a_value = 0.0;
        if (row < p.m && a_k < k_end) {
            a_value = load_a(row, a_k);
        }
        var b_value = 0.0;
        if (b_k < k_end && col < p.n) {
            b_value = load_b(b_k, col);
        }
        a_tile[lid.y][lid.x] = a_value;
        b_tile[lid.y][lid.x] = b_value;
        workgroupBarrier();
        // An invocation past the edge of `c` helps load the tiles but adds nothing up: a
        // convolution's narrow products (8 channels in a 16-wide tile) leave half of them idle,
        // and a software adapter would otherwise run their sums too.
        if (row < p.m && col < p.n) {
            let count = min(TILE, k_end - k_begin - t * TILE);
            for (var kk = 0u; kk < count; kk++) {
                acc += a_tile[lid.y][kk] * b_tile[kk][lid.x];
            }
        }
        workgroupBarrier();
    }
    if (row >= p.m || col >= p.n) {
        return;
    }
    let index = wid.z * p.m * p.n + row * p.n + col;
    switch p.epilogue {
        case EPILOGUE_BIAS_ACT: { c[index] = activate(acc + aux[col], p.act); }
        case EPILOGUE_ACT_GRAD: { c[index] = acc * activation_grad(aux[index], p.act); }
        default: { c[index] = acc; }
    }
}
