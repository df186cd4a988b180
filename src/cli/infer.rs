//! `batchscope infer`: trains briefly, then serves predictions one request at a time and in
//! batches on each device, and prints the latency percentiles and the throughput.

use clap::Args;

use super::args::RunArgs;
use super::failure::{Failure, RunError, on_each_device};
use super::output::Out;
use super::run::{check_fits, open_backend, parse_run};
use crate::bench::infer::{InferPlan, Latency, measure};

#[derive(Args, Debug)]
pub(super) struct InferArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Timed requests per request size.
    #[arg(long, default_value_t = 200)]
    requests: usize,
    /// Training steps before the requests.
    #[arg(long, default_value_t = 200)]
    train_steps: u64,
    /// Rows per request in the batched case (default: --batch).
    #[arg(long)]
    request_rows: Option<usize>,
}

/// Most requests a run times.
const MAX_REQUESTS: usize = 1_000_000;

pub(super) fn run(out: &mut Out, args: &InferArgs) -> Result<(), Failure> {
    if !(1..=MAX_REQUESTS).contains(&args.requests) {
        return Err(Failure::BadInput(format!(
            "--requests {}: choose between 1 and {MAX_REQUESTS}",
            args.requests
        )));
    }
    let (session, devices) = parse_run(&args.run)?;
    let batch = args.request_rows.unwrap_or(session.config.batch);
    if !(1..=crate::train::MAX_BATCH).contains(&batch) {
        return Err(Failure::BadInput(format!(
            "--request-rows {batch}: choose between 1 and {}",
            crate::train::MAX_BATCH
        )));
    }
    let plan = InferPlan {
        train_steps: args.train_steps.min(1_000_000),
        requests: args.requests,
        batch,
        warmup: 10,
    };
    on_each_device(out, &devices, args.run.json, |out, device| {
        let mut backend = open_backend(device, &args.run)?;
        // Training first takes the batch, then a request its rows.
        check_fits(backend.as_ref(), &session, session.config.batch, "--batch")?;
        check_fits(backend.as_ref(), &session, batch, "--request-rows")?;
        let mut result = Err(RunError::from("inference did not run"));
        backend.enter(&mut |b| result = measure(b, &session, plan).map_err(RunError::from));
        let report = result?;
        if args.run.json {
            out.json(&report)?;
            return Ok(());
        }
        let line = |l: &Latency| {
            let spans: Vec<String> = l
                .spans_per_request
                .iter()
                .map(|(c, n)| format!("{n} {c}"))
                .collect();
            let rows = if l.rows == 1 {
                "1 row".to_owned()
            } else {
                format!("{} rows", l.rows)
            };
            format!(
                "{rows} a request: p50 {:.4} ms, p99 {:.4} ms, max {:.4} ms over {} requests, \
                 {:.0} rows/s; one request is {}",
                l.p50_ms,
                l.p99_ms,
                l.max_ms,
                l.requests,
                l.rows_per_s,
                spans.join(", ")
            )
        };
        out.line(format!(
            "{device} ({}{}): {}",
            report.backend,
            if report.software_adapter {
                ", software adapter"
            } else {
                ""
            },
            line(&report.single)
        ))?;
        out.line(format!("{device}: {}", line(&report.batched)))?;
        Ok(())
    })
}
