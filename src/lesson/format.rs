//! A lesson file: TOML with both languages side by side, read field by field with every field
//! named, and checked before any of it is shown. A teacher's own file goes through the same
//! reading as the shipped ones, so a typo gets a message naming the field and what was expected,
//! never a half-loaded lesson.

use serde::Deserialize;

use super::figures::SHARES;
use crate::i18n::Lang;

/// A text in both languages.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    /// English.
    pub en: String,
    /// Simplified Chinese.
    pub zh: String,
}

impl Text {
    /// The text in `lang`.
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }
}

/// The view of the central area a lesson opens (the window's tabs, by name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// Both devices' columns.
    #[default]
    Training,
    /// The data set's preview.
    Data,
    /// The batch journey.
    Journey,
    /// Where the memory goes.
    Memory,
    /// What 16-bit formats do.
    Precision,
    /// Sweeps.
    Experiments,
    /// The simulator.
    Simulator,
}

impl View {
    /// Every view, in the order of the window's tabs.
    pub const ALL: [View; 7] = [
        View::Training,
        View::Data,
        View::Journey,
        View::Memory,
        View::Precision,
        View::Experiments,
        View::Simulator,
    ];
}

/// Which devices a preset trains on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Devices {
    /// The CPU alone.
    Cpu,
    /// The GPU alone.
    Gpu,
    /// Both, side by side.
    Both,
}

impl Devices {
    /// CPU then GPU: whether each takes part.
    pub fn enabled(self) -> [bool; 2] {
        match self {
            Devices::Cpu => [true, false],
            Devices::Gpu => [false, true],
            Devices::Both => [true, true],
        }
    }
}

/// Settings a lesson (or one of its probes, or a Try step) gives; what it leaves out is the
/// app's default, so a lesson runs the same whatever the user had set before.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// A generator (spiral, moons, circles, xor, blobs) or a shipped set (mnist, iris, …).
    pub dataset: Option<String>,
    /// Points of a generator.
    pub samples: Option<usize>,
    /// Hidden-layer widths.
    pub hidden: Option<Vec<usize>>,
    /// Convolution blocks' filters (a CNN on image data).
    pub conv: Option<Vec<usize>>,
    /// A model preset instead of the hidden layers (`gpt-tiny`, `gpt-baby`, …).
    pub model: Option<String>,
    /// Characters a window of a text (a language model's context length).
    pub context: Option<usize>,
    /// relu, tanh or sigmoid.
    pub activation: Option<String>,
    /// sgd, momentum, adam or adamw.
    pub optimizer: Option<String>,
    /// Learning rate.
    pub lr: Option<f32>,
    /// Rows per batch (per micro-batch, accumulating).
    pub batch: Option<usize>,
    /// Micro-batches summed before each update (gradient accumulation).
    pub accumulate: Option<u32>,
    /// Blocks a checkpointed segment (activation checkpointing; 0: off).
    pub checkpoint: Option<u32>,
    /// fp32, fp16, bf16 or mixed.
    pub precision: Option<String>,
    /// Data-loader worker threads.
    pub workers: Option<usize>,
    /// A simulated delay before each batch is read, in ms.
    pub storage_latency_ms: Option<f32>,
    /// `auto`, or read the loss every N steps.
    pub sync_every: Option<String>,
    /// Seed of the weights and the batch order.
    pub seed: Option<u64>,
    /// Which devices train.
    pub devices: Option<Devices>,
    /// The view to open.
    pub view: Option<View>,
}

impl Preset {
    /// `self` with every setting `patch` gives replaced by the patch's.
    #[must_use]
    pub fn patched(&self, patch: &Preset) -> Preset {
        macro_rules! pick {
            ($($f:ident),*) => { Preset { $($f: patch.$f.clone().or_else(|| self.$f.clone())),* } };
        }
        pick!(
            dataset,
            samples,
            hidden,
            conv,
            model,
            context,
            activation,
            optimizer,
            lr,
            batch,
            accumulate,
            checkpoint,
            precision,
            workers,
            storage_latency_ms,
            sync_every,
            seed,
            devices,
            view
        )
    }

