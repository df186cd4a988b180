//! The memory of a model predicted from its description, role by role, with the formula behind
//! each figure. For BatchScope's own MLPs it predicts exactly what the backends allocate (the
//! tests hold it to that); for well-known large models it shows the static part — parameters,
//! gradients, optimizer state — which is what makes them need several GPUs.

use serde::Serialize;

use crate::i18n::{Arg, LeverKey, MsgKey, Said};
use crate::memory::Role;
use crate::nn::{Loss, ModelSpec, OptimizerKind};
use crate::precision::DType;
use crate::precision::Precision;
use crate::units::grouped;

/// Bytes of one FP32 value.
const FP32: u64 = 4;

/// One role's predicted bytes and how they were worked out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Line {
    /// The role.
    pub role: Role,
    /// Predicted bytes.
    pub bytes: u64,
    /// The formula with its numbers, e.g. `2 × 101,770 parameters × 4 B`, in both languages.
    pub formula: Said,
}

/// A whole prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// One line per role the estimator predicts.
    pub lines: Vec<Line>,
}

impl Estimate {
    /// Predicted bytes of `role` (0 where it predicts none).
    pub fn bytes(&self, role: Role) -> u64 {
        self.lines
            .iter()
            .filter(|l| l.role == role)
            .map(|l| l.bytes)
            .sum()
    }

    /// Predicted bytes in all.
    pub fn total(&self) -> u64 {
        self.lines.iter().map(|l| l.bytes).sum()
    }
}

/// What a network of `spec` trained with `optimizer` on batches of `batch` rows in
/// `precision`, evaluating `eval_rows` rows at a time, holds, role by role, as BatchScope
/// allocates it: every tensor of a step is made up front.
///
/// FP16 and BF16 store every tensor of the step in 2 bytes a value; mixed precision keeps the
/// FP32 master parameters, gradients and optimizer state, adds 2-byte copies of the weights and
/// stores activations and backward temporaries in 2 bytes. Kernels compute in f32, so 16-bit
/// training adds four f32 working copies as large as the largest 16-bit tensor. Every layer's
/// output is an activation and its gradient a backward temporary (a convolution's, before and
/// after pooling, included: neither device makes patch matrices, so the estimate is the same on
/// both); `LayerNorm` keeps two f32 statistics a row.
pub fn network(
    spec: &ModelSpec,
    optimizer: OptimizerKind,
    batch: usize,
    precision: Precision,
    eval_rows: usize,
) -> Estimate {
    network_with(spec, optimizer, batch, precision, eval_rows, Levers::NONE)
}

/// The memory levers of the article's fourth and sixth sections that a run pulls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Levers {
    /// Micro-batches summed before each update (1: none); `batch` is then a micro-batch's rows.
    pub micro_batches: u32,
    /// Blocks a checkpointed segment (0: no activation checkpointing).
    pub checkpoint: u32,
}

impl Levers {
    /// Neither lever pulled.
    pub const NONE: Self = Self {
        micro_batches: 1,
        checkpoint: 0,
    };
}

impl Default for Levers {
    fn default() -> Self {
        Self::NONE
    }
}

/// [`network`] with `levers` pulled: accumulating, `batch` is a micro-batch's rows and each
/// parameter's gradient has a running sum beside it.
pub fn network_with(
    spec: &ModelSpec,
    optimizer: OptimizerKind,
    batch: usize,
    precision: Precision,
    eval_rows: usize,
    levers: Levers,
) -> Estimate {
    let c = Counts::of(spec, batch, precision);
    let (p, master) = (c.p, c.master);
    let states = optimizer.state_tensors() as u64;
    let (sums, sums_formula) = if levers.micro_batches > 1 {
        let n = levers.micro_batches;
        (p * master, Said::new(LeverKey::FormulaSums, &[("n", &n)]))
    } else {
        (0, Said::default())
    };
    let lines = vec![
        c.parameters_line(),
        Line {
            role: Role::Gradients,
            bytes: p * master + sums,
            formula: Said::new(
                MsgKey::FormulaGradients,
                &[("p", &grouped(p)), ("bytes", &master)],
            )
            .then(&sums_formula),
        },
        Line {
            role: Role::OptimizerState,
            bytes: states * p * master,
            formula: Said::with(
                MsgKey::FormulaOptimizer,
                &[
                    ("states", Arg::Plain(&states)),
                    ("optimizer", Arg::Said(&optimizer_name(optimizer))),
                    ("p", Arg::Plain(&grouped(p))),
                    ("bytes", Arg::Plain(&master)),
                ],
            ),
        },
        match levers.checkpoint {
            0 => c.activations_line(),
            blocks => c.checkpointed_line(spec, blocks),
        },
        c.inputs_line(spec),
        c.workspace_line(spec, eval_rows, precision),
    ];
    Estimate { lines }
}

