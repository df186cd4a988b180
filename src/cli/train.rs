//! `batchscope train`: trains without a window, one line per logged step and a summary per
//! device, as text or JSON lines.

use web_time::Instant;

use clap::Args;
use serde::Serialize;

use super::args::RunArgs;
use super::failure::{Failure, RunError, on_each_device};
use super::output::Out;
use super::run::{check_fits, open_backend, parse_run};
use crate::backend::Backend;
use crate::data::Task;
use crate::device::Device;
use crate::memory::Role;
use crate::precision::{GradScaler, Precision, RoundingCensus};
use crate::train::{EvalReport, Runner, Session, StepLog};
use crate::units::grouped;

#[derive(Args, Debug)]
pub(super) struct TrainArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Optimizer steps.
    #[arg(long, default_value_t = 500, conflicts_with = "epochs")]
    steps: u64,
    /// Full passes over the training set, instead of --steps (the last partial batch of each
    /// epoch is dropped).
    #[arg(long)]
    epochs: Option<u64>,
    /// Log every this many steps (each log reads the loss back: a sync).
    #[arg(long, default_value_t = 10)]
    log_every: u64,
    /// Stop after this many epochs and report the wall time it took, end to end (setting up the
    /// model, loading batches, copies and evaluation included).
    #[arg(long, conflicts_with_all = ["epochs", "until_accuracy"])]
    until_epochs: Option<u64>,
    /// Stop once the test accuracy (R² for a regression target) reaches this value, from 0 to
    /// 1, checked after every epoch, and report the wall time it took, end to end; --steps is
    /// the most it may take.
    #[arg(long, conflicts_with = "epochs")]
    until_accuracy: Option<f64>,
    /// Start from the weights in this safetensors file (as --save-weights writes them, or
    /// PyTorch's `state_dict` of the same layers), each tensor's name and shape checked
    /// against the model.
    #[arg(long, value_name = "FILE")]
    load_weights: Option<std::path::PathBuf>,
    /// After training, write the weights to this safetensors file, named and laid out as
    /// PyTorch's `state_dict` of the same layers (from the first device that trains).
    #[arg(long, value_name = "FILE")]
    save_weights: Option<std::path::PathBuf>,
}

/// When a run stops early, and what it reached.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    /// After this many epochs.
    Epochs(u64),
    /// At this test accuracy (or R²).
    Score(f64),
}

/// What the summary says of a target.
#[derive(Serialize)]
struct TargetSummary {
    /// `epochs` or `test_accuracy` / `test_r2`.
    target: &'static str,
    /// The number asked for.
    value: f64,
    /// Whether the run got there within its steps.
    reached: bool,
    /// Wall time from the start of the device's run (model set up, batches loaded and copied,
    /// every evaluation) to the check that saw the target, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    time_to_target_s: Option<f64>,
    /// The score at the last check.
    score: Option<f32>,
    /// Epochs done when it stopped.
    epochs: u64,
}

/// The last line `train` prints for a device.
#[derive(Serialize)]
struct TrainSummary<'a> {
    /// Always true: tells the summary from the step lines.
    summary: bool,
    device: Device,
    backend: String,
    /// Whether the GPU is a software adapter (`null` on the CPU).
    software_adapter: Option<bool>,
    task: Task,
    steps: u64,
    /// The loss of the last logged interval.
    loss: f32,
    train_loss: f32,
    test_loss: f32,
    elapsed_s: f64,
    samples_per_s: f64,
    /// A language model's characters per second (samples times the context).
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_per_s: Option<f64>,
    /// A language model's validation loss, nats a character (the test loss on at most 512
    /// windows of the validation part), and the same in bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    val_loss: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    val_bits_per_char: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<TargetSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    train_accuracy: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_accuracy: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    train_r2: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_r2: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    train_mae: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_mae: Option<f32>,
    /// What 16-bit storage did, in 16-bit precisions.
    #[serde(flatten)]
    precision: Option<PrecisionSummary<'a>>,
    /// The run's energy, measured or estimated.
    #[serde(flatten)]
    energy: Option<RunEnergy>,
}

