//! Filter pushdown, the extension of `spark_datasource_filters.h`: a library without it is read
//! as before, `examples/c_range` accepts what it can apply and returns only matching rows, and
//! the fixtures that lie about it break rules 29 to 32, each reported with its exact message.

use sparkds::arrow_array::{Array, Int64Array};
use sparkds::filters::{col, encode, Filter, Literal, Value};
use sparkds::steps::{OpenSource, Pushdowns};
use sparkds::BatchReadOutcome;

use crate::helpers::{error, sparkds, Fixture};

/// `id >= 3`, `id < 8` and `name IS NOT NULL`: two conjuncts on `id`, one on a string column.
fn conjuncts(string_column: &str) -> Vec<Filter> {
    vec![
        Filter::Ge(col("id"), 3i64.into()),
        Filter::Lt(col("id"), 8i64.into()),
        Filter::IsNotNull(col(string_column)),
    ]
}

fn ids(outcome: &BatchReadOutcome) -> Vec<i64> {
    outcome
        .batches()
        .iter()
        .flat_map(|b| {
            let ids = b
                .column_by_name("id")
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
                .expect("an int64 `id`");
            (0..ids.len()).map(|i| ids.value(i)).collect::<Vec<_>>()
        })
        .collect()
}

fn read_error(fault: &'static str) -> String {
    error(
        Fixture::with_fault(fault)
            .load()
            .batch_read()
            .option("end", "10")
            .filters(conjuncts("name"))
            .run(),
    )
}

#[test]
fn a_library_without_the_extension_is_offered_no_filter_nor_the_limit() {
    let library = Fixture::good().load();
    assert!(!library.pushes_filters());
    let outcome = library
        .batch_read()
        .option("end", "10")
        .filters(conjuncts("name"))
        .limit(4)
        .run()
        .expect("reads");
    assert_eq!(outcome.filters_accepted, None);
    // Spark applies every filter after the scan, so a limit pushed before it would drop rows.
    assert_eq!(outcome.limit_accepted, None);
    assert_eq!(outcome.num_rows(), 10);
}

#[test]
fn c_range_accepts_the_conjuncts_on_id_and_returns_only_their_rows() {
    let library = Fixture::c_range().load();
    assert!(library.pushes_filters());
    let outcome = library
        .batch_read()
        .option("end", "20")
        .filters(conjuncts("label"))
        .limit(2)
        .run()
        .expect("reads");
    assert_eq!(outcome.filters_accepted, Some(vec![true, true, false]));
    // One filter is left to Spark: a limit pushed before it would drop rows.
    assert_eq!(outcome.limit_accepted, None);
    assert_eq!(ids(&outcome), (3..8).collect::<Vec<_>>());
}

#[test]
fn c_range_gets_the_limit_when_every_filter_is_accepted() {
    let outcome = Fixture::c_range()
        .load()
        .batch_read()
        .option("end", "20")
        .filters(vec![Filter::In(
            col("id"),
            vec![2i64.into(), 11i64.into(), 15i64.into(), 40i64.into()],
        )])
        .limit(2)
        .run()
        .expect("reads");
    assert_eq!(outcome.filters_accepted, Some(vec![true]));
    assert_eq!(outcome.limit_accepted, Some(true));
    // A pushed limit holds per partition; Spark applies the query's limit to their union.
    assert_eq!(ids(&outcome), [2, 11, 15]);
}

#[test]
fn c_range_answers_no_for_what_it_cannot_apply() {
    let outcome = Fixture::c_range()
        .load()
        .batch_read()
        .option("end", "5")
        .filters(vec![
            Filter::Gt(col("id"), Value::Literal(Literal::Float64(Some(1.5)))),
            Filter::Eq(col("label"), "label 1".into()),
            Filter::Unsupported(vec![200, 1, 2]),
        ])
        .run()
        .expect("reads");
    assert_eq!(outcome.filters_accepted, Some(vec![false, false, false]));
    assert_eq!(ids(&outcome), [0, 1, 2, 3, 4]);
}

#[test]
fn the_steps_push_filters_or_say_there_is_no_extension() {
    for (fixture, expected) in [
        (Fixture::good(), None),
        (Fixture::c_range(), Some(vec![true, false])),
    ] {
        let library: &'static sparkds::Library = Box::leak(Box::new(fixture.load()));
        let name = library.name().to_string();
        let source =
            OpenSource::create(library, &name, &[("end".into(), "10".into())]).expect("creates");
        let schema = source.schema().expect("a schema").expect("has a schema");
        let mut reader = source.create_reader(schema).expect("a reader");
        let message =
            encode(&[Filter::Le(col("id"), 4i64.into()), Filter::AlwaysFalse]).expect("encodes");
        let answers = reader.push_filters(&message).expect("pushes");
        assert_eq!(answers, expected);
        let accepted = usize::from(expected.is_some());
        assert_eq!(reader.accepted_filters().len(), accepted);
    }
}

#[test]
fn the_steps_refuse_a_message_that_does_not_decode() {
    let library: &'static sparkds::Library = Box::leak(Box::new(Fixture::c_range().load()));
    let source = OpenSource::create(library, "c_range", &[]).expect("creates");
    let schema = source.schema().expect("a schema").expect("has a schema");
    let mut reader = source.create_reader(schema).expect("a reader");
    assert_eq!(
        error(reader.push_filters(&[1, 0, 0, 0, 9])),
        "the filters to push are not a message of spark_datasource_filters.h: malformed filters at byte 4: 1 predicates cannot fit in the 1 bytes left"
    );
}

