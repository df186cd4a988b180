//! Reading a data file as a stream: only regular files, gzip of one member or many decompressed
//! on the fly, never more than the memory budget, with progress and Cancel between reads.
//!
//! The parsers read from `open`'s reader and keep only what they store, so a file's memory is
//! what its values honestly take, checked as they arrive, never "read everything, then check".

use std::cell::Cell;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::rc::Rc;

use super::common::{DataError, Progress, io_error, too_large};
use crate::i18n::{Arg, DataKey, Said};
use crate::platform::held::{self, Held};

/// Bytes read between two progress reports (and two chances to cancel).
const PROGRESS_EVERY: u64 = 1 << 20;

/// Refuses anything that is not a regular file: a FIFO or a device would block or never end.
pub(crate) fn check_regular(path: &Path, shown: &str) -> Result<std::fs::Metadata, DataError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(shown, &e))?;
    if meta.is_file() {
        return Ok(meta);
    }
    let kind = Said::new(crate::files::special_kind(&meta), &[]);
    Err(DataError::Refused {
        path: shown.to_owned(),
        message: Said::with(DataKey::NotRegular, &[("kind", Arg::Said(&kind))]),
    })
}

/// A regular file's bytes, decompressed when they are gzip, as a buffered reader that stops
/// with a [`DataError`] (carried inside the `io::Error`; see [`data_error`]) past the budget or
/// when the progress callback cancels.
pub(crate) type Stream<'a> = BufReader<Guarded<'a>>;

/// Opens `path` for streaming within `budget` decompressed bytes; progress goes from `from` to
/// `to` as the file is read.
pub(crate) fn open<'a>(
    path: &Path,
    budget: u64,
    progress: Progress<'a>,
    (from, to): (f32, f32),
) -> Result<Stream<'a>, DataError> {
    let shown = path.display().to_string();
    let (source, len): (Box<dyn Read>, u64) = match held::get(path) {
        // A file a browser's page was handed: its bytes, or why there are none.
        Some(Held::Read(bytes)) => {
            let len = bytes.len() as u64;
            (Box::new(Cursor::new(bytes)), len)
        }
        Some(Held::TooLarge(len)) => {
            return Err(too_large(
                &shown,
                &Said::new(DataKey::FileHas, &[]),
                len,
                budget,
            ));
        }
        Some(Held::Unreadable(why)) => {
            return Err(io_error(&shown, &std::io::Error::other(why)));
        }
        None => {
            let len = check_regular(path, &shown)?.len();
            let file = File::open(path).map_err(|e| io_error(&shown, &e))?;
            (Box::new(file), len)
        }
    };
    let consumed = Rc::new(Cell::new(0));
    let mut raw = BufReader::new(Counted {
        inner: source,
        consumed: Rc::clone(&consumed),
    });
    let head = raw.fill_buf().map_err(|e| io_error(&shown, &e))?;
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    if !gzip && len > budget {
        return Err(too_large(
            &shown,
            &Said::new(DataKey::FileHas, &[]),
            len,
            budget,
        ));
    }
    let inner: Box<dyn Read + 'a> = if gzip {
        // Every member: `cat a.gz b.gz`, bgzip and `pigz -i` write several.
        Box::new(flate2::bufread::MultiGzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    Ok(BufReader::with_capacity(
        64 << 10,
        Guarded {
            inner,
            path: shown,
            gzip,
            budget,
            file_len: len.max(1),
            consumed,
            out: 0,
            next_report: PROGRESS_EVERY,
            progress,
            span: (from, to),
        },
    ))
}

/// Counts the bytes read from the file itself (before decompression), for progress and for
/// naming where a gzip stream broke.
struct Counted<R> {
    inner: R,
    consumed: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(self.consumed.get() + n as u64);
        Ok(n)
    }
}

/// The reader under [`Stream`]: the budget, the progress and the translation of gzip's errors.
pub(crate) struct Guarded<'a> {
    inner: Box<dyn Read + 'a>,
    path: String,
    gzip: bool,
    budget: u64,
    file_len: u64,
    consumed: Rc<Cell<u64>>,
    out: u64,
    next_report: u64,
    progress: Progress<'a>,
    span: (f32, f32),
}