/// The numbers every line of a network's estimate is made of.
struct Counts {
    /// Parameters.
    p: u64,
    /// Rows a batch.
    b: u64,
    features: u64,
    /// Values a sample of every layer's output, and the outputs' values in words.
    outputs: u64,
    widths: String,
    /// f32 values a sample the layers keep for backward besides their outputs.
    saved: u64,
    /// Values a sample they keep for backward in the passes' format (attention's
    /// probabilities), and the most one layer keeps.
    saved_pass: u64,
    largest_saved_pass: u64,
    /// Whether the first layer writes the input's gradient.
    input_gradient: bool,
    /// Whether a layer is a convolution.
    convolution: bool,
    /// Values of the largest parameter tensor, and of the widest layer output a sample.
    largest_param: u64,
    largest_output: u64,
    /// Bytes of a value in the forward and backward passes, and of a stored parameter.
    passes: u64,
    master: u64,
    mixed: bool,
}

impl Counts {
    fn of(spec: &ModelSpec, batch: usize, precision: Precision) -> Self {
        let b = batch as u64;
        let passes = DType::of(precision.format()).bytes() as u64;
        let mixed = precision == Precision::Mixed;
        // Built once: every figure below is read off the layers' footprints.
        let footprints = spec.footprints();
        let outputs: Vec<u64> = footprints.iter().map(|f| f.shape.values() as u64).collect();
        Self {
            p: footprints
                .iter()
                .fold(0u64, |sum, f| sum.saturating_add(f.params as u64)),
            b,
            features: spec.inputs() as u64,
            outputs: outputs.iter().sum(),
            widths: outputs
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" + "),
            saved: footprints.iter().map(|f| f.saved as u64).sum(),
            saved_pass: footprints.iter().map(|f| f.saved_pass as u64).sum(),
            largest_saved_pass: footprints
                .iter()
                .map(|f| f.saved_pass as u64)
                .max()
                .unwrap_or(0),
            input_gradient: footprints.first().is_some_and(|f| f.input_gradient),
            convolution: footprints.iter().any(|f| f.convolution.is_some()),
            largest_param: footprints
                .iter()
                .map(|f| f.largest_param as u64)
                .max()
                .unwrap_or(0),
            largest_output: outputs.iter().copied().max().unwrap_or(0),
            passes,
            master: if mixed { FP32 } else { passes },
            mixed,
        }
    }

    /// The parameters, with mixed precision's 16-bit copies.
    fn parameters_line(&self) -> Line {
        let (p, master) = (self.p, self.master);
        let copies = if self.mixed { p * self.passes } else { 0 };
        let copies_formula = if self.mixed {
            Said::new(MsgKey::FormulaCopies, &[("p", &grouped(p))])
        } else {
            Said::default()
        };
        Line {
            role: Role::Parameters,
            bytes: p * master + copies,
            formula: Said::new(
                MsgKey::FormulaParameters,
                &[("p", &grouped(p)), ("bytes", &master)],
            )
            .then(&copies_formula),
        }
    }

    /// Each layer's outputs kept for the backward pass, and what layers keep besides.
    fn activations_line(&self) -> Line {
        let (b, passes) = (self.b, self.passes);
        let mut saved_formula = if self.saved > 0 {
            Said::new(
                MsgKey::FormulaSavedStats,
                &[("b", &b), ("n", &grouped(self.saved))],
            )
        } else {
            Said::default()
        };
        if self.saved_pass > 0 {
            saved_formula = Said::new(
                MsgKey::FormulaSavedProbs,
                &[
                    ("b", &b),
                    ("n", &grouped(self.saved_pass)),
                    ("bytes", &passes),
                ],
            )
            .then(&saved_formula);
        }
        Line {
            role: Role::Activations,
            bytes: b * self.outputs * passes + b * self.saved_pass * passes + b * self.saved * FP32,
            formula: Said::new(
                MsgKey::FormulaActivations,
                &[("b", &b), ("widths", &self.widths), ("bytes", &passes)],
            )
            .then(&saved_formula),
        }
    }

    /// The activations of a checkpointed pass: the kept outputs and one segment's shared
    /// workspace, as the network allocates them.
    fn checkpointed_line(&self, spec: &ModelSpec, blocks: u32) -> Line {
        let Some(c) = crate::nn::checkpointed(spec, self.b as usize, blocks, self.passes) else {
            return self.activations_line();
        };
        Line {
            role: Role::Activations,
            bytes: c.bytes,
            formula: Said::new(
                LeverKey::FormulaCheckpointed,
                &[
                    ("segments", &c.segments),
                    ("kept", &grouped(c.kept_values)),
                    ("work", &grouped(c.work_values)),
                    ("bytes", &self.passes),
                    ("stats", &grouped(c.stats_bytes)),
                ],
            ),
        }
    }

    /// The batch's inputs and its targets (a class a row, or each output).
    fn inputs_line(&self, spec: &ModelSpec) -> Line {
        let (b, features) = (self.b, self.features);
        // Token ids stay f32 in every precision.
        let passes = if crate::nn::reads_tokens(&spec.layer_specs()) {
            FP32
        } else {
            self.passes
        };
        let target_cols = match spec.loss {
            // A class a row of the output: a language model's, one a position.
            Loss::SoftmaxCrossEntropy => {
                spec.footprints()
                    .last()
                    .map_or(1, |f| f.shape.rows_per_sample()) as u64
            }
            Loss::MeanSquaredError => spec.outputs() as u64,
        };
        Line {
            role: Role::Inputs,
            bytes: b * features * passes + b * target_cols * FP32,
            formula: Said::new(
                MsgKey::FormulaInputs,
                &[
                    ("b", &b),
                    ("features", &features),
                    ("bytes", &passes),
                    ("targets", &target_cols),
                ],
            ),
        }
    }

    /// The backward pass's temporaries, the evaluation's rows, and 16-bit formats' working
    /// copy of their largest tensor in f32.
    fn workspace_line(&self, spec: &ModelSpec, eval_rows: usize, precision: Precision) -> Line {
        let (b, passes) = (self.b, self.passes);
        let per_row = spec.eval_values_per_row() as u64;
        let rows = spec.eval_rows(eval_rows) as u64;
        // The largest 16-bit tensor: a parameter, the batch, a batch of a layer's output or of
        // attention's probabilities.
        let largest = (b * self.largest_output)
            .max(b * self.largest_saved_pass)
            .max(self.largest_param)
            .max(b * self.features);
        let (working, working_formula) = if precision == Precision::Fp32 {
            (0, Said::default())
        } else {
            (
                4 * largest * FP32,
                Said::new(MsgKey::FormulaWorking, &[("n", &grouped(largest))]),
            )
        };
        let (input_grad, mut extra) = if self.input_gradient {
            let formula = Said::new(
                MsgKey::FormulaInputGradient,
                &[("b", &b), ("n", &self.features), ("bytes", &passes)],
            );
            (b * self.features, formula)
        } else {
            (0, Said::default())
        };
        if self.convolution {
            extra = extra.then(&Said::new(MsgKey::FormulaNoPatches, &[]));
        }
        Line {
            role: Role::Workspace,
            bytes: (b * self.outputs + input_grad) * passes + (rows * per_row + 3) * FP32 + working,
            formula: Said::with(
                MsgKey::FormulaWorkspace,
                &[
                    ("b", Arg::Plain(&b)),
                    ("widths", Arg::Plain(&self.widths)),
                    ("bytes", Arg::Plain(&passes)),
                    ("extra", Arg::Said(&extra)),
                    ("rows", Arg::Plain(&rows)),
                    ("per_row", Arg::Plain(&per_row)),
                    ("working", Arg::Said(&working_formula)),
                ],
            ),
        }
    }
}

