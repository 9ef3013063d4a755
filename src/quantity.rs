//! Exact Kubernetes resource quantities (`k8s.io/apimachinery/pkg/api/resource.Quantity`).
//!
//! Resource values such as `nvidia.com/gpu: 1`, `memory: 1.5Gi` or `cpu: 500m` must be
//! compared exactly: floating point would make `0.1 + 0.2` style errors show up as bogus
//! lint findings. A [`Quantity`] is therefore stored as `num / 10^scale` with an `i128`
//! numerator and `0 <= scale <= 9`.
//!
//! Grammar accepted (the one documented by Kubernetes):
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <signedNumber>    ::= [+|-] <number>
//! <number>          ::= <digits> | <digits>. | <digits>.<digits> | .<digits>
//! <suffix>          ::= <binarySI> | <decimalSI> | <decimalExponent>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= e <signedInteger> | E <signedInteger>
//! ```
//!
//! Like Kubernetes, non-zero values finer than one nano (`1n`) are rounded up, away from
//! zero, to the next nano, so `0.1n` is `1n`. Kubernetes' scanner is laxer than its own
//! grammar for a few degenerate strings (`Gi`, `-`, `.` are read as zero there); this module
//! rejects them because in a manifest they are always mistakes.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Finest precision Kubernetes keeps (nano, `10^-9`).
const MAX_SCALE: u32 = 9;

const KI: i128 = 1 << 10;
const MI: i128 = 1 << 20;
const GI: i128 = 1 << 30;

/// Binary units, largest first, for [`format_bytes_binary`].
const BINARY_UNITS: [(&str, i128); 6] = [
    ("Ei", 1 << 60),
    ("Pi", 1 << 50),
    ("Ti", 1 << 40),
    ("Gi", GI),
    ("Mi", MI),
    ("Ki", KI),
];

/// An exact Kubernetes quantity: `num / 10^scale`.
///
/// The representation is normalised (no trailing zeros in `num` while `scale > 0`), so the
/// derived `Eq`/`Hash` agree with numeric equality: `1Gi == 1073741824`, `1000m == 1`,
/// `0.5 == 500m`. Whole numbers up to `i128::MAX` in magnitude are representable; values
/// with a fractional part must fit `i128` once multiplied by `10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Quantity {
    num: i128,
    scale: u32,
}

impl Quantity {
    /// The value zero.
    pub const ZERO: Quantity = Quantity { num: 0, scale: 0 };

    /// Builds `num / 10^scale` in normal form. `scale` must be at most [`MAX_SCALE`].
    fn normalized(mut num: i128, mut scale: u32) -> Quantity {
        while scale > 0 && num % 10 == 0 {
            num /= 10;
            scale -= 1;
        }
        Quantity { num, scale }
    }

    /// True when the value is an integer (e.g. `2`, `1Gi`, `3000m`), as GPU counts must be.
    pub fn is_whole(&self) -> bool {
        self.scale == 0
    }

    /// True when the value is below zero (`-0` is zero, not negative).
    pub fn is_negative(&self) -> bool {
        self.num < 0
    }

    /// True when the value is exactly zero.
    pub fn is_zero(&self) -> bool {
        self.num == 0
    }

    /// The exact integer value, or `None` if there is a fractional part.
    ///
    /// Use for extended resources such as GPUs, which Kubernetes only allows as integers.
    pub fn as_whole_i128(&self) -> Option<i128> {
        self.is_whole().then_some(self.num)
    }

    /// The value rounded up (towards +infinity) to an integer, e.g. for memory in bytes,
    /// where Kubernetes never hands out a fraction of a byte.
    ///
    /// `None` only if the result would not fit `i128` (cannot happen for parsed values, but
    /// keeps the arithmetic checked).
    pub fn ceil_bytes(&self) -> Option<i128> {
        ceil_div(self.num, pow10(self.scale))
    }

    /// The value in thousandths (millicores for CPU), rounded up towards +infinity.
    ///
    /// `None` if `value * 1000` overflows `i128`.
    pub fn millis_ceil(&self) -> Option<i128> {
        if self.scale <= 3 {
            self.num.checked_mul(pow10(3 - self.scale))
        } else {
            ceil_div(self.num, pow10(self.scale - 3))
        }
    }

