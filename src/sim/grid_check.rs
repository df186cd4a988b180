//! How right a calibrated profile was where it could be checked: a grid of training steps
//! predicted from it and measured on this machine, summed up, with when it was taken, so the
//! Simulator tab can say how far to trust the profile's predictions.

use serde::{Deserialize, Serialize};

use super::steadiness::Steadiness;

/// The summary of a grid check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridCheck {
    /// When it was taken (RFC 3339, UTC).
    pub taken: String,
    /// Configurations predicted and measured.
    pub configurations: usize,
    /// The median of |predicted / measured − 1|.
    pub median_abs_error: f64,
    /// The largest of predicted / measured and its inverse.
    pub worst_ratio: f64,
    /// Configurations off by more than twice either way.
    pub off_by_more_than_2x: usize,
    /// The machine's FMA peak before the check's steps and after them: a check measured
    /// while something else ran has errors that measure the load, not the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadiness: Option<Steadiness>,
}

impl GridCheck {
    /// The summary of `pairs`, each (predicted, measured) step time, taken at `taken` while
    /// the machine's speed went as `steadiness` says (its median error is NaN for none: a
    /// check that measured nothing is not recorded).
    pub fn of(pairs: &[(f64, f64)], taken: String, steadiness: Option<Steadiness>) -> Self {
        let ratio = |&(p, m): &(f64, f64)| {
            let q = p / m;
            q.max(1.0 / q)
        };
        let mut errors: Vec<f64> = pairs.iter().map(|(p, m)| (p / m - 1.0).abs()).collect();
        errors.sort_by(f64::total_cmp);
        Self {
            taken,
            configurations: pairs.len(),
            median_abs_error: super::curve_fit::median(&errors),
            worst_ratio: pairs.iter().map(ratio).fold(1.0, f64::max),
            off_by_more_than_2x: pairs.iter().filter(|p| ratio(p) > 2.0).count(),
            steadiness,
        }
    }

    /// The summary in `lang`, for the Simulator tab.
    pub fn said(&self, lang: crate::i18n::Lang) -> String {
        // The date and the minute are enough to tell one check from another.
        let taken: String = self.taken.replace('T', " ").chars().take(16).collect();
        let summary = lang.fmt(
            crate::i18n::CalKey::GridChecked,
            &[
                ("taken", &taken),
                ("n", &self.configurations),
                ("median", &format!("{:.0}%", self.median_abs_error * 100.0)),
                ("worst", &format!("{:.2}", self.worst_ratio)),
                ("off", &self.off_by_more_than_2x),
            ],
        );
        match self.steadiness.filter(|s| !s.steady()) {
            Some(moved) => format!("{summary} {}", moved.said_of_check(lang)),
            None => summary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_check_sums_up_its_errors_both_ways() {
        let pairs = [(1.0, 1.0), (1.1, 1.0), (0.9, 1.0), (3.0, 1.0), (1.0, 2.5)];
        let check = GridCheck::of(&pairs, "2026-12-07T18:55:12Z".into(), None);
        assert_eq!(check.configurations, 5);
        // |errors|: 0, 0.1, 0.1, 2, 0.6 → the median is 0.1.
        assert!((check.median_abs_error - 0.1).abs() < 1e-9, "{check:?}");
        assert!((check.worst_ratio - 3.0).abs() < 1e-9);
        assert_eq!(check.off_by_more_than_2x, 2, "3× over and 2.5× under");
        let said = check.said(crate::i18n::Lang::En);
        assert!(
            said.contains("2026-12-07 18:55") && said.contains("10%"),
            "{said}"
        );
        assert!(check.said(crate::i18n::Lang::Zh).contains("10%"));
    }

    /// A check measured while the machine's speed moved says so beside its errors; one on a
    /// steady machine does not.
    #[test]
    fn a_check_under_load_says_its_errors_measure_the_load() {
        let pairs = [(1.0, 1.0), (1.0, 1.5)];
        let taken = || "2026-12-07T18:55:12Z".to_string();
        let moved = Steadiness::from_repeats(&[100.0; 5], &[70.0; 5]);
        let loaded = GridCheck::of(&pairs, taken(), Some(moved));
        let said = loaded.said(crate::i18n::Lang::En);
        assert!(
            said.contains("moved during the check") && said.contains("70.0 after: -30%"),
            "{said}"
        );
        assert!(loaded.said(crate::i18n::Lang::Zh).contains("检验期间"));
        let steady = Steadiness::from_repeats(&[100.0; 5], &[98.0; 5]);
        let quiet = GridCheck::of(&pairs, taken(), Some(steady));
        assert!(!quiet.said(crate::i18n::Lang::En).contains("moved"));
        // Saved and read back with the profile, as the Simulator tab reads it.
        let text = toml::to_string(&loaded).expect("written");
        let back: GridCheck = toml::from_str(&text).expect("read");
        assert_eq!(back, loaded);
    }
}
