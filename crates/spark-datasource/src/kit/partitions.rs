//! Range partitions of a read, with the strides of Spark's JDBC source: the options
//! `partitionColumn`, `lowerBound`, `upperBound` and `numPartitions` of a JDBC read give the
//! same partitions here, boundary for boundary (Spark 3.4 and later, `JDBCRelation.columnPartition`).
//!
//! The bounds only spread the rows: every row is read once, those below `lowerBound` and the
//! NULLs in the first partition, those above `upperBound` in the last.
//!
//! ```
//! use spark_datasource::kit::partitions::{plan, RangePartition};
//!
//! // `numPartitions` 3 over `id` from 0 to 10.
//! let parts = plan(0, 10, 3)?;
//! assert_eq!(
//!     parts,
//!     vec![
//!         RangePartition { lower: None, upper: Some(3), nulls: true },
//!         RangePartition { lower: Some(3), upper: Some(6), nulls: false },
//!         RangePartition { lower: Some(6), upper: None, nulls: false },
//!     ]
//! );
//! # Ok::<(), spark_datasource::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// One partition of a range: the rows whose column is at least `lower` (none: no lower bound)
/// and below `upper` (none: no upper bound), and the rows where it is NULL when `nulls`.
/// The values are those of the column as Spark counts them: integers, days since 1970-01-01 of
/// a `date`, microseconds since 1970-01-01T00:00:00Z of a `timestamp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangePartition {
    /// The inclusive lower bound.
    pub lower: Option<i64>,
    /// The exclusive upper bound.
    pub upper: Option<i64>,
    /// Whether the partition holds the rows where the column is NULL (the first one).
    pub nulls: bool,
}

impl RangePartition {
    /// The one partition of an unpartitioned read: every value, and the NULLs.
    pub fn all() -> Self {
        RangePartition {
            lower: None,
            upper: None,
            nulls: true,
        }
    }

    /// Whether `value` (NULL: `None`) belongs to this partition.
    pub fn contains(&self, value: Option<i64>) -> bool {
        match value {
            None => self.nulls,
            Some(v) => self.lower.is_none_or(|l| v >= l) && self.upper.is_none_or(|u| v < u),
        }
    }
}

/// The partitions of a read over a column from `lower` to `upper` in at most `partitions`
/// parts, as Spark's JDBC source plans them: one partition that reads everything when
/// `partitions` is 1 or less or the bounds are equal; fewer partitions than asked when the
/// range holds fewer values; otherwise `partitions` of them, whose boundaries are Spark's to the
/// value (a stride computed in 18-digit decimals, and the first boundary shifted by half of
/// what the rounding of the stride lost).
///
/// # Errors
///
/// When `lower` is above `upper`, with Spark's message.
pub fn plan(lower: i64, upper: i64, partitions: i64) -> Result<Vec<RangePartition>> {
    if partitions <= 1 || lower == upper {
        return Ok(vec![RangePartition {
            lower: None,
            upper: None,
            nulls: true,
        }]);
    }
    if lower > upper {
        return Err(Error::msg(format!(
            "the lower bound of the partitioning column is larger than the upper bound: \
             lowerBound {lower}, upperBound {upper}; swap them"
        )));
    }
    // The difference overflows for bounds far apart: Spark then keeps the number asked.
    let span = upper.wrapping_sub(lower);
    let n = if span >= partitions || span < 0 {
        partitions
    } else {
        span
    };
    let (stride, first) = stride(lower, upper, n)?;
    let mut current = first;
    let mut parts = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    for i in 0..n {
        let low = (i != 0).then_some(current);
        current = current.wrapping_add(stride);
        let high = (i != n - 1).then_some(current);
        parts.push(RangePartition {
            lower: low,
            upper: high,
            nulls: i == 0,
        });
    }
    Ok(parts)
}

/// 10^18: Spark computes the stride with 18 decimal places.
const SCALE: i128 = 1_000_000_000_000_000_000;

/// The stride and the first boundary's start, as Spark computes them: `upper / n` and
/// `lower / n` each rounded half-even to 18 places, their difference truncated to the stride,
/// and the start moved up by half of the strides that the truncation loses over `n`
/// partitions, computed in 34-digit decimals and rounded half-up.
fn stride(lower: i64, upper: i64, n: i64) -> Result<(i64, i64)> {
    let n128 = i128::from(n);
    let precise = div_half_even(i128::from(upper) * SCALE, n128)
        - div_half_even(i128::from(lower) * SCALE, n128);
    let stride = precise / SCALE;
    if stride <= 0 {
        return Err(Error::msg(format!(
            "cannot split the range from {lower} to {upper} into {n} partitions"
        )));
    }
    // What the truncation lost, in units of 10^-18, over the n partitions, in strides:
    // lost = fraction * n / stride, then (lost / 2) * stride rounded half-up, each step
    // rounded to 34 significant digits as Scala's BigDecimal does.
    let fraction = u128::try_from(precise - stride * SCALE).unwrap_or(0);
    let stride_u = u128::try_from(stride).unwrap_or(0);
    let lost = Decimal::quotient(
        fraction * u128::try_from(n).unwrap_or(0),
        stride_u * SCALE as u128,
    );
    let shift = lost
        .times_digits(&[5], -1)
        .times_u128(stride_u)
        .round_half_up();
    let stride = i64::try_from(stride).map_err(|_| {
        Error::msg(format!(
            "cannot split the range from {lower} to {upper} into {n} partitions"
        ))
    })?;
    Ok((stride, lower.wrapping_add(shift)))
}

