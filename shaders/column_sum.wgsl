// Column sums: out[j] = Σ_r x[r, j], the bias gradient of a dense layer.
//
// One invocation per column sums its rows in ascending order, like the CPU kernel. The work is
// O(batch · width), tiny beside the matrix products around it.

struct Params {
    rows: u32,
    cols: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

// Invocations per workgroup, chosen per adapter as a pipeline constant.
override WORKGROUP: u32 = 64u;

@compute @workgroup_size(WORKGROUP, 1, 1)
fn column_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x;
    if (j >= p.cols) {
        return;
    }
    var acc = 0.0;
    for (var r = 0u; r < p.rows; r++) {
        acc += x[r * p.cols + j];
    }
    out[j] = acc;
}
