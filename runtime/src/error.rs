//! The one error type of the host side (re-exported as `reduce_scan::Error`). Every message is
//! one line that says what was wrong and, for bad input, what is allowed.

use std::borrow::Cow;
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
        error: CudaError,
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

/// Declares [`CudaError`] from `cuda.h`'s `CUresult` codes: variant = code => `cuda.h` name.
macro_rules! cuda_errors {
    ($($name:ident = $code:literal => $cuda:ident,)*) => {
        /// An error code of the CUDA driver API (`CUresult`, `cuda.h` of CUDA 13.0), in [`Error::Cuda`].
        ///
        /// `{:?}` is the variant's name (`OutOfMemory`, `IllegalAddress`, `LaunchFailed`: the names
        /// `cust` 0.3.2 gave them, kept for the codes it knew); `{}` is the driver's own description
        /// (`cuGetErrorString`), quoted, or the `cuda.h` name where no driver is loaded. A code
        /// this table does not know (a newer driver's) keeps its number: [`CudaError::Unknown`].
        #[repr(u32)]
        #[non_exhaustive]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum CudaError {
            $(
                #[doc = concat!("`", stringify!($cuda), "` (", stringify!($code), ")")]
                $name = $code,
            )*
            /// A code that is none of the above (a newer driver's), kept as the driver gave it:
            /// not [`CudaError::UnknownError`], which is `CUDA_ERROR_UNKNOWN` (999).
            Unknown(u32),
        }

        impl CudaError {
            /// The error of a driver call's code (not `CUDA_SUCCESS`); a code this table does not
            /// know (a newer driver's) is [`CudaError::Unknown`] with the code.
            pub fn from_code(code: u32) -> CudaError {
                match code {
                    $($code => CudaError::$name,)*
                    _ => CudaError::Unknown(code),
                }
            }

            /// The `CUresult` code.
            pub fn code(self) -> u32 {
                match self {
                    $(CudaError::$name => $code,)*
                    CudaError::Unknown(code) => code,
                }
            }

            /// The code's name in `cuda.h` (`CUDA_ERROR_OUT_OF_MEMORY`): what `cuGetErrorName`
            /// answers; for a code the table does not know, `CUDA_ERROR_` and its number
            /// (`CUDA_ERROR_1234`).
            pub fn cuda_name(self) -> Cow<'static, str> {
                match self {
                    $(CudaError::$name => Cow::Borrowed(stringify!($cuda)),)*
                    CudaError::Unknown(code) => Cow::Owned(format!("CUDA_ERROR_{code}")),
                }
            }
        }
    };
}

