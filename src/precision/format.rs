//! The number formats: the 16-bit formats a value can be rounded to, how a tensor's values are
//! stored, and the precision modes a model trains in.

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

/// How a tensor's values are stored.
///
/// Every kernel computes in f32 (what PyTorch calls the "opmath" type of FP16 and BF16 tensors):
/// an op widens its 16-bit operands into f32 working copies, runs, and rounds its result back
/// into 16 bits (nearest, ties to even). The product of two 16-bit values is exact in f32, so a
/// matrix product computed this way is a 16-bit product with f32 accumulation, as on tensor
/// cores; what the 16-bit storage saves is real memory.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 4 bytes a value.
    #[default]
    F32,
    /// IEEE binary16, 2 bytes a value.
    F16,
    /// bfloat16, 2 bytes a value.
    Bf16,
}

impl DType {
    /// Bytes one value takes.
    pub fn bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
        }
    }

    /// The 16-bit format, if it is one.
    pub fn half(self) -> Option<Half> {
        match self {
            DType::F32 => None,
            DType::F16 => Some(Half::Fp16),
            DType::Bf16 => Some(Half::Bf16),
        }
    }

    /// The storage type of a 16-bit format, or F32.
    pub fn of(format: Option<Half>) -> Self {
        match format {
            None => DType::F32,
            Some(Half::Fp16) => DType::F16,
            Some(Half::Bf16) => DType::Bf16,
        }
    }

    /// Lower-case name, as in PyTorch's `torch.float16`.
    pub fn as_str(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F16 => "float16",
            DType::Bf16 => "bfloat16",
        }
    }

    /// The bits `format` stores for `x`, rounded to nearest, ties to even (the `half` crate's
    /// conversion, which the GPU's integer code matches bit for bit).
    pub fn narrow(format: Half, x: f32) -> u16 {
        match format {
            Half::Fp16 => half::f16::from_f32(x).to_bits(),
            Half::Bf16 => half::bf16::from_f32(x).to_bits(),
        }
    }

    /// The f32 value of 16 stored bits (exact).
    pub fn widen(format: Half, bits: u16) -> f32 {
        match format {
            Half::Fp16 => half::f16::from_bits(bits).to_f32(),
            Half::Bf16 => half::bf16::from_bits(bits).to_f32(),
        }
    }
}

/// How a model trains: the format of its values and whether the loss is scaled.
///
/// The reduced formats are stored for real in 2 bytes a value (see [`DType`]);
/// kernels widen them to f32, compute, and round their results back (nearest, ties to even), as
/// PyTorch's kernels do with FP16 tensors. The numbers are those of the format and the memory is
/// halved; there is no speed-up, since no kernel here uses 16-bit arithmetic units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Everything in f32.
    #[default]
    Fp32,
    /// Parameters, activations, gradients and optimizer state in FP16; sums in f32.
    Fp16,
    /// The same in BF16.
    Bf16,
    /// FP32 master weights and optimizer; FP16 copies of the weights, FP16 activations and
    /// gradients; the loss scaled by a [`GradScaler`](super::GradScaler).
    Mixed,
}

impl Precision {
    /// Every mode, in menu order.
    pub const ALL: [Precision; 4] = [
        Precision::Fp32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Mixed,
    ];

    /// The 16-bit format values are rounded to, if any.
    pub fn format(self) -> Option<Half> {
        match self {
            Precision::Fp32 => None,
            Precision::Fp16 | Precision::Mixed => Some(Half::Fp16),
            Precision::Bf16 => Some(Half::Bf16),
        }
    }

    /// Lower-case name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Mixed => "mixed",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
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
