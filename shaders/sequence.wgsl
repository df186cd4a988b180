// A sequence model's embedding (a gather forward, a scatter-add backward) and the residual
// connection's sums. The bindings are shared by the entry points, each using a prefix of them
// (the Rust side binds exactly those, in this order):
//   embedding                 a = ids,  out0 = out,        b = table, c = positions
//   embedding_table_grad      a = ids,  out0 = dtable,     b = dout
//   embedding_position_grad   a = dout, out0 = dpositions
//   add                       a = x,    out0 = out,        b = skip
//   add_into                  a = src,  out0 = dst
//   embedding_at              a = ids,  out0 = out,        b = table, c = positions

struct Params {
    // Invocations this pass covers.
    len: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    // Rows of the sequence tensors (the batch's positions).
    rows: u32,
    // Values a position (d).
    width: u32,
    // Positions a sequence (T).
    positions: u32,
    // Tokens in the vocabulary.
    vocab: u32,
    // Attention heads.
    heads: u32,
    // 1 / sqrt(d / heads).
    scale: f32,
    // The position a step of generation writes.
    position: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out0: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read> c: array<f32>;

override WORKGROUP: u32 = 256u;

fn flat(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// A token id as an index; one out of range reads token 0, as the CPU does (the data pipeline
// refuses such ids before they get here).
fn token(id: f32) -> u32 {
    let t = u32(max(id, 0.0));
    return select(0u, t, id >= 0.0 && t < p.vocab);
}

// An invocation a value of the output: row r, column j.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn embedding(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let d = p.width;
    let r = i / d;
    let j = i % d;
    out0[i] = b[token(a[r]) * d + j] + c[(r % p.positions) * d + j];
}

// An invocation a value of the table's gradient, token v and column j, summing the rows that
// hold v in their order (the CPU's). Each invocation reads every id, so the pass costs
// vocab · rows compares besides the sums: small beside the products for a character vocabulary,
// and deterministic, where atomics would sum in whatever order the rows arrive.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn embedding_table_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let d = p.width;
    let v = i / d;
    let j = i % d;
    var s = 0.0;
    for (var r = 0u; r < p.rows; r++) {
        if (token(a[r]) == v) {
            s += b[r * d + j];
        }
    }
    out0[i] = s;
}

// An invocation a value of the positions' gradient, position t and column j, summed over the
// samples in order.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn embedding_position_grad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let d = p.width;
    let t = i / d;
    let j = i % d;
    var s = 0.0;
    for (var r = t; r < p.rows; r += p.positions) {
        s += a[r * d + j];
    }
    out0[i] = s;
}

@compute @workgroup_size(WORKGROUP, 1, 1)
fn add(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    out0[i] = a[i] + b[i];
}

@compute @workgroup_size(WORKGROUP, 1, 1)
fn add_into(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    out0[i] = out0[i] + a[i];
}

// One position of each sequence, generating a token at a time: an invocation a value of the
// output, row r (a sequence) and column j, at the position `p.position` of every sequence.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn embedding_at(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let d = p.width;
    let r = i / d;
    let j = i % d;
    out0[i] = b[token(a[r]) * d + j] + c[p.position * d + j];
}
