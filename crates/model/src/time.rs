//! Time is integer nanoseconds everywhere (docs/semantics.md).
//!
//! Files give durations either as a number of milliseconds (decimals allowed) or as a string
//! with a unit. A number is converted *exactly*: we print the parsed `f64` with Rust's
//! shortest round-trip formatting (which gives back the decimal the user wrote for anything
//! with up to 15 significant digits) and then read that decimal string with integer
//! arithmetic, so `0.1` is 100 000 ns, not 99 999.

/// A point in time or a duration, in nanoseconds.
pub type Time = u64;

pub const NS_PER_US: Time = 1_000;
pub const NS_PER_MS: Time = 1_000_000;
pub const NS_PER_S: Time = 1_000_000_000;

/// Parse a decimal string (`"12"`, `"0.25"`, `"1e-3"`) scaled by `unit_ns` into integer ns.
/// Fails if the value is negative, not finite, too large, or not a whole number of ns.
pub fn parse_decimal_scaled(text: &str, unit_ns: Time) -> Result<Time, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if t.starts_with('-') {
        return Err(format!("must not be negative, got {t}"));
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    // Split mantissa and exponent.
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => {
            let e: i32 = t[i + 1..]
                .parse()
                .map_err(|_| format!("'{text}' is not a number"))?;
            (&t[..i], e)
        }
        None => (t, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!("'{text}' is not a number"));
    }
    // value = digits * 10^(exp - frac_len) * unit_ns
    let digits: String = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let mut scale: i64 = exp as i64 - frac_part.len() as i64;
    let mut value: u128 = 0;
    for b in digits.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add((b - b'0') as u128))
            .ok_or_else(|| format!("'{text}' is too large"))?;
        if value > u64::MAX as u128 * 10 {
            return Err(format!("'{text}' is too large"));
        }
    }
    value = value
        .checked_mul(unit_ns as u128)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    while scale > 0 {
        value = value
            .checked_mul(10)
            .ok_or_else(|| format!("'{text}' is too large"))?;
        if value > u64::MAX as u128 {
            return Err(format!("'{text}' is too large"));
        }
        scale -= 1;
    }
    while scale < 0 {
        if !value.is_multiple_of(10) {
            return Err(format!("'{text}' is not a whole number of nanoseconds"));
        }
        value /= 10;
        scale += 1;
    }
    u64::try_from(value).map_err(|_| format!("'{text}' is too large"))
}

/// Milliseconds given as an `f64` (how JSON and YAML numbers arrive) to exact ns.
pub fn ms_f64_to_ns(ms: f64) -> Result<Time, String> {
    if !ms.is_finite() {
        return Err(format!("must be a finite number, got {ms}"));
    }
    if ms < 0.0 {
        return Err(format!("must not be negative, got {ms}"));
    }
    // `{}` on f64 is the shortest string that reads back to the same f64.
    parse_decimal_scaled(&format!("{ms}"), NS_PER_MS)
}

/// A duration string with a unit: `"250us"`, `"10ms"`, `"2s"`, `"1.5 ms"`, `"100ns"`.
/// A bare number string is taken as milliseconds, like a bare number in a file.
pub fn parse_duration_str(s: &str) -> Result<Time, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    // "1e3ms": an 'e' followed by a digit or sign is an exponent; handled because we only
    // split on alphabetic characters other than e/E, then check the unit below.
    let (num, unit) = t.split_at(split);
    let unit_ns = unit_ns(unit.trim()).ok_or_else(|| {
        format!(
            "unknown unit '{}' in '{s}' (use ns, us, ms, s, or a number in ms)",
            unit.trim()
        )
    })?;
    parse_decimal_scaled(num.trim(), unit_ns)
}

/// The size in ns of a unit a duration string may name (`""` is ms, as a bare number is).
pub fn unit_ns(unit: &str) -> Option<Time> {
    Some(match unit {
        "" | "ms" => NS_PER_MS,
        "ns" => 1,
        "us" | "µs" => NS_PER_US,
        "s" => NS_PER_S,
        "min" => 60 * NS_PER_S,
        _ => return None,
    })
}

