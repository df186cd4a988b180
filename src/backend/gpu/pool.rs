//! The GPU's caching buffer pool, after PyTorch's CUDA caching allocator: a tensor's buffer is
//! one of a few size classes, and when the tensor is dropped the buffer is kept for the next
//! tensor of that class instead of being given back. So *allocated* (buffers of live tensors) and
//! *reserved* (every buffer held) part, and "release cached" gives the kept ones back.
//!
//! Size classes as in PyTorch: up to 1 MiB, multiples of 512 bytes; above, multiples of 2 MiB.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::memory::{Ledger, Role};

/// The accounting and the cached buffers of one GPU backend, shared with its tensors.
#[derive(Default)]
pub(super) struct Pool {
    pub ledger: Ledger,
    /// Buffers of dropped tensors, by block size.
    cache: HashMap<u64, Vec<wgpu::Buffer>>,
}

pub(super) type SharedPool = Arc<Mutex<Pool>>;

const SMALL_LIMIT: u64 = 1 << 20;
const SMALL_ROUND: u64 = 512;
const LARGE_ROUND: u64 = 2 << 20;

/// The block a tensor of `bytes` gets.
pub(super) fn block_size(bytes: u64) -> u64 {
    let bytes = bytes.max(1);
    let round = if bytes <= SMALL_LIMIT {
        SMALL_ROUND
    } else {
        LARGE_ROUND
    };
    bytes.div_ceil(round) * round
}

impl Pool {
    /// A cached buffer of exactly `block` bytes, if one is kept.
    pub fn take(&mut self, block: u64) -> Option<wgpu::Buffer> {
        self.cache.get_mut(&block).and_then(Vec::pop)
    }

    /// Gives every cached buffer back to the device; returns the bytes released.
    pub fn release_cached(&mut self) -> u64 {
        let bytes: u64 = self
            .cache
            .iter()
            .map(|(block, buffers)| block * buffers.len() as u64)
            .sum();
        self.cache.clear();
        self.ledger.release(bytes);
        bytes
    }
}

/// Counts `bytes` more (or, negative, fewer) of the backend's own buffers in the accounting.
pub(super) fn count_internal(pool: &SharedPool, bytes: i64) {
    if let Ok(mut p) = pool.lock() {
        p.ledger.internal(bytes);
    }
}

/// A GPU tensor's buffer, returned to the pool's cache when the tensor is dropped.
pub(super) struct GpuLease {
    pub pool: SharedPool,
    pub role: Role,
    pub bytes: u64,
    pub block: u64,
    pub buffer: Option<wgpu::Buffer>,
}

impl Drop for GpuLease {
    fn drop(&mut self) {
        if let (Ok(mut pool), Some(buffer)) = (self.pool.lock(), self.buffer.take()) {
            pool.ledger.free(self.role, self.bytes, self.block, true);
            pool.cache.entry(self.block).or_default().push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::block_size;

    #[test]
    fn blocks_round_to_512_bytes_then_to_2_mib() {
        assert_eq!(block_size(4), 512);
        assert_eq!(block_size(512), 512);
        assert_eq!(block_size(513), 1024);
        assert_eq!(block_size(1 << 20), 1 << 20);
        assert_eq!(block_size((1 << 20) + 1), 2 << 20);
        assert_eq!(block_size(5 << 20), 6 << 20);
    }
}