cuda_errors! {
        InvalidValue = 1 => CUDA_ERROR_INVALID_VALUE,
        OutOfMemory = 2 => CUDA_ERROR_OUT_OF_MEMORY,
        NotInitialized = 3 => CUDA_ERROR_NOT_INITIALIZED,
        Deinitialized = 4 => CUDA_ERROR_DEINITIALIZED,
        ProfilerDisabled = 5 => CUDA_ERROR_PROFILER_DISABLED,
        ProfilerNotInitialized = 6 => CUDA_ERROR_PROFILER_NOT_INITIALIZED,
        ProfilerAlreadyStarted = 7 => CUDA_ERROR_PROFILER_ALREADY_STARTED,
        ProfilerAlreadyStopped = 8 => CUDA_ERROR_PROFILER_ALREADY_STOPPED,
        StubLibrary = 34 => CUDA_ERROR_STUB_LIBRARY,
        CallRequiresNewerDriver = 36 => CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER,
        DeviceUnavailable = 46 => CUDA_ERROR_DEVICE_UNAVAILABLE,
        NoDevice = 100 => CUDA_ERROR_NO_DEVICE,
        InvalidDevice = 101 => CUDA_ERROR_INVALID_DEVICE,
        DeviceNotLicensed = 102 => CUDA_ERROR_DEVICE_NOT_LICENSED,
        InvalidImage = 200 => CUDA_ERROR_INVALID_IMAGE,
        InvalidContext = 201 => CUDA_ERROR_INVALID_CONTEXT,
        ContextAlreadyCurrent = 202 => CUDA_ERROR_CONTEXT_ALREADY_CURRENT,
        MapFailed = 205 => CUDA_ERROR_MAP_FAILED,
        UnmapFailed = 206 => CUDA_ERROR_UNMAP_FAILED,
        ArrayIsMapped = 207 => CUDA_ERROR_ARRAY_IS_MAPPED,
        AlreadyMapped = 208 => CUDA_ERROR_ALREADY_MAPPED,
        NoBinaryForGpu = 209 => CUDA_ERROR_NO_BINARY_FOR_GPU,
        AlreadyAcquired = 210 => CUDA_ERROR_ALREADY_ACQUIRED,
        NotMapped = 211 => CUDA_ERROR_NOT_MAPPED,
        NotMappedAsArray = 212 => CUDA_ERROR_NOT_MAPPED_AS_ARRAY,
        NotMappedAsPointer = 213 => CUDA_ERROR_NOT_MAPPED_AS_POINTER,
        EccUncorrectable = 214 => CUDA_ERROR_ECC_UNCORRECTABLE,
        UnsupportedLimit = 215 => CUDA_ERROR_UNSUPPORTED_LIMIT,
        ContextAlreadyInUse = 216 => CUDA_ERROR_CONTEXT_ALREADY_IN_USE,
        PeerAccessUnsupported = 217 => CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
        InvalidPtx = 218 => CUDA_ERROR_INVALID_PTX,
        InvalidGraphicsContext = 219 => CUDA_ERROR_INVALID_GRAPHICS_CONTEXT,
        NvlinkUncorrectable = 220 => CUDA_ERROR_NVLINK_UNCORRECTABLE,
        JitCompilerNotFound = 221 => CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
        UnsupportedPtxVersion = 222 => CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
        JitCompilationDisabled = 223 => CUDA_ERROR_JIT_COMPILATION_DISABLED,
        UnsupportedExecAffinity = 224 => CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
        UnsupportedDevsideSync = 225 => CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC,
        Contained = 226 => CUDA_ERROR_CONTAINED,
        InvalidSource = 300 => CUDA_ERROR_INVALID_SOURCE,
        FileNotFound = 301 => CUDA_ERROR_FILE_NOT_FOUND,
        SharedObjectSymbolNotFound = 302 => CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND,
        SharedObjectInitFailed = 303 => CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
        OperatingSystemError = 304 => CUDA_ERROR_OPERATING_SYSTEM,
        InvalidHandle = 400 => CUDA_ERROR_INVALID_HANDLE,
        IllegalState = 401 => CUDA_ERROR_ILLEGAL_STATE,
        LossyQuery = 402 => CUDA_ERROR_LOSSY_QUERY,
        NotFound = 500 => CUDA_ERROR_NOT_FOUND,
        NotReady = 600 => CUDA_ERROR_NOT_READY,
        IllegalAddress = 700 => CUDA_ERROR_ILLEGAL_ADDRESS,
        LaunchOutOfResources = 701 => CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        LaunchTimeout = 702 => CUDA_ERROR_LAUNCH_TIMEOUT,
        LaunchIncompatibleTexturing = 703 => CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
        PeerAccessAlreadyEnabled = 704 => CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
        PeerAccessNotEnabled = 705 => CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
        PrimaryContextActive = 708 => CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
        ContextIsDestroyed = 709 => CUDA_ERROR_CONTEXT_IS_DESTROYED,
        AssertError = 710 => CUDA_ERROR_ASSERT,
        TooManyPeers = 711 => CUDA_ERROR_TOO_MANY_PEERS,
        HostMemoryAlreadyRegistered = 712 => CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
        HostMemoryNotRegistered = 713 => CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
        HardwareStackError = 714 => CUDA_ERROR_HARDWARE_STACK_ERROR,
        IllegalInstruction = 715 => CUDA_ERROR_ILLEGAL_INSTRUCTION,
        MisalignedAddress = 716 => CUDA_ERROR_MISALIGNED_ADDRESS,
        InvalidAddressSpace = 717 => CUDA_ERROR_INVALID_ADDRESS_SPACE,
        InvalidProgramCounter = 718 => CUDA_ERROR_INVALID_PC,
        LaunchFailed = 719 => CUDA_ERROR_LAUNCH_FAILED,
        CooperativeLaunchTooLarge = 720 => CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
        TensorMemoryLeak = 721 => CUDA_ERROR_TENSOR_MEMORY_LEAK,
        NotPermitted = 800 => CUDA_ERROR_NOT_PERMITTED,
        NotSupported = 801 => CUDA_ERROR_NOT_SUPPORTED,
        SystemNotReady = 802 => CUDA_ERROR_SYSTEM_NOT_READY,
        SystemDriverMismatch = 803 => CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
        CompatNotSupportedOnDevice = 804 => CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
        MpsConnectionFailed = 805 => CUDA_ERROR_MPS_CONNECTION_FAILED,
        MpsRpcFailure = 806 => CUDA_ERROR_MPS_RPC_FAILURE,
        MpsServerNotReady = 807 => CUDA_ERROR_MPS_SERVER_NOT_READY,
        MpsMaxClientsReached = 808 => CUDA_ERROR_MPS_MAX_CLIENTS_REACHED,
        MpsMaxConnectionsReached = 809 => CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED,
        MpsClientTerminated = 810 => CUDA_ERROR_MPS_CLIENT_TERMINATED,
        CdpNotSupported = 811 => CUDA_ERROR_CDP_NOT_SUPPORTED,
        CdpVersionMismatch = 812 => CUDA_ERROR_CDP_VERSION_MISMATCH,
        StreamCaptureUnsupported = 900 => CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        StreamCaptureInvalidated = 901 => CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        StreamCaptureMerge = 902 => CUDA_ERROR_STREAM_CAPTURE_MERGE,
        StreamCaptureUnmatched = 903 => CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
        StreamCaptureUnjoined = 904 => CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
        StreamCaptureIsolation = 905 => CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
        StreamCaptureImplicit = 906 => CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
        CapturedEvent = 907 => CUDA_ERROR_CAPTURED_EVENT,
        StreamCaptureWrongThread = 908 => CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
        Timeout = 909 => CUDA_ERROR_TIMEOUT,
        GraphExecUpdateFailure = 910 => CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
        ExternalDevice = 911 => CUDA_ERROR_EXTERNAL_DEVICE,
        InvalidClusterSize = 912 => CUDA_ERROR_INVALID_CLUSTER_SIZE,
        FunctionNotLoaded = 913 => CUDA_ERROR_FUNCTION_NOT_LOADED,
        InvalidResourceType = 914 => CUDA_ERROR_INVALID_RESOURCE_TYPE,
        InvalidResourceConfiguration = 915 => CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
        KeyRotation = 916 => CUDA_ERROR_KEY_ROTATION,
        UnknownError = 999 => CUDA_ERROR_UNKNOWN,
}

