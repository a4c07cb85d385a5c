//! PostgreSQL types and the Spark types of version 1 they map to, in both directions: a read
//! maps the types of the catalog (`read_kind`), a write the types of the DataFrame
//! (`kind_of_arrow`). A read, batch or stream, maps as Spark's JDBC source for PostgreSQL does
//! (`PostgresDialect` on the types that the JDBC driver reports): `timestamp` is Spark's
//! `timestamp` or, with `preferTimestampNTZ`, `timestamp_ntz`; the types that JDBC reads as
//! strings (`uuid`, `json`, `jsonb`, `inet`, enums...) read as their text. The server makes
//! both of those (`Kind::expression`): a batch read in its query, a stream in a query over the
//! values of its changes (`cdc::convert`), so that the two give the same values.

use std::sync::Arc;

use arrow_schema::{DataType, Field, TimeUnit};
use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result};
use tokio_postgres::types::Type;

/// Spark's largest decimal precision.
pub const MAX_PRECISION: u8 = 38;

/// The decimal that an unconstrained `numeric` reads as: Spark's JDBC source gives
/// `decimal(38,18)`, rounding half up the digits past the 18th.
pub const UNCONSTRAINED: (u8, i8) = (38, 18);

/// The type of a column, on both sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Bool,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    /// `numeric(p,s)`; `exact` is false for an unconstrained `numeric`, whose values may be
    /// rounded to fit `decimal(38,18)`.
    Decimal {
        precision: u8,
        scale: i8,
        exact: bool,
    },
    /// `text`, `varchar`, `name`; `padded` for `char(n)`, which PostgreSQL compares without
    /// its trailing spaces (and Spark with them).
    Text {
        padded: bool,
    },
    Bytes,
    Date,
    /// `timestamp`: `timestamp_ntz`.
    Timestamp,
    /// `timestamp` read as Spark's `timestamp` (`preferTimestampNTZ` false): its wall clock in
    /// the read session's time zone, set to the reading machine's, as the JDBC driver reads
    /// it in the JVM's time zone. The query casts it to `timestamptz`.
    LocalTimestamp,
    /// `timestamptz`: `timestamp`, in UTC.
    TimestampTz,
    /// A type that Spark's JDBC source reads as a string (`uuid`, `jsonb`, `inet`, an enum...),
    /// named: the query casts it to `text`, the text that the JDBC driver returns.
    AsText(String),
    /// A one-dimensional array.
    List(Box<Kind>),
}

