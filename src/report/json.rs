//! Findings → JSON (one pretty object) and NDJSON (one request object a line,
//! nothing else). Takes `Findings`; gives bytes that depend only on the findings
//! (field order is the model's; ms values are rounded to the microsecond by
//! the model's serializers, without copying the findings). Never reorders or filters requests.

use crate::verdict::Findings;
use std::io::{self, Write};

pub use crate::verdict::{round_ms, MS_DECIMALS};

/// `--format json`: the whole findings as one pretty-printed object and a newline.
pub fn write_json(findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, findings)?;
    writeln!(out)
}

/// `--format ndjson`: one request object a line, nothing else.
pub fn write_ndjson(findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
    for r in &findings.requests {
        serde_json::to_writer(&mut *out, r)?;
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;
    use crate::verdict::Request;

    #[test]
    fn ms_values_round_to_microseconds() {
        assert_eq!(round_ms(0.30999999999999994), 0.31);
        assert_eq!(round_ms(2750.0124999), 2750.012);
        assert_eq!(round_ms(-0.0001), 0.0);
        assert!(round_ms(-0.0001).is_sign_positive());
        assert!(round_ms(f64::NAN).is_nan());
    }

    #[test]
    fn json_is_one_object_that_reads_back_rounded() {
        let f = findings();
        let mut out = Vec::new();
        write_json(&f, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("{\n  \"tuplecorr\": "));
        assert!(text.ends_with("}\n"));
        let back: Findings = serde_json::from_str(&text).unwrap();
        assert_eq!(back.requests.len(), f.requests.len());
        assert_eq!(back.captures[2].clock_offset_ms, 2750.012);
        assert_eq!(back.requests[0].captures[0].rtt_ms, Some(0.31));
        assert!(!text.contains("time_ns"));
    }

    #[test]
    fn ndjson_is_one_request_a_line_and_nothing_else() {
        let f = findings();
        let mut out = Vec::new();
        write_ndjson(&f, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), f.requests.len());
        for (line, want) in lines.iter().zip(&f.requests) {
            let r: Request = serde_json::from_str(line).unwrap();
            assert_eq!(r.request, want.request);
            assert_eq!(r.proto, want.proto);
        }
    }
}
