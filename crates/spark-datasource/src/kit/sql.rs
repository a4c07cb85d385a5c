//! Pushed filters as a SQL `WHERE`: placeholders and bound values, never literals in the text,
//! for PostgreSQL and SQLite.
//!
//! A filter is accepted only when all of it renders, and each comparison is one that the
//! connector's callback says the backend evaluates exactly as Spark does, for that column and
//! that literal's type: the database knows its types, the kit does not. What the dialects take
//! care of:
//!
//! - three-valued logic: `=`, `<`, `IN`, `AND`, `OR` and `NOT` are NULL where Spark's are, so a
//!   filter under `NOT` keeps the rows that Spark keeps; `<=>` is `IS NOT DISTINCT FROM`
//!   (PostgreSQL) or `IS` (SQLite); an empty `IN` is FALSE, as in Spark;
//! - collations: text compares byte by byte in Spark, so a comparison with a string is written
//!   `COLLATE "C"` (PostgreSQL) or `COLLATE BINARY` (SQLite), whatever the column declares;
//! - `startsWith`, `endsWith`, `contains`: `LIKE` with `!`, `%` and `_` escaped by `!`
//!   (PostgreSQL: no backslash in the text, which `standard_conforming_strings = off` would read
//!   as an escape), `instr` and `substr`, which do not fold case as SQLite's `LIKE` does;
//! - NaN: PostgreSQL orders and compares NaN as Spark does; SQLite stores no NaN (it becomes
//!   NULL), so a NaN literal is refused there;
//! - booleans and constants: `TRUE`/`FALSE`, or `1`/`0` in SQLite.
//!
//! A refused filter is answered `false` (0), so that Spark evaluates it. A backend that binds a
//! bounded number of values in a statement accepts with [`accept_at_most`]; one whose statement
//! takes no parameters (PostgreSQL's `COPY`) binds them beforehand and writes placeholders that
//! read them back ([`Query::with_placeholders`]).
//!
//! ```
//! use spark_datasource::filters::{Column, Filter, Literal, Value};
//! use spark_datasource::kit::sql::{accept, Dialect, Op, Query};
//!
//! let name = || Value::Column(Column::new("name"));
//! let filters = vec![
//!     Filter::Not(Box::new(Filter::StartsWith(name(), Value::Literal(Literal::Utf8(Some("a%".into())))))),
//!     Filter::Gt(Value::Column(Column::new("score")), Value::Literal(Literal::Float64(Some(f64::NAN)))),
//! ];
//! // The backend evaluates these columns as Spark does, for these literal types.
//! let exact = |t: &spark_datasource::kit::sql::Term| match (t.column, t.literal) {
//!     ("name", None | Some(Literal::Utf8(_))) => true,
//!     ("score", None | Some(Literal::Float64(_))) => true,
//!     _ => false,
//! };
//! let accepted = accept(&filters, Dialect::Sqlite, &exact);
//! // SQLite has no NaN: Spark evaluates the second filter.
//! assert_eq!(accepted, vec![true, false]);
//!
//! let mut query = Query::new(Dialect::Sqlite);
//! query.push_sql("SELECT \"name\" FROM \"t\"");
//! query.and_filters(&filters, &accepted, &exact);
//! assert_eq!(
//!     query.sql,
//!     "SELECT \"name\" FROM \"t\" WHERE (NOT (instr(\"name\", ?1) = 1))"
//! );
//! assert_eq!(query.params, vec![Literal::Utf8(Some("a%".into()))]);
//! ```

use arrow_schema::{DataType, Field, Fields};
use serde::{Deserialize, Serialize};

use super::partitions::RangePartition;
use crate::filters::{Filter, Literal, Value};
use crate::{Error, Result};

/// The SQL of a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dialect {
    /// PostgreSQL: placeholders `$1`, `$2`...
    PostgreSql,
    /// SQLite: placeholders `?1`, `?2`...
    Sqlite,
}

