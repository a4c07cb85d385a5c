//! The stream reads what the batch reads: a table of every type of the batch suite and of the
//! types that Spark's JDBC source reads as strings, read by a batch read and by a stream with
//! the same options, gives the same types and the same values, in the initial snapshot and in
//! the changes after it, with `preferTimestampNTZ` and without.

use std::collections::BTreeMap;

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::{Int32Type, TimestampMicrosecondType};
use sparkds::arrow_array::{Array, RecordBatch, UInt32Array};
use sparkds::arrow_schema::{DataType, Schema};

use super::{logical, names, options, run, Query, TestResult};
use crate::types::{sort_by_id, COLUMNS, ROWS};

/// The types read as their text, arrays of them, and a `timestamp` array, beside `COLUMNS`.
const TEXTS: &str = "u uuid, jb jsonb, j json, ip inet, net cidr, mac macaddr, mac8 macaddr8, \
     x xml, m MOOD, iv interval, cash money, tsv tsvector, pt point, lsn pg_lsn, \
     span int4range, us uuid[], jbs jsonb[], ips inet[], feelings MOOD[], tss timestamp[]";

/// The values of `TEXTS` in the first row (the others' are NULL).
const TEXT_VALUES: &str = "u = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', \
     jb = '{\"b\": 1, \"a\": [1, 2]}', j = '{\"b\":1,  \"a\":2}', ip = '2001:db8::1/64', \
     net = '10.0.0.0/8', mac = '08:00:2b:01:02:03', mac8 = '08:00:2b:01:02:03:04:05', \
     x = '<a>x</a>', m = 'happy', iv = '-1 year 2 mons -3 days 04:05:06.789', cash = -12.34, \
     tsv = 'a fat:2 cat', pt = '(1.5,-2)', lsn = '16/B374D848', span = '[1,10)', \
     us = '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}', jbs = ARRAY['{\"x\": 1}'::jsonb], \
     ips = '{1.2.3.4,::1,10.0.0.1/8}', feelings = '{sad,NULL,happy}', \
     tss = '{\"1999-12-31 23:59:59.5\",NULL}'";

#[test]
fn the_stream_reads_every_type_as_the_batch_reads_it() -> TestResult {
    let server = logical();
    for ntz in ["false", "true"] {
        let (t, slot) = names("agreement");
        let mood = format!("{t}_mood");
        run(
            server,
            &format!(
                "CREATE TYPE {mood} AS ENUM ('sad', 'happy'); \
                 CREATE TABLE {t} ({COLUMNS}, {}); \
                 INSERT INTO {t} ({}) VALUES {ROWS}; \
                 UPDATE {t} SET {} WHERE id = 1;",
                TEXTS.replace("MOOD", &mood),
                column_names(COLUMNS),
                TEXT_VALUES
            ),
        );
        let stream_options = options(
            server,
            &slot,
            &t,
            &[("initialSnapshot", "true"), ("preferTimestampNTZ", ntz)],
        );
        let mut query = Query::start(&stream_options)?;
        // The same rows again, as changes after the snapshot.
        run(
            server,
            &format!("INSERT INTO {t} SELECT id + 100, {} FROM {t}", {
                let all = format!("{}, {}", column_names(COLUMNS), column_names(TEXTS));
                all.split(", ").skip(1).collect::<Vec<_>>().join(", ")
            }),
        );
        let mut streamed = Vec::new();
        while query.plan()? {
            streamed.extend(query.read_batches()?);
        }
        let mut batch_options = server.options(&t);
        batch_options.push(("preferTimestampNTZ".into(), ntz.into()));
        let read = sparkds::testing::library()?
            .batch_read()
            .options(batch_options)
            .run()?;
        let batch = sort_by_id(&crate::helpers::concat(&read.batches()));
        let stream = sort_by_id(&after_images(&streamed, &t)?);
        assert_eq!(batch.num_rows(), 6, "preferTimestampNTZ={ntz}");
        assert_same(&batch, &stream, ntz);
        run(
            server,
            &format!("SELECT pg_drop_replication_slot('{slot}')"),
        );
    }
    Ok(())
}

