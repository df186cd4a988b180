// 2×2 max pooling and its gradient over channels-last images (a pixel's channels side by side),
// one invocation per output value. (A convolution is a product: `matmul_read.wgsl`.)

struct Params {
    // Values this pass writes.
    len: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    height: u32,
    width: u32,
    channels: u32,
    _pad1: u32,
    // ACT_*: the activation whose derivative the backward passes apply.
    act: u32,
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
// The backward pass's second input: the pooled gradient.
@group(0) @binding(3) var<storage, read> aux: array<f32>;

override WORKGROUP: u32 = 256u;

fn flat(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// The offset, within its image, of the first largest value of pooled pixel q's window in
// channel ch, scanning (0,0), (0,1), (1,0), (1,1) as the CPU does.
fn window_argmax(base: u32, q: u32, ch: u32) -> u32 {
    let out_width = p.width / 2u;
    let oy = q / out_width;
    let ox = q % out_width;
    var best = ((2u * oy) * p.width + 2u * ox) * p.channels + ch;
    for (var k = 1u; k < 4u; k++) {
        let at = ((2u * oy + k / 2u) * p.width + 2u * ox + k % 2u) * p.channels + ch;
        if (src[base + at] > src[base + best]) {
            best = at;
        }
    }
    return best;
}

// src: images; dst: the pooled images.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn max_pool(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let c = p.channels;
    let pooled = (p.height / 2u) * (p.width / 2u);
    let image = i / (pooled * c);
    let q = (i / c) % pooled;
    let base = image * p.height * p.width * c;
    dst[i] = src[base + window_argmax(base, q, i % c)];
}

// src: the pooling's input, also the activations; aux: the pooled gradient; dst: the input's
// gradient.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn max_pool_backward(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = flat(lid, wid);
    if (i >= p.len) {
        return;
    }
    let c = p.channels;
    let image_len = p.height * p.width * c;
    let image = i / image_len;
    let pixel = (i % image_len) / c;
    let ch = i % c;
    let y = pixel / p.width;
    let x = pixel % p.width;
    let out_height = p.height / 2u;
    let out_width = p.width / 2u;
    var g = 0.0;
    if (y / 2u < out_height && x / 2u < out_width) {
        let q = (y / 2u) * out_width + x / 2u;
        let base = image * image_len;
        if (base + window_argmax(base, q, ch) == i) {
            let d = aux[(image * out_height * out_width + q) * c + ch];
            g = d * activation_grad(src[i], p.act);
        }
    }
    dst[i] = g;
}
