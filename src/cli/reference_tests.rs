//! The command line's reference pages, generated from its definition and checked to be what the
//! definition gives: the man pages (`docs/man/`, one a command, by `clap_mangen`: `man batchscope`,
//! `man batchscope-train` …) and the guide's Markdown reference
//! (`docs/guide/src/en/cli-reference.md`). After changing a command or an option, run
//! `BATCHSCOPE_BLESS=1 cargo test reference` to write them anew.

use std::fmt::Write as _;

use clap::CommandFactory;

use super::Cli;
use crate::files::generated::{assert_current, blessing, in_repository};

const BLESS: &str = "BATCHSCOPE_BLESS=1 cargo test reference";

/// The definition, as `main` completes it (without the build's version: it changes with each
/// commit, and the pages would with it).
fn command() -> clap::Command {
    Cli::command().version(env!("CARGO_PKG_VERSION"))
}

/// The man pages, as (file name, page): the app's, then one for each command and each command
/// under it (named as `clap_mangen::generate_to` names them: `batchscope-data-inspect.1`).
fn man_pages() -> Vec<(String, String)> {
    fn add(pages: &mut Vec<(String, String)>, command: &clap::Command) {
        let man = clap_mangen::Man::new(command.clone());
        let mut out = Vec::new();
        man.render(&mut out).expect("rendered into memory");
        let page = String::from_utf8(out).expect("the man page is UTF-8");
        pages.push((man.get_filename(), page));
        for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
            add(pages, sub);
        }
    }
    let mut root = command().disable_help_subcommand(true);
    root.build();
    let mut pages = Vec::new();
    add(&mut pages, &root);
    pages
}

/// Every command's full help, one section each.
fn markdown() -> String {
    let mut root = command();
    root.build();
    let mut page = String::from(
        "# Command-line reference\n\n\
         Generated from the command line's definition: `cargo test` checks that this page is \
         current, and `BATCHSCOPE_BLESS=1 cargo test reference` writes it anew. `man batchscope` \
         and `man batchscope-COMMAND` (the `.deb` installs them) give the same text as man pages. Every command also \
         answers `--help`.\n",
    );
    section(&mut page, "batchscope", &mut root);
    page
}

/// `command`'s full help under the heading `title`, then each of its subcommands' in turn.
fn section(page: &mut String, title: &str, command: &mut clap::Command) {
    let help = command.render_long_help().to_string();
    let _ = write!(
        page,
        "\n## `{title}`\n\n```text\n{}\n```\n",
        help.trim_end()
    );
    for sub in command.get_subcommands_mut() {
        if !sub.is_hide_set() && sub.get_name() != "help" {
            let title = format!("{title} {}", sub.get_name());
            section(page, &title, sub);
        }
    }
}

#[test]
fn the_man_pages_and_the_reference_are_current() {
    let pages = man_pages();
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    assert!(
        names.contains(&"batchscope.1")
            && names.contains(&"batchscope-train.1")
            && names.contains(&"batchscope-data-inspect.1"),
        "{names:?}"
    );
    let root = &pages[0].1;
    assert!(
        root.contains(".TH batchscope") && root.contains("calibrate"),
        "{root}"
    );
    for (name, page) in &pages {
        assert_current(&format!("docs/man/{name}"), page, BLESS);
    }
    // A page whose command is gone must go too.
    let dir = in_repository("docs/man");
    for entry in std::fs::read_dir(&dir).expect("docs/man exists") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        if !names.contains(&name.as_ref()) {
            if blessing() {
                std::fs::remove_file(dir.join(name.as_ref())).expect("remove a stale page");
            } else {
                panic!("docs/man/{name} is no command's page: run `{BLESS}`");
            }
        }
    }
    let page = markdown();
    assert!(page.contains("## `batchscope train`") && page.contains("--dataset"));
    assert_current("docs/guide/src/en/cli-reference.md", &page, BLESS);
}
