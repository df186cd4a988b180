// Moving values between 16-bit storage and f32 working copies, with the integer conversions of
// `half.wgsl`. A 16-bit tensor packs two values in each 32-bit word, the lower-indexed value in
// the low half (the bytes of a little-endian array of u16, as the host stores them).

struct Params {
    len: u32,
    // FORMAT_FP16 or FORMAT_BF16 (generated from the Rust enum and put in front of this file).
    format: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    // Where `narrow` counts (the tensor's role): census[3 * slot] non-zero finite values,
    // census[3 * slot + 1] those that became zero, census[3 * slot + 2] those that became
    // infinite.
    slot: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
override WORKGROUP: u32 = 256u;

@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read_write> census: array<atomic<u32>>;

// This workgroup's losses, added to the census once per workgroup rather than once per value.
var<workgroup> lost: array<atomic<u32>, 3>;

fn flat_index(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
}

// f32 bits to the 16 bits of the format, rounded to nearest, ties to even.
fn narrow_bits(x: u32) -> u32 {
    if (p.format == FORMAT_FP16) {
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
    if (p.format == FORMAT_FP16) {
        dst[i] = f32_bits_from_f16(h);
    } else {
        dst[i] = h << 16u;
    }
}

// Whether the f32 bits `x` are a finite value other than zero.
fn nonzero_finite(x: u32) -> u32 {
    return select(0u, 1u, (x & 0x7fffffffu) != 0u && (x & 0x7f800000u) != 0x7f800000u);
}

// Whether rounding the f32 bits `x` to the 16 bits `h` lost a value to zero or to infinity.
fn lost_to_zero(x: u32, h: u32) -> u32 {
    return select(0u, nonzero_finite(x), (h & 0x7fffu) == 0u);
}

fn lost_to_infinity(x: u32, h: u32) -> u32 {
    let inf = select(0x7f80u, 0x7c00u, p.format == FORMAT_FP16);
    return select(0u, 1u, (x & 0x7f800000u) != 0x7f800000u && (h & 0x7fffu) == inf);
}

// One invocation per word, so that no two invocations write the same word: values 2w and
// 2w + 1 of the f32 `src`, rounded and packed into dst[w]. What the rounding loses is counted
// into the census. No invocation returns early: the barriers need all of them.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn narrow(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (lid.x == 0u) {
        atomicStore(&lost[0], 0u);
        atomicStore(&lost[1], 0u);
        atomicStore(&lost[2], 0u);
    }
    workgroupBarrier();
    let w = flat_index(lid, wid);
    let i = 2u * w;
    if (i < p.len) {
        let low_x = src[i];
        let low = narrow_bits(low_x);
        var nonzero = nonzero_finite(low_x);
        var zero = lost_to_zero(low_x, low);
        var inf = lost_to_infinity(low_x, low);
        var high = 0u;
        if (i + 1u < p.len) {
            let high_x = src[i + 1u];
            high = narrow_bits(high_x);
            nonzero += nonzero_finite(high_x);
            zero += lost_to_zero(high_x, high);
            inf += lost_to_infinity(high_x, high);
        }
        dst[w] = low | (high << 16u);
        if (nonzero > 0u) {
            atomicAdd(&lost[0], nonzero);
        }
        if (zero > 0u) {
            atomicAdd(&lost[1], zero);
        }
        if (inf > 0u) {
            atomicAdd(&lost[2], inf);
        }
    }
    workgroupBarrier();
    if (lid.x == 0u) {
        for (var k = 0u; k < 3u; k++) {
            let n = atomicLoad(&lost[k]);
            if (n > 0u) {
                atomicAdd(&census[3u * p.slot + k], n);
            }
        }
    }
}
