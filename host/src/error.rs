//! The one error type of the host crate. Every message is one line that says what was
//! wrong and, for bad input, what is allowed.

use std::fmt;

use crate::emu::EmuError;

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
