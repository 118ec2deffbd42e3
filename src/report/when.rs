//! Times in the user's zone and format: `--tz UTC|local|±HH:MM|Area/City` and
//! `--time-format rfc3339|spreadsheet|epoch`. Takes ns since the Unix epoch;
//! gives text. Time zones come from jiff with its bundled database, so a
//! machine without /usr/share/zoneinfo still knows `Europe/Berlin`; jiff only
//! gives the offset of an instant, the digits are written here (the same
//! civil calendar as `crate::time`). JSON keeps RFC 3339 UTC whatever is asked.

use super::Choice;

/// `--time-format` (the CSV's `first_seen`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// `2026-11-30T05:29:44.798953000+01:00` (`Z` in UTC).
    #[default]
    Rfc3339,
    /// `2026-11-30 05:29:44.798953` in the chosen zone: spreadsheets read it as a time.
    Spreadsheet,
    /// Seconds since the Unix epoch, `1795995638.123456789`.
    Epoch,
}

impl Choice for TimeFormat {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("rfc3339", TimeFormat::Rfc3339),
        ("spreadsheet", TimeFormat::Spreadsheet),
        ("epoch", TimeFormat::Epoch),
    ];
}

/// `--tz`.
#[derive(Clone, Debug, Default)]
pub enum Zone {
    #[default]
    Utc,
    Tz(jiff::tz::TimeZone),
}

impl PartialEq for Zone {
    fn eq(&self, other: &Zone) -> bool {
        match (self, other) {
            (Zone::Utc, Zone::Utc) => true,
            (Zone::Tz(a), Zone::Tz(b)) => {
                a.iana_name() == b.iana_name() && format!("{a:?}") == format!("{b:?}")
            }
            _ => false,
        }
    }
}

impl Zone {
    /// `UTC`, `local`, `±HH:MM` or an IANA name such as `Europe/Berlin`.
    pub fn parse(text: &str) -> Result<Zone, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("utc") || t == "Z" {
            return Ok(Zone::Utc);
        }
        if t.eq_ignore_ascii_case("local") {
            return jiff::tz::TimeZone::try_system().map(Zone::Tz).map_err(|e| {
                format!(
                    "--tz local: the system time zone is unknown ({e}); give one, e.g. --tz Europe/Berlin"
                )
            });
        }
        if let Some(sign) = t.chars().next().filter(|c| *c == '+' || *c == '-') {
            let bad = || format!("--tz {t}: expected ±HH:MM, e.g. +01:00 or -05:30");
            let (h, m) = t[1..].split_once(':').ok_or_else(bad)?;
            let (h, m): (i32, i32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
            if h > 23 || !(0..60).contains(&m) || h < 0 {
                return Err(bad());
            }
            let secs = (h * 3600 + m * 60) * if sign == '-' { -1 } else { 1 };
            let offset = jiff::tz::Offset::from_seconds(secs).map_err(|_| bad())?;
            return Ok(Zone::Tz(jiff::tz::TimeZone::fixed(offset)));
        }
        jiff::tz::TimeZone::get(t).map(Zone::Tz).map_err(|_| {
            format!("--tz {t}: not a time zone; give UTC, local, ±HH:MM or an Area/City name such as Europe/Berlin")
        })
    }

    /// Offset from UTC at this instant, seconds.
    pub fn offset_seconds(&self, ns: i64) -> i32 {
        match self {
            Zone::Utc => 0,
            Zone::Tz(tz) => jiff::Timestamp::from_nanosecond(i128::from(ns))
                .map(|t| tz.to_offset(t).seconds())
                .unwrap_or(0),
        }
    }
}

/// How times are written: the zone and the CSV's format.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeStyle {
    pub zone: Zone,
    pub format: TimeFormat,
}

impl TimeStyle {
    /// `±HH:MM` (`Z` for UTC itself).
    fn offset_text(&self, offset: i32) -> String {
        if matches!(self.zone, Zone::Utc) {
            return "Z".into();
        }
        let sign = if offset < 0 { '-' } else { '+' };
        let a = offset.unsigned_abs();
        format!("{sign}{:02}:{:02}", a / 3600, (a / 60) % 60)
    }

