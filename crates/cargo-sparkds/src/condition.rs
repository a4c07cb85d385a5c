//! `--where`: a condition in Spark SQL's syntax, as a `WHERE` clause writes it, turned into the
//! filters that Spark would push to a reader (the predicates of `spark_datasource_filters.h`).
//!
//! The condition is parsed with `sqlparser`, split into its top-level conjuncts (`a AND b` is
//! two filters, and so is `x BETWEEN 1 AND 5`: `x >= 1` and `x <= 5`), and each conjunct becomes
//! a [`Filter`]. Literals take the type of the column they are compared with, from the source's
//! schema: `id > 10` is a `bigint` literal for a `bigint` column, `price < 12.5` a
//! `decimal(p,s)` of the column's precision and scale.
//!
//! The grammar, per conjunct: comparisons (`=`, `==`, `<>`, `!=`, `<`, `<=`, `>`, `>=`, `<=>`)
//! between a column and a literal (or two columns); `c [NOT] IN (v, ...)`; `c IS [NOT] NULL`;
//! `c [NOT] BETWEEN a AND b`; `c [NOT] LIKE 'abc%'` (STARTS_WITH), `'%abc'` (ENDS_WITH),
//! `'%abc%'` (CONTAINS), `'abc'` (=); `NOT`, `AND` and `OR` with parentheses; `TRUE`, `FALSE`
//! and a boolean column alone. A column is a name or a path of names (`a.b`), in backquotes
//! when it needs them. A literal is a number, a string `'...'`, `TRUE`/`FALSE`, `NULL`,
//! `X'0A1B'`, `DATE '2024-01-01'`, `TIMESTAMP '2024-01-01 12:00:00'`, or a cast of a string
//! (`CAST('NaN' AS DOUBLE)`, `double('Infinity')`) for what has no literal.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use sparkds::filters::{Column, Filter, Literal, Value};
use sparkds::{render, Error, Result};
use sqlparser::ast::{
    self, BinaryOperator, CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
    InTarget, UnaryOperator,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

/// The filters of `condition`, one per top-level conjunct, with literals typed by `schema`.
///
/// # Errors
///
/// A usage error that names the part of the condition that cannot be pushed, and the fix.
pub fn parse(condition: &str, schema: &Schema) -> Result<Vec<Filter>> {
    let expr = parse_expr(condition)?;
    let mut conjuncts = Vec::new();
    split(&expr, &mut conjuncts);
    let context = Context { schema };
    conjuncts
        .into_iter()
        .map(|part| context.predicate(&part))
        .collect()
}

fn parse_expr(condition: &str) -> Result<Expr> {
    let not_sql = |e: String| {
        Error::usage(format!(
            "--where `{condition}` is not a SQL condition: {e}; write it as a WHERE clause would, such as `id > 10 AND name LIKE 'a%'`"
        ))
    };
    if condition.trim().is_empty() {
        return Err(Error::usage(
            "--where is empty; give a condition, such as `id > 10`, or leave --where out",
        ));
    }
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .try_with_sql(condition)
        .map_err(|e| not_sql(e.to_string()))?;
    let expr = parser.parse_expr().map_err(|e| not_sql(e.to_string()))?;
    let next = parser.peek_token();
    if next.token != sqlparser::tokenizer::Token::EOF {
        return Err(not_sql(format!(
            "`{}` follows a whole condition{}",
            next.token, next.span.start
        )));
    }
    Ok(expr)
}

/// The top-level conjuncts of `expr`, in order: `AND`s and `BETWEEN`s split, parentheses
/// around them dropped.
fn split(expr: &Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            split(left, out);
            split(right, out);
        }
        Expr::Nested(inner) => split(inner, out),
        Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } => {
            out.push(Expr::BinaryOp {
                left: expr.clone(),
                op: BinaryOperator::GtEq,
                right: low.clone(),
            });
            out.push(Expr::BinaryOp {
                left: expr.clone(),
                op: BinaryOperator::LtEq,
                right: high.clone(),
            });
        }
        other => out.push(other.clone()),
    }
}

