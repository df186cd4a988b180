// Rounding f32 values to FP16 or BF16 and back, in place, with the integer conversions of
// `half.wgsl`; or scaling them (loss scaling).

struct Params {
    len: u32,
    // 1: round to FP16, 2: round to BF16, 3: multiply by `factor`, 4: count the values that are
    // not finite into census[slot] (GradScaler's check, read back as one number).
    format: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    // The factor of mode 3 (loss scaling uses powers of two, which multiply exactly).
    factor: f32,
    // Where rounding counts what it loses, as in `convert.wgsl` (the tensor's role).
    slot: u32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
    _pad4: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: Params;
override WORKGROUP: u32 = 256u;

// The tensor's values as their bits.
@group(0) @binding(1) var<storage, read_write> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> census: array<atomic<u32>>;

// Rounds in place (modes 1, 2; what the rounding loses to zero or infinity is counted into the
// census), scales (mode 3), or counts the values that are not finite (mode 4).
@compute @workgroup_size(WORKGROUP, 1, 1)
fn round_to(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
    if (i >= p.len) {
        return;
    }
    let x = values[i];
    if (p.format == 4u) {
        if ((x & 0x7f800000u) == 0x7f800000u) {
            atomicAdd(&census[p.slot], 1u);
        }
        return;
    }
    if (p.format == 3u) {
        values[i] = bitcast<u32>(bitcast<f32>(x) * p.factor);
        return;
    }
    var y = bf16_round_f32_bits(x);
    if (p.format == 1u) {
        y = f32_bits_from_f16(f16_from_f32_bits(x));
    }
    values[i] = y;
    let finite = (x & 0x7f800000u) != 0x7f800000u;
    if (finite && (x & 0x7fffffffu) != 0u) {
        atomicAdd(&census[3u * p.slot], 1u);
        if ((y & 0x7fffffffu) == 0u) {
            atomicAdd(&census[3u * p.slot + 1u], 1u);
        } else if ((y & 0x7fffffffu) == 0x7f800000u) {
            atomicAdd(&census[3u * p.slot + 2u], 1u);
        }
    }
}
