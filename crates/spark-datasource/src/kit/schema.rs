//! Schemas that come from the options: a [`Scan`] that a reader holds (the source's schema, the
//! columns that Spark reads, the limit it pushed), one call that checks a requested schema
//! against the source's, and the projection and limit of batches of any schema.
//!
//! ```
//! use std::sync::Arc;
//! use spark_datasource::arrow_schema::{DataType, Field, Schema};
//! use spark_datasource::kit::schema::Scan;
//!
//! // What the options gave: the table's columns, as the source found them.
//! let table = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int64, false),
//!     Field::new("name", DataType::Utf8, true),
//! ]));
//! // `reader(schema)`: Spark's schema, then `prune_columns` and `push_limit`.
//! let mut scan = Scan::new(table.clone(), table.clone())?;
//! scan.prune(Arc::new(table.project(&[1])?))?;
//! scan.limit = Some(10);
//! assert_eq!(scan.names(), vec!["name"]);
//!
//! // A user's schema that the table cannot give is refused with the fix.
//! let wrong = Schema::new(vec![Field::new("id", DataType::Utf8, false)]);
//! let message = Scan::new(table, Arc::new(wrong)).unwrap_err().to_string();
//! assert_eq!(
//!     message,
//!     "column `id` is bigint in this data source, not string: declare it as bigint in the \
//!      schema, or leave it out"
//! );
//! # Ok::<(), spark_datasource::Error>(())
//! ```

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use crate::{Batches, Error, Result};

/// What a batch read reads: the source's schema, the columns of it that Spark asked for (after
/// `prune_columns`), and the limit that `push_limit` accepted. Readers cross to the executors
/// serialized, and this with them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scan {
    /// The source's own schema, as its options gave it.
    pub source: SchemaRef,
    /// The schema of the batches to return: columns of `source`, in Spark's order, nullable as
    /// Spark declares them.
    pub read: SchemaRef,
    /// The index in `source` of each column of `read`.
    pub columns: Vec<usize>,
    /// The limit that the reader accepted, if any.
    pub limit: Option<u64>,
}

impl Scan {
    /// The scan of `requested` (the schema of `reader(schema)`) over `source`.
    ///
    /// # Errors
    ///
    /// When `requested` names a column that `source` lacks, gives one another type, or declares
    /// one without nulls that may hold some ([`columns_of`]).
    pub fn new(source: SchemaRef, requested: SchemaRef) -> Result<Scan> {
        let columns = columns_of(&source, &requested)?;
        Ok(Scan {
            read: project(&source, &requested)?,
            source,
            columns,
            limit: None,
        })
    }

    /// `prune_columns`: read only `required`'s columns.
    ///
    /// # Errors
    ///
    /// As [`Scan::new`].
    pub fn prune(&mut self, required: SchemaRef) -> Result<()> {
        *self = Scan {
            limit: self.limit,
            ..Scan::new(self.source.clone(), required)?
        };
        Ok(())
    }

    /// The names of the columns to read, in order.
    pub fn names(&self) -> Vec<&str> {
        self.read
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect()
    }

    /// `batches` cut to the limit, if there is one.
    pub fn limited(&self, batches: Batches) -> Batches {
        match self.limit {
            Some(limit) => limit_rows(batches, limit),
            None => batches,
        }
    }
}

/// The index in `source` of each column of `requested`, after checking that `source` has it
/// with the same type, and no NULLs where `requested` declares none (Spark passes the query's
/// schema, perhaps the user's own; a column without NULLs may be read as nullable).
///
/// # Errors
///
/// A message that names the column and the fix, in Spark's type names.
pub fn columns_of(source: &Schema, requested: &Schema) -> Result<Vec<usize>> {
    let mut columns = Vec::with_capacity(requested.fields().len());
    for field in requested.fields() {
        let name = field.name();
        let Ok(index) = source.index_of(name) else {
            let names: Vec<&str> = source.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(Error::msg(format!(
                "this data source has no column `{name}`; its columns are: {}",
                names.join(", ")
            )));
        };
        let own = source.field(index);
        if own.data_type() != field.data_type() {
            let (own_type, asked) = (type_name(own.data_type()), type_name(field.data_type()));
            return Err(Error::msg(format!(
                "column `{name}` is {own_type} in this data source, not {asked}: declare it as \
                 {own_type} in the schema, or leave it out"
            )));
        }
        if own.is_nullable() && !field.is_nullable() {
            return Err(Error::msg(format!(
                "column `{name}` has nulls in this data source: declare it without NOT NULL, \
                 or leave it out"
            )));
        }
        columns.push(index);
    }
    Ok(columns)
}

