//! The two text formats, line by line, with no I/O: CSV lines split into cells and written
//! back, JSON lines parsed into objects, the types inferred from sample lines, and the columns
//! of a batch built from the parsed lines.
//!
//! One line is one row in both formats: that is what lets a read start in the middle of a
//! file (see `splits`). So a CSV value cannot hold a line break, as with Spark's CSV source
//! without `multiLine`.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int32Builder, Int64Builder};
use arrow_array::builder::{StringBuilder, TimestampMicrosecondBuilder};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The format of the files, the option `format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// Delimited text: the options `delimiter` and `header`.
    Csv { delimiter: char, header: bool },
    /// One JSON object per line.
    JsonLines,
}

impl Format {
    /// The extension of the data files: a directory's other files are not read.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv { .. } => "csv",
            Format::JsonLines => "jsonl",
        }
    }

    /// Whether the first line of every file names the columns instead of holding a row.
    pub fn has_header(self) -> bool {
        matches!(self, Format::Csv { header: true, .. })
    }
}

/// One value of a parsed line, before it is converted to the type of its column.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// An empty CSV cell, a JSON null, or a key missing from a JSON object.
    Null,
    /// The text of a CSV cell (`""` is the empty string), or a JSON string.
    Text(String),
    /// Any other JSON value.
    Json(Value),
}

/// A line that cannot be parsed: the reason; the caller adds the file and the line number.
pub type LineError = String;

/// The cells of a CSV `line` (without its line break). Cells may be quoted with `"`, a quote
/// inside a quoted cell doubled (RFC 4180). An empty unquoted cell is null; `""` is the empty
/// string, so that nulls and empty strings survive a round trip.
///
/// # Errors
/// An unterminated quote, or text after a closing quote.
pub fn split_csv(line: &str, delimiter: char) -> Result<Vec<Cell>, LineError> {
    let mut cells = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut text = String::new();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        text.push('"');
                    }
                    Some('"') => break,
                    Some(c) => text.push(c),
                    None => {
                        return Err(format!(
                            "cell {} opens a quote that the line does not close (a value cannot \
                             span lines)",
                            cells.len() + 1
                        ))
                    }
                }
            }
            cells.push(Cell::Text(text));
            match chars.next() {
                None => return Ok(cells),
                Some(c) if c == delimiter => {}
                Some(c) => {
                    return Err(format!(
                        "cell {} has `{c}` after its closing quote; quote the whole cell and \
                         double the quotes inside it",
                        cells.len()
                    ))
                }
            }
        } else {
            let mut text = String::new();
            loop {
                match chars.next() {
                    None => {
                        cells.push(unquoted(text));
                        return Ok(cells);
                    }
                    Some(c) if c == delimiter => break,
                    Some(c) => text.push(c),
                }
            }
            cells.push(unquoted(text));
        }
    }
}

fn unquoted(text: String) -> Cell {
    if text.is_empty() {
        Cell::Null
    } else {
        Cell::Text(text)
    }
}

/// A CSV line of `cells`, `None` for null: the inverse of [`split_csv`].
///
/// # Errors
/// A value with a line break, which one line cannot hold.
pub fn join_csv(cells: &[Option<&str>], delimiter: char) -> Result<String, String> {
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            line.push(delimiter);
        }
        let Some(text) = cell else { continue };
        if text.contains(['\n', '\r']) {
            return Err(
                "holds a line break, which a line of CSV cannot: write with the option \
                 format=jsonl instead"
                    .to_string(),
            );
        }
        if text.is_empty() || text.contains([delimiter, '"']) || text.starts_with(' ') {
            line.push('"');
            line.push_str(&text.replace('"', "\"\""));
            line.push('"');
        } else {
            line.push_str(text);
        }
    }
    Ok(line)
}