#[test]
fn a_row_that_breaks_an_accepted_filter_is_reported() {
    assert_eq!(
        read_error("FILTER_BROKEN_ROW"),
        "`read` (partition 0): batch 0, row 0: the accepted filter `id >= 3` is not TRUE; return only rows where every accepted filter is TRUE, or answer 0 for it (rule 31: returned rows satisfy the accepted filters; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-31)"
    );
}

#[test]
fn a_sink_called_twice_is_reported() {
    assert_eq!(
        read_error("FILTER_SINK_TWICE"),
        "`push_filters`: called its sink 2 times; it must call it exactly once, with one byte per filter (rule 30: `push_filters` answers once, one byte per filter; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-30)"
    );
}

#[test]
fn an_answer_of_the_wrong_length_is_reported() {
    assert_eq!(
        read_error("FILTER_WRONG_COUNT"),
        "`push_filters`: answered 4 bytes for 3 filters; answer one byte per filter, in the order of the message (rule 30: `push_filters` answers once, one byte per filter; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-30)"
    );
}

#[test]
fn an_answer_other_than_0_or_1_is_reported() {
    assert_eq!(
        read_error("FILTER_ANSWER_TWO"),
        "`push_filters`: answered 2 for filter 0; answer 1 (accepted) or 0 (not accepted) (rule 30: `push_filters` answers once, one byte per filter; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-30)"
    );
}

#[test]
fn a_filter_table_too_small_is_reported_when_loading() {
    assert_eq!(
        Fixture::with_fault("FILTER_SMALL_TABLE").load_error(),
        "`spark_ds_filters_init`: the table's size is 16; it must be a multiple of 8 and at least 24, sizeof(SparkDsFilterTable) of version 1 (rule 29: a valid filter table; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-29)"
    );
}

/// `cargo sparkds show --where` on a library with the extension (the conjuncts it accepts are
/// pushed, the rest applied after the read) and without it (every condition applied after).
#[test]
fn show_where_pushes_what_the_library_accepts_and_applies_the_rest() {
    let cases: [(Fixture, &str, &[&str], &str); 2] = [
        (
            Fixture::c_range(),
            "id BETWEEN 3 AND 12 AND label LIKE '%1%' AND id <> 10",
            &["--columns", "id", "--limit", "2", "end=20"],
            "show_where_c_range",
        ),
        (
            Fixture::good(),
            "name IS NULL OR id IN (1, 2)",
            &["end=8"],
            "show_where_no_extension",
        ),
    ];
    for (fixture, condition, rest, snapshot) in cases {
        let lib = fixture.path();
        let lib = lib.to_str().expect("a UTF-8 path");
        let mut arguments = vec!["show", "--lib", lib, "--where", condition];
        arguments.extend_from_slice(rest);
        let (code, stdout, stderr) = sparkds(&arguments);
        assert_eq!((code, stderr.as_str()), (0, ""), "{snapshot}");
        insta::assert_snapshot!(snapshot, stdout);
    }
}

#[test]
fn show_where_names_the_part_it_cannot_push() {
    let lib = Fixture::c_range().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&[
        "show",
        "--lib",
        lib,
        "--where",
        "id > 2 AND label = 7 AND ids < 3",
    ]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        stderr,
        "error: --where: in `ids < 3`: there is no column `ids`; the columns are id, label\n"
    );
}

#[test]
fn bench_where_reports_what_was_accepted() {
    let lib = Fixture::c_range().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&[
        "bench",
        "--lib",
        lib,
        "--protocol",
        "batch-read",
        "--where",
        "id < 100 AND label IS NOT NULL",
        "end=1000",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert!(
        stdout.contains(
            "filter: id < 100: accepted\nfilter: label IS NOT NULL: not accepted (its rows are measured unfiltered)\n\n"
        ),
        "{stdout}"
    );
}

#[test]
fn a_pushdown_answered_otherwise_when_replayed_is_reported() {
    const REPLAYED_OTHERWISE: &str = "`push_filters`: answered [1, 1, 0] and then [0, 0, 0] for the same offer to a new reader of the same schema and options; answer from the reader's schema, options and the offer alone (rule 32: a replayed pushdown gets the same answer; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-32)";
    // The whole read offers the filters to one reader, then the same to the reader it plans
    // with, as Spark does.
    assert_eq!(read_error("UNSTABLE_PUSHDOWN"), REPLAYED_OTHERWISE);
    // So does a host that drives the steps, as the JVM plugin does.
    let library: &'static sparkds::Library =
        Box::leak(Box::new(Fixture::with_fault("UNSTABLE_PUSHDOWN").load()));
    let name = library.name().to_string();
    let source =
        OpenSource::create(library, &name, &[("end".into(), "10".into())]).expect("creates");
    let schema = source.schema().expect("a schema").expect("has a schema");
    let message = encode(&conjuncts("name")).expect("encodes");
    let mut probe = source.create_reader(schema.clone()).expect("a reader");
    let answers = probe
        .push_filters(&message)
        .expect("answers")
        .expect("has the extension");
    assert_eq!(answers, [true, true, false]);
    drop(probe);
    let pushed = Pushdowns {
        filters: Some((message, answers)),
        ..Pushdowns::default()
    };
    let mut planner = source.create_reader(schema).expect("a reader");
    assert_eq!(error(planner.replay(&pushed)), REPLAYED_OTHERWISE);
}
