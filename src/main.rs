//! Entry point: parses the command line and starts the app or a headless command.

fn main() -> std::process::ExitCode {
    let code = batchscope::cli::main();
    // `BATCHSCOPE_PEAK_MEMORY=1`: say what the process held at most, as measured by the system
    // (the hostile-input tests bound it; anyone can check what a data set costs).
    if std::env::var_os("BATCHSCOPE_PEAK_MEMORY").is_some()
        && let Some(peak) = batchscope::device::peak_memory()
    {
        eprintln!("peak memory: {peak} bytes");
    }
    code
}
