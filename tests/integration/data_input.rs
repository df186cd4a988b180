//! Bad input, case by case: each gets a message that names the file, the line or byte offset,
//! and what was expected — and nothing panics. Then random bytes and random mutations of valid
//! files go through every parser, which must answer with a table or an error, never a panic.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use batchscope::data::formats::{ImageOptions, LoadOptions, gunzip_if_needed, load};
use batchscope::data::formats::{csv, idx, images, text};
use batchscope::data::shipped::source_tree_path;
use batchscope::data::{Split, Table};
use batchscope::train::{Session, TrainConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("batchscope-input-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent folder");
    }
    std::fs::write(&path, bytes).expect("write");
    path
}

/// Loads `path`, asserting that it neither panics nor succeeds; returns the message.
fn refusal(path: &Path, options: &LoadOptions) -> String {
    let result = catch_unwind(AssertUnwindSafe(|| load(path, options)))
        .unwrap_or_else(|_| panic!("loading {} panicked", path.display()));
    match result {
        Ok(table) => panic!(
            "{} loaded ({} rows) but should be refused",
            path.display(),
            table.rows
        ),
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.starts_with(&path.display().to_string())
                    || message.contains(&*path.file_name().expect("name").to_string_lossy()),
                "the message does not name the file: {message}"
            );
            message
        }
    }
}

fn rows(n: usize, f: impl Fn(usize) -> String) -> String {
    (0..n).map(|i| f(i) + "\n").collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).expect("gzip");
    enc.finish().expect("gzip")
}

/// An IDX file: magic `00 00 08 dims`, big-endian dimensions, values.
fn idx_bytes(shape: &[u32], values: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 8, shape.len() as u8];
    for d in shape {
        out.extend(d.to_be_bytes());
    }
    out.extend(values);
    out
}

fn png(width: u32, height: u32, level: u8) -> Vec<u8> {
    let image = image::GrayImage::from_fn(width, height, |x, y| {
        image::Luma([level.wrapping_add((x * 7 + y * 3) as u8)])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode png");
    out.into_inner()
}

fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x * 9) as u8, (y * 5) as u8, 128])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Jpeg)
        .expect("encode jpeg");
    out.into_inner()
}

#[test]
fn an_empty_file() {
    let dir = scratch("empty");
    let path = write(&dir, "empty.csv", b"");
    let message = refusal(&path, &LoadOptions::default());
    assert!(message.ends_with("empty.csv: is empty (0 bytes): expected CSV text, an optional header line and then one row per sample, with values separated by commas, semicolons or tabs"), "{message}");
}

#[test]
fn a_header_only() {
    let dir = scratch("header");
    let path = write(&dir, "header.csv", b"height,weight,label\n");
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.ends_with("has a header line (height, weight, label) but no data rows below it"),
        "{message}"
    );
}

#[test]
fn ragged_rows() {
    let dir = scratch("ragged");
    let text = format!(
        "a,b,label\n{}7,8\n",
        rows(12, |i| format!("{i},{i},{}", i % 2))
    );
    let path = write(&dir, "ragged.csv", text.as_bytes());
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains("ragged.csv, line 14: 2 fields where line 1 has 3"),
        "{message}"
    );
}

#[test]
fn a_text_cell_in_a_numeric_feature_column() {
    let dir = scratch("text-cell");
    let mut text = format!(
        "a,b,label\n{}",
        rows(12, |i| format!("{i},{i}.5,{}", i % 2))
    );
    text = text.replace("4,4.5,0", "4,abc,0");
    let path = write(&dir, "cells.csv", text.as_bytes());
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains("cells.csv, line 6: column `b`: `abc` is not a number"),
        "{message}"
    );
}

#[test]
fn nan_and_infinity() {
    let dir = scratch("nan");
    for (bad, what) in [
        ("NaN", "is not a finite number"),
        ("inf", "is not a finite number"),
        ("-Infinity", "is not a finite number"),
        ("1e39", "is beyond the range of 32-bit floats"),
    ] {
        let text = format!(
            "a,b,label\n{}",
            rows(12, |i| if i == 3 {
                format!("{bad},1,0")
            } else {
                format!("{i},1,{}", i % 2)
            })
        );
        let path = write(&dir, "values.csv", text.as_bytes());
        let message = refusal(&path, &LoadOptions::default());
        assert!(
            message.contains(&format!("values.csv, line 5: column `a`: `{bad}` {what}")),
            "{message}"
        );
        assert!(message.contains("leave the cell empty"), "{message}");
    }
}

