//! Where the memory goes: every tensor's bytes by role, allocated against reserved, peaks, and a
//! budget with a real out-of-memory error. (The estimator that predicts the same figures from a
//! model's description is in `sim::estimate`.)
//!
//! Each backend keeps a [`Ledger`] shared with its tensors, which give their memory back when
//! they are dropped. On the GPU a freed buffer stays in a caching pool for reuse, as in PyTorch's
//! CUDA caching allocator, so *reserved* (everything held from the device) can be more than
//! *allocated* (what live tensors hold); on the CPU the two are the same.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::device::Device;
use crate::i18n::{Arg, ErrKey, Said};
use crate::units::format_bytes;

/// What a tensor is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Weights and biases.
    Parameters,
    /// The parameters' gradients.
    Gradients,
    /// Adam's two moments, or momentum's velocity.
    OptimizerState,
    /// Layer outputs kept for the backward pass (and, with the leak setting, kept for good).
    Activations,
    /// The batch's inputs and targets.
    Inputs,
    /// Everything else of the model: backward temporaries, evaluation buffers, loss statistics.
    Workspace,
    /// BatchScope's own GPU buffers: kernel parameter blocks, readback staging, the timestamp
    /// queries' buffers, the upload ring.
    Internal,
}

impl Role {
    /// Every role, in the order the memory view stacks them.
    pub const ALL: [Role; 7] = [
        Role::Parameters,
        Role::Gradients,
        Role::OptimizerState,
        Role::Activations,
        Role::Inputs,
        Role::Workspace,
        Role::Internal,
    ];

    /// Lower-case name used in JSON and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Parameters => "parameters",
            Role::Gradients => "gradients",
            Role::OptimizerState => "optimizer_state",
            Role::Activations => "activations",
            Role::Inputs => "inputs",
            Role::Workspace => "workspace",
            Role::Internal => "internal",
        }
    }

    /// The role's name in the translation table.
    pub fn key(self) -> crate::i18n::Key {
        use crate::i18n::Key;
        match self {
            Role::Parameters => Key::RoleParameters,
            Role::Gradients => Key::RoleGradients,
            Role::OptimizerState => Key::RoleOptimizer,
            Role::Activations => Key::RoleActivations,
            Role::Inputs => Key::RoleInputs,
            Role::Workspace => Key::RoleWorkspace,
            Role::Internal => Key::RoleInternal,
        }
    }

    /// Index into per-role arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The memory of one device at one moment. All figures in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct MemorySnapshot {
    /// Bytes live tensors asked for, by role (indexed like [`Role::ALL`]).
    #[serde(rename = "by_role")]
    pub bytes_by_role: [u64; 7],
    /// Held by live tensors, in the pool's block sizes.
    #[serde(rename = "allocated")]
    pub allocated_bytes: u64,
    /// Held from the device or the system: allocated plus the pool's cached blocks.
    #[serde(rename = "reserved")]
    pub reserved_bytes: u64,
    /// Most `allocated_bytes` since the counters were last reset.
    #[serde(rename = "peak_allocated")]
    pub peak_allocated_bytes: u64,
    /// Most `reserved_bytes` since the counters were last reset.
    #[serde(rename = "peak_reserved")]
    pub peak_reserved_bytes: u64,
    /// The budget allocations are checked against, if one is set.
    #[serde(rename = "budget")]
    pub budget_bytes: Option<u64>,
    /// Live tensors.
    pub tensors: usize,
}

impl MemorySnapshot {
    /// Bytes of `role`.
    pub fn role(&self, role: Role) -> u64 {
        self.bytes_by_role[role.index()]
    }

    /// Bytes asked for by all live tensors.
    pub fn requested(&self) -> u64 {
        self.bytes_by_role.iter().sum()
    }

    /// Block-size rounding and cached blocks: reserved beyond what tensors asked for.
    pub fn cached(&self) -> u64 {
        self.reserved_bytes.saturating_sub(self.allocated_bytes)
    }
}

/// An allocation refused because it would go past the budget, reported as a user meets it later
/// in PyTorch: what was asked for, the budget, what is allocated and reserved, and what to try.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct OutOfMemory {
    /// Which device.
    pub device: Device,
    /// The tensor that did not fit.
    pub label: String,
    /// Its role.
    pub role: Role,
    /// Bytes it needed (in the pool's block size).
    pub requested_bytes: u64,
    /// The budget.
    pub budget_bytes: u64,
    /// Bytes live tensors held.
    pub allocated_bytes: u64,
    /// Bytes held in all.
    pub reserved_bytes: u64,
    /// What would fit the budget, where the run knows (from the estimator).
    pub advice: Option<FitAdvice>,
}