struct Context<'a> {
    schema: &'a Schema,
}

/// An operand before it is typed: a column with its type, or the text of a literal.
enum Operand {
    Column(Column, DataType),
    Literal(LiteralText),
}

/// A literal as written: what it must become for a column.
#[derive(Clone)]
enum LiteralText {
    Null,
    /// A number, a string, a date or a timestamp: cast to the column's type.
    Text(String),
    Boolean(bool),
    Hex(String),
}

impl Context<'_> {
    fn predicate(&self, expr: &Expr) -> Result<Filter> {
        let part = expr.to_string();
        self.predicate_in(expr, &part)
    }

    /// `expr` as a predicate; `part` is the conjunct it belongs to, for messages.
    fn predicate_in(&self, expr: &Expr, part: &str) -> Result<Filter> {
        match expr {
            Expr::Nested(inner) => self.predicate_in(inner, part),
            Expr::BinaryOp { left, op, right } => self.binary_op(left, op, right, part),
            Expr::UnaryOp {
                op: UnaryOperator::Not,
                expr,
            } => Ok(self.predicate_in(expr, part)?.negate()),
            Expr::IsNull(e) => Ok(Filter::IsNull(self.column_value(e, part, "IS NULL")?)),
            Expr::IsNotNull(e) => Ok(Filter::IsNotNull(self.column_value(
                e,
                part,
                "IS NOT NULL",
            )?)),
            Expr::In {
                expr,
                target: InTarget::List(list),
                negated,
                global: false,
            } => Ok(negated_if(*negated, self.in_list(expr, list, part)?)),
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => Ok(negated_if(*negated, self.between(expr, low, high, part)?)),
            Expr::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char: None,
            } => Ok(negated_if(*negated, self.like(expr, pattern, part)?)),
            Expr::Value(v) => match &v.value {
                ast::Value::Boolean(true) => Ok(Filter::AlwaysTrue),
                ast::Value::Boolean(false) => Ok(Filter::AlwaysFalse),
                _ => Err(unsupported(part, expr)),
            },
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => self.boolean_column(expr, part),
            other => Err(unsupported(part, other)),
        }
    }

    /// `left op right`: a conjunction, a disjunction or a comparison.
    fn binary_op(
        &self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
        part: &str,
    ) -> Result<Filter> {
        match op {
            BinaryOperator::And => Ok(self
                .predicate_in(left, part)?
                .and(self.predicate_in(right, part)?)),
            BinaryOperator::Or => Ok(self
                .predicate_in(left, part)?
                .or(self.predicate_in(right, part)?)),
            _ => self.comparison(left, op, right, part),
        }
    }

    /// `expr IN (list)`: a column and literals of its type.
    fn in_list(&self, expr: &Expr, list: &[Expr], part: &str) -> Result<Filter> {
        let (column, data_type) = self.column(expr, part, "IN")?;
        let values = list
            .iter()
            .map(|v| {
                let text = self.literal_text(v, part)?;
                Ok(Value::Literal(typed(&text, &column, &data_type, part)?))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Filter::In(Value::Column(column), values))
    }

    /// `expr BETWEEN low AND high`: `expr >= low AND expr <= high`.
    fn between(&self, expr: &Expr, low: &Expr, high: &Expr, part: &str) -> Result<Filter> {
        let ge = self.comparison(expr, &BinaryOperator::GtEq, low, part)?;
        let le = self.comparison(expr, &BinaryOperator::LtEq, high, part)?;
        Ok(ge.and(le))
    }

    /// A boolean column alone: `column = true`.
    fn boolean_column(&self, expr: &Expr, part: &str) -> Result<Filter> {
        let (column, data_type) = self.column(expr, part, "a condition")?;
        if data_type != DataType::Boolean {
            return Err(Error::usage(format!(
                "--where: in `{part}`: column `{column}` is a {}, not a boolean; compare it, such as `{column} = ...`",
                render::spark_type(&data_type)
            )));
        }
        Ok(Filter::Eq(Value::Column(column), true.into()))
    }

    fn comparison(
        &self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
        part: &str,
    ) -> Result<Filter> {
        let make: fn(Value, Value) -> Filter = match op {
            BinaryOperator::Eq => Filter::Eq,
            BinaryOperator::Spaceship => Filter::NullSafeEq,
            BinaryOperator::Lt => Filter::Lt,
            BinaryOperator::LtEq => Filter::Le,
            BinaryOperator::Gt => Filter::Gt,
            BinaryOperator::GtEq => Filter::Ge,
            BinaryOperator::NotEq => |a, b| Filter::Eq(a, b).negate(),
            other => {
                return Err(Error::usage(format!(
                    "--where: in `{part}`: the operator `{other}` cannot be pushed; use =, <>, <, <=, >, >=, <=>, IN, IS NULL, BETWEEN, LIKE, NOT, AND or OR"
                )))
            }
        };
        let (a, b) = (self.operand(left, part)?, self.operand(right, part)?);
        let (a, b) = match (a, b) {
            (Operand::Column(c, _), Operand::Column(d, _)) => {
                (Value::Column(c), Value::Column(d))
            }
            (Operand::Column(c, t), Operand::Literal(l)) => {
                let literal = typed(&l, &c, &t, part)?;
                (Value::Column(c), Value::Literal(literal))
            }
            (Operand::Literal(l), Operand::Column(c, t)) => {
                let literal = typed(&l, &c, &t, part)?;
                (Value::Literal(literal), Value::Column(c))
            }
            (Operand::Literal(_), Operand::Literal(_)) => {
                return Err(Error::usage(format!(
                    "--where: in `{part}`: both sides are literals, so there is no column to type them with; compare a column with a literal, such as `id > 10`"
                )))
            }
        };
        Ok(make(a, b))
    }

    fn like(&self, expr: &Expr, pattern: &Expr, part: &str) -> Result<Filter> {
        let column = self.column_value(expr, part, "LIKE")?;
        let LiteralText::Text(text) = self.literal_text(pattern, part)? else {
            return Err(Error::usage(format!(
                "--where: in `{part}`: a LIKE pattern is a string, such as 'abc%'"
            )));
        };
        let inner = |s: &str| !s.contains(['%', '_', '\\']);
        let (starts, rest) = match text.strip_prefix('%') {
            Some(rest) => (false, rest),
            None => (true, text.as_str()),
        };
        let (ends, middle) = match rest.strip_suffix('%') {
            Some(middle) => (false, middle),
            None => (true, rest),
        };
        if !inner(middle) {
            return Err(Error::usage(format!(
                "--where: in `{part}`: the pattern '{text}' cannot be pushed: only 'abc%' (starts with), '%abc' (ends with), '%abc%' (contains) and 'abc' are, with no other % or _"
            )));
        }
        let needle = Value::Literal(Literal::Utf8(Some(middle.to_string())));
        Ok(match (starts, ends) {
            (true, true) => Filter::Eq(column, needle),
            (true, false) => Filter::StartsWith(column, needle),
            (false, true) => Filter::EndsWith(column, needle),
            (false, false) => Filter::Contains(column, needle),
        })
    }

    fn column_value(&self, expr: &Expr, part: &str, what: &str) -> Result<Value> {
        Ok(Value::Column(self.column(expr, part, what)?.0))
    }

    fn column(&self, expr: &Expr, part: &str, what: &str) -> Result<(Column, DataType)> {
        match self.operand(expr, part)? {
            Operand::Column(c, t) => Ok((c, t)),
            Operand::Literal(_) => Err(Error::usage(format!(
                "--where: in `{part}`: `{expr}` is a literal, but {what} takes a column; name a column of the source ({})",
                self.names()
            ))),
        }
    }

    fn names(&self) -> String {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn operand(&self, expr: &Expr, part: &str) -> Result<Operand> {
        let path: Vec<String> = match expr {
            Expr::Nested(inner) => return self.operand(inner, part),
            Expr::Identifier(ident) => vec![ident.value.clone()],
            Expr::CompoundIdentifier(idents) => idents.iter().map(|i| i.value.clone()).collect(),
            _ => return Ok(Operand::Literal(self.literal_text(expr, part)?)),
        };
        let column = Column::nested(path.clone());
        let data_type = self.column_type(&path).ok_or_else(|| {
            Error::usage(format!(
                "--where: in `{part}`: there is no column `{column}`; the columns are {}",
                self.names()
            ))
        })?;
        Ok(Operand::Column(column, data_type))
    }

    /// The type of the field at `path`, through structs.
    fn column_type(&self, path: &[String]) -> Option<DataType> {
        let mut fields: Vec<Arc<Field>> = self.schema.fields().iter().cloned().collect();
        let mut found = None;
        for name in path {
            let field = fields.iter().find(|f| f.name() == name)?.clone();
            fields = match field.data_type() {
                DataType::Struct(children) => children.iter().cloned().collect(),
                _ => Vec::new(),
            };
            found = Some(field.data_type().clone());
        }
        found
    }

    fn literal_text(&self, expr: &Expr, part: &str) -> Result<LiteralText> {
        match expr {
            Expr::Nested(inner) => self.literal_text(inner, part),
            Expr::Value(v) => match &v.value {
                ast::Value::Null => Ok(LiteralText::Null),
                ast::Value::Boolean(b) => Ok(LiteralText::Boolean(*b)),
                ast::Value::Number(n, _) => Ok(LiteralText::Text(n.clone())),
                ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                    Ok(LiteralText::Text(s.clone()))
                }
                ast::Value::HexStringLiteral(h) => Ok(LiteralText::Hex(h.clone())),
                _ => Err(not_a_literal(part, expr)),
            },
            Expr::UnaryOp {
                op: op @ (UnaryOperator::Minus | UnaryOperator::Plus),
                expr: inner,
            } => match self.literal_text(inner, part)? {
                LiteralText::Text(t) if matches!(op, UnaryOperator::Minus) => {
                    Ok(LiteralText::Text(format!("-{t}")))
                }
                LiteralText::Text(t) => Ok(LiteralText::Text(t)),
                _ => Err(not_a_literal(part, expr)),
            },
            Expr::TypedString(ts) => match ts.value.value.clone().into_string() {
                Some(s) => Ok(LiteralText::Text(s)),
                None => Err(not_a_literal(part, expr)),
            },
            Expr::Cast {
                kind: CastKind::Cast | CastKind::DoubleColon,
                expr: inner,
                format: None,
                ..
            } => self.literal_text(inner, part),
            Expr::Function(f) => {
                // `double('NaN')`, `float('-Infinity')`, `date('2024-01-01')`: Spark's casts
                // written as functions.
                let name = f.name.to_string().to_lowercase();
                let casts = [
                    "double",
                    "float",
                    "decimal",
                    "date",
                    "timestamp",
                    "timestamp_ntz",
                    "bigint",
                    "int",
                    "smallint",
                    "tinyint",
                    "string",
                    "boolean",
                ];
                match &f.args {
                    FunctionArguments::List(list)
                        if casts.contains(&name.as_str()) && list.args.len() == 1 =>
                    {
                        match &list.args[0] {
                            FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) => {
                                self.literal_text(arg, part)
                            }
                            _ => Err(not_a_literal(part, expr)),
                        }
                    }
                    _ => Err(not_a_literal(part, expr)),
                }
            }
            _ => Err(not_a_literal(part, expr)),
        }
    }
}

