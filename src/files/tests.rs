use std::path::PathBuf;

use super::*;
use crate::i18n::Lang;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("batchscope-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn a_regular_file_is_read_and_anything_else_refused_at_once() {
    let dir = scratch("read");
    let file = dir.join("lesson.toml");
    std::fs::write(&file, "id = \"x\"\n").expect("write");
    assert_eq!(
        read_text(&file, FileKind::Lesson).expect("read"),
        "id = \"x\"\n"
    );
    let folder = read_text(&dir, FileKind::Lesson).expect_err("a folder");
    assert!(
        folder
            .text(Lang::En)
            .contains("a folder, not a regular file"),
        "{folder}"
    );
    #[cfg(unix)]
    {
        // A device that never ends, and a pipe nobody writes to: refused, not read.
        let zero = read_text(Path::new("/dev/zero"), FileKind::Session).expect_err("a device");
        assert!(zero.text(Lang::En).contains("a character device"), "{zero}");
        let fifo = dir.join("pipe.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_text(&fifo, FileKind::Lesson).expect_err("a pipe");
            assert!(e.text(Lang::Zh).contains("命名管道"), "{e}");
        }
    }
    let missing = read_text(&dir.join("nope.toml"), FileKind::Lesson).expect_err("missing");
    assert!(missing.text(Lang::En).contains("nope.toml"), "{missing}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_past_its_budget_and_a_byte_that_is_not_utf8_are_named() {
    let dir = scratch("budget");
    let big = dir.join("big.toml");
    std::fs::write(
        &big,
        vec![b'#'; (FileKind::Lesson.budget_bytes() + 1) as usize],
    )
    .expect("write");
    let e = read_text(&big, FileKind::Lesson).expect_err("too large");
    assert!(e.text(Lang::En).contains("lesson file"), "{e}");
    let latin1 = dir.join("latin1.toml");
    std::fs::write(&latin1, b"id = \"a\"\ntitle = \"caf\xe9\"\n").expect("write");
    let e = read_text(&latin1, FileKind::Lesson).expect_err("not UTF-8");
    let en = e.text(Lang::En);
    assert!(
        en.contains("line 2, column 13") && en.contains("0xE9"),
        "{en}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_place_is_named_by_line_and_column_with_a_short_excerpt() {
    let text = "first\nsecond line\nthird";
    let p = Place::of(text, text.find("line").expect("there"));
    assert_eq!(
        (p.line, p.column, p.excerpt.as_str()),
        (2, 8, "second line")
    );
    // A one-megabyte line is quoted by sixty characters around the place, not echoed back.
    let long = format!("key = [{}oops", "[".repeat(1 << 20));
    let p = Place::of(&long, long.len() - 2);
    assert!(
        p.excerpt.chars().count() <= EXCERPT_CHARS + 2,
        "{}",
        p.excerpt.len()
    );
    assert!(p.excerpt.starts_with('…') && p.excerpt.ends_with("oops"));
    let said = parse_error(
        "x.toml",
        &long,
        long.len() - 2,
        "invalid array\n  |\n  | ...",
    );
    assert!(said.to_string().len() < 300, "{said}");
    let at = parse_error_at_line("s.ron", text, 3, 2, "expected a number");
    assert_eq!(
        at.to_string(),
        "s.ron, line 3, column 2: expected a number (near “third”)"
    );
}

#[test]
fn a_destination_is_checked_before_the_work_and_a_failed_write_leaves_nothing() {
    let dir = scratch("write");
    let out = dir.join("out.csv");
    check_destination(&out).expect("a fine destination");
    let no_folder = check_destination(&dir.join("missing").join("out.csv")).expect_err("no folder");
    assert!(
        no_folder.text(Lang::En).contains("does not exist"),
        "{no_folder}"
    );
    std::fs::write(&out, "a").expect("write");
    let through_file = check_destination(&out.join("x.csv")).expect_err("a path through a file");
    assert!(
        through_file
            .text(Lang::En)
            .contains("is a file, not a folder"),
        "{through_file}"
    );
    assert!(
        check_destination(&dir).is_err(),
        "a folder is not a file to write"
    );
    write_atomic(&out, b"complete\n").expect("written");
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "complete\n");
    // A writer that fails half-way: the file keeps its old contents, no temporary is left.
    let failed = write_atomic_with(&out, &mut |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("the disk is full"))
    });
    assert!(
        failed
            .expect_err("failed")
            .text(Lang::En)
            .contains("nothing was left behind")
    );
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "complete\n");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("out.csv")], "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
