//! The one error type of the JNI library: an error class of the specification (or a Java
//! exception for mistakes of the caller) and a message that names the data source, the function
//! and the fix.

use std::fmt;

/// The exception class of the error classes of the specification.
pub const EXCEPTION_CLASS: &str = "dev/sparkds/spark/NativeDataSourceException";

/// What a failure becomes in the JVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// `NATIVE_DATA_SOURCE_ERROR`: a function of the library failed, with its `last_error`.
    NativeError,
    /// `NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND`: no library, or not the driver's build.
    NotFound,
    /// `INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED`: another build at a path this JVM loaded.
    Replaced,
    /// `INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED`: not a library, no `spark_ds_init`, a
    /// failing init, a malformed table.
    InitFailed,
    /// `INVALID_NATIVE_DATA_SOURCE_LIBRARY.UNSUPPORTED_ABI_VERSION`.
    UnsupportedAbi,
    /// `INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE`: a rule of the interface broken at run
    /// time.
    Conformance,
    /// `INVALID_NATIVE_DATA_SOURCE_LIBRARY.AMBIGUOUS`: more than one configured package
    /// provides the data source (the specification makes the query fail; it names no class).
    Ambiguous,
    /// `java.lang.IllegalArgumentException`: the caller passed something unusable.
    IllegalArgument,
    /// `java.lang.IllegalStateException`: a panic of this library, or a handle used wrongly.
    IllegalState,
    /// `java.lang.UnsupportedOperationException`: the source does not declare the capability.
    Unsupported,
}

impl ErrorClass {
    /// The error class of the specification, or `None` for a plain Java exception.
    pub fn spec_name(self) -> Option<&'static str> {
        Some(match self {
            ErrorClass::NativeError => "NATIVE_DATA_SOURCE_ERROR",
            ErrorClass::NotFound => "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND",
            ErrorClass::Replaced => "INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED",
            ErrorClass::InitFailed => "INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED",
            ErrorClass::UnsupportedAbi => {
                "INVALID_NATIVE_DATA_SOURCE_LIBRARY.UNSUPPORTED_ABI_VERSION"
            }
            ErrorClass::Conformance => "INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE",
            ErrorClass::Ambiguous => "INVALID_NATIVE_DATA_SOURCE_LIBRARY.AMBIGUOUS",
            _ => return None,
        })
    }

    /// The Java class thrown (JNI name).
    pub fn java_class(self) -> &'static str {
        match self {
            ErrorClass::IllegalArgument => "java/lang/IllegalArgumentException",
            ErrorClass::IllegalState => "java/lang/IllegalStateException",
            ErrorClass::Unsupported => "java/lang/UnsupportedOperationException",
            _ => EXCEPTION_CLASS,
        }
    }
}

/// A failure, as thrown into the JVM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub class: ErrorClass,
    pub message: String,
}

/// The result of the JNI library's functions.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Error {
        Error {
            class,
            message: message.into(),
        }
    }

    pub fn argument(message: impl Into<String>) -> Error {
        Error::new(ErrorClass::IllegalArgument, message)
    }

    /// A failure of sparkds while the library of data source `source` ran a step: the class
    /// follows the kind of failure, and the message names the data source.
    pub fn from_host(source: &str, e: sparkds::Error) -> Error {
        let class = match &e {
            sparkds::Error::Library { .. } => ErrorClass::NativeError,
            sparkds::Error::Violation(_) | sparkds::Error::Aborted { .. } => {
                ErrorClass::Conformance
            }
            sparkds::Error::Load { .. } => ErrorClass::InitFailed,
            sparkds::Error::NotSupported { .. } => ErrorClass::Unsupported,
            sparkds::Error::Usage(_) => ErrorClass::IllegalArgument,
            sparkds::Error::Io { .. } => ErrorClass::IllegalState,
        };
        Error::new(class, format!("native data source `{source}`: {e}"))
    }

    /// A failure of `Library::load`: every rule broken while loading is INIT_FAILED, except
    /// another ABI version (rule 3).
    pub fn from_load(path: &std::path::Path, e: sparkds::Error) -> Error {
        let class = match &e {
            sparkds::Error::Violation(v) if v.rule == 3 => ErrorClass::UnsupportedAbi,
            sparkds::Error::Usage(_) => ErrorClass::IllegalArgument,
            _ => ErrorClass::InitFailed,
        };
        Error::new(
            class,
            format!("the library `{}` cannot be used: {e}", path.display()),
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class.spec_name() {
            Some(name) => write!(f, "[{name}] {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}
