//! Where a step's time goes by kind of op (the article's first section): each op of the cost
//! model and each kernel measured in a step put in one of a few groups, so that a group's share
//! of the step's FLOPs can stand beside its share of the measured kernel time. Matrix products
//! are most of the arithmetic; the groups beside them show how much time the rest takes.

use serde::Serialize;

use super::cost::{LOSS_OP, Op, OpKind, Product};
use crate::backend::KernelTimes;
use crate::i18n::LayerKey;

/// A kind of op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpGroup {
    /// Dense layers' products, forward and backward, with their fused bias and activation.
    MatrixProducts,
    /// Convolutions: their products over the patches, making the patches and folding their
    /// gradient back.
    Convolutions,
    /// A sequence model's attention: each head's two products over the positions (`Q·Kᵀ` and
    /// `P·V`) with the causal softmax between them, in kernels of their own.
    Attention,
    /// Element-wise work: bias gradients, pooling, conversions between number formats,
    /// scaling and checks.
    Elementwise,
    /// The loss and its gradient.
    Loss,
    /// The optimizer's updates.
    Optimizer,
    /// Work this grouping does not know by name.
    Other,
}

impl OpGroup {
    /// Every group, in the order a table shows them.
    pub const ALL: [OpGroup; 7] = [
        OpGroup::MatrixProducts,
        OpGroup::Convolutions,
        OpGroup::Attention,
        OpGroup::Elementwise,
        OpGroup::Loss,
        OpGroup::Optimizer,
        OpGroup::Other,
    ];

    /// The group of a kernel, by the label both devices give it.
    pub fn of_kernel(label: &str) -> Self {
        match label {
            "linear_forward" | "linear_backward_input" | "weight_grad" | "split_k_sum" => {
                Self::MatrixProducts
            }
            "conv_forward" | "conv_backward_input" => Self::Convolutions,
            l if l.starts_with("attention") => Self::Attention,
            "softmax_cross_entropy" | "mse_loss" => Self::Loss,
            "sgd_step" | "momentum_step" | "adam_step" => Self::Optimizer,
            "bias_grad"
            | "bias_grad_sum"
            | "max_pool"
            | "max_pool_backward"
            | "scale"
            | "count_non_finite"
            | "copy"
            | "activation_forward"
            | "activation_backward"
            | "layer_norm"
            | "layer_norm_backward"
            | "layer_norm_params_grad"
            | "add"
            | "add_into"
            | "embedding"
            | "embedding_backward"
            | "embedding_table_grad"
            | "embedding_position_grad" => Self::Elementwise,
            l if l.starts_with("round_") || l.starts_with("widen_") || l.starts_with("narrow_") => {
                Self::Elementwise
            }
            _ => Self::Other,
        }
    }
}

/// One group's share of a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupShare {
    /// The group.
    pub group: OpGroup,
    /// Its FLOPs, as the cost model counts them.
    pub flops: f64,
    /// Its share of the step's FLOPs (0 to 1).
    pub flops_share: f64,
    /// Its measured kernel time, ns, when the step's kernels were timed.
    pub time_ns: Option<u64>,
    /// Its share of the measured kernel time (0 to 1).
    pub time_share: Option<f64>,
}

/// The FLOPs of `ops` by group. A weight gradient's FLOPs include its bias gradient's column
/// sums (`m · n` additions), which run as a kernel of their own: they are counted as
/// element-wise, where that kernel's time goes. Copies do no arithmetic and are left out.
fn flops_by_group(ops: &[Op]) -> Vec<(OpGroup, f64)> {
    let mut out = Vec::new();
    for op in ops {
        match op.kind {
            OpKind::MatMul => {
                let bias = match (op.product, op.dims) {
                    (Some(Product::WeightGradient), Some([_, n, k])) => n * k,
                    _ => 0.0,
                };
                let group = if op.conv {
                    OpGroup::Convolutions
                } else {
                    OpGroup::MatrixProducts
                };
                out.push((group, op.flops - bias));
                out.push((OpGroup::Elementwise, bias));
            }
            OpKind::Update => out.push((OpGroup::Optimizer, op.flops)),
            OpKind::Elementwise if op.name == LOSS_OP => out.push((OpGroup::Loss, op.flops)),
            OpKind::Elementwise if op.plain.is_some_and(|p| p.what == LayerKey::WhatAttention) => {
                out.push((OpGroup::Attention, op.flops));
            }
            OpKind::Elementwise => out.push((OpGroup::Elementwise, op.flops)),
            OpKind::Copy => {}
        }
    }
    out
}

