//! Schemas as they cross the boundary: Arrow IPC messages holding a Schema, the bytes of Arrow
//! Java's `Schema.serializeAsMessage()` (continuation marker, length, flatbuffer, padding),
//! which `Schema.deserializeMessage` reads back.

use arrow_ipc::writer::{write_message, DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_schema::Schema;

use crate::error::{Error, Result};

/// The schema of an IPC Schema message; `what` names it in the error ("the schema of
/// createReader").
///
/// # Errors
///
/// Bytes that are not an IPC Schema message.
pub fn schema_from_ipc(bytes: &[u8], what: &str) -> Result<Schema> {
    arrow_ipc::convert::try_schema_from_ipc_buffer(bytes).map_err(|e| {
        Error::argument(format!(
            "{what} is not an Arrow IPC Schema message ({e}); pass the bytes of Schema.serializeAsMessage()"
        ))
    })
}

/// The IPC Schema message of `schema`.
///
/// # Errors
///
/// None in practice: any schema of version 1 encodes.
pub fn schema_to_ipc(schema: &Schema) -> Result<Vec<u8>> {
    let options = IpcWriteOptions::default();
    let encoded = IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(
        schema,
        &mut DictionaryTracker::new(false),
        &options,
    );
    let mut out = Vec::new();
    write_message(&mut out, encoded, &options).map_err(|e| {
        Error::new(
            crate::error::ErrorClass::IllegalState,
            format!("cannot encode the schema as an IPC message: {e}"),
        )
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field, TimeUnit};

    #[test]
    fn a_schema_of_every_version_1_type_round_trips() {
        let schema = Schema::new(vec![
            Field::new("b", DataType::Boolean, true),
            Field::new("i", DataType::Int32, false),
            Field::new("d", DataType::Decimal128(38, 9), true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new(
                "ntz",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            ),
            Field::new("l", DataType::new_list(DataType::Utf8, true), true),
        ]);
        let bytes = schema_to_ipc(&schema).expect("encodes");
        // The encapsulated format: continuation marker, then the length.
        assert_eq!(bytes[..4], [0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            schema_from_ipc(&bytes, "the schema").expect("decodes"),
            schema
        );
    }

    #[test]
    fn bytes_that_are_no_schema_name_what_to_pass() {
        let e = schema_from_ipc(b"no", "the schema of createReader").expect_err("refused");
        assert!(
            e.message
                .starts_with("the schema of createReader is not an Arrow IPC Schema message")
                && e.message
                    .ends_with("pass the bytes of Schema.serializeAsMessage()"),
            "{e}"
        );
    }
}
