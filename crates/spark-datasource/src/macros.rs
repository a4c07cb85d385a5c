//! `export!`: the one line of a data source crate that names its source and capabilities.
//!
//! It expands to a `static` `SparkDsLibrary` built by the `const fn`s of `ffi::library`, and
//! to `spark_ds_init`, the library's entry point; to `spark_ds_bench_v1`, a hidden entry
//! outside the header that only `cargo sparkds bench` calls (see `crate::bench_entry`); and to
//! `spark_ds_exported_v1`, the line's names for the host's tests. The trait bound of each step makes
//! a capability without its implementation a compile error at the `export!` line, with a note
//! that says what to implement; `ffi::library::declared` refuses, also at compile time, the
//! combinations that the header forbids.

/// Exports a data source: `export!(path::to::Source: capability, ...)`.
///
/// The capabilities are `batch_read`, `micro_batch_read`, `batch_write`, `streaming_write`
/// and `truncate` (the `SPARK_DS_*` bits that `create` returns), and the pushdowns of batch
/// reads `push_limit`, `prune_columns` and `push_filters` (the extension of
/// `spark_datasource_filters.h`: it also exports `spark_ds_filters_init`). Each needs its
/// trait: see the crate's documentation. Use it once per library, at the root of the crate:
///
/// ```
/// use std::sync::Arc;
///
/// use spark_datasource::arrow_array::{Int64Array, RecordBatch};
/// use spark_datasource::arrow_schema::{DataType, Field, Schema, SchemaRef};
/// use spark_datasource::{
///     BatchRead, BatchReader, Batches, DataSource, Error, Options, Result, TaskContext,
/// };
///
/// /// The numbers `[0, end)`, in one partition.
/// pub struct Range {
///     end: i64,
/// }
///
/// impl DataSource for Range {
///     fn create(_name: &str, options: Options) -> Result<Self> {
///         Ok(Range { end: options.get_or("end", 10)? })
///     }
///
///     fn schema(&self) -> Result<SchemaRef> {
///         Ok(Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])))
///     }
/// }
///
/// impl BatchRead for Range {
///     type Reader = RangeReader;
///
///     fn reader(&self, schema: SchemaRef) -> Result<RangeReader> {
///         Ok(RangeReader { end: self.end, schema })
///     }
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// pub struct RangeReader {
///     end: i64,
///     schema: SchemaRef,
/// }
///
/// impl BatchReader for RangeReader {
///     type Partition = ();
///
///     fn partitions(&self) -> Result<Vec<()>> {
///         Ok(vec![()])
///     }
///
///     fn read(&self, _partition: (), _task: &TaskContext) -> Result<Batches> {
///         let ids = Int64Array::from_iter_values(0..self.end);
///         let batch = RecordBatch::try_new(self.schema.clone(), vec![Arc::new(ids)])
///             .map_err(Error::from)?;
///         Ok(Batches::new(self.schema.clone(), [Ok(batch)]))
///     }
/// }
///
/// spark_datasource::export!(Range: batch_read);
/// # fn main() {}
/// ```
///
/// Adding a capability later is implementing its trait and adding its name here. A capability
/// without its trait does not compile, and the error says what to implement:
///
/// ```compile_fail,E0277
/// # use spark_datasource::{arrow_schema::SchemaRef, DataSource, Options, Result};
/// # pub struct Source;
/// # impl DataSource for Source {
/// #     fn create(_name: &str, _options: Options) -> Result<Self> { Ok(Source) }
/// #     fn schema(&self) -> Result<SchemaRef> { unimplemented!() }
/// # }
/// // `Source` implements no `BatchRead`.
/// spark_datasource::export!(Source: batch_read);
/// # fn main() {}
/// ```
///
/// Nor do the combinations that the header forbids, such as `truncate` without a writer:
///
/// ```compile_fail,E0080
/// # use spark_datasource::{arrow_schema::SchemaRef, DataSource, Options, Result};
/// # use spark_datasource::{BatchRead, BatchReader, Batches, TaskContext};
/// # pub struct Source;
/// # impl DataSource for Source {
/// #     fn create(_name: &str, _options: Options) -> Result<Self> { Ok(Source) }
/// #     fn schema(&self) -> Result<SchemaRef> { unimplemented!() }
/// # }
/// # impl BatchRead for Source {
/// #     type Reader = Reader;
/// #     fn reader(&self, _schema: SchemaRef) -> Result<Reader> { Ok(Reader) }
/// # }
/// # #[derive(serde::Serialize, serde::Deserialize)]
/// # pub struct Reader;
/// # impl BatchReader for Reader {
/// #     type Partition = ();
/// #     fn partitions(&self) -> Result<Vec<()>> { Ok(vec![]) }
/// #     fn read(&self, _p: (), _t: &TaskContext) -> Result<Batches> { unimplemented!() }
/// # }
/// spark_datasource::export!(Source: batch_read, truncate);
/// # fn main() {}
/// ```
///
/// An unknown name is refused too:
///
/// ```compile_fail
/// # use spark_datasource::{arrow_schema::SchemaRef, DataSource, Options, Result};
/// # pub struct Source;
/// # impl DataSource for Source {
/// #     fn create(_name: &str, _options: Options) -> Result<Self> { Ok(Source) }
/// #     fn schema(&self) -> Result<SchemaRef> { unimplemented!() }
/// # }
/// spark_datasource::export!(Source: batch_reed);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export {
    ($source:ty : $($capability:ident),+ $(,)?) => {
        const _: () = {
            static LIBRARY: &$crate::__private::SparkDsLibrary =
                $crate::__library!($source: $($capability),+);

            /// The library's entry point, `spark_ds_init` of `spark_datasource.h`.
            ///
            /// # Safety
            /// As the header says: `host` valid until the library is unloaded, `library`
            /// valid for writes.
            #[unsafe(no_mangle)]
            unsafe extern "C" fn spark_ds_init(
                host: *const $crate::__private::SparkDsHost,
                library: *mut *const $crate::__private::SparkDsLibrary,
            ) -> ::std::ffi::c_int {
                // SAFETY: the caller's duties are those of `init`, which it forwards.
                unsafe { $crate::__private::init(LIBRARY, host, library) }
            }

            // The exported function has exactly the header's type.
            const _: $crate::__private::SparkDsInitFunction = spark_ds_init;

            static BENCH: $crate::__private::BenchTable = {
                let table = $crate::__private::BenchTable::NONE;
                $(let table = $crate::__bench_table!(table, $source, $capability);)+
                table
            };

            /// Not part of `spark_datasource.h`: the in-process reference of
            /// `cargo sparkds bench`, which runs a task through the traits without the C
            /// interface. Spark never calls it.
            ///
            /// # Safety
            /// `call` valid as `SparkDsBenchCall` describes.
            #[doc(hidden)]
            #[unsafe(no_mangle)]
            unsafe extern "C" fn spark_ds_bench_v1(
                call: *mut $crate::__private::SparkDsBenchCall,
            ) -> ::std::ffi::c_int {
                // SAFETY: the caller's duties are those of `bench`, which it forwards.
                unsafe { $crate::__private::bench(&BENCH, call) }
            }

            /// Not part of `spark_datasource.h`: the names of this `export!` line, each
            /// followed by a comma, NUL terminated, in a static string. The host reads it
            /// (`sparkds::Library::exported`), so that a test runs what the library exports
            /// without reading the crate's source. Spark never calls it.
            #[doc(hidden)]
            #[unsafe(no_mangle)]
            extern "C" fn spark_ds_exported_v1() -> *const ::std::ffi::c_char {
                ::std::concat!($(::std::stringify!($capability), ","),+, "\0")
                    .as_ptr()
                    .cast()
            }

            $($crate::__export_extension!($source, $capability);)+
        };
    };
    ($($tokens:tt)*) => {
        ::std::compile_error!(
            "spark_datasource::export! takes the source type, a colon and its capabilities, \
             for example: export!(connector::Source: batch_read, push_limit, prune_columns)"
        );
    };
}

