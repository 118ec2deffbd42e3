//! Findings → JSON (one pretty object) and NDJSON (one request object a line,
//! nothing else). Takes typed `Findings`; gives the bytes of their wire view
//! (`wire`: field order, names, ms rounded to the microsecond). Never
//! reorders or filters requests.

use crate::report::to_wire;
use crate::report::wire;
use crate::verdict::Findings;
use std::io::{self, Write};

pub use crate::report::wire::round_ms;
pub use crate::report::wire::MS_DECIMALS;

/// Where the request array sits in the pretty report: its key at depth 1.
const REQUESTS_KEY: &str = "\n  \"requests\": [";

/// `--format json`: the whole findings as one pretty-printed object and a newline.
///
/// The object without its requests is printed by serde_json; the requests are
/// printed by serde_json too, across cores, each starting at its depth (2
/// levels, [`Indented`]), and spliced into the empty array: the same bytes as
/// printing the whole object at once (tested). A hand-written layout of the
/// request was ×1.05 faster on the JSON of 40,000 small flows (paired whole-process runs,
/// paired medians): not worth a third copy of the field list.
pub fn write_json(findings: &Findings, out: &mut (dyn Write + Send)) -> io::Result<()> {
    write_json_with(&crate::report::words::Words::new(findings), findings, out)
}

/// [`write_json`] with names and zone (`*_name`, `time_local` fields).
pub fn write_json_with(
    words: &crate::report::words::Words<'_>,
    findings: &Findings,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    write_json_around(findings, words.why, !findings.requests.is_empty(), out, |out| {
        write_json_requests(words, findings, true, out)
    })
}

/// The report of `run` (its requests left out) with the request array's
/// elements written by `requests` (`any`: there is at least one): what
/// `--stream --format json` writes at the end, its requests read back from
/// where [`write_json_requests`] put them window by window.
pub fn write_json_around(
    run: &Findings,
    why: Option<&crate::why::attach::Explained>,
    any: bool,
    out: &mut (dyn Write + Send),
    requests: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<()> {
    let outer = to_wire::findings_around(run, why);
    let text = serde_json::to_string_pretty(&outer)?;
    let at = match text.find(REQUESTS_KEY) {
        Some(at) if any => at + REQUESTS_KEY.len(),
        _ => {
            out.write_all(text.as_bytes())?;
            return writeln!(out);
        }
    };
    // `[]` of the empty array follows the key.
    out.write_all(&text.as_bytes()[..at])?;
    requests(out)?;
    out.write_all(b"\n  ]")?;
    out.write_all(&text.as_bytes()[at + 1..])?;
    writeln!(out)
}

/// The request array's elements of `findings` as the report lays them out,
/// each at its depth (2 levels) after its separator (`first`: these begin the
/// array), printed pretty across cores.
pub fn write_json_requests(
    words: &crate::report::words::Words<'_>,
    findings: &Findings,
    first: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let Some(head) = findings.requests.first() else { return Ok(()) };
    crate::report::write_parallel(&findings.requests, out, |requests, buf| {
        let mut wire = None;
        for r in requests {
            let opens = first && std::ptr::eq(r, head);
            buf.extend_from_slice(if opens { b"\n    " } else { b",\n    " });
            let mut ser = serde_json::Serializer::with_formatter(&mut *buf, Indented::at(2));
            serde::Serialize::serialize(reuse(&mut wire, words, r), &mut ser)?;
        }
        Ok(())
    })
}

/// `--format ndjson`: one request object a line, nothing else.
pub fn write_ndjson(findings: &Findings, out: &mut (dyn Write + Send)) -> io::Result<()> {
    write_ndjson_with(&crate::report::words::Words::new(findings), findings, out)
}

/// [`write_ndjson`] with names and zone.
pub fn write_ndjson_with(
    words: &crate::report::words::Words<'_>,
    findings: &Findings,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    crate::report::write_parallel(&findings.requests, out, |requests, buf| {
        let mut wire = None;
        for r in requests {
            serde_json::to_writer(&mut *buf, reuse(&mut wire, words, r))?;
            buf.push(b'\n');
        }
        Ok(())
    })
}

/// The wire view of `r` in `wire`, made from the previous request's strings.
fn reuse<'a>(
    wire: &'a mut Option<wire::Request>,
    words: &crate::report::words::Words<'_>,
    r: &crate::verdict::Request,
) -> &'a wire::Request {
    match wire {
        Some(q) => {
            to_wire::request_into(words, r, q);
            q
        }
        None => wire.insert(to_wire::request(words, r)),
    }
}

/// serde_json's pretty layout (two spaces a level) starting `depth` levels in,
/// so a request printed alone lines up inside the report's request array.
struct Indented {
    depth: usize,
    has_value: bool,
}

