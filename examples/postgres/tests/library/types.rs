//! Every PostgreSQL type that maps to a Spark type of version 1: rows inserted by SQL read back
//! exactly, and what a read returns writes back unchanged, into a new table and into one of the
//! original's column types; the types that Spark's JDBC source reads as strings read as their
//! text, and `timestamp` as `preferTimestampNTZ` says.

use std::sync::Arc;

use sparkds::arrow_array::builder::{
    Date32Builder, Decimal128Builder, Int32Builder, ListBuilder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use sparkds::arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use sparkds::arrow_schema::{DataType, Field, TimeUnit};

use crate::helpers::{concat, library, options, server, sql, table};

/// The options of a read of `dbtable` that reads `timestamp` as `timestamp_ntz`, which writes
/// back as `timestamp`: the round trips below keep every type.
fn ntz_options(dbtable: &str) -> Vec<(String, String)> {
    let mut options = options(dbtable);
    options.push(("preferTimestampNTZ".into(), "true".into()));
    options
}

/// The table of every type: two rows of edge values and a row of NULLs.
pub const COLUMNS: &str = "id integer, s smallint, i integer, b bigint, n numeric(12,3), r real, \
     d double precision, t text, v varchar(10), c char(4), ok boolean, day date, ts timestamp, \
     tz timestamptz, bin bytea, ints integer[], texts text[], nums numeric(5,2)[], days date[], \
     big numeric";

pub const ROWS: &str = "\
     (1, -32768, -2147483648, -9223372036854775808, -123456789.123, 'NaN', '-Infinity', \
      'héllo ☃', 'x', 'ab', true, '1969-12-31', '1900-01-01 00:00:00.000001', \
      '2024-02-29 23:59:59.999999+00', '\\x00ff10', '{1,NULL,3}', '{\"a\",NULL,\"\"}', \
      '{1.5,-2.25}', '{2000-01-01}', 1.0000000000000000005), \
     (2, 32767, 2147483647, 9223372036854775807, 0.001, '-0', 'Infinity', '', 'yy', 'abcd', \
      false, '2262-04-11', '2000-01-01 00:00:00', '1970-01-01 00:00:00+00', '\\x', '{}', '{}', \
      '{}', '{}', -12345678901234567890.123456789012345678), \
     (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
      NULL, NULL, NULL, NULL, NULL)";

/// Days since 1970-01-01.
fn days(year: i64, month: i64, day: i64) -> i32 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    (era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468) as i32
}

fn micros(date: (i64, i64, i64), time: (i64, i64, i64), fraction: i64) -> i64 {
    let (h, m, s) = time;
    i64::from(days(date.0, date.1, date.2)) * 86_400_000_000
        + ((h * 60 + m) * 60 + s) * 1_000_000
        + fraction
}

fn decimals(values: Vec<Option<i128>>, precision: u8, scale: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(values)
            .with_precision_and_scale(precision, scale)
            .expect("a valid decimal type"),
    )
}

fn element(data_type: DataType) -> Field {
    Field::new("element", data_type, true)
}

