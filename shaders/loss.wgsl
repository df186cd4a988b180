// Softmax cross-entropy with mean reduction, its gradient, and the running loss statistics.
//
// A single workgroup handles the whole batch: invocation i takes rows i, i + WORKGROUP, ...,
// writes their gradient and keeps a partial loss and correct count; then invocation 0 adds the
// partials into `stats`. The loss therefore stays on the GPU and is read back only when it is
// logged, instead of stalling the queue every step (PyTorch's `.item()`).

struct Params {
    batch: u32,
    classes: u32,
    // What the loss is multiplied by before backward (a loss weight, a loss scale): the
    // gradient is written already multiplied, so a 16-bit gradient is rounded once.
    grad_scale: f32,
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<f32>;
@group(0) @binding(3) var<storage, read_write> dlogits: array<f32>;
// [Σ loss, Σ correct, Σ rows], accumulated across steps until read.
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;

// Invocations in the one workgroup, at most 256 (the partial arrays' size), chosen per adapter.
override WORKGROUP: u32 = 256u;

var<workgroup> partial_loss: array<f32, 256>;
var<workgroup> partial_correct: array<f32, 256>;

@compute @workgroup_size(WORKGROUP, 1, 1)
fn softmax_cross_entropy(@builtin(local_invocation_id) lid: vec3<u32>) {
    let scale = p.grad_scale / f32(p.batch);
    var loss = 0.0;
    var correct = 0.0;
    for (var r = lid.x; r < p.batch; r += WORKGROUP) {
        let base = r * p.classes;
        let target_class = u32(targets[r]);
        // The first maximum wins ties, as on the CPU and in torch.argmax.
        var best = 0u;
        var max_logit = logits[base];
        for (var j = 1u; j < p.classes; j++) {
            let v = logits[base + j];
            if (v > max_logit) {
                best = j;
                max_logit = v;
            }
        }
        var sum = 0.0;
        for (var j = 0u; j < p.classes; j++) {
            sum += exp(logits[base + j] - max_logit);
        }
        var target_logit = max_logit;
        if (target_class < p.classes) {
            target_logit = logits[base + target_class];
        }
        loss += log(sum) - (target_logit - max_logit);
        if (best == target_class) {
            correct += 1.0;
        }
        for (var j = 0u; j < p.classes; j++) {
            let prob = exp(logits[base + j] - max_logit) / sum;
            let onehot = select(0.0, 1.0, j == target_class);
            dlogits[base + j] = (prob - onehot) * scale;
        }
    }
    partial_loss[lid.x] = loss;
    partial_correct[lid.x] = correct;
    workgroupBarrier();
    if (lid.x == 0u) {
        var total_loss = 0.0;
        var total_correct = 0.0;
        for (var i = 0u; i < WORKGROUP; i++) {
            total_loss += partial_loss[i];
            total_correct += partial_correct[i];
        }
        stats[0] += total_loss;
        stats[1] += total_correct;
        stats[2] += f32(p.batch);
    }
}

// Mean squared error over all elements (PyTorch's MSELoss) for regression, its gradient, and the
// running statistics [Σ_rows mean (p − y)², Σ_rows mean |p − y|, Σ rows]. Same single-workgroup
// shape as the cross-entropy above: `logits` holds the predictions, `dlogits` their gradient,
// and `p.classes` the outputs per row.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn mse(@builtin(local_invocation_id) lid: vec3<u32>) {
    let scale = 2.0 * p.grad_scale / f32(p.batch * p.classes);
    let per_row = 1.0 / f32(p.classes);
    var squared_sum = 0.0;
    var abs_sum = 0.0;
    for (var r = lid.x; r < p.batch; r += WORKGROUP) {
        var squared = 0.0;
        var abs_err = 0.0;
        for (var j = r * p.classes; j < (r + 1u) * p.classes; j++) {
            let e = logits[j] - targets[j];
            squared += e * e;
            abs_err += abs(e);
            dlogits[j] = e * scale;
        }
        squared_sum += squared * per_row;
        abs_sum += abs_err * per_row;
    }
    partial_loss[lid.x] = squared_sum;
    partial_correct[lid.x] = abs_sum;
    workgroupBarrier();
    if (lid.x == 0u) {
        var total_squared = 0.0;
        var total_abs = 0.0;
        for (var i = 0u; i < WORKGROUP; i++) {
            total_squared += partial_loss[i];
            total_abs += partial_correct[i];
        }
        stats[0] += total_squared;
        stats[1] += total_abs;
        stats[2] += f32(p.batch);
    }
}
