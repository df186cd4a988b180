//! IDX files, the format of MNIST and Fashion-MNIST: an images file (`…-images-idx3-ubyte`,
//! N×H×W unsigned bytes) and its labels file (`…-labels-idx1-ubyte`, N bytes), each plain or
//! gzip-compressed.
//!
//! The header is the magic `00 00 08 dims` (8 = unsigned byte) followed by one big-endian `u32`
//! per dimension; the values follow, row-major.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::common::{DataError, Progress, check_rows, classes_of};
use super::stream::{self, data_error};
use crate::data::dataset::{ImageShape, Table, Task};
use crate::i18n::{Arg, DataKey, Said};
use crate::units::format_bytes;

/// Whether `bytes` start like an IDX file of unsigned bytes with 1 to 3 dimensions.
pub fn has_magic(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[..3] == [0, 0, 0x08] && (1..=3).contains(&bytes[3])
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn fill(reader: &mut impl Read, buf: &mut [u8], path: &str) -> Result<usize, DataError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(data_error(e, path)),
        }
    }
    Ok(filled)
}

/// The shape and values of one IDX file's (decompressed) bytes.
pub fn parse(bytes: &[u8], path: &str) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    parse_stream(bytes, path, u64::MAX)
}

/// The shape and values of one IDX stream. The header is checked against `budget` (every
/// value becomes a 4-byte float) before anything is allocated, so a small file whose header
/// claims billions of values is refused at once.
pub(crate) fn parse_stream(
    mut reader: impl Read,
    path: &str,
    budget: u64,
) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let bad = |offset: usize, message: Said| DataError::Byte {
        path: path.to_owned(),
        offset: offset as u64,
        message,
    };
    let mut magic = [0u8; 4];
    let got = fill(&mut reader, &mut magic, path)?;
    if got < 4 || magic[0] != 0 || magic[1] != 0 {
        let found: Vec<String> = magic[..got].iter().map(|b| format!("{b:02x}")).collect();
        return Err(bad(
            0,
            Said::new(DataKey::IdxMagic, &[("found", &found.join(" "))]),
        ));
    }
    if magic[2] != 0x08 {
        return Err(bad(
            2,
            Said::new(
                DataKey::IdxValueType,
                &[("kind", &format_args!("{:02x}", magic[2]))],
            ),
        ));
    }
    let dims = usize::from(magic[3]);
    if !(1..=3).contains(&dims) {
        return Err(bad(
            3,
            Said::new(DataKey::IdxDimensions, &[("dims", &dims)]),
        ));
    }
    let header = 4 + 4 * dims;
    let mut sizes = [0u8; 12];
    let got = fill(&mut reader, &mut sizes[..4 * dims], path)?;
    if got < 4 * dims {
        return Err(bad(
            4 + got,
            Said::new(
                DataKey::IdxShortHeader,
                &[("dims", &dims), ("header", &header), ("got", &(4 + got))],
            ),
        ));
    }
    let shape: Vec<usize> = sizes[..4 * dims]
        .chunks_exact(4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let shown_shape = shape
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" × ");
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&c| c.checked_mul(4).is_some())
        .ok_or_else(|| {
            bad(
                4,
                Said::new(DataKey::IdxOverflow, &[("shape", &shown_shape)]),
            )
        })?;
    let as_floats = count as u64 * 4;
    if as_floats > budget {
        return Err(DataError::Refused {
            path: path.to_owned(),
            message: Said::new(
                DataKey::IdxTooLarge,
                &[
                    ("shape", &shown_shape),
                    ("bytes", &format_bytes(as_floats)),
                    ("budget", &format_bytes(budget)),
                ],
            ),
        });
    }
    // Grow with what arrives rather than trusting the header for the allocation.
    let mut values = Vec::with_capacity(count.min(16 << 20));
    (&mut reader)
        .take(count as u64)
        .read_to_end(&mut values)
        .map_err(|e| data_error(e, path))?;
    let extra =
        std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| data_error(e, path))?;
    let follow = values.len() as u64 + extra;
    if follow != count as u64 {
        return Err(bad(
            header,
            Said::new(
                DataKey::IdxLength,
                &[
                    ("count", &count),
                    ("shape", &shown_shape),
                    ("follow", &follow),
                ],
            ),
        ));
    }
    Ok((shape, values))
}

/// The names of an IDX pair, given either one's: `images-idx3` ↔ `labels-idx1`.
pub(crate) fn pair_names(name: &str) -> Option<(String, String)> {
    if name.contains("images-idx3") {
        Some((name.to_owned(), name.replace("images-idx3", "labels-idx1")))
    } else if name.contains("labels-idx1") {
        Some((name.replace("labels-idx1", "images-idx3"), name.to_owned()))
    } else {
        None
    }
}

/// Given the images or the labels file, both.
fn pair_paths(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let (images, labels) = pair_names(path.file_name()?.to_str()?)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    Some((dir.join(images), dir.join(labels)))
}

