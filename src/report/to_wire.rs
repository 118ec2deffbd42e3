//! Typed `verdict::Findings` (plus their capture labels) → the wire view
//! (`wire`'s types) that the JSON, NDJSON, Parquet and CSV writers write: one
//! way only; the way back is `wire`'s `into_typed`. In test builds each
//! request made is checked against its own words (`consistency`). Never
//! reads captures.

use crate::report::wire::*;
use crate::verdict as v;
use std::fmt::Write as _;

// ---- typed → wire ----

/// The whole report's wire view.
pub fn findings(f: &v::Findings) -> Findings {
    findings_with(&crate::report::words::Words::new(f), f)
}

/// [`findings`] with the names of `--names` (`*_name` fields) and `--tz` (`time_local`).
pub fn findings_with(w: &crate::report::words::Words<'_>, f: &v::Findings) -> Findings {
    use rayon::prelude::*;
    Findings {
        requests: f.requests.par_iter().map(|r| request(w, r)).collect(),
        ..findings_without_requests(f)
    }
}

/// The report's wire view with an empty request list and, with `--masq-agent`
/// / `--masq-agent-after`, the run's `intent` and `blast_radius` from `why`:
/// what the JSON writer prints around the requests and the Parquet file's
/// metadata holds.
pub fn findings_around(f: &v::Findings, why: Option<&crate::why::attach::Explained>) -> Findings {
    Findings {
        intent: why.map_or_else(Vec::new, |x| x.intent.iter().map(IntentOut::of).collect()),
        blast_radius: why.map_or_else(Vec::new, |x| x.blast.iter().map(BlastOut::of).collect()),
        ..findings_without_requests(f)
    }
}

/// The report's wire view with an empty request list (the JSON writer prints requests apart).
pub fn findings_without_requests(f: &v::Findings) -> Findings {
    let w = crate::report::words::Words::new(f);
    Findings {
        tuplecorr: f.tuplecorr.clone(),
        captures: f.captures.iter().map(capture).collect(),
        boundaries: f.boundaries.iter().map(|b| boundary(&w, b)).collect(),
        requests: Vec::new(),
        unmatched: f.unmatched.iter().map(|u| unmatched(&w, u)).collect(),
        warnings: f.warnings.iter().map(warning).collect(),
        intent: Vec::new(),
        blast_radius: Vec::new(),
    }
}

fn capture(c: &v::CaptureSummary) -> CaptureSummary {
    CaptureSummary {
        label: c.label.clone(),
        file: c.file.clone(),
        format: c.format.clone(),
        link_types: c.link_types.clone(),
        packets: c.packets,
        overlays: c.overlays.iter().map(|(o, n)| OverlayOut::of(o, *n)).collect(),
        flows: c.flows,
        clock_offset_ms: ms(c.clock_offset_ns),
        offset_spread_ms: ms(c.offset_spread_ns),
        offset_samples: c.offset_samples,
        offset_method: c.offset_method,
        recorded_from: c.recorded.map(|(a, _)| crate::time::rfc3339(a)),
        recorded_to: c.recorded.map(|(_, b)| crate::time::rfc3339(b)),
    }
}

