//! The columns of a read's COPY, as a batch read and a change stream's snapshot select them,
//! and their arrays.
//!
//! A `timestamp` read as an instant is its wall clock in the read's time zone, which the server
//! converts (`::timestamptz`), but in UTC, where the wall clock is the instant and the server
//! sends it as it is. East of UTC, the wall clocks of PostgreSQL's first day (4714-11-24 BC) are
//! instants before the first that a `timestamptz` holds, so the server cannot convert them,
//! though Spark holds them. Those of the first two days are therefore converted apart: the
//! column's field is NULL for them, and a field after the columns carries their instant in
//! microseconds since 1970, the wall clock's less the zone's offset on those days (its local
//! mean time, the same for every day before the zone's first rule), which the arrays put back
//! in the column. An array of `timestamp` that holds one is NULL likewise, and its elements'
//! instants come in an `int8[]` after the columns.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, TimestampMicrosecondBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, ArrayRef, TimestampMicrosecondArray};
use arrow_schema::DataType;

use super::binary::Decoder;
use super::sql::quote;
use super::time::is_utc;
use super::types::Kind;

/// The wall clocks converted apart: those before this, PostgreSQL's third day.
const EARLY: &str = "'4714-11-26 00:00:00 BC'::timestamp";

/// The fields of a read's COPY: a field per column, then one per column whose early instants
/// are converted apart.
pub struct Projection {
    fields: Vec<String>,
    /// The column of each field after the columns, and the kind of that field: `int8` for a
    /// `timestamp`, `int8[]` for an array of them.
    early: Vec<(usize, Kind)>,
    columns: usize,
}

impl Projection {
    /// The fields that select `columns` (names and kinds) in the time zone `zone` (`None`: the
    /// server's).
    pub fn new<'c>(
        columns: impl IntoIterator<Item = (&'c str, &'c Kind)>,
        zone: Option<&str>,
    ) -> Self {
        let utc = zone.is_some_and(is_utc);
        let mut fields = Vec::new();
        let mut early = Vec::new();
        let mut later = Vec::new();
        for (index, (name, kind)) in columns.into_iter().enumerate() {
            let name = quote(name);
            fields.push(match kind {
                Kind::LocalTimestamp if utc => name,
                Kind::LocalTimestamp => {
                    early.push((index, Kind::Int64));
                    later.push(early_instant(&name));
                    format!("{} AS {name}", instant(&name))
                }
                Kind::List(element) if **element == Kind::LocalTimestamp && !utc => {
                    early.push((index, Kind::List(Box::new(Kind::Int64))));
                    later.push(early_instants(&name));
                    // An array of more dimensions than one stays one: the decoder refuses it,
                    // as in UTC (a 2-D array of one NULL, since the server cannot convert it).
                    format!(
                        "CASE WHEN {EARLY} > ANY({name}) THEN CASE WHEN array_ndims({name}) > 1 \
                         THEN '{{{{NULL}}}}'::timestamptz[] END \
                         ELSE {name}::timestamptz[] END AS {name}"
                    )
                }
                kind => kind.select(&name),
            });
        }
        let columns = fields.len();
        fields.extend(later);
        Projection {
            fields,
            early,
            columns,
        }
    }

    /// The select list.
    pub fn select_list(&self) -> String {
        self.fields.join(", ")
    }

    /// A decoder per field, the columns' of `kinds` first.
    pub fn decoders<'k>(&self, kinds: impl IntoIterator<Item = &'k Kind>) -> Vec<Decoder> {
        let mut decoders: Vec<Decoder> = kinds.into_iter().map(Decoder::new).collect();
        decoders.extend(self.early.iter().map(|(_, kind)| Decoder::new(kind)));
        decoders
    }

    /// The column of the field `field`, for an error that names it.
    pub fn column(&self, field: usize) -> usize {
        field
            .checked_sub(self.columns)
            .and_then(|i| self.early.get(i).map(|(column, _)| *column))
            .unwrap_or(field)
    }

    /// The arrays of the columns, from the decoders of [`Projection::decoders`]: each early
    /// instant put back in its column.
    pub fn finish(&self, decoders: &mut [Decoder]) -> Vec<ArrayRef> {
        let mut arrays: Vec<ArrayRef> = decoders.iter_mut().map(Decoder::finish).collect();
        let later = arrays.split_off(self.columns);
        for ((column, _), instants) in self.early.iter().zip(later) {
            let column = *column;
            // Nearly always none: the column is as the server converted it.
            if instants.null_count() < instants.len() {
                arrays[column] = put_back(&arrays[column], &instants);
            }
        }
        arrays
    }
}

/// The instant of the wall clock `value` (a `timestamp`) in the session's time zone, as a
/// `timestamptz`; NULL for the wall clocks converted apart ([`early_instant`]).
pub fn instant(value: &str) -> String {
    format!("CASE WHEN {value} < {EARLY} THEN NULL ELSE {value}::timestamptz END")
}

