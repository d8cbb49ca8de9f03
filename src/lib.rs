//! Facade over the workspace: `reduction::host` launches and checks the kernels,
//! `reduction::kernels` is their source. This package exists to own the integration tests
//! (`tests/`) and the criterion benches (`benches/`).
pub use host;
pub use kernels;