/// The object of a JSON `line`.
///
/// # Errors
/// Text that is not JSON, or JSON that is not an object.
pub fn parse_json(line: &str) -> Result<Map<String, Value>, LineError> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!(
            "expected a JSON object {{...}}, found {}",
            json_kind(&other)
        )),
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The cells of a JSON object for the columns `names`, in that order; other keys are ignored.
pub fn json_cells(object: &mut Map<String, Value>, names: &[&str]) -> Vec<Cell> {
    names
        .iter()
        .map(|name| match object.remove(*name) {
            None | Some(Value::Null) => Cell::Null,
            Some(Value::String(text)) => Cell::Text(text),
            Some(other) => Cell::Json(other),
        })
        .collect()
}

/// The types that a read converts text to, with their Spark names, for error messages.
pub const READABLE_TYPES: &str = "bigint, int, double, boolean, string, timestamp";

/// The narrowest type that holds every cell seen so far of a column: bigint, then double, then
/// boolean, else string. `None` until a non-null cell is seen.
pub fn widen(current: Option<DataType>, cell: &Cell) -> Option<DataType> {
    let seen = match cell {
        Cell::Null => return current,
        Cell::Text(text) => {
            if text.trim().parse::<i64>().is_ok() {
                DataType::Int64
            } else if text.trim().parse::<f64>().is_ok() {
                DataType::Float64
            } else if parse_bool(text).is_some() {
                DataType::Boolean
            } else {
                DataType::Utf8
            }
        }
        Cell::Json(Value::Number(n)) if n.is_i64() => DataType::Int64,
        Cell::Json(Value::Number(_)) => DataType::Float64,
        Cell::Json(Value::Bool(_)) => DataType::Boolean,
        Cell::Json(_) => DataType::Utf8,
    };
    Some(match (current, seen) {
        (None, seen) => seen,
        (Some(a), b) if a == b => a,
        (Some(DataType::Int64), DataType::Float64) | (Some(DataType::Float64), DataType::Int64) => {
            DataType::Float64
        }
        _ => DataType::Utf8,
    })
}