impl Kind {
    /// The Arrow type that Spark reads: every column and element nullable.
    pub fn data_type(&self) -> DataType {
        match self {
            Kind::Bool => DataType::Boolean,
            Kind::Int16 => DataType::Int16,
            Kind::Int32 => DataType::Int32,
            Kind::Int64 => DataType::Int64,
            Kind::Float32 => DataType::Float32,
            Kind::Float64 => DataType::Float64,
            Kind::Decimal {
                precision, scale, ..
            } => DataType::Decimal128(*precision, *scale),
            Kind::Text { .. } | Kind::AsText(_) => DataType::Utf8,
            Kind::Bytes => DataType::Binary,
            Kind::Date => DataType::Date32,
            Kind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            Kind::TimestampTz | Kind::LocalTimestamp => {
                DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("UTC")))
            }
            Kind::List(element) => {
                DataType::List(Arc::new(Field::new("element", element.data_type(), true)))
            }
        }
    }

    /// The PostgreSQL type, as SQL spells it: what a staging table and a created table use.
    pub fn sql_type(&self) -> String {
        match self {
            Kind::Bool => "boolean".into(),
            Kind::Int16 => "smallint".into(),
            Kind::Int32 => "integer".into(),
            Kind::Int64 => "bigint".into(),
            Kind::Float32 => "real".into(),
            Kind::Float64 => "double precision".into(),
            Kind::Decimal {
                precision,
                scale,
                exact: true,
            } => format!("numeric({precision},{scale})"),
            Kind::Decimal { .. } => "numeric".into(),
            Kind::Text { padded: false } => "text".into(),
            Kind::Text { padded: true } => "character".into(),
            Kind::Bytes => "bytea".into(),
            Kind::Date => "date".into(),
            Kind::Timestamp | Kind::LocalTimestamp => "timestamp".into(),
            Kind::TimestampTz => "timestamptz".into(),
            Kind::AsText(name) => name.clone(),
            Kind::List(element) => format!("{}[]", element.sql_type()),
        }
    }

    /// The column as a read selects it: converted to the type that it is decoded from, where
    /// that is not its own.
    pub fn select(&self, name: &str) -> String {
        match self.expression(name) {
            Some(expression) => format!("{expression} AS {name}"),
            None => name.to_string(),
        }
    }

    /// The SQL that converts the value `value` of this kind into the type that it is decoded
    /// from, or `None` when it is decoded as it is. A type read as text is written by its
    /// output function, as the JDBC driver receives it: `::text` is that, but for `inet`, whose
    /// cast shows the netmask of a host (`abbrev` does not), and for arrays, whose text keeps
    /// each element's output. A `timestamp` read as an instant is one in the session's time
    /// zone.
    pub fn expression(&self, value: &str) -> Option<String> {
        Some(match self {
            Kind::AsText(ty) if ty == "inet" => format!("abbrev({value})"),
            Kind::AsText(_) => format!("{value}::text"),
            Kind::LocalTimestamp => format!("{value}::timestamptz"),
            Kind::List(element) => match **element {
                Kind::AsText(_) => format!("{value}::text::text[]"),
                Kind::LocalTimestamp => format!("{value}::timestamptz[]"),
                _ => return None,
            },
            _ => return None,
        })
    }

    /// Whether the read decodes a `timestamptz` that the session's time zone made of a
    /// `timestamp`.
    pub fn is_local(&self) -> bool {
        match self {
            Kind::LocalTimestamp => true,
            Kind::List(element) => element.is_local(),
            _ => false,
        }
    }

    /// The OID of the type, which COPY's binary arrays carry for their elements.
    pub fn oid(&self) -> u32 {
        let ty = match self {
            Kind::Bool => Type::BOOL,
            Kind::Int16 => Type::INT2,
            Kind::Int32 => Type::INT4,
            Kind::Int64 => Type::INT8,
            Kind::Float32 => Type::FLOAT4,
            Kind::Float64 => Type::FLOAT8,
            Kind::Decimal { .. } => Type::NUMERIC,
            Kind::Text { padded: false } | Kind::AsText(_) => Type::TEXT,
            Kind::Text { padded: true } => Type::BPCHAR,
            Kind::Bytes => Type::BYTEA,
            Kind::Date => Type::DATE,
            Kind::Timestamp => Type::TIMESTAMP,
            Kind::TimestampTz | Kind::LocalTimestamp => Type::TIMESTAMPTZ,
            Kind::List(_) => return 0,
        };
        ty.oid()
    }
}

/// The kind of a column of PostgreSQL type `ty` with type modifier `typmod` (as the row
/// description of a query gives them) in a read, batch or stream, as Spark's JDBC source maps
/// it: `timestamp` by `preferTimestampNTZ`, and the types that it reads as strings as their
/// text.
///
/// # Errors
/// A type that Spark's JDBC source does not read either (`time`, `bit`, a composite...),
/// named with the column and the cast that reads it.
pub fn read_kind(column: &str, ty: &Type, typmod: i32, prefer_ntz: bool) -> Result<Kind> {
    let local = |kind| match kind {
        Kind::Timestamp if !prefer_ntz => Kind::LocalTimestamp,
        other => other,
    };
    if let Some(kind) = scalar(ty, typmod)? {
        return Ok(local(kind));
    }
    if read_as_text(ty) {
        return Ok(Kind::AsText(ty.name().to_string()));
    }
    if let tokio_postgres::types::Kind::Array(element) = ty.kind() {
        if let Some(kind) = scalar(element, typmod)? {
            return Ok(Kind::List(Box::new(local(kind))));
        }
        if array_of_text(element) {
            return Ok(Kind::List(Box::new(Kind::AsText(element.name().into()))));
        }
    }
    if let tokio_postgres::types::Kind::Domain(base) = ty.kind() {
        return read_kind(column, base, typmod, prefer_ntz);
    }
    Err(Error::msg(format!(
        "column `{column}` has the PostgreSQL type `{}`, which maps to no Spark type that this \
         data source reads (smallint, integer, bigint, numeric, real, double precision, text, \
         varchar, char, boolean, date, timestamp, timestamptz, bytea, the types that Spark's \
         JDBC source reads as strings (uuid, json, jsonb, inet, cidr, macaddr, xml, interval, \
         money, enums...), and arrays of those): cast it in the option `query`, such as \
         `SELECT \"{column}\"::text AS \"{column}\" ...`",
        ty.name()
    )))
}