/// The group of each timed kernel: by its label, except that a product kernel is a
/// convolution's where the op it ran (see [`kernel_ops`]) is; an unpaired kernel goes by its
/// label.
fn kernel_groups(ops: &[Op], kernels: &KernelTimes) -> Vec<OpGroup> {
    kernels
        .kernels
        .iter()
        .zip(kernel_ops(ops, kernels))
        .map(|((label, _), op)| match (OpGroup::of_kernel(label), op) {
            (OpGroup::MatrixProducts, Some(i)) if ops[i].conv => OpGroup::Convolutions,
            (by_label, _) => by_label,
        })
        .collect()
}

/// Each group's share of the FLOPs of `ops` and, where `kernels` were timed, of their time.
/// Groups with neither FLOPs nor time are left out.
pub fn shares(ops: &[Op], kernels: Option<&KernelTimes>) -> Vec<GroupShare> {
    let flops = flops_by_group(ops);
    let total_flops: f64 = flops.iter().map(|f| f.1).sum();
    let total_ns = kernels.map(|k| k.total_ns);
    let groups = kernels.map(|k| kernel_groups(ops, k)).unwrap_or_default();
    OpGroup::ALL
        .into_iter()
        .filter_map(|group| {
            let f: f64 = flops.iter().filter(|x| x.0 == group).map(|x| x.1).sum();
            let time_ns = kernels.map(|k| {
                k.kernels
                    .iter()
                    .zip(&groups)
                    .filter(|(_, g)| **g == group)
                    .map(|((_, ns), _)| ns)
                    .sum::<u64>()
            });
            if f <= 0.0 && time_ns.unwrap_or(0) == 0 {
                return None;
            }
            Some(GroupShare {
                group,
                flops: f,
                flops_share: if total_flops > 0.0 {
                    f / total_flops
                } else {
                    0.0
                },
                time_ns,
                time_share: time_ns
                    .zip(total_ns)
                    .map(|(t, all)| t as f64 / all.max(1) as f64),
            })
        })
        .collect()
}

/// The work an op or a kernel is, for matching one to the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    Forward,
    WeightGradient,
    BiasGradient,
    InputGradient,
    Loss,
    Update,
}

fn work_of_kernel(label: &str) -> Option<Work> {
    match label {
        "linear_forward" | "conv_forward" => Some(Work::Forward),
        "weight_grad" => Some(Work::WeightGradient),
        "bias_grad" => Some(Work::BiasGradient),
        "linear_backward_input" | "conv_backward_input" => Some(Work::InputGradient),
        "softmax_cross_entropy" | "mse_loss" => Some(Work::Loss),
        "sgd_step" | "momentum_step" | "adam_step" => Some(Work::Update),
        _ => None,
    }
}

fn work_of_op(op: &Op) -> Option<Work> {
    match (op.kind, op.product) {
        (OpKind::MatMul, Some(Product::Forward)) => Some(Work::Forward),
        (OpKind::MatMul, Some(Product::WeightGradient)) => Some(Work::WeightGradient),
        (OpKind::MatMul, Some(Product::InputGradient)) => Some(Work::InputGradient),
        (OpKind::Elementwise, _) if op.name == LOSS_OP => Some(Work::Loss),
        (OpKind::Update, _) => Some(Work::Update),
        _ => None,
    }
}

/// For each timed kernel, the op of `ops` it ran: the i-th kernel of a kind of work is the
/// i-th op of that kind, in the step's order (forward from the first layer, backward from the
/// last, each layer's weights then its biases updated, both in one kernel on the GPU), the
/// order both devices run them in; a bias
/// gradient's kernel belongs to its layer's weight-gradient op. A kind whose kernels and ops do
/// not pair up one to one (a step that was not all timed) pairs none rather than wrongly.
fn kernel_ops(ops: &[Op], kernels: &KernelTimes) -> Vec<Option<usize>> {
    let mut paired = vec![None; kernels.kernels.len()];
    for work in [
        Work::Forward,
        Work::WeightGradient,
        Work::BiasGradient,
        Work::InputGradient,
        Work::Loss,
        Work::Update,
    ] {
        let op_work = match work {
            Work::BiasGradient => Work::WeightGradient,
            w => w,
        };
        let of_ops: Vec<usize> = (0..ops.len())
            .filter(|&i| work_of_op(&ops[i]) == Some(op_work))
            .collect();
        let of_kernels: Vec<usize> = (0..kernels.kernels.len())
            .filter(|&k| work_of_kernel(&kernels.kernels[k].0) == Some(work))
            .collect();
        if of_kernels.len() == of_ops.len() {
            for (k, i) in of_kernels.into_iter().zip(of_ops) {
                paired[k] = Some(i);
            }
        }
    }
    paired
}