    /// RFC 3339 with nanoseconds in the zone (`Z` in UTC: the JSON's text).
    pub fn rfc3339(&self, ns: i64) -> String {
        if matches!(self.zone, Zone::Utc) {
            return crate::time::rfc3339(ns);
        }
        let offset = self.zone.offset_seconds(ns);
        let mut text = crate::time::rfc3339(ns.saturating_add(i64::from(offset) * 1_000_000_000));
        text.pop(); // the Z
        text.push_str(&self.offset_text(offset));
        text
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff` in the zone.
    pub fn spreadsheet(&self, ns: i64) -> String {
        let offset = self.zone.offset_seconds(ns);
        let text = crate::time::rfc3339(ns.saturating_add(i64::from(offset) * 1_000_000_000));
        // `YYYY-MM-DDTHH:MM:SS.fffffffffZ`: keep microseconds, a space for the T
        let cut = text.len().saturating_sub(4);
        text.get(..cut).unwrap_or(&text).replacen('T', " ", 1)
    }

    /// Seconds since the epoch with nine decimals.
    pub fn epoch(ns: i64) -> String {
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
    }

    /// A time in the chosen `--time-format` (the CSV's cells).
    pub fn format(&self, ns: i64) -> String {
        match self.format {
            TimeFormat::Rfc3339 => self.rfc3339(ns),
            TimeFormat::Spreadsheet => self.spreadsheet(ns),
            TimeFormat::Epoch => TimeStyle::epoch(ns),
        }
    }

    /// The zone in words, for the summary: `UTC`, `Europe/Berlin`, `+05:30`.
    pub fn zone_name(&self, ns: i64) -> String {
        match &self.zone {
            Zone::Utc => "UTC".into(),
            Zone::Tz(tz) => {
                tz.iana_name().map_or_else(|| self.offset_text(self.zone.offset_seconds(ns)), str::to_string)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-29T23:40:38.123456789Z
    const T: i64 = 1_795_995_638_123_456_789;

    fn style(zone: &str, format: TimeFormat) -> TimeStyle {
        TimeStyle { zone: Zone::parse(zone).unwrap(), format }
    }

    #[test]
    fn utc_rfc3339_is_the_json_text() {
        assert_eq!(style("UTC", TimeFormat::Rfc3339).format(T), "2026-11-29T23:40:38.123456789Z");
        assert_eq!(TimeStyle::default().format(T), crate::time::rfc3339(T));
    }

    #[test]
    fn zones_by_offset_and_by_name_from_the_bundled_database() {
        assert_eq!(style("+01:00", TimeFormat::Rfc3339).format(T), "2026-11-30T00:40:38.123456789+01:00");
        assert_eq!(style("-05:30", TimeFormat::Rfc3339).format(T), "2026-11-29T18:10:38.123456789-05:30");
        // winter in Berlin: +01:00; summer: +02:00
        let berlin = style("Europe/Berlin", TimeFormat::Spreadsheet);
        assert_eq!(berlin.format(T), "2026-11-30 00:40:38.123456");
        assert_eq!(berlin.format(T - 150 * 86_400 * 1_000_000_000), "2026-07-03 01:40:38.123456");
        assert_eq!(berlin.zone_name(T), "Europe/Berlin");
        assert_eq!(
            style("Asia/Kolkata", TimeFormat::Rfc3339).format(T),
            "2026-11-30T05:10:38.123456789+05:30"
        );
    }

    #[test]
    fn epoch_and_spreadsheet_formats() {
        assert_eq!(style("UTC", TimeFormat::Epoch).format(T), "1795995638.123456789");
        assert_eq!(TimeStyle::epoch(-1), "-0.000000001");
        assert_eq!(style("UTC", TimeFormat::Spreadsheet).format(T), "2026-11-29 23:40:38.123456");
    }

    #[test]
    fn bad_zones_are_usage_errors_that_say_what_is_read() {
        for bad in ["Mars/Olympus", "+25:00", "+1", "-01:xx"] {
            let e = Zone::parse(bad).unwrap_err();
            assert!(e.starts_with(&format!("--tz {bad}")), "{e}");
        }
        assert_eq!(TimeFormat::from_name("spreadsheet"), Some(TimeFormat::Spreadsheet));
    }
}