/// What the three rows read as, column by column.
fn expected() -> Vec<(&'static str, ArrayRef)> {
    let mut ints = ListBuilder::new(Int32Builder::new()).with_field(element(DataType::Int32));
    ints.append_value([Some(1), None, Some(3)]);
    ints.append_value([]);
    ints.append_null();
    let mut texts = ListBuilder::new(StringBuilder::new()).with_field(element(DataType::Utf8));
    texts.append_value([Some("a"), None, Some("")]);
    texts.append_value(Vec::<Option<&str>>::new());
    texts.append_null();
    let mut nums = ListBuilder::new(
        Decimal128Builder::new()
            .with_precision_and_scale(5, 2)
            .expect("a valid decimal type"),
    )
    .with_field(element(DataType::Decimal128(5, 2)));
    nums.append_value([Some(150), Some(-225)]);
    nums.append_value([]);
    nums.append_null();
    let mut list_days =
        ListBuilder::new(Date32Builder::new()).with_field(element(DataType::Date32));
    list_days.append_value([Some(days(2000, 1, 1))]);
    list_days.append_value([]);
    list_days.append_null();
    vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        (
            "s",
            Arc::new(Int16Array::from(vec![Some(i16::MIN), Some(i16::MAX), None])),
        ),
        (
            "i",
            Arc::new(Int32Array::from(vec![Some(i32::MIN), Some(i32::MAX), None])),
        ),
        (
            "b",
            Arc::new(Int64Array::from(vec![Some(i64::MIN), Some(i64::MAX), None])),
        ),
        (
            "n",
            decimals(vec![Some(-123_456_789_123), Some(1), None], 12, 3),
        ),
        (
            "r",
            Arc::new(Float32Array::from(vec![Some(f32::NAN), Some(-0.0), None])),
        ),
        (
            "d",
            Arc::new(Float64Array::from(vec![
                Some(f64::NEG_INFINITY),
                Some(f64::INFINITY),
                None,
            ])),
        ),
        (
            "t",
            Arc::new(StringArray::from(vec![Some("héllo ☃"), Some(""), None])),
        ),
        (
            "v",
            Arc::new(StringArray::from(vec![Some("x"), Some("yy"), None])),
        ),
        // char(4) keeps its padding, as Spark's JDBC source reads it.
        (
            "c",
            Arc::new(StringArray::from(vec![Some("ab  "), Some("abcd"), None])),
        ),
        (
            "ok",
            Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
        ),
        (
            "day",
            Arc::new(Date32Array::from(vec![
                Some(days(1969, 12, 31)),
                Some(days(2262, 4, 11)),
                None,
            ])),
        ),
        (
            "ts",
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(micros((1900, 1, 1), (0, 0, 0), 1)),
                Some(micros((2000, 1, 1), (0, 0, 0), 0)),
                None,
            ])),
        ),
        (
            "tz",
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(micros((2024, 2, 29), (23, 59, 59), 999_999)),
                    Some(0),
                    None,
                ])
                .with_timezone("UTC"),
            ),
        ),
        (
            "bin",
            Arc::new(BinaryArray::from(vec![
                Some(&[0u8, 0xff, 0x10][..]),
                Some(&[][..]),
                None,
            ])),
        ),
        ("ints", Arc::new(ints.finish())),
        ("texts", Arc::new(texts.finish())),
        ("nums", Arc::new(nums.finish())),
        ("days", Arc::new(list_days.finish())),
        // An unconstrained numeric reads as decimal(38,18), rounded half up as Spark's JDBC
        // source rounds it.
        (
            "big",
            decimals(
                vec![
                    Some(1_000_000_000_000_000_001),
                    Some(-12_345_678_901_234_567_890_123_456_789_012_345_678),
                    None,
                ],
                38,
                18,
            ),
        ),
    ]
}

fn read_all(dbtable: &str) -> sparkds::Result<RecordBatch> {
    let read = library()?
        .batch_read()
        .options(ntz_options(dbtable))
        .run()?;
    Ok(concat(&read.batches()))
}

fn assert_rows(batch: &RecordBatch) {
    let expected = expected();
    let names: Vec<&str> = expected.iter().map(|(name, _)| *name).collect();
    let read_names: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(read_names, names);
    for (i, (name, array)) in expected.iter().enumerate() {
        assert_eq!(
            batch.column(i).data_type(),
            array.data_type(),
            "the type of column {name}"
        );
        assert_eq!(
            &batch.column(i).to_data(),
            &array.to_data(),
            "column {name}"
        );
    }
}

#[test]
fn every_supported_type_reads_back_exactly_what_sql_inserted() -> sparkds::Result<()> {
    let t = table("every_type");
    sql(&format!(
        "CREATE TABLE {t} ({COLUMNS}); INSERT INTO {t} VALUES {ROWS};"
    ));
    let read = library()?.batch_read().options(ntz_options(&t)).run()?;
    assert_eq!(
        read.partitions.len(),
        1,
        "one partition without partitionColumn"
    );
    assert_rows(&concat(&read.batches()));
    Ok(())
}