/// The `&'static SparkDsLibrary` of a source and its capabilities: the table of `export!`,
/// apart from `spark_ds_init` so that the crate's tests can build several.
#[doc(hidden)]
#[macro_export]
macro_rules! __library {
    ($source:ty : $($capability:ident),+) => {{
        struct Exported;

        impl $crate::__private::Export for Exported {
            const CAPABILITIES: u64 = $crate::__private::declared(
                0 $(| $crate::__export_name!($capability))+,
                0 $(+ $crate::__export_name!($capability))+,
            );
            $($crate::__export_reader!($source, $capability);)+
        }

        // Evaluated now, so that `cargo check` reports a forbidden combination too.
        const _: u64 = <Exported as $crate::__private::Export>::CAPABILITIES;

        static LIBRARY: $crate::__private::SparkDsLibrary = {
            let table = $crate::__private::base::<$source, Exported>();
            $(let table = $crate::__export_table!(table, $source, Exported, $capability);)+
            table
        };
        &LIBRARY
    }};
}

/// The bit of a name of `export!`, or a compile error naming the known ones.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_name {
    (batch_read) => {
        $crate::__private::names::BATCH_READ
    };
    (micro_batch_read) => {
        $crate::__private::names::MICRO_BATCH_READ
    };
    (batch_write) => {
        $crate::__private::names::BATCH_WRITE
    };
    (streaming_write) => {
        $crate::__private::names::STREAMING_WRITE
    };
    (truncate) => {
        $crate::__private::names::TRUNCATE
    };
    (push_limit) => {
        $crate::__private::names::PUSH_LIMIT
    };
    (prune_columns) => {
        $crate::__private::names::PRUNE_COLUMNS
    };
    (push_filters) => {
        $crate::__private::names::PUSH_FILTERS
    };
    ($other:ident) => {
        ::std::compile_error!(::std::concat!(
            "unknown capability `",
            ::std::stringify!($other),
            "` in export!: the capabilities \
             are batch_read, micro_batch_read, batch_write, streaming_write, truncate, \
             push_limit, prune_columns and push_filters"
        ))
    };
}

