//! Reduced precision: the number formats, and rounding to them exactly as the hardware formats
//! store values. The CPU path rounds with the `half` crate; the GPU path with the integer
//! arithmetic of `shaders/precision.wgsl`, which gives the same bits (tests check a sweep of
//! values: subnormals, ties, the largest finite values, overflow, NaN).

use crate::memory::Role;
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

/// How a model trains: the format of its values and whether the loss is scaled.
///
/// The reduced formats are stored for real in 2 bytes a value (see [`crate::backend::DType`]);
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
    /// gradients; the loss scaled by a [`GradScaler`].
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

/// Dynamic loss scaling with the semantics of PyTorch's `torch.cuda.amp.GradScaler`: the loss
/// gradient is multiplied by `scale` so that small gradients survive FP16; before the update the
/// gradients are divided by it again and checked; a non-finite one skips the step and halves the
/// scale, and 2000 good steps in a row double it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GradScaler {
    /// The current scale.
    pub scale: f32,
    /// Good steps since the scale last changed.
    pub growth_tracker: u32,
    /// Steps skipped so far because a gradient was not finite.
    pub skipped: u64,
    /// `(step, scale)` at each change of scale, for the loss-scale history.
    pub history: Vec<(u64, f32)>,
}

impl GradScaler {
    /// PyTorch's initial scale.
    pub const INITIAL_SCALE: f32 = 65536.0;
    /// Factor after a run of good steps.
    pub const GROWTH_FACTOR: f32 = 2.0;
    /// Factor after a step with a non-finite gradient.
    pub const BACKOFF_FACTOR: f32 = 0.5;
    /// Good steps before the scale grows.
    pub const GROWTH_INTERVAL: u32 = 2000;

    /// Reports whether step `step`'s unscaled gradients were all finite; returns whether the
    /// optimizer may apply them (`false`: skip the step), and updates the scale.
    pub fn update(&mut self, step: u64, all_finite: bool) -> bool {
        if all_finite {
            self.growth_tracker += 1;
            if self.growth_tracker == Self::GROWTH_INTERVAL {
                self.scale *= Self::GROWTH_FACTOR;
                self.growth_tracker = 0;
                self.history.push((step, self.scale));
            }
        } else {
            self.scale *= Self::BACKOFF_FACTOR;
            self.growth_tracker = 0;
            self.skipped += 1;
            self.history.push((step, self.scale));
        }
        all_finite
    }
}

impl Default for GradScaler {
    fn default() -> Self {
        Self {
            scale: Self::INITIAL_SCALE,
            growth_tracker: 0,
            skipped: 0,
            history: vec![(0, Self::INITIAL_SCALE)],
        }
    }
}

/// How many values of a tensor a format would lose: to zero, to its subnormal range (fewer
/// significant bits), or to infinity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RangeReport {
    /// Finite values looked at.
    pub values: u64,
    /// Non-zero values that round to zero.
    pub underflow: u64,
    /// Non-zero values that land among the format's subnormals (kept, with less precision).
    pub subnormal: u64,
    /// Finite values that round to infinity.
    pub overflow: u64,
}

impl RangeReport {
    /// What `format` would do to `values` (NaN and infinities are not counted).
    pub fn of(values: &[f32], format: Half) -> Self {
        let min_normal = format.min_positive_normal();
        let mut r = Self::default();
        for &x in values.iter().filter(|x| x.is_finite()) {
            r.values += 1;
            let y = format.round(x);
            if x != 0.0 && y == 0.0 {
                r.underflow += 1;
            } else if y.is_infinite() {
                r.overflow += 1;
            } else if x != 0.0 && y.abs() < min_normal {
                r.subnormal += 1;
            }
        }
        r
    }

    /// Share of the values lost to zero, 0 to 1.
    pub fn underflow_share(&self) -> f64 {
        self.underflow as f64 / self.values.max(1) as f64
    }

    /// Share of the values lost to infinity, 0 to 1.
    pub fn overflow_share(&self) -> f64 {
        self.overflow as f64 / self.values.max(1) as f64
    }
}

