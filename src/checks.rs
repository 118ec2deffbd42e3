//! Mistakes users make, turned into warnings that say what to do (issue 10):
//!
//! - the same capture given twice (the same file by device and inode, or the
//!   same bytes under two names): every request would look unchanged, with no
//!   delay, at both "points";
//! - a boundary whose median delay is negative beyond the tolerance (or, with
//!   `--offset`, longer than a second): the later capture's clock offset is
//!   wrong, and the value that would make the delay about zero is suggested,
//!   saying so when it is the given value with the other sign;
//! - an `--offset` that leaves most of a capture's flows unmatched: the sign
//!   is suggested the other way round, or no `--offset` at all.
//!
//! The warnings go into the report's `warnings` like a reader's (label, no
//! record, no byte offset).

use crate::correlate::PinnedClocks;
use crate::read::{CaptureSpec, Source};
use crate::verdict::{Findings, OffsetMethod, WarningOut};
use std::io::Read;

/// A median hop delay longer than this, with a clock offset given by hand,
/// means the offset is off (a satellite hop takes ~600 ms).
const LONGEST_HOP_MS: f64 = 1000.0;

/// How much of each file is compared when two captures have the same size.
const HASHED_PREFIX: u64 = 1 << 20;

fn warning(label: &str, message: String) -> WarningOut {
    WarningOut { label: label.to_string(), record: None, byte_offset: None, message }
}

/// What part of the captures a run's findings stand for (see [`premises`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The whole captures.
    Whole,
    /// A time shard or a stream's windows.
    Window,
    /// A live run's windows (`--follow`).
    Live,
}

/// Captures given twice: the same file (device and inode, also by another
/// path), or (`live` false) two files of the same size whose first MiB is
/// identical; live captures are still being written (all empty at the start).
pub fn same_captures(captures: &[CaptureSpec], live: bool) -> Vec<WarningOut> {
    struct Seen {
        label: String,
        id: Option<(u64, u64)>,
        len: u64,
        prefix: Option<u64>,
    }
    let mut seen: Vec<Seen> = Vec::new();
    let mut out = Vec::new();
    for c in captures {
        let Source::Path(path) = &c.source else { continue };
        let Ok(meta) = std::fs::metadata(path) else { continue };
        let mut me =
            Seen { label: c.label.clone(), id: crate::output::file_id(&meta), len: meta.len(), prefix: None };
        for other in &mut seen {
            let same_file = me.id.is_some() && me.id == other.id;
            // Only regular files are compared by their bytes: reading a pipe's
            // first MiB here would take it from the run (and pipes all have length 0).
            let same_bytes = !same_file
                && !live
                && meta.is_file()
                && me.len == other.len
                && prefix_hash(path, &mut me.prefix).is_some()
                && prefix_hash_of(captures, &other.label, &mut other.prefix) == me.prefix;
            if same_file || same_bytes {
                let what = if same_file { "the same file" } else { "identical bytes" };
                out.push(warning(
                    &me.label,
                    format!(
                        "{} and {} are {what}: one capture point given twice looks like a path that changes nothing \
                         (no rewrite, no delay); give each point its own capture",
                        other.label, me.label
                    ),
                ));
                break;
            }
        }
        seen.push(me);
    }
    out
}

/// The hash of the first MiB of the capture labelled `label`, computed once.
fn prefix_hash_of(captures: &[CaptureSpec], label: &str, cache: &mut Option<u64>) -> Option<u64> {
    let spec = captures.iter().find(|c| c.label == label)?;
    let Source::Path(path) = &spec.source else { return None };
    if !spec.readable_again() {
        return None;
    }
    prefix_hash(path, cache)
}

fn prefix_hash(path: &std::path::Path, cache: &mut Option<u64>) -> Option<u64> {
    if cache.is_none() {
        let mut buf = Vec::new();
        let file = std::fs::File::open(path).ok()?;
        file.take(HASHED_PREFIX).read_to_end(&mut buf).ok()?;
        *cache = Some(xxhash_rust::xxh3::xxh3_64(&buf));
    }
    *cache
}

