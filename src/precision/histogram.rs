//! Values binned by power of two: the log2 axis the precision panel draws the formats' ranges on.

use serde::Serialize;

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
    use super::{Log2Histogram, exponent_of};

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
}