    /// Whether every setting `self` gives is as `other` has it (a Try step's change is made).
    pub fn is_met_by(&self, other: &Preset) -> bool {
        macro_rules! met {
            ($($f:ident),*) => { true $(&& self.$f.as_ref().is_none_or(|v| other.$f.as_ref() == Some(v)))* };
        }
        met!(
            dataset,
            samples,
            hidden,
            conv,
            model,
            context,
            activation,
            optimizer,
            lr,
            batch,
            accumulate,
            checkpoint,
            precision,
            workers,
            storage_latency_ms,
            sync_every,
            seed,
            devices,
            view
        )
    }
}

/// What a probe measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// Timed steps on each device: samples/s and step time.
    Speed,
    /// One setting over several values on each device.
    Sweep,
    /// Recorded steps: where each step's time went.
    Breakdown,
    /// Bytes by role after a few steps.
    Memory,
    /// The simulator's prediction on a hardware profile (simulated, never measured).
    Simulate,
    /// Training for a few epochs on each device: the loss and accuracy it reaches, the updates
    /// and the time it takes, and the time to reach a target accuracy.
    Converge,
    /// A few steps in the preset's precision: the share of the gradients lost to zero while
    /// stored in 16 bits, and the loss scale.
    Precision,
    /// A trained model serving requests one at a time: each request's latency, and the rows a
    /// second it answers in batches.
    Serve,
}

impl ProbeKind {
    /// The name in files and figure names.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Speed => "speed",
            ProbeKind::Sweep => "sweep",
            ProbeKind::Breakdown => "breakdown",
            ProbeKind::Memory => "memory",
            ProbeKind::Simulate => "simulate",
            ProbeKind::Converge => "converge",
            ProbeKind::Precision => "precision",
            ProbeKind::Serve => "serve",
        }
    }
}

/// Figures every run knows where a GPU adapter was opened: its name and the API wgpu drove it
/// through.
pub const CONTEXT: [&str; 2] = ["adapter.name", "adapter.api"];

/// The devices' names in figure names.
const DEVICES: [&str; 2] = ["cpu", "gpu"];

impl ProbeKind {
    /// The figure names a probe of this kind named `name` can produce (`NAME.gpu.step_ms`).
    pub fn figure_names(self, name: &str) -> Vec<String> {
        let per_device = |parts: &[&str]| -> Vec<String> {
            DEVICES
                .iter()
                .flat_map(|d| parts.iter().map(move |p| format!("{name}.{d}.{p}")))
                .collect()
        };
        let plain = |parts: &[&str]| -> Vec<String> {
            parts.iter().map(|p| format!("{name}.{p}")).collect()
        };
        match self {
            ProbeKind::Speed => {
                let mut v = per_device(&[
                    "samples_per_s",
                    "step_ms",
                    "tokens_per_s",
                    "energy_j",
                    "samples_per_j",
                ]);
                v.extend(plain(&[
                    "faster",
                    "slower",
                    "speedup",
                    "gpu.dispatches_per_step",
                ]));
                v
            }
            ProbeKind::Sweep => {
                let mut v = per_device(&["gain", "first_samples_per_s", "last_samples_per_s"]);
                v.extend(plain(&["first", "last", "crossover"]));
                v
            }
            ProbeKind::Breakdown => {
                let mut parts = SHARES.to_vec();
                parts.extend([
                    "busy_share",
                    "step_ms",
                    "products_flops_share",
                    "products_time_share",
                    "attention_flops_share",
                    "attention_time_share",
                ]);
                per_device(&parts)
            }
            ProbeKind::Converge => per_device(&[
                "loss",
                "accuracy",
                "epochs",
                "updates",
                "seconds",
                "seconds_to_target",
                "samples_per_s",
            ]),
            ProbeKind::Precision => {
                per_device(&["grad_underflow_share", "loss_scale", "skipped_steps"])
            }
            ProbeKind::Serve => per_device(&["request_ms", "request_p99_ms", "batched_rows_per_s"]),
            ProbeKind::Memory => {
                let mut parts: Vec<String> = crate::memory::Role::ALL
                    .iter()
                    .map(|r| format!("{}_bytes", r.as_str()))
                    .collect();
                parts.extend(["total_bytes".to_owned(), "peak_bytes".to_owned()]);
                let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
                per_device(&parts)
            }
            ProbeKind::Simulate => plain(&[
                "profile",
                "samples_per_s",
                "step_ms",
                "copy_share",
                "kernel_share",
                "launch_share",
                "compute_share",
                "other_share",
                "kernels_per_step",
                "request_ms",
            ]),
        }
    }
}

