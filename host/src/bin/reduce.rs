//! `reduce`: the reduction report. See `host::cli` for the options and exit status.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(host::cli::main())
}
