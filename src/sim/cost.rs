//! What one training step would cost on a device described by a [`Profile`], predicted kernel by
//! kernel in the roofline style, with the three regimes of "Making Deep Learning Go Brrrr":
//!
//! - **compute-bound**: the op's FLOPs at the attainable rate, `peak × efficiency(FLOPs)`;
//! - **memory-bound**: the bytes it moves at `bandwidth × efficiency(bytes)`;
//! - **overhead-bound**: the host's cost of launching it, when the device would finish sooner.
//!
//! An op takes the longest of the three; that one is its bound. The step adds the batch's copy
//! over the host link, the sync that reads the loss back, and the data loader's time when it is
//! not hidden behind the step. Efficiency grows with the op's size (small kernels cannot fill a
//! large chip), as Calculon's tables have it, rather than one constant: the default curves
//! below are estimates, and `calibrate` fits them for the devices at hand.
//!
//! The ops are those this app's training step runs ([`step_ops`], in [`ops`](super::ops)), with
//! their FLOPs and bytes worked out from the layers as the kernels read and write them.

use serde::Serialize;

pub use super::efficiency::{Curve, Efficiency, Product, ProductFit, Products};
pub use super::ops::{
    GRADIENT_SUMS_OP, LOSS_OP, Op, OpKind, Plain, Recipe, Updated, request_ops, step_ops,
    step_ops_with, update_work,
};
use super::profile::{Kind, Profile};
use crate::precision::Precision;

/// Host-side latency of a copy over a `PCIe` link before its bytes flow (estimate).
pub const COPY_LATENCY_US: f64 = 10.0;
/// Host-side latency of reading a few bytes back after the device has finished (estimate).
pub const SYNC_LATENCY_US: f64 = 10.0;

/// What limits an op, or a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Arithmetic.
    Compute,
    /// Memory bandwidth.
    Memory,
    /// The host's launches.
    Overhead,
    /// The host link.
    Link,
}

/// One op's predicted cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpCost {
    /// The op.
    #[serde(flatten)]
    pub op: Op,
    /// Its predicted time, ms.
    pub time_ms: f64,
    /// What limits it.
    pub bound: Bound,
    /// The FLOP/s it attains at that time, TFLOP/s.
    pub attained_tflops: f64,
}

/// A predicted step on one profile. Every figure is simulated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// Always true: nothing here was measured.
    pub simulated: bool,
    /// The profile's id.
    pub profile: String,
    /// The profile's name.
    pub name: String,
    /// The step's time, ms.
    pub step_time_ms: f64,
    /// Samples per second at that step time.
    pub samples_per_s: f64,
    /// What limits the step: the bound that takes most of its time.
    pub bound: Bound,
    /// The arithmetic peak used for matrix products, TFLOP/s.
    pub peak_tflops: f64,
    /// Each op.
    pub ops: Vec<OpCost>,
}

/// Predicts one training step of `ops` on `profile`, `batch` rows a step, with the data
/// loader's time per batch `loader.0` ms (hidden behind the step when `loader.1`, as worker
/// threads hide it). The profile's fitted efficiencies are used where it has them.
pub fn predict(
    profile: &Profile,
    ops: &[Op],
    precision: Precision,
    batch: usize,
    loader: (f64, bool),
) -> Prediction {
    predict_synced(profile, ops, precision, batch, loader, 1.0)
}

/// As [`predict`], with the step reading a result back `syncs_per_step` times on average
/// (1: the loss every step, as [`predict`] assumes; 1/50: every 50 steps). Each read waits for
/// the device to finish and costs [`SYNC_LATENCY_US`] on a GPU.
pub fn predict_synced(
    profile: &Profile,
    ops: &[Op],
    precision: Precision,
    batch: usize,
    loader: (f64, bool),
    syncs_per_step: f64,
) -> Prediction {
    let rates = Rates::of(profile, precision);
    let costs: Vec<OpCost> = ops.iter().map(|op| rates.cost(op)).collect();
    let sync_ms = if profile.kind == Kind::Cpu {
        0.0
    } else {
        SYNC_LATENCY_US * 1e-3 * syncs_per_step.max(0.0)
    };
    let ops_ms: f64 = costs.iter().map(|c| c.time_ms).sum::<f64>()
        + profile
            .step_overhead_us
            .as_ref()
            .map_or(0.0, |f| f.value * 1e-3)
        + profile
            .row_overhead_ns
            .as_ref()
            .map_or(0.0, |f| f.value * 1e-6 * batch as f64);
    let (loader_ms, overlaps) = loader;
    let waiting_ms = if overlaps {
        (loader_ms - ops_ms - sync_ms).max(0.0)
    } else {
        loader_ms
    };
    let step_time_ms = ops_ms + sync_ms + waiting_ms;
    Prediction {
        simulated: true,
        profile: profile.id.clone(),
        name: profile.name.clone(),
        step_time_ms,
        samples_per_s: batch as f64 / (step_time_ms / 1e3),
        bound: step_bound(&costs, sync_ms),
        peak_tflops: rates.peak_tflops,
        ops: costs,
    }
}

