//! What a network is, before it is built: its layers, activation and loss ([`ModelSpec`]), and
//! the update rule it trains with ([`OptimizerKind`]).

use serde::{Deserialize, Serialize};

use crate::backend::Activation;
use crate::data::Task;

/// What the output layer's values are compared with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// Softmax over the outputs, then cross-entropy against a class index (classification).
    #[default]
    SoftmaxCrossEntropy,
    /// Mean squared error against target values (regression).
    MeanSquaredError,
}

impl Loss {
    /// The loss a task trains with.
    pub fn for_task(task: Task) -> Self {
        match task {
            Task::Classification => Loss::SoftmaxCrossEntropy,
            Task::Regression => Loss::MeanSquaredError,
        }
    }
}

/// Layer widths (input first, outputs last), the hidden activation and the loss.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// `[inputs, hidden..., outputs]`, e.g. `[2, 16, 16, 3]`.
    pub layers: Vec<usize>,
    /// Applied after every hidden layer; the output layer is linear (softmax is in the loss).
    pub activation: Activation,
    /// What the outputs are trained against.
    #[serde(default)]
    pub loss: Loss,
}

impl ModelSpec {
    /// Number of trainable values: `Σ (in · out + out)`, saturating (an absurd layer list
    /// asked of the settings check must not overflow).
    pub fn parameter_count(&self) -> usize {
        self.layers
            .windows(2)
            .map(|w| w[0].saturating_mul(w[1]).saturating_add(w[1]))
            .fold(0, usize::saturating_add)
    }

    /// Multiply-adds of one forward pass per sample: `Σ in · out`.
    pub fn forward_macs_per_sample(&self) -> usize {
        self.layers.windows(2).map(|w| w[0] * w[1]).sum()
    }

    /// Parses `2,16,16,3`.
    pub fn parse_layers(text: &str) -> Result<Vec<usize>, String> {
        let layers: Result<Vec<usize>, _> =
            text.split(',').map(|p| p.trim().parse::<usize>()).collect();
        match layers {
            Ok(l) if l.len() >= 2 && l.iter().all(|&w| w > 0) => Ok(l),
            Ok(_) => Err(format!(
                "`{text}`: give at least an input and an output width, all above zero, e.g. 2,16,16,3"
            )),
            Err(e) => Err(format!(
                "`{text}`: {e}; expected widths separated by commas, e.g. 2,16,16,3"
            )),
        }
    }
}

/// Which update rule, with its own hyper-parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// Plain stochastic gradient descent.
    Sgd,
    /// SGD with momentum 0.9.
    Momentum,
    /// Adam with β1 = 0.9, β2 = 0.999, ε = 1e-8.
    Adam,
}

impl OptimizerKind {
    /// All choices, in UI order.
    pub const ALL: [OptimizerKind; 3] = [
        OptimizerKind::Sgd,
        OptimizerKind::Momentum,
        OptimizerKind::Adam,
    ];

    /// Momentum's μ.
    pub const MOMENTUM: f32 = 0.9;

    /// Lower-case name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            OptimizerKind::Sgd => "sgd",
            OptimizerKind::Momentum => "momentum",
            OptimizerKind::Adam => "adam",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == name)
    }

    /// Optimizer-state tensors per parameter tensor (0, 1 or 2).
    pub fn state_tensors(self) -> usize {
        match self {
            OptimizerKind::Sgd => 0,
            OptimizerKind::Momentum => 1,
            OptimizerKind::Adam => 2,
        }
    }
}