/// What would fit a memory budget, worked out by the estimator for the run that did not fit: a
/// prediction, and said to be one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitAdvice {
    /// The same updates fit as more and smaller micro-batches: the largest micro-batch below
    /// the run's that divides the update's rows and whose estimate, with the gradients' sums,
    /// is within the budget.
    Accumulate {
        /// Rows a micro-batch.
        micro: usize,
        /// Micro-batches an update.
        micro_batches: u32,
        /// What the run needs so, estimated.
        estimated_bytes: u64,
    },
    /// No batch size fits: even one row a batch needs this much.
    NoBatchFits {
        /// What the run needs at batch 1, estimated.
        estimated_bytes: u64,
    },
}

/// English, as the command line and logs print it; the window shows [`OutOfMemory::said`].
impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.said().fmt(f)
    }
}

impl OutOfMemory {
    /// What was asked for, what the budget holds and what to try, in both languages.
    pub fn said(&self) -> Said {
        let role = Said::new(role_key(self.role), &[]);
        let label = &self.label;
        let mut said = Said::with(
            ErrKey::OomLead,
            &[
                ("device", Arg::Plain(&device_name(self.device))),
                ("requested", Arg::Plain(&format_bytes(self.requested_bytes))),
                ("label", Arg::Plain(label)),
                ("role", Arg::Said(&role)),
                ("budget", Arg::Plain(&format_bytes(self.budget_bytes))),
                ("allocated", Arg::Plain(&format_bytes(self.allocated_bytes))),
            ],
        );
        if self.device == Device::Gpu {
            said = said.then(&Said::new(
                ErrKey::OomReserved,
                &[("reserved", &format_bytes(self.reserved_bytes))],
            ));
        }
        let advice = match self.advice {
            None => Said::new(ErrKey::OomAdviceNone, &[]),
            Some(FitAdvice::Accumulate {
                micro,
                micro_batches,
                estimated_bytes,
            }) => Said::new(
                crate::i18n::LeverKey::OomAdviceAccumulate,
                &[
                    ("n", &micro_batches),
                    ("micro", &micro),
                    ("batch", &(micro * micro_batches as usize)),
                    ("estimated", &format_bytes(estimated_bytes)),
                ],
            ),
            Some(FitAdvice::NoBatchFits { estimated_bytes }) => Said::new(
                ErrKey::OomAdviceNoBatch,
                &[("estimated", &format_bytes(estimated_bytes))],
            ),
        };
        said.then(&advice)
            .then(&Said::new(ErrKey::OomGraphTail, &[]))
    }
}

/// The lower-case name of a role, as an error sentence uses it.
fn role_key(role: Role) -> ErrKey {
    match role {
        Role::Parameters => ErrKey::RoleParameters,
        Role::Gradients => ErrKey::RoleGradients,
        Role::OptimizerState => ErrKey::RoleOptimizerState,
        Role::Activations => ErrKey::RoleActivations,
        Role::Inputs => ErrKey::RoleInputs,
        Role::Workspace => ErrKey::RoleWorkspace,
        Role::Internal => ErrKey::RoleInternal,
    }
}

fn device_name(device: Device) -> &'static str {
    match device {
        Device::Cpu => "CPU",
        Device::Gpu => "GPU",
    }
}

/// The accounting of one device, shared by its backend and its tensors.
#[derive(Debug, Default)]
pub struct Ledger {
    snapshot: MemorySnapshot,
}

/// A ledger behind a lock: tensors are dropped wherever their owner is.
pub type SharedLedger = Arc<Mutex<Ledger>>;

impl Ledger {
    /// The current figures.
    pub fn snapshot(&self) -> MemorySnapshot {
        self.snapshot
    }

    /// Sets or clears the budget.
    pub fn set_budget(&mut self, budget: Option<u64>) {
        self.snapshot.budget_bytes = budget;
    }

    /// Whether `more` reserved bytes fit the budget.
    pub fn fits(&self, more: u64) -> bool {
        self.snapshot
            .budget_bytes
            .is_none_or(|b| self.snapshot.reserved_bytes + more <= b)
    }

    /// Counts a new tensor of `bytes` in a block of `block` bytes; `fresh` when the block was
    /// newly reserved rather than taken from the cache.
    pub fn allocate(&mut self, role: Role, bytes: u64, block: u64, fresh: bool) {
        let s = &mut self.snapshot;
        s.bytes_by_role[role.index()] += bytes;
        s.allocated_bytes += block;
        if fresh {
            s.reserved_bytes += block;
        }
        s.tensors += 1;
        s.peak_allocated_bytes = s.peak_allocated_bytes.max(s.allocated_bytes);
        s.peak_reserved_bytes = s.peak_reserved_bytes.max(s.reserved_bytes);
    }

