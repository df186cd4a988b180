//! What a format does to values: what it would lose of a tensor as it is now, and what rounding
//! into it did lose, counted by memory role where the rounding happened.

use serde::Serialize;

use super::format::Half;
use crate::memory::Role;

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

#[cfg(test)]
mod tests {
    use super::{RangeReport, RoundCount, RoundingCensus};
    use crate::memory::Role;
    use crate::precision::format::Half;

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
}
