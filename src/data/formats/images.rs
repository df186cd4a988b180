//! A folder of images with one sub-folder per class (`pets/cat/1.png`, `pets/dog/7.jpg`, …), the
//! layout of torchvision's `ImageFolder`. Every PNG or JPEG is decoded, turned grey or kept RGB,
//! and resized to `side × side` pixels, so each image becomes one row of features in `[0, 1]`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::common::{
    DataError, IMAGE_SIDES, ImageOptions, LoadOptions, MAX_FILE_CLASSES, Progress, check_rows,
    display_name, io_error, too_large,
};
use super::stream::check_regular;
use crate::data::dataset::{ImageShape, Table, Task};
use crate::i18n::{Arg, DataKey, Said};
use crate::units::format_bytes;

/// Largest width or height of an image file the decoder accepts, so that a tiny file that claims
/// to be enormous cannot exhaust memory.
const MAX_DECODED_SIDE: u32 = 8192;
/// Most bytes one decoder may allocate (an 8192 × 8192 RGB image is 192 MiB).
const MAX_DECODER_ALLOC: u64 = 200 << 20;
/// Images whose decoded pixels take more than this are decoded one at a time, so that the cores
/// decoding in parallel never hold several large images at once.
const LARGE_IMAGE_BYTES: u64 = 16 << 20;
/// Largest image file read: far more than any photo, far less than the memory.
const MAX_IMAGE_FILE_BYTES: u64 = 64 << 20;

fn is_image_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "png" | "jpg" | "jpeg"))
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}

/// The entries of `dir`, sorted by name, hidden ones left out.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let shown = dir.display().to_string();
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(&shown, &e))? {
        let entry = entry.map_err(|e| io_error(&shown, &e))?;
        let path = entry.path();
        if !is_hidden(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// Decodes one PNG or JPEG and returns its `side × side` pixels (grey, or RGB channel-last) in
/// `[0, 1]`. `path` is only for the message.
pub fn decode_image(
    bytes: &[u8],
    path: &str,
    options: &ImageOptions,
) -> Result<Vec<f32>, DataError> {
    decode_one(bytes, path, options, None)
}

/// As [`decode_image`]; a large image takes `large` first, so only one is decoded at a time.
fn decode_one(
    bytes: &[u8],
    path: &str,
    options: &ImageOptions,
    large: Option<&Mutex<()>>,
) -> Result<Vec<f32>, DataError> {
    let refuse = |why: Said| DataError::Refused {
        path: path.to_owned(),
        message: Said::with(DataKey::ImageUnreadable, &[("why", Arg::Said(&why))]),
    };
    let system = |e: &dyn std::fmt::Display| Said::verbatim(e.to_string());
    let reader = || {
        image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| refuse(system(&e)))
    };
    let format = reader()?.format();
    let (width, height) = reader()?
        .into_dimensions()
        .map_err(|e| refuse(system(&e)))?;
    if width > MAX_DECODED_SIDE || height > MAX_DECODED_SIDE {
        return Err(refuse(Said::new(
            DataKey::ImageHuge,
            &[
                ("width", &width),
                ("height", &height),
                ("max", &MAX_DECODED_SIDE),
            ],
        )));
    }
    if format == Some(image::ImageFormat::Jpeg) && !jpeg_is_complete(bytes) {
        return Err(refuse(Said::new(DataKey::JpegCut, &[])));
    }
    if format == Some(image::ImageFormat::Png) && !png_is_complete(bytes) {
        return Err(refuse(Said::new(DataKey::PngCut, &[])));
    }
    let _one_at_a_time = (u64::from(width) * u64::from(height) * 4 > LARGE_IMAGE_BYTES)
        .then_some(large)
        .flatten()
        .map(|lock| {
            lock.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        });
    let mut reader = reader()?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    limits.max_alloc = Some(MAX_DECODER_ALLOC);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| refuse(system(&e)))?;
    let side = options.side as u32;
    let filter = image::imageops::FilterType::Triangle;
    Ok(if options.rgb {
        let rgb = image::imageops::resize(&decoded.to_rgb8(), side, side, filter);
        rgb.as_raw().iter().map(|&v| f32::from(v) / 255.0).collect()
    } else {
        let grey = image::imageops::resize(&decoded.to_luma8(), side, side, filter);
        grey.as_raw()
            .iter()
            .map(|&v| f32::from(v) / 255.0)
            .collect()
    })
}