impl Dialect {
    /// `name` as an identifier, in double quotes (doubled inside).
    pub fn ident(self, name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }

    /// `names` as a list of identifiers, `"a", "b"`: the columns of a `SELECT` or an `INSERT`.
    pub fn idents<S: AsRef<str>>(self, names: &[S]) -> String {
        let idents: Vec<String> = names.iter().map(|n| self.ident(n.as_ref())).collect();
        idents.join(", ")
    }

    /// `INSERT INTO <table> (<columns>) VALUES (<a placeholder per column>)`: the statement
    /// that writes one row, its values bound in the order of `columns`.
    pub fn insert<S: AsRef<str>>(self, table: &str, columns: &[S]) -> String {
        let placeholders: Vec<String> = (1..=columns.len()).map(|i| self.placeholder(i)).collect();
        format!(
            "INSERT INTO {} ({}) VALUES ({})",
            self.ident(table),
            self.idents(columns),
            placeholders.join(", ")
        )
    }

    /// `CREATE TABLE IF NOT EXISTS <table> (<column> <type>, ...)`, each column's type as
    /// `declared` names it (such as [`sqlite_column_type`]): the table that a write creates
    /// when it is missing.
    ///
    /// # Errors
    ///
    /// The first error of `declared`.
    pub fn create_table(
        self,
        table: &str,
        fields: &Fields,
        declared: impl Fn(&Field) -> Result<&'static str>,
    ) -> Result<String> {
        let columns = fields
            .iter()
            .map(|f| Ok(format!("{} {}", self.ident(f.name()), declared(f)?)));
        let columns = columns.collect::<Result<Vec<_>>>()?.join(", ");
        Ok(format!(
            "CREATE TABLE IF NOT EXISTS {} ({columns})",
            self.ident(table)
        ))
    }

    fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::PostgreSql => format!("${n}"),
            Dialect::Sqlite => format!("?{n}"),
        }
    }

    fn boolean(self, value: bool) -> &'static str {
        match (self, value) {
            (Dialect::PostgreSql, true) => "TRUE",
            (Dialect::PostgreSql, false) => "FALSE",
            (Dialect::Sqlite, true) => "1",
            (Dialect::Sqlite, false) => "0",
        }
    }

    /// The collation that compares text byte by byte, as Spark does.
    fn binary_collation(self) -> &'static str {
        match self {
            Dialect::PostgreSql => "COLLATE \"C\"",
            Dialect::Sqlite => "COLLATE BINARY",
        }
    }
}

/// What a comparison asks of a column: the callback of [`accept`] says whether the backend
/// evaluates it exactly as Spark does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<=>`
    NullSafeEq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `IN` (asked once for each value)
    In,
    /// `IS NULL`
    IsNull,
    /// `IS NOT NULL`
    IsNotNull,
    /// `startsWith`
    StartsWith,
    /// `endsWith`
    EndsWith,
    /// `contains`
    Contains,
}

/// One comparison of a filter: the column (top-level), the operator with the column on the
/// left, and the literal (none for `IS NULL`, `IS NOT NULL`).
#[derive(Clone, Copy, Debug)]
pub struct Term<'a> {
    /// The column's name.
    pub column: &'a str,
    /// The operator, the column on its left.
    pub op: Op,
    /// The literal, with its Spark type.
    pub literal: Option<&'a Literal>,
}

/// For each filter, whether it renders for `dialect` with every comparison `exact`: the answer
/// of `push_filters`.
pub fn accept(filters: &[Filter], dialect: Dialect, exact: &dyn Fn(&Term) -> bool) -> Vec<bool> {
    accept_at_most(filters, dialect, exact, usize::MAX)
}

