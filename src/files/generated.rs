//! Files in the repository that a test generates (the man pages, the command-line reference, the
//! lessons' guide pages) and keeps current: each test compares what it generates with what is
//! committed, or, with `BATCHSCOPE_BLESS` set, writes it.

use std::path::{Path, PathBuf};

/// Whether this run writes the generated files instead of checking them.
pub(crate) fn blessing() -> bool {
    std::env::var_os("BATCHSCOPE_BLESS").is_some()
}

/// `relative` (from the repository's root) as an absolute path.
pub(crate) fn in_repository(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// `generated` is what the file at `relative` holds, or (while blessing) is written there.
/// `bless` is the command that writes it, named in the failure.
pub(crate) fn assert_current(relative: &str, generated: &str, bless: &str) {
    let path = in_repository(relative);
    if blessing() {
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("mkdir");
        std::fs::write(&path, generated).expect("write the generated file");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{relative} is not what it is generated from: run `{bless}` and commit the result"
    );
}