/// Loads an IDX images file and its labels file, given either one (`bytes` are its contents).
pub(crate) fn load_pair(
    path: &Path,
    name: &str,
    opened: impl Read,
    budget: u64,
    progress: Progress,
) -> Result<Table, DataError> {
    let shown = path.display().to_string();
    let (images_path, labels_path) = pair_paths(path).ok_or_else(|| DataError::Refused {
        path: shown.clone(),
        message: Said::new(DataKey::IdxUnpaired, &[]),
    })?;
    // The opened file is checked first: its own header error is the one to report.
    let opened_is_images = images_path == path;
    let opened = parse_stream(opened, &shown, budget)?;
    let partner_path = if opened_is_images {
        &labels_path
    } else {
        &images_path
    };
    let other_half = |e: DataError| match e {
        DataError::Io { path, message } => DataError::Io {
            path,
            message: Said::with(
                DataKey::IdxOtherHalf,
                &[
                    ("message", Arg::Said(&message)),
                    ("name", Arg::Plain(&name)),
                ],
            ),
        },
        other => other,
    };
    let partner_shown = partner_path.display().to_string();
    let partner_stream =
        stream::open(partner_path, budget, progress, (0.5, 0.9)).map_err(other_half)?;
    let partner = parse_stream(partner_stream, &partner_shown, budget)?;
    let (images, labels) = if opened_is_images {
        (opened, partner)
    } else {
        (partner, opened)
    };
    let file = |path: &Path, (shape, values)| IdxFile {
        shown: path.display().to_string(),
        shape,
        values,
    };
    pair_table(name, file(&images_path, images), file(&labels_path, labels))
}

/// One parsed IDX file: the path as shown, its shape and its values.
pub(crate) struct IdxFile {
    pub shown: String,
    pub shape: Vec<usize>,
    pub values: Vec<u8>,
}

/// An images file and its labels file as one table, named from `name`.
pub(crate) fn pair_table(name: &str, images: IdxFile, labels: IdxFile) -> Result<Table, DataError> {
    let IdxFile {
        shown: images_shown,
        shape,
        values: pixels,
    } = images;
    let IdxFile {
        shown: labels_shown,
        shape: label_shape,
        values: labels,
    } = labels;
    if shape.len() != 3 {
        return Err(DataError::Byte {
            path: images_shown,
            offset: 3,
            message: Said::new(DataKey::IdxImagesDims, &[("dims", &shape.len())]),
        });
    }
    if label_shape.len() != 1 {
        return Err(DataError::Byte {
            path: labels_shown,
            offset: 3,
            message: Said::new(DataKey::IdxLabelsDims, &[("dims", &label_shape.len())]),
        });
    }
    let (rows, height, width) = (shape[0], shape[1], shape[2]);
    if label_shape[0] != rows {
        return Err(DataError::Refused {
            path: images_shown,
            message: Said::new(
                DataKey::IdxCountMismatch,
                &[
                    ("rows", &rows),
                    ("labels", &labels_shown),
                    ("count", &label_shape[0]),
                ],
            ),
        });
    }
    check_rows(&images_shown, rows, 0)?;
    // Labels are bytes: name the classes from the distinct values, then map every label.
    let mut seen = [false; 256];
    for &l in &labels {
        seen[usize::from(l)] = true;
    }
    let values: Vec<String> = (0..=255u8)
        .filter(|&v| seen[usize::from(v)])
        .map(|v| v.to_string())
        .collect();
    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let (class_names, class_of_value) = classes_of(&refs, "labels", &labels_shown)?;
    let mut class_of = [0.0f32; 256];
    for (name, &class) in values.iter().zip(&class_of_value) {
        class_of[name.parse::<usize>().unwrap_or(0)] = class;
    }
    let y: Vec<f32> = labels.iter().map(|&l| class_of[usize::from(l)]).collect();
    let x: Vec<f32> = pixels.iter().map(|&p| f32::from(p) / 255.0).collect();
    Ok(Table {
        name: name
            .replace("-images-idx3-ubyte", "")
            .replace("-labels-idx1-ubyte", "")
            .replace(".gz", ""),
        path: images_shown,
        format: "idx",
        feature_names: (0..height * width)
            .map(|i| format!("pixel {},{}", i / width, i % width))
            .collect(),
        columns: Vec::new(),
        task: Task::Classification,
        task_reason: Said::new(DataKey::IdxLabels, &[]),
        class_names,
        label_column: labels_shown,
        label_reason: Said::new(DataKey::IdxLabelsFile, &[]),
        notes: Vec::new(),
        rows_with_missing_values: 0,
        rows,
        image: Some(ImageShape {
            width,
            height,
            channels: 1,
        }),
        x,
        y,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_checked_value_by_value() {
        let ok = [0, 0, 8, 1, 0, 0, 0, 3, 5, 6, 7];
        assert_eq!(parse(&ok, "l").expect("valid"), (vec![3], vec![5, 6, 7]));
        let err = parse(&[1, 2, 3, 4, 5], "f").expect_err("magic").to_string();
        assert!(
            err.starts_with("f, byte 0: wrong magic number `01 02 03 04`"),
            "{err}"
        );
        let err = parse(
            &[0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3],
            "f",
        )
        .expect_err("short")
        .to_string();
        assert!(
            err.contains("byte 16") && err.contains("8 values (2 × 2 × 2) but 3 bytes follow"),
            "{err}"
        );
        let huge = [
            0, 0, 8, 3, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        ];
        assert!(parse(&huge, "f").is_err());
    }
}