/// As [`accept`], for a backend that binds at most `params` values in a statement: the filters
/// are taken in order, and one that would bind past the budget is refused (Spark evaluates
/// it), so that a long `IN` list cannot fail the read.
pub fn accept_at_most(
    filters: &[Filter],
    dialect: Dialect,
    exact: &dyn Fn(&Term) -> bool,
    params: usize,
) -> Vec<bool> {
    let mut left = params;
    filters
        .iter()
        .map(|f| {
            let mut scratch = Query::new(dialect);
            let fits = scratch.render(f, exact).is_some() && scratch.params.len() <= left;
            if fits {
                left -= scratch.params.len();
            }
            fits
        })
        .collect()
}

/// A statement being written, with the values that its placeholders bind, in order (`?n` and
/// `$n` count from 1).
#[derive(Clone, Debug)]
pub struct Query {
    /// The backend.
    pub dialect: Dialect,
    /// The text so far.
    pub sql: String,
    /// The values of the placeholders: bind them with the backend's driver.
    pub params: Vec<Literal>,
    /// Whether `WHERE` has been written.
    has_where: bool,
    /// How the connector writes the `n`th placeholder, when not as the dialect does.
    placeholder: Option<fn(usize, &Literal) -> String>,
}

impl Query {
    /// An empty statement.
    pub fn new(dialect: Dialect) -> Query {
        Query {
            dialect,
            sql: String::new(),
            params: Vec::new(),
            has_where: false,
            placeholder: None,
        }
    }

    /// Placeholders written by `placeholder` from their number (from 1) and value, for a
    /// statement that takes no parameters: PostgreSQL's `COPY (SELECT ...) TO STDOUT` is
    /// planned without a parameter list, so a connector binds the values beforehand (to
    /// session settings, say) and the placeholder reads the `n`th back. The values are still
    /// in [`Query::params`], in order.
    pub fn with_placeholders(mut self, placeholder: fn(usize, &Literal) -> String) -> Query {
        self.placeholder = Some(placeholder);
        self
    }

    /// `SELECT <columns> FROM <from>`, the columns quoted; a constant when there is none, so
    /// that `count(*)`, which reads no column, still gets one row per row.
    pub fn select<S: AsRef<str>>(dialect: Dialect, columns: &[S], from: &str) -> Query {
        let list = match columns.is_empty() {
            true => "1".to_string(),
            false => {
                let quoted: Vec<String> =
                    columns.iter().map(|c| dialect.ident(c.as_ref())).collect();
                quoted.join(", ")
            }
        };
        let mut query = Query::new(dialect);
        query.push_sql(&format!("SELECT {list} FROM {from}"));
        query
    }

    /// Appends ` LIMIT <n>`, bound, when there is a limit.
    pub fn limit(&mut self, limit: Option<u64>) {
        if let Some(limit) = limit {
            let n = self.bind(Literal::Int64(Some(
                i64::try_from(limit).unwrap_or(i64::MAX),
            )));
            self.push_sql(&format!(" LIMIT {n}"));
        }
    }

    /// Appends text (the connector's own: never a value).
    pub fn push_sql(&mut self, sql: &str) {
        self.sql.push_str(sql);
    }

    /// A placeholder that binds `value`.
    pub fn bind(&mut self, value: Literal) -> String {
        let n = self.params.len() + 1;
        let placeholder = match self.placeholder {
            Some(write) => write(n, &value),
            None => self.dialect.placeholder(n),
        };
        self.params.push(value);
        placeholder
    }

    /// Appends `condition` to the `WHERE` clause, starting it if needed.
    pub fn and_where(&mut self, condition: &str) {
        self.sql
            .push_str(if self.has_where { " AND " } else { " WHERE " });
        self.has_where = true;
        self.sql.push_str(condition);
    }

    /// Appends the filters that `accepted` marks, rendered as [`accept`] accepted them (with the
    /// same callback).
    pub fn and_filters(
        &mut self,
        filters: &[Filter],
        accepted: &[bool],
        exact: &dyn Fn(&Term) -> bool,
    ) {
        for (filter, _) in filters.iter().zip(accepted).filter(|(_, a)| **a) {
            if let Some(sql) = self.render(filter, exact) {
                self.and_where(&format!("({sql})"));
            }
        }
    }

