//! Bringing values back to the host. A storage buffer cannot be mapped, so results are copied
//! into a staging buffer the host can map for reading; mapping it waits for the GPU to finish
//! everything submitted before — the sync point of a training step.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::pool::{SharedPool, count_internal};
use crate::backend::error::BackendError;

thread_local! {
    /// Blocking maps made on this thread: a browser's loop must make none (see
    /// [`blocking_maps`]).
    static BLOCKING_MAPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times this thread has waited for a buffer to be mapped, blocking: the tests of the
/// browser's training loop check that it never does (there it would fail).
pub fn blocking_maps() -> u64 {
    BLOCKING_MAPS.with(std::cell::Cell::get)
}

/// A GPU's read on its way (see [`PendingRead`](crate::backend::PendingRead)): the staging
/// buffer its values were copied to, asked to be mapped, and what the tensor holds.
pub(crate) struct GpuRead {
    pub(super) staging: Lent,
    pub(super) answer: MapAnswer,
    pub(super) half: Option<crate::precision::Half>,
    pub(super) len: usize,
    /// When it was asked for, on the recorder's clock: the wait is a sync, spent between frames.
    pub(super) started_ns: u64,
}

/// The answer to a map asked for without waiting.
pub(super) type MapAnswer = async_channel::Receiver<Result<(), wgpu::BufferAsyncError>>;

/// Asks for all of `staging` to be mapped for reading, without waiting: the answer comes
/// through the receiver once the device is polled (the desktop) or the page's event loop has
/// turned (a browser). The blocking read's twin is [`map_for_reading`].
pub(super) fn request_map(staging: &mut Lent) -> MapAnswer {
    staging.mapping = true;
    request_slice_map(&staging.buffer.slice(..))
}

/// Asks for `slice` to be mapped for reading, without waiting (see [`request_map`]).
pub(super) fn request_slice_map(slice: &wgpu::BufferSlice<'_>) -> MapAnswer {
    // A channel that can be looked at (`try_recv`, [`look_at`]) or awaited (`recv`): the
    // page's worker looks between frames, the self-test awaits.
    let (tx, rx) = async_channel::bounded(1);
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = tx.try_send(result);
    });
    rx
}

/// Whether the map `answer` waits for has come, without waiting (`None`: not yet). The
/// desktop's device answers when polled, here; a browser's by itself, between two of the
/// page's frames.
pub(super) fn look_at(
    device: &wgpu::Device,
    answer: &MapAnswer,
) -> Option<Result<(), BackendError>> {
    if let Err(e) = device.poll(wgpu::PollType::Poll) {
        return Some(Err(BackendError::Gpu(format!(
            "looking at the GPU failed: {e}"
        ))));
    }
    match answer.try_recv() {
        Err(async_channel::TryRecvError::Empty) => None,
        Err(async_channel::TryRecvError::Closed) => Some(Err(dropped_read())),
        Ok(answer) => Some(answer.map_err(|e| mapping_failed(&e))),
    }
}

/// A map wgpu answered with an error.
pub(super) fn mapping_failed(e: &wgpu::BufferAsyncError) -> BackendError {
    BackendError::Gpu(format!("mapping a buffer failed: {e}"))
}

/// A map whose answer can no longer come.
pub(super) fn dropped_read() -> BackendError {
    BackendError::Gpu("the GPU dropped a read before answering it".into())
}

/// Staging buffers for reads, by size in bytes, made once and reused. A read holds its buffer
/// until its values are copied out; reads on their way at the same time (a page's evaluation
/// starts one per chunk before any comes back) each hold one of their own.
#[derive(Clone, Default)]
pub(super) struct Staging {
    free: Arc<Mutex<HashMap<u64, Vec<wgpu::Buffer>>>>,
}

impl Staging {
    /// A staging buffer of `size_in_bytes`: a free one, or one made (and counted) now.
    pub fn lend(&self, device: &wgpu::Device, pool: &SharedPool, size_in_bytes: u64) -> Lent {
        let free = self
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&size_in_bytes)
            .and_then(Vec::pop);
        let buffer = free.unwrap_or_else(|| {
            count_internal(pool, size_in_bytes as i64);
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback-staging"),
                size: size_in_bytes,
                // A storage buffer cannot be mapped; results travel through this buffer,
                // which the CPU can map for reading.
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        Lent {
            buffer,
            home: self.clone(),
            mapping: false,
        }
    }
}

/// A staging buffer lent to one read; it goes back to the free ones when dropped (unmapped,
/// if the read was given up before its values came).
pub(super) struct Lent {
    buffer: wgpu::Buffer,
    home: Staging,
    /// A map was asked for and the buffer not unmapped since (wgpu refuses to unmap a buffer
    /// that is not mapped, and has no way to ask).
    mapping: bool,
}

impl std::ops::Deref for Lent {
    type Target = wgpu::Buffer;

    fn deref(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.mapping {
            self.buffer.unmap();
        }
        self.home
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(self.buffer.size())
            .or_default()
            .push(self.buffer.clone());
    }
}

/// Maps `range` of `buffer` for reading, waits for the GPU, and returns the bytes.
pub(super) fn map_read(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    range: std::ops::Range<u64>,
) -> Result<Vec<u8>, BackendError> {
    let slice = buffer.slice(range);
    map_for_reading(device, &slice)?;
    copy_mapped(buffer, &slice)
}

/// Copies a lent staging buffer, mapped, to the host and unmaps it.
pub(super) fn copy_lent(staging: &mut Lent) -> Result<Vec<u8>, BackendError> {
    let bytes = copy_mapped(&staging.buffer, &staging.buffer.slice(..))?;
    staging.mapping = false;
    Ok(bytes)
}

/// Asks for all of a lent staging buffer to be mapped and waits until it is.
pub(super) fn map_lent(device: &wgpu::Device, staging: &mut Lent) -> Result<(), BackendError> {
    staging.mapping = true;
    map_for_reading(device, &staging.buffer.slice(..))
}

/// Copies the mapped `slice` of `buffer` to the host and unmaps the buffer.
pub(super) fn copy_mapped(
    buffer: &wgpu::Buffer,
    slice: &wgpu::BufferSlice<'_>,
) -> Result<Vec<u8>, BackendError> {
    let bytes = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| BackendError::Gpu(format!("reading a mapped buffer failed: {e}")))?;
        view.to_vec()
    };
    buffer.unmap();
    Ok(bytes)
}

/// Waits until the GPU has finished everything submitted to it.
pub(super) fn wait_idle(device: &wgpu::Device) -> Result<(), BackendError> {
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| BackendError::Gpu(format!("waiting for the GPU failed: {e}")))
}

/// Asks for `slice` to be mapped for reading and waits until it is (which waits for the GPU).
pub(super) fn map_for_reading(
    device: &wgpu::Device,
    slice: &wgpu::BufferSlice<'_>,
) -> Result<(), BackendError> {
    BLOCKING_MAPS.with(|n| n.set(n.get() + 1));
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = tx.send(result);
    });
    wait_idle(device)?;
    // The wait above fires the callback on the desktop. A browser's GPU answers only once the
    // page's event loop turns, which no wait here can let happen: there the reads of a step go
    // through `request_map` (`DeviceMemory::start_read`, `GpuBackend::read_async`), and one
    // that comes here instead fails, never hangs.
    match rx.try_recv() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(mapping_failed(&e)),
        Err(_) => Err(BackendError::Gpu(
            "the GPU did not finish mapping a buffer (in a browser, reads must wait \
             asynchronously)"
                .into(),
        )),
    }
}
