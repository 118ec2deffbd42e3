//! Correlation → Findings: per request the rewrites per boundary (snat, dnat,
//! port-only, proxy), the reply path, the outcome judged at the first capture,
//! per-capture times on capture 1's clock and one explanation line; per boundary
//! its traits; per capture its clock and unmatched flows. DESIGN.md step 5 is
//! normative for every rule here. No I/O.

mod explain;
pub mod model;
mod outcome;
mod reply;
mod rewrite;

pub use model::*;

use crate::correlate::{Correlation, LinkKind, OffsetMethodKind};
use crate::flows::{Flow, FlowProto, Flows};
use crate::warning::Warning;

/// What the verdict stage needs to know of each capture besides its flows.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureMeta {
    pub label: String,
    pub file: String,
    pub format: String,
    pub link_types: Vec<String>,
    pub packets: u64,
}

/// Settings of the verdict stage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerdictOptions {
    /// List the unmatched flows (`--all`), not only count them.
    pub list_unmatched: bool,
}

/// Builds the findings of a run.
pub fn verdict(
    metas: &[CaptureMeta],
    captures: &[Flows],
    corr: &Correlation,
    warnings: &[Warning],
    options: &VerdictOptions,
) -> Findings {
    let labels: Vec<&str> = metas.iter().map(|m| m.label.as_str()).collect();
    let ctx = Ctx { labels: &labels, captures, corr };
    let mut order: Vec<usize> = (0..corr.chains.len()).collect();
    let first = |c: usize| -> Option<&Flow> { corr.chains[c].hops[0].and_then(|f| captures[0].flows.get(f)) };
    order.sort_by_key(|&c| first(c).map(|f| (f.first_ns, f.client)));
    let requests: Vec<Request> =
        order.iter().enumerate().map(|(n, &c)| request(&ctx, c, n as u64 + 1)).collect();
    Findings {
        tuplecorr: crate::VERSION.to_string(),
        captures: capture_summaries(metas, captures, corr),
        boundaries: rewrite::boundaries(&ctx),
        requests,
        unmatched: unmatched(&ctx, options),
        warnings: warnings
            .iter()
            .map(|w| WarningOut {
                label: w.label.clone(),
                record: w.record,
                byte_offset: w.byte_offset,
                message: w.message(),
            })
            .collect(),
    }
}

/// Shared view of the run for the verdict helpers.
pub(crate) struct Ctx<'a> {
    pub labels: &'a [&'a str],
    pub captures: &'a [Flows],
    pub corr: &'a Correlation,
}

impl Ctx<'_> {
    pub fn flow(&self, capture: usize, flow: usize) -> &Flow {
        &self.captures[capture].flows[flow]
    }

    pub fn between(&self, a: usize, b: usize) -> String {
        format!("{}->{}", self.labels[a], self.labels[b])
    }

    /// Recorded time → capture 1's clock.
    pub fn corrected(&self, capture: usize, ts_ns: i64) -> i64 {
        ts_ns.saturating_sub(self.corr.clocks[capture].offset_ns)
    }
}

pub(crate) fn proto_of(f: &Flow) -> Proto {
    match f.proto {
        FlowProto::Tcp => Proto::Tcp,
        FlowProto::Udp => Proto::Udp,
        FlowProto::Icmp => Proto::Icmp,
    }
}

fn ms(ns: i64) -> f64 {
    round_ms(ns as f64 / 1e6)
}

fn request(ctx: &Ctx<'_>, chain_ix: usize, number: u64) -> Request {
    let chain = &ctx.corr.chains[chain_ix];
    let n = ctx.labels.len();
    let flows: Vec<Option<&Flow>> = (0..n).map(|c| chain.hops[c].map(|f| ctx.flow(c, f))).collect();
    let first = flows[0].expect("every chain starts at capture 1");
    let captures: Vec<Hop> = (0..n).map(|c| hop(ctx, c, flows[c])).collect();
    let matches: Vec<Match> = chain
        .links
        .iter()
        .map(|l| Match {
            between: ctx.between(l.from, l.to),
            strength: l.strength,
            evidence: l.evidence.clone(),
            candidates: l
                .candidates
                .iter()
                .map(|&f| {
                    let fl = ctx.flow(l.to, f);
                    format!(
                        "{} {} @{}",
                        ctx.labels[l.to],
                        fl.describe(),
                        crate::time::rfc3339(ctx.corrected(l.to, fl.first_ns))
                    )
                })
                .collect(),
        })
        .collect();
    let (source, destination) = rewrite::changes(ctx, chain, &flows);
    let reply = reply::reply(ctx, &flows);
    let outcome = outcome::outcome(ctx, &flows);
    let mut req = Request {
        request: number,
        proto: proto_of(first),
        captures,
        matches,
        source,
        destination,
        reply,
        outcome,
        explanation: String::new(),
    };
    req.explanation = explain::explain(ctx, &req, chain.links.iter().any(|l| l.kind == LinkKind::SeqShift));
    if let Some(s) = explain::syn_missed(ctx, chain) {
        req.explanation = format!("{}; {s}", req.explanation);
    }
    req
}

