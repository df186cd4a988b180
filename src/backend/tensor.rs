//! A tensor: a 2-D row-major block of values on one device, stored in one number format, counted
//! under one memory role; and the checks an op runs on its tensors.

use std::fmt;

use super::error::BackendError;
use crate::device::Device;
use crate::memory::Role;
use crate::precision::DType;

/// f32 working copies a backend keeps for 16-bit operands: one per operand of the op with the
/// most (a dense layer's input, weights, bias and output; Adam's four tensors).
pub const WORKING_COPIES: usize = 4;

/// Values of the largest 16-bit tensor among `operands` (0 when all are f32): how large an op's
/// working copies must be.
pub(crate) fn largest_half(operands: &[&Tensor]) -> usize {
    operands
        .iter()
        .filter(|t| t.dtype() != DType::F32)
        .map(|t| t.len())
        .max()
        .unwrap_or(0)
}

/// The working copies' names in the memory view.
pub(crate) const WORKING_LABELS: [&str; WORKING_COPIES] = [
    "f32 working copy 1",
    "f32 working copy 2",
    "f32 working copy 3",
    "f32 working copy 4",
];

/// A 2-D row-major tensor that knows its device and how its values are stored.
#[derive(Debug)]
pub struct Tensor {
    id: u64,
    label: String,
    role: Role,
    rows: usize,
    cols: usize,
    dtype: DType,
    storage: Storage,
    /// A placeholder's shape while it is lent memory (see [`Tensor::lend_from`]).
    slot_shape: (usize, usize),
    /// Gives the memory back to the device's accounting (and pool) when the tensor is dropped.
    lease: Option<Lease>,
}

/// Whatever returns a tensor's memory when dropped (each backend has its own kind); it is only
/// ever dropped, never read.
pub(crate) struct Lease(
    #[expect(dead_code, reason = "held only to be dropped with the tensor")]
    pub(crate)  Box<dyn std::any::Any + Send>,
);

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Lease")
    }
}

#[derive(Debug)]
pub(crate) enum Storage {
    Cpu(Vec<f32>),
    /// FP16 or BF16 bits on the host.
    CpuHalf(Vec<u16>),
    /// On the GPU a 16-bit tensor packs two values in each 32-bit word, the lower-indexed value
    /// in the low half: the same bytes as the host's `Vec<u16>`.
    Gpu(wgpu::Buffer),
}

impl Tensor {
    /// The device this tensor's memory is on.
    pub fn device(&self) -> Device {
        match self.storage {
            Storage::Cpu(_) | Storage::CpuHalf(_) => Device::Cpu,
            Storage::Gpu(_) => Device::Gpu,
        }
    }

    /// Unique per process; the GPU backend keys its cached bind groups on it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name the memory and journey views show.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// What the tensor is for, in the memory accounting.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `rows * cols`.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How the values are stored.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Bytes of device memory the values take.
    pub fn size_in_bytes(&self) -> usize {
        self.len() * self.dtype.bytes()
    }

    /// Bytes a GPU buffer of this tensor needs: whole 32-bit words (an odd number of 16-bit
    /// values leaves half a word unused).
    pub(crate) fn word_bytes(&self) -> usize {
        self.size_in_bytes().div_ceil(4) * 4
    }

    pub(crate) fn new(
        label: &str,
        role: Role,
        rows: usize,
        cols: usize,
        dtype: DType,
        storage: Storage,
        lease: Lease,
    ) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            label: label.to_owned(),
            role,
            rows,
            cols,
            dtype,
            storage,
            slot_shape: (rows, cols),
            lease: Some(lease),
        }
    }

    /// A tensor that holds nothing and is counted nowhere: the slot of a checkpointed pass's
    /// `shape` tensor, which is lent a buffer of the shared workspace while its segment runs.
    /// Unlent it is empty, so that no op accepts it (an op given it by mistake fails on its
    /// shape instead of reading another segment's values).
    pub(crate) fn placeholder(
        label: &str,
        role: Role,
        shape: (usize, usize),
        dtype: DType,
    ) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT_ID: AtomicU64 = AtomicU64::new(1 << 62);
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            label: label.to_owned(),
            role,
            rows: 0,
            cols: 0,
            dtype,
            storage: Storage::Cpu(Vec::new()),
            slot_shape: shape,
            lease: None,
        }
    }

    /// Lends `buffer`'s memory (a workspace tensor of this one's type, at least as large) to
    /// this placeholder, which takes its own shape; its values are whatever the buffer held.
    pub(crate) fn lend_from(&mut self, buffer: &mut Tensor) {
        std::mem::swap(&mut self.storage, &mut buffer.storage);
        (self.rows, self.cols) = self.slot_shape;
        let len = self.len();
        // Within the capacity the buffer was made with: nothing is allocated or moved.
        match &mut self.storage {
            Storage::Cpu(v) => v.truncate(len),
            Storage::CpuHalf(v) => v.truncate(len),
            Storage::Gpu(_) => {}
        }
    }

    /// Gives the memory [`Tensor::lend_from`] lent back to `buffer`, leaving this placeholder
    /// empty again.
    pub(crate) fn give_back(&mut self, buffer: &mut Tensor) {
        let len = buffer.len();
        match &mut self.storage {
            Storage::Cpu(v) => v.resize(len, 0.0),
            Storage::CpuHalf(v) => v.resize(len, 0),
            Storage::Gpu(_) => {}
        }
        std::mem::swap(&mut self.storage, &mut buffer.storage);
        (self.rows, self.cols) = (0, 0);
    }

    /// Whether this is a checkpointed pass's empty slot (see [`Tensor::placeholder`]).
    pub fn is_placeholder(&self) -> bool {
        self.lease.is_none()
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    pub(crate) fn storage_mut(&mut self) -> &mut Storage {
        &mut self.storage
    }
}

/// Fails with [`BackendError::DeviceMismatch`] unless every tensor is on `expected`.
pub fn check_device(
    expected: Device,
    op: &'static str,
    tensors: &[&Tensor],
) -> Result<(), BackendError> {
    match tensors.iter().find(|t| t.device() != expected) {
        Some(t) => Err(BackendError::DeviceMismatch {
            expected,
            found: t.device(),
            op,
        }),
        None => Ok(()),
    }
}

/// Fails with [`BackendError::Shape`] unless `t` is `rows x cols`.
pub fn check_shape(
    op: &'static str,
    t: &Tensor,
    rows: usize,
    cols: usize,
) -> Result<(), BackendError> {
    if t.rows == rows && t.cols == cols {
        Ok(())
    } else {
        Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` is {}x{}, expected {rows}x{cols}",
                t.label, t.rows, t.cols
            ),
        })
    }
}