/// Format ns as a short human string with the largest unit that keeps it exact-ish.
pub fn fmt_duration(ns: Time) -> String {
    if ns == 0 {
        "0".into()
    } else if ns.is_multiple_of(NS_PER_S) {
        format!("{}s", ns / NS_PER_S)
    } else if ns.is_multiple_of(NS_PER_MS) {
        format!("{}ms", ns / NS_PER_MS)
    } else if ns.is_multiple_of(NS_PER_US) {
        format!("{}us", ns / NS_PER_US)
    } else {
        format!("{ns}ns")
    }
}

/// A duration for reading: in the largest unit (s, ms, us) in which it is at least 1, to
/// `digits` significant digits with trailing zeros dropped, as C's `%g` writes a number
/// (`"1.5ms"`, `"33.3333ms"`, `"250us"`; `"1e+06s"` from a million seconds); under 1 us in
/// whole ns. Spelt as a file spells durations, so a message can say `wcet: 2us`;
/// [`fmt_duration`] is the exact spelling. Python's `f"{ns / scale:g}{unit}"` for `digits` 6,
/// byte for byte (tests/test_durations.py), below 2^53 ns (104 days: `ns` is exact in an f64).
pub fn fmt_duration_rounded(ns: Time, digits: usize) -> String {
    for (unit, scale) in [("s", NS_PER_S), ("ms", NS_PER_MS), ("us", NS_PER_US)] {
        if ns >= scale {
            return format!("{}{unit}", fmt_g(ns as f64 / scale as f64, digits));
        }
    }
    format!("{ns}ns")
}

/// `ns` as a number of the unit `unit_ns` ns long, for a text that names the unit elsewhere
/// (a column's header, `"… ms"`): `decimals` places (`{:.3}`, ties to even as Python's
/// `f"{x:.3f}"`), or six significant digits as [`fmt_duration_rounded`] writes them when
/// `None` (`fmt_duration_in(1_234_567.0, NS_PER_MS, Some(3))` is `"1.235"`, with `None`
/// `"1.23457"`). `ns` is an `f64` because a mean over jobs is fractional; a count of ns is
/// exact in it below 2^53. Not finite: Python's `nan`, `inf`.
pub fn fmt_duration_in(ns: f64, unit_ns: Time, decimals: Option<usize>) -> String {
    let x = ns / unit_ns as f64;
    if !x.is_finite() {
        return (if x.is_nan() { "nan" } else { "inf" }).into(); // ns is not negative
    }
    match decimals {
        Some(d) => format!("{x:.d$}"),
        None => fmt_g(x, 6),
    }
}

/// `x` (finite, not negative) to `digits` (at least 1) significant digits as C's `%g`: fixed
/// notation when the exponent of the rounded value is in [-4, digits), else `1.5e+07`; either
/// way without trailing zeros.
fn fmt_g(x: f64, digits: usize) -> String {
    let p = digits.max(1);
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        trim(&format!("{:.*}", (p as i32 - 1 - exp) as usize, x))
    }
}