#[test]
fn a_label_column_with_one_class() {
    let dir = scratch("one-class");
    let text = format!("a,b,kind\n{}", rows(20, |i| format!("{i},{i},cat")));
    let path = write(&dir, "cats.csv", text.as_bytes());
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.ends_with(
            "cats.csv: the label column `kind` has one class only (cat): a classifier needs at \
             least two"
        ),
        "{message}"
    );
}

#[test]
fn a_binary_file_given_as_csv() {
    let dir = scratch("binary");
    let path = write(
        &dir,
        "model.csv",
        &[0x7f, b'E', b'L', b'F', 0x02, 0x00, 0x01],
    );
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains("model.csv, byte 5: a zero byte: this is a binary file, not CSV text"),
        "{message}"
    );
    // An image given where a table is expected says what to do instead.
    let path = write(&dir, "digit.png", &png(8, 8, 3));
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains("digit.png, byte 0: this is an image, not a table")
            && message.contains("open the folder"),
        "{message}"
    );
}

#[test]
fn invalid_utf8() {
    let dir = scratch("utf8");
    let mut bytes = b"name,size,label\nok,1,0\n".to_vec();
    bytes.extend(b"caf\xe9,2,1\n"); // Latin-1 é
    let path = write(&dir, "latin1.csv", &bytes);
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains("latin1.csv, byte 26: (line 3) is not UTF-8 text: save the file as UTF-8"),
        "{message}"
    );
}

#[test]
fn a_wrong_idx_magic() {
    let dir = scratch("idx-magic");
    let path = write(&dir, "x-images-idx3-ubyte", b"\x01\x02\x08\x03rest");
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains("x-images-idx3-ubyte, byte 0: wrong magic number `01 02 08 03`"),
        "{message}"
    );
}

#[test]
fn idx_image_and_label_counts_that_differ() {
    let dir = scratch("idx-counts");
    let images = write(
        &dir,
        "t-images-idx3-ubyte",
        &idx_bytes(&[12, 2, 2], &[7; 48]),
    );
    write(
        &dir,
        "t-labels-idx1-ubyte",
        &idx_bytes(&[11], &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
    );
    let message = refusal(&images, &LoadOptions::default());
    assert!(
        message.contains("t-images-idx3-ubyte: has 12 images but")
            && message
                .contains("t-labels-idx1-ubyte` has 11 labels: they must have one label per image"),
        "{message}"
    );
    // The partner missing altogether is named too.
    let alone = write(
        &dir,
        "u-images-idx3-ubyte",
        &idx_bytes(&[12, 2, 2], &[7; 48]),
    );
    let message = refusal(&alone, &LoadOptions::default());
    assert!(
        message.contains("u-labels-idx1-ubyte: does not exist")
            && message.contains("other half of `u-images-idx3-ubyte`"),
        "{message}"
    );
}

#[test]
fn a_truncated_gzip() {
    let dir = scratch("gzip");
    let text = rows(500, |i| format!("{i},{},{}", i * 3, i % 2));
    let gz = gzip(text.as_bytes());
    let path = write(&dir, "table.csv.gz", &gz[..gz.len() / 2]);
    let message = refusal(&path, &LoadOptions::default());
    assert!(
        message.contains(&format!(
            "table.csv.gz, byte {}: the gzip data is truncated",
            gz.len() / 2
        )) && message.contains("copy or download it again"),
        "{message}"
    );
    // The whole file loads.
    let path = write(&dir, "whole.csv.gz", &gz);
    assert_eq!(
        load(&path, &LoadOptions::default()).expect("valid").rows,
        500
    );
}

#[test]
fn an_image_folder_without_images_or_with_an_unreadable_one() {
    let dir = scratch("images");
    let empty = dir.join("empty");
    std::fs::create_dir_all(empty.join("cats")).expect("folder");
    write(&empty, "cats/readme.txt", b"no pictures here");
    let message = refusal(&empty, &LoadOptions::default());
    assert!(
        message.ends_with(
            "empty: has no PNG or JPEG images: expected one sub-folder per class, each holding \
             that class's images"
        ),
        "{message}"
    );
    let loose = dir.join("loose");
    write(&loose, "a.png", &png(4, 4, 1));
    let message = refusal(&loose, &LoadOptions::default());
    assert!(
        message.contains("has 1 images but no class sub-folders"),
        "{message}"
    );

    let broken = dir.join("broken");
    for i in 0..6 {
        write(&broken, &format!("cat/{i}.png"), &png(10, 10, i));
        write(&broken, &format!("dog/{i}.jpg"), &jpeg(9, 12));
    }
    let good = load(&broken, &LoadOptions::default()).expect("valid folder");
    assert_eq!((good.rows, good.class_names.len()), (12, 2));
    let bad = write(
        &broken,
        "dog/9.jpg",
        b"\xff\xd8\xff\xe0 this is not really a jpeg",
    );
    let message = refusal(&broken, &LoadOptions::default());
    assert!(
        message.starts_with(&bad.display().to_string())
            && message.contains("cannot be read as a PNG or JPEG image"),
        "{message}"
    );
}

#[test]
fn a_path_that_does_not_exist_or_cannot_be_read() {
    let dir = scratch("paths");
    let message = refusal(&dir.join("nowhere.csv"), &LoadOptions::default());
    assert!(
        message
            .ends_with("nowhere.csv: does not exist: check the path, or pick the file with Open…"),
        "{message}"
    );
    // A file where a folder was expected: the system says why it cannot be read.
    let file = write(&dir, "plain.csv", b"a,b\n1,2\n");
    let message = refusal(&file.join("inner.csv"), &LoadOptions::default());
    assert!(message.contains("inner.csv: cannot be read"), "{message}");
    // Permissions: only a user other than root can be refused them.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = write(&dir, "locked.csv", b"a,label\n1,0\n");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        if std::fs::read(&locked).is_err() {
            let message = refusal(&locked, &LoadOptions::default());
            assert!(
                message.contains("locked.csv: cannot be read: permission denied"),
                "{message}"
            );
        } else {
            eprintln!("running as root: the permission case cannot be shown here");
        }
    }
}