impl Guarded<'_> {
    fn fail(error: DataError) -> std::io::Error {
        std::io::Error::other(error)
    }

    /// A gzip error as the user should read it: where, and what to do.
    fn gzip_error(&self, e: &std::io::Error) -> DataError {
        let compressed = self.consumed.get();
        let message = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Said::new(
                DataKey::GzipTruncated,
                &[("compressed", &compressed), ("out", &self.out)],
            )
        } else if e.to_string().contains("checksum") {
            Said::new(DataKey::GzipChecksum, &[("out", &self.out)])
        } else {
            Said::new(DataKey::GzipDamaged, &[("why", e), ("out", &self.out)])
        };
        // The place in the file itself: where it was cut or damaged.
        DataError::Byte {
            path: self.path.clone(),
            offset: compressed,
            message,
        }
    }
}

impl Read for Guarded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.out >= self.next_report {
            self.next_report = self.out + PROGRESS_EVERY;
            let share = (self.consumed.get() as f32 / self.file_len as f32).min(1.0);
            let (from, to) = self.span;
            if !(self.progress)(from + (to - from) * share) {
                return Err(Self::fail(DataError::Cancelled {
                    path: self.path.clone(),
                }));
            }
        }
        // Never read more than one byte past the budget: that byte is the proof it is exceeded.
        let room = (self.budget + 1).saturating_sub(self.out);
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = match self.inner.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Err(e),
            Err(e) if self.gzip => return Err(Self::fail(self.gzip_error(&e))),
            Err(e) => return Err(Self::fail(io_error(&self.path, &e))),
        };
        self.out += n as u64;
        if self.out > self.budget {
            let what = Said::new(
                if self.gzip {
                    DataKey::DecompressesTo
                } else {
                    DataKey::FileHasMore
                },
                &[],
            );
            return Err(Self::fail(too_large(
                &self.path,
                &what,
                self.budget,
                self.budget,
            )));
        }
        Ok(n)
    }
}

/// The [`DataError`] an `io::Error` from a [`Stream`] carries, or the error as an I/O error of
/// `path`.
pub(crate) fn data_error(e: std::io::Error, path: &str) -> DataError {
    if e.get_ref()
        .and_then(|inner| inner.downcast_ref::<DataError>())
        .is_some()
    {
        if let Some(inner) = e.into_inner()
            && let Ok(error) = inner.downcast::<DataError>()
        {
            return *error;
        }
        return DataError::Io {
            path: path.to_owned(),
            message: Said::new(DataKey::CannotReadAtAll, &[]),
        };
    }
    io_error(path, &e)
}

/// `bytes` themselves, or their decompressed contents if they start with the gzip magic `1f 8b`,
/// within `budget` bytes (for data already in memory, such as a file dropped on the window).
pub fn gunzip_if_needed(raw: Vec<u8>, path: &str, budget: u64) -> Result<Vec<u8>, DataError> {
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return Ok(raw);
    }
    let consumed = Rc::new(Cell::new(0));
    let mut guarded = Guarded {
        inner: Box::new(flate2::read::MultiGzDecoder::new(Counted {
            inner: raw.as_slice(),
            consumed: Rc::clone(&consumed),
        })),
        path: path.to_owned(),
        gzip: true,
        budget,
        file_len: raw.len().max(1) as u64,
        consumed,
        out: 0,
        next_report: u64::MAX,
        progress: &super::common::no_progress,
        span: (0.0, 1.0),
    };
    let mut out = Vec::new();
    guarded
        .read_to_end(&mut out)
        .map_err(|e| data_error(e, path))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).expect("write");
        enc.finish().expect("finish")
    }

    #[test]
    fn every_gzip_member_is_read_and_a_bad_checksum_is_named() {
        let mut two = gzip(b"first\n");
        two.extend(gzip(b"second\n"));
        assert_eq!(
            gunzip_if_needed(two, "a.gz", 1 << 20).expect("valid"),
            b"first\nsecond\n"
        );
        let mut bad = gzip(&[7u8; 5000]);
        let crc = bad.len() - 8;
        bad[crc] ^= 0xff;
        let len = bad.len() as u64;
        let err = gunzip_if_needed(bad, "a.gz", 1 << 20).expect_err("crc");
        assert!(
            matches!(&err, DataError::Byte { offset, message, .. }
                if *offset == len && message.to_string().contains("checksum")
                    && message.to_string().contains("after 5000 decompressed bytes")),
            "{err}"
        );
        let err = gunzip_if_needed(gzip(&[0u8; 5000]), "a.gz", 4096).expect_err("budget");
        assert!(
            err.to_string().contains("decompresses to more than"),
            "{err}"
        );
    }
}