/// Clock offsets that cannot be right: a negative median delay beyond the
/// tolerance at a boundary, or an `--offset` that leaves most flows unmatched.
/// `tolerance_ns`: `--tolerance`, when given; `clocks_from`: the clocks
/// `--clocks-from` pinned.
pub fn clock_mistakes(
    tolerance_ns: Option<i64>,
    clocks_from: Option<&PinnedClocks>,
    findings: &Findings,
) -> Vec<WarningOut> {
    let mut out = Vec::new();
    let captures = &findings.captures;
    for b in &findings.boundaries {
        let Some(delay) = b.delay_ns.map(ms) else { continue };
        let Some(c) = captures.get(b.between.to) else { continue };
        let later = c.label.as_str();
        let earlier = findings.label(b.between.from);
        let between = format!("{earlier}->{later}");
        let tolerance_ms = match tolerance_ns {
            Some(t) => ms(t),
            None => (5.0 * ms(c.offset_spread_ns) + 1.0).min(200.0),
        };
        let manual = c.offset_method == OffsetMethod::Manual;
        let offset_ms = ms(c.clock_offset_ns);
        let likely_s = (offset_ms + delay) / 1000.0;
        let mut message = if delay < -tolerance_ms {
            format!(
                "requests appear here {:.3} ms before they appear at {earlier} (median delay across {}), so the \
                 clock offset of {later} ({:+.3} ms, {}) looks wrong; try --offset {later}={likely_s:.3}",
                -delay,
                between,
                offset_ms,
                match (clocks_from, c.offset_method) {
                    (Some(pinned), OffsetMethod::Manual) => format!("from --clocks-from {}", pinned.source),
                    (_, m) => method_name(m).to_string(),
                },
            )
        } else if manual && delay > LONGEST_HOP_MS {
            format!(
                "requests take {delay:.3} ms from {earlier} to here (median delay across {}), longer than a hop \
                 takes, with the clock offset of {later} given as --offset {later}={:.3}; try --offset \
                 {later}={likely_s:.3}",
                between,
                offset_ms / 1000.0,
            )
        } else {
            continue;
        };
        if manual && reversed(offset_ms / 1000.0, likely_s) {
            message.push_str(" (the sign of --offset looks reversed)");
        }
        out.push(warning(later, message));
    }
    for u in &findings.unmatched {
        let Some(c) = captures.get(u.capture) else { continue };
        if c.offset_method != OffsetMethod::Manual || c.flows == 0 || u.count * 2 <= c.flows {
            continue;
        }
        let given_s = ms(c.clock_offset_ns) / 1000.0;
        out.push(warning(
            &c.label,
            format!(
                "--offset {label}={given_s:.3} leaves {} of {} flows at {label} unmatched: if its clock runs behind \
                 rather than ahead, the sign is the other way round (--offset {label}={:.3}); without --offset, \
                 tuplecorr estimates the offset",
                u.count,
                c.flows,
                -given_s,
                label = c.label,
            ),
        ));
    }
    out
}

/// Nanoseconds as milliseconds.
fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Whether `likely` is about `-given` (within 10 %): a flipped sign.
fn reversed(given: f64, likely: f64) -> bool {
    given != 0.0 && (likely + given).abs() <= 0.1 * given.abs()
}

fn method_name(m: OffsetMethod) -> &'static str {
    match m {
        OffsetMethod::Reference => "reference",
        OffsetMethod::RequestReply => "estimated from requests and replies",
        OffsetMethod::OneWay => "estimated one way",
        OffsetMethod::Manual => "given with --offset",
        OffsetMethod::SameCapture => "the clock of its capture's first point",
        OffsetMethod::TimeFree => "estimated beyond --max-offset from pairs found without time",
        OffsetMethod::None => "not estimated",
    }
}

