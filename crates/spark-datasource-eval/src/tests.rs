//! Evaluation against hand-computed rows.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields};

use spark_datasource_core::filters::{col, Column, Filter, Literal, Value};

use super::*;

fn lit(literal: Literal) -> Value {
    Value::Literal(literal)
}

/// id: 1, 2, NULL, 4, 5; x: 1.0, NaN, -0.0, NULL, +inf; name: "apple", NULL, "banana", "",
/// "app"; s.inner: a struct NULL in row 1, its field NULL in row 3.
fn batch() -> RecordBatch {
    let inner = Arc::new(Int64Array::from(vec![
        Some(10),
        Some(20),
        Some(30),
        None,
        Some(50),
    ]));
    let fields = Fields::from(vec![Field::new("inner", DataType::Int64, true)]);
    let s = StructArray::new(
        fields,
        vec![inner as ArrayRef],
        Some(vec![true, false, true, true, true].into()),
    );
    RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(vec![
                Some(1),
                Some(2),
                None,
                Some(4),
                Some(5),
            ])) as ArrayRef,
        ),
        (
            "x",
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(f64::NAN),
                Some(-0.0),
                None,
                Some(f64::INFINITY),
            ])),
        ),
        (
            "name",
            Arc::new(StringArray::from(vec![
                Some("apple"),
                None,
                Some("banana"),
                Some(""),
                Some("app"),
            ])),
        ),
        ("s", Arc::new(s)),
    ])
    .expect("a batch")
}

/// The rows where `filter` is TRUE.
fn rows(filter: Filter) -> Vec<usize> {
    let mask = evaluate(&filter, &batch()).expect("evaluates");
    assert_eq!(mask.null_count(), 0);
    (0..mask.len()).filter(|&i| mask.value(i)).collect()
}

#[test]
fn comparisons_are_never_true_on_null() {
    assert_eq!(rows(Filter::Gt(col("id"), 1i64.into())), [1, 3, 4]);
    assert_eq!(rows(Filter::Le(col("id"), 2i32.into())), [0, 1]);
    assert_eq!(rows(!Filter::Gt(col("id"), 1i64.into())), [0]);
    assert_eq!(
        rows(Filter::Eq(col("id"), lit(Literal::Int64(None)))),
        [] as [usize; 0]
    );
    assert_eq!(
        rows(!Filter::Eq(col("id"), lit(Literal::Null))),
        [] as [usize; 0]
    );
    assert_eq!(rows(Filter::Lt(5i64.into(), col("id"))), [] as [usize; 0]);
    assert_eq!(rows(Filter::Ge(4i64.into(), col("id"))), [0, 1, 3]);
}

#[test]
fn null_safe_equality_matches_nulls() {
    assert_eq!(
        rows(Filter::NullSafeEq(col("id"), lit(Literal::Int64(None)))),
        [2]
    );
    assert_eq!(
        rows(!Filter::NullSafeEq(col("id"), 2i64.into())),
        [0, 2, 3, 4]
    );
    assert_eq!(rows(Filter::IsNull(col("id"))), [2]);
    assert_eq!(rows(Filter::IsNotNull(col("id"))), [0, 1, 3, 4]);
}

#[test]
fn nan_equals_nan_and_is_above_infinity_and_zeros_are_equal() {
    assert_eq!(rows(Filter::Eq(col("x"), f64::NAN.into())), [1]);
    let other_nan = f64::from_bits(0xfff8_0000_0000_0001);
    assert_eq!(rows(Filter::Eq(col("x"), other_nan.into())), [1]);
    assert_eq!(rows(Filter::Gt(col("x"), f64::INFINITY.into())), [1]);
    assert_eq!(rows(Filter::Lt(col("x"), f64::NAN.into())), [0, 2, 4]);
    assert_eq!(rows(Filter::Eq(col("x"), 0.0f64.into())), [2]);
    assert_eq!(rows(Filter::Ge(col("x"), (-0.0f64).into())), [0, 1, 2, 4]);
}