    /// The exact sum; `None` on overflow.
    pub fn checked_add(self, other: Quantity) -> Option<Quantity> {
        let scale = self.scale.max(other.scale);
        let a = self.num.checked_mul(pow10(scale - self.scale))?;
        let b = other.num.checked_mul(pow10(scale - other.scale))?;
        Some(Quantity::normalized(a.checked_add(b)?, scale))
    }

    /// The exact difference; `None` on overflow.
    pub fn checked_sub(self, other: Quantity) -> Option<Quantity> {
        self.checked_add(Quantity {
            num: other.num.checked_neg()?,
            scale: other.scale,
        })
    }

    /// The exact product with a count (a per-pod figure times its pods); `None` on overflow.
    pub fn checked_mul_count(self, n: u64) -> Option<Quantity> {
        let num = self.num.checked_mul(i128::from(n))?;
        Some(Quantity::normalized(num, self.scale))
    }

    /// Integer part (floor) and the fraction in nanos (`0..10^9`), for overflow-free ordering.
    fn floor_and_nanos(&self) -> (i128, i128) {
        let unit = pow10(self.scale);
        let floor = self.num.div_euclid(unit);
        let frac = self.num.rem_euclid(unit) * pow10(MAX_SCALE - self.scale);
        (floor, frac)
    }
}

impl From<i128> for Quantity {
    fn from(value: i128) -> Self {
        Quantity {
            num: value,
            scale: 0,
        }
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.floor_and_nanos().cmp(&other.floor_and_nanos())
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).map_err(|kind| QuantityError {
            input: s.to_owned(),
            kind,
        })
    }
}

/// Why a string is not a valid quantity; see [`QuantityError::kind`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuantityErrorKind {
    /// The string was empty.
    Empty,
    /// No digits before the suffix (e.g. `Gi`, `-`, `.`, `--1`).
    MissingNumber,
    /// The text after the number is not a known suffix (e.g. `gi`, `KB`, ` Gi`, `.5`).
    InvalidSuffix(String),
    /// An `e`/`E` exponent without a valid integer (e.g. `e`, `e+`), or outside `i64`.
    InvalidExponent(String),
    /// The magnitude does not fit the exact `i128` representation.
    Overflow,
}

/// Error returned when parsing a [`Quantity`] fails; displays as
/// `invalid quantity "<input>": <reason>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    input: String,
    kind: QuantityErrorKind,
}

impl QuantityError {
    /// The string that failed to parse.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// What was wrong with it.
    pub fn kind(&self) -> &QuantityErrorKind {
        &self.kind
    }
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid quantity {:?}: ", self.input)?;
        match &self.kind {
            QuantityErrorKind::Empty => f.write_str("empty string"),
            QuantityErrorKind::MissingNumber => f.write_str(
                "expected a number (digits with an optional decimal point) after the optional sign",
            ),
            QuantityErrorKind::InvalidSuffix(s) => write!(
                f,
                "unknown suffix {s:?} (expected one of Ki Mi Gi Ti Pi Ei, n u m k M G T P E, \
                 an exponent such as e3, or nothing)"
            ),
            QuantityErrorKind::InvalidExponent(s) => write!(
                f,
                "invalid exponent {s:?} (expected e or E followed by an optionally signed \
                 integer that fits in 64 bits)"
            ),
            QuantityErrorKind::Overflow => {
                f.write_str("value out of range (its magnitude overflows a 128-bit integer)")
            }
        }
    }
}

impl std::error::Error for QuantityError {}

/// Scaling applied by a suffix.
enum Multiplier {
    Pow10(i64),
    Pow2(u32),
}

fn parse(s: &str) -> Result<Quantity, QuantityErrorKind> {
    if s.is_empty() {
        return Err(QuantityErrorKind::Empty);
    }
    let bytes = s.as_bytes();
    let mut pos = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            pos = 1;
            true
        }
        Some(b'+') => {
            pos = 1;
            false
        }
        _ => false,
    };
    let int_start = pos;
    while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    let int_digits = &bytes[int_start..pos];
    let mut frac_digits: &[u8] = &[];
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
        let frac_start = pos;
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        frac_digits = &bytes[frac_start..pos];
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return Err(QuantityErrorKind::MissingNumber);
    }
    // `pos` only advanced over ASCII bytes, so it is a char boundary.
    let multiplier = parse_suffix(&s[pos..])?;

    // Little-endian decimal digits of the mantissa, leading zeros dropped.
    let mut digits: Vec<u8> = int_digits
        .iter()
        .chain(frac_digits)
        .rev()
        .map(|b| b - b'0')
        .collect();
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let mut exp10 = -(frac_digits.len() as i128);
    match multiplier {
        Multiplier::Pow10(e) => exp10 += i128::from(e),
        Multiplier::Pow2(bits) => {
            for _ in 0..bits {
                double_digits(&mut digits);
            }
        }
    }
    from_decimal(negative, &digits, exp10)
}

