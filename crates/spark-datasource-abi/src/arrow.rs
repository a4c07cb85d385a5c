//! The Arrow C data interface structs with their fields: `struct ArrowSchema`, `struct
//! ArrowArray` and `struct ArrowArrayStream`, as a consumer that cannot trust its producer
//! reads them. arrow-rs's own structs (`FFI_ArrowSchema`, `FFI_ArrowArray`,
//! `FFI_ArrowArrayStream`), which the declarations of [`crate::v1`] use, keep their fields
//! private and release themselves when dropped; the host must read every field of what a
//! library wrote (a NULL `format`, a negative `length`, `n_buffers` that the type does not have:
//! the conformance rules) and release it itself, once, to check that the release marks it
//! released. It does so through these, which have arrow-rs's layout: a pointer to one is a
//! pointer to the other ([`ArrowSchema::as_ffi`], [`ArrowSchema::of`]).
//!
//! The crate's layout test holds these equal to the structs of `spark_datasource.h`, and the
//! assertions below to arrow-rs's.

use std::ffi::{c_char, c_int, c_void};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;

/// `struct ArrowSchema`, with its fields.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    /// The type, NUL-terminated.
    pub format: *const c_char,
    /// The field's name, NUL-terminated, or NULL.
    pub name: *const c_char,
    /// The metadata, or NULL.
    pub metadata: *const c_char,
    /// `ARROW_FLAG_*`.
    pub flags: i64,
    /// How many children there are.
    pub n_children: i64,
    /// The children.
    pub children: *mut *mut ArrowSchema,
    /// The dictionary's type, or NULL.
    pub dictionary: *mut ArrowSchema,
    /// Releases the struct; NULL once released.
    pub release: Option<unsafe extern "C" fn(schema: *mut ArrowSchema)>,
    /// The producer's data.
    pub private_data: *mut c_void,
}

/// `struct ArrowArray`, with its fields.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    /// The number of values.
    pub length: i64,
    /// The number of nulls, or -1 when not computed.
    pub null_count: i64,
    /// The offset of the first value in the buffers.
    pub offset: i64,
    /// How many buffers there are.
    pub n_buffers: i64,
    /// How many children there are.
    pub n_children: i64,
    /// The buffers.
    pub buffers: *mut *const c_void,
    /// The children.
    pub children: *mut *mut ArrowArray,
    /// The dictionary, or NULL.
    pub dictionary: *mut ArrowArray,
    /// Releases the struct; NULL once released.
    pub release: Option<unsafe extern "C" fn(array: *mut ArrowArray)>,
    /// The producer's data.
    pub private_data: *mut c_void,
}

/// `struct ArrowArrayStream`, with its fields.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    /// Writes the stream's schema to `out`.
    pub get_schema:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int>,
    /// Writes the next batch to `out`, or a released array at the end.
    pub get_next:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int>,
    /// The message of the last failed callback.
    pub get_last_error:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream) -> *const c_char>,
    /// Releases the stream; NULL once released.
    pub release: Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream)>,
    /// The producer's data.
    pub private_data: *mut c_void,
}

macro_rules! same_struct {
    ($raw:ident, $ffi:ident, $what:literal) => {
        impl $raw {
            #[doc = concat!("A released `", $what, "`, for a producer to fill.")]
            pub const fn empty() -> Self {
                // SAFETY: every field is an integer, a pointer or an `Option` of a function
                // pointer, for which all-zero bytes are 0, NULL and `None`.
                unsafe { std::mem::zeroed() }
            }

            #[doc = concat!("The same `", $what, "` as arrow-rs's struct, to pass where the")]
            /// declarations of the header take arrow-rs's.
            pub fn as_ffi(&mut self) -> *mut $ffi {
                std::ptr::from_mut(self).cast()
            }

            #[doc = concat!("The fields of arrow-rs's `", $what, "`.")]
            pub fn of(ffi: &$ffi) -> &Self {
                // SAFETY: both are `repr(C)` declarations of the same C struct (same size and
                // alignment, asserted below; same offsets, the layout test), and every bit
                // pattern of the struct is a valid value of these fields.
                unsafe { &*std::ptr::from_ref(ffi).cast::<Self>() }
            }
        }

        const _: () = {
            assert!(std::mem::size_of::<$raw>() == std::mem::size_of::<$ffi>());
            assert!(std::mem::align_of::<$raw>() == std::mem::align_of::<$ffi>());
        };
    };
}

same_struct!(ArrowSchema, FFI_ArrowSchema, "struct ArrowSchema");
same_struct!(ArrowArray, FFI_ArrowArray, "struct ArrowArray");
same_struct!(
    ArrowArrayStream,
    FFI_ArrowArrayStream,
    "struct ArrowArrayStream"
);