/// The driver's description of the code, quoted, where a driver is loaded
/// (`cuGetErrorString`), else the quoted `cuda.h` name; a code the table does not know
/// ([`CudaError::Unknown`]) is followed by its number where the driver describes it (its name,
/// `CUDA_ERROR_1234`, holds the number already).
impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (crate::backend::driver::error_string(self.code()), self) {
            (Some(text), CudaError::Unknown(code)) => write!(f, "{text:?} (CUresult {code})"),
            (Some(text), _) => write!(f, "{text:?}"),
            (None, _) => write!(f, "{:?}", self.cuda_name()),
        }
    }
}

impl std::error::Error for CudaError {}

/// Attaches "while …" context to a CUDA result.
pub(crate) trait CudaContext<T> {
    fn during(self, what: impl Into<String>) -> Result<T>;
}

impl<T> CudaContext<T> for Result<T, CudaError> {
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

    /// The codes of `cuda.h`, with the names `cust` gave them (messages and docs quote them).
    #[test]
    fn cuda_errors_keep_their_codes_and_names() {
        for (code, debug, name) in [
            (2, "OutOfMemory", "CUDA_ERROR_OUT_OF_MEMORY"),
            (100, "NoDevice", "CUDA_ERROR_NO_DEVICE"),
            (218, "InvalidPtx", "CUDA_ERROR_INVALID_PTX"),
            (600, "NotReady", "CUDA_ERROR_NOT_READY"),
            (700, "IllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"),
            (710, "AssertError", "CUDA_ERROR_ASSERT"),
            (718, "InvalidProgramCounter", "CUDA_ERROR_INVALID_PC"),
            (719, "LaunchFailed", "CUDA_ERROR_LAUNCH_FAILED"),
            (999, "UnknownError", "CUDA_ERROR_UNKNOWN"),
        ] {
            let e = CudaError::from_code(code);
            assert_eq!((format!("{e:?}"), e.cuda_name().as_ref(), e.code()), (debug.to_string(), name, code));
        }
        let line = Error::Cuda { during: "launching `k`".into(), error: CudaError::LaunchFailed }.to_string();
        assert!(
            line.starts_with("CUDA error while launching `k`: \"") && line.ends_with("\" (LaunchFailed)"),
            "{line}"
        );
    }

    /// A code the table does not know (a newer driver's) keeps its number: in the variant, the
    /// code, the `cuda.h`-style name and both printed forms.
    #[test]
    fn an_unknown_cuda_error_keeps_its_code() {
        let e = CudaError::from_code(123_456);
        assert_eq!(e, CudaError::Unknown(123_456));
        assert_ne!(e, CudaError::UnknownError, "999 is CUDA_ERROR_UNKNOWN, another code");
        assert_eq!(
            (e.code(), e.cuda_name().as_ref(), format!("{e:?}")),
            (123_456, "CUDA_ERROR_123456", "Unknown(123456)".into())
        );
        assert!(e.to_string().contains("123456"), "{e}");
        assert_eq!(CudaError::from_code(999), CudaError::UnknownError);
        let line = Error::Cuda { during: "launching `k`".into(), error: e }.to_string();
        assert!(
            line.starts_with("CUDA error while launching `k`: \"") && line.ends_with("(Unknown(123456))"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
    }
}