/// What a profile does per second, and what each launch costs, as one step's ops see them.
struct Rates<'a> {
    profile: &'a Profile,
    efficiency: Efficiency,
    /// The arithmetic peak of the step's matrix products, TFLOP/s.
    peak_tflops: f64,
    /// Memory bandwidth, bytes/s.
    bandwidth: f64,
    dispatch_s: f64,
    /// The host-to-device link, bytes/s; none where host and device share memory.
    link: Option<f64>,
    /// How much slower kernels run inside a step than probed alone.
    in_step: f64,
}

impl<'a> Rates<'a> {
    fn of(profile: &'a Profile, precision: Precision) -> Self {
        // Matrix products in 16-bit formats run on the tensor units where the device has them
        // (as a framework's kernels would; this app's own kernels compute in f32).
        let peak_tflops = match (precision, &profile.tensor_tflops) {
            (Precision::Fp32, _) | (_, None) => profile.fp32_tflops.value,
            (_, Some(tensor)) => tensor.value,
        };
        Self {
            profile,
            efficiency: profile.efficiency.clone().unwrap_or_default(),
            peak_tflops,
            bandwidth: profile.mem_bw_gbs.value * 1e9,
            dispatch_s: profile.dispatch_us.value * 1e-6,
            link: profile.link_bytes_per_s(),
            in_step: profile.in_step_factor.as_ref().map_or(1.0, |f| f.value),
        }
    }

    /// One op's time and what limits it.
    fn cost(&self, op: &Op) -> OpCost {
        let (seconds, bound) = if op.kind == OpKind::Copy {
            self.copy_seconds(op)
        } else {
            self.kernel_seconds(op)
        };
        OpCost {
            op: op.clone(),
            time_ms: seconds * 1e3,
            bound,
            attained_tflops: op.flops / seconds.max(1e-15) / 1e12,
        }
    }

    /// A copy over the link, with a GPU's latency. Where host and device share the memory
    /// (a CPU), the batch still moves through it twice: the loader gathers its rows from the
    /// data set into the batch, and the batch is copied into the model's input tensor, each
    /// reading and writing every byte. A narrow network at a large batch spends most of its
    /// step there (784,32,10 at batch 4096: 26 MB a step against 0.4 GFLOP of products).
    fn copy_seconds(&self, op: &Op) -> (f64, Bound) {
        if let Some(link) = self.link {
            let latency = if self.profile.kind == Kind::Gpu {
                COPY_LATENCY_US * 1e-6
            } else {
                0.0
            };
            return (latency + op.bytes / link, Bound::Link);
        }
        let bytes = 4.0 * op.bytes;
        let curve = &self.efficiency.memory;
        (bytes / (self.bandwidth * curve.at(bytes)), Bound::Memory)
    }

