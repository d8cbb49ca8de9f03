//! The one error type of the host side (re-exported as `reduce_scan::Error`). Every message is
//! one line that says what was wrong and, for bad input, what is allowed.

use std::fmt;

use crate::emu::EmuError;

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a program's `main` returns to print an [`Error`] as the CLI does: `main` returning
/// `Err` prints `Error: ` and the error's `Debug` form, which for [`Fatal`] is the one-line
/// message (kernel, block, thread and `file:line` for an emulator fault) instead of the enum's
/// fields; `?` converts any [`Error`]. `{:?}` of an [`Error`] itself is unchanged.
///
/// ```no_run
/// // `reduce_scan::MainResult` (the same type, re-exported by the library).
/// fn main() -> reduce_scan_runtime::MainResult {
///     let backend = reduce_scan_runtime::Backend::emulator();
///     let input = backend.upload(&[1, 2, 3])?;
///     println!("{:?}", backend.download(&input)?);
///     Ok(())
/// }
/// ```
pub type MainResult = std::result::Result<(), Fatal>;

/// An [`Error`] on its way out of `main` ([`MainResult`]): its `Debug` is its `Display`.
pub struct Fatal(pub Error);

impl From<Error> for Fatal {
    fn from(e: Error) -> Self {
        Fatal(e)
    }
}

impl fmt::Debug for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Everything that can go wrong between a request and a verified result.
#[derive(Debug)]
pub enum Error {
    /// No GPU can be used; the cause says why (no driver, no device, driver too old…).
    NoGpu(String),
    /// A CUDA driver call failed.
    Cuda {
        /// What was being done.
        during: String,
        /// The driver's error.
        error: cust::error::CudaError,
    },
    /// The emulator stopped a kernel (barrier divergence, out-of-bounds shared access…).
    Emulator(EmuError),
    /// A request that breaks a precondition: the message names the value and the rule.
    Invalid(String),
    /// The request is valid but this device cannot run it (e.g. `redux` below sm_80).
    Unsupported(String),
    /// A result differs from the CPU reference.
    Mismatch(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoGpu(cause) => write!(f, "no usable GPU: {cause}"),
            Error::Cuda { during, error } => {
                write!(f, "CUDA error while {during}: {error} ({error:?})")
            }
            Error::Emulator(e) => write!(f, "{e}"),
            Error::Invalid(m) => write!(f, "invalid request: {m}"),
            Error::Unsupported(m) => write!(f, "unsupported here: {m}"),
            Error::Mismatch(m) => write!(f, "wrong result: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<EmuError> for Error {
    fn from(e: EmuError) -> Self {
        Error::Emulator(e)
    }
}

/// Attaches "while …" context to a CUDA result.
pub(crate) trait CudaContext<T> {
    fn during(self, what: impl Into<String>) -> Result<T>;
}

impl<T> CudaContext<T> for cust::error::CudaResult<T> {
    fn during(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|error| Error::Cuda { during: what.into(), error })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_leaving_main_prints_its_one_line() {
        let e = Error::Invalid("--n 0: n must be at least 1".into());
        let line = e.to_string();
        assert_eq!(format!("{:?}", Fatal::from(e)), line, "Fatal's Debug is the Display line");
        assert!(!line.contains('\n') && !line.contains("Invalid("), "{line}");
        // `{:?}` of the error itself keeps the derived form.
        assert!(format!("{:?}", Error::Invalid("x".into())).starts_with("Invalid("));
    }
}