/// `filter`, negated when the condition says `NOT`.
fn negated_if(negated: bool, filter: Filter) -> Filter {
    if negated {
        filter.negate()
    } else {
        filter
    }
}

fn unsupported(part: &str, expr: &Expr) -> Error {
    Error::usage(format!(
        "--where: in `{part}`: `{expr}` cannot be pushed as a filter; use comparisons of a column with a literal, IN, IS NULL, BETWEEN, LIKE 'abc%', NOT, AND and OR"
    ))
}

fn not_a_literal(part: &str, expr: &Expr) -> Error {
    Error::usage(format!(
        "--where: in `{part}`: `{expr}` is neither a column nor a literal; write a column, a number, a string, TRUE, FALSE, NULL, DATE '...', TIMESTAMP '...' or CAST('NaN' AS DOUBLE)"
    ))
}

/// The literal `text` as a value of `data_type`, the type of `column`.
fn typed(text: &LiteralText, column: &Column, data_type: &DataType, part: &str) -> Result<Literal> {
    let type_name = render::spark_type(data_type);
    let wrong = |why: String| {
        Error::usage(format!(
            "--where: in `{part}`: {why}; write a literal of the type of column `{column}`, {type_name}"
        ))
    };
    if let DataType::Struct(fields) = data_type {
        let first = fields.first().map_or("b".to_string(), |f| {
            Column::nested([column.path().to_vec(), vec![f.name().clone()]].concat()).to_string()
        });
        return Err(Error::usage(format!(
            "--where: in `{part}`: column `{column}` is a struct, which a filter cannot compare; compare one of its fields, such as `{first}`"
        )));
    }
    let comparable = |t: &DataType| literal_of(&arrow_array::new_null_array(t, 1), t).is_some();
    if !comparable(data_type) {
        return Err(Error::usage(format!(
            "--where: in `{part}`: column `{column}` is a {type_name}, which a filter cannot compare; compare a column of another type"
        )));
    }
    let array: ArrayRef = match text {
        LiteralText::Null => arrow_array::new_null_array(data_type, 1),
        LiteralText::Boolean(b) => {
            if *data_type != DataType::Boolean {
                return Err(wrong(format!(
                    "{} is a boolean",
                    if *b { "TRUE" } else { "FALSE" }
                )));
            }
            Arc::new(arrow_array::BooleanArray::from(vec![*b]))
        }
        LiteralText::Hex(hex) => {
            if *data_type != DataType::Binary {
                return Err(wrong(format!("X'{hex}' is a binary")));
            }
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| {
                    hex.get(i..i + 2)
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                })
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| wrong(format!("X'{hex}' is not an even number of hex digits")))?;
            Arc::new(arrow_array::BinaryArray::from_vec(vec![bytes.as_slice()]))
        }
        LiteralText::Text(t) => {
            if matches!(data_type, DataType::Binary) {
                Arc::new(arrow_array::BinaryArray::from_vec(vec![t.as_bytes()]))
            } else {
                let text: ArrayRef = Arc::new(StringArray::from(vec![float_word(t, data_type)]));
                let options = arrow_cast::CastOptions {
                    safe: false,
                    ..Default::default()
                };
                // A TIMESTAMP literal is read in UTC: parsed as a timestamp in no time zone
                // (an offset in the text is applied), whose microseconds are then UTC's.
                let parsed_as = match data_type {
                    DataType::Timestamp(unit, Some(_)) => DataType::Timestamp(*unit, None),
                    other => other.clone(),
                };
                // `literal_of` reads the microseconds, whatever the time zone of the array.
                arrow_cast::cast_with_options(&text, &parsed_as, &options)
                    .map_err(|e| wrong(format!("`{t}` is not a {type_name} ({e})")))?
            }
        }
    };
    literal_of(&array, data_type).ok_or_else(|| wrong(format!("`{column}` cannot be compared")))
}

