//! The encoding both ways, decoding arbitrary bytes, and integer bounds (evaluation is in
//! `evaluate_tests.rs`).
// Expected ranges are written as the lists `ranges` returns, one range or more.
#![allow(clippy::single_range_in_vec_init)]

use proptest::prelude::*;

use super::*;

pub(super) fn lit(literal: Literal) -> Value {
    Value::Literal(literal)
}

/// Every literal of version 1, non-null and null, with the exact bits of floats.
fn every_literal() -> Vec<Literal> {
    vec![
        Literal::Null,
        Literal::Boolean(Some(true)),
        Literal::Boolean(Some(false)),
        Literal::Boolean(None),
        Literal::Int8(Some(-128)),
        Literal::Int8(None),
        Literal::Int16(Some(-32768)),
        Literal::Int16(None),
        Literal::Int32(Some(i32::MIN)),
        Literal::Int32(None),
        Literal::Int64(Some(i64::MAX)),
        Literal::Int64(None),
        Literal::Float32(Some(f32::NAN)),
        Literal::Float32(Some(f32::from_bits(0xffc0_0001))),
        Literal::Float32(Some(f32::NEG_INFINITY)),
        Literal::Float32(Some(-0.0)),
        Literal::Float32(None),
        Literal::Float64(Some(f64::from_bits(0x7ff0_0000_0000_0001))),
        Literal::Float64(Some(f64::INFINITY)),
        Literal::Float64(Some(-0.0)),
        Literal::Float64(Some(1.5)),
        Literal::Float64(None),
        Literal::Decimal128 {
            value: Some(-99_999_999_999_999_999_999_999_999_999_999_999_999),
            precision: 38,
            scale: 10,
        },
        Literal::Decimal128 {
            value: None,
            precision: 5,
            scale: 5,
        },
        Literal::Utf8(Some("héllo\0`x`".into())),
        Literal::Utf8(Some(String::new())),
        Literal::Utf8(None),
        Literal::Binary(Some(vec![0, 255, 128])),
        Literal::Binary(None),
        Literal::Date32(Some(-719_162)),
        Literal::Date32(None),
        Literal::Timestamp(Some(-62_135_596_800_000_000)),
        Literal::Timestamp(None),
        Literal::TimestampNtz(Some(253_402_300_799_999_999)),
        Literal::TimestampNtz(None),
    ]
}

fn every_predicate() -> Vec<Filter> {
    let a = || col("a");
    let nested = || Value::Column(Column::nested(["s", "inner field", ""]));
    let mut filters = vec![
        Filter::Eq(a(), 1i64.into()),
        Filter::NullSafeEq(lit(Literal::Null), nested()),
        Filter::Lt(a(), col("b")),
        Filter::Le(a(), 2.5f64.into()),
        Filter::Gt(5i32.into(), a()),
        Filter::Ge(a(), "x".into()),
        Filter::In(a(), vec![]),
        Filter::In(a(), vec![1i64.into(), lit(Literal::Int64(None)), col("b")]),
        Filter::IsNull(nested()),
        Filter::IsNotNull(a()),
        Filter::Eq(a(), 1i64.into()).and(Filter::AlwaysFalse),
        Filter::AlwaysTrue.or(!Filter::IsNull(a())),
        Filter::StartsWith(a(), "pre".into()),
        Filter::EndsWith(a(), vec![1u8, 2].into()),
        Filter::Contains(a(), "".into()),
        Filter::AlwaysTrue,
        Filter::AlwaysFalse,
        Filter::Unsupported(vec![200, 1, 2, 3]),
    ];
    filters.extend(every_literal().into_iter().map(|l| Filter::Eq(a(), lit(l))));
    filters
}

#[test]
fn every_predicate_and_literal_round_trips() {
    let filters = every_predicate();
    let bytes = encode(&filters).expect("encodes");
    assert_eq!(decode(&bytes).expect("decodes"), filters);
    // And the bytes too: an Unsupported is written back as it came.
    assert_eq!(
        encode(&decode(&bytes).expect("decodes")).expect("encodes"),
        bytes
    );
}

#[test]
fn the_encoding_is_the_one_of_the_header() {
    let bytes = encode(&[Filter::Gt(col("id"), 7i64.into())]).expect("encodes");
    #[rustfmt::skip]
    let expected = [
        1, 0, 0, 0,                 // one predicate
        23, 0, 0, 0,                // of 23 bytes
        5,                          // GT
        0, 1, 0, 0, 0, 2, 0, 0, 0, b'i', b'd', // column of one part, "id"
        1, 5, 0, 7, 0, 0, 0, 0, 0, 0, 0,       // literal INT64, not null, 7
    ];
    assert_eq!(bytes, expected);
}