    /// Counts a tensor freed; `cached` when its block stays reserved in a pool.
    pub fn free(&mut self, role: Role, bytes: u64, block: u64, cached: bool) {
        let s = &mut self.snapshot;
        s.bytes_by_role[role.index()] = s.bytes_by_role[role.index()].saturating_sub(bytes);
        s.allocated_bytes = s.allocated_bytes.saturating_sub(block);
        if !cached {
            s.reserved_bytes = s.reserved_bytes.saturating_sub(block);
        }
        s.tensors = s.tensors.saturating_sub(1);
    }

    /// Counts `bytes` more (negative: fewer) of a backend's own buffers, which are not tensors.
    pub fn internal(&mut self, bytes: i64) {
        let s = &mut self.snapshot;
        let n = bytes.unsigned_abs();
        let i = Role::Internal.index();
        if bytes >= 0 {
            s.bytes_by_role[i] += n;
            s.allocated_bytes += n;
            s.reserved_bytes += n;
            s.peak_allocated_bytes = s.peak_allocated_bytes.max(s.allocated_bytes);
            s.peak_reserved_bytes = s.peak_reserved_bytes.max(s.reserved_bytes);
        } else {
            s.bytes_by_role[i] = s.bytes_by_role[i].saturating_sub(n);
            s.allocated_bytes = s.allocated_bytes.saturating_sub(n);
            s.reserved_bytes = s.reserved_bytes.saturating_sub(n);
        }
    }

    /// Counts cached blocks given back to the device.
    pub fn release(&mut self, bytes: u64) {
        self.snapshot.reserved_bytes = self.snapshot.reserved_bytes.saturating_sub(bytes);
    }

    /// Starts the peaks over from the current figures.
    pub fn reset_peaks(&mut self) {
        let s = &mut self.snapshot;
        s.peak_allocated_bytes = s.allocated_bytes;
        s.peak_reserved_bytes = s.reserved_bytes;
    }

    /// The error for an allocation of `block` bytes that does not fit.
    pub fn out_of_memory(
        &self,
        device: Device,
        label: &str,
        role: Role,
        block: u64,
    ) -> OutOfMemory {
        let s = &self.snapshot;
        OutOfMemory {
            device,
            label: label.to_owned(),
            role,
            requested_bytes: block,
            budget_bytes: s.budget_bytes.unwrap_or(u64::MAX),
            allocated_bytes: s.allocated_bytes,
            reserved_bytes: s.reserved_bytes,
            advice: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocated_and_reserved_part_when_blocks_are_cached() {
        let mut l = Ledger::default();
        l.allocate(Role::Parameters, 1000, 1024, true);
        l.allocate(Role::Activations, 3000, 3072, true);
        assert_eq!(
            (l.snapshot().allocated_bytes, l.snapshot().reserved_bytes),
            (4096, 4096)
        );
        // The activation's block goes back to the cache: no longer allocated, still reserved.
        l.free(Role::Activations, 3000, 3072, true);
        let s = l.snapshot();
        assert_eq!(
            (s.allocated_bytes, s.reserved_bytes, s.cached()),
            (1024, 4096, 3072)
        );
        assert_eq!(s.role(Role::Activations), 0);
        assert_eq!(s.peak_allocated_bytes, 4096);
        l.release(3072);
        assert_eq!(l.snapshot().reserved_bytes, 1024);
    }

    #[test]
    fn the_budget_counts_reserved_bytes_and_the_error_says_everything() {
        let mut l = Ledger::default();
        l.set_budget(Some(4096));
        l.allocate(Role::Parameters, 4000, 4096, true);
        assert!(!l.fits(512));
        let e = l.out_of_memory(Device::Gpu, "layer0.output", Role::Activations, 512);
        let text = e.to_string();
        assert!(
            text.starts_with("GPU out of memory: tried to allocate 512 B "),
            "{text}"
        );
        for part in [
            "`layer0.output` (activations)",
            "budget is 4.0 KiB",
            "smaller batch",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        // The window's Chinese says the same, with the tensor's code name and the sizes kept.
        let zh = e.said().text(crate::i18n::Lang::Zh).to_owned();
        for part in [
            "GPU 内存不足",
            "`layer0.output`（激活值）",
            "预算为 4.0 KiB",
            "更小的批次",
        ] {
            assert!(zh.contains(part), "{part}: {zh}");
        }
    }
}