/// The instant of the wall clock `value` in the session's time zone, in microseconds since
/// 1970 (`int8`), for the wall clocks that [`instant`] leaves NULL; NULL for the others.
pub fn early_instant(value: &str) -> String {
    format!(
        "CASE WHEN {value} < {EARLY} THEN ((extract(epoch FROM {value}) - \
         extract(timezone FROM {EARLY}::timestamptz)) * 1000000)::int8 END"
    )
}

/// An array of the wall clocks `value` (a `timestamp[]`) that holds one of the first days: each
/// element's instant in microseconds since 1970 (`int8[]`), the others converted by the server;
/// NULL for the other arrays, which the server converts whole, and for those of more dimensions
/// than one, which a read refuses.
fn early_instants(value: &str) -> String {
    let element = format!(
        "coalesce({}, (extract(epoch FROM {}) * 1000000)::int8)",
        early_instant("e"),
        instant("e")
    );
    format!(
        "CASE WHEN {EARLY} > ANY({value}) AND array_ndims({value}) = 1 THEN ARRAY(SELECT {element} \
         FROM unnest({value}) WITH ORDINALITY AS u(e, n) ORDER BY n) END"
    )
}

/// `converted`, a column of instants in UTC or of arrays of them, with the instants of `early`
/// (microseconds, or arrays of them, where not NULL) where it is NULL.
fn put_back(converted: &ArrayRef, early: &ArrayRef) -> ArrayRef {
    let Some(lists) = converted.as_list_opt::<i32>() else {
        let converted = converted.as_primitive::<TimestampMicrosecondType>();
        let early = early.as_primitive::<Int64Type>();
        let merged: TimestampMicrosecondArray = converted
            .iter()
            .zip(early.iter())
            .map(|(value, instant)| value.or(instant))
            .collect();
        return Arc::new(merged.with_timezone_opt(converted.timezone()));
    };
    let early = early.as_list::<i32>();
    let field = match lists.data_type() {
        DataType::List(field) => field.clone(),
        _ => unreachable!("as_list_opt gave a list"),
    };
    let zone = match field.data_type() {
        DataType::Timestamp(_, zone) => zone.clone(),
        _ => None,
    };
    let elements = TimestampMicrosecondBuilder::new().with_timezone_opt(zone);
    let mut merged = ListBuilder::new(elements).with_field(field);
    for row in 0..lists.len() {
        if lists.is_valid(row) {
            let values = lists.value(row);
            merged
                .values()
                .extend(values.as_primitive::<TimestampMicrosecondType>().iter());
            merged.append(true);
        } else if early.is_valid(row) {
            let values = early.value(row);
            merged
                .values()
                .extend(values.as_primitive::<Int64Type>().iter());
            merged.append(true);
        } else {
            merged.append_null();
        }
    }
    Arc::new(merged.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_in_utc_is_selected_as_it_is_and_elsewhere_its_first_days_apart() {
        let columns = [("id", Kind::Int64), ("at", Kind::LocalTimestamp)];
        let named = || columns.iter().map(|(n, k)| (*n, k));
        let utc = Projection::new(named(), Some("UTC"));
        assert_eq!(utc.select_list(), "\"id\", \"at\"");
        assert_eq!(utc.decoders(columns.iter().map(|(_, k)| k)).len(), 2);
        let east = Projection::new(named(), Some("Asia/Kolkata"));
        assert_eq!(
            east.select_list(),
            "\"id\", CASE WHEN \"at\" < '4714-11-26 00:00:00 BC'::timestamp THEN NULL ELSE \"at\"::timestamptz END AS \"at\", \
             CASE WHEN \"at\" < '4714-11-26 00:00:00 BC'::timestamp THEN ((extract(epoch FROM \"at\") - \
             extract(timezone FROM '4714-11-26 00:00:00 BC'::timestamp::timestamptz)) * 1000000)::int8 END"
        );
        assert_eq!(east.column(2), 1);
        assert_eq!(east.column(0), 0);
        let mut decoders = east.decoders(columns.iter().map(|(_, k)| k));
        assert_eq!(decoders.len(), 3);
        // Row 0: converted by the server; row 1: early, converted apart; row 2: NULL.
        let pg = |unix: i64| (unix - super::super::time::EPOCH_MICROS).to_be_bytes();
        assert!(decoders[0].append(&1i64.to_be_bytes()).is_ok());
        assert!(decoders[1].append(&pg(5)).is_ok());
        decoders[2].append_null();
        for _ in 0..2 {
            assert!(decoders[0].append(&2i64.to_be_bytes()).is_ok());
            decoders[1].append_null();
        }
        assert!(decoders[2]
            .append(&(-211_813_507_808_000_000i64).to_be_bytes())
            .is_ok());
        decoders[2].append_null();
        let arrays = east.finish(&mut decoders);
        assert_eq!(arrays.len(), 2);
        let at = arrays[1].as_primitive::<TimestampMicrosecondType>();
        let values: Vec<Option<i64>> = at.iter().collect();
        assert_eq!(values, [Some(5), Some(-211_813_507_808_000_000), None]);
        assert_eq!(at.timezone(), Some("UTC"));
    }
}
