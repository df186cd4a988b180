//! A column's energy rows (the article's ninth section: judge by power too): joules a step,
//! samples per joule and the run's joules so far, each estimate said to be one.

use crate::energy::EnergySource;
use crate::i18n::{Lang, LeverKey};
use crate::train::StepEnergy;
use crate::units::format_joules;

/// `joules` as measured by `source` or estimated, in `lang`.
pub fn joules_text(lang: Lang, joules: f64, source: EnergySource) -> String {
    let joules = format_joules(joules);
    match source {
        EnergySource::Estimated => lang.fmt(LeverKey::EnergyEstimated, &[("joules", &joules)]),
        measured => lang.fmt(
            LeverKey::EnergyMeasured,
            &[
                ("joules", &joules),
                ("source", &measured.as_str().to_uppercase()),
            ],
        ),
    }
}

/// What a figure stands on, in `lang`: the counter, or the rated power of an estimate and
/// whether another CPU's stands in.
pub fn basis_text(lang: Lang, e: &StepEnergy) -> String {
    match (e.source, e.rated) {
        (EnergySource::Estimated, Some((watts, stand_in))) => {
            let mut text = lang.fmt(
                LeverKey::EnergyEstimatedTip,
                &[("watts", &format!("{watts:.1}"))],
            );
            if stand_in {
                text.push_str(lang.tr(LeverKey::EnergyStandIn));
            }
            text
        }
        (source, _) => lang.fmt(
            LeverKey::EnergyMeasuredTip,
            &[("source", &source.as_str().to_uppercase())],
        ),
    }
}

/// The rows of a metrics grid of two columns.
pub fn rows(ui: &mut egui::Ui, lang: Lang, e: &StepEnergy) {
    let basis = basis_text(lang, e);
    ui.label(lang.tr(LeverKey::EnergyPerStep))
        .on_hover_text(lang.tr(LeverKey::EnergyPerStepTip));
    ui.label(joules_text(lang, e.per_step_j, e.source))
        .on_hover_text(&basis);
    ui.end_row();
    ui.label(lang.tr(LeverKey::SamplesPerJoule))
        .on_hover_text(lang.tr(LeverKey::EnergyPerStepTip));
    ui.label(format!("{:.0}", e.samples_per_j))
        .on_hover_text(&basis);
    ui.end_row();
    ui.label(lang.tr(LeverKey::EnergySoFar));
    ui.label(joules_text(lang, e.total_j, e.source))
        .on_hover_text(&basis);
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::ui::testing::harness;

    fn energy(source: EnergySource) -> StepEnergy {
        StepEnergy {
            per_step_j: 0.0125,
            samples_per_j: 2560.0,
            total_j: 3.5,
            source,
            basis: String::new(),
            rated: (source == EnergySource::Estimated).then_some((21.2, true)),
        }
    }

    /// The rows in both languages: an estimate says so beside each figure, a counter names
    /// itself; what an estimate stands on says whether another CPU's power stands in.
    #[test]
    fn energy_rows_say_estimated_or_measured_in_both_languages() {
        for (lang, label, estimated, measured, stand_in) in [
            (
                Lang::En,
                "Energy a step",
                "12.50 mJ (estimated)",
                "12.50 mJ (measured, RAPL)",
                "a listed CPU's power per core stands in",
            ),
            (
                Lang::Zh,
                "每步能耗",
                "12.50 mJ（估算）",
                "12.50 mJ（实测，RAPL）",
                "用已列出 CPU 的每核功率代替",
            ),
        ] {
            for (source, figure) in [
                (EnergySource::Estimated, estimated),
                (EnergySource::Rapl, measured),
            ] {
                let e = energy(source);
                let h = harness(
                    move |ui, e: &mut StepEnergy| {
                        egui::Grid::new("energy").show(ui, |ui| rows(ui, lang, e));
                    },
                    e.clone(),
                );
                assert!(h.query_by_label(label).is_some(), "{lang:?}");
                assert!(h.query_by_label(figure).is_some(), "{lang:?} {figure}");
                assert!(h.query_by_label("2560").is_some(), "{lang:?}");
                let basis = basis_text(lang, &e);
                assert_eq!(
                    basis.contains(stand_in),
                    source == EnergySource::Estimated,
                    "{lang:?}: {basis}"
                );
            }
        }
    }
}
