// Layer normalisation and the activations that are layers of their own (GELU), with their
// gradients. `activation.wgsl` comes in front (activate, activation_grad_at).
//
// The bindings are shared by the entry points, each using a prefix-compatible set (the Rust side
// binds exactly the ones an entry point uses, in this order):
//   activation_forward     a = x,  out0 = out
//   activation_backward    a = x,  out0 = dx,     b = dout
//   layer_norm             a = x,  out0 = out,    b = gamma, c = beta,  out1 = stats
//   layer_norm_backward    a = x,  out0 = dx,     b = dout,  c = gamma, out1 = stats (read)
//   layer_norm_params_grad a = x,  out0 = dgamma, b = dout,  c = stats, out1 = dbeta

struct Params {
    // Values (the activations), rows (layer_norm, layer_norm_backward) or columns
    // (layer_norm_params_grad) this pass covers.
    len: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    // Features per row.
    cols: u32,
    // ACT_*: the activation.
    act: u32,
    // Rows (layer_norm_params_grad).
    rows: u32,
    eps: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out0: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read> c: array<f32>;
@group(0) @binding(5) var<storage, read_write> out1: array<f32>;

override WORKGROUP: u32 = 256u;

// A row's invocations: one workgroup a row, each invocation striding over the row's features
// (adjacent invocations read adjacent values), the sums reduced in workgroup memory.
const ROW_THREADS: u32 = 64u;
var<workgroup> partial: array<f32, ROW_THREADS>;

fn flat(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// The sum of every invocation's `v` in this workgroup, known to all of them.
fn row_sum(lid: u32, v: f32) -> f32 {
    partial[lid] = v;
    workgroupBarrier();
    for (var s = ROW_THREADS / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(WORKGROUP, 1, 1)
fn activation_forward(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    out0[i] = activate(a[i], p.act);
}

@compute @workgroup_size(WORKGROUP, 1, 1)
fn activation_backward(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    out0[i] = b[i] * activation_grad_at(a[i], p.act);
}

// Two passes over the row (the mean, then the squared distances from it), as the CPU sums.
@compute @workgroup_size(ROW_THREADS, 1, 1)
fn layer_norm(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.y * p.groups_x + wid.x;
    if (row >= p.len) {
        return;
    }
    let lid = lid3.x;
    let n = p.cols;
    let base = row * n;
    var s = 0.0;
    for (var j = lid; j < n; j += ROW_THREADS) {
        s += a[base + j];
    }
    let mean = row_sum(lid, s) / f32(n);
    var q = 0.0;
    for (var j = lid; j < n; j += ROW_THREADS) {
        let d = a[base + j] - mean;
        q += d * d;
    }
    // 1 / sqrt rather than inverseSqrt, whose precision WGSL leaves loose.
    let r = 1.0 / sqrt(row_sum(lid, q) / f32(n) + p.eps);
    for (var j = lid; j < n; j += ROW_THREADS) {
        out0[base + j] = (a[base + j] - mean) * r * b[j] + c[j];
    }
    if (lid == 0u) {
        out1[2u * row] = mean;
        out1[2u * row + 1u] = r;
    }
}

// dx = r · (g − mean(g) − x̂ · mean(g · x̂)), g = dout · gamma, x̂ = (x − μ) · r.
@compute @workgroup_size(ROW_THREADS, 1, 1)
fn layer_norm_backward(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.y * p.groups_x + wid.x;
    if (row >= p.len) {
        return;
    }
    let lid = lid3.x;
    let n = p.cols;
    let base = row * n;
    let mean = out1[2u * row];
    let r = out1[2u * row + 1u];
    var sg = 0.0;
    var sgx = 0.0;
    for (var j = lid; j < n; j += ROW_THREADS) {
        let g = b[base + j] * c[j];
        sg += g;
        sgx += g * (a[base + j] - mean) * r;
    }
    let mean_g = row_sum(lid, sg) / f32(n);
    let mean_gx = row_sum(lid, sgx) / f32(n);
    for (var j = lid; j < n; j += ROW_THREADS) {
        let xhat = (a[base + j] - mean) * r;
        out0[base + j] = r * (b[base + j] * c[j] - mean_g - xhat * mean_gx);
    }
}

// dgamma = Σ_rows dout · x̂, dbeta = Σ_rows dout: an invocation a column, down the rows in order
// (adjacent invocations read adjacent values of each row, and each sum is taken in the CPU's
// order). The rows are a batch, so a column's loop is short; a reduction across workgroups
// would pay only for far more rows than a batch holds.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn layer_norm_params_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let j = flat(lid, wid);
    if (j >= p.len) {
        return;
    }
    let n = p.cols;
    var dg = 0.0;
    var db = 0.0;
    for (var row = 0u; row < p.rows; row++) {
        let d = b[row * n + j];
        dg += d * (a[row * n + j] - c[2u * row]) * c[2u * row + 1u];
        db += d;
    }
    out0[j] = dg;
    out1[j] = db;
}