/// The symbols outside `spark_datasource.h` that a name of `export!` adds: `push_filters`
/// exports `spark_ds_filters_init` and its table (`spark_datasource_filters.h`); no other name
/// adds one, so a library that does not name it exports nothing new.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_extension {
    ($source:ty, push_filters) => {
        static FILTER_TABLE: $crate::__private::SparkDsFilterTable =
            $crate::__private::filter_table::<$source>();

        /// The entry point of the filter pushdown extension, `spark_ds_filters_init` of
        /// `spark_datasource_filters.h`.
        ///
        /// # Safety
        /// As the header says: `table` valid for writes.
        #[unsafe(no_mangle)]
        unsafe extern "C" fn spark_ds_filters_init(
            host: *const $crate::__private::SparkDsHost,
            table: *mut *const $crate::__private::SparkDsFilterTable,
        ) -> ::std::ffi::c_int {
            // SAFETY: the caller's duties are those of `filters_init`, which it forwards.
            unsafe { $crate::__private::filters_init(&FILTER_TABLE, host, table) }
        }

        // The exported function has exactly the header's type.
        const _: $crate::__private::SparkDsFiltersInitFunction = spark_ds_filters_init;
    };
    ($source:ty, $other:ident) => {};
}

/// The reader of partitions that a read capability adds to `Export`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_reader {
    ($source:ty, batch_read) => {
        const READ_BATCH: ::std::option::Option<$crate::__private::ReadPartition> =
            ::std::option::Option::Some($crate::__private::read_batch::<$source>);
    };
    ($source:ty, micro_batch_read) => {
        const READ_STREAM: ::std::option::Option<$crate::__private::ReadPartition> =
            ::std::option::Option::Some($crate::__private::read_stream::<$source>);
    };
    ($source:ty, $other:ident) => {};
}

/// The step of the in-process reference's table that a name of `export!` adds.
#[doc(hidden)]
#[macro_export]
macro_rules! __bench_table {
    ($table:ident, $source:ty, batch_read) => {
        $table.with_read_batch($crate::__private::read_batch::<$source>)
    };
    ($table:ident, $source:ty, micro_batch_read) => {
        $table.with_read_stream($crate::__private::read_stream::<$source>)
    };
    ($table:ident, $source:ty, batch_write) => {
        $table.with_write($crate::__private::write_task::<$source>)
    };
    ($table:ident, $source:ty, streaming_write) => {
        $table.with_write($crate::__private::write_task::<$source>)
    };
    ($table:ident, $source:ty, $other:ident) => {
        $table
    };
}

/// The step of the table that a name of `export!` adds.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_table {
    ($table:ident, $source:ty, $export:ty, batch_read) => {
        $crate::__private::with_batch_read::<$source, $export>($table)
    };
    ($table:ident, $source:ty, $export:ty, micro_batch_read) => {
        $crate::__private::with_micro_batch_read::<$source, $export>($table)
    };
    ($table:ident, $source:ty, $export:ty, batch_write) => {
        $crate::__private::with_write::<$source, $export>($table)
    };
    ($table:ident, $source:ty, $export:ty, streaming_write) => {
        $crate::__private::with_write::<$source, $export>($table)
    };
    ($table:ident, $source:ty, $export:ty, push_limit) => {
        $crate::__private::with_push_limit::<$source>($table)
    };
    ($table:ident, $source:ty, $export:ty, prune_columns) => {
        $crate::__private::with_prune_columns::<$source>($table)
    };
    ($table:ident, $source:ty, $export:ty, $other:ident) => {
        $table
    };
}