/// The columns of `requested` as `source` has them, nullable as `requested` declares them.
///
/// # Errors
///
/// As [`columns_of`].
pub fn project(source: &Schema, requested: &Schema) -> Result<SchemaRef> {
    let columns = columns_of(source, requested)?;
    let fields: Vec<_> = columns
        .iter()
        .zip(requested.fields())
        .map(|(i, asked)| source.field(*i).clone().with_nullable(asked.is_nullable()))
        .collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// Checks that rows of `incoming` can be written to a table of schema `table`: each column is
/// one of the table's with its type, and each column of the table without NULLs is written.
///
/// A nullable column may be written to a column without NULLs, as Spark allows (its ANSI store
/// assignment checks the values, not the declaration: `spark.range` and most DataFrames declare
/// every column nullable); a NULL that comes is refused by [`check_nulls`], which the data
/// writer calls on each batch.
///
/// # Errors
///
/// A message that names the column and the fix.
pub fn check_write(table: &Schema, incoming: &Schema) -> Result<()> {
    for field in incoming.fields() {
        let name = field.name();
        let Ok(own) = table.field_with_name(name) else {
            return Err(Error::msg(format!(
                "the table has no column `{name}`: select only its columns, or write with mode \
                 overwrite to replace the table"
            )));
        };
        if own.data_type() != field.data_type() {
            return Err(Error::msg(format!(
                "column `{name}` is {} in the table, not {}: cast it before writing",
                type_name(own.data_type()),
                type_name(field.data_type())
            )));
        }
    }
    for own in table.fields() {
        if !own.is_nullable() && incoming.field_with_name(own.name()).is_err() {
            return Err(Error::msg(format!(
                "column `{}` of the table has no NULLs, and the rows to write do not have it: \
                 select it too",
                own.name()
            )));
        }
    }
    Ok(())
}

/// Refuses a batch with a NULL in a column that the table holds without NULLs, naming the
/// column and the row (of the batch).
///
/// # Errors
///
/// A message that names the column, the row and the fix.
pub fn check_nulls(table: &Schema, batch: &RecordBatch) -> Result<()> {
    for own in table.fields().iter().filter(|f| !f.is_nullable()) {
        let Some(column) = batch.column_by_name(own.name()) else {
            continue;
        };
        if let Some(nulls) = column.logical_nulls().filter(|n| n.null_count() > 0) {
            let row = nulls.iter().position(|valid| !valid).unwrap_or(0);
            return Err(Error::msg(format!(
                "column `{}` of the table has no NULLs, but row {row} of a batch to write holds \
                 one: write it without NULLs (`coalesce`, or a filter)",
                own.name()
            )));
        }
    }
    Ok(())
}

/// At most `limit` rows of `batches`, reading no further.
pub fn limit_rows(batches: Batches, limit: u64) -> Batches {
    let schema = batches.schema();
    let mut remaining = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut batches = batches;
    // Checked before asking for the next batch: the source reads none past the limit.
    let limited = std::iter::from_fn(move || {
        if remaining == 0 {
            return None;
        }
        Some(batches.next()?.map(|batch: RecordBatch| {
            let rows = batch.num_rows().min(remaining);
            remaining -= rows;
            batch.slice(0, rows)
        }))
    });
    Batches::new(schema, limited)
}

/// The name of a type as Spark SQL writes it (`bigint`, `string`, ...); others as Arrow does.
pub fn type_name(data_type: &DataType) -> String {
    let name = match data_type {
        DataType::Boolean => "boolean",
        DataType::Int8 => "tinyint",
        DataType::Int16 => "smallint",
        DataType::Int32 => "int",
        DataType::Int64 => "bigint",
        DataType::Float32 => "float",
        DataType::Float64 => "double",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string",
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "binary",
        DataType::Date32 => "date",
        DataType::Timestamp(_, Some(_)) => "timestamp",
        DataType::Timestamp(_, None) => "timestamp_ntz",
        DataType::Decimal128(p, s) => return format!("decimal({p},{s})"),
        other => return other.to_string(),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::Field;

    fn table() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]))
    }

    #[test]
    fn a_null_in_a_column_without_nulls_is_refused_by_row() {
        use arrow_array::Int64Array;
        let incoming = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let batch = |ids: Vec<Option<i64>>| {
            RecordBatch::try_new(incoming.clone(), vec![Arc::new(Int64Array::from(ids))]).unwrap()
        };
        assert!(check_nulls(&table(), &batch(vec![Some(1), Some(2)])).is_ok());
        assert_eq!(
            check_nulls(&table(), &batch(vec![Some(1), None])).map_err(|e| e.to_string()),
            Err(
                "column `id` of the table has no NULLs, but row 1 of a batch to write holds \
                 one: write it without NULLs (`coalesce`, or a filter)"
                    .into()
            )
        );
    }

    #[test]
    fn a_requested_schema_is_checked_column_by_column() {
        let ask = |fields| columns_of(&table(), &Schema::new(fields)).map_err(|e| e.to_string());
        assert_eq!(
            ask(vec![Field::new("name", DataType::Utf8, true)]),
            Ok(vec![1])
        );
        assert_eq!(
            ask(vec![Field::new("age", DataType::Int32, true)]),
            Err("this data source has no column `age`; its columns are: id, name".into())
        );
        assert_eq!(
            ask(vec![Field::new("name", DataType::Utf8, false)]),
            Err(
                "column `name` has nulls in this data source: declare it without NOT NULL, \
                 or leave it out"
                    .into()
            )
        );
        // A column without NULLs may be read as nullable, as Spark's DDL declares it.
        let read = project(
            &table(),
            &Schema::new(vec![Field::new("id", DataType::Int64, true)]),
        );
        assert!(read.is_ok_and(|s| s.field(0).is_nullable()));
    }

    #[test]
    fn pruning_keeps_the_limit_and_checks_the_columns() -> Result<()> {
        let mut scan = Scan::new(table(), table())?;
        scan.limit = Some(3);
        scan.prune(Arc::new(Schema::empty()))?;
        assert_eq!((scan.columns.len(), scan.limit), (0, Some(3)));
        let wrong = Schema::new(vec![Field::new("id", DataType::Int32, false)]);
        assert!(scan.prune(Arc::new(wrong)).is_err());
        Ok(())
    }

    #[test]
    fn writes_are_checked_against_the_table() {
        let incoming =
            |fields| check_write(&table(), &Schema::new(fields)).map_err(|e| e.to_string());
        assert_eq!(
            incoming(vec![Field::new("id", DataType::Int64, false)]),
            Ok(())
        );
        assert_eq!(
            incoming(vec![Field::new("name", DataType::Utf8, true)]),
            Err(
                "column `id` of the table has no NULLs, and the rows to write do not have it: \
                 select it too"
                    .into()
            )
        );
        // Declared nullable (as Spark's DataFrames mostly are), checked by value.
        assert_eq!(
            incoming(vec![Field::new("id", DataType::Int64, true)]),
            Ok(())
        );
        assert_eq!(
            incoming(vec![Field::new("id", DataType::Float64, false)]),
            Err("column `id` is bigint in the table, not double: cast it before writing".into())
        );
    }

    #[test]
    fn a_limit_stops_reading_at_the_limit() -> Result<()> {
        let schema = table();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
            ],
        )?;
        let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = read.clone();
        let batches = (0..10).map(move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(batch.clone())
        });
        let rows: usize = limit_rows(Batches::new(schema, batches), 4)
            .map(|b| b.map(|b| b.num_rows()))
            .sum::<Result<usize>>()?;
        assert_eq!(rows, 4);
        assert_eq!(read.load(std::sync::atomic::Ordering::SeqCst), 2);
        Ok(())
    }
}