    /// A kernel: the longest of its arithmetic, its memory traffic and its launch.
    fn kernel_seconds(&self, op: &Op) -> (f64, Bound) {
        let (efficiency, dispatch_s) = (&self.efficiency, self.dispatch_s);
        let compute = if op.kind == OpKind::MatMul {
            efficiency.product_seconds(op.flops, op.product, op.dims, self.peak_tflops * 1e12)
        } else {
            // Element-wise work runs on the vector units at the FP32 rate.
            op.flops / (self.profile.fp32_tflops.value * 1e12)
        };
        let (curve, call_s, cold) = match (&efficiency.updates, op.optimizer) {
            (Some(updates), Some(rule)) if op.kind == OpKind::Update => {
                let fit = updates.get(rule);
                (&fit.curve, fit.call_us * 1e-6, fit.in_step)
            }
            _ => (&efficiency.memory, 0.0, 1.0),
        };
        let memory = cold * op.bytes / (self.bandwidth * curve.at(op.bytes));
        let (seconds, bound) = [
            (compute, Bound::Compute),
            (memory, Bound::Memory),
            (dispatch_s, Bound::Overhead),
        ]
        .into_iter()
        .fold((0.0, Bound::Overhead), |a, b| if b.0 > a.0 { b } else { a });
        // A GPU runs one kernel while the host launches the next, so a launch costs only when
        // it takes longer than the kernel; a CPU is its own host and pays for both, one after
        // the other.
        let serial_s = if self.profile.kind == Kind::Cpu && bound != Bound::Overhead {
            dispatch_s
        } else {
            0.0
        };
        (seconds * self.in_step + serial_s + call_s, bound)
    }
}