fn parse_suffix(suffix: &str) -> Result<Multiplier, QuantityErrorKind> {
    use Multiplier::{Pow10, Pow2};
    Ok(match suffix {
        "" => Pow10(0),
        "n" => Pow10(-9),
        "u" => Pow10(-6),
        "m" => Pow10(-3),
        "k" => Pow10(3),
        "M" => Pow10(6),
        "G" => Pow10(9),
        "T" => Pow10(12),
        "P" => Pow10(15),
        "E" => Pow10(18),
        "Ki" => Pow2(10),
        "Mi" => Pow2(20),
        "Gi" => Pow2(30),
        "Ti" => Pow2(40),
        "Pi" => Pow2(50),
        "Ei" => Pow2(60),
        _ => return parse_exponent(suffix).map(Pow10),
    })
}

/// Parses `e<int>` / `E<int>`; a lone `E` (exa) is handled before this is called.
fn parse_exponent(suffix: &str) -> Result<i64, QuantityErrorKind> {
    let Some(rest) = suffix.strip_prefix(|c| c == 'e' || c == 'E') else {
        return Err(QuantityErrorKind::InvalidSuffix(suffix.to_owned()));
    };
    let digits = rest.strip_prefix(|c| c == '+' || c == '-').unwrap_or(rest);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        // Only blame the exponent when the text looks like one (`e`, `e+`, `E--1`, `e1.5`).
        let exponent_like = rest
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.'));
        return Err(if exponent_like {
            QuantityErrorKind::InvalidExponent(suffix.to_owned())
        } else {
            QuantityErrorKind::InvalidSuffix(suffix.to_owned())
        });
    }
    rest.parse::<i64>()
        .map_err(|_| QuantityErrorKind::InvalidExponent(suffix.to_owned()))
}

/// Multiplies a little-endian decimal digit vector by two in place.
fn double_digits(digits: &mut Vec<u8>) {
    let mut carry = 0;
    for d in digits.iter_mut() {
        let v = *d * 2 + carry;
        *d = v % 10;
        carry = v / 10;
    }
    if carry > 0 {
        digits.push(carry);
    }
}

/// Builds `±digits * 10^exp10` (digits little-endian, no leading zeros), rounding any part
/// finer than a nano up, away from zero, as Kubernetes does.
fn from_decimal(negative: bool, digits: &[u8], exp10: i128) -> Result<Quantity, QuantityErrorKind> {
    let trailing_zeros = digits.iter().take_while(|&&d| d == 0).count();
    let significant = &digits[trailing_zeros..];
    if significant.is_empty() {
        return Ok(Quantity::ZERO);
    }
    let exp10 = exp10 + trailing_zeros as i128;
    let (magnitude, scale) = if exp10 >= 0 {
        let factor = u32::try_from(exp10)
            .ok()
            .and_then(|e| 10i128.checked_pow(e))
            .ok_or(QuantityErrorKind::Overflow)?;
        let m = digits_to_i128(significant)?
            .checked_mul(factor)
            .ok_or(QuantityErrorKind::Overflow)?;
        (m, 0)
    } else if -exp10 <= i128::from(MAX_SCALE) {
        // -exp10 is in 1..=9 here.
        (digits_to_i128(significant)?, (-exp10) as u32)
    } else {
        // Drop the digits below a nano; they are non-zero (significant[0] != 0), so round up.
        let drop = usize::try_from(-exp10 - i128::from(MAX_SCALE)).unwrap_or(usize::MAX);
        let kept = significant.get(drop..).unwrap_or(&[]);
        let m = digits_to_i128(kept)?
            .checked_add(1)
            .ok_or(QuantityErrorKind::Overflow)?;
        (m, MAX_SCALE)
    };
    let num = if negative { -magnitude } else { magnitude };
    Ok(Quantity::normalized(num, scale))
}

/// Converts little-endian decimal digits to a non-negative `i128`.
fn digits_to_i128(digits: &[u8]) -> Result<i128, QuantityErrorKind> {
    digits.iter().rev().try_fold(0i128, |acc, &d| {
        acc.checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(d)))
            .ok_or(QuantityErrorKind::Overflow)
    })
}

