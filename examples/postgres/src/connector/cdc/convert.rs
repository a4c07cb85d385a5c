//! Values of changes that the server turns into what a batch read gives. A type that reads as
//! its text (`uuid`, `jsonb`, `inet`, an enum...) and a `timestamp` that reads as an instant
//! arrive in the change stream in their own binary form, where a batch read has the server
//! convert them in its query (`Kind::select`). The stream has the same server convert them
//! with the same expression (`Kind::expression`), in one query per column and batch over an
//! array of the values, on a connection of its own in the read's time zone:
//!
//! ```sql
//! SELECT abbrev(x) FROM unnest($1::inet[]) WITH ORDINALITY AS v(x, n) ORDER BY n
//! ```
//!
//! So a stream and a batch read of a table give the same text and the same instants, by the
//! server's own output functions and time zone rules, for every type the batch reads.

use std::collections::HashMap;

use arrow_array::{ArrayRef, BinaryArray};
use bytes::BytesMut;
use spark_datasource::Error;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::Client;

use super::super::binary::Decoder;
use super::super::connect::Connection;
use super::super::projection::{early_instant, instant};
use super::super::time::EPOCH_MICROS;
use super::super::types::Kind;
use super::slot::Failure;
use super::{Column, Table};

/// The element type of an array, and its elements in their binary form (NULL for NULL).
type Elements<'v> = (u32, Vec<Option<&'v [u8]>>);

/// The converting session of a task that reads changes: opened when a batch first has such a
/// column.
pub struct Converter<'a> {
    connection: &'a Connection,
    /// The time zone in which a `timestamp` becomes an instant, as in a batch read.
    zone: Option<&'a str>,
    session: Option<Session>,
    /// The array type of each element type, as SQL names it.
    array_types: HashMap<u32, String>,
}

/// A client, and the task that drives its connection (stopped with it).
struct Session {
    client: Client,
    driver: tokio::task::JoinHandle<()>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl<'a> Converter<'a> {
    pub fn new(connection: &'a Connection, zone: Option<&'a str>) -> Self {
        Converter {
            connection,
            zone,
            session: None,
            array_types: HashMap::new(),
        }
    }

    /// The column of `column`'s kind (of `table`) whose values are `raw`, each the binary form
    /// of a value of the column's PostgreSQL type (NULL for NULL).
    ///
    /// # Errors
    /// The server's, a malformed array, or a value that Spark cannot hold.
    pub async fn convert(
        &mut self,
        table: &Table,
        column: &Column,
        raw: &BinaryArray,
    ) -> Result<ArrayRef, Failure> {
        let mut decoder = Decoder::new(&column.kind);
        let at = |why: String| {
            Error::msg(format!(
                "column `{}` of the table `{}` holds {why}",
                column.name,
                table.qualified()
            ))
        };
        match &column.kind {
            Kind::List(element) => {
                let arrays = raw.iter().map(|v| v.map(elements).transpose());
                let arrays: Vec<Option<Elements<'_>>> =
                    arrays.collect::<Result<_, _>>().map_err(at)?;
                let Some(element_oid) = arrays.iter().flatten().map(|(oid, _)| *oid).next() else {
                    arrays.iter().for_each(|_| decoder.append_null());
                    return Ok(decoder.finish());
                };
                let flat: Vec<Option<&[u8]>> = arrays
                    .iter()
                    .flatten()
                    .flat_map(|(_, e)| e.iter().copied())
                    .collect();
                let converted = self.query(element, element_oid, &flat).await?;
                let mut converted = converted.iter();
                for array in &arrays {
                    match array {
                        None => decoder.append_null(),
                        Some((_, items)) => {
                            let items: Vec<Option<&[u8]>> = converted
                                .by_ref()
                                .take(items.len())
                                .map(Option::as_deref)
                                .collect();
                            decoder
                                .append(&array_binary(target_oid(element), &items))
                                .map_err(at)?;
                        }
                    }
                }
            }
            kind => {
                let values: Vec<Option<&[u8]>> = raw.iter().collect();
                for value in self.query(kind, column.type_oid, &values).await? {
                    match value {
                        None => decoder.append_null(),
                        Some(bytes) => decoder.append(&bytes).map_err(at)?,
                    }
                }
            }
        }
        Ok(decoder.finish())
    }

    /// The binary forms of `kind`'s expression over `values` (of the type `oid`), in order.
    async fn query(
        &mut self,
        kind: &Kind,
        oid: u32,
        values: &[Option<&[u8]>],
    ) -> Result<Vec<Option<Vec<u8>>>, Failure> {
        // A `timestamp` read as an instant as a batch read selects it (`projection`): its
        // first days apart, in microseconds since 1970.
        let expression = match kind {
            Kind::LocalTimestamp => format!("{}, {}", instant("x"), early_instant("x")),
            kind => kind
                .expression("x")
                .ok_or_else(|| Error::msg(format!("{kind:?} needs no conversion")))?,
        };
        let array_type = self.array_type(oid).await?;
        let sql = format!(
            "SELECT {expression} FROM unnest($1::{array_type}) WITH ORDINALITY AS v(x, n) \
             ORDER BY n"
        );
        let client = self.client().await?;
        let failed = |e| Failure::Server("convert the values of changes", e);
        let statement = client.prepare(&sql).await.map_err(failed)?;
        let param = RawArray(array_binary(oid, values));
        let rows = client.query(&statement, &[&param]).await.map_err(failed)?;
        let early = matches!(kind, Kind::LocalTimestamp);
        rows.iter()
            .map(|row| {
                let converted = row.try_get::<_, Option<Raw>>(0)?.map(|r| r.0);
                if converted.is_some() || !early {
                    return Ok(converted);
                }
                // The binary form of the `timestamptz` of the instant: microseconds since 2000.
                let micros: Option<i64> = row.try_get(1)?;
                Ok(micros.map(|m| m.saturating_sub(EPOCH_MICROS).to_be_bytes().to_vec()))
            })
            .collect::<Result<_, _>>()
            .map_err(failed)
    }

    /// `<type>[]` of the type `oid`, as SQL names it (qualified where the search path needs).
    async fn array_type(&mut self, oid: u32) -> Result<String, Failure> {
        if let Some(name) = self.array_types.get(&oid) {
            return Ok(name.clone());
        }
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT format_type(typarray, NULL) FROM pg_type WHERE oid = $1 AND typarray <> 0",
                &[&oid],
            )
            .await
            .map_err(|e| Failure::Server("read the array type of a column", e))?;
        let name: String = row
            .ok_or_else(|| Error::msg(format!("the type {oid} has no array type to convert with")))?
            .get(0);
        self.array_types.insert(oid, name.clone());
        Ok(name)
    }

