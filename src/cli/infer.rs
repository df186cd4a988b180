//! `batchscope infer`: trains briefly, then serves predictions one request at a time and in
//! batches on each device, and prints the latency percentiles and the throughput.

use clap::Args;

use super::args::{OnOff, RunArgs};
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
    /// Rows per request in the batched case, and prompts written at once by a language model
    /// (default: --batch).
    #[arg(long)]
    request_rows: Option<usize>,
    /// A language model (a text and --model gpt-…): characters it writes after each prompt, a
    /// character at a time.
    #[arg(long, default_value_t = 100)]
    tokens: usize,
    /// Whether a language model keeps each position's keys and values between characters
    /// (default: both, to compare).
    #[arg(long, value_enum)]
    kv_cache: Option<OnOff>,
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
    if !(1..=crate::train::generate::MAX_TOKENS).contains(&args.tokens) {
        return Err(Failure::BadInput(format!(
            "--tokens {}: choose between 1 and {}",
            args.tokens,
            crate::train::generate::MAX_TOKENS
        )));
    }
    let plan = InferPlan {
        train_steps: args.train_steps.min(1_000_000),
        requests: args.requests,
        batch,
        warmup: 10,
        tokens: if session.data.is_text() {
            args.tokens
        } else {
            0
        },
        kv_cache: args.kv_cache.map(OnOff::on),
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
        for g in &report.generation {
            out.line(format!(
                "{device}: {} prompt{} {} a key-value cache: {:.1} characters/s, p50 {:.3} ms \
                 and p99 {:.3} ms a character, {} whole-window passes{}",
                g.prompts,
                if g.prompts == 1 { "" } else { "s" },
                if g.kv_cache { "with" } else { "without" },
                g.tokens_per_s,
                g.p50_ms_per_token,
                g.p99_ms_per_token,
                g.window_passes,
                if g.kv_cache {
                    format!(
                        ", cache {}",
                        crate::units::format_bytes(g.cache_bytes as u64)
                    )
                } else {
                    String::new()
                }
            ))?;
        }
        if !report.generation.is_empty() {
            let same = crate::bench::infer_tokens::same_text(&report.generation);
            out.line(format!(
                "{device}: {}; the first prompt became: {:?}",
                if same {
                    "the same text with and without the cache"
                } else {
                    "the text differs with and without the cache (rounding moved a draw)"
                },
                report.generation[0].text
            ))?;
        }
        Ok(())
    })
}
