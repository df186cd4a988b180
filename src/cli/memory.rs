//! `batchscope memory`: a few training steps per device, then the measured memory by role beside
//! the estimator's prediction and its formulas, and the static memory of a few large models.

use std::io::Write;

use clap::Args;
use serde_json::json;

use super::{Failure, RunArgs, RunError, on_each_device, open_backend, parse_run};
use crate::backend::Backend;
use crate::device::Device;
use crate::memory::{MemorySnapshot, Role};
use crate::sim::estimate::{self, Estimate, PRESETS, Scheme};
use crate::train::{Runner, Session};
use crate::units::{format_bytes, grouped};

#[derive(Args, Debug)]
pub(super) struct MemoryArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Training steps before the memory is read.
    #[arg(long, default_value_t = 3)]
    steps: u64,
}

pub(super) fn run(args: &MemoryArgs) -> Result<(), Failure> {
    let (session, devices) = parse_run(&args.run)?;
    let spec = session.config.model_spec(&session.data);
    let estimate = estimate::mlp(
        &spec,
        session.config.optimizer,
        session.config.batch,
        session.config.precision,
    );
    let mut out = std::io::stdout();
    let result = on_each_device(&devices, args.run.json, |device| {
        let mut backend = open_backend(device, &args.run)?;
        let mut result = Err(RunError::from("the steps did not run"));
        backend.enter(&mut |b| result = measure(b, &session, args.steps).map_err(RunError::from));
        let snapshot = result?;
        print_device(
            &mut out,
            device,
            &backend.name(),
            &snapshot,
            &estimate,
            args.run.json,
        );
        Ok(())
    });
    print_presets(&mut out, args.run.json);
    result
}

/// Trains `steps` steps and reads the memory (the peaks cover the steps).
fn measure(
    backend: &mut dyn Backend,
    session: &Session,
    steps: u64,
) -> Result<MemorySnapshot, crate::backend::BackendError> {
    let mut runner = Runner::new(backend, session)?;
    for _ in 0..steps {
        runner.step(backend, false)?;
    }
    runner.sync(backend)?;
    Ok(backend.memory())
}

fn print_device(
    out: &mut impl Write,
    device: Device,
    name: &str,
    m: &MemorySnapshot,
    estimate: &Estimate,
    as_json: bool,
) {
    if as_json {
        let roles: serde_json::Map<String, serde_json::Value> = Role::ALL
            .iter()
            .map(|&r| {
                let line = estimate.lines.iter().find(|l| l.role == r);
                (
                    r.as_str().to_owned(),
                    json!({
                        "measured_bytes": m.role(r),
                        "estimated_bytes": line.map(|l| l.bytes),
                        "formula": line.map(|l| l.formula.clone()),
                    }),
                )
            })
            .collect();
        let value = json!({
            "device": device,
            "backend": name,
            "roles": roles,
            "allocated_bytes": m.allocated,
            "reserved_bytes": m.reserved,
            "peak_allocated_bytes": m.peak_allocated,
            "peak_reserved_bytes": m.peak_reserved,
            "budget_bytes": m.budget,
            "tensors": m.tensors,
        });
        let _ = writeln!(out, "{value}");
        return;
    }
    let _ = writeln!(
        out,
        "{device} ({name}): allocated {}, reserved {}, peak allocated {}, {} tensors{}",
        format_bytes(m.allocated),
        format_bytes(m.reserved),
        format_bytes(m.peak_allocated),
        m.tensors,
        m.budget
            .map(|b| format!(", budget {}", format_bytes(b)))
            .unwrap_or_default()
    );
    for r in Role::ALL {
        let line = estimate.lines.iter().find(|l| l.role == r);
        let _ = writeln!(
            out,
            "  {:<16} {:>12} measured  {:>12} estimated  {}",
            r.as_str(),
            m.role(r),
            line.map_or_else(|| "-".to_owned(), |l| l.bytes.to_string()),
            line.map_or("", |l| l.formula.as_str())
        );
    }
}

fn print_presets(out: &mut impl Write, as_json: bool) {
    for p in PRESETS {
        for (scheme, name) in [
            (Scheme::Fp32Adam, "FP32 + Adam"),
            (Scheme::MixedAdam, "mixed precision + Adam"),
        ] {
            let e = estimate::preset(p, scheme);
            if as_json {
                let value = json!({
                    "estimated": true,
                    "model": p.name,
                    "parameters": p.parameters,
                    "scheme": name,
                    "lines": e.lines,
                    "total_bytes": e.total(),
                    "note": "parameters, gradients and optimizer state only; activations depend on batch, sequence length and checkpointing",
                });
                let _ = writeln!(out, "{value}");
            } else {
                let _ = writeln!(
                    out,
                    "estimated: {} ({} parameters), {name}: {} before activations",
                    p.name,
                    grouped(p.parameters),
                    format_bytes(e.total())
                );
            }
        }
    }
}