/// One boundary's wire view.
pub fn boundary(w: &crate::report::words::Words<'_>, b: &v::Boundary) -> Boundary {
    Boundary {
        between: w.between(b.between),
        delay_ms: b.delay_ns.map(ms),
        ttl_decrement: b.ttl_decrement,
        ttl_set_to: b.ttl_set_to,
        ttl_by: (b.ttl_otherwise())
            .map(|t| TtlByOut {
                proto: t.proto,
                direction: if t.reply { "replies" } else { "requests" }.to_string(),
                ttl_decrement: t.decrement,
                ttl_set_to: t.set_to,
                requests: t.requests,
            })
            .collect(),
        ports: kept_word(b.ports, PORTS_CHANGED).to_string(),
        server_ports: kept_word(b.server_ports, PORTS_CHANGED).to_string(),
        icmp_id: kept_word(b.icmp_id, ICMP_ID_CHANGED).to_string(),
        mss_clamped: b.mss_clamped,
        seq_shift: b.seq_shift,
        seq_shift_by: b.seq_shift_by,
        tos: kept_word(b.tos, TOS_CHANGED).to_string(),
        tos_change: b.tos_change.map(|(x, y)| TosChange {
            before: x,
            after: y,
            dscp_before: x >> 2,
            dscp_after: y >> 2,
            ecn_before: x & 3,
            ecn_after: y & 3,
        }),
        vlan: kept_word(b.vlan, VLAN_CHANGED).to_string(),
        vlan_change: b.vlan_change.map(|(before, after)| VlanChange { before, after }),
        smallest_mtu: b.smallest_mtu.map(|(m, _)| m),
        mtu_sender: b.smallest_mtu.map(|(_, a)| a.to_string()),
        syn_mss_before: b.syn_mss.map(|(x, _)| x),
        syn_mss_after: b.syn_mss.map(|(_, y)| y),
        largest_segment: b.largest_segment,
        fragmentation: b.fragmentation.map(|f| BoundaryFragmentsOut {
            datagrams: f.datagrams,
            incomplete: f.incomplete,
            fragments_lost: f.fragments_lost,
            largest_fragment: f.largest_fragment,
        }),
    }
}

/// One request's wire view (what NDJSON writes a line of).
pub fn request(w: &crate::report::words::Words<'_>, r: &v::Request) -> Request {
    let mut q = Request::read_back(r.request, r.proto, Vec::new());
    request_into(w, r, &mut q);
    q
}

/// [`request`] into `q`, reusing the strings of its hops (a writer renders
/// thousands of requests through one: no allocation per hop field).
pub fn request_into(w: &crate::report::words::Words<'_>, r: &v::Request, q: &mut Request) {
    hops_into(w, r, &mut q.captures, true);
    request_with(w, r, q);
}

/// [`request_into`] for the CSV cells (`report::csv_columns`): each hop with what a
/// cell shows (label, seen, endpoints and their names, reply seen, counts),
/// without its times, Community ID and Wireshark filter (the CSV has no column
/// for them; hashing them cost ×1.1 on a CSV of small flows).
pub fn request_cells_into(w: &crate::report::words::Words<'_>, r: &v::Request, q: &mut Request) {
    hops_into(w, r, &mut q.captures, false);
    request_with(w, r, q);
}

/// The wire view of the request's hops into `hops` (its strings reused);
/// without `full`, no times, Community IDs or filters.
fn hops_into(w: &crate::report::words::Words<'_>, r: &v::Request, hops: &mut Vec<Hop>, full: bool) {
    hops.resize_with(r.captures.len(), Hop::default);
    let local = w.time.filter(|t| t.zone != crate::report::when::Zone::Utc);
    let name = |e: &Option<v::Endpoint>| e.and_then(|e| w.name_of(e.addr)).map(str::to_string);
    for (i, h) in r.captures.iter().enumerate() {
        let (done, rest) = hops.split_at_mut(i);
        let out = &mut rest[0];
        out.label.clear();
        out.label.push_str(w.label(i));
        out.seen = h.seen;
        fill(&mut out.client, |s| h.client.map(|e| crate::report::endpoint::push_endpoint(s, e)).is_some());
        fill(&mut out.server, |s| h.server.map(|e| crate::report::endpoint::push_endpoint(s, e)).is_some());
        out.client_name = name(&h.client);
        out.server_name = name(&h.server);
        out.reply_seen = h.reply_seen;
        out.rtt_ms = h.rtt_ns.map(ms);
        out.packets_to_server = h.packets_to_server;
        out.packets_to_client = h.packets_to_client;
        out.bytes_to_server = h.bytes_to_server;
        out.bytes_to_client = h.bytes_to_client;
        out.icmp_id = h.icmp_id;
        out.largest_to_server = h.largest_to_server;
        out.largest_to_client = h.largest_to_client;
        out.iface = h.iface().map(str::to_string);
        out.reply_iface = h.reply_iface().map(str::to_string);
        out.host = h.host().map(str::to_string);
        if !full {
            (out.time, out.raw_time, out.time_local, out.community_id, out.wireshark_filter) =
                (None, None, None, None, None);
            out.icmp_seqs = None;
            continue;
        }
        fill(&mut out.time, |s| h.time_ns.map(|ns| crate::time::push_rfc3339(s, ns)).is_some());
        fill(&mut out.raw_time, |s| h.raw_time_ns.map(|ns| crate::time::push_rfc3339(s, ns)).is_some());
        out.time_local = local.and_then(|t| h.time_ns.map(|ns| t.rfc3339(ns)));
        // A hop with the previous hop's tuple (no NAT between them) has its
        // Community ID and filter: copied, not hashed and written again.
        let same = i > 0 && {
            let p = &r.captures[i - 1];
            (p.client, p.server, p.icmp_id) == (h.client, h.server, h.icmp_id) && h.client.is_some()
        };
        match done.last().filter(|_| same) {
            Some(prev) => {
                fill(&mut out.community_id, |s| {
                    prev.community_id.as_deref().map(|c| s.push_str(c)).is_some()
                });
                fill(&mut out.wireshark_filter, |s| {
                    prev.wireshark_filter.as_deref().map(|c| s.push_str(c)).is_some()
                });
            }
            None => {
                fill(&mut out.community_id, |s| crate::report::endpoint::push_community_id(s, r.proto, h));
                fill(&mut out.wireshark_filter, |s| {
                    crate::report::endpoint::push_wireshark_filter(s, r.proto, h)
                });
            }
        }
        out.icmp_seqs = h.icmp_seqs.map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") });
    }
}

