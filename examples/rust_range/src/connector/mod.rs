//! The data source of the specification's "Example in Rust": it reads the numbers `[0, end)`
//! as a column `id`, in two partitions. The option `end` defaults to 10.
//!
//! Compare it with the guide page: its `RangeSource` is [`Source`], its `RangeReader` is
//! [`read::Reader`], its `arrow_schema()` is [`schema`], and its `create`, `schema`,
//! `create_reader`, `partitions` and `read` functions are the trait methods of the same names.
//! Everything the guide writes by hand around them (the `#[repr(C)]` table, `spark_ds_init`,
//! `call` with `catch_unwind`, `last_error`, the `close` functions, the Arrow stream) is what
//! the `export!` line of `src/lib.rs` expands to, from the `spark_datasource` crate.

mod read;

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use spark_datasource::{DataSource, Options, Result};

/// The data source: `RangeSource { end }` of the guide.
pub struct Source {
    end: i64,
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        // As in the guide, other options are ignored. Unlike the guide's `parse()?`, a malformed
        // value is reported with the option's name: "option `end` must be an integer, got `ten`".
        Ok(Source {
            end: options.get_or("end", 10_i64)?,
        })
    }

    fn schema(&self) -> Result<SchemaRef> {
        Ok(schema())
    }
}

/// The one column: `id`, a 64-bit integer (bigint) that is never null.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]))
}