/// The energy of a whole run (to its target, where it has one): measured by a counter or
/// estimated, as `energy_source` says, with what it stands on.
#[derive(Serialize)]
struct RunEnergy {
    /// Joules from the first step to the last (evaluations towards a target included).
    energy_total_j: f64,
    energy_per_step_j: f64,
    energy_per_epoch_j: f64,
    samples_per_j: f64,
    energy_source: crate::energy::EnergySource,
    energy_basis: String,
}

impl RunEnergy {
    /// The run's energy from its last log's (which sums every log's), over `steps` updates of
    /// `batch` rows, `per_epoch` of them an epoch.
    fn of(last: &crate::train::StepEnergy, steps: u64, batch: usize, per_epoch: u64) -> Self {
        let per_step = last.total_j / steps.max(1) as f64;
        Self {
            energy_total_j: last.total_j,
            energy_per_step_j: per_step,
            energy_per_epoch_j: per_step * per_epoch as f64,
            samples_per_j: if last.total_j > 0.0 {
                (steps as f64 * batch as f64) / last.total_j
            } else {
                0.0
            },
            energy_source: last.source,
            energy_basis: last.basis.clone(),
        }
    }

    /// Its lines: the figures, then what they stand on (a line of its own: a rated power's
    /// source can be long).
    fn lines(&self, device: Device) -> [String; 2] {
        use crate::units::format_joules;
        let figures = format!(
            "{device} energy: {} in all, {} a step, {} an epoch, {:.0} samples/J, {}",
            format_joules(self.energy_total_j),
            format_joules(self.energy_per_step_j),
            format_joules(self.energy_per_epoch_j),
            self.samples_per_j,
            match self.energy_source {
                crate::energy::EnergySource::Estimated => "ESTIMATED (not measured)",
                _ => "measured",
            },
        );
        [
            figures,
            format!("{device} energy basis: {}", self.energy_basis),
        ]
    }
}

/// What 16-bit storage lost over a run, and the loss scaler's end state.
#[derive(Serialize)]
struct PrecisionSummary<'a> {
    precision: Precision,
    rounding: &'a RoundingCensus,
    gradient_underflow_share: f64,
    gradient_overflow_share: f64,
    activation_underflow_share: f64,
    activation_overflow_share: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    final_loss_scale: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped_steps: Option<u64>,
}

impl<'a> PrecisionSummary<'a> {
    fn of(precision: Precision, census: &'a RoundingCensus, scaler: Option<&GradScaler>) -> Self {
        let (gradients, activations) = (census.gradients(), census.role(Role::Activations));
        Self {
            precision,
            rounding: census,
            gradient_underflow_share: gradients.underflow_share(),
            gradient_overflow_share: gradients.overflow_share(),
            activation_underflow_share: activations.underflow_share(),
            activation_overflow_share: activations.overflow_share(),
            final_loss_scale: scaler.map(|s| s.scale),
            skipped_steps: scaler.map(|s| s.skipped),
        }
    }

    /// The same in a line of text.
    fn text(&self) -> String {
        let (gradients, activations) = (
            self.rounding.gradients(),
            self.rounding.role(Role::Activations),
        );
        let percent = |share: f64| format!("{:.2}%", share * 100.0);
        let scaler = match (self.final_loss_scale, self.skipped_steps) {
            (Some(scale), Some(skipped)) => {
                format!("; final loss scale {scale}, {skipped} steps skipped")
            }
            _ => String::new(),
        };
        format!(
            "of {} non-zero gradient values stored in 16 bits, {} became 0 and {} became \
             infinite; of {} non-zero activations, {} became 0 and {} infinite{scaler}",
            gradients.nonzero,
            percent(self.gradient_underflow_share),
            percent(self.gradient_overflow_share),
            activations.nonzero,
            percent(self.activation_underflow_share),
            percent(self.activation_overflow_share),
        )
    }
}

/// Most steps one command may train: about a day at a step every 0.1 ms.
const MAX_STEPS: u64 = 1_000_000_000;