/// Sets an optional text field through `write` (false: None), reusing the
/// field's string.
fn fill(slot: &mut Option<String>, write: impl FnOnce(&mut String) -> bool) {
    let mut text = slot.take().unwrap_or_default();
    text.clear();
    if write(&mut text) {
        *slot = Some(text);
    }
}

/// Sets `text` to what `write` writes, reusing its string.
fn set(text: &mut String, write: impl FnOnce(&mut String)) {
    text.clear();
    write(text);
}

/// Fills the wire view `q` of the request whose hops are already in it: the
/// strings of the parts every request has (matches, changes, reply, outcome)
/// are rewritten in place, so a writer going through thousands of requests
/// with one `q` allocates only for the rare parts.
fn request_with(w: &crate::report::words::Words<'_>, r: &v::Request, q: &mut Request) {
    q.request = r.request;
    q.proto = r.proto;
    q.matches.truncate(r.matches.len());
    for (i, m) in r.matches.iter().enumerate() {
        if i == q.matches.len() {
            q.matches.push(Match {
                between: String::new(),
                strength: m.strength,
                evidence: Vec::new(),
                candidates: Vec::new(),
            });
        }
        let out = &mut q.matches[i];
        set(&mut out.between, |s| w.push_between(s, m.between));
        out.strength = m.strength;
        out.evidence.clear();
        out.evidence.extend_from_slice(&m.evidence);
        out.candidates.clear();
        out.candidates.extend(m.candidates.iter().map(|c| {
            format!(
                "{} {} -> {} @{}",
                w.label(c.capture),
                c.client,
                c.server,
                crate::time::rfc3339(c.time_ns)
            )
        }));
    }
    changes(w, r.request, crate::why::attach::Side::Source, &r.source, &mut q.source);
    changes(w, r.request, crate::why::attach::Side::Destination, &r.destination, &mut q.destination);
    let label = |slot: &mut Option<String>, c: Option<usize>| {
        fill(slot, |s| c.map(|c| s.push_str(w.label(c))).is_some())
    };
    let reply = &mut q.reply;
    reply.path = r.reply.path;
    fill(&mut reply.lost_between, |s| r.reply.lost_between.map(|b| w.push_between(s, b)).is_some());
    label(&mut reply.bypassed, r.reply.bypassed);
    label(&mut reply.reached, r.reply.reached);
    reply.lost_cause = r.reply.lost_cause.map(|l| LostCause {
        icmp: format!("{}/{}", l.icmp.ty, l.icmp.code),
        by: l.by.to_string(),
        seen_at: w.label(l.seen_at).to_string(),
    });
    reply.unexpected_source = r.reply.unexpected_source.map(|u| UnexpectedSource {
        from: crate::report::endpoint::endpoint_text(u.from),
        seen_at: w.label(u.seen_at).to_string(),
        packet: u.packet,
    });
    let outcome = &mut q.outcome;
    outcome.kind = r.outcome.kind;
    fill(&mut outcome.by, |s| r.outcome.by.map(|a| write!(s, "{a}").is_ok()).is_some());
    fill(&mut outcome.by_name, |s| r.outcome.by.and_then(|a| w.name_of(a)).map(|n| s.push_str(n)).is_some());
    fill(&mut outcome.origin, |s| r.outcome.origin.map(|o| w.push_origin(s, o)).is_some());
    fill(&mut outcome.icmp, |s| r.outcome.icmp.map(|i| write!(s, "{}/{}", i.ty, i.code).is_ok()).is_some());
    outcome.icmp_cause = crate::report::icmp::icmp_cause(r);
    q.seq_shift = (r.seq_shift.iter())
        .map(|x| SeqShiftOut { between: w.between(x.between), client: x.client, server: x.server })
        .collect();
    q.syn_missed = r.syn_missed.map(|m| SynMissed {
        at: w.label(m.at).to_string(),
        syns: m.syns,
        retransmission_after_ms: ms(m.after_ns),
    });
    q.attempts = (r.attempts.iter())
        .map(|a| Attempt {
            at: w.label(a.capture).to_string(),
            client: a.client.to_string(),
            server: a.server.to_string(),
            time: crate::time::rfc3339(a.time_ns),
            ending: a.ending,
        })
        .collect();
    q.data = r.data.as_ref().map(|d| data(w, d));
    q.identity = r.identity.as_deref().map(|i| identity(w, i));
    q.blind = r.blind.iter().map(|&c| w.label(c).to_string()).collect();
    q.apart = r.apart.iter().map(|&c| w.label(c).to_string()).collect();
    q.same_tuple = r.same_tuple.iter().map(|&c| w.label(c).to_string()).collect();
    q.fragments = r.fragments.as_deref().map(|f| FragmentsOut::of(w, f));
    app_into(w, r.app.as_ref(), &mut q.app);
    q.exchanges = r.exchanges.as_deref().map(|x| ExchangesOut::of(w, x));
    q.loss = w.why.and_then(|x| x.loss(r.request)).map(LossOut::of);
    q.predicted = w.why.and_then(|x| x.predicted.get(&r.request)).map(PredictedOut::of);
    q.explanation = crate::report::explain::explain(w, r);
    // Every report a test build writes is checked: its words against its fields.
    #[cfg(debug_assertions)]
    {
        let found = crate::report::consistency::contradictions(q);
        assert!(found.is_empty(), "the explanation contradicts the fields: {}", found.join("; "));
    }
}