fn hop(ctx: &Ctx<'_>, c: usize, flow: Option<&Flow>) -> Hop {
    let label = ctx.labels[c].to_string();
    let Some(f) = flow else {
        return Hop::unseen(label);
    };
    let icmp = f.proto == FlowProto::Icmp;
    let start = f.first_client_ns.unwrap_or(f.first_ns);
    let rtt = match (f.first_client_ns, f.first_reply_ns()) {
        (Some(a), Some(b)) if b >= a => Some(ms(b.saturating_sub(a))),
        _ => None,
    };
    let corrected = ctx.corrected(c, f.first_ns);
    Hop {
        label,
        seen: true,
        time: Some(crate::time::rfc3339(corrected)),
        raw_time: Some(crate::time::rfc3339(f.first_ns)),
        client: Some(f.client.display(icmp)),
        server: Some(f.server.display(icmp)),
        reply_seen: f.reply_seen(),
        rtt_ms: rtt,
        packets_to_server: Some(f.packets_to_server),
        packets_to_client: Some(f.packets_to_client),
        bytes_to_server: Some(f.bytes_to_server),
        bytes_to_client: Some(f.bytes_to_client),
        community_id: Some(community_id(f)),
        wireshark_filter: Some(crate::flowid::wireshark_filter(
            ip_proto_number(f),
            f.client.addr,
            f.client.port,
            f.server.addr,
            f.server.port,
            icmp.then_some(f.client.port),
        )),
        icmp_id: icmp.then_some(f.client.port),
        icmp_seqs: f.echo.as_ref().map(|e| {
            if e.first_seq == e.last_seq {
                e.first_seq.to_string()
            } else {
                format!("{}-{}", e.first_seq, e.last_seq)
            }
        }),
        time_ns: Some(ctx.corrected(c, start)),
    }
}

/// IP protocol number of a flow (ICMPv6 for IPv6 echo).
fn ip_proto_number(f: &Flow) -> u8 {
    match (f.proto, f.v6) {
        (FlowProto::Tcp, _) => 6,
        (FlowProto::Udp, _) => 17,
        (FlowProto::Icmp, false) => 1,
        (FlowProto::Icmp, true) => 58,
    }
}

/// Community ID v1 of the flow's tuple at this capture (ICMP: echo request type/code).
fn community_id(f: &Flow) -> String {
    let proto = ip_proto_number(f);
    match f.proto {
        FlowProto::Icmp => {
            let ty = if f.v6 { 128 } else { 8 };
            crate::flowid::community_id(proto, f.client.addr, ty, f.server.addr, 0)
        }
        _ => crate::flowid::community_id(proto, f.client.addr, f.client.port, f.server.addr, f.server.port),
    }
}

fn capture_summaries(metas: &[CaptureMeta], captures: &[Flows], corr: &Correlation) -> Vec<CaptureSummary> {
    metas
        .iter()
        .zip(captures)
        .zip(&corr.clocks)
        .map(|((m, f), clock)| CaptureSummary {
            label: m.label.clone(),
            file: m.file.clone(),
            format: m.format.clone(),
            link_types: m.link_types.clone(),
            packets: m.packets,
            flows: f.flows.len() as u64,
            clock_offset_ms: ms(clock.offset_ns),
            offset_spread_ms: ms(clock.spread_ns),
            offset_samples: clock.samples as u64,
            offset_method: match clock.method {
                OffsetMethodKind::Reference => OffsetMethod::Reference,
                OffsetMethodKind::RequestReply => OffsetMethod::RequestReply,
                OffsetMethodKind::OneWay => OffsetMethod::OneWay,
                OffsetMethodKind::Manual => OffsetMethod::Manual,
                OffsetMethodKind::None => OffsetMethod::None,
            },
        })
        .collect()
}

fn unmatched(ctx: &Ctx<'_>, options: &VerdictOptions) -> Vec<Unmatched> {
    ctx.corr
        .unmatched
        .iter()
        .enumerate()
        .skip(1)
        .map(|(c, flows)| Unmatched {
            label: ctx.labels[c].to_string(),
            count: flows.len() as u64,
            flows: if options.list_unmatched {
                flows
                    .iter()
                    .map(|&i| {
                        let f = ctx.flow(c, i);
                        let icmp = f.proto == FlowProto::Icmp;
                        UnmatchedFlow {
                            proto: proto_of(f),
                            client: f.client.display(icmp),
                            server: f.server.display(icmp),
                            time: crate::time::rfc3339(ctx.corrected(c, f.first_ns)),
                            packets: f.packets_to_server + f.packets_to_client,
                        }
                    })
                    .collect()
            } else {
                Vec::new()
            },
        })
        .collect()
}
