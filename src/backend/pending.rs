//! A read back that does not wait: started after a step is submitted, finished at a later look
//! once the device has the values. A browser's GPU answers a read only when the page gets its
//! turn back, so a loop sharing the page's thread reads this way (see `train/handle.rs`); the
//! CPU's values are there at once.

use crate::backend::error::BackendError;
use crate::backend::gpu::readback::GpuRead;

/// A read started with [`DeviceMemory::start_read`](super::DeviceMemory::start_read).
pub struct PendingRead(State);

enum State {
    /// The values, there already (the CPU's).
    Ready(Vec<f32>),
    /// A GPU's staging buffer, asked to be mapped.
    Gpu(Box<GpuRead>),
    /// Handed out.
    Taken,
}

impl PendingRead {
    /// A read whose values are there already.
    pub fn ready(values: Vec<f32>) -> Self {
        Self(State::Ready(values))
    }

    /// A GPU's read on its way.
    pub(crate) fn gpu(read: GpuRead) -> Self {
        Self(State::Gpu(Box::new(read)))
    }

    /// The values, if they were there already (once).
    pub fn take_ready(&mut self) -> Option<Vec<f32>> {
        match std::mem::replace(&mut self.0, State::Taken) {
            State::Ready(values) => Some(values),
            other => {
                self.0 = other;
                None
            }
        }
    }

    /// The GPU's read, if this is one that has not been handed out.
    pub(crate) fn gpu_mut(&mut self) -> Option<&mut GpuRead> {
        match &mut self.0 {
            State::Gpu(read) => Some(read),
            _ => None,
        }
    }

    /// The GPU's read, handed out (once).
    pub(crate) fn take_gpu(&mut self) -> Option<Box<GpuRead>> {
        match std::mem::replace(&mut self.0, State::Taken) {
            State::Gpu(read) => Some(read),
            other => {
                self.0 = other;
                None
            }
        }
    }
}

/// Reads started together and taken in together: a page's evaluation starts every read it
/// needs before any comes back.
#[derive(Debug, Default)]
pub struct PendingReads {
    reads: Vec<PendingRead>,
    /// The values of the reads that are in, in order.
    done: Vec<Option<Vec<f32>>>,
}

impl PendingReads {
    /// `reads`, to be taken in together.
    pub fn new(reads: Vec<PendingRead>) -> Self {
        let done = vec![None; reads.len()];
        Self { reads, done }
    }

    /// Every read's values, in the order they were started, once all are in (`None`: not
    /// yet, look again later); `finish_read` is the device's (`DeviceMemory::finish_read`).
    /// Gives them once.
    pub fn finish(
        &mut self,
        mut finish_read: impl FnMut(&mut PendingRead) -> Option<Result<Vec<f32>, BackendError>>,
    ) -> Option<Result<Vec<Vec<f32>>, BackendError>> {
        for (read, done) in self.reads.iter_mut().zip(&mut self.done) {
            if done.is_none() {
                match finish_read(read)? {
                    Ok(values) => *done = Some(values),
                    Err(e) => return Some(Err(e)),
                }
            }
        }
        Some(Ok(self
            .done
            .iter_mut()
            .map(|d| d.take().unwrap_or_default())
            .collect()))
    }
}

impl std::fmt::Debug for PendingRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.0 {
            State::Ready(v) => format!("ready, {} values", v.len()),
            State::Gpu(_) => "on the GPU's way".to_owned(),
            State::Taken => "taken".to_owned(),
        };
        write!(f, "PendingRead({what})")
    }
}