/// The wire view of a request's application facts into `slot`, its strings
/// reused (text escaped here, from the bytes the flow stage kept).
fn app_into(w: &crate::report::words::Words<'_>, a: Option<&v::App>, slot: &mut Option<AppOut>) {
    use crate::flows::facts::Field;
    let Some(a) = a else {
        *slot = None;
        return;
    };
    let f = &a.facts;
    let out = slot.get_or_insert_with(|| AppOut::new(f.proto, String::new()));
    out.protocol = f.proto;
    set(&mut out.at, |s| s.push_str(w.label(a.at)));
    for (field, text) in [
        (Field::Method, &mut out.method),
        (Field::Target, &mut out.target),
        (Field::Host, &mut out.host),
        (Field::Sni, &mut out.sni),
        (Field::Qname, &mut out.qname),
    ] {
        fill(text, |s| f.text_into(field, s));
    }
    out.status = f.status;
    out.alpn.clear();
    out.alpn.extend(f.alpn_text());
    fill(&mut out.qtype, |s| f.qtype.map(|t| push_qtype(s, t)).is_some());
    fill(&mut out.rcode, |s| f.rcode.map(|r| push_rcode(s, r)).is_some());
}

fn segment(s: v::Segment) -> Segment {
    Segment { bytes: s.bytes, count: s.count }
}

