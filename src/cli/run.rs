//! What a run is made of, from the arguments: the data set (a generator, a shipped set, a file,
//! or random benchmark data), the model, the settings and the devices; checked before anything
//! trains. And opening each device's backend.

use super::args::{ReadArgs, RunArgs};
use super::failure::Failure;
use crate::backend::{self, Activation, Backend, GpuChoice, OpenOptions};
use crate::data::formats::{load as load_file, no_progress};
use crate::data::shipped::{SHIPPED, load_shipped, shipped};
use crate::data::source::DataSource;
use crate::data::text_data::{SHIPPED_TEXTS, load_shipped_text, shipped_text};
use crate::data::{Dataset, DatasetSpec, MAX_SAMPLES, Synthetic, Table, Task};
use crate::device::Device;
use crate::nn::{ModelSpec, OptimizerKind};
use crate::precision::Precision;
use crate::train::{MAX_WIDTH, Session, TrainConfig};

/// Where the data comes from.
enum Source {
    /// A generator, with its class count.
    Generator(Synthetic, usize),
    /// Random inputs as wide as the first layer.
    Random,
    /// A loaded file (or shipped set).
    File(Box<Table>),
}

/// A shipped set's name, or a path: the table it holds.
pub(super) fn load_named(name: &str, read: &ReadArgs) -> Result<Table, Failure> {
    read.check_images_apply(name)?;
    let loaded = match (shipped(name), shipped_text(name)) {
        (Some(set), _) => load_shipped(set, &no_progress),
        (None, Some(text)) => load_shipped_text(text, &no_progress),
        (None, None) => load_file(std::path::Path::new(name), &read.options()),
    };
    loaded.map_err(|e| Failure::BadInput(e.to_string()))
}

/// The data source `args` name: a shipped set, a file path, `random`, or a generator.
fn parse_source(args: &RunArgs) -> Result<Source, Failure> {
    if args.dataset == "random" {
        return Ok(Source::Random);
    }
    if let Some(kind) = Synthetic::parse(&args.dataset) {
        let default_classes = if kind.has_class_choice() { 3 } else { 2 };
        let from_layers = args
            .layers
            .as_deref()
            .and_then(|l| ModelSpec::parse_layers(l).ok())
            .and_then(|l| l.last().copied());
        let classes = if kind.has_class_choice() {
            args.classes.or(from_layers).unwrap_or(default_classes)
        } else {
            2
        };
        return Ok(Source::Generator(kind, classes));
    }
    let named = shipped(&args.dataset).is_some() || shipped_text(&args.dataset).is_some();
    if !named && !std::path::Path::new(&args.dataset).exists() {
        let generators: Vec<&str> = Synthetic::ALL.iter().map(|s| s.as_str()).collect();
        let shipped: Vec<&str> = SHIPPED
            .iter()
            .map(|s| s.name)
            .chain(SHIPPED_TEXTS.iter().map(|t| t.name))
            .collect();
        return Err(Failure::BadInput(format!(
            "--dataset `{}`: no such file or folder, and not a data set name: choose one of {}, {}, random, or give the path of a CSV file, an IDX file or an image folder",
            args.dataset,
            generators.join(", "),
            shipped.join(", ")
        )));
    }
    Ok(Source::File(Box::new(load_named(
        &args.dataset,
        &args.read,
    )?)))
}