/// The optimizer's name in the formulas.
fn optimizer_name(optimizer: OptimizerKind) -> Said {
    let key = match optimizer {
        OptimizerKind::Sgd => MsgKey::OptimizerSgd,
        OptimizerKind::Momentum => MsgKey::OptimizerMomentum,
        OptimizerKind::Adam => MsgKey::OptimizerAdam,
        OptimizerKind::AdamW => MsgKey::OptimizerAdamW,
    };
    Said::new(key, &[])
}

/// How a large model is trained, for the presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Scheme {
    /// FP32 weights and gradients, Adam's two FP32 moments: 4 + 4 + 8 = 16 bytes per parameter.
    Fp32Adam,
    /// Mixed precision with Adam: FP16 weights and gradients, FP32 master weights and moments:
    /// 2 + 2 + 12 = 16 bytes per parameter (the `ZeRO` paper's accounting).
    MixedAdam,
}

/// A well-known model, by its parameter count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Preset {
    /// Its name.
    pub name: &'static str,
    /// Its trainable parameters.
    pub parameters: u64,
}

/// Models a student has heard of.
pub const PRESETS: [Preset; 3] = [
    Preset {
        name: "ResNet-50",
        parameters: 25_557_032,
    },
    Preset {
        name: "BERT-base",
        parameters: 110_000_000,
    },
    Preset {
        // Proper names only: the same in both languages.
        name: "LLaMA-7B",
        parameters: 6_738_415_616,
    },
];

