//! `batchscope sample`: trains a language model briefly on a text (or loads its saved weights),
//! then writes characters after a prompt on each device from one seed, and says how fast.

use clap::Args;
use serde::Serialize;

use super::args::{OnOff, RunArgs};
use super::failure::{Failure, RunError, on_each_device};
use super::output::Out;
use super::run::{check_fits, open_backend, parse_run};
use crate::backend::Backend;
use crate::device::Device;
use crate::train::generate::{MAX_TOKENS, Sampling, generate, spell, writer};
use crate::train::{Runner, Session};

#[derive(Args, Debug)]
pub(super) struct SampleArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The text to continue (only characters of the data set's text).
    #[arg(long, default_value = "\n")]
    prompt: String,
    /// Characters to write.
    #[arg(long, default_value_t = 200)]
    tokens: usize,
    /// Divides the logits before each draw: below 1 safer, above 1 wilder, 0 always the
    /// likeliest character.
    #[arg(long, default_value_t = 0.8)]
    temperature: f32,
    /// Training steps before writing (0 with --load-weights: write with those weights).
    #[arg(long, default_value_t = 300)]
    train_steps: u64,
    /// Weights saved by `train --save-weights` (safetensors) to start from.
    #[arg(long, value_name = "FILE")]
    load_weights: Option<std::path::PathBuf>,
    /// Keep each position's keys and values between characters (on), or run the whole window
    /// again for every character (off): the same text either way.
    #[arg(long, value_enum, default_value = "on")]
    kv_cache: OnOff,
}

/// What a device wrote.
#[derive(Serialize)]
struct Written {
    device: Device,
    backend: String,
    prompt: String,
    text: String,
    tokens: usize,
    /// Whether the keys and values were kept between characters.
    kv_cache: bool,
    /// Characters written a second.
    tokens_per_s: f64,
    ms_per_token: f64,
    /// The validation loss when it stopped training, nats a character.
    val_loss: f32,
    train_steps: u64,
}

pub(super) fn run(out: &mut Out, args: &SampleArgs) -> Result<(), Failure> {
    if !(1..=MAX_TOKENS).contains(&args.tokens) || !(0.0..=10.0).contains(&args.temperature) {
        return Err(Failure::BadInput(format!(
            "--tokens {} --temperature {}: choose 1 to {MAX_TOKENS} characters and a temperature \
             from 0 to 10",
            args.tokens, args.temperature
        )));
    }
    let (session, devices) = parse_run(&args.run)?;
    if !session.data.is_text() {
        return Err(Failure::BadInput(format!(
            "--dataset {}: sample writes text, so it needs a text (shakespeare, poems or a .txt \
             file) and a language model (--model gpt-tiny)",
            args.run.dataset
        )));
    }
    let prompt = encode(&session, &args.prompt)?;
    let spec = session.config.model_spec(&session.data);
    let loaded = match &args.load_weights {
        Some(path) => Some(super::train::load_weights(path, &spec)?),
        None => None,
    };
    on_each_device(out, &devices, args.run.json, |out, device| {
        let mut backend = open_backend(device, &args.run)?;
        check_fits(backend.as_ref(), &session, session.config.batch, "--batch")?;
        let mut result = Err(RunError::from("sampling did not run"));
        backend.enter(&mut |b| {
            result = write_one(b, &session, args, (&prompt, loaded.as_ref()));
        });
        let written = result?;
        if args.run.json {
            out.json(&written)?;
        } else {
            out.line(format!(
                "{device} ({}), after {} steps (validation loss {:.3} nats a character), \
                 {:.1} characters/s:",
                written.backend, written.train_steps, written.val_loss, written.tokens_per_s
            ))?;
            out.line(format!("{}{}", written.prompt, written.text))?;
        }
        Ok(())
    })
}

/// The prompt as the text's character numbers, or the first character it does not have.
fn encode(session: &Session, prompt: &str) -> Result<Vec<u16>, Failure> {
    let vocab = &session.data.class_names;
    prompt
        .chars()
        .map(|c| {
            let s = c.to_string();
            vocab
                .iter()
                .position(|v| *v == s)
                .map(|i| i as u16)
                .ok_or_else(|| {
                    Failure::BadInput(format!(
                        "--prompt: {c:?} is not a character of the {} text; use only its \
                     characters",
                        session.data.name
                    ))
                })
        })
        .collect()
}

/// Trains (or loads), then writes, on one device.
fn write_one(
    backend: &mut dyn Backend,
    session: &Session,
    args: &SampleArgs,
    (prompt, loaded): (&[u16], Option<&crate::nn::LayerValues>),
) -> Result<Written, RunError> {
    let mut runner = Runner::new(backend, session)?;
    if let Some(values) = loaded {
        runner.write_parameters(backend, values)?;
    }
    let steps = args.train_steps.min(1_000_000);
    for _ in 0..steps {
        runner.step(backend, false)?;
    }
    let val_loss = runner.evaluate(backend)?.test.loss;
    let params = runner.model().read_parameters(backend)?;
    let spec = session.config.model_spec(&session.data);
    let mut model = writer(backend, &spec, &params, 1)?;
    let how = Sampling {
        tokens: args.tokens,
        temperature: args.temperature,
        seed: session.config.seed,
    };
    let shape = (session.data.features, session.data.classes());
    let kv_cache = args.kv_cache.on();
    let prompts = [prompt.to_vec()];
    let written = generate(backend, &mut model, shape, &prompts, (how, kv_cache))?;
    let text = spell(&session.data.class_names, written.ids());
    Ok(Written {
        device: backend.device(),
        backend: backend.name(),
        prompt: args.prompt.clone(),
        text,
        tokens: written.tokens(),
        kv_cache,
        tokens_per_s: written.tokens_per_s(),
        ms_per_token: written.elapsed.as_secs_f64() * 1e3 / written.tokens().max(1) as f64,
        val_loss,
        train_steps: steps,
    })
}
