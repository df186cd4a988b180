//! The f32 working copies 16-bit operands are widened into.
//!
//! Every kernel computes in f32. An op on a tensor stored in FP16 or BF16 widens it into one of
//! four f32 buffers (one per operand of the op with the most), runs the f32 kernel on that, and
//! rounds its result back into 16 bits. The copies are as large as the largest 16-bit tensor
//! and counted as workspace. Each (tensor, copy) pair keeps bind groups of its own, so one op's
//! working copies never take another's parameters.

use super::dispatch::Binding;
use crate::backend::error::BackendError;
use crate::backend::tensor::{Storage, Tensor, WORKING_COPIES};

/// The working copies (none until a 16-bit tensor exists).
#[derive(Default)]
pub(super) struct WorkingCopies {
    copies: Vec<Tensor>,
}

impl WorkingCopies {
    /// Whether there are copies of at least `len` values each.
    pub fn hold(&self, len: usize) -> bool {
        self.copies.len() == WORKING_COPIES && self.copies.iter().all(|w| w.len() >= len)
    }

    /// Uses `copies` from now on (the old ones, and what binds them, are dropped by the caller).
    pub fn replace(&mut self, copies: Vec<Tensor>) {
        self.copies = copies;
    }

    /// Drops the copies.
    pub fn clear(&mut self) {
        self.copies.clear();
    }

    /// Working copy `slot` bound as the f32 values of `t`.
    pub fn binding(&self, t: &Tensor, slot: usize) -> Result<Binding, BackendError> {
        match self.copies.get(slot) {
            Some(copy) if copy.len() >= t.len() => match copy.storage() {
                Storage::Gpu(buffer) => Ok(Binding {
                    id: view_id(t, slot),
                    buffer: buffer.clone(),
                }),
                Storage::Cpu(_) | Storage::CpuHalf(_) => Err(too_small(t)),
            },
            _ => Err(too_small(t)),
        }
    }
}

fn too_small(t: &Tensor) -> BackendError {
    BackendError::Setup(format!(
        "no f32 working copy large enough for `{}` ({} values)",
        t.label(),
        t.len()
    ))
}

/// The cache-key id of working copy `slot` bound as the f32 values of `t`.
fn view_id(t: &Tensor, slot: usize) -> u64 {
    t.id() | ((slot as u64 + 1) << 56)
}

/// Whether a cache-key id is a working copy's (see [`view_id`]).
pub(super) fn is_working_view(id: u64) -> bool {
    (1..=WORKING_COPIES as u64).contains(&(id >> 56))
}