#[test]
fn in_lists_follow_sql() {
    let list = |values: Vec<Value>| Filter::In(col("id"), values);
    assert_eq!(rows(list(vec![])), [] as [usize; 0]);
    // `NULL IN ()` is FALSE, so its negation keeps the NULL row.
    assert_eq!(rows(!list(vec![])), [0, 1, 2, 3, 4]);
    assert_eq!(rows(list(vec![1i64.into(), 4i64.into()])), [0, 3]);
    // A NULL in the list makes the rows that match nothing NULL, not FALSE.
    assert_eq!(rows(list(vec![1i64.into(), lit(Literal::Null)])), [0]);
    assert_eq!(
        rows(!list(vec![1i64.into(), lit(Literal::Null)])),
        [] as [usize; 0]
    );
    assert_eq!(rows(!list(vec![1i64.into()])), [1, 3, 4]);
}

#[test]
fn and_or_not_are_three_valued() {
    let null_id = || Filter::Eq(col("id"), 1i64.into());
    // Row 2 has a NULL id: NULL OR TRUE is TRUE, NULL AND FALSE is FALSE.
    assert_eq!(rows(null_id().or(Filter::AlwaysTrue)), [0, 1, 2, 3, 4]);
    assert_eq!(rows(!(null_id().and(Filter::AlwaysFalse))), [0, 1, 2, 3, 4]);
    assert_eq!(rows(!(null_id().and(Filter::AlwaysTrue))), [1, 3, 4]);
    assert_eq!(rows(null_id().or(Filter::AlwaysFalse)), [0]);
}

#[test]
fn strings_compare_as_bytes_and_match_prefixes() {
    assert_eq!(rows(Filter::StartsWith(col("name"), "app".into())), [0, 4]);
    assert_eq!(rows(Filter::EndsWith(col("name"), "na".into())), [2]);
    assert_eq!(rows(Filter::Contains(col("name"), "".into())), [0, 2, 3, 4]);
    assert_eq!(rows(!Filter::Contains(col("name"), "an".into())), [0, 3, 4]);
    assert_eq!(rows(Filter::Lt(col("name"), "apple".into())), [3, 4]);
    assert_eq!(
        rows(Filter::StartsWith(col("name"), lit(Literal::Utf8(None)))),
        [] as [usize; 0]
    );
}

#[test]
fn nested_fields_are_null_where_their_struct_is() {
    let inner = || Value::Column(Column::nested(["s", "inner"]));
    assert_eq!(rows(Filter::IsNull(inner())), [1, 3]);
    assert_eq!(rows(Filter::Ge(inner(), 20i64.into())), [2, 4]);
}

#[test]
fn literals_and_columns_on_both_sides() {
    assert_eq!(rows(Filter::Lt(1i64.into(), 2i64.into())), [0, 1, 2, 3, 4]);
    assert_eq!(
        rows(Filter::Eq(lit(Literal::Null), 2i64.into())),
        [] as [usize; 0]
    );
    assert_eq!(rows(Filter::Eq(col("id"), col("id"))), [0, 1, 3, 4]);
}

#[test]
fn filter_batch_keeps_the_rows_of_every_conjunct() {
    let kept = filter_batch(
        &[
            Filter::Gt(col("id"), 1i64.into()),
            Filter::IsNotNull(col("name")),
        ],
        &batch(),
    )
    .expect("filters");
    let ids = kept
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("ids");
    assert_eq!(ids.values(), &[4, 5]);
}

#[test]
fn what_cannot_be_evaluated_is_an_error() {
    let error = |filter: Filter| {
        evaluate(&filter, &batch())
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        error(Filter::Eq(col("nope"), 1i64.into())),
        "the batch has no column `nope`"
    );
    assert_eq!(
        error(Filter::Eq(col("id"), "1".into())),
        "cannot compare a column of type Int64 with the literal Utf8(Some(\"1\"))"
    );
    assert_eq!(
        error(Filter::Unsupported(vec![99])),
        "cannot evaluate a predicate that this version does not know (operator code 99): do \
         not accept it"
    );
    let mask: BooleanArray = evaluate(&Filter::AlwaysTrue, &batch()).expect("evaluates");
    assert_eq!(mask.true_count(), 5);
}