/// A measurement a lesson makes: its figures are named `NAME.…` (`speed.gpu.samples_per_s`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// What it measures.
    pub kind: ProbeKind,
    /// The first part of its figures' names (default: the kind's name).
    pub name: Option<String>,
    /// Settings that differ from the lesson's preset for this probe.
    #[serde(default)]
    pub set: Preset,
    /// A sweep's setting and values, as `batchscope sweep --vary` takes them (`batch=16,256`).
    pub vary: Option<String>,
    /// A simulation's hardware profile id.
    pub profile: Option<String>,
    /// A convergence probe's epochs (at most [`MAX_EPOCHS`]; default 5).
    pub epochs: Option<u32>,
    /// A convergence probe's target test accuracy, 0 to 1: the time to reach it is measured.
    pub target: Option<f64>,
}

impl Probe {
    /// The first part of its figures' names.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(self.kind.as_str())
    }
}

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A question with choices, answered before anything runs.
    Predict,
    /// The preset is applied and the probes run.
    Run,
    /// A part of the window to look at.
    Watch,
    /// A headline filled from this run's figures.
    Explain,
    /// One change to make, and what should happen.
    Try,
}

/// A part of the window a step points at. The window must draw each of them where a lesson
/// can open it (a kittest checks that every one exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Widget {
    /// The Run button.
    RunButton,
    /// The CPU column's figures.
    CpuColumn,
    /// The GPU column's figures.
    GpuColumn,
    /// The setup's batch size.
    BatchSetting,
    /// The setup's loader workers.
    WorkersSetting,
    /// The setup's storage latency.
    StorageSetting,
    /// The setup's "Read the loss" (the sync points).
    SyncSetting,
    /// The setup's hidden layers.
    HiddenSetting,
    /// Both devices' loss on one axis of steps.
    LossCompared,
    /// The journey tab's table by kind of op.
    OpKinds,
    /// The Experiments tab's serving section.
    Serving,
    /// The journey tab's device-mismatch demonstration.
    Mismatch,
    /// The setup's precision.
    PrecisionSetting,
    /// The setup's gradient accumulation.
    AccumulateSetting,
    /// The setup's activation checkpointing.
    CheckpointSetting,
    /// The journey's step breakdown.
    StepBreakdown,
    /// The journey's timeline.
    Timeline,
    /// The memory view's chart by role.
    MemoryChart,
    /// The Experiments tab's sweep plot.
    SweepPlot,
    /// The precision view's histograms.
    PrecisionHistogram,
    /// The simulator's roofline.
    Roofline,
    /// The simulator's ecosystem card.
    Ecosystem,
}

/// When a headline applies: lessons give one per case, and the first that applies and whose
/// figures were all measured is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// Always.
    #[default]
    Any,
    /// A GPU adapter took part, hardware or software.
    Gpu,
    /// A hardware GPU took part.
    HardwareGpu,
    /// A software adapter (lavapipe, llvmpipe, WARP) stood in for the GPU.
    SoftwareGpu,
    /// No GPU adapter could be opened.
    NoGpu,
}

/// One wording of a headline.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Headline {
    /// The case it applies to.
    #[serde(default)]
    pub when: When,
    /// A figure this wording depends on: it applies only where the figure was measured and lies
    /// in `min..max` (so a wording that says "slower" is shown only when it was).
    pub figure: Option<String>,
    /// The smallest value of `figure` it applies to.
    pub min: Option<f64>,
    /// The value of `figure` from which it no longer applies.
    pub max: Option<f64>,
    /// English, with `{figure}` or `{figure / figure}` placeholders.
    pub en: String,
    /// Simplified Chinese, with the same placeholders.
    pub zh: String,
}

