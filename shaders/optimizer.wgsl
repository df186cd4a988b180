// Optimizer updates, one invocation per parameter, PyTorch semantics.
//
// The dispatch may be two-dimensional when a tensor has more than 65,535 workgroups' worth of
// values (the per-dimension dispatch limit), so the flat index folds in workgroup_id.y. The rule
// codes (UPDATE_*) are generated from the Rust enum and put in front of this file.

struct Params {
    len: u32,
    // UPDATE_SGD, UPDATE_MOMENTUM or UPDATE_ADAM.
    rule: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    _pad0: u32,
    lr: f32,
    // Momentum μ, or Adam's β1.
    beta1: f32,
    beta2: f32,
    eps: f32,
    // Adam's bias corrections 1 - β1^t and 1 - β2^t, computed on the host in f32.
    bias1: f32,
    bias2: f32,
    _pad1: f32,
    _pad2: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
// Invocations per workgroup, chosen per adapter as a pipeline constant.
override WORKGROUP: u32 = 256u;

@group(0) @binding(1) var<storage, read_write> param: array<f32>;
@group(0) @binding(2) var<storage, read> grad: array<f32>;
// Momentum's velocity, or Adam's first moment.
@group(0) @binding(3) var<storage, read_write> state1: array<f32>;
// Adam's second moment.
@group(0) @binding(4) var<storage, read_write> state2: array<f32>;

@compute @workgroup_size(WORKGROUP, 1, 1)
fn step(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
    if (i >= p.len) {
        return;
    }
    let g = grad[i];
    switch p.rule {
        case UPDATE_MOMENTUM: {
            let v = p.beta1 * state1[i] + g;
            state1[i] = v;
            param[i] -= p.lr * v;
        }
        case UPDATE_ADAM: {
            let m = p.beta1 * state1[i] + (1.0 - p.beta1) * g;
            let v = p.beta2 * state2[i] + (1.0 - p.beta2) * g * g;
            state1[i] = m;
            state2[i] = v;
            let m_hat = m / p.bias1;
            let v_hat = v / p.bias2;
            param[i] -= p.lr * m_hat / (sqrt(v_hat) + p.eps);
        }
        default: {
            param[i] -= p.lr * g;
        }
    }
}
