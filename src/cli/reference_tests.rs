//! The command line's reference pages, generated from its definition and checked to be what the
//! definition gives: the man page (`docs/batchscope.1`, by `clap_mangen`) and the guide's Markdown
//! reference (`docs/guide/src/en/cli-reference.md`). After changing a command or an option, run
//! `BATCHSCOPE_BLESS=1 cargo test reference` to write them anew.

use std::fmt::Write as _;

use clap::CommandFactory;

use super::Cli;

/// The definition, as `main` completes it (without the build's version: it changes with each
/// commit, and the pages would with it).
fn command() -> clap::Command {
    Cli::command().version(env!("CARGO_PKG_VERSION"))
}

/// The man page.
fn man_page() -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(command())
        .render(&mut out)
        .expect("rendered into memory");
    String::from_utf8(out).expect("the man page is UTF-8")
}

/// Every command's full help, one section each.
fn markdown() -> String {
    let mut root = command();
    root.build();
    let mut page = String::from(
        "# Command-line reference\n\n\
         Generated from the command line's definition: `cargo test` checks that this page is \
         current, and `BATCHSCOPE_BLESS=1 cargo test reference` writes it anew. `man batchscope` \
         (the `.deb` installs it) lists the commands and the app's options. Every command also \
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

/// `generated` is what `path` holds, or (with `BATCHSCOPE_BLESS` set) is written there.
fn current(path: &str, generated: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::env::var_os("BATCHSCOPE_BLESS").is_some() {
        std::fs::write(&path, generated).expect("write the page");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what the command line's definition gives: run \
         `BATCHSCOPE_BLESS=1 cargo test reference` and commit the result",
        path.display()
    );
}

#[test]
fn the_man_page_and_the_reference_are_current() {
    let man = man_page();
    assert!(
        man.contains(".TH batchscope") && man.contains("calibrate"),
        "{man}"
    );
    current("docs/batchscope.1", &man);
    let page = markdown();
    assert!(page.contains("## `batchscope train`") && page.contains("--dataset"));
    current("docs/guide/src/en/cli-reference.md", &page);
}