impl Headline {
    /// The wording in `lang`.
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }
}

/// Which way a figure should move after a Try step's change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// It should grow.
    Rise,
    /// It should shrink.
    Fall,
}

/// One step of a lesson.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What the step does.
    pub kind: StepKind,
    /// What the step says.
    pub text: Text,
    /// The part of the window to highlight.
    pub watch: Option<Widget>,
    /// Predict: the answers to choose from.
    #[serde(default)]
    pub choices: Vec<Text>,
    /// Predict: the figure the answer is read from; Try: the figure that should move.
    pub figure: Option<String>,
    /// Predict: where `figure` cannot be measured (no GPU to open), the figure the answer is
    /// read from instead, a simulated one; the lesson then says the answer is the simulator's.
    pub without_gpu: Option<String>,
    /// Predict: choice `i` is right when the figure lies between `bounds[i-1]` and `bounds[i]`.
    #[serde(default)]
    pub bounds: Vec<f64>,
    /// Explain: the headline's wordings.
    #[serde(default)]
    pub headlines: Vec<Headline>,
    /// Try: the change to make.
    pub set: Option<Preset>,
    /// Try: where the change starts from, where that is not the lesson's preset (a lesson that
    /// shows several causes starts each Try from its own: a sync every step, say).
    pub from: Option<Preset>,
    /// Try: which way `figure` should move.
    pub expect: Option<Direction>,
    /// Try: more figures that should move the same way (another device's, or the simulator's
    /// for a real GPU); each figure's probe is run again before and after the change.
    #[serde(default)]
    pub figures: Vec<String>,
    /// Try: what to say when a figure moved the other way: why it can, on a machine like this.
    pub if_opposite: Option<Text>,
    /// Try: what to say when the change was too close to call on this machine.
    pub if_too_close: Option<Text>,
    /// What the presenter may say at this step, shown only in the speaker notes.
    pub notes: Option<Text>,
}

impl Step {
    /// A Try step's settings once its change is made: where it starts from, then the change.
    pub fn try_settings(&self) -> Option<Preset> {
        let from = self.from.clone().unwrap_or_default();
        self.set.as_ref().map(|set| from.patched(set))
    }

    /// A Try step's figures: `figure`, then `figures`.
    pub fn try_figures(&self) -> Vec<&str> {
        self.figure
            .iter()
            .chain(&self.figures)
            .map(String::as_str)
            .collect()
    }
}

/// The probe a figure expression's first name comes from (`speed` of `speed.cpu.step_ms`).
pub fn probe_of(expr: &str) -> &str {
    expr.trim()
        .split(['.', '/'])
        .next()
        .unwrap_or_default()
        .trim()
}

/// A guided lesson.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// Short name, used on the command line (`--lesson ID`) and in saved sessions.
    pub id: String,
    /// The article's section it teaches (0: the first run).
    pub section: u32,
    /// Its title.
    pub title: Text,
    /// One or two sentences on what it shows.
    pub summary: Text,
    /// The settings it starts from.
    pub preset: Preset,
    /// What it measures.
    #[serde(default)]
    pub probes: Vec<Probe>,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

/// Largest lesson file read: the longest shipped one is a few KiB.
pub const MAX_FILE_BYTES: u64 = 256 << 10;
/// Most steps in a lesson.
pub const MAX_STEPS: usize = 40;
/// Most probes in a lesson (each takes a few seconds).
pub const MAX_PROBES: usize = 8;
/// Most epochs a convergence probe trains.
pub const MAX_EPOCHS: u32 = 50;
/// Longest text of one field, in characters.
pub const MAX_TEXT_CHARS: usize = 4000;