pub(super) fn run(out: &mut Out, args: &TrainArgs) -> Result<(), Failure> {
    let (session, devices) = parse_run(&args.run)?;
    if args.steps == 0 || args.log_every == 0 {
        return Err(Failure::BadInput(
            "--steps and --log-every must be at least 1".to_owned(),
        ));
    }
    let target = match (args.until_epochs, args.until_accuracy) {
        (Some(0), _) => {
            return Err(Failure::BadInput(
                "--until-epochs must be at least 1".to_owned(),
            ));
        }
        (Some(n), _) => Some(Target::Epochs(n)),
        (None, Some(x)) if !(x.is_finite() && x > 0.0 && x <= 1.0) => {
            return Err(Failure::BadInput(format!(
                "--until-accuracy {}: give a share above 0 and at most 1 (0.9 for 90%)",
                crate::units::readable(x)
            )));
        }
        (None, Some(x)) => Some(Target::Score(x)),
        (None, None) => None,
    };
    // The flag the epochs came from, for the messages.
    let flag = if args.epochs.is_some() {
        "--epochs"
    } else {
        "--until-epochs"
    };
    let steps = match args.epochs.or(args.until_epochs) {
        Some(0) => return Err(Failure::BadInput(format!("{flag} must be at least 1"))),
        Some(epochs) => {
            let per_epoch = (session.data.train_rows() / session.config.effective_batch()) as u64;
            epochs
                .checked_mul(per_epoch)
                .filter(|&steps| steps <= MAX_STEPS)
                .ok_or_else(|| {
                    Failure::BadInput(format!(
                        "{flag} {epochs}: at {per_epoch} steps per epoch that is more than \
                         the {} steps a run may take; choose at most {} epochs",
                        grouped(MAX_STEPS),
                        grouped(MAX_STEPS / per_epoch.max(1))
                    ))
                })?
        }
        None if args.steps > MAX_STEPS => {
            return Err(Failure::BadInput(format!(
                "--steps {}: choose at most {}",
                args.steps,
                grouped(MAX_STEPS)
            )));
        }
        None => args.steps,
    };
    if let Some(path) = &args.save_weights {
        // A destination that cannot be written is said before the training, not after it.
        crate::files::check_destination(path).map_err(|e| {
            Failure::BadInput(format!(
                "--save-weights {}: {}",
                path.display(),
                e.text(crate::i18n::Lang::En)
            ))
        })?;
    }
    let spec = session.config.model_spec(&session.data);
    let loaded = match &args.load_weights {
        Some(path) => Some(load_weights(path, &spec)?),
        None => None,
    };
    let save_from = devices.first().copied();
    on_each_device(out, &devices, args.run.json, |out, device| {
        let mut backend = open_backend(device, &args.run)?;
        check_fits(backend.as_ref(), &session, session.config.batch, "--batch")?;
        let mut result = Err(RunError::from("training did not run"));
        // Inside the backend's context (the CPU's pool); each line goes straight to stdout,
        // which nothing else holds locked meanwhile.
        let weights = Weights {
            load: loaded.as_ref(),
            save: args
                .save_weights
                .as_deref()
                .filter(|_| save_from == Some(device)),
        };
        backend.enter(&mut |b| {
            result = train_one(b, &session, (steps, target), args, weights, out);
        });
        result
    })
}

/// The weights a run starts from and where it writes its own.
#[derive(Clone, Copy)]
struct Weights<'a> {
    load: Option<&'a crate::nn::LayerValues>,
    save: Option<&'a std::path::Path>,
}

/// The parameters of a safetensors file at `path`, checked against `spec` (every mismatch
/// named).
pub(super) fn load_weights(
    path: &std::path::Path,
    spec: &crate::nn::ModelSpec,
) -> Result<crate::nn::LayerValues, Failure> {
    let bad = |why: String| Failure::BadInput(format!("--load-weights {}: {why}", path.display()));
    let bytes = crate::files::read_bytes(path, crate::files::FileKind::Weights)
        .map_err(|e| bad(e.text(crate::i18n::Lang::En).to_owned()))?;
    let english = |said: &crate::i18n::Said| said.text(crate::i18n::Lang::En).to_owned();
    let tensors = crate::nn::from_safetensors(&bytes).map_err(|e| bad(english(&e)))?;
    crate::nn::from_torch(spec, &tensors).map_err(|problems| {
        let each: Vec<String> = problems.iter().map(english).collect();
        bad(each.join("; "))
    })
}