#[test]
fn every_supported_type_round_trips_through_a_new_table_and_an_existing_one() -> sparkds::Result<()>
{
    let source = table("every_type_source");
    sql(&format!(
        "CREATE TABLE {source} ({COLUMNS}); INSERT INTO {source} VALUES {ROWS};"
    ));
    let rows = read_all(&source)?;

    // A table that does not exist is created with the types of the DataFrame's columns.
    let created = table("every_type_created");
    let write = library()?
        .batch_write()
        .options(options(&created))
        .task([rows.slice(0, 2)])
        .task([rows.slice(2, 1)])
        .run()?;
    assert!(write.committed);
    assert_rows(&sort_by_id(&read_all(&created)?));

    // An existing table keeps its own types: values convert with PostgreSQL's assignment
    // casts (bigint to smallint, text to char(4), ...) and read back as they were.
    let existing = table("every_type_existing");
    sql(&format!("CREATE TABLE {existing} (LIKE {source})"));
    library()?
        .batch_write()
        .options(options(&existing))
        .task([rows.clone()])
        .run()?;
    assert_rows(&sort_by_id(&read_all(&existing)?));
    Ok(())
}

/// The rows in the order of `id` (tasks insert in any order).
pub fn sort_by_id(batch: &RecordBatch) -> RecordBatch {
    let ids = batch
        .column(0)
        .as_any()
        .downcast_ref::<Int32Array>()
        .expect("id is an integer");
    let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
    order.sort_by_key(|&i| ids.value(i as usize));
    let indices = sparkds::arrow_array::UInt32Array::from(order);
    arrow_select::take::take_record_batch(batch, &indices).expect("indices in range")
}

/// Types that Spark's JDBC source reads as strings, an enum, arrays of them, and `timestamp`
/// with and without `preferTimestampNTZ`.
const JDBC_TEXTS: &str = "id integer, u uuid, jb jsonb, j json, ip inet, net cidr, \
     mac macaddr, x xml, m MOOD, iv interval, cash money, us uuid[], feelings MOOD[], \
     ts timestamp, tss timestamp[]";

