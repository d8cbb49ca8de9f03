//! `reduce`: the reduction report. See `reduce_scan::cli` for the options and exit status.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(reduce_scan::cli::main())
}