/// Each op of `ops` that timed kernels did, with their time in ns: the i-th kernel of a kind of
/// work is the i-th op of that kind, in the step's order, and a kind whose kernels and ops do
/// not pair up one to one pairs none (see `kernel_ops`). A weight gradient's time includes its bias gradient's column sums, whose FLOPs
/// the op counts, so it is given only when both kernels were paired.
pub fn measured_ops(ops: &[Op], kernels: &KernelTimes) -> Vec<(usize, u64)> {
    // Per op: its kernels' time and how many there were.
    let mut timed = vec![(0u64, 0usize); ops.len()];
    for ((_, ns), op) in kernels.kernels.iter().zip(kernel_ops(ops, kernels)) {
        if let Some(i) = op {
            timed[i].0 += ns;
            timed[i].1 += 1;
        }
    }
    let kernels_of = |op: &Op| match work_of_op(op) {
        Some(Work::WeightGradient) => 2,
        _ => 1,
    };
    (0..ops.len())
        .filter(|&i| timed[i].1 > 0 && timed[i].1 == kernels_of(&ops[i]))
        .map(|i| (i, timed[i].0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Activation;
    use crate::device::Device;
    use crate::nn::{Loss, ModelSpec, OptimizerKind};
    use crate::sim::cost::{Recipe, step_ops};

    fn ops(layers: &[usize], batch: usize) -> Vec<Op> {
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: layers.to_vec(),
            activation: Activation::Relu,
            loss: Loss::SoftmaxCrossEntropy,
        };
        step_ops(&spec, batch, Recipe::fp32(OptimizerKind::Adam), Device::Gpu)
    }

    #[test]
    fn flops_shares_add_up_and_products_dominate_a_wide_model() {
        let s = shares(&ops(&[784, 256, 10], 64), None);
        let total: f64 = s.iter().map(|g| g.flops_share).sum();
        assert!((total - 1.0).abs() < 1e-12, "{s:?}");
        let products = s
            .iter()
            .find(|g| g.group == OpGroup::MatrixProducts)
            .expect("products");
        assert!(products.flops_share > 0.95, "{s:?}");
        assert!(
            s.iter()
                .all(|g| g.time_ns.is_none() && g.time_share.is_none())
        );
        // A bias gradient's column sums are element-wise: 64 rows × (256 + 10) outputs.
        let elementwise = s
            .iter()
            .find(|g| g.group == OpGroup::Elementwise)
            .expect("bias");
        assert_eq!(elementwise.flops, 64.0 * 266.0);
    }

    #[test]
    fn a_cnns_convolution_products_count_as_convolutions_in_flops_and_time() {
        // One 3×3 block of 4 filters on 6×6 grey images, then 3 classes.
        let conv = crate::nn::ConvStack {
            image: crate::data::ImageShape {
                width: 6,
                height: 6,
                channels: 1,
            },
            channels: vec![4],
            kernel: 3,
        };
        let spec = ModelSpec::cnn(conv, &[3], Activation::Relu, Loss::SoftmaxCrossEntropy);
        let ops = step_ops(&spec, 2, Recipe::fp32(OptimizerKind::Sgd), Device::Gpu);
        // The kernels as both devices label them, in the step's order: the block's convolution
        // and pooling, the dense layer, the loss, then back.
        let labels = [
            ("conv_forward", 100),
            ("max_pool", 2),
            ("linear_forward", 10),
            ("softmax_cross_entropy", 3),
            ("weight_grad", 20),
            ("bias_grad", 4),
            ("linear_backward_input", 30),
            ("max_pool_backward", 5),
            ("weight_grad", 200),
            ("bias_grad", 6),
            ("sgd_step", 7),
            ("sgd_step", 8),
            ("sgd_step", 9),
            ("sgd_step", 10),
        ];
        let kernels = KernelTimes {
            kernels: labels
                .iter()
                .map(|(l, ns)| ((*l).to_owned(), *ns))
                .collect(),
            total_ns: labels.iter().map(|l| l.1).sum(),
        };
        let s = shares(&ops, Some(&kernels));
        let group = |g: OpGroup| s.iter().find(|x| x.group == g).expect("group");
        // The block's convolution and its weight gradient; the dense layer's two products and
        // its input gradient stay matrix products.
        assert_eq!(group(OpGroup::Convolutions).time_ns, Some(100 + 200));
        assert_eq!(group(OpGroup::MatrixProducts).time_ns, Some(10 + 20 + 30));
        // The block's product: 2 images × 36 pixels × 9 taps × 4 filters, twice (a multiply-add
        // is two FLOPs), with its bias and activation, forward and weight gradient.
        let conv_products = 2.0 * 2.0 * 36.0 * 9.0 * 4.0;
        assert!(group(OpGroup::Convolutions).flops > 2.0 * conv_products);
        assert!(group(OpGroup::Convolutions).flops > group(OpGroup::MatrixProducts).flops);
        let total: f64 = s.iter().map(|g| g.time_share.unwrap_or(0.0)).sum();
        assert!((total - 1.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn measured_kernels_are_paired_with_the_ops_they_did_in_order() {
        // 2-16-3 on the GPU: two forwards, the loss, two weight gradients (last layer first)
        // and their column sums, one input gradient, two updates (each layer's weights and
        // biases in one kernel).
        let ops = ops(&[2, 16, 3], 8);
        let labels = [
            ("linear_forward", 10),
            ("linear_forward", 20),
            ("softmax_cross_entropy", 30),
            ("weight_grad", 40),
            ("bias_grad", 1),
            ("linear_backward_input", 50),
            ("weight_grad", 60),
            ("bias_grad", 2),
            ("adam_step", 70),
            ("adam_step", 80),
        ];
        let kernels = KernelTimes {
            kernels: labels
                .iter()
                .map(|(l, ns)| ((*l).to_owned(), *ns))
                .collect(),
            total_ns: 0,
        };
        let by_name: Vec<(String, u64)> = measured_ops(&ops, &kernels)
            .into_iter()
            .map(|(i, ns)| (ops[i].name.clone(), ns))
            .collect();
        let want = [
            ("layer 1 forward", 10),
            ("layer 2 forward", 20),
            ("loss and its gradient", 30),
            ("layer 2 weight gradient", 41),
            ("layer 2 input gradient", 50),
            ("layer 1 weight gradient", 62),
            ("layer 1 update weights and biases", 70),
            ("layer 2 update weights and biases", 80),
        ];
        let want: Vec<(String, u64)> = want.iter().map(|(n, t)| ((*n).to_owned(), *t)).collect();
        assert_eq!(by_name, want);
        // The CPU updates each tensor on its own: each layer's weights, then its biases.
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: vec![2, 16, 3],
            activation: Activation::Relu,
            loss: Loss::SoftmaxCrossEntropy,
        };
        let cpu_ops = step_ops(&spec, 8, Recipe::fp32(OptimizerKind::Adam), Device::Cpu);
        let updates = KernelTimes {
            kernels: (1..=4).map(|ns| ("adam_step".to_owned(), ns)).collect(),
            total_ns: 0,
        };
        let names: Vec<(&str, u64)> = measured_ops(&cpu_ops, &updates)
            .into_iter()
            .map(|(i, ns)| (cpu_ops[i].name.as_str(), ns))
            .collect();
        assert_eq!(
            names,
            [
                ("layer 1 update weights", 1),
                ("layer 1 update biases", 2),
                ("layer 2 update weights", 3),
                ("layer 2 update biases", 4)
            ]
        );
        // A step timed only in part pairs nothing of the kinds it cut short.
        let partial = KernelTimes {
            kernels: kernels.kernels[..3].to_vec(),
            total_ns: 0,
        };
        let names: Vec<&str> = measured_ops(&ops, &partial)
            .into_iter()
            .map(|(i, _)| ops[i].name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "layer 1 forward",
                "layer 2 forward",
                "loss and its gradient"
            ]
        );
    }

    #[test]
    fn measured_kernels_are_grouped_by_their_labels() {
        let kernels = KernelTimes {
            kernels: vec![
                ("linear_forward".into(), 300),
                ("linear_forward".into(), 100),
                ("softmax_cross_entropy".into(), 200),
                ("weight_grad".into(), 100),
                ("bias_grad".into(), 50),
                ("adam_step".into(), 150),
                ("narrow_fp16".into(), 50),
                ("mystery".into(), 50),
            ],
            total_ns: 1000,
        };
        let s = shares(&ops(&[2, 16, 3], 8), Some(&kernels));
        let time = |g| {
            s.iter()
                .find(|x| x.group == g)
                .and_then(|x| x.time_ns)
                .unwrap_or(0)
        };
        assert_eq!(time(OpGroup::MatrixProducts), 500);
        assert_eq!(time(OpGroup::Loss), 200);
        assert_eq!(time(OpGroup::Optimizer), 150);
        assert_eq!(time(OpGroup::Elementwise), 100);
        assert_eq!(time(OpGroup::Other), 50);
        let shares: f64 = s.iter().filter_map(|g| g.time_share).sum();
        assert!((shares - 1.0).abs() < 1e-12);
        // No convolution in an MLP: neither FLOPs nor time, so no row.
        assert!(s.iter().all(|g| g.group != OpGroup::Convolutions));
    }
}
