//! UTC nanosecond timestamps as RFC 3339 text (`2026-11-29T23:40:38.123456789Z`)
//! and back, without a date crate: the proleptic Gregorian civil calendar.

/// Formats ns since the Unix epoch as RFC 3339 UTC with nanoseconds.
pub fn rfc3339(ts_ns: i64) -> String {
    let mut out = String::with_capacity(30);
    push_rfc3339(&mut out, ts_ns);
    out
}

/// Appends [`rfc3339`]'s text of `ts_ns` to `out` (a report reusing its strings).
pub fn push_rfc3339(out: &mut String, ts_ns: i64) {
    let secs = ts_ns.div_euclid(1_000_000_000);
    let nanos = ts_ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        use std::fmt::Write;
        // Writing into a String cannot fail.
        let _ = write!(
            out,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60
        );
        return;
    }
    // Digits by hand: this runs for every capture of every request.
    let mut b = *b"0000-00-00T00:00:00.000000000Z";
    let mut put = |at: usize, width: usize, mut v: u64| {
        for i in (0..width).rev() {
            b[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y as u64);
    put(5, 2, u64::from(m));
    put(8, 2, u64::from(d));
    put(11, 2, (sod / 3600) as u64);
    put(14, 2, ((sod / 60) % 60) as u64);
    put(17, 2, (sod % 60) as u64);
    put(20, 9, nanos as u64);
    // Digits and ASCII punctuation only: never lossy.
    out.push_str(&String::from_utf8_lossy(&b));
}

/// Parses RFC 3339 (`Z` or `±hh:mm`, optional fraction) into ns since the epoch;
/// `None` for anything that is not exactly that (see [`parse_rfc3339_checked`]).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    parse_rfc3339_checked(text).ok()
}

/// Parses RFC 3339 strictly: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`t`,
/// `z` and a space for `T` allowed, as RFC 3339 permits), every field made of
/// digits, the day existing in its month (2026-02-31 is refused, never read as
/// 3 March), hours 0-23, minutes 0-59, seconds 0-60 (a leap second), a zone
/// offset of at most 23:59. Says what is wrong otherwise.
pub fn parse_rfc3339_checked(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let b = t.as_bytes();
    let layout = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !layout {
        return Err("expected YYYY-MM-DDTHH:MM:SS with Z or a ±HH:MM zone".into());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let field = &b[r.clone()];
        if !field.iter().all(u8::is_ascii_digit) {
            return Err(format!("{:?} is not a number", &t[r]));
        }
        Ok(field.iter().fold(0i64, |v, c| v * 10 + i64::from(c - b'0')))
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) {
        return Err(format!("month {mo:02} does not exist"));
    }
    if d < 1 || d > days_in_month(y, mo) {
        return Err(format!("{y:04}-{mo:02} has no day {d:02}"));
    }
    if h > 23 || mi > 59 || s > 60 {
        return Err(format!("{h:02}:{mi:02}:{s:02} is not a time of day"));
    }
    let mut rest = &t[19..];
    let mut nanos = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err("a '.' without fraction digits".into());
        }
        let mut scaled = 0i64;
        for (i, c) in frac.bytes().take(digits).enumerate() {
            if i < 9 {
                scaled = scaled * 10 + i64::from(c - b'0');
            }
        }
        for _ in digits..9 {
            scaled *= 10;
        }
        nanos = scaled;
        rest = &frac[digits..];
    }
    let offset_s = match rest {
        "Z" | "z" => 0,
        _ => {
            let z = rest.as_bytes();
            let sign = match z.first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return Err(format!("zone {rest:?}: expected Z, +HH:MM or -HH:MM")),
            };
            let digits = |r: std::ops::Range<usize>| z.get(r).filter(|f| f.iter().all(u8::is_ascii_digit));
            let (Some(hh), Some(mm)) = (digits(1..3), digits(4..6)) else {
                return Err(format!("zone {rest:?}: expected Z, +HH:MM or -HH:MM"));
            };
            if z.len() != 6 || z[3] != b':' {
                return Err(format!("zone {rest:?}: expected Z, +HH:MM or -HH:MM"));
            }
            let (hh, mm) = (
                i64::from((hh[0] - b'0') * 10 + hh[1] - b'0'),
                i64::from((mm[0] - b'0') * 10 + mm[1] - b'0'),
            );
            if hh > 23 || mm > 59 {
                return Err(format!("zone {rest:?}: hours 00-23 and minutes 00-59"));
            }
            sign * (hh * 3600 + mm * 60)
        }
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_s;
    secs.checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(nanos))
        .ok_or_else(|| "outside the years 1677-2262 that ns since 1970 can hold".into())
}

/// Days in month `m` of year `y` (proleptic Gregorian).
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 → (year, month, day). Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_with_nanoseconds_and_offsets() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-11-29T23:40:38.123456789Z"), Some(1_795_995_638_123_456_789));
        assert_eq!(parse_rfc3339("2026-11-30T00:40:38.5+01:00"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_rfc3339("2000-02-29 12:00:00z"), Some(951_825_600_000_000_000));
        assert_eq!(parse_rfc3339("2026-11-29T23:40:38"), None);
        assert_eq!(parse_rfc3339("2026-13-29T23:40:38Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        // date -u -d @1795995638 → 2026-11-29T23:40:38Z
        assert_eq!(rfc3339(1_795_995_638_123_456_789), "2026-11-29T23:40:38.123456789Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for t in [0, 1_795_995_638_123_456_789, 951_782_400_000_000_001] {
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        }
        assert_eq!(parse_rfc3339("2026-11-29T23:40:38Z"), Some(1_795_995_638_000_000_000));
        assert_eq!(parse_rfc3339("2026-11-30T00:40:38.5+01:00"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn impossible_dates_and_malformed_zones_are_refused() {
        for bad in [
            "2026-02-31T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-00-10T00:00:00Z",
            "2026-11-00T00:00:00Z",
            "2026-11-29T24:00:00Z",
            "2026-11-29T23:60:00Z",
            "2026-11-29T23:40:38+01x00",
            "2026-11-29T23:40:38+1:00",
            "2026-11-29T23:40:38+24:00",
            "2026-11-29T23:40:38+01:60",
            "2026-11-29T23:40:38+01:00:00",
            "2026-11-29T23:40:38",
            "+026-11-29T23:40:38Z",
            "2026-+1-29T23:40:38Z",
            "2026-11-29T23:40:38.Z",
        ] {
            assert!(parse_rfc3339_checked(bad).is_err(), "{bad} accepted as {:?}", parse_rfc3339(bad));
        }
        assert_eq!(parse_rfc3339_checked("2026-02-31T00:00:00Z").unwrap_err(), "2026-02 has no day 31");
        assert!(parse_rfc3339_checked("2026-11-29T23:40:38+01x00").unwrap_err().contains("zone"));
        // leap days and a leap second are real
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z"), Some(1_709_164_800_000_000_000));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400_000_000_000));
        assert!(parse_rfc3339("1900-02-29T00:00:00Z").is_none());
        assert_eq!(parse_rfc3339("2016-12-31T23:59:60Z"), Some(1_483_228_800_000_000_000));
        assert_eq!(parse_rfc3339("2026-11-29T23:40:38-00:30"), Some(1_795_997_438_000_000_000));
    }
}