/// `10^exp` for `exp <= MAX_SCALE`.
fn pow10(exp: u32) -> i128 {
    10i128.pow(exp)
}

/// `ceil(n / d)` for `d > 0`.
fn ceil_div(n: i128, d: i128) -> Option<i128> {
    let q = n.div_euclid(d);
    if n.rem_euclid(d) == 0 {
        Some(q)
    } else {
        q.checked_add(1)
    }
}

/// A measured size for people, in GiB with one decimal as Kubernetes spells it (`10.2Gi`): every
/// message and report shows memory, GPU memory included, in this one unit.
pub fn gib(bytes: f64) -> String {
    format!("{:.1}Gi", bytes / GI as f64)
}

/// Formats a byte count with the largest binary suffix that divides it exactly, so
/// suggestions read like hand-written manifests: `34359738368` -> `32Gi`,
/// `1610612736` -> `1536Mi`, `1000` -> `1000`.
pub fn format_bytes_binary(bytes: i128) -> String {
    if bytes != 0 {
        for (suffix, unit) in BINARY_UNITS {
            if bytes % unit == 0 {
                return format!("{}{suffix}", bytes / unit);
            }
        }
    }
    bytes.to_string()
}

/// Formats millicores the way Kubernetes users write CPU: whole cores without a suffix
/// (`2000` -> `2`), otherwise with `m` (`500` -> `500m`, `1500` -> `1500m`).
pub fn format_millicores(m: i128) -> String {
    if m % 1000 == 0 {
        (m / 1000).to_string()
    } else {
        format!("{m}m")
    }
}