impl Lesson {
    /// The figure names this lesson's probes can produce.
    pub fn producible(&self) -> Vec<String> {
        self.probes
            .iter()
            .flat_map(|p| p.kind.figure_names(p.name()))
            .chain(CONTEXT.iter().map(|&n| n.to_owned()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small lesson that reads; each test breaks one thing of it.
    const GOOD: &str = r#"
id = "tiny"
section = 4
title = { en = "Tiny", zh = "小" }
summary = { en = "A test.", zh = "测试。" }
[preset]
dataset = "spiral"
batch = 16
[[probes]]
kind = "speed"
[[steps]]
kind = "predict"
text = { en = "Which?", zh = "哪个？" }
figure = "speed.gpu.samples_per_s / speed.cpu.samples_per_s"
bounds = [1.0]
choices = [{ en = "CPU", zh = "CPU" }, { en = "GPU", zh = "GPU" }]
[[steps]]
kind = "explain"
text = { en = "So:", zh = "于是：" }
[[steps.headlines]]
en = "The CPU trained {speed.cpu.samples_per_s}."
zh = "CPU 训练了 {speed.cpu.samples_per_s}。"
"#;

    fn error_of(from: &str, to: &str) -> String {
        assert!(GOOD.contains(from), "{from}");
        Lesson::parse(&GOOD.replacen(from, to, 1))
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_good_lesson_reads() {
        let lesson = Lesson::parse(GOOD).expect("reads");
        assert_eq!(lesson.steps.len(), 2);
        assert_eq!(lesson.probes[0].name(), "speed");
    }

    #[test]
    fn each_mistake_in_a_lesson_file_is_named() {
        let cases = [
            // A misspelt field: serde names it.
            ("batch = 16", "bacth = 16", "bacth"),
            ("kind = \"speed\"", "kind = \"sped\"", "sped"),
            ("id = \"tiny\"", "id = \"Tiny Lesson\"", "id `Tiny Lesson`"),
            (
                "{speed.cpu.samples_per_s}.",
                "{speed.cpu.rate}.",
                "speed.cpu.rate",
            ),
            (
                "{speed.cpu.samples_per_s}。",
                "{speed.gpu.samples_per_s}。",
                "different figures",
            ),
            (
                "{speed.cpu.samples_per_s}.",
                "{speed.cpu.samples_per_s.",
                "without its",
            ),
            (
                "bounds = [1.0]",
                "bounds = [1.0, 2.0]",
                "2 choices need 1 bounds",
            ),
            ("bounds = [1.0]", "bounds = [nan]", "finite"),
            ("dataset = \"spiral\"", "dataset = 7", "dataset"),
            ("zh = \"于是：\"", "zh = \"  \"", "empty"),
            ("kind = \"speed\"", "kind = \"sweep\"", "vary"),
        ];
        for (from, to, says) in cases {
            let error = error_of(from, to);
            assert!(error.contains(says), "{to}: {error}");
        }
        let long = format!("en = \"{}\"", "a".repeat(MAX_TEXT_CHARS + 1));
        assert!(error_of("en = \"Which?\"", &long).contains("longer"));
        // The teacher reads it in their language: the step and the fault, the file's words kept.
        let zh = Lesson::parse(&GOOD.replacen("bounds = [1.0]", "bounds = [1.0, 2.0]", 1))
            .expect_err("refused");
        let zh = zh.text(Lang::Zh);
        assert!(
            zh.starts_with("第 1 步：") && zh.contains("2 个选项之间需要 1 个界限"),
            "{zh}"
        );
    }

    #[test]
    fn the_readmes_example_lesson_reads() {
        let readme = include_str!("../../docs/guide/src/en/lessons-and-presenter.md");
        let start = readme.find("```toml\nid = ").expect("the example") + "```toml\n".len();
        let end = start + readme[start..].find("```").expect("its end");
        let lesson = Lesson::parse(&readme[start..end]).expect("the README's example reads");
        assert_eq!(lesson.steps.len(), 4);
    }

    #[test]
    fn a_preset_patch_overrides_only_what_it_gives() {
        let base = Preset {
            batch: Some(16),
            workers: Some(0),
            ..Preset::default()
        };
        let patch = Preset {
            batch: Some(256),
            ..Preset::default()
        };
        let patched = base.patched(&patch);
        assert_eq!((patched.batch, patched.workers), (Some(256), Some(0)));
        assert!(patch.is_met_by(&patched));
        assert!(!patch.is_met_by(&base));
    }
}