#[test]
fn limits_say_the_number_and_the_limit() {
    let dir = scratch("limits");
    let text = format!("a,b,label\n{}", rows(200, |i| format!("{i},{i},{}", i % 3)));
    let path = write(&dir, "big.csv", text.as_bytes());
    let small = LoadOptions {
        budget_bytes: 1000,
        ..LoadOptions::default()
    };
    let message = refusal(&path, &small);
    assert!(
        message.contains("big.csv: the file has 1.7 KiB, more than the 1000 B memory budget"),
        "{message}"
    );
    let many = rows(300, |i| format!("{i},{i}"));
    let path = write(&dir, "many.csv", many.as_bytes());
    let message = refusal(
        &path,
        &LoadOptions {
            task: Some(batchscope::data::Task::Classification),
            ..LoadOptions::default()
        },
    );
    assert!(
        message.contains("has 300 distinct values, more than the 100 classes"),
        "{message}"
    );
    // Too few rows for the batch: the settings are refused with both numbers.
    let table = load(
        &write(&dir, "small.csv", text.as_bytes()),
        &LoadOptions::default(),
    )
    .expect("valid");
    let config = TrainConfig {
        batch: 500,
        ..TrainConfig::default()
    };
    let message = Session::from_table(config, &table)
        .expect_err("batch too large")
        .to_string();
    assert_eq!(
        message,
        "batch size 500 is larger than the 160 training rows of small.csv: choose at most 160"
    );
}

/// One random change to `bytes`: flipped bits, a cut, inserted or deleted bytes, a copied range.
fn mutate(bytes: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..rng.random_range(1..4) {
        let len = out.len();
        match rng.random_range(0..5) {
            0 if len > 0 => {
                let at = rng.random_range(0..len);
                out[at] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => out.truncate(rng.random_range(0..len)),
            2 => {
                let at = rng.random_range(0..=len);
                let junk: Vec<u8> = (0..rng.random_range(1..16)).map(|_| rng.random()).collect();
                out.splice(at..at, junk);
            }
            3 if len > 1 => {
                let a = rng.random_range(0..len);
                let b = rng.random_range(a..len);
                out.drain(a..b);
            }
            4 if len > 1 => {
                let a = rng.random_range(0..len);
                let b = rng.random_range(a..len.min(a + 64));
                let copy = out[a..b].to_vec();
                let at = rng.random_range(0..=out.len());
                out.splice(at..at, copy);
            }
            _ => {}
        }
    }
    out
}

/// Every in-memory parser on `bytes`; each must return, whatever it returns. Counts how many
/// accepted the bytes, so the test can show that both answers were exercised.
fn every_parser(bytes: &[u8], options: &LoadOptions, accepted: &mut [usize; 5]) {
    let grey = ImageOptions {
        side: 8,
        rgb: false,
    };
    let rgb = ImageOptions { side: 8, rgb: true };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        [
            csv::parse(bytes, "fuzz.csv", "fuzz.csv", options, &|_| true).is_ok(),
            idx::parse(bytes, "fuzz-idx").is_ok(),
            bytes.starts_with(&[0x1f, 0x8b])
                && gunzip_if_needed(bytes.to_vec(), "fuzz.gz", 1 << 20).is_ok(),
            images::decode_image(bytes, "fuzz.png", &grey).is_ok()
                | images::decode_image(bytes, "fuzz.jpg", &rgb).is_ok(),
            text::parse(bytes, "fuzz.txt", "fuzz.txt").is_ok(),
        ]
    }));
    let Ok(results) = outcome else {
        panic!(
            "a parser panicked on {} bytes: {:02x?}",
            bytes.len(),
            &bytes[..bytes.len().min(64)]
        );
    };
    for (count, ok) in accepted.iter_mut().zip(results) {
        *count += usize::from(ok);
    }
}

