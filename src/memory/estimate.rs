//! The memory of a model predicted from its description, role by role, with the formula behind
//! each figure. For BatchScope's own MLPs it predicts exactly what the backends allocate (the
//! tests hold it to that); for well-known large models it shows the static part — parameters,
//! gradients, optimizer state — which is what makes them need several GPUs.

use serde::Serialize;

use super::Role;
use crate::nn::{EVAL_ROWS, Loss, ModelSpec, OptimizerKind};

/// Bytes of one FP32 value.
const FP32: u64 = 4;

/// One role's predicted bytes and how they were worked out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Line {
    /// The role.
    pub role: Role,
    /// Predicted bytes.
    pub bytes: u64,
    /// The formula with its numbers, e.g. `2 × 101,770 parameters × 4 B`.
    pub formula: String,
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

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What an MLP of `spec` trained with `optimizer` on batches of `batch` rows holds, in FP32,
/// role by role, as BatchScope allocates it: every tensor of a step is made up front.
pub fn mlp(spec: &ModelSpec, optimizer: OptimizerKind, batch: usize) -> Estimate {
    let p = spec.parameter_count() as u64;
    let b = batch as u64;
    let layers = &spec.layers;
    let features = layers[0] as u64;
    let outputs = *layers.last().unwrap_or(&1) as u64;
    let hidden_and_out: u64 = layers.iter().skip(1).map(|&w| w as u64).sum();
    let all_widths: u64 = layers.iter().map(|&w| w as u64).sum();
    let states = optimizer.state_tensors() as u64;
    let target_cols = match spec.loss {
        Loss::SoftmaxCrossEntropy => 1,
        Loss::MeanSquaredError => outputs,
    };
    let rows = EVAL_ROWS as u64;
    let widths = layers
        .iter()
        .skip(1)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" + ");
    let lines = vec![
        Line {
            role: Role::Parameters,
            bytes: p * FP32,
            formula: format!("{} parameters × 4 B", grouped(p)),
        },
        Line {
            role: Role::Gradients,
            bytes: p * FP32,
            formula: format!("one gradient per parameter: {} × 4 B", grouped(p)),
        },
        Line {
            role: Role::OptimizerState,
            bytes: states * p * FP32,
            formula: format!(
                "{states} value(s) per parameter for {}: {states} × {} × 4 B",
                optimizer.as_str(),
                grouped(p)
            ),
        },
        Line {
            role: Role::Activations,
            bytes: b * hidden_and_out * FP32,
            formula: format!("batch {b} × layer outputs ({widths}) × 4 B"),
        },
        Line {
            role: Role::Inputs,
            bytes: b * (features + target_cols) * FP32,
            formula: format!("batch {b} × ({features} features + {target_cols} target) × 4 B"),
        },
        Line {
            role: Role::Workspace,
            bytes: (b * hidden_and_out + rows * all_widths + 3) * FP32,
            formula: format!(
                "backward temporaries {b} × ({widths}) + evaluation {rows} rows × all widths \
                 ({all_widths}) + 3 loss statistics, × 4 B"
            ),
        },
    ];
    Estimate { lines }
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
        name: "7B language model (LLaMA-7B)",
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
                formula: format!("{n} × 4 B (FP32)"),
            },
            Line {
                role: Role::Gradients,
                bytes: 4 * p,
                formula: format!("{n} × 4 B (FP32)"),
            },
            Line {
                role: Role::OptimizerState,
                bytes: 8 * p,
                formula: format!("{n} × (4 + 4) B: Adam's two FP32 moments"),
            },
        ],
        Scheme::MixedAdam => vec![
            Line {
                role: Role::Parameters,
                bytes: 2 * p,
                formula: format!("{n} × 2 B (FP16 copy used in forward and backward)"),
            },
            Line {
                role: Role::Gradients,
                bytes: 2 * p,
                formula: format!("{n} × 2 B (FP16)"),
            },
            Line {
                role: Role::OptimizerState,
                bytes: 12 * p,
                formula: format!("{n} × (4 + 4 + 4) B: FP32 master weights and Adam's moments"),
            },
        ],
    };
    Estimate { lines }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Activation;

    #[test]
    fn the_mnist_mlp_needs_16_bytes_per_parameter_before_activations() {
        let spec = ModelSpec {
            layers: vec![784, 128, 10],
            activation: Activation::Relu,
            loss: Loss::SoftmaxCrossEntropy,
        };
        let e = mlp(&spec, OptimizerKind::Adam, 64);
        assert_eq!(e.bytes(Role::Parameters), 4 * 101_770);
        assert_eq!(e.bytes(Role::Gradients), 4 * 101_770);
        assert_eq!(e.bytes(Role::OptimizerState), 8 * 101_770);
        // 64 rows × (128 + 10) outputs × 4 B.
        assert_eq!(e.bytes(Role::Activations), 64 * 138 * 4);
        assert_eq!(grouped(101_770), "101,770");
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