impl Indented {
    fn at(depth: usize) -> Indented {
        Indented { depth, has_value: false }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        // The comma, the newline and the usual indentation in one write (a
        // request has ~120 keys and values).
        const LINE: &[u8; 2 + 32] = b",\n                                ";
        let at = usize::from(first);
        match LINE.get(at..2 + 2 * self.depth) {
            Some(line) => w.write_all(line),
            None => {
                w.write_all(&LINE[at..2])?;
                self.indent(w)
            }
        }
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        // One write for the usual depths (a request goes 5 levels deep).
        const SPACES: &[u8; 32] = b"                                ";
        let mut left = 2 * self.depth;
        while left > 0 {
            let n = left.min(SPACES.len());
            w.write_all(&SPACES[..n])?;
            left -= n;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Indented {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.newline(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.newline(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;
    use crate::report::wire::{Findings as Wire, Request};

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
        let back: Wire = serde_json::from_str(&text).unwrap();
        assert_eq!(back.requests.len(), f.requests.len());
        assert_eq!(back.captures[2].clock_offset_ms, 2750.012);
        assert_eq!(back.requests[0].captures[0].rtt_ms, Some(0.31));
        assert!(!text.contains("time_ns"));
    }

    #[test]
    fn json_keeps_every_key_of_the_model() {
        // Rounding goes through a copy of the model: it must not drop or add keys.
        let f = findings();
        let plain = serde_json::to_value(to_wire::findings(&f)).unwrap();
        let mut out = Vec::new();
        write_json(&f, &mut out).unwrap();
        let written: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&plain), keys(&written));
        assert_eq!(keys(&plain["requests"][0]), keys(&written["requests"][0]));
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
            assert_eq!(
                r.explanation,
                crate::report::explain::explain(&crate::report::words::Words::new(&f), want)
            );
        }
    }

    /// The fixtures' requests repeated past several parallel tasks.
    fn many() -> Findings {
        let mut f = findings();
        let one = f.requests.clone();
        for k in 0..70 {
            f.requests.extend(one.iter().cloned().map(|mut r| {
                r.request += 5 * (k + 1);
                r
            }));
        }
        f
    }

    #[test]
    fn parallel_json_is_the_whole_object_printed_at_once() {
        for f in [many(), findings(), Findings { requests: vec![], ..findings() }] {
            let mut out = Vec::new();
            write_json(&f, &mut out).unwrap();
            let whole = serde_json::to_string_pretty(&to_wire::findings(&f)).unwrap() + "\n";
            assert_eq!(String::from_utf8(out).unwrap(), whole);
        }
    }

    #[test]
    fn hand_written_requests_escape_labels_and_names_like_serde() {
        let mut f = many();
        // The rare parts too: a missed SYN, data that stopped, identity carriers.
        let stopped = crate::report::fixtures::black_hole().requests.remove(0);
        f.requests[1].data = stopped.data;
        f.requests[2].syn_missed =
            Some(crate::verdict::SynMissed { at: 1, syns: 2, after_ns: 1_000_123_456 });
        // (the capture that missed them first saw the retransmission)
        let t0 = f.requests[2].captures[0].time_ns.unwrap();
        f.requests[2].captures[1].time_ns = Some(t0 + 1_000_123_456);
        f.requests[3].identity = Some(Box::new(crate::report::fixtures::proxied_identity()));
        f.requests[4].identity = Some(Box::new(crate::report::fixtures::spoofed_identity()));
        f.requests[0].fragments = Some(Box::new(crate::report::fixtures::fragments_lost()));
        let hostile = ["de\"c\\ap", "eg\u{1}ress\n\t", "bäckend ✓ \u{7f}"];
        for (c, label) in f.captures.iter_mut().zip(hostile) {
            c.label = label.to_string();
        }
        let (names, time) = crate::report::names_and_zone("198.19.3.17 node\"a\\b\n198.18.90.42 cliënt\n");
        let words = crate::report::words::Words::with(&f, Some(&names), Some(&time));
        let mut out = Vec::new();
        write_json_with(&words, &f, &mut out).unwrap();
        let whole = serde_json::to_string_pretty(&to_wire::findings_with(&words, &f)).unwrap() + "\n";
        assert_eq!(String::from_utf8(out).unwrap(), whole);
    }

    #[test]
    fn parallel_ndjson_keeps_request_order() {
        let f = many();
        let mut out = Vec::new();
        write_ndjson(&f, &mut out).unwrap();
        let numbers: Vec<u64> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Request>(l).unwrap().request)
            .collect();
        assert_eq!(numbers, f.requests.iter().map(|r| r.request).collect::<Vec<_>>());
    }

    #[test]
    fn output_is_byte_for_byte_repeatable() {
        let f = findings();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_json(&f, &mut a).unwrap();
        write_json(&f.clone(), &mut b).unwrap();
        assert_eq!(a, b);
    }
}
