//! Reduced precision: the number formats, and rounding to them exactly as the hardware formats
//! store values. The CPU path rounds with the `half` crate; the GPU path with the integer
//! arithmetic of `shaders/precision.wgsl`, which gives the same bits (tests check a sweep of
//! values: subnormals, ties, the largest finite values, overflow, NaN).

use serde::{Deserialize, Serialize};

/// A 16-bit floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Half {
    /// IEEE binary16: 5 exponent bits, 10 mantissa bits; max 65504, min normal 6.10e-5.
    Fp16,
    /// bfloat16: f32's 8 exponent bits, 7 mantissa bits; the range of f32, less precision.
    Bf16,
}

impl Half {
    /// The code the shader reads.
    pub fn code(self) -> u32 {
        match self {
            Half::Fp16 => 1,
            Half::Bf16 => 2,
        }
    }

    /// `x` rounded to this format (nearest, ties to even) and widened back to f32.
    pub fn round(self, x: f32) -> f32 {
        match self {
            Half::Fp16 => half::f16::from_f32(x).to_f32(),
            Half::Bf16 => half::bf16::from_f32(x).to_f32(),
        }
    }

    /// Largest finite value.
    pub fn max(self) -> f32 {
        match self {
            Half::Fp16 => half::f16::MAX.to_f32(),
            Half::Bf16 => half::bf16::MAX.to_f32(),
        }
    }

    /// Smallest positive normal value.
    pub fn min_positive_normal(self) -> f32 {
        match self {
            Half::Fp16 => half::f16::MIN_POSITIVE.to_f32(),
            Half::Bf16 => half::bf16::MIN_POSITIVE.to_f32(),
        }
    }

    /// Smallest positive subnormal value.
    pub fn min_positive_subnormal(self) -> f32 {
        match self {
            Half::Fp16 => half::f16::MIN_POSITIVE_SUBNORMAL.to_f32(),
            Half::Bf16 => half::bf16::MIN_POSITIVE_SUBNORMAL.to_f32(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Half;

    #[test]
    fn the_ranges_are_the_formats_own() {
        assert_eq!(Half::Fp16.max(), 65504.0);
        assert!((Half::Fp16.min_positive_normal() - 6.10e-5).abs() < 1e-7);
        assert!((Half::Fp16.min_positive_subnormal() - 5.96e-8).abs() < 1e-10);
        assert!((Half::Bf16.max() - 3.39e38).abs() < 1e36);
        assert!((Half::Bf16.min_positive_normal() - 1.18e-38).abs() < 1e-40);
        assert!((Half::Bf16.min_positive_subnormal() - 9.18e-41).abs() < 1e-42);
        // Ties go to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
        assert_eq!(Half::Fp16.round(1.0 + 2f32.powi(-11)), 1.0);
        assert_eq!(Half::Fp16.round(65520.0), f32::INFINITY);
    }
}
