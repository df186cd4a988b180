// Moving values between 16-bit storage and f32 working copies, with the integer conversions of
// `half.wgsl`. A 16-bit tensor packs two values in each 32-bit word, the lower-indexed value in
// the low half (the bytes of a little-endian array of u16, as the host stores them).

struct Params {
    len: u32,
    // 1: FP16, 2: BF16.
    format: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    _pad0: u32,
    _pad1: vec4<u32>,
    _pad2: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: Params;
override WORKGROUP: u32 = 256u;

@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

fn flat_index(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// f32 bits to the 16 bits of the format, rounded to nearest, ties to even.
fn narrow_bits(x: u32) -> u32 {
    if (p.format == 1u) {
        return f16_from_f32_bits(x);
    }
    return bf16_round_f32_bits(x) >> 16u;
}

// One invocation per value: dst[i] = value i of the packed `src`, as f32 bits (exact).
@compute @workgroup_size(WORKGROUP, 1, 1)
fn widen(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = flat_index(lid, wid);
    if (i >= p.len) {
        return;
    }
    let h = (src[i / 2u] >> ((i & 1u) * 16u)) & 0xffffu;
    if (p.format == 1u) {
        dst[i] = f32_bits_from_f16(h);
    } else {
        dst[i] = h << 16u;
    }
}

// One invocation per word, so that no two invocations write the same word: values 2w and
// 2w + 1 of the f32 `src`, rounded and packed into dst[w].
@compute @workgroup_size(WORKGROUP, 1, 1)
fn narrow(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let w = flat_index(lid, wid);
    let i = 2u * w;
    if (i >= p.len) {
        return;
    }
    var high = 0u;
    if (i + 1u < p.len) {
        high = narrow_bits(src[i + 1u]);
    }
    dst[w] = narrow_bits(src[i]) | (high << 16u);
}
