// Optimizer updates, one invocation per parameter value, PyTorch semantics: of one tensor
// (`step`), or of a layer's weights and biases in one dispatch (`step_pair`: the invocations
// past the first tensor's values update the second's). The arithmetic is written once, in
// `updated`; `update0` and `update1` only read and write each tensor's values, and are two
// functions because WGSL cannot pass a storage array to a function.
//
// The dispatch may be two-dimensional when a tensor has more than 65,535 workgroups' worth of
// values (the per-dimension dispatch limit), so the flat index folds in workgroup_id.y. The rule
// codes (UPDATE_*) are generated from the Rust enum and put in front of this file.

struct Params {
    // Values updated: both tensors' for `step_pair`.
    len: u32,
    // UPDATE_SGD, UPDATE_MOMENTUM or UPDATE_ADAM.
    rule: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    // Values of the first tensor (`step_pair`); `len` for `step`.
    first_len: u32,
    lr: f32,
    // Momentum μ, or Adam's β1.
    beta1: f32,
    beta2: f32,
    eps: f32,
    // Adam's bias corrections 1 - β1^t and 1 - β2^t, computed on the host in f32.
    bias1: f32,
    bias2: f32,
    // AdamW's decoupled weight decay, 1 - lr * weight_decay, for the first tensor (the second,
    // a layer's biases, never decays); 1 for the other rules.
    shrink: f32,
    _pad2: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
// Invocations per workgroup, chosen per adapter as a pipeline constant.
override WORKGROUP: u32 = 256u;

// The first (or only) tensor: value, gradient, momentum's velocity or Adam's first moment,
// Adam's second moment.
@group(0) @binding(1) var<storage, read_write> param0: array<f32>;
@group(0) @binding(2) var<storage, read> grad0: array<f32>;
@group(0) @binding(3) var<storage, read_write> state1_0: array<f32>;
@group(0) @binding(4) var<storage, read_write> state2_0: array<f32>;
// The second tensor of `step_pair` (eight storage bindings: compiled only where the adapter
// allows that many).
@group(0) @binding(5) var<storage, read_write> param1: array<f32>;
@group(0) @binding(6) var<storage, read> grad1: array<f32>;
@group(0) @binding(7) var<storage, read_write> state1_1: array<f32>;
@group(0) @binding(8) var<storage, read_write> state2_1: array<f32>;

// A parameter's new value and state from its value `w`, gradient `g` and state `s1`, `s2`
// (zero where the rule has none), Adam's value first shrunk by `shrink` (AdamW; 1 for Adam):
// (value, state1, state2).
fn updated(w: f32, g: f32, s1: f32, s2: f32, shrink: f32) -> vec3<f32> {
    switch p.rule {
        case UPDATE_MOMENTUM: {
            let v = p.beta1 * s1 + g;
            return vec3<f32>(w - p.lr * v, v, s2);
        }
        case UPDATE_ADAM: {
            let m = p.beta1 * s1 + (1.0 - p.beta1) * g;
            let v = p.beta2 * s2 + (1.0 - p.beta2) * g * g;
            let m_hat = m / p.bias1;
            let v_hat = v / p.bias2;
            return vec3<f32>(w * shrink - p.lr * m_hat / (sqrt(v_hat) + p.eps), m, v);
        }
        default: {
            return vec3<f32>(w - p.lr * g, s1, s2);
        }
    }
}

fn flat_index(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// Value `i` of the first tensor.
fn update0(i: u32) {
    var s1 = 0.0;
    var s2 = 0.0;
    if (p.rule != UPDATE_SGD) {
        s1 = state1_0[i];
    }
    if (p.rule == UPDATE_ADAM) {
        s2 = state2_0[i];
    }
    let r = updated(param0[i], grad0[i], s1, s2, p.shrink);
    param0[i] = r.x;
    if (p.rule != UPDATE_SGD) {
        state1_0[i] = r.y;
    }
    if (p.rule == UPDATE_ADAM) {
        state2_0[i] = r.z;
    }
}

// Value `i` of the second tensor.
fn update1(i: u32) {
    var s1 = 0.0;
    var s2 = 0.0;
    if (p.rule != UPDATE_SGD) {
        s1 = state1_1[i];
    }
    if (p.rule == UPDATE_ADAM) {
        s2 = state2_1[i];
    }
    let r = updated(param1[i], grad1[i], s1, s2, 1.0);
    param1[i] = r.x;
    if (p.rule != UPDATE_SGD) {
        state1_1[i] = r.y;
    }
    if (p.rule == UPDATE_ADAM) {
        state2_1[i] = r.z;
    }
}

@compute @workgroup_size(WORKGROUP, 1, 1)
fn step(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = flat_index(lid, wid);
    if (i < p.len) {
        update0(i);
    }
}

@compute @workgroup_size(WORKGROUP, 1, 1)
fn step_pair(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = flat_index(lid, wid);
    if (i < p.first_len) {
        update0(i);
    } else if (i < p.len) {
        update1(i - p.first_len);
    }
}
