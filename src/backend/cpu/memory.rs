//! The CPU's memory: tensors in the host's RAM, counted in the backend's ledger.

use super::values::{put, widened};
use super::{CpuBackend, CpuLease};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::tensor::{Lease, Storage, Tensor};
use crate::backend::traits::DeviceMemory;
use crate::device::Device;
use crate::memory::{MemorySnapshot, Role};
use crate::precision::DType;
use crate::trace::{Category, Lane};

impl DeviceMemory for CpuBackend {
    fn alloc_as(
        &mut self,
        role: Role,
        label: &str,
        (rows, cols): (usize, usize),
        dtype: DType,
    ) -> Result<Tensor, BackendError> {
        let bytes = (rows * cols * dtype.bytes()) as u64;
        {
            let mut ledger = self
                .ledger
                .lock()
                .map_err(|_| BackendError::Setup("the memory ledger is poisoned".into()))?;
            if !ledger.fits(bytes) {
                let oom = ledger.out_of_memory(Device::Cpu, label, role, bytes);
                return Err(BackendError::OutOfMemory(Box::new(oom)));
            }
            ledger.allocate(role, bytes, bytes, true);
        }
        let lease = Lease(Box::new(CpuLease {
            ledger: std::sync::Arc::clone(&self.ledger),
            role,
            bytes,
        }));
        let storage = match dtype {
            DType::F32 => Storage::Cpu(vec![0.0; rows * cols]),
            DType::F16 | DType::Bf16 => Storage::CpuHalf(vec![0; rows * cols]),
        };
        let tensor = Tensor::new(label, role, rows, cols, dtype, storage, lease);
        if dtype != DType::F32 {
            self.ensure_working(rows * cols)?;
        }
        Ok(tensor)
    }

    fn write(&mut self, t: &mut Tensor, values: &[f32]) -> Result<(), BackendError> {
        checks::write(Device::Cpu, t, values.len())?;
        let start = self.recorder.now_ns();
        put(t, values, &mut self.census);
        // On the CPU the "device" memory is the same RAM: the copy is the whole transfer.
        let bytes = t.size_in_bytes() as u64;
        self.recorder.span(
            Lane::Transfer,
            Category::Memcpy,
            "copy into tensor (RAM)",
            start,
            bytes,
        );
        Ok(())
    }

    fn read(&mut self, t: &Tensor) -> Result<Vec<f32>, BackendError> {
        checks::read(Device::Cpu, t)?;
        // Every CPU op has finished when it returns: there is nothing to wait for.
        let start = self.recorder.now_ns();
        let values = widened(t);
        let bytes = t.size_in_bytes() as u64;
        self.recorder.span(
            Lane::Readback,
            Category::Memcpy,
            "copy to host (RAM)",
            start,
            bytes,
        );
        Ok(values)
    }

    fn memory(&self) -> MemorySnapshot {
        self.ledger.lock().map(|l| l.snapshot()).unwrap_or_default()
    }

    fn set_memory_budget(&mut self, budget_bytes: Option<u64>) {
        if let Ok(mut l) = self.ledger.lock() {
            l.set_budget(budget_bytes);
        }
    }

    fn reset_peak_memory(&mut self) {
        if let Ok(mut l) = self.ledger.lock() {
            l.reset_peaks();
        }
    }

    fn clear_caches(&mut self) -> Result<(), BackendError> {
        self.working.clear();
        Ok(())
    }
}
