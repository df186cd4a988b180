//! What a sweep varies: the setting, its values, and the sessions that train with each.

use std::sync::Arc;

use serde::Serialize;

use crate::device::Device;
use crate::precision::Precision;
use crate::train::{Session, SessionError, TrainConfig};

/// The setting a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Parameter {
    /// Rows per batch.
    Batch,
    /// The width of every hidden layer.
    Width,
    /// The number of hidden layers (each as wide as the first).
    Depth,
    /// The CPU's kernel threads (the GPU does not take part).
    Threads,
    /// Data-loader worker threads.
    Workers,
    /// The number format.
    Precision,
    /// A language model's context length (the text cut into windows of each).
    Context,
}

impl Parameter {
    /// Every parameter, in the order the tab lists them.
    pub const ALL: [Parameter; 7] = [
        Parameter::Batch,
        Parameter::Width,
        Parameter::Depth,
        Parameter::Threads,
        Parameter::Workers,
        Parameter::Precision,
        Parameter::Context,
    ];

    /// The name used on the command line, in JSON and in CSV columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Parameter::Batch => "batch",
            Parameter::Width => "width",
            Parameter::Depth => "depth",
            Parameter::Threads => "threads",
            Parameter::Workers => "workers",
            Parameter::Precision => "precision",
            Parameter::Context => "context",
        }
    }

    /// Parses a name as [`Parameter::as_str`] writes it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// Whether `device` takes part in a sweep of this parameter.
    pub fn applies_to(self, device: Device) -> bool {
        self != Parameter::Threads || device == Device::Cpu
    }
}

/// One value of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A count: rows, units, layers, threads or workers.
    Count(usize),
    /// A number format.
    Precision(Precision),
}

impl Value {
    /// The value on a numeric axis, if it has one.
    pub fn number(self) -> Option<f64> {
        match self {
            Value::Count(n) => Some(n as f64),
            Value::Precision(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Count(n) => write!(f, "{n}"),
            Value::Precision(p) => f.write_str(p.as_str()),
        }
    }
}

/// A sweep: which setting, and its values in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The setting.
    pub parameter: Parameter,
    /// Its values, in the order they are measured and plotted.
    pub values: Vec<Value>,
}

/// Most values one sweep measures.
pub const MAX_VALUES: usize = 32;

