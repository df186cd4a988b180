// Conversions between f32 bits and FP16 / BF16 bits in integer arithmetic, bit for bit as the
// `half` crate does on the CPU (round to nearest, ties to even; overflow to infinity; NaN stays
// NaN). WGSL lets an implementation flush subnormal f32 values to zero and does not fix the
// rounding of `pack2x16float`, so neither a float load nor the built-in would give the same bits
// on every adapter; integer arithmetic does.
//
// The Rust side puts this file in front of `elementwise.wgsl` and `convert.wgsl` (WGSL has no
// include).

// f32 bits to FP16 bits, round to nearest even (the `half` crate's software conversion).
fn f16_from_f32_bits(x: u32) -> u32 {
    let sign = (x & 0x80000000u) >> 16u;
    let exp = x & 0x7f800000u;
    let man = x & 0x007fffffu;
    if (exp == 0x7f800000u) {
        // Infinity, or NaN with its top mantissa bits kept and made quiet.
        let nan_bit = select(0x0200u, 0u, man == 0u);
        return sign | 0x7c00u | nan_bit | (man >> 13u);
    }
    let half_exp = i32(exp >> 23u) - 127 + 15;
    if (half_exp >= 0x1f) {
        return sign | 0x7c00u;
    }
    if (half_exp <= 0) {
        // A subnormal FP16 (or zero): shift the mantissa, with its hidden bit, into place.
        if (14 - half_exp > 24) {
            return sign;
        }
        let m = man | 0x00800000u;
        let shift = u32(14 - half_exp);
        var half_man = m >> shift;
        let round_bit = 1u << (shift - 1u);
        if ((m & round_bit) != 0u && (m & (3u * round_bit - 1u)) != 0u) {
            half_man += 1u;
        }
        return sign | half_man;
    }
    let bits = sign | (u32(half_exp) << 10u) | (man >> 13u);
    let round_bit = 0x00001000u;
    if ((man & round_bit) != 0u && (man & (3u * round_bit - 1u)) != 0u) {
        return bits + 1u;
    }
    return bits;
}

// FP16 bits to f32 bits (exact: every FP16 value is an f32).
fn f32_bits_from_f16(h: u32) -> u32 {
    let sign = (h & 0x8000u) << 16u;
    let exp = (h >> 10u) & 0x1fu;
    let man = h & 0x03ffu;
    if (exp == 0x1fu) {
        return sign | 0x7f800000u | (man << 13u);
    }
    if (exp == 0u) {
        if (man == 0u) {
            return sign;
        }
        // man × 2^-24, normalised: the leading bit becomes the hidden bit.
        let lead = firstLeadingBit(man);
        let f32_exp = u32(i32(lead) - 24 + 127);
        let f32_man = (man << (23u - lead)) & 0x007fffffu;
        return sign | (f32_exp << 23u) | f32_man;
    }
    return sign | ((exp + 112u) << 23u) | (man << 13u);
}

// f32 bits rounded to BF16, as f32 bits (BF16 is the top half of an f32).
fn bf16_round_f32_bits(x: u32) -> u32 {
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        // NaN: keep the top bits, made quiet.
        return ((x >> 16u) | 0x0040u) << 16u;
    }
    let round_bit = 0x00008000u;
    var b = x >> 16u;
    if ((x & round_bit) != 0u && (x & (3u * round_bit - 1u)) != 0u) {
        b += 1u;
    }
    return b << 16u;
}