/// The schema of columns `names` whose cells were `types` (string where every cell was null).
/// Every column is nullable: a later line may leave it empty.
pub fn inferred_schema(names: &[String], types: &[Option<DataType>]) -> Schema {
    Schema::new(
        names
            .iter()
            .zip(types)
            .map(|(name, t)| Field::new(name, t.clone().unwrap_or(DataType::Utf8), true))
            .collect::<Vec<_>>(),
    )
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Builds one column from the cells of a batch's rows, converting each cell to the field's
/// type. The error names the row (its index in `cells`) and says what was wrong.
pub struct ColumnBuilder {
    field: Arc<Field>,
    builder: Builder,
}

enum Builder {
    Int64(Int64Builder),
    Int32(Int32Builder),
    Float64(Float64Builder),
    Boolean(BooleanBuilder),
    Utf8(StringBuilder),
    Timestamp(TimestampMicrosecondBuilder),
}

impl ColumnBuilder {
    /// A builder for `field`, whose type must be [`readable`].
    ///
    /// # Errors
    /// A type that text cannot be read as.
    pub fn new(field: Arc<Field>) -> Result<Self, String> {
        let builder = match field.data_type() {
            DataType::Int64 => Builder::Int64(Int64Builder::new()),
            DataType::Int32 => Builder::Int32(Int32Builder::new()),
            DataType::Float64 => Builder::Float64(Float64Builder::new()),
            DataType::Boolean => Builder::Boolean(BooleanBuilder::new()),
            DataType::Utf8 => Builder::Utf8(StringBuilder::new()),
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Builder::Timestamp(TimestampMicrosecondBuilder::new())
            }
            other => {
                return Err(format!(
                    "column `{}` is {other}, which this data source cannot read from text; use \
                     one of: {READABLE_TYPES}",
                    field.name()
                ))
            }
        };
        Ok(ColumnBuilder { field, builder })
    }

    /// Appends one cell.
    ///
    /// # Errors
    /// A cell that is not a value of the column's type, or a null in a non-nullable column.
    pub fn append(&mut self, cell: Cell) -> Result<(), String> {
        let name = self.field.name();
        if cell == Cell::Null {
            if !self.field.is_nullable() {
                return Err(format!(
                    "column `{name}` is declared not null, but the line has no value for it"
                ));
            }
            match &mut self.builder {
                Builder::Int64(b) => b.append_null(),
                Builder::Int32(b) => b.append_null(),
                Builder::Float64(b) => b.append_null(),
                Builder::Boolean(b) => b.append_null(),
                Builder::Utf8(b) => b.append_null(),
                Builder::Timestamp(b) => b.append_null(),
            }
            return Ok(());
        }
        let wrong = |cell: &Cell, what: &str| {
            let shown = match cell {
                Cell::Text(text) => format!("`{text}`"),
                Cell::Json(value) => format!("`{value}`"),
                Cell::Null => "null".to_string(),
            };
            format!(
                "column `{name}`: {shown} is not {what}; fix the line, or read the column as \
                 string with .schema(...)"
            )
        };
        match (&mut self.builder, &cell) {
            (Builder::Int64(b), Cell::Text(t)) => {
                b.append_value(t.trim().parse().map_err(|_| wrong(&cell, "a bigint"))?)
            }
            (Builder::Int64(b), Cell::Json(Value::Number(n))) => {
                b.append_value(n.as_i64().ok_or_else(|| wrong(&cell, "a bigint"))?)
            }
            (Builder::Int32(b), Cell::Text(t)) => {
                b.append_value(t.trim().parse().map_err(|_| wrong(&cell, "an int"))?)
            }
            (Builder::Int32(b), Cell::Json(Value::Number(n))) => b.append_value(
                n.as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| wrong(&cell, "an int"))?,
            ),
            (Builder::Float64(b), Cell::Text(t)) => {
                b.append_value(t.trim().parse().map_err(|_| wrong(&cell, "a double"))?)
            }
            (Builder::Float64(b), Cell::Json(Value::Number(n))) => {
                b.append_value(n.as_f64().ok_or_else(|| wrong(&cell, "a double"))?)
            }
            (Builder::Boolean(b), Cell::Text(t)) => {
                b.append_value(parse_bool(t).ok_or_else(|| wrong(&cell, "a boolean"))?)
            }
            (Builder::Boolean(b), Cell::Json(Value::Bool(v))) => b.append_value(*v),
            (Builder::Utf8(b), Cell::Text(t)) => b.append_value(t),
            (Builder::Utf8(b), Cell::Json(value)) => b.append_value(value.to_string()),
            (Builder::Timestamp(b), Cell::Text(t)) => b.append_value(
                parse_timestamp(t)
                    .ok_or_else(|| wrong(&cell, "a timestamp such as 2024-01-31T12:00:00Z"))?,
            ),
            (_, _) => {
                let what = format!("a {}", self.field.data_type());
                return Err(wrong(&cell, &what));
            }
        }
        Ok(())
    }

    /// The column of the cells appended so far; the builder starts a new one.
    pub fn finish(&mut self) -> ArrayRef {
        match &mut self.builder {
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Boolean(b) => Arc::new(b.finish()),
            Builder::Utf8(b) => Arc::new(b.finish()),
            Builder::Timestamp(b) => {
                let tz = match self.field.data_type() {
                    DataType::Timestamp(_, tz) => tz.clone(),
                    _ => None,
                };
                Arc::new(b.finish().with_timezone_opt(tz))
            }
        }
    }
}