/// Spark's spellings of the special floats, as arrow's parser reads them.
fn float_word(text: &str, data_type: &DataType) -> String {
    if !matches!(data_type, DataType::Float32 | DataType::Float64) {
        return text.to_string();
    }
    match text.to_ascii_lowercase().as_str() {
        "nan" => "NaN".into(),
        "infinity" | "+infinity" | "inf" | "+inf" => "inf".into(),
        "-infinity" | "-inf" => "-inf".into(),
        _ => text.to_string(),
    }
}

/// The one value of `array`, of `data_type`, as a literal of the encoding.
fn literal_of(array: &ArrayRef, data_type: &DataType) -> Option<Literal> {
    let valid = array.is_valid(0);
    macro_rules! prim {
        ($t:ty, $variant:ident) => {
            Literal::$variant(valid.then(|| array.as_primitive::<$t>().value(0)))
        };
    }
    Some(match data_type {
        DataType::Boolean => Literal::Boolean(valid.then(|| array.as_boolean().value(0))),
        DataType::Int8 => prim!(Int8Type, Int8),
        DataType::Int16 => prim!(Int16Type, Int16),
        DataType::Int32 => prim!(Int32Type, Int32),
        DataType::Int64 => prim!(Int64Type, Int64),
        DataType::Float32 => prim!(Float32Type, Float32),
        DataType::Float64 => prim!(Float64Type, Float64),
        DataType::Date32 => prim!(Date32Type, Date32),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => {
            prim!(TimestampMicrosecondType, Timestamp)
        }
        DataType::Timestamp(TimeUnit::Microsecond, None) => {
            prim!(TimestampMicrosecondType, TimestampNtz)
        }
        DataType::Decimal128(precision, scale) => Literal::Decimal128 {
            value: valid.then(|| array.as_primitive::<Decimal128Type>().value(0)),
            precision: *precision,
            scale: u8::try_from(*scale).ok()?,
        },
        DataType::Utf8 => {
            Literal::Utf8(valid.then(|| array.as_string::<i32>().value(0).to_string()))
        }
        DataType::Binary => {
            Literal::Binary(valid.then(|| array.as_binary::<i32>().value(0).to_vec()))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use sparkds::filters::sql;

    use super::*;

    fn schema() -> Schema {
        let flat = sparkds::ddl::parse(
            "id bigint not null, small tinyint, name string, price decimal(10,2), x double, \
             f float, day date, ts timestamp, ntz timestamp_ntz, ok boolean, raw binary",
        )
        .expect("parses");
        let nested = Field::new(
            "a",
            DataType::Struct(
                vec![
                    Field::new("b", DataType::Utf8, true),
                    Field::new("c d", DataType::Int32, true),
                ]
                .into(),
            ),
            true,
        );
        let mut fields: Vec<Arc<Field>> = flat.fields().iter().cloned().collect();
        fields.push(Arc::new(nested));
        Schema::new(fields)
    }

    /// The conjuncts as SQL, or the error.
    fn conjuncts(condition: &str) -> std::result::Result<Vec<String>, String> {
        parse(condition, &schema())
            .map(|filters| filters.iter().map(sql).collect())
            .map_err(|e| e.to_string())
    }

    fn ok(condition: &str) -> Vec<String> {
        conjuncts(condition).unwrap_or_else(|e| panic!("{condition}: {e}"))
    }

    #[test]
    fn conjuncts_split_at_the_top_level_ands_and_betweens() {
        assert_eq!(
            ok("id > 10 AND (name IS NOT NULL AND small BETWEEN -3 AND 5)"),
            ["id > 10", "name IS NOT NULL", "small >= -3", "small <= 5"]
        );
        assert_eq!(
            ok("id = 1 OR NOT (id <> 2)"),
            ["(id = 1) OR (NOT (NOT (id = 2)))"]
        );
        assert_eq!(
            ok("id NOT BETWEEN 1 AND 2"),
            ["NOT ((id >= 1) AND (id <= 2))"]
        );
        assert_eq!(ok("TRUE AND ok"), ["TRUE", "ok = TRUE"]);
    }

    #[test]
    fn literals_take_the_type_of_their_column() {
        assert_eq!(
            ok("price >= 12.5 AND 3 < id AND x IN (1, double('NaN'), CAST('-Infinity' AS DOUBLE), NULL) AND f = 0.1"),
            [
                "price >= 12.50",
                "3 < id",
                "x IN (1.0, CAST('NaN' AS DOUBLE), CAST('-Infinity' AS DOUBLE), NULL)",
                "f = 0.1",
            ]
        );
        assert_eq!(
            ok("day = DATE '2024-01-01' AND ts < TIMESTAMP '2024-01-01 12:00:00.5' AND ntz <=> NULL"),
            [
                "day = DATE '2024-01-01'",
                "ts < TIMESTAMP '2024-01-01 12:00:00.500'",
                "ntz <=> NULL",
            ]
        );
        assert_eq!(
            ok("raw = X'0A1b' AND a.b = 'it''s' AND a.`c d` IN (1, 2) AND ok = FALSE"),
            [
                "raw = X'0A1B'",
                "a.b = 'it''s'",
                "a.`c d` IN (1, 2)",
                "ok = FALSE",
            ]
        );
    }

    #[test]
    fn like_patterns_become_string_predicates() {
        assert_eq!(
            ok("name LIKE 'ab%' AND name LIKE '%yz' AND name NOT LIKE '%mid%' AND name LIKE 'x'"),
            [
                "name LIKE 'ab%'",
                "name LIKE '%yz'",
                "NOT (name LIKE '%mid%')",
                "name = 'x'",
            ]
        );
    }

    #[test]
    fn what_cannot_be_pushed_is_named_with_the_fix() {
        let cases = [
            (
                "id >",
                "--where `id >` is not a SQL condition: sql parser error: Expected: an expression, found: EOF; write it as a WHERE clause would, such as `id > 10 AND name LIKE 'a%'`",
            ),
            (
                "id > 1 id",
                "--where `id > 1 id` is not a SQL condition: `id` follows a whole condition at Line: 1, Column: 8; write it as a WHERE clause would, such as `id > 10 AND name LIKE 'a%'`",
            ),
            ("  ", "--where is empty; give a condition, such as `id > 10`, or leave --where out"),
            (
                "id > 1 AND nope = 2",
                "--where: in `nope = 2`: there is no column `nope`; the columns are id, small, name, price, x, f, day, ts, ntz, ok, raw, a",
            ),
            (
                "id > 'ten'",
                "--where: in `id > 'ten'`: `ten` is not a long (Cast error: Cannot cast string 'ten' to value of Int64 type); write a literal of the type of column `id`, long",
            ),
            (
                "small = 300",
                "--where: in `small = 300`: `300` is not a byte (Cast error: Cannot cast string '300' to value of Int8 type); write a literal of the type of column `small`, byte",
            ),
            (
                "1 = 1",
                "--where: in `1 = 1`: both sides are literals, so there is no column to type them with; compare a column with a literal, such as `id > 10`",
            ),
            (
                "name LIKE 'a%b'",
                "--where: in `name LIKE 'a%b'`: the pattern 'a%b' cannot be pushed: only 'abc%' (starts with), '%abc' (ends with), '%abc%' (contains) and 'abc' are, with no other % or _",
            ),
            (
                "id + 1 > 2",
                "--where: in `id + 1 > 2`: `id + 1` is neither a column nor a literal; write a column, a number, a string, TRUE, FALSE, NULL, DATE '...', TIMESTAMP '...' or CAST('NaN' AS DOUBLE)",
            ),
            (
                "id % 2 = 0 OR upper(name) = 'A'",
                "--where: in `id % 2 = 0 OR upper(name) = 'A'`: `id % 2` is neither a column nor a literal; write a column, a number, a string, TRUE, FALSE, NULL, DATE '...', TIMESTAMP '...' or CAST('NaN' AS DOUBLE)",
            ),
            (
                "name",
                "--where: in `name`: column `name` is a string, not a boolean; compare it, such as `name = ...`",
            ),
            (
                "a = 1",
                "--where: in `a = 1`: column `a` is a struct, which a filter cannot compare; compare one of its fields, such as `a.b`",
            ),
            (
                "id IN (SELECT 1)",
                "--where: in `id IN (SELECT 1)`: `id IN (SELECT 1)` cannot be pushed as a filter; use comparisons of a column with a literal, IN, IS NULL, BETWEEN, LIKE 'abc%', NOT, AND and OR",
            ),
        ];
        for (condition, message) in cases {
            assert_eq!(
                conjuncts(condition),
                Err(message.to_string()),
                "{condition}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let condition = format!("{}id = 1{}", "(".repeat(5000), ")".repeat(5000));
        let error = conjuncts(&condition).err().unwrap_or_default();
        assert!(error.starts_with("--where `((((("), "{error}");
        assert!(error.contains("recursion limit exceeded"), "{error}");
    }
}
