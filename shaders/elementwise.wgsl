// Element-wise passes over one tensor, in place: rounding f32 values to FP16 or BF16 and back
// with the integer conversions of `half.wgsl`, scaling them (loss scaling), or counting the ones
// that are not finite. The MODE_* codes are generated from the Rust enum and put in front.

struct Params {
    len: u32,
    // MODE_ROUND_FP16, MODE_ROUND_BF16, MODE_SCALE (multiply by `factor`), or
    // MODE_COUNT_NON_FINITE (count the values that are not finite into census[slot]:
    // GradScaler's check, read back as one number).
    mode: u32,
    // Workgroups along x, to fold a 2-D dispatch back into one index.
    groups_x: u32,
    // The factor of MODE_SCALE (loss scaling uses powers of two, which multiply exactly).
    factor: f32,
    // Where rounding counts what it loses, as in `convert.wgsl` (the tensor's role).
    slot: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
override WORKGROUP: u32 = 256u;

// The tensor's values as their bits.
@group(0) @binding(1) var<storage, read_write> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> census: array<atomic<u32>>;

// Rounds in place (what the rounding loses to zero or infinity is counted into the census),
// scales, or counts the values that are not finite.
@compute @workgroup_size(WORKGROUP, 1, 1)
fn elementwise(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = (wid.y * p.groups_x + wid.x) * WORKGROUP + lid.x;
    if (i >= p.len) {
        return;
    }
    let x = values[i];
    switch p.mode {
        case MODE_COUNT_NON_FINITE: {
            if ((x & 0x7f800000u) == 0x7f800000u) {
                atomicAdd(&census[p.slot], 1u);
            }
            return;
        }
        case MODE_SCALE: {
            values[i] = bitcast<u32>(bitcast<f32>(x) * p.factor);
            return;
        }
        default: {}
    }
    var y = bf16_round_f32_bits(x);
    if (p.mode == MODE_ROUND_FP16) {
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