fn data(w: &crate::report::words::Words<'_>, d: &v::DataPath) -> Data {
    let label = |c: usize| w.label(c).to_string();
    Data {
        reached: d.reached.map(label),
        stopped: d.stopped.map(|b| w.between(b)),
        stopped_segment: d.stopped_segment.map(segment),
        server_reached: d.server_reached.map(label),
        server_stopped: d.server_stopped.map(|b| w.between(b)),
        server_stopped_segment: d.server_stopped_segment.map(segment),
        cut: d.cut.map(|c| w.between(c.between)),
        cut_from: d.cut.map(|c| segment(c.before)),
        cut_to: d.cut.map(|c| segment(c.after)),
        server_cut: d.server_cut.map(|c| w.between(c.between)),
        server_cut_from: d.server_cut.map(|c| segment(c.before)),
        server_cut_to: d.server_cut.map(|c| segment(c.after)),
        mtu: d.mtu.as_ref().map(|m| Mtu {
            mtu: m.mtu,
            sender: m.sender.to_string(),
            icmp: if m.v6 { "2/0" } else { "3/4" }.to_string(),
            messages: m.messages,
            seen_at: m.seen_at.iter().map(|&c| label(c)).collect(),
            lost: m.lost.map(|b| w.between(b)),
        }),
    }
}

/// The wire view of one side's changes into `out`, its strings reused.
fn changes(
    w: &crate::report::words::Words<'_>,
    request: u64,
    side: crate::why::attach::Side,
    list: &[v::Change],
    out: &mut Changes,
) {
    out.changed.truncate(list.len());
    for (i, c) in list.iter().enumerate() {
        if i == out.changed.len() {
            out.changed.push(Change {
                between: String::new(),
                kind: c.kind,
                before: String::new(),
                after: String::new(),
                before_name: None,
                after_name: None,
                rule: None,
                rule_note: None,
                conntrack: None,
            });
        }
        let x = &mut out.changed[i];
        let why = w.why.and_then(|x| x.of(request, side, c.between));
        let found = why.and_then(|x| x.rule.as_ref());
        set(&mut x.between, |s| w.push_between(s, c.between));
        x.kind = c.kind;
        set(&mut x.before, |s| crate::report::endpoint::push_endpoint(s, c.before));
        set(&mut x.after, |s| crate::report::endpoint::push_endpoint(s, c.after));
        fill(&mut x.before_name, |s| w.name_of(c.before.addr).map(|n| s.push_str(n)).is_some());
        fill(&mut x.after_name, |s| w.name_of(c.after.addr).map(|n| s.push_str(n)).is_some());
        x.rule = found.and_then(|f| match f {
            crate::why::eval::Found::Rule { rule, decided } => Some(RuleOut::of(rule, decided)),
            _ => None,
        });
        x.rule_note = found.and_then(rule_note);
        x.conntrack = why.and_then(|x| x.conntrack.as_ref()).map(|x| ConntrackOut {
            file: x.file.clone(),
            line: x.line,
            confirmed: x.confirmed,
            time: x.time_ns.map(|t| w.time(t)),
            reply: x.reply.clone(),
        });
    }
    out.kept = (w.why.map_or(&[][..], |x| x.kept(request, side)).iter())
        .filter_map(|(at, f)| Some(Kept { at: at.clone(), rule_note: crate::why::attach::kept_note(f)? }))
        .collect();
}

fn unmatched(w: &crate::report::words::Words<'_>, u: &v::Unmatched) -> Unmatched {
    Unmatched {
        label: w.label(u.capture).to_string(),
        count: u.count,
        flows: u
            .flows
            .iter()
            .map(|f| UnmatchedFlow {
                proto: f.proto,
                client: f.client.to_string(),
                server: f.server.to_string(),
                time: crate::time::rfc3339(f.time_ns),
                packets: f.packets,
            })
            .collect(),
    }
}

