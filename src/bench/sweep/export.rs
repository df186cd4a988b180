//! A sweep's points written out for other tools.

use super::measure::Point;
use super::setting::Parameter;

/// The points as CSV in the style of hyperfine's export: one row per device and value, the
/// swept setting as `parameter_<name>`, units in the column names, full precision, a step's
/// energy with its `energy_source` (`rapl`, `nvml` or `estimated`; empty where there is none),
/// and the `source` of each row: `measured` here (`sweep_sim::SimulatedSweep::csv_rows` adds
/// `simulated` ones).
pub fn to_csv(parameter: Parameter, points: &[Point]) -> String {
    use std::fmt::Write as _;
    let mut text = format!(
        "device,parameter_{},samples_per_s,step_time_median_ms,step_time_min_ms,\
         step_time_max_ms,step_time_iqr_pct,noisy,runs,steps_per_run,gflop_per_s,energy_j,\
         samples_per_j,energy_source,source\n",
        parameter.as_str()
    );
    for p in points {
        // Writing to a String cannot fail.
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},measured",
            p.device,
            p.value,
            p.samples_per_s,
            p.step_time_ms,
            p.step_time_min_ms,
            p.step_time_max_ms,
            p.iqr_pct,
            p.noisy,
            p.runs,
            p.steps_per_run,
            p.gflop_per_s,
            optional(p.energy_j),
            optional(p.samples_per_j),
            p.energy_source
                .map_or("", crate::energy::EnergySource::as_str),
        );
    }
    text
}

/// A figure, or an empty field.
fn optional(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| x.to_string())
}
