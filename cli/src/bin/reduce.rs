//! `reduce`: the reduction report. See `reduce_scan_cli::cli` for the options and exit status.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(reduce_scan_cli::cli::main())
}