/// Whether a JPEG's scan ends with the end-of-image marker `FF D9`. In the entropy-coded data
/// after the last start-of-scan marker (`FF DA`), `FF` is only ever followed by `00` or a
/// restart marker, so an `FF D9` there is the real end; a file cut short has none (and the
/// decoder would fill the missing part with grey without a word).
fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let last_scan = bytes.windows(2).rposition(|w| w == [0xff, 0xda]);
    last_scan.is_some_and(|at| bytes[at..].windows(2).any(|w| w == [0xff, 0xd9]))
}

/// Whether a PNG's chunks run whole, one after the other, from the signature to the `IEND`
/// chunk. A file cut short ends inside a chunk or before `IEND`; walking the chunk lengths
/// (rather than searching for the four letters) cannot be fooled by `IEND` inside the
/// compressed pixels.
fn png_is_complete(bytes: &[u8]) -> bool {
    let mut at = 8; // the signature
    while let Some(header) = bytes.get(at..at + 8) {
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        // Length, type, data and CRC.
        let Some(end) = at.checked_add(12).and_then(|a| a.checked_add(length)) else {
            return false;
        };
        if end > bytes.len() {
            return false;
        }
        if &header[4..8] == b"IEND" {
            return true;
        }
        at = end;
    }
    false
}

/// Reads an image file, refusing one far larger than any image needs.
fn read_image(path: &Path) -> Result<Vec<u8>, DataError> {
    let shown = path.display().to_string();
    let meta = check_regular(path, &shown)?;
    if meta.len() > MAX_IMAGE_FILE_BYTES {
        return Err(DataError::Refused {
            path: shown,
            message: Said::new(
                DataKey::ImageFileLarge,
                &[
                    ("bytes", &format_bytes(meta.len())),
                    ("max", &format_bytes(MAX_IMAGE_FILE_BYTES)),
                ],
            ),
        });
    }
    std::fs::read(path).map_err(|e| io_error(&shown, &e))
}

/// Loads every image under `dir`'s class sub-folders.
pub(crate) fn load_folder(
    dir: &Path,
    load_options: &LoadOptions,
    progress: Progress,
) -> Result<Table, DataError> {
    let options = &load_options.image;
    let shown = dir.display().to_string();
    let refuse = |message: Said| DataError::Refused {
        path: shown.clone(),
        message,
    };
    if !IMAGE_SIDES.contains(&options.side) {
        return Err(refuse(Said::new(
            DataKey::ImageSide,
            &[
                ("side", &options.side),
                ("min", IMAGE_SIDES.start()),
                ("max", IMAGE_SIDES.end()),
            ],
        )));
    }
    let Found {
        class_names,
        files,
        notes,
    } = Found::under(dir)?;
    check_rows(&shown, files.len(), 0)?;
    let channels = if options.rgb { 3 } else { 1 };
    let shape = ImageShape {
        width: options.side,
        height: options.side,
        channels,
    };
    let values_bytes = (files.len() * shape.len() * 4) as u64;
    if values_bytes > load_options.budget_bytes {
        return Err(too_large(
            &shown,
            &Said::new(
                DataKey::ImagesTake,
                &[
                    ("n", &files.len()),
                    ("side", &options.side),
                    ("channels", &channels),
                ],
            ),
            values_bytes,
            load_options.budget_bytes,
        ));
    }
    let x = decode_all(&files, shape, options, progress, &shown)?;
    Ok(Table {
        name: display_name(dir),
        path: shown,
        format: "images",
        feature_names: pixel_names(options.side, options.rgb),
        columns: Vec::new(),
        task: Task::Classification,
        task_reason: Said::new(DataKey::ImageFolderReason, &[]),
        class_names,
        // No column: the label is where each image lies.
        label_column: String::new(),
        label_reason: Said::new(DataKey::SubFolders, &[]),
        notes,
        rows_with_missing_values: 0,
        rows: files.len(),
        image: Some(shape),
        x,
        y: files.iter().map(|(class, _)| *class as f32).collect(),
    })
}

/// The images of a folder of class sub-folders, and what was left out.
struct Found {
    /// One class per sub-folder with images, in the folder's order.
    class_names: Vec<String>,
    /// Each image and its class.
    files: Vec<(usize, PathBuf)>,
    /// What was left out: empty sub-folders, files that are no images, images outside a
    /// sub-folder.
    notes: Vec<Said>,
}