#[test]
fn an_unknown_operator_type_or_kind_makes_only_its_predicate_unsupported() {
    let known = Filter::Eq(col("a"), 1i64.into());
    let mut bytes = encode(std::slice::from_ref(&known)).expect("encodes");
    // Three more predicates: an unknown operator, an `=` with an unknown literal type, an
    // AND whose second operand has an unknown value kind.
    bytes[0] = 4;
    let unknown_operator = [99u8, 1, 2, 3];
    let unknown_type = [1u8, 0, 1, 0, 0, 0, 1, 0, 0, 0, b'a', 1, 77, 0, 9, 9];
    let mut unknown_kind = vec![10u8];
    let inner = encode(std::slice::from_ref(&known)).expect("encodes");
    unknown_kind.extend_from_slice(&inner[4..]);
    unknown_kind.extend_from_slice(&[3, 0, 0, 0, 1, 9, 9]);
    for body in [&unknown_operator[..], &unknown_type[..], &unknown_kind[..]] {
        bytes.extend_from_slice(&(body.len() as u32).to_le_bytes());
        bytes.extend_from_slice(body);
    }
    let filters = decode(&bytes).expect("decodes");
    assert_eq!(
        filters,
        [
            known.clone(),
            Filter::Unsupported(unknown_operator.to_vec()),
            Filter::Unsupported(unknown_type.to_vec()),
            Filter::And(
                Box::new(known),
                Box::new(Filter::Unsupported(vec![1, 9, 9]))
            ),
        ]
    );
}

#[test]
fn a_string_that_is_not_utf8_is_unsupported() {
    let body = [
        1u8, 0, 1, 0, 0, 0, 1, 0, 0, 0, b'a', 1, 9, 0, 1, 0, 0, 0, 0xff,
    ];
    let mut bytes = 1u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&(body.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&body);
    assert_eq!(
        decode(&bytes).expect("decodes"),
        [Filter::Unsupported(body.to_vec())]
    );
}

#[test]
fn predicates_deeper_than_the_limit_are_unsupported() {
    let mut filter = Filter::AlwaysTrue;
    for _ in 0..MAX_DEPTH + 5 {
        filter = !filter;
    }
    let filters = decode(&encode(&[filter]).expect("encodes")).expect("decodes");
    let mut depth = 1;
    let mut at = &filters[0];
    while let Filter::Not(inner) = at {
        at = inner;
        depth += 1;
    }
    assert_eq!(depth, MAX_DEPTH + 1);
    assert!(matches!(at, Filter::Unsupported(_)));
}

fn decode_error(bytes: &[u8]) -> String {
    decode(bytes).expect_err("malformed").to_string()
}

#[test]
fn malformed_messages_are_errors_that_name_the_byte() {
    let good = encode(&[Filter::Eq(col("a"), true.into())]).expect("encodes");
    assert_eq!(
        decode_error(&[1, 0]),
        "malformed filters at byte 0: a u32 needs 4 bytes, but 2 are left"
    );
    assert_eq!(
        decode_error(&good[..good.len() - 1]),
        "malformed filters at byte 4: a predicate of 15 bytes, but 14 bytes are left"
    );
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(
        decode_error(&trailing),
        "malformed filters at byte 23: 1 bytes after the last of 1 predicates"
    );
    let mut flag = good.clone();
    *flag.last_mut().expect("a value") = 2;
    assert_eq!(
        decode_error(&flag),
        "malformed filters at byte 22: a boolean literal must be 0 or 1, got 2"
    );
    assert_eq!(
        decode_error(&[200, 0, 0, 0]),
        "malformed filters at byte 4: 200 predicates cannot fit in the 0 bytes left"
    );
    // The operands of an `=` that do not fill its predicate.
    let mut short = good.clone();
    short[4] += 1;
    short.push(0);
    assert_eq!(
        decode_error(&short),
        "malformed filters at byte 23: 1 bytes after the operands of the predicate that starts \
         at byte 4"
    );
    assert_eq!(
        decode_error(&[1, 0, 0, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0, 0]),
        "malformed filters at byte 10: a column with no name"
    );
}

#[test]
fn the_encoder_refuses_what_the_encoding_cannot_hold() {
    let decimal = Literal::Decimal128 {
        value: Some(1),
        precision: 39,
        scale: 0,
    };
    assert_eq!(
        encode(&[Filter::Eq(col("d"), lit(decimal))])
            .expect_err("refused")
            .to_string(),
        "decimal(39,0) is not a decimal of Spark: the precision is 1 to 38 and the scale 0 to \
         the precision"
    );
}

proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn decoding_a_damaged_message_never_panics(at in 0usize..2048, byte in any::<u8>(), cut in 0usize..2048) {
        let mut bytes = encode(&every_predicate()).expect("encodes");
        let at = at % bytes.len();
        bytes[at] = byte;
        bytes.truncate(bytes.len() - cut % bytes.len());
        if let Ok(filters) = decode(&bytes) {
            // What decodes encodes back to the same bytes.
            prop_assert_eq!(encode(&filters).expect("encodes"), bytes);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Integer bounds
// ---------------------------------------------------------------------------------------------

#[test]
fn between_becomes_bounds_and_in_a_set() {
    let (ids, accepted) = IntegerFilter::from_filters(
        "id",
        &[
            Filter::Ge(col("id"), 3i64.into()),
            Filter::Lt(col("id"), 10i32.into()),
            Filter::Gt(col("other"), 1i64.into()),
        ],
    );
    assert_eq!(accepted, [true, true, false]);
    assert_eq!((ids.min(), ids.max(), ids.values()), (3, 9, None));
    assert_eq!(ids.ranges(0, 5), [3..5]);

    let (ids, accepted) = IntegerFilter::from_filters(
        "id",
        &[
            Filter::In(
                col("id"),
                vec![7i64.into(), 1i64.into(), lit(Literal::Null), 2i8.into()],
            ),
            Filter::Le(5i64.into(), col("id")).and(Filter::AlwaysTrue),
        ],
    );
    assert_eq!(accepted, [true, true]);
    assert_eq!(ids.values(), Some(&[7][..]));
    assert!(ids.contains(7) && !ids.contains(1));
}

#[test]
fn contradictions_and_edges_are_empty() {
    let empty = |filters: &[Filter]| IntegerFilter::from_filters("id", filters).0.is_empty();
    assert!(empty(&[Filter::In(col("id"), vec![])]));
    assert!(empty(&[Filter::Lt(col("id"), i64::MIN.into())]));
    assert!(empty(&[Filter::Gt(col("id"), i64::MAX.into())]));
    assert!(empty(&[Filter::Eq(col("id"), lit(Literal::Int64(None)))]));
    assert!(empty(&[
        Filter::Gt(col("id"), 5i64.into()),
        Filter::Eq(col("id"), 5i64.into()),
    ]));
    assert!(!empty(&[Filter::Le(col("id"), i64::MAX.into())]));
    let (all, _) = IntegerFilter::from_filters("id", &[]);
    assert_eq!(all.ranges(i64::MAX - 1, i64::MAX), [i64::MAX - 1..i64::MAX]);
}

#[test]
fn what_bounds_cannot_express_is_not_accepted() {
    let (ids, accepted) = IntegerFilter::from_filters(
        "id",
        &[
            Filter::NullSafeEq(col("id"), lit(Literal::Int64(None))),
            Filter::Eq(col("id"), 1.5f64.into()),
            Filter::Eq(col("id"), 1i64.into()).or(Filter::AlwaysFalse),
            Filter::In(col("id"), vec![col("other")]),
            Filter::Eq(Value::Column(Column::nested(["id", "x"])), 1i64.into()),
            Filter::Eq(col("id"), 1i64.into()).and(Filter::IsNull(col("id"))),
        ],
    );
    assert_eq!(accepted, [false; 6]);
    assert_eq!(ids, IntegerFilter::all());
}

#[test]
fn ranges_coalesce_consecutive_values() {
    let (ids, _) = IntegerFilter::from_filters(
        "id",
        &[Filter::In(
            col("id"),
            [9i64, 3, 4, 5, 7, 100]
                .into_iter()
                .map(Value::from)
                .collect(),
        )],
    );
    assert_eq!(ids.ranges(4, 50), [4..6, 7..8, 9..10]);
}

#[test]
fn filters_kept_in_a_json_reader_state_keep_nan_infinities_and_negative_zero() {
    // A reader that keeps its accepted filters crosses to the executors serialized, often as
    // JSON, which has no NaN: the floats travel as their bits.
    let filters: Vec<Filter> = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0]
        .into_iter()
        .map(|v| Filter::Eq(col("x"), Value::Literal(Literal::Float64(Some(v)))))
        .chain([Filter::Lt(
            col("y"),
            Value::Literal(Literal::Float32(Some(f32::NAN))),
        )])
        .collect();
    let json = serde_json::to_string(&filters).expect("serialized");
    let back: Vec<Filter> = serde_json::from_str(&json).expect("deserialized");
    let bits = |f: &Filter| match f {
        Filter::Eq(_, Value::Literal(Literal::Float64(Some(v)))) => v.to_bits() as u128,
        Filter::Lt(_, Value::Literal(Literal::Float32(Some(v)))) => v.to_bits() as u128,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(
        back.iter().map(bits).collect::<Vec<_>>(),
        filters.iter().map(bits).collect::<Vec<_>>()
    );
}