/// Writes the runner's weights to `path` as safetensors.
fn save_weights(
    backend: &mut dyn Backend,
    runner: &Runner,
    session: &Session,
    path: &std::path::Path,
) -> Result<(), RunError> {
    let spec = session.config.model_spec(&session.data);
    let params = runner.model().read_parameters(backend)?;
    let tensors = crate::nn::torch_tensors(&spec, &params);
    let bytes = crate::nn::to_safetensors(&tensors).map_err(RunError::from)?;
    crate::files::write_atomic(path, &bytes).map_err(|e| {
        RunError::from(format!(
            "--save-weights {}: {}",
            path.display(),
            e.text(crate::i18n::Lang::En)
        ))
    })
}

fn train_one(
    backend: &mut dyn Backend,
    session: &Session,
    (most_steps, target): (u64, Option<Target>),
    args: &TrainArgs,
    weights: Weights<'_>,
    out: &mut Out,
) -> Result<(), RunError> {
    let device = backend.device();
    let adapter = backend.adapter_summary();
    // End to end: from setting up the model, as a training script's wall clock runs.
    let begun = Instant::now();
    let mut runner = Runner::new(backend, session)?;
    if let Some(values) = weights.load {
        runner.write_parameters(backend, values)?;
    }
    let started = Instant::now();
    let mut last_loss = f32::NAN;
    let per_epoch = (session.data.train_rows() / session.config.effective_batch()).max(1) as u64;
    let mut reached: Option<(f64, Option<f32>)> = None;
    let mut last_score = None;
    let mut steps = most_steps;
    for step in 1..=most_steps {
        if step % args.log_every == 0 || step == steps {
            runner.step(backend, true)?;
            let log = runner.log(backend)?;
            last_loss = log.loss;
            print_log(out, device, &log, args.run.json)?;
        } else {
            runner.step(backend, false)?;
        }
        if let Some(Target::Score(goal)) = target
            && step % per_epoch == 0
        {
            let eval = runner.evaluate(backend)?;
            last_score = eval.test.accuracy.or(eval.test.r2);
            if last_score.is_some_and(|s| f64::from(s) >= goal) {
                reached = Some((begun.elapsed().as_secs_f64(), last_score));
                steps = step;
                break;
            }
        }
    }
    // The last steps' work has ended once their loss is read back; the log also closes the
    // run's energy (to the target, evaluations included).
    let tail = runner.log(backend)?;
    if let Some(Target::Epochs(_)) = target {
        reached = Some((begun.elapsed().as_secs_f64(), None));
    }
    let batch = session.config.effective_batch();
    let energy = tail
        .energy
        .as_ref()
        .map(|e| RunEnergy::of(e, steps, batch, per_epoch));
    let elapsed_s = started.elapsed().as_secs_f64();
    let eval = runner.evaluate(backend)?;
    if let Some(path) = weights.save {
        save_weights(backend, &runner, session, path)?;
    }
    let precision = session.config.precision;
    let text = session.data.is_text();
    let summary = TrainSummary {
        summary: true,
        device,
        backend: backend.name(),
        software_adapter: adapter.as_ref().map(|a| a.software),
        task: session.data.task,
        steps,
        loss: last_loss,
        train_loss: eval.train.loss,
        test_loss: eval.test.loss,
        elapsed_s,
        samples_per_s: (steps as f64 * batch as f64) / elapsed_s.max(1e-9),
        tokens_per_s: text.then(|| {
            (steps as f64 * batch as f64 * session.data.features as f64) / elapsed_s.max(1e-9)
        }),
        val_loss: text.then_some(eval.test.loss),
        val_bits_per_char: text.then(|| eval.test.loss / std::f32::consts::LN_2),
        train_accuracy: eval.train.accuracy,
        test_accuracy: eval.test.accuracy,
        train_r2: eval.train.r2,
        test_r2: eval.test.r2,
        train_mae: eval.train.mae,
        test_mae: eval.test.mae,
        precision: (precision != Precision::Fp32)
            .then(|| PrecisionSummary::of(precision, runner.rounding_total(), runner.scaler())),
        energy,
        target: target.map(|t| {
            let regression = session.data.task == Task::Regression;
            let (name, value) = match t {
                Target::Epochs(n) => ("epochs", n as f64),
                Target::Score(x) if regression => ("test_r2", x),
                Target::Score(x) => ("test_accuracy", x),
            };
            TargetSummary {
                target: name,
                value,
                reached: reached.is_some(),
                time_to_target_s: reached.map(|(s, _)| s),
                score: reached.and_then(|(_, s)| s).or(last_score),
                epochs: steps / per_epoch,
            }
        }),
    };
    if args.run.json {
        out.json(&summary)?;
        return Ok(());
    }
    print_summary(out, session, &summary, &eval)
}