/// Rounds a byte count up to a value that reads well in a suggested fix.
///
/// Rule, chosen so the step stays small relative to the value:
/// - `>= 10Gi`: up to a whole `Gi`;
/// - `1Gi ..< 10Gi`: up to a multiple of `256Mi`;
/// - `< 1Gi`: up to a multiple of `64Mi`.
///
/// Non-positive inputs are returned unchanged. If rounding up would overflow `i128`, the
/// largest multiple of the step that fits is returned instead.
pub fn round_up_bytes_readable(bytes: i128) -> i128 {
    if bytes <= 0 {
        return bytes;
    }
    let step = if bytes >= 10 * GI {
        GI
    } else if bytes >= GI {
        256 * MI
    } else {
        64 * MI
    };
    let rem = bytes % step;
    if rem == 0 {
        bytes
    } else {
        bytes.checked_add(step - rem).unwrap_or(bytes - rem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        match s.parse::<Quantity>() {
            Ok(v) => v,
            Err(e) => panic!("{s:?} should parse: {e}"),
        }
    }

    fn err(s: &str) -> QuantityErrorKind {
        match s.parse::<Quantity>() {
            Ok(v) => panic!("{s:?} should be rejected, got {v:?}"),
            Err(e) => e.kind().clone(),
        }
    }

    /// Exact value as (numerator, scale).
    fn parts(s: &str) -> (i128, u32) {
        let v = q(s);
        (v.num, v.scale)
    }

    fn int(v: i128) -> Quantity {
        Quantity::from(v)
    }

    #[test]
    fn decimal_si_suffixes() {
        assert_eq!(parts("1n"), (1, 9));
        assert_eq!(parts("1u"), (1, 6));
        assert_eq!(parts("1m"), (1, 3));
        assert_eq!(q("1"), int(1));
        assert_eq!(q("1k"), int(1_000));
        assert_eq!(q("1M"), int(1_000_000));
        assert_eq!(q("1G"), int(1_000_000_000));
        assert_eq!(q("1T"), int(1_000_000_000_000));
        assert_eq!(q("1P"), int(1_000_000_000_000_000));
        assert_eq!(q("1E"), int(1_000_000_000_000_000_000));
        assert_eq!(q("7E"), int(7_000_000_000_000_000_000));
    }

    #[test]
    fn binary_si_suffixes() {
        assert_eq!(q("1Ki"), int(1 << 10));
        assert_eq!(q("1Mi"), int(1 << 20));
        assert_eq!(q("1Gi"), int(1 << 30));
        assert_eq!(q("1Ti"), int(1 << 40));
        assert_eq!(q("1Pi"), int(1 << 50));
        assert_eq!(q("1Ei"), int(1 << 60));
        assert_eq!(q("32Gi"), int(34_359_738_368));
        assert_eq!(q("1536Mi"), q("1.5Gi"));
        assert_eq!(q("-2Ki"), int(-2048));
    }

    #[test]
    fn exponents() {
        assert_eq!(q("1e3"), int(1000));
        assert_eq!(q("1E3"), int(1000));
        assert_eq!(q("1e+3"), int(1000));
        assert_eq!(q("1e0"), int(1));
        assert_eq!(q("12E-3"), q("12m"));
        assert_eq!(parts("12E-3"), (12, 3));
        assert_eq!(q("1.5e2"), int(150));
        assert_eq!(q("-1.5e-1"), q("-150m"));
        assert_eq!(q("1e-9"), q("1n"));
        assert_eq!(q("5.e1"), int(50));
        assert_eq!(q(".5E1"), int(5));
        assert_eq!(q("0e999999999999"), Quantity::ZERO);
        assert_eq!(q("1e38"), int(10i128.pow(38)));
        // "E" alone is exa, "E<int>" is an exponent.
        assert_ne!(q("1E"), q("1E1"));
        assert_eq!(q("1E18"), q("1E"));
    }

    #[test]
    fn milli_and_decimals() {
        assert_eq!(parts("1.5"), (15, 1));
        assert_eq!(q("1.5"), q("1500m"));
        assert_eq!(q(".5"), q("500m"));
        assert_eq!(q("5."), int(5));
        assert_eq!(q("+5"), int(5));
        assert_eq!(q("-.5"), q("-500m"));
        assert_eq!(q("0.5Gi"), int(536_870_912));
        assert_eq!(q("+1.5Gi"), int(1_610_612_736));
        assert_eq!(q("1.5Ki"), int(1536));
        assert_eq!(parts("0.1Ki"), (1024, 1));
        assert_eq!(parts("0.001Ki"), (1024, 3));
        assert_eq!(q("250m").millis_ceil(), Some(250));
        assert_eq!(q("0.250"), q("250m"));
        assert_eq!(parts("000123.4500"), (12345, 2));
        assert_eq!(q("1.000"), int(1));
    }

    #[test]
    fn sub_nano_rounds_up_away_from_zero() {
        assert_eq!(q("0.1n"), q("1n"));
        assert_eq!(q("1.5n"), q("2n"));
        assert_eq!(q("-1.5n"), q("-2n"));
        assert_eq!(q("1.0000000001"), q("1000000001n"));
        assert_eq!(q("1e-10"), q("1n"));
        assert_eq!(q("1e-9223372036854775808"), q("1n"));
        assert_eq!(
            q("0.0000000000000000000000000000000000000000000000001"),
            q("1n")
        );
        assert_eq!(
            q("0.0000000000000000000000000000000000000000000000000"),
            int(0)
        );
        assert_eq!(q("0.0000000000001Ki"), q("1n"));
    }

    #[test]
    fn required_equalities() {
        assert_eq!(q("1Gi"), q("1073741824"));
        assert_eq!(q("1000m"), q("1"));
        assert_eq!(q("0.5"), q("500m"));
        assert_eq!(q("1k"), q("1e3"));
        assert_eq!(q("1M"), q("1000k"));
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("1000000u"), q("1"));
        assert_eq!(q("1000n"), q("1u"));
        assert_eq!(q("-0"), q("0"));
        assert_eq!(q("0Gi"), Quantity::ZERO);
    }

    #[test]
    fn predicates_and_conversions() {
        assert!(q("2").is_whole());
        assert!(q("3000m").is_whole());
        assert!(!q("1.5").is_whole());
        assert!(q("-1m").is_negative());
        assert!(!q("-0").is_negative());
        assert!(q("-0").is_zero());
        assert!(q("0.0m").is_zero());
        assert!(!q("1n").is_zero());

        assert_eq!(q("2").as_whole_i128(), Some(2));
        assert_eq!(q("2000m").as_whole_i128(), Some(2));
        assert_eq!(q("1.5").as_whole_i128(), None);
        assert_eq!(q("1Gi").as_whole_i128(), Some(1 << 30));

        assert_eq!(q("1.5").ceil_bytes(), Some(2));
        assert_eq!(q("-1.5").ceil_bytes(), Some(-1));
        assert_eq!(q("0.1Ki").ceil_bytes(), Some(103));
        assert_eq!(q("1Gi").ceil_bytes(), Some(1 << 30));
        assert_eq!(q("1n").ceil_bytes(), Some(1));
        assert_eq!(q("1e38").ceil_bytes(), Some(10i128.pow(38)));

        assert_eq!(q("2").millis_ceil(), Some(2000));
        assert_eq!(q("0.1").millis_ceil(), Some(100));
        assert_eq!(q("1.0001").millis_ceil(), Some(1001));
        assert_eq!(q("100u").millis_ceil(), Some(1));
        assert_eq!(q("1n").millis_ceil(), Some(1));
        assert_eq!(q("-1n").millis_ceil(), Some(0));
        assert_eq!(q("-1500m").millis_ceil(), Some(-1500));
        assert_eq!(q("1e38").millis_ceil(), None);
    }

    #[test]
    fn overflow_is_an_error() {
        let max = i128::MAX.to_string();
        assert_eq!(q(&max), int(i128::MAX));
        assert_eq!(q(&format!("-{max}")), int(-i128::MAX));
        for s in [
            "170141183460469231731687303715884105728",
            "-170141183460469231731687303715884105728",
            "1e39",
            "2e38",
            "-2e38",
            "1e9223372036854775807",
            "200000000000000000000Ei",
            "1000000000000000000000000000000000000000.5",
            "17014118346046923173168730371588410572.8",
        ] {
            assert_eq!(err(s), QuantityErrorKind::Overflow, "{s}");
        }
        let e = "1e39".parse::<Quantity>().err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("invalid quantity \"1e39\": value out of range (its magnitude overflows a 128-bit integer)")
        );
    }

    #[test]
    fn invalid_inputs() {
        use QuantityErrorKind::*;
        let cases: &[(&str, QuantityErrorKind)] = &[
            ("", Empty),
            ("Gi", MissingNumber),
            ("-", MissingNumber),
            ("+", MissingNumber),
            (".", MissingNumber),
            ("--1", MissingNumber),
            ("+-1", MissingNumber),
            (" 1", MissingNumber),
            ("e3", MissingNumber),
            ("1.5.5", InvalidSuffix(".5".into())),
            ("1 Gi", InvalidSuffix(" Gi".into())),
            ("1 ", InvalidSuffix(" ".into())),
            ("1gi", InvalidSuffix("gi".into())),
            ("1KB", InvalidSuffix("KB".into())),
            ("1K", InvalidSuffix("K".into())),
            ("1Gb", InvalidSuffix("Gb".into())),
            ("1i", InvalidSuffix("i".into())),
            ("0.1mi", InvalidSuffix("mi".into())),
            ("1EB", InvalidSuffix("EB".into())),
            ("1Eix", InvalidSuffix("Eix".into())),
            ("1,5", InvalidSuffix(",5".into())),
            ("1µ", InvalidSuffix("µ".into())),
            ("1e", InvalidExponent("e".into())),
            ("1e+", InvalidExponent("e+".into())),
            ("-3.01e-", InvalidExponent("e-".into())),
            ("1E--1", InvalidExponent("E--1".into())),
            ("1e3.5", InvalidExponent("e3.5".into())),
            ("1e3e3", InvalidSuffix("e3e3".into())),
            (
                "1e9223372036854775808",
                InvalidExponent("e9223372036854775808".into()),
            ),
        ];
        for (input, kind) in cases {
            assert_eq!(&err(input), kind, "{input:?}");
        }
    }

    #[test]
    fn error_messages_name_the_input_and_problem() {
        let msg = |s: &str| match s.parse::<Quantity>() {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        };
        assert!(msg("1.5.5").starts_with("invalid quantity \"1.5.5\": unknown suffix \".5\""));
        assert_eq!(msg(""), "invalid quantity \"\": empty string");
        assert!(msg("Gi").starts_with("invalid quantity \"Gi\": expected a number"));
        assert!(msg("1e").starts_with("invalid quantity \"1e\": invalid exponent \"e\""));
        let boxed: Box<dyn std::error::Error> = Box::new(QuantityError {
            input: "x".into(),
            kind: QuantityErrorKind::MissingNumber,
        });
        assert!(boxed.to_string().contains("\"x\""));
        if let Err(e) = "1gi".parse::<Quantity>() {
            assert_eq!(e.input(), "1gi");
        }
    }

    #[test]
    fn ordering_is_by_exact_value() {
        assert!(q("1Gi") > q("1G"));
        assert!(q("999m") < q("1"));
        assert!(q("1001m") > q("1"));
        assert!(q("-1") < q("-999m"));
        assert!(q("-1.5") < q("-1"));
        assert!(q("1n") > q("0"));
        assert!(q("-1n") < q("0"));
        assert!(q("1e37") > q(&format!("{}.9", "9".repeat(37))));
        assert!(q("1e37") < q(&format!("1{}.1", "0".repeat(37))));
        assert!(q(&i128::MAX.to_string()) > q("1e38"));
        assert_eq!(q("0.5").cmp(&q("500m")), Ordering::Equal);
        let mut v = vec![q("1Gi"), q("-2"), q("500m"), q("1"), q("1.5n"), q("1k")];
        v.sort();
        let expected = [q("-2"), q("2n"), q("500m"), q("1"), q("1k"), q("1Gi")];
        assert_eq!(v, expected);
    }

    #[test]
    fn format_bytes() {
        assert_eq!(format_bytes_binary(34_359_738_368), "32Gi");
        assert_eq!(format_bytes_binary(1_610_612_736), "1536Mi");
        assert_eq!(format_bytes_binary(1000), "1000");
        assert_eq!(format_bytes_binary(0), "0");
        assert_eq!(format_bytes_binary(1024), "1Ki");
        assert_eq!(format_bytes_binary(1 << 60), "1Ei");
        assert_eq!(format_bytes_binary(1 << 70), "1024Ei");
        assert_eq!(format_bytes_binary(-2048), "-2Ki");
        assert_eq!(format_bytes_binary(i128::MIN), "-147573952589676412928Ei");
        assert_eq!(format_bytes_binary(i128::MAX), i128::MAX.to_string());
    }

    #[test]
    fn format_millis() {
        assert_eq!(format_millicores(2000), "2");
        assert_eq!(format_millicores(500), "500m");
        assert_eq!(format_millicores(1500), "1500m");
        assert_eq!(format_millicores(0), "0");
        assert_eq!(format_millicores(-250), "-250m");
    }

    #[test]
    fn readable_rounding() {
        assert_eq!(round_up_bytes_readable(0), 0);
        assert_eq!(round_up_bytes_readable(-5), -5);
        assert_eq!(round_up_bytes_readable(1), 64 * MI);
        assert_eq!(round_up_bytes_readable(64 * MI), 64 * MI);
        assert_eq!(round_up_bytes_readable(100 * MI), 128 * MI);
        assert_eq!(round_up_bytes_readable(GI - 1), GI);
        assert_eq!(round_up_bytes_readable(GI), GI);
        assert_eq!(round_up_bytes_readable(GI + 1), GI + 256 * MI);
        assert_eq!(round_up_bytes_readable(1536 * MI), 1536 * MI);
        assert_eq!(round_up_bytes_readable(10 * GI - 1), 10 * GI);
        assert_eq!(round_up_bytes_readable(10 * GI), 10 * GI);
        assert_eq!(round_up_bytes_readable(10 * GI + 1), 11 * GI);
        assert_eq!(round_up_bytes_readable(34_000_000_000), 32 * GI);
        let top = i128::MAX - i128::MAX % GI;
        assert_eq!(round_up_bytes_readable(i128::MAX), top);
    }

    /// Tiny deterministic xorshift64 generator for std-only property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len() as u64) as usize]
        }
    }

    /// Independent recogniser of the documented grammar (ignoring range limits).
    fn grammar_accepts(s: &str) -> bool {
        fn is_number(n: &str) -> bool {
            let n = n.strip_prefix(['+', '-']).unwrap_or(n);
            let (int, frac) = n.split_once('.').unwrap_or((n, ""));
            let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
            all_digits(int) && all_digits(frac) && !(int.is_empty() && frac.is_empty())
        }
        fn is_int(n: &str) -> bool {
            let n = n.strip_prefix(['+', '-']).unwrap_or(n);
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        }
        const FIXED: [&str; 16] = [
            "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E", "",
        ];
        FIXED
            .iter()
            .any(|sfx| s.strip_suffix(*sfx).is_some_and(is_number))
            || s.char_indices()
                .filter(|&(_, c)| c == 'e' || c == 'E')
                .any(|(i, _)| is_number(&s[..i]) && is_int(&s[i + 1..]))
    }

    #[test]
    fn random_strings_never_panic_and_match_grammar() {
        const ALPHABET: &[&str] = &[
            "0", "1", "5", "9", "0", "1", ".", "+", "-", "e", "E", "K", "M", "G", "T", "P", "i",
            "n", "u", "m", "k", " ", "B", "µ", "é", "\u{0}", "\t", "x", "7", "3",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut accepted = 0;
        for _ in 0..100_000 {
            let len = rng.below(12);
            let s: String = (0..len).map(|_| rng.pick(ALPHABET)).collect();
            let parsed = s.parse::<Quantity>();
            match &parsed {
                Ok(v) => {
                    accepted += 1;
                    assert!(grammar_accepts(&s), "accepted off-grammar {s:?}");
                    assert!(v.scale <= MAX_SCALE);
                    assert!(v.scale == 0 || v.num % 10 != 0, "not normalised: {s:?}");
                    let _ = (v.ceil_bytes(), v.millis_ceil(), v.as_whole_i128());
                }
                Err(e) => {
                    let _ = e.to_string();
                    let range_error = matches!(
                        e.kind(),
                        QuantityErrorKind::Overflow | QuantityErrorKind::InvalidExponent(_)
                    );
                    assert!(
                        !grammar_accepts(&s) || range_error,
                        "rejected on-grammar {s:?}: {e}"
                    );
                }
            }
        }
        assert!(accepted > 1_000, "generator too weak: {accepted} accepted");
    }

    #[test]
    fn random_values_match_integer_reference() {
        const DEC: [(&str, i32); 10] = [
            ("n", -9),
            ("u", -6),
            ("m", -3),
            ("", 0),
            ("k", 3),
            ("M", 6),
            ("G", 9),
            ("T", 12),
            ("P", 15),
            ("E", 18),
        ];
        let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
        for _ in 0..20_000 {
            let a = rng.next() as i64 as i128;
            let b = (rng.next() >> rng.below(64)) as i64 as i128;
            // Small enough that a * 10^27 (nanos of an `E` value) fits i128.
            let (da, db) = (a >> 30, b >> 30);
            // Binary suffixes multiply exactly.
            let (sfx, bits) =
                [("Ki", 10), ("Mi", 20), ("Gi", 30), ("Ti", 40), ("Pi", 50)][rng.below(5) as usize];
            assert_eq!(q(&format!("{a}{sfx}")), int(a << bits));
            // Decimal suffixes and exponents agree, and order like nanos.
            let (dsfx, e) = DEC[rng.below(10) as usize];
            let nanos = |m: i128| m * 10i128.pow((e + 9) as u32);
            let qa = q(&format!("{da}{dsfx}"));
            let qb = q(&format!("{db}e{e}"));
            assert_eq!(qa, q(&format!("{da}e{e}")));
            assert_eq!(
                qa.cmp(&qb),
                nanos(da).cmp(&nanos(db)),
                "{da}{dsfx} vs {db}e{e}"
            );
            assert_eq!(qa.millis_ceil(), ceil_div(nanos(da), 1_000_000));
            assert_eq!(qa.ceil_bytes(), ceil_div(nanos(da), 1_000_000_000));
            assert_eq!(qa.is_whole(), nanos(da) % 1_000_000_000 == 0);
            // Decimal point placement: a / 10^k.
            let k = rng.below(10) as u32;
            let digits = a.unsigned_abs().to_string();
            let pad = (k as usize + 1).saturating_sub(digits.len());
            let padded = format!("{}{digits}", "0".repeat(pad));
            let (ip, fp) = padded.split_at(padded.len() - k as usize);
            let sign = if a < 0 { "-" } else { "" };
            let qd = q(&format!("{sign}{ip}.{fp}"));
            assert_eq!(qd, q(&format!("{a}e-{k}")));
            let scaled_b = b * 10i128.pow(k);
            assert_eq!(qd.cmp(&int(b)), a.cmp(&scaled_b));
            // Formatting round-trips.
            let bytes = a << rng.below(60);
            assert_eq!(q(&format_bytes_binary(bytes)), int(bytes));
            let millis = q(&format_millicores(a));
            assert_eq!(millis.millis_ceil(), Some(a));
            // Readable rounding goes up by less than one step, onto a step boundary.
            let n = (rng.next() >> rng.below(64)) as i128 & ((1 << 40) - 1);
            let r = round_up_bytes_readable(n);
            let step = if n >= 10 * GI {
                GI
            } else if n >= GI {
                256 * MI
            } else {
                64 * MI
            };
            assert!(r >= n && r - n < step && r % step == 0, "{n} -> {r}");
        }
    }
}