impl Sweep {
    /// Parses `batch=1,4,16` (or `precision=fp32,fp16`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let names: Vec<&str> = Parameter::ALL.iter().map(|p| p.as_str()).collect();
        let (name, list) = text.split_once('=').ok_or_else(|| {
            format!(
                "`{text}`: give a setting and its values, e.g. batch=1,4,16,64 (settings: {})",
                names.join(", ")
            )
        })?;
        let parameter = Parameter::parse(name.trim()).ok_or_else(|| {
            format!(
                "`{name}`: not a setting a sweep varies; choose {}",
                names.join(", ")
            )
        })?;
        let values = list
            .split(',')
            .map(|v| {
                let v = v.trim();
                if parameter == Parameter::Precision {
                    Precision::parse(v).map(Value::Precision).ok_or_else(|| {
                        format!("`{v}`: not a precision; choose fp32, fp16, bf16 or mixed")
                    })
                } else {
                    v.parse::<usize>()
                        .map(Value::Count)
                        .map_err(|e| format!("`{v}`: {e}; give whole numbers, e.g. 1,4,16"))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if parameter == Parameter::Threads {
            for v in &values {
                if let Value::Count(n) = v {
                    crate::backend::cpu::check_threads(*n)?;
                }
            }
        }
        if values.is_empty() || values.len() > MAX_VALUES {
            return Err(format!(
                "{} values: give between 1 and {MAX_VALUES}",
                values.len()
            ));
        }
        Ok(Self { parameter, values })
    }

    /// The sessions of the sweep, one per value, on `session`'s data (regenerated with more
    /// samples where the generator's are too few for the largest batch; the note says so).
    /// A value whose settings are refused gets its reason instead.
    pub fn sessions(
        &self,
        session: &Session,
    ) -> (Vec<Result<Session, SessionError>>, Option<Raised>) {
        let mut base = session.clone();
        let mut note = None;
        let largest_batch = self
            .values
            .iter()
            .filter_map(|v| match (self.parameter, v) {
                // A batch the settings refuse anyway raises nothing.
                (Parameter::Batch, Value::Count(n)) if *n <= crate::train::MAX_BATCH => Some(*n),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        if largest_batch > base.data.train_rows()
            && base.config.source == crate::data::source::DataSource::Generated
        {
            let share = f64::from(base.config.data.test_fraction);
            let wanted = (largest_batch as f64 / (1.0 - share)).ceil() as usize + 1;
            let mut config = base.config.clone();
            config.data.samples = wanted.min(crate::data::MAX_SAMPLES);
            if let Ok(bigger) = Session::new(config) {
                note = Some((base.config.data.samples, bigger.config.data.samples));
                base = bigger;
            }
        }
        let sessions = self
            .values
            .iter()
            .map(|&value| {
                let mut config = with_value(&base.config, self.parameter, value);
                // Another context cuts the text again; any other setting trains on the same data.
                let data = match (self.parameter, value) {
                    (Parameter::Context, Value::Count(n)) => {
                        let recut = base.data.with_context(n).ok_or_else(context_needs_text)?;
                        config.data.context = n;
                        Arc::new(recut)
                    }
                    _ => Arc::clone(&base.data),
                };
                config.validate(&data)?;
                Ok(Session {
                    config,
                    data,
                    epoch: base.epoch,
                })
            })
            .collect();
        (sessions, note)
    }
}

/// The generator's samples before and after a sweep raised them for its largest batch.
pub type Raised = (usize, usize);

/// The context was swept over data that is not a text.
fn context_needs_text() -> SessionError {
    use crate::i18n::{Lang, LayerKey};
    SessionError::Setting(crate::setting::SettingError::ModelShape {
        en: Lang::En.tr(LayerKey::ContextNeedsText).to_owned(),
        zh: Lang::Zh.tr(LayerKey::ContextNeedsText).to_owned(),
    })
}

/// `config` with `parameter` set to `value` (threads are the backend's, not the config's).
pub fn with_value(config: &TrainConfig, parameter: Parameter, value: Value) -> TrainConfig {
    let mut config = config.clone();
    match (parameter, value) {
        (Parameter::Batch, Value::Count(n)) => config.batch = n,
        (Parameter::Width, Value::Count(n)) => {
            let depth = config.hidden.len().max(1);
            config.hidden = vec![n; depth];
        }
        (Parameter::Depth, Value::Count(n)) => {
            let width = config.hidden.first().copied().unwrap_or(16);
            config.hidden = vec![width; n];
        }
        (Parameter::Workers, Value::Count(n)) => config.pipeline.loader.workers = n,
        (Parameter::Precision, Value::Precision(p)) => config.precision = p,
        _ => {}
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweep::iqr_of_sorted;

    #[test]
    fn sweeps_parse_and_say_what_was_wrong() {
        let s = Sweep::parse("batch=1,4,16").expect("valid");
        assert_eq!(s.parameter, Parameter::Batch);
        assert_eq!(
            s.values,
            [Value::Count(1), Value::Count(4), Value::Count(16)]
        );
        let p = Sweep::parse("precision=fp32,bf16").expect("valid");
        assert_eq!(p.values[1], Value::Precision(Precision::Bf16));
        for (bad, says) in [
            ("batch", "give a setting and its values"),
            ("colour=1,2", "not a setting a sweep varies"),
            ("batch=1,x", "`x`"),
            ("precision=fp8", "not a precision"),
            ("threads=1,5000", "5000 threads: choose at most 1024"),
        ] {
            let err = Sweep::parse(bad).expect_err(bad);
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(iqr_of_sorted(&[1.0, 2.0, 3.0, 4.0, 5.0]) == 2.0);
    }

    /// A sweep of the context cuts the text again for each length (the model's input and the
    /// attention's T² with it); over data that is not a text it is refused in words.
    #[test]
    fn a_context_sweep_cuts_the_text_again_for_each_length() {
        use crate::data::text_data::{load_shipped_text, shipped_text};
        let set = shipped_text("poems").expect("shipped");
        let table = load_shipped_text(set, &|_| true).expect("reads");
        let config = TrainConfig {
            model: crate::nn::preset("gpt-tiny"),
            batch: 4,
            ..TrainConfig::default()
        };
        let session = Session::from_table(config, &table).expect("a session");
        let sweep = Sweep::parse("context=16,128").expect("valid");
        let (sessions, _) = sweep.sessions(&session);
        for (s, t) in sessions.iter().zip([16, 128]) {
            let s = s.as_ref().expect("each length trains");
            assert_eq!((s.data.features, s.data.targets_per_row()), (t, t));
            assert_eq!(s.config.data.context, t);
            let probs: usize = s
                .config
                .model_spec(&s.data)
                .footprints()
                .iter()
                .map(|f| f.saved + f.saved_pass)
                .sum();
            // Two attention layers of two heads keep T² a head; two LayerNorms a block and the
            // last keep 2 a position.
            assert_eq!(probs, 2 * 2 * t * t + 5 * 2 * t);
        }
        let spiral = Session::new(TrainConfig::default()).expect("spiral");
        let (refused, _) = sweep.sessions(&spiral);
        let err = refused[0].as_ref().expect_err("not a text");
        assert!(err.text(crate::i18n::Lang::En).contains("text"), "{err}");
    }

    #[test]
    fn each_value_changes_only_its_setting() {
        let config = TrainConfig::default();
        assert_eq!(
            with_value(&config, Parameter::Width, Value::Count(64)).hidden,
            [64, 64]
        );
        assert_eq!(
            with_value(&config, Parameter::Depth, Value::Count(3)).hidden,
            [16, 16, 16]
        );
        let workers = with_value(&config, Parameter::Workers, Value::Count(2));
        assert_eq!(workers.pipeline.loader.workers, 2);
        assert_eq!(workers.hidden, config.hidden);
    }
}