/// Whether Spark's JDBC source reads a scalar of `ty` as a string: what the JDBC driver
/// reports as `OTHER` (any type that it does not know: `uuid`, `json`, `inet`, ranges...),
/// `SQLXML`, or `VARCHAR` (enums), and `money`. Not those that it reads as something else
/// (`time` and `timetz` as timestamps, `bit` as booleans or bytes, `oid` as a decimal), nor
/// the internal `void`, `unknown` and `refcursor`.
fn read_as_text(ty: &Type) -> bool {
    use tokio_postgres::types::Kind as K;
    let other = [
        Type::TIME,
        Type::TIMETZ,
        Type::BIT,
        Type::OID,
        Type::VOID,
        Type::UNKNOWN,
        Type::REFCURSOR,
    ];
    match ty.kind() {
        K::Enum(_) | K::Range(_) | K::Multirange(_) => true,
        K::Simple => !other.contains(ty),
        _ => false,
    }
}

/// Whether Spark's JDBC source reads an array of `element` as an array of strings that are
/// the elements' text: enums, and those of its list whose values the JDBC driver returns as
/// PostgreSQL writes them (not `interval` or geometry, which it writes its own way).
fn array_of_text(element: &Type) -> bool {
    let texts = [
        Type::UUID,
        Type::JSON,
        Type::JSONB,
        Type::INET,
        Type::CIDR,
        Type::MACADDR,
        Type::MACADDR8,
        Type::XML,
    ];
    matches!(element.kind(), tokio_postgres::types::Kind::Enum(_)) || texts.contains(element)
}

fn scalar(ty: &Type, typmod: i32) -> Result<Option<Kind>> {
    Ok(Some(match *ty {
        Type::BOOL => Kind::Bool,
        Type::INT2 => Kind::Int16,
        Type::INT4 => Kind::Int32,
        Type::INT8 => Kind::Int64,
        Type::FLOAT4 => Kind::Float32,
        Type::FLOAT8 => Kind::Float64,
        Type::NUMERIC => numeric(typmod)?,
        Type::TEXT | Type::VARCHAR | Type::NAME => Kind::Text { padded: false },
        Type::BPCHAR => Kind::Text { padded: true },
        Type::BYTEA => Kind::Bytes,
        Type::DATE => Kind::Date,
        Type::TIMESTAMP => Kind::Timestamp,
        Type::TIMESTAMPTZ => Kind::TimestampTz,
        _ => return Ok(None),
    }))
}

/// `numeric(p,s)` from its type modifier, `((p << 16) | s) + 4`, or -1 when unconstrained.
fn numeric(typmod: i32) -> Result<Kind> {
    if typmod < 4 {
        let (precision, scale) = UNCONSTRAINED;
        return Ok(Kind::Decimal {
            precision,
            scale,
            exact: false,
        });
    }
    let packed = typmod - 4;
    let precision = (packed >> 16) & 0xffff;
    // The scale is an 11-bit signed number since PostgreSQL 15.
    let scale = ((packed & 0x7ff) ^ 0x400) - 0x400;
    if precision > i32::from(MAX_PRECISION) || scale < 0 || scale > precision {
        return Err(Error::msg(format!(
            "numeric({precision},{scale}) does not fit Spark's decimal (precision at most 38, \
             scale from 0 to the precision): cast it in the option `query`, such as \
             `::numeric(38,{})`",
            scale.clamp(0, 38)
        )));
    }
    Ok(Kind::Decimal {
        precision: precision as u8,
        scale: scale as i8,
        exact: true,
    })
}