    /// Appends the rows of one range partition of `column`: the values are bound as `literal`
    /// makes them (`Literal::Int64`, `Literal::Date32`, `Literal::Timestamp`...).
    pub fn and_range(
        &mut self,
        column: &str,
        partition: &RangePartition,
        literal: impl Fn(i64) -> Literal,
    ) {
        let c = self.dialect.ident(column);
        let mut parts = Vec::new();
        if let Some(lower) = partition.lower {
            parts.push(format!("{c} >= {}", self.bind(literal(lower))));
        }
        if let Some(upper) = partition.upper {
            parts.push(format!("{c} < {}", self.bind(literal(upper))));
        }
        let range = match parts.is_empty() {
            true => self.dialect.boolean(true).to_string(),
            false => parts.join(" AND "),
        };
        let condition = match partition.nulls && partition.upper.is_some() {
            true => format!("({range} OR {c} IS NULL)"),
            false if partition.nulls || parts.is_empty() => return,
            false => format!("({range})"),
        };
        self.and_where(&condition);
    }

    /// The SQL of `filter`, binding its literals, or `None` (nothing bound) when some part does
    /// not render exactly.
    fn render(&mut self, filter: &Filter, exact: &dyn Fn(&Term) -> bool) -> Option<String> {
        let bound = self.params.len();
        let sql = self.render_inner(filter, exact);
        if sql.is_none() {
            self.params.truncate(bound);
        }
        sql
    }

    fn render_inner(&mut self, filter: &Filter, exact: &dyn Fn(&Term) -> bool) -> Option<String> {
        let d = self.dialect;
        Some(match filter {
            Filter::Eq(a, b) => self.compare(Op::Eq, a, b, exact)?,
            Filter::NullSafeEq(a, b) => self.compare(Op::NullSafeEq, a, b, exact)?,
            Filter::Lt(a, b) => self.compare(Op::Lt, a, b, exact)?,
            Filter::Le(a, b) => self.compare(Op::Le, a, b, exact)?,
            Filter::Gt(a, b) => self.compare(Op::Gt, a, b, exact)?,
            Filter::Ge(a, b) => self.compare(Op::Ge, a, b, exact)?,
            Filter::In(a, values) => {
                let column = column(a)?;
                if values.is_empty() {
                    return Some(d.boolean(false).to_string());
                }
                let mut placeholders = Vec::with_capacity(values.len());
                let mut text = false;
                for value in values {
                    let literal = literal(value)?;
                    self.check(column, Op::In, Some(literal), exact)?;
                    text |= matches!(literal, Literal::Utf8(_));
                    placeholders.push(self.bind(literal.clone()));
                }
                let collate = self.collation(text);
                format!(
                    "{}{collate} IN ({})",
                    d.ident(column),
                    placeholders.join(", ")
                )
            }
            Filter::IsNull(a) => {
                let column = column(a)?;
                self.check(column, Op::IsNull, None, exact)?;
                format!("{} IS NULL", d.ident(column))
            }
            Filter::IsNotNull(a) => {
                let column = column(a)?;
                self.check(column, Op::IsNotNull, None, exact)?;
                format!("{} IS NOT NULL", d.ident(column))
            }
            Filter::And(p, q) => {
                let (p, q) = (self.render_inner(p, exact)?, self.render_inner(q, exact)?);
                format!("({p} AND {q})")
            }
            Filter::Or(p, q) => {
                let (p, q) = (self.render_inner(p, exact)?, self.render_inner(q, exact)?);
                format!("({p} OR {q})")
            }
            Filter::Not(p) => format!("NOT ({})", self.render_inner(p, exact)?),
            Filter::StartsWith(a, b) => self.pattern(Op::StartsWith, a, b, exact)?,
            Filter::EndsWith(a, b) => self.pattern(Op::EndsWith, a, b, exact)?,
            Filter::Contains(a, b) => self.pattern(Op::Contains, a, b, exact)?,
            Filter::AlwaysTrue => d.boolean(true).to_string(),
            Filter::AlwaysFalse => d.boolean(false).to_string(),
            Filter::Unsupported(_) => return None,
        })
    }