/// The session and devices that `args` describe.
pub(super) fn parse_run(args: &RunArgs) -> Result<(Session, Vec<Device>), Failure> {
    let source = parse_source(args)?;
    // The widths the data set fixes: (features, outputs), or none for random data.
    let fixed = match &source {
        Source::Generator(_, classes) => Some((2, *classes)),
        Source::File(t) => Some((
            t.features(),
            match t.task {
                Task::Classification => t.class_names.len(),
                Task::Regression => 1,
            },
        )),
        Source::Random => None,
    };
    let conv = args.conv.as_deref().map(parse_conv).transpose()?;
    let layers = match (&args.layers, fixed, &conv) {
        (Some(text), _, Some(_)) => parse_widths(text)?,
        (Some(text), ..) => {
            ModelSpec::parse_layers(text).map_err(|e| Failure::BadInput(format!("--layers {e}")))?
        }
        (None, Some((_, classes)), Some(_)) => vec![classes],
        (None, None, Some(_)) => vec![args.classes.unwrap_or(2)],
        (None, Some((features, classes)), None) => vec![features, 16, 16, classes],
        (None, None, None) => vec![2, 16, 16, args.classes.unwrap_or(2)],
    };
    check_widths(&layers, fixed, conv.is_some(), &args.dataset)?;
    // The first width is the input's, except after convolution blocks, which set it.
    let dense = if conv.is_some() {
        &layers[..]
    } else {
        &layers[1..]
    };
    let (inputs, outputs) = (layers[0], layers[layers.len() - 1]);
    let regression = matches!(&source, Source::File(t) if t.task == Task::Regression);
    if outputs < 2 && !regression {
        return Err(Failure::BadInput(
            "--layers: the last width is the number of classes, at least 2".into(),
        ));
    }
    let activation = Activation::parse(&args.activation)
        .filter(|a| Activation::CHOICES.contains(a))
        .ok_or_else(|| {
            Failure::BadInput(format!(
                "--activation `{}`: choose relu, tanh or sigmoid",
                args.activation
            ))
        })?;
    let optimizer = OptimizerKind::parse(&args.optimizer).ok_or_else(|| {
        Failure::BadInput(format!(
            "--optimizer `{}`: choose sgd, momentum, adam or adamw",
            args.optimizer
        ))
    })?;
    let devices = parse_devices(&args.device)?;
    let kind = match &source {
        Source::Generator(kind, _) => *kind,
        _ => Synthetic::Spiral,
    };
    let (pipeline, augment) = args.pipeline.pipeline()?;
    let precision = Precision::parse(&args.precision).ok_or_else(|| {
        Failure::BadInput(format!(
            "--precision `{}`: choose fp32, fp16, bf16 or mixed",
            args.precision
        ))
    })?;
    let config = TrainConfig {
        data: DatasetSpec {
            kind,
            samples: args.samples,
            classes: outputs,
            noise: args.noise,
            test_fraction: args.test_share,
            seed: args.data_seed,
            standardise: !args.no_standardise,
            context: args.context,
        },
        // Files, shipped sets included, are loaded here and passed in with `from_table`.
        source: DataSource::Generated,
        conv: conv.unwrap_or_default(),
        conv_kernel: args.conv_kernel,
        hidden: dense[..dense.len() - 1].to_vec(),
        model: args.model.as_deref().map(load_model).transpose()?,
        activation,
        optimizer,
        lr: args.lr,
        batch: args.batch,
        accumulate: args.accumulate,
        checkpoint: args.checkpoint,
        seed: args.seed,
        augment,
        precision,
        loss_weight: args.loss_weight,
        pipeline,
    };
    let session = match source {
        Source::Generator(..) => Session::new(config),
        Source::Random => {
            if args.samples > MAX_SAMPLES || inputs > MAX_WIDTH {
                return Err(Failure::BadInput(format!(
                    "--dataset random: at most {MAX_SAMPLES} samples and {MAX_WIDTH} features"
                )));
            }
            // At least a few batches' worth of rows, so an epoch is more than one batch.
            let rows = args.samples.max(args.batch.saturating_mul(4));
            Session::with_data(
                config,
                Dataset::random(inputs, outputs, rows, args.data_seed),
            )
        }
        Source::File(table) => Session::from_table(config, &table),
    };
    Ok((
        session.map_err(|e| Failure::BadInput(e.to_string()))?,
        devices,
    ))
}

/// Widths separated by commas, each above zero.
fn parse_widths(text: &str) -> Result<Vec<usize>, Failure> {
    let widths: Result<Vec<usize>, _> = text.split(',').map(|p| p.trim().parse()).collect();
    match widths {
        Ok(w) if !w.is_empty() && !w.contains(&0) => Ok(w),
        _ => Err(Failure::BadInput(format!(
            "--layers `{text}`: after --conv give the dense layers' widths separated by commas, \
             the classes last, all above zero, e.g. 64,10"
        ))),
    }
}

/// `--conv 8,16`: each block's filters.
fn parse_conv(text: &str) -> Result<Vec<usize>, Failure> {
    let blocks: Result<Vec<usize>, _> = text.split(',').map(|p| p.trim().parse()).collect();
    blocks.map_err(|e| {
        Failure::BadInput(format!(
            "--conv `{text}`: {e}; expected each block's filters separated by commas, e.g. 8,16"
        ))
    })
}