/// Premises of the verdicts that fail for a whole capture (issue 29), each
/// named with what to do:
/// - a capture without packets, or without any flow: it is blind to every
///   request, and where a RST or ICMP error entered next to it is unknown;
/// - a capture whose recorded times (on capture 1's clock) do not overlap
///   capture 1's: no request can be matched there;
/// - a capture that recorded flows while capture 1 did but saw no request;
/// - a boundary whose TTL rises and whose requests arrive before they left:
///   the two captures look given in reverse path order.
///
/// `part`: the findings are a time shard's, a stream's or a live run's
/// totals, whose verdicts take a capture as blind only once it is known to
/// have stopped; the warnings say so.
pub fn premises(findings: &Findings, part: Part) -> Vec<WarningOut> {
    let consequence = match part {
        Part::Whole => ", so where a reset or an ICMP error entered next to it is reported as unknown",
        Part::Window => {
            "; a time shard or a stream window cannot tell when a capture recorded, so blames next to it still \
             rest on its silence: run without --shard-start or --stream to have them reported as unknown"
        }
        Part::Live => {
            "; a live run takes a capture as recording until its input ends, so blames next to it before then \
             rest on its silence: run on the saved captures without --follow to have them reported as unknown"
        }
    };
    let mut out = Vec::new();
    let captures = &findings.captures;
    let first = captures.first();
    let reference = first.map_or("capture 1", |c| c.label.as_str());
    for (i, c) in captures.iter().enumerate() {
        let label = c.label.as_str();
        if c.packets == 0 {
            out.push(warning(
                label,
                format!(
                    "{label} holds no packets (its capture filter matched nothing, or it was taken at another \
                     time or place): it is blind to every request{consequence}; capture there again while the \
                     requests run"
                ),
            ));
            continue;
        }
        let Some((from, to)) = c.recorded else {
            out.push(warning(
                label,
                format!(
                    "{label} holds {} packets but no TCP, UDP or ICMP flow: it is blind to every request{consequence}",
                    c.packets
                ),
            ));
            continue;
        };
        if i == 0 {
            continue;
        }
        let Some((start, end)) = first.and_then(|f| f.recorded) else { continue };
        let (from, to) = (from.saturating_sub(c.clock_offset_ns), to.saturating_sub(c.clock_offset_ns));
        if to < start || from > end {
            // Positive: this capture's clock runs ahead (its flows come later).
            let gap_s = if to < start {
                -(start.saturating_sub(to) as f64 / 1e9)
            } else {
                from.saturating_sub(end) as f64 / 1e9
            };
            let clock = match c.offset_method {
                OffsetMethod::None => "its clock offset could not be estimated".to_string(),
                m => {
                    format!("with its clock offset of {:+.3} ms ({})", ms(c.clock_offset_ns), method_name(m))
                }
            };
            out.push(warning(
                label,
                format!(
                    "{label}'s flows ({} to {}) and {reference}'s ({} to {}, on {reference}'s clock; {clock}) do \
                     not overlap in time: no request can be matched at {label}, and it is blind to every \
                     request; if both were taken while the requests ran, {label}'s clock is off by \
                     {gap_s:+.3} s or more: give --offset {label}=SECONDS",
                    crate::time::rfc3339(from),
                    crate::time::rfc3339(to),
                    crate::time::rfc3339(start),
                    crate::time::rfc3339(end),
                ),
            ));
            continue;
        }
        let reached = findings.requests.iter().filter(|r| r.captures.get(i).is_some_and(|h| h.seen)).count();
        if reached == 0 && !findings.requests.is_empty() {
            out.push(warning(
                label,
                format!(
                    "none of the {} seen at {reference} was matched at {label}, though {label} recorded {} at \
                     the same time: either every request stopped before {label}, or {label} was \
                     taken at another place, or its clock is off by more than --max-offset; the verdicts take \
                     its silence as evidence",
                    crate::report::summary::plural(findings.requests.len(), "request"),
                    crate::report::summary::plural(c.flows as usize, "flow"),
                ),
            ));
        }
    }
    for b in &findings.boundaries {
        let (Some(ttl), Some(delay)) = (b.ttl_decrement, b.delay_ns) else { continue };
        if b.ttl_set_to.is_some() {
            continue; // a middlebox sets the TTL: its rise says nothing of the order
        }
        if ttl < 0 && delay < 0 {
            let (a, z) = (findings.label(b.between.from), findings.label(b.between.to));
            out.push(warning(
                z,
                format!(
                    "{a} and {z} look given in reverse path order: the TTL rises by {} from {a} to {z} and requests \
                     appear at {z} before they appear at {a} (median delay {:.3} ms); captures go in path order, client \
                     side first, so source and destination changes and where a reply was lost read the wrong \
                     way round here: give {z} before {a}",
                    -ttl,
                    ms(delay),
                ),
            ));
        }
    }
    out
}