/// The kind that a DataFrame column of `data_type` is written as.
///
/// # Errors
/// A type that has no PostgreSQL column type here, named with the column.
pub fn kind_of_arrow(column: &str, data_type: &DataType) -> Result<Kind> {
    Ok(match data_type {
        DataType::Boolean => Kind::Bool,
        DataType::Int8 | DataType::Int16 => Kind::Int16,
        DataType::Int32 => Kind::Int32,
        DataType::Int64 => Kind::Int64,
        DataType::Float32 => Kind::Float32,
        DataType::Float64 => Kind::Float64,
        DataType::Decimal128(precision, scale) if *scale >= 0 => Kind::Decimal {
            precision: *precision,
            scale: *scale,
            exact: true,
        },
        DataType::Utf8 | DataType::LargeUtf8 => Kind::Text { padded: false },
        DataType::Binary | DataType::LargeBinary => Kind::Bytes,
        DataType::Date32 => Kind::Date,
        DataType::Timestamp(TimeUnit::Microsecond, None) => Kind::Timestamp,
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => Kind::TimestampTz,
        DataType::List(element) if !matches!(element.data_type(), DataType::List(_)) => {
            Kind::List(Box::new(kind_of_arrow(column, element.data_type())?))
        }
        other => {
            return Err(Error::msg(format!(
                "column `{column}` is {other}, which this data source cannot write to \
                 PostgreSQL: write booleans, integers, floats, decimals, strings, binary, \
                 dates, timestamps, or arrays of those"
            )))
        }
    })
}

/// The Arrow field of a column.
pub fn field(name: &str, kind: &Kind, nullable: bool) -> Field {
    Field::new(name, kind.data_type(), nullable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_typmods_give_precision_and_scale() -> Result<()> {
        let typmod = |p: i32, s: i32| ((p << 16) | s) + 4;
        assert_eq!(
            numeric(typmod(12, 3))?,
            Kind::Decimal {
                precision: 12,
                scale: 3,
                exact: true
            }
        );
        assert_eq!(
            numeric(-1)?,
            Kind::Decimal {
                precision: 38,
                scale: 18,
                exact: false
            }
        );
        assert!(numeric(typmod(50, 2)).is_err());
        Ok(())
    }

    #[test]
    fn an_unmappable_type_is_refused_with_its_column_and_a_cast() {
        let error = read_kind("at", &Type::TIME, -1, false)
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.starts_with(
            "column `at` has the PostgreSQL type `time`, which maps to no Spark type"
        )));
        let error = read_kind("at", &Type::TIME, -1, false)
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("`time`") && e.contains("\"at\"::text")));
    }

    #[test]
    fn a_read_maps_as_sparks_jdbc_source() -> Result<()> {
        let text = |name: &str| Kind::AsText(name.into());
        assert_eq!(read_kind("u", &Type::UUID, -1, false)?, text("uuid"));
        assert_eq!(read_kind("j", &Type::JSONB, -1, true)?, text("jsonb"));
        assert_eq!(read_kind("m", &Type::MONEY, -1, true)?, text("money"));
        assert_eq!(
            read_kind("us", &Type::UUID_ARRAY, -1, true)?,
            Kind::List(Box::new(text("uuid")))
        );
        // JDBC writes the elements of an interval[] its own way.
        assert!(read_kind("is", &Type::INTERVAL_ARRAY, -1, true).is_err());
        assert_eq!(
            read_kind("ts", &Type::TIMESTAMP, -1, false)?,
            Kind::LocalTimestamp
        );
        assert_eq!(
            read_kind("ts", &Type::TIMESTAMP, -1, true)?,
            Kind::Timestamp
        );
        assert_eq!(
            read_kind("ts", &Type::TIMESTAMP_ARRAY, -1, false)?,
            Kind::List(Box::new(Kind::LocalTimestamp))
        );
        assert_eq!(
            read_kind("tz", &Type::TIMESTAMPTZ, -1, true)?,
            Kind::TimestampTz
        );
        assert_eq!(
            Kind::LocalTimestamp.select("\"ts\""),
            "\"ts\"::timestamptz AS \"ts\""
        );
        assert_eq!(
            Kind::List(Box::new(text("inet"))).select("\"a\""),
            "\"a\"::text::text[] AS \"a\""
        );
        assert_eq!(text("inet").select("\"a\""), "abbrev(\"a\") AS \"a\"");
        Ok(())
    }
}