/// What rounding into a 16-bit format did to the values of one role, counted where the rounding
/// happened (in the kernels that store 16-bit results, and on the host for uploads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RoundCount {
    /// Values rounded.
    pub values: u64,
    /// Finite values other than zero among them (a zero, such as a ReLU's, loses nothing).
    pub nonzero: u64,
    /// Non-zero finite values that became zero.
    pub underflow: u64,
    /// Finite values that became infinite.
    pub overflow: u64,
}

impl RoundCount {
    /// Counts one value `x` that was rounded to `y` (both as f32).
    #[inline]
    pub fn count(&mut self, x: f32, y: f32) {
        self.values += 1;
        if x.is_finite() && x != 0.0 {
            self.nonzero += 1;
            self.underflow += u64::from(y == 0.0);
            self.overflow += u64::from(y.is_infinite());
        }
    }

    /// Adds another count.
    pub fn add(&mut self, other: RoundCount) {
        self.values += other.values;
        self.nonzero += other.nonzero;
        self.underflow += other.underflow;
        self.overflow += other.overflow;
    }

    /// Share of the non-zero values lost to zero, 0 to 1.
    pub fn underflow_share(&self) -> f64 {
        self.underflow as f64 / self.nonzero.max(1) as f64
    }

    /// Share of the non-zero values lost to infinity, 0 to 1.
    pub fn overflow_share(&self) -> f64 {
        self.overflow as f64 / self.nonzero.max(1) as f64
    }
}

/// [`RoundCount`]s by memory role, since they were last taken from a backend. In JSON, an
/// object from role name to count, of the roles that had values rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundingCensus {
    /// One count per [`Role`], by [`Role::index`].
    pub by_role: [RoundCount; Role::ALL.len()],
}

impl RoundingCensus {
    /// The count of one role.
    pub fn role(&self, role: Role) -> RoundCount {
        self.by_role[role.index()]
    }

    /// The count of one role, to add to.
    pub fn role_mut(&mut self, role: Role) -> &mut RoundCount {
        &mut self.by_role[role.index()]
    }

    /// Adds another census.
    pub fn add(&mut self, other: &RoundingCensus) {
        for (a, b) in self.by_role.iter_mut().zip(other.by_role) {
            a.add(b);
        }
    }

    /// The gradients a step computes: the parameters' gradients and the backward temporaries
    /// (the gradients with respect to each layer's output), which are where small values are
    /// lost first.
    pub fn gradients(&self) -> RoundCount {
        let mut c = self.role(Role::Gradients);
        c.add(self.role(Role::Workspace));
        c
    }

    /// Whether anything was rounded.
    pub fn is_empty(&self) -> bool {
        self.by_role.iter().all(|c| c.values == 0)
    }
}

impl Serialize for RoundingCensus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let rounded: Vec<Role> = Role::ALL
            .into_iter()
            .filter(|&r| self.role(r).values > 0)
            .collect();
        let mut map = serializer.serialize_map(Some(rounded.len()))?;
        for role in rounded {
            map.serialize_entry(role.as_str(), &self.role(role))?;
        }
        map.end()
    }
}

/// Counts of |values| by power of two: bin `e` holds `2^e <= |x| < 2^(e+1)`, the log2 axis of
/// the precision panel, on which the formats' ranges are drawn.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Log2Histogram {
    /// Exponent of the first bin.
    pub first_exponent: i32,
    /// Values per bin, from `first_exponent` up.
    pub counts: Vec<u64>,
    /// Values that are exactly zero.
    pub zeros: u64,
    /// NaN and infinite values.
    pub non_finite: u64,
}

impl Log2Histogram {
    /// The histogram of `values`, with bins from the smallest to the largest exponent present.
    pub fn of(values: &[f32]) -> Self {
        let mut h = Self::default();
        let exponents: Vec<i32> = values
            .iter()
            .filter_map(|&x| {
                if !x.is_finite() {
                    h.non_finite += 1;
                    None
                } else if x == 0.0 {
                    h.zeros += 1;
                    None
                } else {
                    Some(exponent_of(x))
                }
            })
            .collect();
        let (Some(&lo), Some(&hi)) = (exponents.iter().min(), exponents.iter().max()) else {
            return h;
        };
        h.first_exponent = lo;
        h.counts = vec![0; (hi - lo + 1) as usize];
        for e in exponents {
            h.counts[(e - lo) as usize] += 1;
        }
        h
    }
}

