// Causal multi-head self-attention and its gradient. `qkv` holds each position's query, key
// and value side by side ([rows, 3d]); head h reads columns h·dh .. (h+1)·dh of each. The
// probabilities P ([batch · heads · T, T], f32) are kept for backward, and backward overwrites
// them with the scores' gradient dS once dV has read them.
//
// Bindings, each entry point using a prefix:
//   attention               a = qkv, out0 = out,  out1 = probs
//   attention_values_grad   a = qkv, out0 = dqkv, out1 = probs, b = dout
//   attention_scores_grad   a = qkv, out0 = dqkv, out1 = probs, b = dout
//   attention_queries_grad  a = qkv, out0 = dqkv, out1 = dS
//   attention_keys_grad     a = qkv, out0 = dqkv, out1 = dS
//   fill_cache              a = qkv, out0 = cache
//   attention_step          a = qkv, out0 = out,  out1 = cache
//
// Why these kernels: an invocation a query row (forward, the scores' gradient) or a value of a
// gradient, each summing in the order the CPU sums, so the two devices agree to rounding; the
// T×T probabilities are materialised because they are the teaching point (the memory view shows
// them grow with T²) and backward reads them. Not yet measured on a real GPU against a fused
// kernel in workgroup memory (FlashAttention's way): on lavapipe the products dominate a step.

struct Params {
    len: u32,
    groups_x: u32,
    rows: u32,
    width: u32,
    positions: u32,
    vocab: u32,
    heads: u32,
    scale: f32,
    position: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out0: array<f32>;
@group(0) @binding(3) var<storage, read_write> out1: array<f32>;
@group(0) @binding(4) var<storage, read> b: array<f32>;

override WORKGROUP: u32 = 256u;

fn flat(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// Where a head's slice of a position's query (part 0), key (1) or value (2) starts in `qkv`.
fn at(sample: u32, pos: u32, part: u32, head: u32) -> u32 {
    let d = p.width;
    return (sample * p.positions + pos) * 3u * d + part * d + head * (d / p.heads);
}

// An invocation a query: its row of P (the scores, their softmax), then its output row.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn attention(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = flat(lid, wid);
    if (r >= p.len) {
        return;
    }
    let t_len = p.positions;
    let dh = p.width / p.heads;
    let i = r % t_len;
    let h = (r / t_len) % p.heads;
    let n = r / (t_len * p.heads);
    let q = at(n, i, 0u, h);
    let row = r * t_len;
    var m = -3.402823e38;
    for (var j = 0u; j <= i; j++) {
        let k = at(n, j, 1u, h);
        var s = 0.0;
        for (var x = 0u; x < dh; x++) {
            s += a[q + x] * a[k + x];
        }
        s *= p.scale;
        out1[row + j] = s;
        m = max(m, s);
    }
    var sum = 0.0;
    for (var j = 0u; j <= i; j++) {
        let e = exp(out1[row + j] - m);
        out1[row + j] = e;
        sum += e;
    }
    for (var j = 0u; j <= i; j++) {
        out1[row + j] = out1[row + j] / sum;
    }
    for (var j = i + 1u; j < t_len; j++) {
        out1[row + j] = 0.0;
    }
    let o = (n * t_len + i) * p.width + h * dh;
    for (var x = 0u; x < dh; x++) {
        var acc = 0.0;
        for (var j = 0u; j <= i; j++) {
            acc += out1[row + j] * a[at(n, j, 2u, h) + x];
        }
        out0[o + x] = acc;
    }
}

// dV[j] = Σ_{i ≥ j} P[i, j] dO[i]: an invocation a value of dV.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn attention_values_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = flat(lid, wid);
    if (r >= p.len) {
        return;
    }
    let t_len = p.positions;
    let dh = p.width / p.heads;
    let x = r % dh;
    let j = (r / dh) % t_len;
    let h = (r / (dh * t_len)) % p.heads;
    let n = r / (dh * t_len * p.heads);
    let base = (n * p.heads + h) * t_len;
    // dV reads no query or key, but binds `a` with its neighbours (the bindings are a prefix):
    // a phony use keeps it in the layout.
    _ = arrayLength(&a);
    var acc = 0.0;
    for (var i = j; i < t_len; i++) {
        acc += out1[(base + i) * t_len + j] * b[(n * t_len + i) * p.width + h * dh + x];
    }
    out0[at(n, j, 2u, h) + x] = acc;
}