/// The static memory of training `preset` with `scheme`: parameters, gradients and optimizer
/// state. Activations depend on batch size, sequence length and checkpointing and are not
/// estimated here.
pub fn preset(preset: Preset, scheme: Scheme) -> Estimate {
    let p = preset.parameters;
    let n = grouped(p);
    let lines = match scheme {
        Scheme::Fp32Adam => vec![
            Line {
                role: Role::Parameters,
                bytes: 4 * p,
                formula: Said::new(MsgKey::FormulaFp32, &[("n", &n)]),
            },
            Line {
                role: Role::Gradients,
                bytes: 4 * p,
                formula: Said::new(MsgKey::FormulaFp32, &[("n", &n)]),
            },
            Line {
                role: Role::OptimizerState,
                bytes: 8 * p,
                formula: Said::new(MsgKey::FormulaAdamMoments, &[("n", &n)]),
            },
        ],
        Scheme::MixedAdam => vec![
            Line {
                role: Role::Parameters,
                bytes: 2 * p,
                formula: Said::new(MsgKey::FormulaFp16Copy, &[("n", &n)]),
            },
            Line {
                role: Role::Gradients,
                bytes: 2 * p,
                formula: Said::new(MsgKey::FormulaFp16, &[("n", &n)]),
            },
            Line {
                role: Role::OptimizerState,
                bytes: 12 * p,
                formula: Said::new(MsgKey::FormulaMasterAndMoments, &[("n", &n)]),
            },
        ],
    };
    Estimate { lines }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Activation;
    use crate::nn::EVAL_ROWS;

    #[test]
    fn the_mnist_mlp_needs_16_bytes_per_parameter_before_activations() {
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: vec![784, 128, 10],
            activation: Activation::Relu,
            loss: Loss::SoftmaxCrossEntropy,
        };
        let e = network(&spec, OptimizerKind::Adam, 64, Precision::Fp32, EVAL_ROWS);
        assert_eq!(e.bytes(Role::Parameters), 4 * 101_770);
        assert_eq!(e.bytes(Role::Gradients), 4 * 101_770);
        assert_eq!(e.bytes(Role::OptimizerState), 8 * 101_770);
        // 64 rows × (128 + 10) outputs × 4 B.
        assert_eq!(e.bytes(Role::Activations), 64 * 138 * 4);
    }

    #[test]
    fn a_7b_model_needs_more_than_one_gpu_for_its_static_memory_alone() {
        let llama = PRESETS[2];
        for scheme in [Scheme::Fp32Adam, Scheme::MixedAdam] {
            // 16 bytes per parameter either way: about 108 GB before any activation.
            assert_eq!(preset(llama, scheme).total(), 16 * llama.parameters);
        }
    }
}