/// Microseconds since the epoch of an RFC 3339 timestamp or a date-time in UTC, as Spark writes
/// them (`2024-01-31T12:00:00Z`, `2024-01-31 12:00:00.5`).
fn parse_timestamp(text: &str) -> Option<i64> {
    arrow_cast::parse::string_to_timestamp_nanos(text.trim())
        .ok()
        .map(|nanos| nanos.div_euclid(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }

    #[test]
    fn a_csv_line_splits_on_the_delimiter_with_quotes() {
        assert_eq!(
            split_csv(r#"1,"a, ""quoted"" b",,"""#, ','),
            Ok(vec![
                text("1"),
                text(r#"a, "quoted" b"#),
                Cell::Null,
                text("")
            ])
        );
        assert_eq!(split_csv("x;y", ';'), Ok(vec![text("x"), text("y")]));
        assert_eq!(split_csv("", ','), Ok(vec![Cell::Null]));
    }

    #[test]
    fn a_malformed_quote_is_explained() {
        assert_eq!(
            split_csv(r#"1,"open"#, ','),
            Err(
                "cell 2 opens a quote that the line does not close (a value cannot span lines)"
                    .to_string()
            )
        );
        assert_eq!(
            split_csv(r#""a"b,c"#, ','),
            Err(
                "cell 1 has `b` after its closing quote; quote the whole cell and double the \
                 quotes inside it"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_written_line_reads_back_as_the_same_cells() -> Result<(), String> {
        let cells = [Some("1"), None, Some(""), Some("a,b"), Some("say \"hi\"")];
        let line = join_csv(&cells, ',')?;
        assert_eq!(line, r#"1,,"","a,b","say ""hi""""#);
        let read = split_csv(&line, ',')?;
        let expected: Vec<Cell> = cells.iter().map(|c| c.map_or(Cell::Null, text)).collect();
        assert_eq!(read, expected);
        Ok(())
    }

    #[test]
    fn a_line_break_in_a_value_cannot_be_written_as_csv() {
        let error = join_csv(&[Some("two\nlines")], ',').unwrap_err();
        assert!(error.contains("format=jsonl"), "{error}");
    }

    #[test]
    fn types_widen_from_bigint_to_double_to_string() {
        let infer = |cells: &[Cell]| cells.iter().fold(None, widen);
        assert_eq!(infer(&[text("1"), Cell::Null]), Some(DataType::Int64));
        assert_eq!(infer(&[text("1"), text("2.5")]), Some(DataType::Float64));
        assert_eq!(
            infer(&[text("true"), text("FALSE")]),
            Some(DataType::Boolean)
        );
        assert_eq!(infer(&[text("1"), text("x")]), Some(DataType::Utf8));
        assert_eq!(infer(&[Cell::Null]), None);
        let json = |v: Value| Cell::Json(v);
        assert_eq!(
            infer(&[json(Value::from(1)), json(Value::from(0.5))]),
            Some(DataType::Float64)
        );
    }

    #[test]
    fn a_json_line_must_be_an_object() {
        assert_eq!(
            parse_json("[1, 2]"),
            Err("expected a JSON object {...}, found an array".to_string())
        );
        let error = parse_json("{\"a\": ").unwrap_err();
        assert!(error.starts_with("not valid JSON: EOF"), "{error}");
    }

    #[test]
    fn a_cell_of_the_wrong_type_names_the_column_and_the_fix() {
        let field = Arc::new(Field::new("age", DataType::Int64, true));
        let mut builder = ColumnBuilder::new(field).expect("a readable type");
        assert_eq!(
            builder.append(text("old")),
            Err(
                "column `age`: `old` is not a bigint; fix the line, or read the column as \
                 string with .schema(...)"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_null_in_a_non_nullable_column_is_refused() {
        let field = Arc::new(Field::new("id", DataType::Int64, false));
        let mut builder = ColumnBuilder::new(field).expect("a readable type");
        assert!(builder.append(Cell::Null).is_err());
    }

    #[test]
    fn timestamps_read_as_microseconds() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:01Z"), Some(1_000_000));
        assert_eq!(parse_timestamp("1970-01-01 00:00:00.5"), Some(500_000));
    }
}