/// What the boundaries say of the order the captures were given in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathOrder {
    /// No boundary between two captures looks reversed.
    Right,
    /// Every boundary between two captures that shows its direction looks
    /// reversed (the TTL rises and requests arrive before they left), none
    /// the right way: the captures were given client side last. The text
    /// says which boundaries and by how much.
    Reversed(String),
    /// Some boundaries look reversed and others do not: no order the
    /// evidence agrees on. The text names both kinds.
    Doubtful(String),
}

/// The order the boundaries between two captures show (a boundary inside
/// one split capture, `node(in)->node(out)`, is the host's and says nothing
/// of the order the files were given in). A boundary looks reversed when its
/// TTL rises and its median delay is negative, both (as [`premises`] warns),
/// and goes the right way when its TTL falls or its delay is positive
/// without the other saying otherwise; a middlebox that sets the TTL leaves
/// only the delay.
pub fn path_order(findings: &Findings) -> PathOrder {
    let mut reversed = Vec::new();
    let mut right = Vec::new();
    for b in &findings.boundaries {
        let (a, z) = (findings.label(b.between.from), findings.label(b.between.to));
        if crate::read::capture_of_point(a) == crate::read::capture_of_point(z) && a != z {
            continue;
        }
        let ttl = b.ttl_decrement.filter(|_| b.ttl_set_to.is_none());
        let text = || {
            let ttl = ttl.map_or(String::new(), |t| format!("TTL {:+}, ", -t));
            format!("{a}->{z} ({ttl}delay {:.3} ms)", b.delay_ns.map_or(0.0, ms))
        };
        match (ttl, b.delay_ns) {
            (Some(t), Some(d)) if t < 0 && d < 0 => reversed.push(text()),
            (Some(t), Some(d)) if (t > 0 && d >= 0) || (t == 0 && d > 0) => right.push(text()),
            _ => {}
        }
    }
    match (reversed.is_empty(), right.is_empty()) {
        (true, _) => PathOrder::Right,
        (false, true) => PathOrder::Reversed(reversed.join(", ")),
        (false, false) => PathOrder::Doubtful(format!(
            "the captures' order is in doubt: {} look given in reverse path order (the TTL rises and requests \
             appear at the later point before the earlier), while {} go the right way; give the captures in path \
             order, client side first",
            reversed.join(", "),
            right.join(", ")
        )),
    }
}

/// The warning of a run read in the reverse of the order given (see
/// [`path_order`]): `why`, its boundaries; `order`, the labels as read.
pub fn reordered_warning(order: &[&str], why: &str) -> WarningOut {
    warning(
        order.first().copied().unwrap_or_default(),
        format!(
            "the captures look given in reverse path order at every boundary between two of them ({why}): read \
             in the reverse order, {}; give them client side first",
            order.join(" → ")
        ),
    )
}