#[test]
fn types_that_jdbc_reads_as_strings_read_as_their_text() -> sparkds::Result<()> {
    let t = table("jdbc_texts");
    let mood = format!("{t}_mood");
    sql(&format!(
        "CREATE TYPE {mood} AS ENUM ('sad', 'happy'); \
         CREATE TABLE {t} ({}); \
         INSERT INTO {t} VALUES (1, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', \
           '{{\"b\": 1, \"a\": [1, 2]}}', '{{\"b\":1,  \"a\":2}}', '192.168.0.1', \
           '10.0.0.0/8', '08:00:2b:01:02:03', '<a>x</a>', 'happy', '1 day 02:03:04.5', 12.34, \
           '{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}}', '{{sad,happy}}', \
           '1999-12-31 23:59:59.5', '{{\"2024-01-01 00:00:00\"}}'), \
           (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
           NULL);",
        JDBC_TEXTS.replace("MOOD", &mood)
    ));
    let read = library()?.batch_read().options(options(&t)).run()?;
    let batch = sort_by_id(&concat(&read.batches()));
    let text = |name: &str| {
        let column = batch.column_by_name(name).expect("the column");
        assert_eq!(column.data_type(), &DataType::Utf8, "the type of {name}");
        let strings = column.as_any().downcast_ref::<StringArray>();
        strings.and_then(|s| (!s.is_null(0) && s.is_null(1)).then(|| s.value(0).to_string()))
    };
    // The server's text of each, as JDBC's getString returns it.
    assert_eq!(
        text("u").as_deref(),
        Some("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    );
    assert_eq!(text("jb").as_deref(), Some("{\"a\": [1, 2], \"b\": 1}"));
    assert_eq!(text("j").as_deref(), Some("{\"b\":1,  \"a\":2}"));
    // A host's netmask is not written (it is by the cast to text).
    assert_eq!(text("ip").as_deref(), Some("192.168.0.1"));
    assert_eq!(text("net").as_deref(), Some("10.0.0.0/8"));
    assert_eq!(text("mac").as_deref(), Some("08:00:2b:01:02:03"));
    assert_eq!(text("x").as_deref(), Some("<a>x</a>"));
    assert_eq!(text("m").as_deref(), Some("happy"));
    assert_eq!(text("iv").as_deref(), Some("1 day 02:03:04.5"));
    assert_eq!(text("cash").as_deref(), Some("$12.34"));
    let strings = || ListBuilder::new(StringBuilder::new()).with_field(element(DataType::Utf8));
    let mut uuids = strings();
    uuids.append_value([Some("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), None]);
    uuids.append_null();
    let mut feelings = strings();
    feelings.append_value([Some("sad"), Some("happy")]);
    feelings.append_null();
    for (name, mut list) in [("us", uuids), ("feelings", feelings)] {
        let column = batch.column_by_name(name).expect("the column");
        assert_eq!(column.to_data(), list.finish().to_data(), "column {name}");
    }
    assert_timestamps(&batch, true)?;
    let read = library()?.batch_read().options(ntz_options(&t)).run()?;
    assert_timestamps(&sort_by_id(&concat(&read.batches())), false)
}

/// `ts` and `tss` of the table above: instants of their wall clock in this machine's time
/// zone, as the server makes them in it (`local`), or the wall clock itself.
fn assert_timestamps(batch: &RecordBatch, local: bool) -> sparkds::Result<()> {
    let wall = micros((1999, 12, 31), (23, 59, 59), 500_000);
    let element_wall = micros((2024, 1, 1), (0, 0, 0), 0);
    let (ts, first, zone) = match local {
        true => {
            let mut client = server().client();
            client
                .batch_execute(&format!("SET TimeZone = '{}'", machine_zone()))
                .map_err(|e| sparkds::Error::usage(e.to_string()))?;
            let mut instant = |text: &str| -> sparkds::Result<i64> {
                let sql = format!(
                    "SELECT (extract(epoch FROM TIMESTAMP '{text}'::timestamptz) \
                     * 1000000)::int8"
                );
                let row = client.query_one(&sql, &[]);
                row.map(|r| r.get(0))
                    .map_err(|e| sparkds::Error::usage(e.to_string()))
            };
            let ts = instant("1999-12-31 23:59:59.5")?;
            (ts, instant("2024-01-01 00:00:00")?, Some("UTC"))
        }
        false => (wall, element_wall, None),
    };
    let expected = TimestampMicrosecondArray::from(vec![Some(ts), None]).with_timezone_opt(zone);
    let column = batch.column_by_name("ts").expect("the column ts");
    assert_eq!(column.to_data(), expected.to_data(), "ts, local: {local}");
    let list = batch.column_by_name("tss").expect("the column tss");
    let values = TimestampMicrosecondBuilder::new().with_timezone_opt(zone);
    let data_type = DataType::Timestamp(TimeUnit::Microsecond, zone.map(Into::into));
    let mut expected = ListBuilder::new(values).with_field(element(data_type));
    expected.append_value([Some(first)]);
    expected.append_null();
    let expected = expected.finish();
    assert_eq!(list.to_data(), expected.to_data(), "tss, local: {local}");
    Ok(())
}

/// The time zone that the JVM of this machine would take: `TZ`, `/etc/timezone`, or the
/// target of `/etc/localtime`.
fn machine_zone() -> String {
    let from_file = || std::fs::read_to_string("/etc/timezone").ok();
    let from_link = || {
        let target = std::fs::read_link("/etc/localtime").ok()?;
        Some(target.to_str()?.rsplit_once("zoneinfo/")?.1.to_string())
    };
    let zone = std::env::var("TZ")
        .ok()
        .or_else(from_file)
        .or_else(from_link);
    let zone = zone.unwrap_or_else(|| "UTC".into());
    zone.trim().trim_start_matches(':').to_string()
}