/// East of UTC, the wall clocks of PostgreSQL's first day in a `timestamp` are instants before
/// the first that its `timestamptz` holds: the batch read, the snapshot and the changes read
/// them as Spark holds them, alone and in arrays, in the time zone of the read (Asia/Kolkata,
/// whose offset on that day was its local mean time, +5:53:28).
#[test]
fn east_of_utc_the_first_day_reads_as_its_instant_in_the_batch_and_the_stream() -> TestResult {
    const NAME: &str =
        "cdc::agreement::east_of_utc_the_first_day_reads_as_its_instant_in_the_batch_and_the_stream";
    if !crate::helpers::in_time_zone(NAME, "Asia/Kolkata") {
        return Ok(());
    }
    let server = logical();
    let (t, slot) = names("first_day");
    run(
        server,
        &format!(
            "CREATE TABLE {t} (id int PRIMARY KEY, ts timestamp, tss timestamp[]); \
             INSERT INTO {t} VALUES (1, '4714-11-24 02:00 BC', \
             ARRAY['2024-01-01 00:00', NULL, '4714-11-24 02:00 BC']::timestamp[]), \
             (2, '2024-01-01 00:00', ARRAY['2024-01-01 00:00']::timestamp[]), (3, NULL, NULL);"
        ),
    );
    let mut query = Query::start(&options(server, &slot, &t, &[("initialSnapshot", "true")]))?;
    run(
        server,
        &format!("INSERT INTO {t} SELECT id + 100, ts, tss FROM {t}"),
    );
    let mut streamed = Vec::new();
    while query.plan()? {
        streamed.extend(query.read_batches()?);
    }
    run(
        server,
        &format!("SELECT pg_drop_replication_slot('{slot}')"),
    );
    let read = sparkds::testing::library()?
        .batch_read()
        .options(server.options(&t))
        .run()?;
    let batch = sort_by_id(&crate::helpers::concat(&read.batches()));
    let stream = sort_by_id(&after_images(&streamed, &t)?);
    // The first day is 2,440,588 days before 1970-01-01; 2024-01-01 00:00 in Kolkata (+5:30).
    let first = (-2_440_588i64 * 86_400 + 2 * 3_600 - (5 * 3_600 + 53 * 60 + 28)) * 1_000_000;
    let new_year = (1_704_067_200i64 - (5 * 3_600 + 30 * 60)) * 1_000_000;
    let expected = [Some(first), Some(new_year), None].repeat(2);
    let arrays: Vec<Option<Vec<Option<i64>>>> = [
        Some(vec![Some(new_year), None, Some(first)]),
        Some(vec![Some(new_year)]),
        None,
    ]
    .iter()
    .cycle()
    .take(6)
    .cloned()
    .collect();
    for (read, what) in [
        (&batch, "the batch read"),
        (&stream, "the snapshot, then the changes"),
    ] {
        assert_eq!(
            instants(read.column_by_name("ts").expect("ts")),
            expected,
            "{what}"
        );
        let tss = read.column_by_name("tss").expect("tss").as_list::<i32>();
        let got: Vec<Option<Vec<Option<i64>>>> = (0..tss.len())
            .map(|row| tss.is_valid(row).then(|| instants(&tss.value(row))))
            .collect();
        assert_eq!(got, arrays, "{what}");
    }
    Ok(())
}

/// The values of a column of instants.
fn instants(column: &dyn Array) -> Vec<Option<i64>> {
    column
        .as_primitive::<TimestampMicrosecondType>()
        .iter()
        .collect()
}

/// The names of a column list `name type, ...`.
fn column_names(columns: &str) -> String {
    let names: Vec<&str> = columns
        .split(", ")
        .filter_map(|c| c.split_whitespace().next())
        .collect();
    names.join(", ")
}

/// The rows of `table` after each change (a snapshot row, an insert), the last of each id.
fn after_images(
    batches: &[RecordBatch],
    table: &str,
) -> Result<RecordBatch, Box<dyn std::error::Error>> {
    let mut rows: Vec<RecordBatch> = Vec::new();
    for batch in batches {
        let after = batch
            .column_by_name(table)
            .ok_or("the table's column")?
            .as_struct();
        let valid: Vec<u32> = (0..after.len() as u32)
            .filter(|&i| after.is_valid(i as usize))
            .collect();
        let fields = after.fields().clone();
        let rows_of = RecordBatch::try_new(
            std::sync::Arc::new(Schema::new(fields)),
            after.columns().to_vec(),
        )?;
        rows.push(arrow_select::take::take_record_batch(
            &rows_of,
            &UInt32Array::from(valid),
        )?);
    }
    let all = crate::helpers::concat(&rows);
    // The last row of each id.
    let ids = all.column(0).as_primitive::<Int32Type>();
    let last: BTreeMap<i32, u32> = (0..all.num_rows() as u32)
        .map(|i| (ids.value(i as usize), i))
        .collect();
    let indices = UInt32Array::from(last.into_values().collect::<Vec<_>>());
    Ok(arrow_select::take::take_record_batch(&all, &indices)?)
}

/// Same names, same types (the stream's are all nullable), same values.
fn assert_same(batch: &RecordBatch, stream: &RecordBatch, ntz: &str) {
    let names = |b: &RecordBatch| -> Vec<String> {
        b.schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    assert_eq!(names(batch), names(stream), "preferTimestampNTZ={ntz}");
    for (field, (ours, theirs)) in batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns().iter().zip(stream.columns()))
    {
        let what = format!("column `{}`, preferTimestampNTZ={ntz}", field.name());
        assert_eq!(ours.data_type(), theirs.data_type(), "the type of {what}");
        if matches!(ours.data_type(), DataType::Utf8) {
            // Shown when they differ: the text is what a reader sees.
            let (a, b) = (ours.as_string::<i32>(), theirs.as_string::<i32>());
            let a: Vec<Option<&str>> = a.iter().collect();
            let b: Vec<Option<&str>> = b.iter().collect();
            assert_eq!(a, b, "{what}");
        }
        assert_eq!(ours.to_data(), theirs.to_data(), "{what}");
    }
}
