//! `batchscope memory`: a few training steps per device, then the measured memory by role beside
//! the estimator's prediction and its formulas, and the static memory of a few large models.

use std::collections::BTreeMap;

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::{Failure, RunError, on_each_device};
use super::output::{Out, OutputError};
use super::run::{check_fits, open_backend, parse_run};
use crate::backend::Backend;
use crate::device::Device;
use crate::i18n::Lang;
use crate::memory::{MemorySnapshot, Role};
use crate::sim::estimate::{self, Estimate, PRESETS, Scheme};
use crate::train::{Runner, Session};
use crate::units::{format_bytes, grouped};

#[derive(Args, Debug)]
pub(super) struct MemoryArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Training steps before the memory is read.
    #[arg(long, default_value_t = 3)]
    steps: u64,
}

pub(super) fn run(out: &mut Out, args: &MemoryArgs) -> Result<(), Failure> {
    let (session, devices) = parse_run(&args.run)?;
    let result = on_each_device(out, &devices, args.run.json, |out, device| {
        let estimate = session.config.estimate(&session.data);
        let mut backend = open_backend(device, &args.run)?;
        check_fits(backend.as_ref(), &session, session.config.batch, "--batch")?;
        let mut result = Err(RunError::from("the steps did not run"));
        backend.enter(&mut |b| result = measure(b, &session, args.steps).map_err(RunError::from));
        let snapshot = result?;
        print_device(
            out,
            device,
            &backend.name(),
            &snapshot,
            &estimate,
            args.run.json,
        )?;
        Ok(())
    });
    if matches!(result, Err(Failure::Closed | Failure::Output(_))) {
        return result;
    }
    print_presets(out, args.run.json)?;
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

/// One role of `memory --json`: measured, and what the estimator predicts.
#[derive(Serialize)]
struct RoleLine<'a> {
    measured_bytes: u64,
    estimated_bytes: Option<u64>,
    formula: Option<&'a str>,
}

/// A device's line of `memory --json`.
#[derive(Serialize)]
struct DeviceMemory<'a> {
    device: Device,
    backend: &'a str,
    roles: BTreeMap<&'static str, RoleLine<'a>>,
    allocated_bytes: u64,
    reserved_bytes: u64,
    peak_allocated_bytes: u64,
    peak_reserved_bytes: u64,
    budget_bytes: Option<u64>,
    tensors: usize,
}

/// A large model's line of `memory --json`: estimated, never measured.
#[derive(Serialize)]
struct PresetMemory<'a> {
    estimated: bool,
    model: &'a str,
    parameters: u64,
    scheme: &'a str,
    lines: &'a [estimate::Line],
    total_bytes: u64,
    note: &'a str,
}

fn print_device(
    out: &mut Out,
    device: Device,
    name: &str,
    m: &MemorySnapshot,
    estimate: &Estimate,
    as_json: bool,
) -> Result<(), OutputError> {
    if as_json {
        let roles = Role::ALL
            .iter()
            .map(|&r| {
                let line = estimate.lines.iter().find(|l| l.role == r);
                let role = RoleLine {
                    measured_bytes: m.role(r),
                    estimated_bytes: line.map(|l| l.bytes),
                    formula: line.map(|l| l.formula.text(Lang::En)),
                };
                (r.as_str(), role)
            })
            .collect();
        return out.json(&DeviceMemory {
            device,
            backend: name,
            roles,
            allocated_bytes: m.allocated_bytes,
            reserved_bytes: m.reserved_bytes,
            peak_allocated_bytes: m.peak_allocated_bytes,
            peak_reserved_bytes: m.peak_reserved_bytes,
            budget_bytes: m.budget_bytes,
            tensors: m.tensors,
        });
    }
    out.line(format!(
        "{device} ({name}): allocated {}, reserved {}, peak allocated {}, {} tensors{}",
        format_bytes(m.allocated_bytes),
        format_bytes(m.reserved_bytes),
        format_bytes(m.peak_allocated_bytes),
        m.tensors,
        m.budget_bytes
            .map(|b| format!(", budget {}", format_bytes(b)))
            .unwrap_or_default()
    ))?;
    for r in Role::ALL {
        let line = estimate.lines.iter().find(|l| l.role == r);
        out.line(format!(
            "  {:<16} {:>12} measured  {:>12} estimated  {}",
            r.as_str(),
            m.role(r),
            line.map_or_else(|| "-".to_owned(), |l| l.bytes.to_string()),
            line.map_or("", |l| l.formula.text(Lang::En))
        ))?;
    }
    Ok(())
}

fn print_presets(out: &mut Out, as_json: bool) -> Result<(), OutputError> {
    for p in PRESETS {
        for (scheme, name) in [
            (Scheme::Fp32Adam, "FP32 + Adam"),
            (Scheme::MixedAdam, "mixed precision + Adam"),
        ] {
            let e = estimate::preset(p, scheme);
            if as_json {
                out.json(&PresetMemory {
                    estimated: true,
                    model: p.name,
                    parameters: p.parameters,
                    scheme: name,
                    lines: &e.lines,
                    total_bytes: e.total(),
                    note: "parameters, gradients and optimizer state only; activations depend on \
                           batch, sequence length and checkpointing",
                })?;
            } else {
                out.line(format!(
                    "estimated: {} ({} parameters), {name}: {} before activations",
                    p.name,
                    grouped(p.parameters),
                    format_bytes(e.total())
                ))?;
            }
        }
    }
    Ok(())
}