/// `a / b` rounded half to even, for `b > 0`.
fn div_half_even(a: i128, b: i128) -> i128 {
    let (q, r) = (a.div_euclid(b), a.rem_euclid(b));
    match (2 * r).cmp(&b) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    }
}

/// The significant digits of Java's `MathContext.DECIMAL128`.
const PRECISION: usize = 34;

/// A non-negative decimal, `digits × 10^exponent`, rounded to [`PRECISION`] digits half-even
/// after each step, as `BigDecimal` arithmetic with `DECIMAL128` is.
#[derive(Debug, Clone, PartialEq)]
struct Decimal {
    /// Most significant first, no leading zero (empty for zero).
    digits: Vec<u8>,
    exponent: i32,
}

impl Decimal {
    /// `a / b` (`b > 0`, `b * 10` below 2^127), to 34 digits.
    fn quotient(a: u128, b: u128) -> Decimal {
        let (mut digits, mut exponent) = (Vec::new(), 0i32);
        let mut whole: Vec<u8> = (a / b).to_string().bytes().map(|d| d - b'0').collect();
        if whole == [0] {
            whole.clear();
        }
        digits.append(&mut whole);
        let mut rest = a % b;
        // One digit beyond the precision, then whether anything remains, decide the rounding.
        while rest != 0 && digits.len() <= PRECISION {
            rest *= 10;
            exponent -= 1;
            let digit = (rest / b) as u8;
            rest %= b;
            if !(digits.is_empty() && digit == 0) {
                digits.push(digit);
            }
        }
        Decimal { digits, exponent }.rounded(rest != 0)
    }

    /// `self × (digits × 10^exponent)`, to 34 digits.
    fn times_digits(&self, other: &[u8], exponent: i32) -> Decimal {
        let mut product = vec![0u32; self.digits.len() + other.len()];
        for (i, a) in self.digits.iter().enumerate().rev() {
            for (j, b) in other.iter().enumerate().rev() {
                product[i + j + 1] += u32::from(*a) * u32::from(*b);
            }
        }
        for k in (1..product.len()).rev() {
            let carry = product[k] / 10;
            product[k] %= 10;
            product[k - 1] += carry;
        }
        let digits: Vec<u8> = product
            .into_iter()
            .map(|d| d as u8)
            .skip_while(|d| *d == 0)
            .collect();
        Decimal {
            digits,
            exponent: self.exponent + exponent,
        }
        .rounded(false)
    }

    fn times_u128(&self, factor: u128) -> Decimal {
        let digits: Vec<u8> = factor.to_string().bytes().map(|d| d - b'0').collect();
        self.times_digits(&digits, 0)
    }

    /// Rounded half-even to [`PRECISION`] digits; `sticky`: something non-zero lies beyond
    /// the digits.
    fn rounded(mut self, sticky: bool) -> Decimal {
        if self.digits.len() <= PRECISION {
            return self;
        }
        let cut = self.digits.len() - PRECISION;
        let tail = self.digits.split_off(PRECISION);
        self.exponent += cut as i32;
        let above_half =
            tail[0] > 5 || (tail[0] == 5 && (sticky || tail[1..].iter().any(|d| *d != 0)));
        let half = tail[0] == 5 && !above_half;
        let odd = self.digits.last().is_some_and(|d| d % 2 == 1);
        if above_half || (half && odd) {
            self.increment();
        }
        self
    }