/// What limits a step: the bound that takes most of its time (waiting for the device counts
/// as overhead).
fn step_bound(costs: &[OpCost], sync_ms: f64) -> Bound {
    let share = |bound| {
        costs
            .iter()
            .filter(|c| c.bound == bound)
            .map(|c| c.time_ms)
            .sum::<f64>()
    };
    [Bound::Compute, Bound::Memory, Bound::Overhead, Bound::Link]
        .into_iter()
        .map(|b| {
            (
                b,
                share(b) + if b == Bound::Overhead { sync_ms } else { 0.0 },
            )
        })
        .fold(
            (Bound::Overhead, -1.0),
            |a, b| if b.1 > a.1 { b } else { a },
        )
        .0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use crate::nn::{Loss, ModelSpec, OptimizerKind};
    use crate::sim::profile::{find, shipped};

    fn spec(layers: &[usize]) -> ModelSpec {
        ModelSpec {
            conv: None,
            list: None,
            layers: layers.to_vec(),
            activation: crate::backend::Activation::Relu,
            loss: Loss::SoftmaxCrossEntropy,
        }
    }

    /// conv 8, 16 (3×3) and 10 classes on 28×28 grey images.
    fn lenet_like() -> ModelSpec {
        let conv = crate::nn::ConvStack {
            image: crate::data::ImageShape {
                width: 28,
                height: 28,
                channels: 1,
            },
            channels: vec![8, 16],
            kernel: 3,
        };
        let relu = crate::backend::Activation::Relu;
        ModelSpec::cnn(conv, &[10], relu, Loss::SoftmaxCrossEntropy)
    }

    #[test]
    fn a_cnn_step_multiplies_and_pools_in_each_block_and_reads_the_images() {
        let spec = lenet_like();
        let rule = Recipe::fp32(OptimizerKind::Adam);
        let ops = step_ops(&spec, 64, rule, Device::Gpu);
        let names: Vec<&str> = ops.iter().take(6).map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "upload batch",
                "layer 1 forward",
                "layer 1 pooling",
                "layer 2 forward",
                "layer 2 pooling",
                "layer 3 forward"
            ]
        );
        // The forward products are the model's multiply-adds, twice, plus bias and activation.
        let forward: f64 = ops
            .iter()
            .filter(|o| o.product == Some(Product::Forward))
            .map(|o| o.flops)
            .sum();
        let macs = 64.0 * spec.forward_macs_per_sample() as f64;
        assert!(
            forward > 2.0 * macs && forward < 2.1 * macs,
            "{forward} vs {macs}"
        );
        // The first block's input needs no gradient (nothing is learned from the images).
        let has = |name: &str| ops.iter().any(|o| o.name == name);
        assert!(has("layer 2 input gradient") && !has("layer 1 input gradient"));
        assert!(has("layer 1 pooling gradient"));
        // The second block's product: every pixel of the batch by its 72-value patch.
        let op = |name: &str| ops.iter().find(|o| o.name == name).cloned().expect(name);
        let second = op("layer 2 forward");
        assert_eq!(second.dims, Some([64.0 * 14.0 * 14.0, 16.0, 72.0]));
        // The first block's forward pass reads the 28×28 images (4 B each) once, not nine
        // copies of them, writes its 8 outputs a pixel, and reads 72 weights and 8 biases.
        let first = op("layer 1 forward");
        let pixels = 64.0 * 784.0;
        assert_eq!(
            first.bytes,
            4.0 * (pixels + pixels * 8.0) + 4.0 * (72.0 + 8.0)
        );
        let updates = ops.iter().filter(|o| o.kind == OpKind::Update).count();
        assert_eq!(
            updates, 3,
            "weights and biases of three layers, each pair in one kernel"
        );
        // The same arithmetic on the CPU (its updates go tensor by tensor).
        let cpu = step_ops(&spec, 64, rule, Device::Cpu);
        let flops = |ops: &[Op]| ops.iter().map(|o| o.flops).sum::<f64>();
        assert!((flops(&cpu) - flops(&ops)).abs() < 1e-6 * flops(&ops));
    }

    fn profile(id: &str) -> Profile {
        find(id).expect(id).remove(0)
    }

    fn step(id: &str, layers: &[usize], batch: usize) -> Prediction {
        let ops = step_ops(
            &spec(layers),
            batch,
            Recipe::fp32(OptimizerKind::Sgd),
            Device::Gpu,
        );
        predict(&profile(id), &ops, Precision::Fp32, batch, (0.0, true))
    }

    #[test]
    fn flops_and_bytes_of_each_op_are_those_worked_out_by_hand() {
        // 2 inputs, 3 hidden, 4 outputs; batch 5; SGD, FP32.
        let ops = step_ops(
            &spec(&[2, 3, 4]),
            5,
            Recipe::fp32(OptimizerKind::Sgd),
            Device::Gpu,
        );
        let get = |name: &str| ops.iter().find(|o| o.name == name).expect(name).clone();
        let upload = get("upload batch");
        assert_eq!(upload.bytes, 4.0 * 5.0 * (2.0 + 4.0));
        let f1 = get("layer 1 forward");
        // 2·5·2·3 products + 2·5·3 bias and activation.
        assert_eq!(f1.flops, 60.0 + 30.0);
        // x (5·2) and y (5·3) values, W (2·3) and b (3) values, 4 bytes each.
        assert_eq!(f1.bytes, 4.0 * (10.0 + 15.0 + 6.0 + 3.0));
        let g2 = get("layer 2 input gradient");
        // dz (5·4) · Wᵀ (4·3): 2·5·3·4 = 120, then 5·3 derivatives.
        assert_eq!(g2.flops, 120.0 + 15.0);
        assert!(ops.iter().all(|o| o.name != "layer 1 input gradient"));
        // The GPU updates a layer's 12 weights and 4 biases in one kernel, the CPU each tensor.
        let u2 = get("layer 2 update weights and biases");
        assert_eq!((u2.flops, u2.bytes), (2.0 * 16.0, 3.0 * 4.0 * 16.0));
        let cpu = step_ops(
            &spec(&[2, 3, 4]),
            5,
            Recipe::fp32(OptimizerKind::Sgd),
            Device::Cpu,
        );
        let cpu_op = |name: &str| cpu.iter().find(|o| o.name == name).expect(name).clone();
        let w2 = cpu_op("layer 2 update weights");
        assert_eq!((w2.flops, w2.bytes), (2.0 * 12.0, 3.0 * 4.0 * 12.0));
        assert_eq!(cpu_op("layer 2 update biases").flops, 2.0 * 4.0);
        // Adam moves seven values per parameter, 16-bit formats halve the activations.
        let adam = step_ops(
            &spec(&[2, 3, 4]),
            5,
            Recipe {
                optimizer: OptimizerKind::Adam,
                precision: Precision::Fp16,
            },
            Device::Gpu,
        );
        let w2 = adam
            .iter()
            .find(|o| o.name == "layer 2 update weights")
            .expect("w2");
        assert_eq!(w2.bytes, 7.0 * 2.0 * 12.0);
    }

    #[test]
    fn efficiency_is_interpolated_on_a_log_scale_and_flat_beyond_the_ends() {
        let c = Curve(vec![(1e2, 0.1), (1e4, 0.5)]);
        assert_eq!(c.at(1.0), 0.1);
        assert!((c.at(1e3) - 0.3).abs() < 1e-12);
        assert_eq!(c.at(1e9), 0.5);
    }

    #[test]
    fn a_tiny_network_at_batch_one_is_overhead_bound_on_every_gpu() {
        for p in shipped().into_iter().filter(|p| p.kind != Kind::Cpu) {
            let s = step(&p.id, &[2, 16, 16, 3], 1);
            assert_eq!(s.bound, Bound::Overhead, "{}", p.id);
            assert!(s.simulated);
        }
    }

    #[test]
    fn a_large_network_is_compute_bound_on_a_t4_and_an_h100_wins_by_about_its_peak() {
        let layers = [784, 4096, 4096, 10];
        let t4 = step("nvidia-t4", &layers, 1024);
        let h100 = step("nvidia-h100-sxm", &layers, 1024);
        assert_eq!(t4.bound, Bound::Compute);
        let peaks = 67.0 / 8.1;
        let speedup = t4.step_time_ms / h100.step_time_ms;
        assert!(
            (0.6 * peaks..=1.05 * peaks).contains(&speedup),
            "{speedup:.2}× against a peak ratio of {peaks:.2}"
        );
    }

    #[test]
    fn doubling_the_batch_when_overhead_bound_barely_changes_the_step() {
        let one = step("nvidia-rtx-4090", &[2, 16, 16, 3], 8);
        let two = step("nvidia-rtx-4090", &[2, 16, 16, 3], 16);
        assert_eq!(one.bound, Bound::Overhead);
        assert!(two.step_time_ms / one.step_time_ms < 1.1);
        // While a large product's time grows with the batch.
        let big = step("nvidia-t4", &[784, 4096, 4096, 10], 1024);
        let bigger = step("nvidia-t4", &[784, 4096, 4096, 10], 2048);
        assert!(bigger.step_time_ms / big.step_time_ms > 1.7);
    }

    #[test]
    fn a_rules_in_step_factor_scales_only_its_memory_bound_updates() {
        use crate::sim::efficiency::{UpdateFit, Updates};
        let ops = step_ops(
            &spec(&[1024, 4096, 3]),
            4,
            Recipe::fp32(OptimizerKind::Adam),
            Device::Gpu,
        );
        let mut p = profile("nvidia-t4");
        let fit = UpdateFit {
            curve: Curve(vec![(1e3, 0.5)]),
            call_us: 0.0,
            in_step: 1.0,
        };
        p.efficiency = Some(Efficiency {
            updates: Some(Updates {
                sgd: fit.clone(),
                momentum: fit.clone(),
                adam: fit,
            }),
            ..Efficiency::default()
        });
        let time_of = |p: &Profile| {
            predict(p, &ops, Precision::Fp32, 4, (0.0, true))
                .ops
                .into_iter()
                .map(|c| (c.op.name, c.bound, c.time_ms))
                .collect::<Vec<_>>()
        };
        let before = time_of(&p);
        if let Some(u) = p.efficiency.as_mut().and_then(|e| e.updates.as_mut()) {
            u.adam.in_step = 3.0;
        }
        let after = time_of(&p);
        let mut scaled = 0;
        for (op, (b, a)) in ops.iter().zip(before.iter().zip(&after)) {
            if op.kind == OpKind::Update && b.1 == Bound::Memory {
                assert!(
                    (a.2 / b.2 - 3.0).abs() < 1e-9,
                    "{}: {} then {}",
                    b.0,
                    b.2,
                    a.2
                );
                scaled += 1;
            } else if op.kind != OpKind::Update {
                assert_eq!(a.2, b.2, "{}", b.0);
            }
        }
        // The first layer's 4 M weights are memory-bound on the T4; its biases are not.
        assert!(scaled > 0, "no memory-bound update: {before:?}");
    }

    #[test]
    fn a_slow_loader_is_hidden_behind_the_step_only_when_it_overlaps() {
        let ops = step_ops(
            &spec(&[2, 16, 3]),
            32,
            Recipe::fp32(OptimizerKind::Sgd),
            Device::Gpu,
        );
        let p = profile("nvidia-t4");
        let alone = predict(&p, &ops, Precision::Fp32, 32, (0.0, true)).step_time_ms;
        let inline = predict(&p, &ops, Precision::Fp32, 32, (5.0, false)).step_time_ms;
        assert!((inline - alone - 5.0).abs() < 1e-9);
        let hidden = predict(&p, &ops, Precision::Fp32, 32, (alone / 2.0, true));
        assert!((hidden.step_time_ms - alone).abs() < 1e-9);
    }
}