    async fn client(&mut self) -> Result<&Client, Failure> {
        if self.session.is_none() {
            let (client, connection) = self
                .connection
                .try_connect("sparkds-stream-convert")
                .await?;
            let driver = tokio::spawn(async move {
                // Its error reaches the queries that wait on it.
                let _ = connection.await;
            });
            let session = Session { client, driver };
            if let Some(zone) = self.zone {
                session
                    .client
                    .execute("SELECT set_config('TimeZone', $1, false)", &[&zone])
                    .await
                    .map_err(|e| Failure::Server("set the time zone of the conversions", e))?;
            }
            self.session = Some(session);
        }
        match &self.session {
            Some(session) => Ok(&session.client),
            None => Err(Error::msg("no session to convert values with").into()),
        }
    }
}

/// The OID of what `kind`'s expression gives: text, or `timestamptz`.
fn target_oid(kind: &Kind) -> u32 {
    match kind {
        Kind::LocalTimestamp => Type::TIMESTAMPTZ.oid(),
        _ => Type::TEXT.oid(),
    }
}

/// The binary form of a one-dimensional array of `oid` (array_send's): dimensions, a
/// has-nulls flag, the element type, the length and lower bound, then each element.
fn array_binary(oid: u32, values: &[Option<&[u8]>]) -> Vec<u8> {
    let size: usize = values.iter().map(|v| 4 + v.map_or(0, <[u8]>::len)).sum();
    let mut out = Vec::with_capacity(20 + size);
    let has_nulls = values.iter().any(Option::is_none);
    for word in [1, i32::from(has_nulls)] {
        out.extend_from_slice(&word.to_be_bytes());
    }
    out.extend_from_slice(&oid.to_be_bytes());
    // Arrays hold at most 2^27 elements, so the count fits.
    out.extend_from_slice(&(values.len() as i32).to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for value in values {
        match value {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(bytes) => {
                out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                out.extend_from_slice(bytes);
            }
        }
    }
    out
}

/// The element type and the elements of an array's binary form, one-dimensional (or empty).
fn elements(value: &[u8]) -> Result<Elements<'_>, String> {
    let mut at = 0usize;
    let dimensions = word(value, &mut at)?;
    let _has_nulls = word(value, &mut at)?;
    let oid = word(value, &mut at)? as u32;
    let count = match dimensions {
        0 => 0,
        1 => {
            let length = word(value, &mut at)?;
            let _lower_bound = word(value, &mut at)?;
            usize::try_from(length).map_err(|_| format!("an array of {length} elements"))?
        }
        n => {
            return Err(format!(
                "an array of {n} dimensions, which Spark's array of version 1 reads as one \
                 dimension only"
            ))
        }
    };
    let mut items = Vec::with_capacity(count.min(value.len() / 4));
    for _ in 0..count {
        let length = word(value, &mut at)?;
        if length == -1 {
            items.push(None);
            continue;
        }
        let length =
            usize::try_from(length).map_err(|_| format!("an array element of length {length}"))?;
        let end = at.checked_add(length).ok_or_else(truncated)?;
        items.push(Some(value.get(at..end).ok_or_else(truncated)?));
        at = end;
    }
    if at != value.len() {
        return Err(format!(
            "an array with {} bytes after its elements",
            value.len() - at
        ));
    }
    Ok((oid, items))
}

/// The big-endian `i32` at `at`, which moves past it.
fn word(value: &[u8], at: &mut usize) -> Result<i32, String> {
    let bytes = value.get(*at..at.saturating_add(4)).ok_or_else(truncated)?;
    *at += 4;
    Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

fn truncated() -> String {
    "a truncated array".to_string()
}

/// An array in its binary form, bound as a parameter of the type that the SQL casts it to.
#[derive(Debug)]
struct RawArray(Vec<u8>);

impl ToSql for RawArray {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    // The SQL casts the parameter to the array type of the values (`array_type`).
    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A value in its binary form, whatever its type.
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(
        _ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_s_binary_form_reads_back_as_its_elements() -> Result<(), String> {
        let values: [Option<&[u8]>; 3] = [Some(b"ab"), None, Some(b"")];
        let binary = array_binary(25, &values);
        assert_eq!(elements(&binary)?, (25, values.to_vec()));
        let empty = array_binary(25, &[]);
        assert_eq!(elements(&empty)?, (25, vec![]));
        assert!(elements(&binary[..binary.len() - 1]).is_err());
        Ok(())
    }
}