    /// Whether the backend takes `literal` as it is, then the connector's callback.
    fn check(
        &self,
        column: &str,
        op: Op,
        literal: Option<&Literal>,
        exact: &dyn Fn(&Term) -> bool,
    ) -> Option<()> {
        let nan = match literal {
            Some(Literal::Float32(Some(v))) => v.is_nan(),
            Some(Literal::Float64(Some(v))) => v.is_nan(),
            _ => false,
        };
        if nan && self.dialect == Dialect::Sqlite {
            return None;
        }
        exact(&Term {
            column,
            op,
            literal,
        })
        .then_some(())
    }

    fn collation(&self, text: bool) -> String {
        match text {
            true => format!(" {}", self.dialect.binary_collation()),
            false => String::new(),
        }
    }

    /// A comparison of a column with a literal, either side.
    fn compare(
        &mut self,
        op: Op,
        a: &Value,
        b: &Value,
        exact: &dyn Fn(&Term) -> bool,
    ) -> Option<String> {
        let (column, literal, op) = match (a, b) {
            (Value::Column(_), Value::Literal(l)) => (column(a)?, l, op),
            (Value::Literal(l), Value::Column(_)) => (column(b)?, l, flip(op)),
            _ => return None,
        };
        self.check(column, op, Some(literal), exact)?;
        let operator = match (op, self.dialect) {
            (Op::Eq, _) => "=",
            (Op::NullSafeEq, Dialect::PostgreSql) => "IS NOT DISTINCT FROM",
            (Op::NullSafeEq, Dialect::Sqlite) => "IS",
            (Op::Lt, _) => "<",
            (Op::Le, _) => "<=",
            (Op::Gt, _) => ">",
            (Op::Ge, _) => ">=",
            _ => return None,
        };
        let collate = self.collation(matches!(literal, Literal::Utf8(_)));
        let placeholder = self.bind(literal.clone());
        Some(format!(
            "{}{collate} {operator} {placeholder}",
            self.dialect.ident(column)
        ))
    }

    /// `startsWith`, `endsWith` or `contains` of a string column and a string literal.
    fn pattern(
        &mut self,
        op: Op,
        a: &Value,
        b: &Value,
        exact: &dyn Fn(&Term) -> bool,
    ) -> Option<String> {
        let column = column(a)?;
        let literal = literal(b)?;
        let Literal::Utf8(Some(text)) = literal else {
            return None;
        };
        self.check(column, op, Some(literal), exact)?;
        let c = self.dialect.ident(column);
        Some(match self.dialect {
            Dialect::PostgreSql => {
                // The escape is `!`, not `\`: `ESCAPE '\'` is a backslash only under
                // `standard_conforming_strings = on`; with it off (a server's or a database's
                // setting), `'\'` is an escaped quote that opens a string running into the rest
                // of the statement. `'!'` reads the same under either setting.
                let escaped = text
                    .replace('!', "!!")
                    .replace('%', "!%")
                    .replace('_', "!_");
                let pattern = match op {
                    Op::StartsWith => format!("{escaped}%"),
                    Op::EndsWith => format!("%{escaped}"),
                    _ => format!("%{escaped}%"),
                };
                let p = self.bind(Literal::Utf8(Some(pattern)));
                format!("{c} COLLATE \"C\" LIKE {p} ESCAPE '!'")
            }
            // instr and substr compare code points (bytes of a BLOB) and never fold case.
            Dialect::Sqlite if text.is_empty() && op == Op::EndsWith => {
                format!("({c} IS NOT NULL OR NULL)")
            }
            Dialect::Sqlite => {
                let p = self.bind(literal.clone());
                match op {
                    Op::StartsWith => format!("instr({c}, {p}) = 1"),
                    Op::EndsWith => format!("substr({c}, -length({p})) = {p}"),
                    _ => format!("instr({c}, {p}) > 0"),
                }
            }
        })
    }
}

