//! `reduce-scan-suite`, the root package: the tests (`tests/`), the criterion benches
//! (`benches/`) and the examples (`examples/`) of the workspace. The library only re-exports
//! the three crates they exercise: `reduce_scan_suite::reduce_scan` (folder `host/`) launches
//! and checks the kernels, `reduce_scan_suite::reduce_scan_cli` (folder `cli/`) is the `reduce`
//! command line, `reduce_scan_suite::kernels` (`reduce-scan-kernels`, folder `kernels/`) is their
//! source.
pub use kernels;
pub use reduce_scan;
pub use reduce_scan_cli;