    /// Adds one unit of the last digit.
    fn increment(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                return;
            }
        }
        self.digits.insert(0, 1);
        self.digits.pop();
        self.exponent += 1;
    }

    /// Rounded half-up to an integer (the values here are far below `i64::MAX`).
    fn round_half_up(&self) -> i64 {
        let point = self.digits.len() as i32 + self.exponent;
        let whole_len = usize::try_from(point.max(0)).unwrap_or(0);
        let mut value: i64 = 0;
        for k in 0..whole_len {
            let digit = self.digits.get(k).copied().unwrap_or(0);
            value = value.saturating_mul(10).saturating_add(i64::from(digit));
        }
        let first_fraction = if point < 0 {
            0
        } else {
            self.digits.get(whole_len).copied().unwrap_or(0)
        };
        value + i64::from(first_fraction >= 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(parts: &[RangePartition]) -> Vec<(Option<i64>, Option<i64>)> {
        parts.iter().map(|p| (p.lower, p.upper)).collect()
    }

    #[test]
    fn one_partition_reads_everything() -> Result<()> {
        let all = RangePartition {
            lower: None,
            upper: None,
            nulls: true,
        };
        assert_eq!(plan(0, 100, 1)?, vec![all]);
        assert_eq!(plan(5, 5, 4)?, vec![all]);
        Ok(())
    }

    #[test]
    fn a_range_with_fewer_values_than_partitions_gives_one_per_value() -> Result<()> {
        assert_eq!(
            bounds(&plan(0, 3, 10)?),
            vec![(None, Some(1)), (Some(1), Some(2)), (Some(2), None)]
        );
        Ok(())
    }

    /// The boundaries that Spark 4.3's JDBC source plans for these options
    /// (`JDBCRelation.columnPartition`, called through py4j), where a plain
    /// `upper / n - lower / n` stride from `lower` splits one value lower (`k < 142857` for the
    /// first). Dates are days, timestamps microseconds, as the planner takes them.
    #[test]
    fn the_boundaries_are_those_of_spark_jdbc() -> Result<()> {
        let cases: [(i64, i64, i64, &[i64]); 10] = [
            (
                1,
                1_000_000,
                7,
                &[142858, 285715, 428572, 571429, 714286, 857143],
            ),
            (1, 1000, 10, &[105, 204, 303, 402, 501, 600, 699, 798, 897]),
            (0, 10, 3, &[3, 6]),
            (0, 3, 10, &[1, 2]),
            (-7, 93, 6, &[11, 27, 43, 59, 75]),
            (0, 1000, 7, &[145, 287, 429, 571, 713, 855]),
            (3, 100, 9, &[17, 27, 37, 47, 57, 67, 77, 87]),
            (
                i64::MIN,
                i64::MAX,
                4,
                &[-4611686018427387903, 0, 4611686018427387903],
            ),
            // date: 2020-01-01 to 2020-12-31 in 4.
            (18262, 18627, 4, &[18354, 18445, 18536]),
            // timestamp: 2020-01-01 00:00 to 2020-01-02 00:00 UTC in 5.
            (
                1577836800000000,
                1577923200000000,
                5,
                &[
                    1577854080000000,
                    1577871360000000,
                    1577888640000000,
                    1577905920000000,
                ],
            ),
        ];
        for (lower, upper, n, boundaries) in cases {
            let parts = plan(lower, upper, n)?;
            let mut expected = Vec::new();
            for (i, b) in boundaries.iter().enumerate() {
                let low = (i > 0).then(|| boundaries[i - 1]);
                expected.push((low, Some(*b)));
            }
            expected.push((boundaries.last().copied(), None));
            assert_eq!(bounds(&parts), expected, "{lower}..{upper} in {n}");
        }
        Ok(())
    }

    #[test]
    fn bounds_far_apart_do_not_overflow() -> Result<()> {
        let parts = plan(i64::MIN, i64::MAX, 4)?;
        assert_eq!(parts.len(), 4);
        assert!(parts.windows(2).all(|w| w[0].upper == w[1].lower));
        Ok(())
    }

    #[test]
    fn every_value_and_null_is_in_exactly_one_partition() -> Result<()> {
        for (lower, upper, n) in [(0, 10, 3), (-7, 93, 6), (1, 1_000_000, 7), (3, 4, 2)] {
            let parts = plan(lower, upper, n)?;
            for v in [
                None,
                Some(i64::MIN),
                Some(lower - 1),
                Some(lower),
                Some(upper),
                Some(i64::MAX),
            ]
            .into_iter()
            .chain((lower..upper).step_by(7).map(Some))
            {
                let holders = parts.iter().filter(|p| p.contains(v)).count();
                assert_eq!(holders, 1, "{v:?} in {lower}..{upper}/{n}: {parts:?}");
            }
        }
        Ok(())
    }

    #[test]
    fn reversed_bounds_are_refused_with_the_fix() {
        let message = plan(10, 0, 2).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            message,
            "the lower bound of the partitioning column is larger than the upper bound: \
             lowerBound 10, upperBound 0; swap them"
        );
    }

    #[test]
    fn decimals_round_half_even_to_34_digits() {
        let third = Decimal::quotient(1, 3);
        assert_eq!(third.digits, vec![3; 34]);
        assert_eq!(third.exponent, -34);
        let two_thirds = Decimal::quotient(2, 3);
        assert_eq!(two_thirds.digits.last(), Some(&7));
        // 1/3 halved then tripled is just below one half in 34 digits: Spark rounds it down.
        let back = third.times_digits(&[5], -1).times_u128(3);
        assert_eq!(back.round_half_up(), 0);
        assert_eq!(Decimal::quotient(5, 10).round_half_up(), 1);
    }
}