/// `floor(log2 |x|)` for a finite non-zero `x`, exact for subnormals too (from the bits).
fn exponent_of(x: f32) -> i32 {
    let bits = x.to_bits() & 0x7fff_ffff;
    let biased = (bits >> 23) as i32;
    if biased == 0 {
        // Subnormal: 0.mantissa × 2^-126, so the leading bit sets the exponent.
        let lead = 31 - (bits & 0x007f_ffff).leading_zeros() as i32;
        lead - 149
    } else {
        biased - 127
    }
}

#[cfg(test)]
mod tests {
    use super::{GradScaler, Half, Log2Histogram, RangeReport, exponent_of};

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

    #[test]
    fn the_range_report_counts_what_each_format_loses() {
        // 1e-8 is below FP16's smallest subnormal (5.96e-8): lost. 1e-6 is an FP16 subnormal.
        // 1e5 overflows FP16. BF16 keeps all three, at 8 bits of precision.
        let values = [1.0, 1e-8, 1e-6, 1e5, 0.0, f32::NAN];
        let fp16 = RangeReport::of(&values, Half::Fp16);
        assert_eq!(
            (fp16.values, fp16.underflow, fp16.subnormal, fp16.overflow),
            (5, 1, 1, 1)
        );
        assert!((fp16.underflow_share() - 0.2).abs() < 1e-12);
        let bf16 = RangeReport::of(&values, Half::Bf16);
        assert_eq!((bf16.underflow, bf16.subnormal, bf16.overflow), (0, 0, 0));
    }

    #[test]
    fn the_rounding_count_leaves_zeros_out_and_serialises_by_role() {
        use super::{RoundCount, RoundingCensus};
        use crate::memory::Role;
        let mut c = RoundCount::default();
        // A ReLU's zero loses nothing; 1e-8 becomes 0 in FP16; 1e5 becomes infinite; NaN is not
        // a finite value and counts only as rounded.
        for x in [0.0f32, 1e-8, 1e5, 1.0, f32::NAN] {
            c.count(x, Half::Fp16.round(x));
        }
        assert_eq!((c.values, c.nonzero, c.underflow, c.overflow), (5, 3, 1, 1));
        assert!((c.underflow_share() - 1.0 / 3.0).abs() < 1e-12);
        let mut census = RoundingCensus::default();
        census.role_mut(Role::Workspace).add(c);
        census.role_mut(Role::Gradients).add(c);
        assert_eq!(census.gradients().values, 10);
        let json = serde_json::to_value(census).expect("json");
        assert_eq!(json["workspace"]["underflow"], 1);
        assert!(
            json.get("parameters").is_none(),
            "roles with nothing rounded are left out"
        );
    }

    #[test]
    fn the_histogram_bins_by_power_of_two_subnormals_included() {
        assert_eq!(exponent_of(1.0), 0);
        assert_eq!(exponent_of(-3.0), 1);
        assert_eq!(exponent_of(0.75), -1);
        assert_eq!(exponent_of(f32::MIN_POSITIVE), -126);
        assert_eq!(exponent_of(f32::from_bits(1)), -149);
        let h = Log2Histogram::of(&[1.0, 1.5, 4.0, 0.0, f32::INFINITY, 0.25]);
        assert_eq!(h.first_exponent, -2);
        assert_eq!(h.counts, [1, 0, 2, 0, 1]);
        assert_eq!((h.zeros, h.non_finite), (1, 1));
    }

    #[test]
    fn the_scaler_backs_off_on_overflow_and_grows_after_2000_good_steps() {
        let mut s = GradScaler::default();
        assert_eq!(s.scale, 65536.0);
        // An overflow: the step is skipped and the scale halves.
        assert!(!s.update(1, false));
        assert_eq!((s.scale, s.skipped, s.growth_tracker), (32768.0, 1, 0));
        // 1999 good steps change nothing; the 2000th doubles the scale.
        for step in 2..=2000 {
            assert!(s.update(step, true));
        }
        assert_eq!(s.scale, 32768.0);
        assert!(s.update(2001, true));
        assert_eq!((s.scale, s.growth_tracker), (65536.0, 0));
        assert_eq!(s.history, [(0, 65536.0), (1, 32768.0), (2001, 65536.0)]);
    }
}