/// The name of a top-level column.
fn column(value: &Value) -> Option<&str> {
    match value {
        Value::Column(c) => c.name(),
        Value::Literal(_) => None,
    }
}

fn literal(value: &Value) -> Option<&Literal> {
    match value {
        Value::Literal(l) => Some(l),
        Value::Column(_) => None,
    }
}

/// The operator with its operands swapped: `1 < a` is `a > 1`.
fn flip(op: Op) -> Op {
    match op {
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        other => other,
    }
}

/// The Spark type of a column that SQLite declares as `declared`, by SQLite's rules of type
/// affinity, in their order: `INT` → `bigint`; `CHAR`, `CLOB`, `TEXT` → `string`; `BLOB` or none
/// → `binary`; anything else (`REAL`, `FLOAT`, `NUMERIC`, `DECIMAL`...) → `double`.
pub fn sqlite_affinity(declared: &str) -> DataType {
    let upper = declared.to_ascii_uppercase();
    let has = |part: &str| upper.contains(part);
    if has("INT") {
        DataType::Int64
    } else if has("CHAR") || has("CLOB") || has("TEXT") {
        DataType::Utf8
    } else if has("BLOB") || upper.trim().is_empty() {
        DataType::Binary
    } else {
        DataType::Float64
    }
}

/// The declared type of a new SQLite column for `field`, for the types that
/// [`sqlite_affinity`] gives back as they were.
///
/// # Errors
///
/// Another type, with the column and the fix.
pub fn sqlite_column_type(field: &Field) -> Result<&'static str> {
    Ok(match field.data_type() {
        DataType::Int64 => "INTEGER",
        DataType::Float64 => "REAL",
        DataType::Utf8 => "TEXT",
        DataType::Binary => "BLOB",
        other => {
            return Err(Error::msg(format!(
                "column `{}` is {}, which a SQLite table does not hold as it is: cast it to \
                 bigint, double, string or binary",
                field.name(),
                super::schema::type_name(other)
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn sqlite_types_follow_the_rules_of_affinity_and_come_back_as_they_were() {
        use super::{sqlite_affinity, sqlite_column_type};
        use arrow_schema::{DataType, Field};
        let types = [
            "BIGINT",
            "varchar(10)",
            "CLOB",
            "",
            "blob",
            "DOUBLE",
            "NUMERIC(5,2)",
        ];
        let got: Vec<DataType> = types.iter().map(|t| sqlite_affinity(t)).collect();
        use DataType::{Binary, Float64, Int64, Utf8};
        assert_eq!(got, [Int64, Utf8, Utf8, Binary, Binary, Float64, Float64]);
        for t in [Int64, Float64, Utf8, Binary] {
            let declared = sqlite_column_type(&Field::new("c", t.clone(), true));
            assert_eq!(declared.map(sqlite_affinity).ok(), Some(t));
        }
        assert_eq!(
            super::Dialect::PostgreSql.insert("t", &["a", "b\"c"]),
            "INSERT INTO \"t\" (\"a\", \"b\"\"c\") VALUES ($1, $2)"
        );
        let fields = arrow_schema::Fields::from(vec![Field::new("id", Int64, false)]);
        let create = super::Dialect::Sqlite.create_table("t", &fields, sqlite_column_type);
        assert_eq!(
            create.ok().as_deref(),
            Some("CREATE TABLE IF NOT EXISTS \"t\" (\"id\" INTEGER)")
        );
        let date = sqlite_column_type(&Field::new("day", DataType::Date32, true));
        assert!(date
            .unwrap_err()
            .to_string()
            .starts_with("column `day` is date,"));
    }

    use super::*;
    use crate::filters::Column;

    fn col(name: &str) -> Value {
        Value::Column(Column::new(name))
    }

    fn int(v: i64) -> Value {
        Value::Literal(Literal::Int64(Some(v)))
    }

    fn text(v: &str) -> Value {
        Value::Literal(Literal::Utf8(Some(v.into())))
    }

    fn everything(_: &Term) -> bool {
        true
    }

    fn render(dialect: Dialect, filters: &[Filter]) -> (Vec<bool>, String, Vec<Literal>) {
        let accepted = accept(filters, dialect, &everything);
        let mut query = Query::new(dialect);
        query.and_filters(filters, &accepted, &everything);
        (accepted, query.sql, query.params)
    }

    #[test]
    fn values_are_bound_never_written() {
        let quote = "x'); DROP TABLE t; --";
        let (accepted, sql, params) = render(
            Dialect::PostgreSql,
            &[
                Filter::Eq(col("name"), text(quote)),
                Filter::Lt(int(3), col("id")),
            ],
        );
        assert_eq!(accepted, vec![true, true]);
        assert_eq!(
            sql,
            " WHERE (\"name\" COLLATE \"C\" = $1) AND (\"id\" > $2)"
        );
        assert_eq!(
            params,
            vec![Literal::Utf8(Some(quote.into())), Literal::Int64(Some(3))]
        );
    }

    #[test]
    fn each_dialect_writes_its_own_sql() {
        let filters = [
            Filter::NullSafeEq(col("a"), int(1)),
            Filter::In(col("a"), vec![]),
            Filter::Or(
                Box::new(Filter::IsNull(col("b"))),
                Box::new(Filter::Contains(col("b"), text("50%_off!\\"))),
            ),
            Filter::EndsWith(col("b"), text("")),
            Filter::AlwaysTrue,
        ];
        let (_, sql, params) = render(Dialect::PostgreSql, &filters);
        assert_eq!(
            sql,
            " WHERE (\"a\" IS NOT DISTINCT FROM $1) AND (FALSE) AND ((\"b\" IS NULL OR \"b\" \
             COLLATE \"C\" LIKE $2 ESCAPE '!')) AND (\"b\" COLLATE \"C\" LIKE $3 ESCAPE '!') \
             AND (TRUE)"
        );
        // A backslash is an ordinary character of the pattern; `!` escapes, itself included.
        assert_eq!(params[1], Literal::Utf8(Some("%50!%!_off!!\\%".into())));
        // Nothing that `standard_conforming_strings` changes: no backslash in the text.
        assert!(!sql.contains('\\'), "{sql}");
        let (_, sql, _) = render(Dialect::Sqlite, &filters);
        assert_eq!(
            sql,
            " WHERE (\"a\" IS ?1) AND (0) AND ((\"b\" IS NULL OR instr(\"b\", ?2) > 0)) AND \
             ((\"b\" IS NOT NULL OR NULL)) AND (1)"
        );
    }

    #[test]
    fn a_filter_is_accepted_only_when_all_of_it_is_exact() {
        let exact = |t: &Term| t.column == "id";
        let filters = [
            Filter::And(
                Box::new(Filter::Gt(col("id"), int(1))),
                Box::new(Filter::Eq(col("name"), text("a"))),
            ),
            Filter::Not(Box::new(Filter::Gt(col("id"), int(1)))),
            Filter::Eq(col("id"), col("other")),
            Filter::Eq(Value::Column(Column::nested(["s", "f"])), int(1)),
            Filter::Unsupported(vec![99]),
        ];
        let accepted = accept(&filters, Dialect::Sqlite, &exact);
        assert_eq!(accepted, vec![false, true, false, false, false]);
        let mut query = Query::new(Dialect::Sqlite);
        query.and_filters(&filters, &accepted, &exact);
        // The refused first filter bound nothing: the second binds ?1.
        assert_eq!(query.sql, " WHERE (NOT (\"id\" > ?1))");
        assert_eq!(query.params, vec![Literal::Int64(Some(1))]);
    }

    #[test]
    fn a_select_of_no_column_counts_rows_and_the_limit_is_bound() {
        let mut query = Query::select::<&str>(Dialect::PostgreSql, &[], "\"t\"");
        query.limit(Some(5));
        assert_eq!(query.sql, "SELECT 1 FROM \"t\" LIMIT $1");
        let mut query = Query::select(Dialect::Sqlite, &["a\"b", "c"], "\"t\"");
        query.limit(None);
        assert_eq!(query.sql, "SELECT \"a\"\"b\", \"c\" FROM \"t\"");
    }

    #[test]
    fn a_connector_may_write_its_own_placeholders() {
        fn setting(n: usize, value: &Literal) -> String {
            let ty = match value {
                Literal::Utf8(_) => "text",
                _ => "int8",
            };
            format!("current_setting('p{n}')::{ty}")
        }
        let mut query = Query::new(Dialect::PostgreSql).with_placeholders(setting);
        let filters = [
            Filter::StartsWith(col("name"), text("a_")),
            Filter::In(col("id"), vec![int(1), int(2)]),
        ];
        query.and_filters(&filters, &[true, true], &everything);
        assert_eq!(
            query.sql,
            " WHERE (\"name\" COLLATE \"C\" LIKE current_setting('p1')::text ESCAPE '!') AND \
             (\"id\" IN (current_setting('p2')::int8, current_setting('p3')::int8))"
        );
        assert_eq!(query.params[0], Literal::Utf8(Some("a!_%".into())));
        assert_eq!(query.params.len(), 3);
    }

    #[test]
    fn a_budget_of_values_refuses_the_filters_that_would_pass_it() {
        let many = Filter::In(col("id"), (0..5).map(int).collect());
        let filters = [
            Filter::Gt(col("id"), int(1)),
            many.clone(),
            Filter::IsNull(col("id")),
            Filter::Lt(col("id"), int(9)),
            Filter::Eq(col("id"), int(3)),
        ];
        let accepted = accept_at_most(&filters, Dialect::PostgreSql, &everything, 2);
        // 1 value, then 5 (past the budget), 0, 1, and 1 more (past it again).
        assert_eq!(accepted, vec![true, false, true, true, false]);
        assert_eq!(
            accept(&[many], Dialect::PostgreSql, &everything),
            vec![true]
        );
    }

    #[test]
    fn sqlite_refuses_nan_and_postgresql_takes_it() {
        let nan = Filter::Ge(col("x"), Value::Literal(Literal::Float64(Some(f64::NAN))));
        assert_eq!(
            accept(std::slice::from_ref(&nan), Dialect::Sqlite, &everything),
            vec![false]
        );
        assert_eq!(accept(&[nan], Dialect::PostgreSql, &everything), vec![true]);
    }

    #[test]
    fn a_range_partition_binds_its_bounds_and_holds_the_nulls_first() {
        let mut query = Query::new(Dialect::PostgreSql);
        let first = RangePartition {
            lower: None,
            upper: Some(10),
            nulls: true,
        };
        query.and_range("k", &first, |v| Literal::Int64(Some(v)));
        assert_eq!(query.sql, " WHERE (\"k\" < $1 OR \"k\" IS NULL)");
        let mut query = Query::new(Dialect::Sqlite);
        let middle = RangePartition {
            lower: Some(10),
            upper: Some(20),
            nulls: false,
        };
        query.and_range("k", &middle, |v| Literal::Date32(Some(v as i32)));
        assert_eq!(query.sql, " WHERE (\"k\" >= ?1 AND \"k\" < ?2)");
        assert_eq!(query.params[1], Literal::Date32(Some(20)));
        let mut query = Query::new(Dialect::Sqlite);
        let all = RangePartition {
            lower: None,
            upper: None,
            nulls: true,
        };
        query.and_range("k", &all, |v| Literal::Int64(Some(v)));
        assert_eq!(query.sql, "");
    }
}