/// ns as milliseconds for display (lossy, for tables only).
pub fn ns_to_ms(ns: Time) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_exact_ms() {
        assert_eq!(ms_f64_to_ns(0.1).unwrap(), 100_000);
        assert_eq!(ms_f64_to_ns(2.5).unwrap(), 2_500_000);
        assert_eq!(ms_f64_to_ns(10.0).unwrap(), 10_000_000);
        assert_eq!(ms_f64_to_ns(0.000001).unwrap(), 1);
        assert_eq!(ms_f64_to_ns(1e-6).unwrap(), 1);
        assert_eq!(ms_f64_to_ns(33.333333).unwrap(), 33_333_333);
        assert!(ms_f64_to_ns(0.0000001).is_err());
        assert!(ms_f64_to_ns(-1.0).is_err());
        assert!(ms_f64_to_ns(f64::NAN).is_err());
    }

    #[test]
    fn strings_with_units() {
        assert_eq!(parse_duration_str("250us").unwrap(), 250_000);
        assert_eq!(parse_duration_str("10ms").unwrap(), 10_000_000);
        assert_eq!(parse_duration_str("2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_str("1.5 ms").unwrap(), 1_500_000);
        assert_eq!(parse_duration_str("100ns").unwrap(), 100);
        assert_eq!(parse_duration_str("7").unwrap(), 7_000_000);
        assert_eq!(parse_duration_str("1e3us").unwrap(), 1_000_000);
        assert!(parse_duration_str("3 parsecs").is_err());
        assert!(parse_duration_str("1.5ns").is_err());
        assert!(parse_duration_str("abc").is_err());
        assert!(parse_duration_str("").is_err());
    }

    #[test]
    fn fmt_roundtrip() {
        for ns in [
            0,
            1,
            999,
            1000,
            250_000,
            10_000_000,
            2_000_000_000,
            1_500_000,
        ] {
            if ns > 0 {
                assert_eq!(parse_duration_str(&fmt_duration(ns)).unwrap(), ns);
            }
        }
    }

    #[test]
    fn rounded_durations_by_hand() {
        let r = |ns| fmt_duration_rounded(ns, 6);
        assert_eq!(r(0), "0ns");
        assert_eq!(r(999), "999ns");
        assert_eq!(r(1_000), "1us");
        assert_eq!(r(250_000), "250us");
        assert_eq!(r(1_500_000), "1.5ms");
        assert_eq!(r(33_333_333), "33.3333ms");
        assert_eq!(r(10_000_228), "10.0002ms");
        assert_eq!(r(999_999_500), "1000ms"); // rounds up to 1000.00 ms: still ms
        assert_eq!(r(2_000_000_000), "2s");
        assert_eq!(r(123_456_789_000_000), "123457s");
        assert_eq!(r(1_000_000_000_000_000), "1e+06s");
        assert_eq!(r(1_234_567_000_000_000), "1.23457e+06s");
        assert_eq!(fmt_duration_rounded(1_234_000, 2), "1.2ms");
        assert_eq!(fmt_duration_rounded(1_250_000, 1), "1ms");
        assert_eq!(fmt_g(0.0001234, 3), "0.000123");
        assert_eq!(fmt_g(0.00001234, 3), "1.23e-05");
        assert_eq!(fmt_g(0.0, 6), "0");
    }

    #[test]
    fn durations_in_a_unit_by_hand() {
        assert_eq!(fmt_duration_in(1_234_567.0, NS_PER_MS, Some(3)), "1.235");
        assert_eq!(fmt_duration_in(1_234_567.0, NS_PER_MS, None), "1.23457");
        assert_eq!(fmt_duration_in(1_250.0, NS_PER_US, Some(1)), "1.2"); // 1.25 exact: to even
        assert_eq!(fmt_duration_in(1_350.0, NS_PER_US, Some(1)), "1.4"); // 1.35 is above in f64
        assert_eq!(fmt_duration_in(40_000_000.0, NS_PER_MS, None), "40");
        assert_eq!(fmt_duration_in(0.0, NS_PER_MS, Some(3)), "0.000");
        assert_eq!(fmt_duration_in(2_500_000.0, NS_PER_MS, Some(0)), "2"); // 2.5: to even
        assert_eq!(fmt_duration_in(1_234_567.8, NS_PER_MS, Some(3)), "1.235"); // a mean
        assert_eq!(fmt_duration_in(f64::NAN, NS_PER_MS, Some(3)), "nan");
        assert_eq!(unit_ns("µs"), Some(NS_PER_US));
        assert_eq!(unit_ns("h"), None);
    }

    proptest::proptest! {
        #[test]
        fn any_ns_roundtrips_through_ms_decimal(ns in 1u64..10_000_000_000_000) {
            let text = format!("{}.{:06}", ns / NS_PER_MS, ns % NS_PER_MS);
            let as_f64: f64 = text.parse().unwrap();
            proptest::prop_assert_eq!(ms_f64_to_ns(as_f64).unwrap(), ns);
            proptest::prop_assert_eq!(parse_duration_str(&format!("{ns}ns")).unwrap(), ns);
        }
    }
}