/// One logged step, as a line of text or of JSON.
fn print_log(out: &mut Out, device: Device, log: &StepLog, json: bool) -> Result<(), RunError> {
    if json {
        out.json(log)?;
        return Ok(());
    }
    let quality = match (log.accuracy, log.mae) {
        (Some(a), _) => format!("acc {:5.1}%", a * 100.0),
        (None, Some(e)) => format!("MAE {e:.4}"),
        (None, None) => String::new(),
    };
    out.line(format!(
        "{device} step {:>6}  loss {:.5}  {quality}  {:>10.0} samples/s  {:.3} ms/step",
        log.step, log.loss, log.samples_per_s, log.step_time_ms
    ))?;
    Ok(())
}

/// The end of a run in words: the scores, the target, and what the precision lost.
fn print_summary(
    out: &mut Out,
    session: &Session,
    summary: &TrainSummary,
    eval: &EvalReport,
) -> Result<(), RunError> {
    let (device, steps, elapsed_s) = (summary.device, summary.steps, summary.elapsed_s);
    let precision = session.config.precision;
    let result = match (eval.train.accuracy, eval.test.accuracy) {
        (Some(train), Some(test)) => format!(
            "train accuracy {:.1}%, test accuracy {:.1}%",
            train * 100.0,
            test * 100.0
        ),
        _ => format!(
            "test R² {:.3}, test MAE {:.4} (in {})",
            eval.test.r2.unwrap_or(f32::NAN),
            eval.test.mae.unwrap_or(f32::NAN),
            session.data.target_name
        ),
    };
    out.line(format!(
        "{device} done: {steps} steps in {elapsed_s:.2} s, {result} ({})",
        summary.backend
    ))?;
    if let Some(t) = &summary.target {
        out.line(match t.time_to_target_s {
            Some(s) => format!(
                "{device} time to target ({} {}): {s:.3} s end to end, after {} epochs",
                t.target,
                crate::units::readable(t.value),
                t.epochs
            ),
            None => format!(
                "{device} target ({} {}) not reached within {steps} steps ({} epochs; last \
                 score {})",
                t.target,
                crate::units::readable(t.value),
                t.epochs,
                t.score.map_or("none".to_owned(), |s| format!("{s:.4}"))
            ),
        })?;
    }
    if let (Some(loss), Some(bits), Some(tokens)) = (
        summary.val_loss,
        summary.val_bits_per_char,
        summary.tokens_per_s,
    ) {
        out.line(format!(
            "{device} validation loss {loss:.4} nats a character ({bits:.3} bits), {tokens:.0} characters/s"
        ))?;
    }
    if let Some(p) = &summary.precision {
        out.line(format!("{device} {}: {}", precision.as_str(), p.text()))?;
    }
    if let Some(e) = &summary.energy {
        for line in e.lines(device) {
            out.line(line)?;
        }
    }
    Ok(())
}