fn warning(x: &v::WarningOut) -> WarningOut {
    WarningOut {
        label: x.label.clone(),
        record: x.record,
        byte_offset: x.byte_offset,
        message: x.message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Evidence;

    #[test]
    fn a_wire_request_made_from_another_s_strings_is_the_same() {
        let f = crate::report::fixtures::findings();
        let (names, time) = crate::report::names_and_zone("198.19.3.17 node-a\n198.18.90.42 client-a\n");
        let named = crate::report::words::Words::with(&f, Some(&names), Some(&time));
        for words in [crate::report::words::Words::new(&f), named] {
            // Every request after every other, through one wire view.
            for a in &f.requests {
                for b in &f.requests {
                    let mut wire = request(&words, a);
                    request_into(&words, b, &mut wire);
                    assert_eq!(wire, request(&words, b), "request {} after {}", b.request, a.request);
                }
            }
        }
    }

    #[test]
    fn every_wire_name_reads_back_to_its_value() {
        for p in v::ReplyPath::ALL {
            assert_eq!(v::ReplyPath::from_wire(p.wire()), Some(*p));
        }
        for k in v::OutcomeKind::ALL {
            assert_eq!(v::OutcomeKind::from_wire(k.wire()), Some(*k));
        }
        for e in v::AttemptEnd::ALL {
            assert_eq!(v::AttemptEnd::from_wire(e.wire()), Some(*e));
        }
        assert_eq!(serde_json::to_string(&v::AttemptEnd::BareAck).unwrap(), "\"bare-ack\"");
        assert_eq!(serde_json::to_string(&v::ChangeKind::PortOnly).unwrap(), "\"port-only\"");
        assert_eq!(serde_json::from_str::<v::OffsetMethod>("\"one-way\"").unwrap(), v::OffsetMethod::OneWay);
        assert!(serde_json::from_str::<v::Proto>("\"sctp\"").is_err());
        assert_eq!(Evidence::from_wire("client-fingerprint"), Some(Evidence::ClientFingerprint));
        assert_eq!(Evidence::from_wire("request-id"), Some(Evidence::RequestId));
        assert_eq!(Evidence::from_wire("seq-ack"), Some(Evidence::SeqAck));
    }

    #[test]
    fn wire_report_reads_back_to_the_same_typed_requests() {
        let typed = crate::report::fixtures::findings();
        let wire = findings(&typed);
        let text = serde_json::to_string(&wire).unwrap();
        let back: Findings = serde_json::from_str(&text).unwrap();
        let back = back.into_typed().unwrap();
        for (a, b) in back.requests.iter().zip(&typed.requests) {
            assert_eq!((a.request, a.proto), (b.request, b.proto));
            assert_eq!(a.source, b.source);
            assert_eq!(a.destination, b.destination);
            assert_eq!(a.reply, b.reply);
            assert_eq!(a.attempts, b.attempts);
            assert_eq!(a.outcome, b.outcome);
            let clients = |r: &v::Request| r.captures.iter().map(|h| h.client).collect::<Vec<_>>();
            assert_eq!(clients(a), clients(b));
        }
    }

    #[test]
    fn fragments_are_written_only_when_present_and_read_back() {
        let mut typed = crate::report::fixtures::findings();
        assert!(!serde_json::to_string(&findings(&typed)).unwrap().contains("fragment"));
        typed.requests[0].fragments = Some(Box::new(crate::report::fixtures::fragments_lost()));
        let text = serde_json::to_string(&findings(&typed)).unwrap();
        assert!(
            text.contains(
                r#""lost":[{"between":"egress->backend","direction":"request","fragments_sent":6,"datagrams":1,"datagram_bytes":8028,"fragments_arrived":3,"datagrams_arrived":1,"incomplete":1,"largest_passed":1396}]"#
            ),
            "{text}"
        );
        assert!(text.contains(r#"{"label":"backend","to_server":{"fragments":3,"datagrams":1,"incomplete":1,"largest_fragment":1396},"#), "{text}");
        let back = serde_json::from_str::<Findings>(&text).unwrap().into_typed().unwrap();
        let (a, b) =
            (back.requests[0].fragments.as_deref().unwrap(), typed.requests[0].fragments.as_deref().unwrap());
        assert_eq!(a.captures, b.captures);
        assert_eq!(a.lost.len(), 1);
        // What the explanation reads survives the trip.
        let w = crate::report::words::Words::new(&typed);
        assert_eq!(
            crate::report::explain::explain(&w, &back.requests[0]),
            crate::report::explain::explain(&w, &typed.requests[0])
        );
    }

    #[test]
    fn identity_is_written_only_when_present_and_reads_back() {
        let mut typed = crate::report::fixtures::findings();
        assert!(!serde_json::to_string(&findings(&typed)).unwrap().contains("identity"));
        typed.requests[0].identity = Some(Box::new(crate::report::fixtures::proxied_identity()));
        typed.requests[1].identity = Some(Box::new(crate::report::fixtures::spoofed_identity()));
        let mut unknown = crate::report::fixtures::proxied_identity();
        let c = unknown.carried.as_mut().unwrap();
        (c.addr, c.port) = (None, None);
        (unknown.added, unknown.preserved) = (None, false);
        typed.requests[2].identity = Some(Box::new(unknown));
        let text = serde_json::to_string(&findings(&typed)).unwrap();
        assert!(
            text.contains(
                r#""identity":{"at":"backend","peer":"198.19.3.17:40112","carrier":"proxy-v1","carried":"198.18.90.42:51514","added":"egress->backend","preserved":true}"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#""added":"client-side","preserved":false,"client_set":"203.0.113.9"}"#),
            "{text}"
        );
        assert!(text.contains(r#""carried":"unknown","preserved":false}"#), "{text}");
        let back = serde_json::from_str::<Findings>(&text).unwrap().into_typed().unwrap();
        for i in 0..4 {
            assert_eq!(back.requests[i].identity, typed.requests[i].identity, "request {}", i + 1);
        }
        let labels = vec!["a".to_string(), "b".to_string()];
        let bad = IdentityOut {
            at: "a".into(),
            peer: "198.18.0.1:1".into(),
            carrier: None,
            carried: Some("198.18.0.2".into()),
            added: None,
            preserved: false,
            client_set: None,
        };
        assert!(bad.into_typed(&labels).unwrap_err().contains("without a carrier"));
    }

    #[test]
    fn app_facts_are_written_only_when_present_and_read_back() {
        let mut typed = crate::report::fixtures::findings();
        assert!(!serde_json::to_string(&findings(&typed)).unwrap().contains("\"app\""));
        for (r, a) in typed.requests.iter_mut().zip(crate::report::fixtures::apps()) {
            r.app = Some(a);
        }
        let text = serde_json::to_string(&findings(&typed)).unwrap();
        for want in [
            r#""app":{"protocol":"http","at":"decap","method":"GET","target":"/a?b=1\\x20c","host":"-cmd|x","status":503}"#,
            r#""app":{"protocol":"tls","at":"egress","sni":"=app.example","alpn":["-h2","http/1.1","a\\x2cb"]}"#,
            r#""app":{"protocol":"dns","at":"decap","qname":"nx.app.example","qtype":"HTTPS","rcode":"NXDOMAIN"}"#,
            r#""app":{"protocol":"http","at":"decap","status":400}"#,
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
        let back = serde_json::from_str::<Findings>(&text).unwrap().into_typed().unwrap();
        for (a, b) in back.requests.iter().zip(&typed.requests) {
            assert_eq!(a.app, b.app, "request {}", b.request);
        }
        // Numbers without a name are written and read as RFC 3597 / numbered words.
        assert_eq!((qtype_name(65534), qtype_of("TYPE65534")), ("TYPE65534".to_string(), Ok(65534)));
        assert_eq!((rcode_name(12), rcode_of("RCODE12")), ("RCODE12".to_string(), Ok(12)));
        assert!(qtype_of("BOGUS").is_err() && rcode_of("RCODE999").is_err());
    }

    #[test]
    fn foreign_values_are_refused_with_what_is_wrong() {
        let labels = vec!["a".to_string(), "b".to_string()];
        assert_eq!(between_of(&labels, "a->b"), Ok(v::Between { from: 0, to: 1 }));
        assert!(between_of(&labels, "a->c").unwrap_err().contains("\"c\""));
        assert_eq!(origin_of(&labels, "b"), Ok(v::Origin::Capture(1)));
        assert_eq!(icmp_of("3/13"), Ok(v::IcmpCode { ty: 3, code: 13 }));
        assert!(icmp_of("3").is_err());
        assert!(endpoint_of("nowhere").is_err());
    }
}