/// The layers fit the data set: its features first (not after convolution blocks, which
/// read its images) and its classes last.
fn check_widths(
    layers: &[usize],
    fixed: Option<(usize, usize)>,
    conv: bool,
    dataset: &str,
) -> Result<(), Failure> {
    let Some((features, classes)) = fixed else {
        return Ok(());
    };
    let (inputs, outputs) = (layers[0], layers[layers.len() - 1]);
    if outputs == classes && (conv || inputs == features) {
        return Ok(());
    }
    let list = layers
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    Err(Failure::BadInput(if conv {
        format!(
            "--layers {list}: the {dataset} data set has {classes} outputs (its classes, or 1 \
             for a regression target), so the dense layers after --conv must end with {classes}"
        )
    } else {
        format!(
            "--layers {list}: the {dataset} data set has {features} features and {classes} \
             outputs (its classes, or 1 for a regression target), so the layers must start \
             with {features} and end with {classes}"
        )
    }))
}

/// Opens the backend for `device` with the options of `args`; a missing GPU is reported, not
/// fatal to the other device.
pub(super) fn open_backend(
    device: Device,
    args: &RunArgs,
) -> Result<Box<dyn Backend>, crate::i18n::Said> {
    open_backend_with(device, args, args.threads)
}

/// As [`open_backend`], with `threads` CPU kernel threads instead of `args`'s (the CPU backend
/// refuses more than it can start).
pub(super) fn open_backend_with(
    device: Device,
    args: &RunArgs,
    threads: usize,
) -> Result<Box<dyn Backend>, crate::i18n::Said> {
    let options = OpenOptions {
        cpu_threads: threads,
        split: args.split.into(),
        gpu: GpuChoice::Auto,
        tuning: crate::app::tuning_cache_path(),
    };
    backend::open(device, &options)
}

/// Refuses, before anything is allocated, a run whose buffers of `rows` rows (the batch, or an
/// inference request: `flag` names the setting) are more than `backend`'s GPU can bind, naming
/// the setting and the most rows that fit. Nothing to check on the CPU.
pub(super) fn check_fits(
    backend: &dyn Backend,
    session: &Session,
    rows: usize,
    flag: &str,
) -> Result<(), super::failure::RunError> {
    let Some(adapter) = backend.adapter_summary() else {
        return Ok(());
    };
    let spec = session.config.model_spec(&session.data);
    let eval = spec.eval_rows(crate::train::eval_rows(&session.data));
    crate::train::check_buffers(&spec, rows.max(eval), &adapter)
        .map(drop)
        .map_err(|e| {
            let fit = crate::train::check_buffers(&spec, 1, &adapter);
            let advice = match fit {
                Ok(max_rows) if max_rows >= eval => {
                    format!("; on this GPU choose {flag} {} or fewer", max_rows.max(1))
                }
                // Even one row, or the evaluation's rows, do not fit: the model is too wide.
                _ => " (even a small batch does not fit: narrow the layers)".to_owned(),
            };
            super::failure::RunError::setting(format!("{flag} {rows}: {e}{advice}"))
        })
}

/// The devices `--device cpu|gpu|both` names.
pub(super) fn parse_devices(text: &str) -> Result<Vec<Device>, Failure> {
    match text {
        "cpu" => Ok(vec![Device::Cpu]),
        "gpu" => Ok(vec![Device::Gpu]),
        "both" => Ok(vec![Device::Cpu, Device::Gpu]),
        other => Err(Failure::BadInput(format!(
            "--device `{other}`: choose cpu, gpu or both"
        ))),
    }
}

/// The layers `--model` names: a preset, or a model file (a regular file within its budget,
/// UTF-8 TOML; see `nn/model_file.rs`).
fn load_model(given: &str) -> Result<Vec<crate::nn::LayerSpec>, Failure> {
    use crate::nn::{MODEL_PRESETS, parse_model, preset};
    if let Some(layers) = preset(given) {
        return Ok(layers);
    }
    let bad = |why: String| Failure::BadInput(format!("--model {given}: {why}"));
    let path = std::path::Path::new(given);
    if !path.exists() {
        let presets: Vec<&str> = MODEL_PRESETS.iter().map(|p| p.name).collect();
        return Err(bad(format!(
            "no such file, and no preset of that name ({})",
            presets.join(", ")
        )));
    }
    let text = crate::files::read_text(path, crate::files::FileKind::Model)
        .map_err(|e| bad(e.text(crate::i18n::Lang::En).to_owned()))?;
    parse_model(&text).map_err(bad)
}
