//! A schema written the way Spark's `.schema("...")` takes it, as DDL (`id bigint not null,
//! name string`) or as the JSON of `df.schema.json()`. Only the flat types of version 1: nested
//! types need the Rust API.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use crate::error::{Error, Result};

/// Parses a DDL schema such as `id bigint not null, name string, price decimal(10,2)`, or the
/// JSON of a Spark schema, `{"type":"struct","fields":[{"name":"id","type":"long",
/// "nullable":false}]}`.
///
/// # Errors
///
/// A usage error naming the column or the type that is not understood.
pub fn parse(ddl: &str) -> Result<SchemaRef> {
    if ddl.trim_start().starts_with('{') {
        return parse_json(ddl);
    }
    let mut fields = Vec::new();
    for column in split_columns(ddl) {
        let column = column.trim();
        if column.is_empty() {
            continue;
        }
        let mut words = column.split_whitespace();
        let name = words.next().unwrap_or_default().trim_matches('`');
        let rest: Vec<&str> = words.collect();
        let (type_words, nullable) = match rest.as_slice() {
            [t @ .., not, null]
                if not.eq_ignore_ascii_case("not") && null.eq_ignore_ascii_case("null") =>
            {
                (t.join(" "), false)
            }
            t => (t.join(" "), true),
        };
        if type_words.is_empty() {
            return Err(Error::usage(format!(
                "column `{name}` of the schema has no type; write it as `{name} bigint`"
            )));
        }
        fields.push(Field::new(name, data_type(name, &type_words)?, nullable));
    }
    if fields.is_empty() {
        return Err(Error::usage(
            "the schema is empty; write it as DDL, such as `id bigint not null, name string`",
        ));
    }
    Ok(Arc::new(Schema::new(fields)))
}

fn parse_json(json: &str) -> Result<SchemaRef> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        Error::usage(format!(
            "the schema is not valid JSON ({e}); write it as `df.schema.json()` prints it, or as DDL"
        ))
    })?;
    let fields = value["fields"].as_array().ok_or_else(|| {
        Error::usage(
            "the JSON schema has no `fields` array; write it as `df.schema.json()` prints it",
        )
    })?;
    let mut out = Vec::new();
    for field in fields {
        let name = field["name"]
            .as_str()
            .ok_or_else(|| Error::usage("a field of the JSON schema has no `name`"))?;
        let t = field["type"].as_str().ok_or_else(|| {
            Error::usage(format!(
                "column `{name}` of the JSON schema has no simple `type`; nested types need the Rust API"
            ))
        })?;
        let nullable = field["nullable"].as_bool().unwrap_or(true);
        out.push(Field::new(name, data_type(name, t)?, nullable));
    }
    Ok(Arc::new(Schema::new(out)))
}

/// Splits on commas outside parentheses, so `decimal(10,2)` stays whole.
fn split_columns(ddl: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in ddl.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&ddl[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&ddl[start..]);
    out
}

fn data_type(column: &str, t: &str) -> Result<DataType> {
    let lower = t.to_ascii_lowercase().replace(' ', "");
    Ok(match lower.as_str() {
        "boolean" | "bool" => DataType::Boolean,
        "tinyint" | "byte" => DataType::Int8,
        "smallint" | "short" => DataType::Int16,
        "int" | "integer" => DataType::Int32,
        "bigint" | "long" => DataType::Int64,
        "float" | "real" => DataType::Float32,
        "double" => DataType::Float64,
        "string" => DataType::Utf8,
        "binary" => DataType::Binary,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        d if d.starts_with("decimal(") && d.ends_with(')') => {
            let inner = &d["decimal(".len()..d.len() - 1];
            let (p, s) = inner.split_once(',').unwrap_or((inner, "0"));
            match (p.parse::<u8>(), s.parse::<i8>()) {
                (Ok(p), Ok(s)) if (1..=38).contains(&p) && s >= 0 && s as u8 <= p => {
                    DataType::Decimal128(p, s)
                }
                _ => {
                    return Err(Error::usage(format!(
                        "column `{column}`: `{t}` is not a valid decimal; write decimal(precision,scale) with 1 <= precision <= 38 and 0 <= scale <= precision"
                    )))
                }
            }
        }
        _ => {
            return Err(Error::usage(format!(
                "column `{column}` has the type `{t}`, which `--schema` does not know; use boolean, tinyint, smallint, int, bigint, float, double, string, binary, date, timestamp, timestamp_ntz or decimal(p,s)"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ddl_schema_becomes_an_arrow_schema() {
        let schema = parse("id bigint not null, name string, price decimal(10, 2)").ok();
        let expected = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("price", DataType::Decimal128(10, 2), true),
        ]);
        assert_eq!(schema.as_deref(), Some(&expected));
    }

    #[test]
    fn a_json_schema_becomes_an_arrow_schema() {
        let json = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}"#;
        let expected = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        assert_eq!(parse(json).ok().as_deref(), Some(&expected));
    }

    #[test]
    fn an_unknown_type_is_named() {
        let e = parse("id bignum").err().map(|e| e.to_string());
        assert_eq!(e.as_deref(), Some("column `id` has the type `bignum`, which `--schema` does not know; use boolean, tinyint, smallint, int, bigint, float, double, string, binary, date, timestamp, timestamp_ntz or decimal(p,s)"));
    }
}
