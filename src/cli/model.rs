//! `batchscope model`: a model's layers as the data set shapes them, each with its output shape
//! and parameters, then the parameters, the FLOPs a sample and the memory estimate at the batch
//! size (a Keras-style summary; nothing is trained).

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::Failure;
use super::output::Out;
use super::run::parse_run;
use crate::i18n::Lang;
use crate::units::{format_bytes, grouped};

#[derive(Args, Debug)]
pub(super) struct ModelArgs {
    #[command(flatten)]
    pub run: RunArgs,
}

/// One layer's line.
#[derive(Serialize)]
struct LayerLine {
    name: String,
    kind: String,
    shape: String,
    values: usize,
    parameters: usize,
}

/// The summary as JSON.
#[derive(Serialize)]
struct Summary {
    model: String,
    layers: Vec<LayerLine>,
    parameters: usize,
    forward_flops_per_sample: u64,
    batch: usize,
    /// Estimated bytes by role (every figure estimated, not measured).
    estimated_bytes: Vec<(&'static str, u64)>,
    estimated_total_bytes: u64,
}

pub(super) fn run(out: &mut Out, args: &ModelArgs) -> Result<(), Failure> {
    let (session, _) = parse_run(&args.run)?;
    let config = &session.config;
    let spec = config.model_spec(&session.data);
    let layers: Vec<LayerLine> = spec
        .footprints()
        .into_iter()
        .map(|f| LayerLine {
            kind: f.kind_label(),
            name: f.name,
            shape: f.shape.to_string(),
            values: f.shape.values(),
            parameters: f.params,
        })
        .collect();
    let e = config.estimate(&session.data);
    let summary = Summary {
        model: spec.describe(),
        layers,
        parameters: spec.parameter_count(),
        forward_flops_per_sample: 2 * spec.forward_macs_per_sample() as u64,
        batch: config.batch,
        estimated_bytes: e.lines.iter().map(|l| (l.role.as_str(), l.bytes)).collect(),
        estimated_total_bytes: e.total(),
    };
    if args.run.json {
        return Ok(out.json(&summary)?);
    }
    let input = spec.input_shape();
    let row = |name: &str, kind: &str, shape: &str, params: &str| {
        format!("{name:<8} {kind:<18} {shape:>12} {params:>12}")
    };
    out.line(row("layer", "kind", "output", "parameters"))?;
    out.line(row("input", "", &input.to_string(), "-"))?;
    for l in &summary.layers {
        let params = grouped(l.parameters as u64);
        out.line(row(&l.name, &l.kind, &l.shape, &params))?;
    }
    out.line(format!(
        "parameters {}, forward {} FLOPs a sample",
        grouped(summary.parameters as u64),
        grouped(summary.forward_flops_per_sample)
    ))?;
    out.line(format!(
        "memory at batch {} in {} (estimated, not measured): {}",
        config.batch,
        config.precision.as_str(),
        format_bytes(summary.estimated_total_bytes)
    ))?;
    for line in &e.lines {
        out.line(format!(
            "  {:<16} {:>10}  {}",
            line.role.as_str(),
            format_bytes(line.bytes),
            line.formula.text(Lang::En)
        ))?;
    }
    Ok(())
}
