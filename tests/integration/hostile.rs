//! Hostile inputs, one test per finding of issue 14: each runs the real `batchscope` binary in a
//! child process and checks the exit code (2 for the user's input), that the message names the
//! file and the place, and, where memory was the problem, the child's peak memory (its maximum
//! resident set, from `wait4(2)`) under a stated bound. A child that runs past its deadline is
//! killed and the test fails: a hang is a finding too.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
#[cfg(unix)]
use std::process::Command;
use std::time::Duration;

use crate::common;

use common::child::{MIB, refused, run, s, scratch, write};

fn gzip_to(path: &Path, level: u32, mut fill: impl FnMut(&mut dyn Write)) {
    let file = std::fs::File::create(path).expect("create");
    let mut enc = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(file),
        flate2::Compression::new(level),
    );
    fill(&mut enc);
    enc.finish().expect("gzip").flush().expect("flush");
}

// Critical: the process must never abort or be killed.

#[test]
fn csv_rows_stream_within_memory_and_a_bomb_is_refused_at_its_line() {
    let dir = scratch("csv-memory");
    // 10 M rows, 3 features and a label: about 100 MB of text, 160 MB of values.
    let rows = dir.join("rows.csv");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&rows).expect("create"));
    writeln!(out, "a,b,c,label").expect("write");
    for i in 0..10_000_000u32 {
        writeln!(out, "{},{},{},{}", i % 97, i % 13, i % 7, i % 2).expect("write");
    }
    out.flush().expect("flush");
    drop(out);
    let outcome = run(&["data", "inspect", s(&rows)], Duration::from_secs(120));
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    assert!(
        outcome.stdout.contains("rows: 10000000"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.peak < 600 * MIB,
        "10 M rows took {} MiB at peak",
        outcome.peak / MIB
    );
    // `yes $'0,0,1\n1,1,0' | head -c 999000000 | gzip -1`: 5 MB that inflate to 999 MB, whose
    // values pass the 1 GiB budget. Refused at the line that crosses it, holding at most it.
    let bomb = dir.join("bomb.csv.gz");
    gzip_to(&bomb, 1, |w| {
        let block = "0,0,1\n1,1,0\n".repeat(1 << 16);
        let mut left = 999_000_000usize;
        while left > 0 {
            let n = left.min(block.len());
            w.write_all(&block.as_bytes()[..n]).expect("write");
            left -= n;
        }
    });
    refused(
        &["data", "inspect", s(&bomb)],
        "bomb.csv.gz",
        &["memory budget", "by line 59652324"],
        1300 * MIB,
    );
    // One 50 MB line: refused as a line, not held (and split) whole.
    let line = write(&dir, "line.csv", &"1,".repeat(25_000_000).into_bytes());
    refused(
        &["data", "inspect", s(&line)],
        "line.csv, line 1",
        &["longer than 8.0 MiB"],
        200 * MIB,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_idx_header_is_checked_against_the_budget_before_anything_is_read() {
    let dir = scratch("idx");
    let header = |shape: &[u32]| {
        let mut h = vec![0, 0, 8, shape.len() as u8];
        for d in shape {
            h.extend(d.to_be_bytes());
        }
        h
    };
    // 300 × 1000 × 1000 (0.3 MB gzipped): 1.12 GiB as f32.
    let images = dir.join("big-images-idx3-ubyte.gz");
    gzip_to(&images, 6, |w| {
        w.write_all(&header(&[300, 1000, 1000])).expect("write");
        let zeros = vec![0u8; 1_000_000];
        for _ in 0..300 {
            w.write_all(&zeros).expect("write");
        }
    });
    let mut labels = header(&[300]);
    labels.extend([0u8, 1].repeat(150));
    write(&dir, "big-labels-idx1-ubyte", &labels);
    refused(
        &["data", "inspect", s(&images)],
        "big-images-idx3-ubyte.gz",
        &[
            "300 × 1000 × 1000 values",
            "1.1 GiB",
            "1.0 GiB memory budget",
        ],
        100 * MIB,
    );
    // 10 × 8192 × 8192 claimed by a 16-byte file: refused, not allocated.
    let huge = write(&dir, "huge-images-idx3-ubyte", &header(&[10, 8192, 8192]));
    refused(
        &["train", "--dataset", s(&huge), "--device", "cpu"],
        "huge-images-idx3-ubyte",
        &["10 × 8192 × 8192 values"],
        100 * MIB,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wide_tables_are_limited_on_loading_and_evaluated_in_chunks_that_fit() {
    let dir = scratch("wide");
    // 12 rows × 2,000,000 columns.
    let row = "1,".repeat(1_999_999) + "0\n";
    let wide = write(&dir, "wide.csv", row.repeat(12).as_bytes());
    for args in [
        vec!["data", "inspect", s(&wide)],
        vec!["train", "--dataset", s(&wide), "--device", "cpu"],
    ] {
        refused(
            &args,
            "wide.csv",
            &["2000000 columns", "65536 feature columns"],
            300 * MIB,
        );
    }
    // 40,000 features (more than 32,768, which broke the GPU's evaluation buffer) train on both
    // devices: evaluation takes as many rows at a time as fit its buffer.
    let mut text = String::new();
    for i in 0..24 {
        let values: Vec<String> = (0..40_000).map(|j| ((i * j) % 5).to_string()).collect();
        writeln!(text, "{},{}", values.join(","), i % 2).expect("write");
    }
    let ok = write(&dir, "wide40k.csv", text.as_bytes());
    let mut devices = vec!["cpu"];
    if common::gpu().is_some() {
        devices.push("gpu");
    }
    for device in devices {
        let args = [
            "train",
            "--dataset",
            s(&ok),
            "--device",
            device,
            "--batch",
            "8",
            "--steps",
            "4",
            "--log-every",
            "2",
        ];
        let outcome = run(&args, Duration::from_secs(300));
        assert_eq!(outcome.code, Some(0), "{device}: {}", outcome.stderr);
        assert!(
            outcome.stdout.contains(&format!("{device} done")),
            "{}",
            outcome.stdout
        );
        assert!(
            outcome.peak < 1024 * MIB,
            "{device}: {} MiB",
            outcome.peak / MIB
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_model_too_large_or_too_deep_is_refused_before_allocation_with_the_figures() {
    let layers = format!("4,{}3", "8192,".repeat(30));
    refused(
        &[
            "train",
            "--dataset",
            "iris",
            "--layers",
            &layers,
            "--device",
            "cpu",
        ],
        "parameters",
        &["1,946,460,163 parameters", "at most 67,108,864"],
        100 * MIB,
    );
    let deep = format!("4,{}3", "4,".repeat(20_000));
    refused(
        &[
            "train",
            "--dataset",
            "iris",
            "--layers",
            &deep,
            "--device",
            "gpu",
        ],
        "20000 hidden layers",
        &["choose at most 32"],
        100 * MIB,
    );
}

// High.

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_is_refused_at_once() {
    let dir = scratch("fifo");
    let fifo = dir.join("p.csv");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for args in [
        vec!["data", "inspect", s(&fifo)],
        vec!["train", "--dataset", s(&fifo), "--device", "cpu"],
    ] {
        refused(
            &args,
            "p.csv",
            &["named pipe (FIFO)", "not a regular file"],
            100 * MIB,
        );
    }
    // Nor is a trace written into one (opening it would wait for a reader forever).
    refused(
        &[
            "trace",
            "--dataset",
            "iris",
            "--device",
            "cpu",
            "--out",
            s(&fifo),
        ],
        "p.csv",
        &["named pipe (FIFO)", "name a file to write"],
        100 * MIB,
    );
    refused(
        &["data", "inspect", "/dev/zero"],
        "/dev/zero",
        &["character device"],
        100 * MIB,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_gzip_member_is_read() {
    let dir = scratch("members");
    let gz = |text: &str| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).expect("gzip");
        enc.finish().expect("gzip")
    };
    let rows = |from: usize| -> String {
        let mut text = String::new();
        for i in from..from + 20 {
            writeln!(text, "{i},{}", i % 2).expect("write");
        }
        text
    };
    // `cat a.gz b.gz`: the header and 20 rows, then 20 more.
    let mut bytes = gz(&format!("x,label\n{}", rows(0)));
    bytes.extend(gz(&rows(20)));
    let path = write(&dir, "members.csv.gz", &bytes);
    let outcome = run(&["data", "inspect", s(&path)], Duration::from_secs(60));
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    assert!(outcome.stdout.contains("rows: 40\n"), "{}", outcome.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_label_column_follows_the_usual_names_in_order_and_says_why() {
    let dir = scratch("label");
    let text: String = std::iter::once("x,y,label\n".to_owned())
        .chain((0..20).map(|i| format!("{i},{},{}\n", i * 3, i % 2)))
        .collect();
    let path = write(&dir, "xyl.csv", text.as_bytes());
    let outcome = run(&["data", "inspect", s(&path)], Duration::from_secs(60));
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    assert!(
        outcome.stdout.contains(
            "label column: label (named `label`, the first found of `label`, `target`, \
             `class`, `species`, `y`)"
        ) && outcome.stdout.contains("features: 2 (x, y)"),
        "{}",
        outcome.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// Medium and low.

#[test]
fn images_that_lie_about_their_size_are_refused_and_large_ones_decode_one_at_a_time() {
    let dir = scratch("images");
    let jpeg = {
        let image =
            image::RgbImage::from_fn(64, 64, |x, y| image::Rgb([(x * 4) as u8, (y * 4) as u8, 9]));
        let mut out = std::io::Cursor::new(Vec::new());
        image
            .write_to(&mut out, image::ImageFormat::Jpeg)
            .expect("jpeg");
        out.into_inner()
    };
    // A JPEG whose frame header claims 16000 × 16000, cut short.
    let mut liar = jpeg.clone();
    let sof = liar
        .windows(2)
        .position(|w| w == [0xff, 0xc0])
        .expect("a baseline frame header");
    liar[sof + 5..sof + 9].copy_from_slice(&[0x3e, 0x80, 0x3e, 0x80]);
    // Cut in the middle of the scan: every header is there, the pixels are not.
    let scan = liar
        .windows(2)
        .position(|w| w == [0xff, 0xda])
        .expect("a scan");
    liar.truncate(scan + 40);
    let cut = &jpeg[..jpeg.len() - 40];
    // A PNG cut in its pixels, and one cut just before its end chunk.
    let png = {
        let image = image::RgbImage::from_fn(64, 64, |x, y| image::Rgb([(x * y) as u8, 3, 9]));
        let mut out = std::io::Cursor::new(Vec::new());
        image
            .write_to(&mut out, image::ImageFormat::Png)
            .expect("png");
        out.into_inner()
    };
    let png_mid = &png[..png.len() / 2];
    let png_end = &png[..png.len() - 12];
    for (name, bytes, says) in [
        ("liar.jpg", &liar[..], "16000 × 16000 pixels"),
        ("cut.jpg", cut, "cut short"),
        ("mid.png", png_mid, "cut short"),
        ("end.png", png_end, "end chunk (IEND)"),
    ] {
        let folder = dir.join(name.replace('.', "-"));
        for class in ["a", "b"] {
            std::fs::create_dir_all(folder.join(class)).expect("folder");
            for i in 0..6 {
                std::fs::write(folder.join(class).join(format!("{i}.jpg")), &jpeg).expect("write");
            }
        }
        std::fs::write(folder.join("b").join(name), bytes).expect("write");
        refused(&["data", "inspect", s(&folder)], name, &[says], 300 * MIB);
    }
    // Two 8000 × 8000 PNGs of a few KB each among small ones, read as RGB: each takes about
    // 256 MB to decode (64 MB of grey, 192 MB as RGB). They sit where the two halves of a
    // parallel decode start (`a/0.png`, `b/0.png`), yet are decoded one at a time.
    let big = dir.join("big");
    let encode = |side: u32| {
        let image = image::GrayImage::from_pixel(side, side, image::Luma([77]));
        let mut out = std::io::Cursor::new(Vec::new());
        image
            .write_to(&mut out, image::ImageFormat::Png)
            .expect("png");
        out.into_inner()
    };
    let (large, small) = (encode(8000), encode(16));
    for class in ["a", "b"] {
        std::fs::create_dir_all(big.join(class)).expect("folder");
        for i in 0..5 {
            let bytes = if i == 0 { &large } else { &small };
            std::fs::write(big.join(class).join(format!("{i}.png")), bytes).expect("write");
        }
    }
    let outcome = run(
        &["data", "inspect", s(&big), "--rgb", "--image-side", "16"],
        Duration::from_secs(300),
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    assert!(outcome.stdout.contains("rows: 10"), "{}", outcome.stdout);
    eprintln!("two 8000 × 8000 images: peak {} MiB", outcome.peak / MIB);
    assert!(outcome.peak < 400 * MIB, "{} MiB", outcome.peak / MIB);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn text_mistakes_are_named_at_their_line_and_in_their_own_words() {
    let dir = scratch("text");
    let rows: Vec<String> = (0..12)
        .map(|i| format!("{i},{},{}", i * 2, i % 2))
        .collect();
    // Old Mac line endings: the error is on the line it is on, not "line 1".
    let mut cr = rows.clone();
    cr[4] = "4,oops,0".to_owned();
    let cr_only = write(
        &dir,
        "mac.csv",
        format!("a,b,label\r{}\r", cr.join("\r")).as_bytes(),
    );
    refused(
        &["data", "inspect", s(&cr_only)],
        "mac.csv, line 6",
        &["`oops` is not a number"],
        100 * MIB,
    );
    // UTF-16, as Windows' "Unicode text" saves it.
    let text = format!("a,b,label\n{}\n", rows.join("\n"));
    let mut utf16 = vec![0xff, 0xfe];
    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let path = write(&dir, "unicode.csv", &utf16);
    refused(
        &["data", "inspect", s(&path)],
        "unicode.csv",
        &["UTF-16", "iconv -f UTF-16 -t UTF-8"],
        100 * MIB,
    );
    // A quote that is never closed.
    let mut quoted = rows.clone();
    quoted[6] = "6,\"12,0".to_owned();
    let path = write(
        &dir,
        "quote.csv",
        format!("a,b,label\n{}\n", quoted.join("\n")).as_bytes(),
    );
    refused(
        &["data", "inspect", s(&path)],
        "quote.csv, line 8",
        &["`\"` is opened and not closed"],
        100 * MIB,
    );
    // A damaged gzip checksum: named at its byte in the file, not "byte 0".
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text.as_bytes()).expect("gzip");
    let mut gz = enc.finish().expect("gzip");
    let crc = gz.len() - 8;
    gz[crc] ^= 0x55;
    let path = write(&dir, "crc.csv.gz", &gz);
    refused(
        &["data", "inspect", s(&path)],
        &format!("crc.csv.gz, byte {}", gz.len()),
        &["checksum does not match"],
        100 * MIB,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn absurd_numbers_on_the_command_line_are_refused_with_the_limit() {
    let outcome = run(
        &["train", "--dataset", "iris", "--threads", "100000"],
        Duration::from_secs(60),
    );
    assert_eq!(outcome.code, Some(2));
    assert!(
        outcome.stderr.contains("choose at most 1024"),
        "{}",
        outcome.stderr
    );
    refused(
        &[
            "train",
            "--dataset",
            "iris",
            "--epochs",
            "18446744073709551615",
            "--device",
            "cpu",
        ],
        "--epochs 18446744073709551615",
        &["1,000,000,000 steps"],
        100 * MIB,
    );
    // A missing data set: one readable sentence, no run of spaces.
    let outcome = refused(
        &["train", "--dataset", "/no/such/set.csv"],
        "/no/such/set.csv",
        &["no such file or folder"],
        100 * MIB,
    );
    assert!(!outcome.stderr.contains("  "), "{:?}", outcome.stderr);
}

#[test]
fn divergence_is_reported_on_stderr_with_what_to_type() {
    let outcome = run(
        &[
            "train",
            "--dataset",
            "iris",
            "--device",
            "cpu",
            "--optimizer",
            "sgd",
            "--lr",
            "10",
            "--layers",
            "4,64,64,3",
            "--steps",
            "300",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(
        outcome.code,
        Some(2),
        "{}\n{}",
        outcome.stdout,
        outcome.stderr
    );
    assert!(
        outcome.stderr.contains("error: cpu: the loss became"),
        "{}",
        outcome.stderr
    );
    assert!(outcome.stderr.contains("--lr 1"), "{}", outcome.stderr);
    assert!(!outcome.stderr.contains("Reset") && !outcome.stdout.contains("the loss became"));
}
