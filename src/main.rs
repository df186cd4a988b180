//! Entry point: parses the command line and starts the app or a headless command.

fn main() -> std::process::ExitCode {
    batchscope::cli::main()
}