// A query's row of dS = P ⊙ (dP − Σ_j P dP) · scale, dP[i, j] = dO[i] · V[j], written over P.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn attention_scores_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = flat(lid, wid);
    if (r >= p.len) {
        return;
    }
    let t_len = p.positions;
    let dh = p.width / p.heads;
    let i = r % t_len;
    let h = (r / t_len) % p.heads;
    let n = r / (t_len * p.heads);
    let row = r * t_len;
    let o = (n * t_len + i) * p.width + h * dh;
    // Writes dS over P, not dqkv, which it binds with its neighbours: a phony use keeps it.
    _ = arrayLength(&out0);
    var dot = 0.0;
    for (var j = 0u; j <= i; j++) {
        let v = at(n, j, 2u, h);
        var g = 0.0;
        for (var x = 0u; x < dh; x++) {
            g += b[o + x] * a[v + x];
        }
        dot += out1[row + j] * g;
    }
    for (var j = 0u; j <= i; j++) {
        let v = at(n, j, 2u, h);
        var g = 0.0;
        for (var x = 0u; x < dh; x++) {
            g += b[o + x] * a[v + x];
        }
        out1[row + j] = out1[row + j] * (g - dot) * p.scale;
    }
}

// dQ[i] = Σ_{j ≤ i} dS[i, j] K[j]: an invocation a value of dQ.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn attention_queries_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = flat(lid, wid);
    if (r >= p.len) {
        return;
    }
    let t_len = p.positions;
    let dh = p.width / p.heads;
    let x = r % dh;
    let i = (r / dh) % t_len;
    let h = (r / (dh * t_len)) % p.heads;
    let n = r / (dh * t_len * p.heads);
    let row = ((n * p.heads + h) * t_len + i) * t_len;
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) {
        acc += out1[row + j] * a[at(n, j, 1u, h) + x];
    }
    out0[at(n, i, 0u, h) + x] = acc;
}

// dK[j] = Σ_{i ≥ j} dS[i, j] Q[i]: an invocation a value of dK.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn attention_keys_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = flat(lid, wid);
    if (r >= p.len) {
        return;
    }
    let t_len = p.positions;
    let dh = p.width / p.heads;
    let x = r % dh;
    let j = (r / dh) % t_len;
    let h = (r / (dh * t_len)) % p.heads;
    let n = r / (dh * t_len * p.heads);
    let base = (n * p.heads + h) * t_len;
    var acc = 0.0;
    for (var i = j; i < t_len; i++) {
        acc += out1[(base + i) * t_len + j] * a[at(n, i, 0u, h) + x];
    }
    out0[at(n, j, 1u, h) + x] = acc;
}

// A key-value cache from a whole window: an invocation a value of the cache ([rows, 2d]), the
// key and value columns of its row of qkv.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn fill_cache(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let d = p.width;
    let r = i / (2u * d);
    let c = i % (2u * d);
    out0[i] = a[r * 3u * d + d + c];
}

// One new position of each sequence against its key-value cache (out1, [batch · T, 2d]): an
// invocation a sequence and head. It writes its head's slice of the new key and value into the
// cache's row `p.position` (no other invocation reads that slice), then runs the softmax over
// the cached rows 0..=position in three sweeps (the largest score, the sum, the weighted
// values), recomputing each score rather than keeping a row of T: a step reads the cache once a
// sweep, and one sequence and head an invocation is what a few rows of work can fill. Chosen as
// the plain way, not measured against a split over the keys (FlashDecoding's way), which pays
// once the cache is long and the batch small.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn attention_step(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = flat(lid, wid);
    if (r >= p.len) {
        return;
    }
    let d = p.width;
    let dh = d / p.heads;
    let h = r % p.heads;
    let n = r / p.heads;
    let q = n * 3u * d + h * dh;
    let first = n * p.positions * 2u * d + h * dh;
    let new_row = first + p.position * 2u * d;
    for (var x = 0u; x < dh; x++) {
        out1[new_row + x] = a[q + d + x];
        out1[new_row + d + x] = a[q + 2u * d + x];
    }
    var m = -3.402823e38;
    for (var j = 0u; j <= p.position; j++) {
        let k = first + j * 2u * d;
        var s = 0.0;
        for (var x = 0u; x < dh; x++) {
            s += a[q + x] * out1[k + x];
        }
        m = max(m, s * p.scale);
    }
    var sum = 0.0;
    for (var j = 0u; j <= p.position; j++) {
        let k = first + j * 2u * d;
        var s = 0.0;
        for (var x = 0u; x < dh; x++) {
            s += a[q + x] * out1[k + x];
        }
        sum += exp(s * p.scale - m);
    }
    let o = n * d + h * dh;
    for (var x = 0u; x < dh; x++) {
        out0[o + x] = 0.0;
    }
    for (var j = 0u; j <= p.position; j++) {
        let k = first + j * 2u * d;
        var s = 0.0;
        for (var x = 0u; x < dh; x++) {
            s += a[q + x] * out1[k + x];
        }
        let w = exp(s * p.scale - m) / sum;
        for (var x = 0u; x < dh; x++) {
            out0[o + x] += w * out1[k + d + x];
        }
    }
}