/// Every check of this module, for the main form: of the run's `captures`,
/// `--tolerance` and `--clocks-from` (see [`clock_mistakes`]), and whether it
/// reports one time shard (`shard`).
pub fn all(
    captures: &[CaptureSpec],
    tolerance_ns: Option<i64>,
    clocks_from: Option<&PinnedClocks>,
    shard: bool,
    findings: &Findings,
) -> Vec<WarningOut> {
    let mut w = same_captures(captures, false);
    w.extend(premises(findings, if shard { Part::Window } else { Part::Whole }));
    w.extend(clock_mistakes(tolerance_ns, clocks_from, findings));
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(label: &str, path: &std::path::Path) -> CaptureSpec {
        CaptureSpec { label: label.into(), source: Source::Path(path.to_path_buf()) }
    }

    #[test]
    fn the_same_file_or_the_same_bytes_twice_is_named_with_both_labels() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.pcap");
        std::fs::write(&a, b"same bytes").unwrap();
        let b = dir.path().join("b.pcap");
        std::fs::write(&b, b"same bytes").unwrap();
        let c = dir.path().join("c.pcap");
        std::fs::write(&c, b"other byte").unwrap();
        let w = same_captures(&[spec("decap", &a), spec("egress", &dir.path().join("./a.pcap"))], false);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].label, "egress");
        assert!(w[0].message.starts_with("decap and egress are the same file"), "{}", w[0].message);
        let three = [spec("decap", &a), spec("egress", &c), spec("backend", &b)];
        let w = same_captures(&three, false);
        assert_eq!(w.len(), 1);
        assert!(w[0].message.starts_with("decap and backend are identical bytes"), "{}", w[0].message);
        assert!(same_captures(&[spec("decap", &a), spec("egress", &c)], false).is_empty());
        // Live (--follow): files still being written (empty at the start) are not compared
        // by their bytes; the same file twice still is.
        assert!(same_captures(&three, true).is_empty());
        assert_eq!(same_captures(&[spec("decap", &a), spec("egress", &a)], true).len(), 1);
    }

    #[test]
    fn a_negative_delay_names_the_capture_and_the_likely_offset() {
        let mut f = crate::report::fixtures::findings();
        assert!(clock_mistakes(None, None, &f).is_empty(), "the fixture is sane");
        // backend's estimate 2750.012 ms, median delay -2000 ms: likely 0.750 s
        f.boundaries[1].delay_ns = Some(-2000000000);
        let w = clock_mistakes(None, None, &f);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].label, "backend");
        assert!(w[0].message.starts_with("requests appear here 2000.000 ms before they appear at egress"));
        assert!(w[0].message.ends_with("try --offset backend=0.750"), "{}", w[0].message);
        // within the tolerance (5 x 0.0041 + 1 ms): nothing
        f.boundaries[1].delay_ns = Some(-1000000);
        assert!(clock_mistakes(None, None, &f).is_empty());
        // given by hand with the wrong sign
        f.captures[2].offset_method = OffsetMethod::Manual;
        f.captures[2].clock_offset_ns = 1300000000;
        f.boundaries[1].delay_ns = Some(-2600000000);
        let w = clock_mistakes(None, None, &f);
        assert!(w[0].message.ends_with("try --offset backend=-1.300 (the sign of --offset looks reversed)"));
        f.captures[2].clock_offset_ns = -1300000000;
        f.boundaries[1].delay_ns = Some(2600000000);
        let w = clock_mistakes(None, None, &f);
        assert!(
            w[0].message.starts_with("requests take 2600.000 ms from egress to here"),
            "{}",
            w[0].message
        );
        assert!(w[0].message.ends_with("try --offset backend=1.300 (the sign of --offset looks reversed)"));
    }

    /// The order every boundary between two captures shows: right, reversed
    /// (TTL rising and requests arriving before they left, both), or in
    /// doubt; a middlebox setting the TTL, and the boundary inside a split
    /// capture, say nothing of it.
    #[test]
    fn the_path_order_is_what_every_boundary_between_two_captures_says() {
        let mut f = crate::report::fixtures::findings();
        assert_eq!(path_order(&f), PathOrder::Right);
        let flip = |f: &mut Findings, b: usize| {
            f.boundaries[b].ttl_decrement = Some(-1);
            f.boundaries[b].delay_ns = Some(-80_000);
        };
        flip(&mut f, 1);
        let PathOrder::Doubtful(why) = path_order(&f) else { panic!("{:?}", path_order(&f)) };
        assert!(why.contains("egress->backend (TTL +1, delay -0.080 ms) look given in reverse"), "{why}");
        assert!(why.contains("while decap->egress (TTL -1, delay 0.080 ms) go the right way"), "{why}");
        flip(&mut f, 0);
        assert_eq!(
            path_order(&f),
            PathOrder::Reversed(
                "decap->egress (TTL +1, delay -0.080 ms), egress->backend (TTL +1, delay -0.080 ms)".into()
            )
        );
        // only one of the two: TTL rising alone, or a negative delay alone, is no evidence either way
        f.boundaries[0].delay_ns = Some(80_000);
        assert!(matches!(path_order(&f), PathOrder::Reversed(w) if w.starts_with("egress->backend")));
        f.boundaries[0].ttl_decrement = Some(1);
        f.boundaries[0].delay_ns = Some(-80_000);
        assert!(matches!(path_order(&f), PathOrder::Reversed(_)));
        // a middlebox that sets the TTL: its rise says nothing
        f.boundaries[1].ttl_set_to = Some(64);
        assert_eq!(path_order(&f), PathOrder::Right);
        // the two sides of one capture: the host's boundary, not the files' order
        f.boundaries[1].ttl_set_to = None;
        f.captures[1].label = "node(in)".into();
        f.captures[2].label = "node(out)".into();
        assert_eq!(path_order(&f), PathOrder::Right);
        f.boundaries[0].delay_ns = Some(80_000);
        f.boundaries[0].ttl_decrement = Some(1);
        assert_eq!(path_order(&f), PathOrder::Right);
    }

    #[test]
    fn an_offset_leaving_most_flows_unmatched_suggests_the_other_sign() {
        let mut f = crate::report::fixtures::findings();
        f.boundaries[1].delay_ns = None;
        f.captures[2].offset_method = OffsetMethod::Manual;
        f.captures[2].clock_offset_ns = 2750000000;
        f.unmatched[1].count = 15; // of 31: not most
        assert!(clock_mistakes(None, None, &f).is_empty());
        f.unmatched[1].count = 16;
        let w = clock_mistakes(None, None, &f);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.starts_with("--offset backend=2.750 leaves 16 of 31 flows at backend unmatched")
                && w[0].message.contains("(--offset backend=-2.750)"),
            "{}",
            w[0].message
        );
        // an estimated offset with unmatched flows (background traffic) is no mistake
        f.captures[2].offset_method = OffsetMethod::RequestReply;
        assert!(clock_mistakes(None, None, &f).is_empty());
    }

    #[test]
    fn an_empty_capture_says_what_its_silence_does_to_the_verdicts_of_a_run_or_a_shard() {
        let mut f = crate::report::fixtures::findings();
        f.captures[2].packets = 0;
        let whole = premises(&f, Part::Whole);
        assert_eq!((whole.len(), whole[0].label.as_str()), (1, "backend"));
        assert!(
            whole[0].message.contains("entered next to it is reported as unknown"),
            "{}",
            whole[0].message
        );
        let shard = premises(&f, Part::Window);
        assert!(!shard[0].message.contains("is reported as unknown;"), "{}", shard[0].message);
        assert!(
            shard[0].message.contains("a time shard or a stream window cannot tell when a capture recorded"),
            "{}",
            shard[0].message
        );
        let live = premises(&f, Part::Live);
        assert!(
            live[0].message.contains("a live run takes a capture as recording until its input ends"),
            "{}",
            live[0].message
        );
        assert!(!live[0].message.contains("--stream"), "{}", live[0].message);
    }

    #[test]
    fn a_flipped_sign_is_recognised() {
        assert!(reversed(-2.0, 2.0));
        assert!(reversed(2.75, -2.7));
        assert!(!reversed(2.0, 2.0));
        assert!(!reversed(0.0, 0.0));
    }
}
