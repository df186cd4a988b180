//! What the measured points say: the spread of a point's runs, and the crossover where the GPU's
//! samples/s first reach the CPU's, interpolated on log scales between the two measured points
//! around it.

use serde::Serialize;

/// The interquartile range of sorted values (linear interpolation between order statistics).
pub fn iqr_of_sorted(v: &[f64]) -> f64 {
    let quantile = |q: f64| {
        if v.is_empty() {
            return f64::NAN;
        }
        let at = q * (v.len() - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
    };
    quantile(0.75) - quantile(0.25)
}

/// The crossover of `(value, CPU samples/s, GPU samples/s)` rows in any order; none without
/// rows.
pub fn crossover_of_rows(mut rows: Vec<(f64, f64, f64)>, software_gpu: bool) -> Option<Crossover> {
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let values: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let cpu: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let gpu: Vec<f64> = rows.iter().map(|r| r.2).collect();
    Some(crossover(&values, &cpu, &gpu, software_gpu))
}

/// Where the GPU's samples/s first reach the CPU's.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Crossover {
    /// Between two measured values, interpolated on log scales.
    At {
        /// The interpolated value of the parameter.
        value: f64,
        /// The measured values around it.
        between: [f64; 2],
    },
    /// The GPU was at least as fast from the first value measured.
    FromTheStart {
        /// The first value.
        value: f64,
    },
    /// The GPU did not reach the CPU in the range measured.
    NotReached {
        /// Why, in words (English; the window words it from `reason`).
        why: String,
        /// Why, for the window to word in its language.
        #[serde(skip)]
        reason: Shortfall,
    },
}

/// Why no crossover was found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shortfall {
    /// No value was measured on both devices.
    NothingToCompare,
    /// The GPU is a software adapter: it runs on the CPU's own cores.
    SoftwareGpu,
    /// The GPU stayed slower: its best share of the CPU's samples/s, and where.
    StayedSlower {
        /// The best GPU/CPU ratio, in percent.
        best_pct: f64,
        /// The value where it was reached.
        at: f64,
    },
}

impl std::fmt::Display for Crossover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Crossover::At { value, between } => write!(
                f,
                "the GPU overtakes the CPU at about {value:.3} (interpolated between the measured \
                 {} and {})",
                between[0], between[1]
            ),
            Crossover::FromTheStart { value } => write!(
                f,
                "the GPU is at least as fast as the CPU from the first value measured ({value})"
            ),
            Crossover::NotReached { why, .. } => write!(f, "no crossover in this range: {why}"),
        }
    }
}

/// The crossover of two devices' samples/s measured at the same `values` (ascending), or why
/// there is none. `software_gpu` names the usual reason on a machine without a real GPU.
pub fn crossover(values: &[f64], cpu: &[f64], gpu: &[f64], software_gpu: bool) -> Crossover {
    let ratios: Vec<(f64, f64)> = values
        .iter()
        .zip(cpu.iter().zip(gpu))
        .filter(|(v, (c, g))| **v > 0.0 && **c > 0.0 && **g > 0.0)
        .map(|(&v, (&c, &g))| (v, g / c))
        .collect();
    let Some(first) = ratios.iter().position(|&(_, r)| r >= 1.0) else {
        let best = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        let reason = match best {
            None => Shortfall::NothingToCompare,
            Some(_) if software_gpu => Shortfall::SoftwareGpu,
            Some(&(at, r)) => Shortfall::StayedSlower {
                best_pct: 100.0 * r,
                at,
            },
        };
        let why = match reason {
            Shortfall::NothingToCompare => "no value was measured on both devices".to_owned(),
            Shortfall::SoftwareGpu => "the GPU is a software adapter: it runs its kernels on the \
                                       CPU's own cores, so it cannot overtake them"
                .to_owned(),
            Shortfall::StayedSlower { best_pct, at } => format!(
                "the GPU stayed slower over the whole range (at best {best_pct:.0}% of the CPU's \
                 samples/s, at {at}); try larger values"
            ),
        };
        return Crossover::NotReached { why, reason };
    };
    if first == 0 {
        return Crossover::FromTheStart { value: ratios[0].0 };
    }
    let ((v0, r0), (v1, r1)) = (ratios[first - 1], ratios[first]);
    // log(ratio) is taken as linear in log(value) between the two points.
    let t = (0.0 - r0.ln()) / (r1.ln() - r0.ln());
    let value = (v0.ln() + t * (v1.ln() - v0.ln())).exp();
    Crossover::At {
        value,
        between: [v0, v1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crossover_is_interpolated_on_log_scales() {
        // The GPU's share doubles with every fourfold batch: 1/4 at 16, 1/2 at 64, 1 at 256.
        let values = [16.0, 64.0, 256.0, 1024.0];
        let cpu = [1000.0, 1000.0, 1000.0, 1000.0];
        let gpu = [250.0, 500.0, 1000.0, 2000.0];
        // Reached exactly at a measured value: that value.
        let Crossover::At { value, between } = crossover(&values, &cpu, &gpu, false) else {
            panic!("a crossover");
        };
        assert!((value - 256.0).abs() < 1e-9, "{value}");
        assert_eq!(between, [64.0, 256.0]);
        // Half-way in log ratio between 64 (½) and 256 (2): at 128.
        let gpu = [250.0, 500.0, 2000.0, 4000.0];
        let Crossover::At { value, between } = crossover(&values, &cpu, &gpu, false) else {
            panic!("a crossover");
        };
        assert!((value - 128.0).abs() < 1e-9, "{value}");
        assert_eq!(between, [64.0, 256.0]);
        assert_eq!(
            crossover(&values, &cpu, &[1500.0; 4], false),
            Crossover::FromTheStart { value: 16.0 }
        );
        let never = crossover(&values, &cpu, &[100.0, 200.0, 400.0, 800.0], false);
        assert!(
            never
                .to_string()
                .contains("at best 80% of the CPU's samples/s, at 1024"),
            "{never}"
        );
        let software = crossover(&values, &cpu, &[100.0; 4], true);
        assert!(
            software.to_string().contains("software adapter"),
            "{software}"
        );
    }
}