impl Found {
    /// Finds the images under `dir`, refusing a folder that does not hold two to
    /// [`MAX_FILE_CLASSES`] classes of them.
    fn under(dir: &Path) -> Result<Self, DataError> {
        let mut found = Found {
            class_names: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
        };
        let mut loose_images = 0;
        let mut skipped = Vec::new();
        for entry in entries(dir)? {
            if !entry.is_dir() {
                if is_image_file(&entry) {
                    loose_images += 1;
                }
                continue;
            }
            let images: Vec<PathBuf> = entries(&entry)?
                .into_iter()
                .filter(|p| {
                    let image = p.is_file() && is_image_file(p);
                    if !image && p.is_file() {
                        skipped.push(p.clone());
                    }
                    image
                })
                .collect();
            if images.is_empty() {
                found.notes.push(Said::new(
                    DataKey::EmptySubfolder,
                    &[("name", &display_name(&entry))],
                ));
                continue;
            }
            let class = found.class_names.len();
            found.class_names.push(display_name(&entry));
            found.files.extend(images.into_iter().map(|p| (class, p)));
        }
        if let Some(first) = skipped.first() {
            found.notes.push(Said::new(
                DataKey::NotImages,
                &[("n", &skipped.len()), ("first", &first.display())],
            ));
        }
        if loose_images > 0 {
            found
                .notes
                .push(Said::new(DataKey::LooseImages, &[("n", &loose_images)]));
        }
        found.check(dir, loose_images)?;
        Ok(found)
    }

    /// Refuses no images, one class, or more classes than a model takes.
    fn check(&self, dir: &Path, loose_images: usize) -> Result<(), DataError> {
        let refuse = |message: Said| DataError::Refused {
            path: dir.display().to_string(),
            message,
        };
        let classes = self.class_names.len();
        if self.files.is_empty() {
            return Err(refuse(if loose_images > 0 {
                Said::new(DataKey::NoSubfolders, &[("n", &loose_images)])
            } else {
                Said::new(DataKey::NoImages, &[])
            }));
        }
        if classes < 2 {
            return Err(refuse(Said::new(
                DataKey::OneSubfolder,
                &[("name", &self.class_names[0])],
            )));
        }
        if classes > MAX_FILE_CLASSES {
            return Err(refuse(Said::new(
                DataKey::ManySubfolders,
                &[("n", &classes), ("max", &MAX_FILE_CLASSES)],
            )));
        }
        Ok(())
    }
}

/// Decodes every image into its row of the values. Decoding is the slow part: it is spread
/// over the cores, counts what is done, and stops early when the user cancels or an image
/// fails.
fn decode_all(
    files: &[(usize, PathBuf)],
    shape: ImageShape,
    options: &ImageOptions,
    progress: Progress,
    shown: &str,
) -> Result<Vec<f32>, DataError> {
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let large = Mutex::new(());
    let total = files.len();
    // Each image is written straight into its row: no second copy of the values.
    let mut x = vec![0.0f32; total * shape.len()];
    let errors: Vec<(usize, DataError)> = x
        .par_chunks_mut(shape.len())
        .zip(files.par_iter())
        .enumerate()
        .filter_map(|(i, (row, (_, path)))| {
            if stop.load(Ordering::Relaxed) {
                let path = shown.to_owned();
                return Some((i, DataError::Cancelled { path }));
            }
            let file = path.display().to_string();
            let result =
                read_image(path).and_then(|bytes| decode_one(&bytes, &file, options, Some(&large)));
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(64) && !progress(n as f32 / total as f32) {
                stop.store(true, Ordering::Relaxed);
            }
            match result {
                Ok(pixels) => {
                    row.copy_from_slice(&pixels);
                    None
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    Some((i, e))
                }
            }
        })
        .collect();
    // The first real error in file order; a cancellation only when there is none.
    if let Some((_, e)) = errors
        .into_iter()
        .min_by_key(|(i, e)| (matches!(e, DataError::Cancelled { .. }), *i))
    {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) {
        let path = shown.to_owned();
        return Err(DataError::Cancelled { path });
    }
    Ok(x)
}

/// Each value's name: its pixel's row and column, and its colour in RGB.
fn pixel_names(side: usize, rgb: bool) -> Vec<String> {
    let channels = if rgb { 3 } else { 1 };
    (0..side * side * channels)
        .map(|i| {
            let (pixel, channel) = (i / channels, i % channels);
            let (r, c) = (pixel / side, pixel % side);
            if rgb {
                format!("pixel {r},{c} {}", ["red", "green", "blue"][channel])
            } else {
                format!("pixel {r},{c}")
            }
        })
        .collect()
}
