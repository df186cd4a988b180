//! A prediction over a whole set on its way: its chunks' reads, started and not waited for.

use crate::backend::{Backend, BackendError, PendingReads};

/// A prediction whose reads are on their way, one per chunk of the evaluation rows (see
/// [`Network::start_predict`](super::Network::start_predict)).
#[derive(Debug)]
pub struct Predicting {
    pub(super) reads: PendingReads,
    /// Each chunk's rows in use (the last chunk is zero-padded).
    pub(super) rows: Vec<usize>,
    pub(super) classes: usize,
}

impl Predicting {
    /// The logits, once every chunk's read is in (`None`: not yet, look again later).
    pub fn finish(&mut self, backend: &mut dyn Backend) -> Option<Result<Vec<f32>, BackendError>> {
        let chunks = self.reads.finish(|r| backend.finish_read(r))?;
        Some(chunks.map(|chunks| {
            chunks
                .into_iter()
                .zip(&self.rows)
                .flat_map(|(mut chunk, n)| {
                    chunk.truncate(n * self.classes);
                    chunk
                })
                .collect()
        }))
    }
}
