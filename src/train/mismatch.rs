//! The device-mismatch lesson: a layer's weights on the GPU, a batch left in the CPU's memory,
//! and one real op between them. The op fails with the backend's own typed error (the one a
//! training step would hit, as PyTorch's "expected all tensors to be on the same device");
//! then the batch is copied to the GPU, as `.to(device)` would, and the same op runs.

use crate::backend::cpu::CpuBackend;
use crate::backend::{Activation, BackendError, DeviceMemory, OpenOptions, open};
use crate::device::Device;
use crate::i18n::{Arg, ErrKey, Said};
use crate::memory::Role;

/// Rows of the demonstration's batch, inputs and outputs of its layer.
const ROWS: usize = 8;
const INPUTS: usize = 2;
const OUTPUTS: usize = 4;

/// What the demonstration found.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The GPU adapter the weights were put on.
    pub adapter: String,
    /// Whether that adapter is a software one (it runs the GPU code on the CPU).
    pub software: bool,
    /// The error the op returned with the batch on the CPU: the backend's own, not a copy.
    pub error: BackendError,
    /// The same op once the batch was copied to the GPU: its output's first row, read back.
    pub fixed_row: Vec<f32>,
    /// Bytes the copy moved to the GPU.
    pub copied_bytes: usize,
}

/// Runs the demonstration on a GPU opened with `options`; an error in plain words when there is no GPU to put the weights on, or the op did not fail as it
/// must (a defect, reported rather than hidden).
pub fn demonstrate(options: &OpenOptions) -> Result<Mismatch, Said> {
    let mut gpu = open(Device::Gpu, options)?;
    let adapter = gpu.name();
    let software = gpu.adapter_summary().is_some_and(|a| a.software);
    let mut cpu = CpuBackend::new(1).map_err(|e| e.said())?;
    let fail = |e: BackendError| e.said();
    // The model on the GPU: one dense layer.
    let mut w = gpu
        .alloc(Role::Parameters, "layer 1 weights", INPUTS, OUTPUTS)
        .map_err(fail)?;
    let weights: Vec<f32> = (0..INPUTS * OUTPUTS)
        .map(|i| 0.25 * i as f32 - 0.5)
        .collect();
    gpu.write(&mut w, &weights).map_err(fail)?;
    let b = gpu
        .alloc(Role::Parameters, "layer 1 biases", 1, OUTPUTS)
        .map_err(fail)?;
    let mut out = gpu
        .alloc(Role::Activations, "layer 1 output", ROWS, OUTPUTS)
        .map_err(fail)?;
    // The batch where the loader made it: in the CPU's memory.
    let values: Vec<f32> = (0..ROWS * INPUTS).map(|i| i as f32 / 10.0).collect();
    let mut batch = cpu
        .alloc(Role::Inputs, "batch", ROWS, INPUTS)
        .map_err(fail)?;
    cpu.write(&mut batch, &values).map_err(fail)?;
    let error = match gpu.linear_forward(&batch, &w, &b, Activation::Relu, &mut out) {
        Err(e @ BackendError::DeviceMismatch { .. }) => e,
        Err(other) => {
            let other = other.said();
            return Err(Said::with(
                ErrKey::MismatchFailedOtherwise,
                &[("detail", Arg::Said(&other))],
            ));
        }
        Ok(()) => return Err(Said::new(ErrKey::MismatchRanAnyway, &[])),
    };
    // The fix: the batch copied to the GPU (read from where it is, written where the model is).
    let host = cpu.read(&batch).map_err(fail)?;
    let mut on_gpu = gpu
        .alloc(Role::Inputs, "batch", ROWS, INPUTS)
        .map_err(fail)?;
    gpu.write(&mut on_gpu, &host).map_err(fail)?;
    gpu.linear_forward(&on_gpu, &w, &b, Activation::Relu, &mut out)
        .map_err(fail)?;
    let result = gpu.read(&out).map_err(fail)?;
    Ok(Mismatch {
        adapter,
        software,
        error,
        fixed_row: result[..OUTPUTS].to_vec(),
        copied_bytes: on_gpu.size_in_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::GpuChoice;

    #[test]
    fn without_a_gpu_the_lesson_says_why_instead_of_pretending() {
        let options = OpenOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("no adapter in this test")),
            ..OpenOptions::default()
        };
        assert_eq!(
            demonstrate(&options).expect_err("no GPU").to_string(),
            "no adapter in this test"
        );
    }

    #[test]
    fn the_op_fails_with_the_typed_error_then_runs_once_the_batch_is_moved() {
        let m = match demonstrate(&OpenOptions::default()) {
            Ok(m) => m,
            Err(reason) => {
                let ci = std::env::var("CI").is_ok_and(|v| v == "true");
                assert!(!ci, "CI=true and no GPU adapter: {reason}");
                return;
            }
        };
        assert_eq!(
            m.error,
            BackendError::DeviceMismatch {
                expected: Device::Gpu,
                found: Device::Cpu,
                op: "linear_forward",
            }
        );
        assert!(
            m.error
                .to_string()
                .starts_with("expected all tensors on the same device, found gpu and cpu"),
            "{}",
            m.error
        );
        // Row 0 of the batch is (0, 0.1): relu(0.1 · w[1, j] + 0) with w[1, j] = 0.25·(4 + j) − 0.5.
        let want: Vec<f32> = (0..OUTPUTS)
            .map(|j| (0.1f32 * (0.25 * (OUTPUTS + j) as f32 - 0.5)).max(0.0))
            .collect();
        for (g, w) in m.fixed_row.iter().zip(&want) {
            assert!((g - w).abs() < 1e-6, "{:?} vs {want:?}", m.fixed_row);
        }
        assert_eq!(m.copied_bytes, ROWS * INPUTS * 4);
    }
}
