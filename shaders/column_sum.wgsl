// Column sums: out[j] = Σ_r x[r, j], the bias gradient of a dense layer or a convolution (whose
// rows are every pixel of the batch, tens of thousands), and the sum of a split product's
// partial sums.
//
// A workgroup takes COLS neighbouring columns; its WORKGROUP / COLS slices of invocations each
// sum every slices-th row of their column (neighbouring invocations read neighbouring
// addresses), and a tree in workgroup memory adds the slices' sums, halving them each step. One
// invocation per column summing every row in turn, as before, left a convolution's bias gradient
// a chain of 50,176 dependent loads on one invocation of a GPU.

struct Params {
    rows: u32,
    cols: u32,
    // Rows each workgroup along z sums, into row z of `out` (all of them unless the sum is split
    // across workgroups, as a product is split along `k`).
    row_chunk: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

// Invocations per workgroup, chosen per adapter as a pipeline constant: 32, 64, 128 or 256, so
// that the slices are a power of two.
override WORKGROUP: u32 = 64u;
// Columns a workgroup sums (the Rust side dispatches ceil(cols / COLS) workgroups).
const COLS: u32 = 16u;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(WORKGROUP, 1, 1)
fn column_sum(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let slices = WORKGROUP / COLS;
    let c = li % COLS;
    let slice = li / COLS;
    let j = wid.x * COLS + c;
    let row_begin = wid.z * p.row_chunk;
    let row_end = min(p.rows, row_begin + p.row_chunk);
    var acc = 0.0;
    if (j < p.cols) {
        for (var r = row_begin + slice; r < row_end; r += slices) {
            acc += x[r * p.cols + j];
        }
    }
    partial[li] = acc;
    workgroupBarrier();
    for (var half = slices / 2u; half > 0u; half = half / 2u) {
        if (slice < half) {
            partial[li] += partial[li + half * COLS];
        }
        workgroupBarrier();
    }
    if (slice == 0u && j < p.cols) {
        out[wid.z * p.cols + j] = partial[c];
    }
}