#[test]
fn random_bytes_and_mutated_files_never_make_a_parser_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let options = LoadOptions::default();
    let iris = std::fs::read(source_tree_path("iris").expect("iris")).expect("iris.csv");
    let regression = rows(40, |i| {
        format!("{i};{}.25;{};{}", i * 2, i % 7, i as f32 * 0.5)
    });
    let idx_images = idx_bytes(&[12, 3, 3], &(0..108).map(|i| i as u8).collect::<Vec<_>>());
    let idx_labels = idx_bytes(&[12], &[0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
    let seeds: Vec<Vec<u8>> = vec![
        iris.clone(),
        regression.into_bytes(),
        gzip(&iris),
        idx_images.clone(),
        idx_labels,
        gzip(&idx_images),
        png(9, 7, 40),
        jpeg(11, 5),
    ];
    // Random bytes, some starting like the formats the loaders recognise.
    let prefixes: [&[u8]; 6] = [
        b"",
        b"\x1f\x8b",
        b"\x00\x00\x08\x03",
        b"\x89PNG\r\n\x1a\n",
        b"\xff\xd8\xff",
        b"a,b,label\n",
    ];
    for i in 0..15_000 {
        let mut bytes = prefixes[i % prefixes.len()].to_vec();
        let len = rng.random_range(0..600);
        bytes.extend((0..len).map(|_| rng.random::<u8>()));
        every_parser(&bytes, &options, &mut [0; 5]);
    }
    // Valid files with random damage: each parser still accepts some (a damaged value is still
    // a value) and refuses others.
    let mut accepted = [0usize; 5];
    for i in 0..20_000 {
        let bytes = mutate(&seeds[i % seeds.len()], &mut rng);
        every_parser(&bytes, &options, &mut accepted);
    }
    let tries = 20_000 / seeds.len();
    for (parser, count) in ["csv", "idx", "gzip", "image", "text"].iter().zip(accepted) {
        assert!(
            count > 0 && count < 20_000 - tries,
            "{parser} accepted {count} of 20000 damaged files"
        );
    }
    // Whole loads through files: damaged IDX pairs and CSVs on disk.
    let dir = scratch("fuzz");
    for i in 0..150 {
        let images = mutate(&idx_images, &mut rng);
        let labels = mutate(&seeds[4], &mut rng);
        write(&dir, "f-images-idx3-ubyte", &images);
        write(&dir, "f-labels-idx1-ubyte", &labels);
        let path = write(&dir, "f.csv", &mutate(&seeds[i % 2], &mut rng));
        for p in [dir.join("f-images-idx3-ubyte"), path] {
            let outcome = catch_unwind(AssertUnwindSafe(|| load(&p, &options)));
            assert!(outcome.is_ok(), "loading {} panicked", p.display());
        }
    }
}

#[test]
fn a_loaded_table_always_splits_into_a_training_and_a_test_part() {
    // Whatever the loader accepts, the split gives both parts at least one row.
    let dir = scratch("split");
    let text = format!("x,label\n{}", rows(10, |i| format!("{i},{}", i % 2)));
    let table: Table = load(
        &write(&dir, "ten.csv", text.as_bytes()),
        &LoadOptions::default(),
    )
    .expect("ten rows are enough");
    for test_fraction in [0.05, 0.5] {
        let data = table.to_dataset(Split {
            test_fraction,
            seed: 1,
            standardise: true,
            context: 64,
        });
        assert!(data.train_rows() >= 1 && data.test_rows() >= 1);
        assert_eq!(data.train_rows() + data.test_rows(), 10);
    }
}

#[test]
fn cancel_stops_a_load_in_the_middle_of_reading_the_file() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = scratch("cancel");
    let text = format!(
        "a,b,label\n{}",
        rows(2_000_000, |i| format!("{i},{},{}", i % 7, i % 2))
    );
    let path = write(&dir, "long.csv", text.as_bytes());
    let asked = AtomicUsize::new(0);
    // The user presses Cancel as soon as the first progress report arrives.
    let cancel = |_: f32| {
        asked.fetch_add(1, Ordering::Relaxed);
        false
    };
    let err =
        batchscope::data::formats::load_with_progress(&path, &LoadOptions::default(), &cancel)
            .expect_err("cancelled");
    assert!(
        matches!(err, batchscope::data::formats::DataError::Cancelled { .. }),
        "{err}"
    );
    // One report, one answer: nothing more was read after it.
    assert_eq!(asked.load(Ordering::Relaxed), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The files a browser's page is handed are held in memory and read by the same readers, with
/// the same messages, as files on disk: a CSV (gzip too), an IDX pair given together, a text,
/// and refusals for a file too large to read and one the browser could not read. One test, as
/// the held files are the process's.
#[test]
fn files_handed_to_a_page_load_like_files_on_disk() {
    use batchscope::platform::held::{Held, MOST_READ, hold};
    use std::sync::Arc;
    assert_eq!(MOST_READ, batchscope::data::formats::MAX_VALUES_BYTES);
    let held = |bytes: Vec<u8>| Held::Read(Arc::from(bytes));
    let csv = rows(30, |i| format!("{},{},{}", i, i * 2, i % 3));
    let csv = format!("a,b,label\n{csv}");
    let paths = hold(vec![(
        "handed-page.csv.gz".into(),
        held(gzip(csv.as_bytes())),
    )]);
    let table = load(&paths[0], &LoadOptions::default()).expect("a handed CSV");
    assert_eq!((table.rows, table.features()), (30, 2));

    let images: Vec<u8> = (0..12 * 4 * 4).map(|i| (i * 5) as u8).collect();
    let labels: Vec<u8> = (0..12).map(|i| (i % 2) as u8).collect();
    let paths = hold(vec![
        (
            "handed-labels-idx1-ubyte".into(),
            held(idx_bytes(&[12], &labels)),
        ),
        (
            "handed-images-idx3-ubyte".into(),
            held(idx_bytes(&[12, 4, 4], &images)),
        ),
    ]);
    // Either half opens the pair.
    for path in &paths {
        let table = load(path, &LoadOptions::default()).expect("a handed IDX pair");
        assert_eq!((table.rows, table.features()), (12, 16));
    }
    // Half a pair, its other half never handed over, is refused naming what is missing.
    let paths = hold(vec![(
        "solo-images-idx3-ubyte".into(),
        held(idx_bytes(&[12, 4, 4], &images)),
    )]);
    let alone = load(&paths[0], &LoadOptions::default()).expect_err("half a pair");
    assert!(
        alone.to_string().contains("solo-labels-idx1-ubyte"),
        "{alone}"
    );

    let poem = "床前明月光，疑是地上霜。举头望明月，低头思故乡。\n".repeat(20);
    let paths = hold(vec![("handed-poem.txt".into(), held(poem.into_bytes()))]);
    let table = load(&paths[0], &LoadOptions::default()).expect("a handed text");
    assert!(table.rows > 0);

    let paths = hold(vec![
        ("handed-huge.csv".into(), Held::TooLarge(3 << 30)),
        (
            "handed-gone.csv".into(),
            Held::Unreadable("the file was moved".into()),
        ),
    ]);
    let huge = load(&paths[0], &LoadOptions::default()).expect_err("too large");
    assert!(
        huge.to_string().starts_with("handed-huge.csv: ") && huge.to_string().contains("3.0 GiB"),
        "{huge}"
    );
    let gone = load(&paths[1], &LoadOptions::default()).expect_err("unreadable");
    assert!(gone.to_string().contains("the file was moved"), "{gone}");
    let lesson = batchscope::files::read_text(&paths[1], batchscope::files::FileKind::Lesson)
        .expect_err("unreadable");
    assert!(
        lesson.to_string().contains("the file was moved"),
        "{lesson}"
    );
}
