//! Correlation → Findings: per request the rewrites per boundary (snat, dnat,
//! port-only, proxy), the reply path, the outcome judged at the first capture and
//! per-capture times on capture 1's clock; per boundary its traits; per capture
//! its clock and unmatched flows. docs/output.md "Verdicts" is normative for every
//! rule here. Takes flows, their correlation and warnings; gives typed `Findings`
//! (addresses, ns, capture indices, enums). Never formats text, no I/O.

mod data;
mod exchanges;
mod identity;
mod model;
mod outcome;
mod premise;
mod reply;
mod rewrite;
mod stray;

pub use model::*;
pub use premise::recorded;
pub use rewrite::{finish_boundaries, BoundaryTally};

use crate::correlate::{Correlation, LinkKind};
use crate::flows::{Flow, FlowProto, Flows};
use crate::warning::Warning;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
/// What the verdict stage needs to know of each capture besides its flows.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureMeta {
    pub label: String,
    pub file: String,
    pub format: String,
    pub link_types: Vec<String>,
    pub packets: u64,
    /// Overlays peeled off this point's packets (kind and VNI/key, packets).
    pub overlays: Vec<(crate::decode::Overlay, u64)>,
    /// A side of a split capture (`node(in)`, `node(out)`): the names of the
    /// interfaces its packets were seen on, by index; empty for a whole
    /// capture. Each request's interface there is a field of its [`Hop`].
    pub interfaces: Vec<(u32, String)>,
    /// A point captured on several hosts: each host's files, by `Flow::host`;
    /// empty for one host. Each request's host is a field of its [`Hop`].
    pub hosts: Vec<String>,
}

/// Settings of the verdict stage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerdictOptions {
    /// List the unmatched flows (`--all`), not only count them.
    pub list_unmatched: bool,
    /// Part of the captures only (a time shard, a stream's window): when a
    /// capture recorded is not known, so no capture is taken as blind.
    pub part: bool,
    /// With `part`, per capture: the time (its own clock) it is known to
    /// have stopped recording at (a live input that ended), None while it
    /// records; empty when nothing is known. A capture is blind to the
    /// requests that began after it stopped.
    pub stopped: Vec<Option<i64>>,
    /// (chain, capture), sorted: the captures holding a flow tied to that
    /// request's flow at the capture before by evidence without time (its
    /// ISN, first datagram, echo or sequence numbers) that the matching kept
    /// apart by time
    /// (`clock_steps::unlinked`): their silence about it is no evidence either.
    pub apart: Vec<(usize, usize)>,
}

/// Builds the findings of a run.
pub fn verdict(
    metas: &[CaptureMeta],
    captures: &[Flows],
    corr: &Correlation,
    warnings: &[Warning],
    options: &VerdictOptions,
) -> Findings {
    verdict_owning(metas, captures, corr, warnings, options, None).0
}

/// [`verdict`], and with `own` (a stream's window) what that window owns of
/// the run's totals ([`window_totals`]), from the same view of the run.
pub fn verdict_owning(
    metas: &[CaptureMeta],
    captures: &[Flows],
    corr: &Correlation,
    warnings: &[Warning],
    options: &VerdictOptions,
    own: Option<(i64, i64)>,
) -> (Findings, Option<WindowTotals>) {
    let ctx = Ctx {
        part: options.part,
        stopped: &options.stopped,
        apart: &options.apart,
        metas,
        ..Ctx::new(metas.len(), captures, corr)
    };
    let strays = stray_roots(&ctx);
    let order = order_of(captures, corr, &strays);
    let requests: Vec<Request> =
        order.par_iter().enumerate().map(|(n, &c)| request(&ctx, c, n as u64 + 1)).collect();
    let lists = unmatched_lists(&ctx, &strays);
    let unmatched = unmatched_of(&ctx, options, &lists);
    let findings = Findings {
        tuplecorr: crate::VERSION.to_string(),
        captures: capture_summaries(metas, &ctx),
        boundaries: rewrite::boundaries(&ctx),
        requests,
        unmatched,
        warnings: warnings.iter().map(WarningOut::from).collect(),
    };
    (findings, own.map(|own| totals_of(&ctx, lists, own, options)))
}

/// The chains in request order: `order[n]` is the chain of request `n + 1`
/// (by the first packet at capture 1, then its client). A chain whose flow at
/// capture 1 another request names as its unexpected source (a stray reply,
/// and the client's RST or ICMP answering it) is no request of its own: it is
/// reported on that request (its flows at later captures count as unmatched).
/// A chain that names a stray itself always stays.
pub fn request_order(captures: &[Flows], corr: &Correlation) -> Vec<usize> {
    order_of(captures, corr, &stray_roots(&Ctx::new(captures.len(), captures, corr)))
}

/// [`request_order`] without the chains `strays`.
fn order_of(captures: &[Flows], corr: &Correlation, strays: &FxHashSet<usize>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..corr.chains.len()).filter(|c| !strays.contains(c)).collect();
    let first = |c: usize| -> Option<&Flow> { corr.chains[c].hops[0].and_then(|f| captures[0].flows.get(f)) };
    order.sort_by_key(|&c| first(c).map(|f| (f.first_ns, f.client)));
    order
}

/// The chains of [`request_order`]'s stray replies at capture 1.
/// (Shares `ctx`'s index of flows by receiver with the requests' verdicts.)
fn stray_roots(ctx: &Ctx<'_>) -> FxHashSet<usize> {
    let (captures, corr) = (ctx.captures, ctx.corr);
    let Some(first) = captures.first() else { return FxHashSet::default() };
    let root = |c: usize| corr.chains[c].hops[0].and_then(|f| first.flows.get(f));
    // (naming chain, named flow at capture 1), looked up only for chains without a reply there
    let named: Vec<(usize, usize)> = (0..corr.chains.len())
        .filter(|&c| root(c).is_some_and(|f| !f.reply_seen()))
        .filter_map(|c| stray::stray_flow(ctx, c).filter(|&(at, _)| at == 0).map(|(_, f)| (c, f)))
        .collect();
    if named.is_empty() {
        return FxHashSet::default();
    }
    let namers: FxHashSet<usize> = named.iter().map(|&(c, _)| c).collect();
    let flows: FxHashSet<usize> = named.iter().map(|&(_, f)| f).collect();
    (0..corr.chains.len())
        .filter(|c| !namers.contains(c) && corr.chains[*c].hops[0].is_some_and(|f| flows.contains(&f)))
        .collect()
}

/// Shared view of the run for the verdict helpers.
pub(crate) struct Ctx<'a> {
    /// Number of captures.
    pub n: usize,
    pub captures: &'a [Flows],
    pub corr: &'a Correlation,
    /// Per capture, its flows by the receiver of their first packet (built on
    /// first use: only requests without a reply look).
    by_receiver: Vec<std::sync::OnceLock<stray::ByReceiver>>,
    /// Which chain claims each stray flow (built on first use).
    claims: std::sync::OnceLock<rustc_hash::FxHashMap<u32, (u32, u32)>>,
    /// Per capture, when it recorded flows as it recorded them, and on
    /// capture 1's clock (both built on first use).
    recorded: std::sync::OnceLock<Vec<Option<(i64, i64)>>>,
    spans: std::sync::OnceLock<Vec<Option<(i64, i64)>>>,
    /// [`VerdictOptions::part`].
    part: bool,
    /// [`VerdictOptions::stopped`].
    stopped: &'a [Option<i64>],
    /// [`VerdictOptions::apart`].
    apart: &'a [(usize, usize)],
    /// Per capture, its unmatched flows by protocol and endpoints (built on first use).
    unmatched_by_tuple: std::sync::OnceLock<Vec<FxHashMap<TupleKey, Vec<u32>>>>,
    /// What each capture is (empty where not given: the interfaces of its
    /// requests are then not named).
    metas: &'a [CaptureMeta],
}

/// A flow's protocol and endpoints.
type TupleKey = (FlowProto, crate::flows::Endpoint, crate::flows::Endpoint);

/// How far apart two flows' lives may be and still be "at the same time"
/// for [`Request::same_tuple`]: a second, beyond any clock estimate's spread
/// the matching trusts.
pub const SAME_TIME_NS: i64 = 1_000_000_000;

impl<'a> Ctx<'a> {
    pub fn flow(&self, capture: usize, flow: usize) -> &Flow {
        &self.captures[capture].flows[flow]
    }

    /// The view of `n` captures, no index built yet.
    fn new(n: usize, captures: &'a [Flows], corr: &'a Correlation) -> Ctx<'a> {
        let by_receiver = (0..n).map(|_| std::sync::OnceLock::new()).collect();
        let (claims, recorded, spans, unmatched_by_tuple) = Default::default();
        Ctx {
            n,
            captures,
            corr,
            by_receiver,
            claims,
            recorded,
            spans,
            part: false,
            stopped: &[],
            apart: &[],
            unmatched_by_tuple,
            metas: &[],
        }
    }

    /// The name of interface `i` of capture `c` when `c` is a side of a split
    /// capture (see [`CaptureMeta::interfaces`]), else None.
    fn interface(&self, c: usize, i: u32) -> Option<String> {
        let names = &self.metas.get(c)?.interfaces;
        if names.is_empty() {
            return None;
        }
        Some(match names.binary_search_by_key(&i, |n| n.0) {
            Ok(at) => names[at].1.clone(),
            Err(_) => format!("if{i}"),
        })
    }

    /// The captures blind to a request that lived `life` (capture 1's clock):
    /// of a whole run, those whose flows miss it; of part of a run, those
    /// known to have stopped recording before it began.
    fn blind(&self, life: (i64, i64)) -> Vec<usize> {
        if !self.part {
            return premise::blind(self.spans(), life);
        }
        // Part of a run: blind only where the capture stopped before the request
        // began (no allocation per request when nothing is known to have stopped).
        (1..self.n)
            .filter(|&c| {
                self.stopped.get(c).copied().flatten().is_some_and(|t| self.corrected(c, t) < life.0)
            })
            .collect()
    }

    /// Per capture, when it recorded flows (see [`premise::recorded`]).
    fn recorded(&self) -> &[Option<(i64, i64)>] {
        self.recorded.get_or_init(|| self.captures.iter().map(|f| premise::recorded(&f.flows)).collect())
    }

    /// [`Ctx::recorded`] on capture 1's clock.
    fn spans(&self) -> &[Option<(i64, i64)>] {
        self.spans.get_or_init(|| {
            (self.recorded().iter().enumerate())
                .map(|(c, r)| r.map(|(a, b)| (self.corrected(c, a), self.corrected(c, b))))
                .collect()
        })
    }

    pub(crate) fn claims(&self) -> &rustc_hash::FxHashMap<u32, (u32, u32)> {
        self.claims.get_or_init(|| stray::claims(self))
    }

    pub(crate) fn by_receiver(&self, capture: usize) -> &stray::ByReceiver {
        self.by_receiver[capture].get_or_init(|| stray::by_receiver(&self.captures[capture].flows))
    }

    /// Captures that did not see the request of `flows` (its flow per capture) but hold
    /// an unmatched flow with its endpoints as the nearest capture before saw
    /// them (either way round), of its protocol, at the same time ([`Request::same_tuple`]).
    fn same_tuple(&self, flows: &[Option<&Flow>]) -> Vec<usize> {
        // Seen everywhere (the usual request): no index built.
        if flows.iter().all(Option::is_some) {
            return Vec::new();
        }
        let index = self.unmatched_by_tuple.get_or_init(|| {
            (0..self.n)
                .map(|c| {
                    let mut map: FxHashMap<TupleKey, Vec<u32>> = FxHashMap::default();
                    for &f in self.corr.unmatched.get(c).map_or(&[][..], Vec::as_slice) {
                        let fl = self.flow(c, f);
                        map.entry((fl.proto, fl.client, fl.server)).or_default().push(f as u32);
                    }
                    map
                })
                .collect()
        });
        let life = |c: usize, f: &Flow| (self.corrected(c, f.first_ns), self.corrected(c, f.last_ns));
        (1..self.n)
            .filter(|&c| flows[c].is_none())
            .filter(|&c| {
                let Some((k, seen)) = (0..c).rev().find_map(|k| Some((k, flows[k]?))) else { return false };
                let (a0, a1) = life(k, seen);
                // either way round: a capture that saw only the answer holds the
                // flow from the server (its first packet went to the client)
                let ways = [(seen.proto, seen.client, seen.server), (seen.proto, seen.server, seen.client)];
                (ways.iter().flat_map(|k| index[c].get(k)).flatten()).any(|&f| {
                    let (b0, b1) = life(c, self.flow(c, f as usize));
                    b0 <= a1.saturating_add(SAME_TIME_NS) && a0 <= b1.saturating_add(SAME_TIME_NS)
                })
            })
            .collect()
    }

    /// Recorded time → capture 1's clock.
    pub fn corrected(&self, capture: usize, ts_ns: i64) -> i64 {
        ts_ns.saturating_sub(self.corr.clocks[capture].offset_ns)
    }
}

/// A flow endpoint as findings hold it: ICMP endpoints carry no port (theirs is the echo id).
pub(crate) fn endpoint(f: &Flow, e: &crate::flows::Endpoint) -> Endpoint {
    Endpoint { addr: e.addr, port: (f.proto != FlowProto::Icmp).then_some(e.port) }
}

/// The shift of the link `between`, flow `a` to flow `b` (see [`seq_moved`]).
fn seq_shift(between: Between, a: &Flow, b: &Flow) -> SeqShift {
    let (client, server) = seq_moved(a, b);
    SeqShift { between, client, server }
}

/// How far the client's and the server's sequence numbers moved from flow
/// `a` to flow `b` (mod 2^32, signed): by their ISNs, else by the first
/// packet with ACK set.
pub(crate) fn seq_moved(a: &Flow, b: &Flow) -> (Option<i32>, Option<i32>) {
    let by = |isn: fn(&Flow) -> Option<u32>, pair: fn((u32, u32)) -> u32| {
        let moved = |x: Option<u32>, y: Option<u32>| Some(y?.wrapping_sub(x?) as i32);
        moved(isn(a), isn(b)).or_else(|| moved(a.seq_pair.map(pair), b.seq_pair.map(pair)))
    };
    (by(|f| f.client_isn, |p| p.0), by(|f| f.server_isn, |p| p.1))
}

fn request(ctx: &Ctx<'_>, chain_ix: usize, number: u64) -> Request {
    let chain = &ctx.corr.chains[chain_ix];
    let flows: Vec<Option<&Flow>> = (0..ctx.n).map(|c| chain.hops[c].map(|f| ctx.flow(c, f))).collect();
    let first = flows[0].expect("every chain starts at capture 1");
    let captures: Vec<Hop> = (0..ctx.n).map(|c| hop(ctx, c, flows[c])).collect();
    let matches: Vec<Match> = chain
        .links
        .iter()
        .map(|l| Match {
            between: Between { from: l.from, to: l.to },
            strength: l.strength,
            evidence: l.evidence,
            candidates: l
                .candidates
                .iter()
                .map(|&f| {
                    let fl = ctx.flow(l.to, f);
                    Candidate {
                        capture: l.to,
                        client: endpoint(fl, &fl.client),
                        server: endpoint(fl, &fl.server),
                        time_ns: ctx.corrected(l.to, fl.first_ns),
                    }
                })
                .collect(),
        })
        .collect();
    let (source, destination) = rewrite::changes(chain, &flows);
    // A terminating proxy starts another connection: its captures' bytes are
    // its own (without one, a closure the comparisons fold away).
    let data = if chain.links.iter().any(|l| l.kind == LinkKind::Proxy) {
        let connection =
            |c: usize| (chain.links.iter()).filter(|l| l.kind == LinkKind::Proxy && l.to <= c).count();
        data::data_path(&flows, connection)
    } else {
        data::data_path(&flows, |_| 0)
    }
    .map(Box::new);
    let blind = ctx.blind((first.first_ns, first.last_ns));
    let from = ctx.apart.partition_point(|&(c, _)| c < chain_ix);
    let apart: Vec<usize> =
        ctx.apart[from..].iter().take_while(|&&(c, _)| c == chain_ix).map(|&(_, p)| p).collect();
    let mut outcome = outcome::outcome(&flows, data.as_deref());
    // A RST or ICMP error missing at a capture that was not recording then,
    // or whose clock kept this request's flow apart, did not enter before it:
    // where it entered is unknown.
    if let Some(Origin::Between(b)) = outcome.origin {
        if blind.contains(&b.to) || apart.contains(&b.to) {
            outcome.origin = None;
        }
    }
    Request {
        request: number,
        proto: first.proto,
        captures,
        matches,
        source,
        destination,
        reply: Reply { unexpected_source: stray::unexpected_source(ctx, chain_ix), ..reply::reply(&flows) },
        outcome,
        seq_shift: (chain.links.iter().filter(|l| l.kind == LinkKind::SeqShift))
            .filter_map(|l| Some(seq_shift(Between { from: l.from, to: l.to }, flows[l.from]?, flows[l.to]?)))
            .collect(),
        syn_missed: chain
            .links
            .iter()
            .find_map(|l| l.syn_missed.map(|(syns, after_ns)| SynMissed { at: l.to, syns, after_ns })),
        attempts: (chain.attempts.iter())
            .map(|&(c, f)| {
                let fl = ctx.flow(c, f);
                Attempt {
                    capture: c,
                    client: endpoint(fl, &fl.client),
                    server: endpoint(fl, &fl.server),
                    time_ns: ctx.corrected(c, fl.first_ns),
                    ending: attempt_end(fl),
                }
            })
            .collect(),
        data,
        identity: identity::identity(&flows).map(Box::new),
        same_tuple: ctx.same_tuple(&flows),
        blind,
        apart,
        fragments: None,
        app: (flows.iter().enumerate())
            .find_map(|(at, f)| Some(App { at, facts: f.as_ref()?.app.as_deref()?.clone() })),
        exchanges: exchanges::exchanges(&flows, |c, t| ctx.corrected(c, t)).map(Box::new),
    }
}

/// How an earlier attempt ended: a RST from the server side, a SYN-ACK, a
/// bare answer (no SYN-ACK), or nothing back.
fn attempt_end(f: &Flow) -> AttemptEnd {
    if f.rst_to_client.is_some() {
        AttemptEnd::Rst
    } else if f.synack_ns.is_some() {
        AttemptEnd::HandshakeOnly
    } else if f.packets_to_client > 0 {
        AttemptEnd::BareAck
    } else {
        AttemptEnd::NoAnswer
    }
}

fn hop(ctx: &Ctx<'_>, c: usize, flow: Option<&Flow>) -> Hop {
    let Some(f) = flow else {
        return Hop::unseen();
    };
    let icmp = f.proto == FlowProto::Icmp;
    let start = f.first_client_ns.get().unwrap_or(f.first_ns);
    let rtt_ns = match (f.first_client_ns.get(), f.first_reply_ns()) {
        (Some(a), Some(b)) if b >= a => Some(b.saturating_sub(a)),
        _ => None,
    };
    Hop {
        seen: true,
        time_ns: Some(ctx.corrected(c, f.first_ns)),
        raw_time_ns: Some(f.first_ns),
        start_ns: Some(ctx.corrected(c, start)),
        client: Some(endpoint(f, &f.client)),
        server: Some(endpoint(f, &f.server)),
        reply_seen: f.reply_seen(),
        rtt_ns,
        packets_to_server: Some(f.packets_to_server),
        packets_to_client: Some(f.packets_to_client),
        bytes_to_server: Some(f.bytes_to_server),
        bytes_to_client: Some(f.bytes_to_client),
        icmp_id: icmp.then_some(f.client.port),
        icmp_seqs: f.echo.as_ref().map(|e| (e.first_seq, e.last_seq)),
        largest_to_server: (f.max_to_server.bytes > 0).then_some(f.max_to_server.bytes),
        largest_to_client: (f.max_to_client.bytes > 0).then_some(f.max_to_client.bytes),
        branch: Branch::of(
            ctx.interface(c, f.first_interface),
            f.other_interface().and_then(|i| ctx.interface(c, i)),
            ctx.metas.get(c).and_then(|m| m.hosts.get(usize::from(f.host))).cloned(),
        ),
    }
}

fn capture_summaries(metas: &[CaptureMeta], ctx: &Ctx<'_>) -> Vec<CaptureSummary> {
    metas
        .iter()
        .zip(ctx.captures)
        .zip(&ctx.corr.clocks)
        .zip(ctx.recorded())
        .map(|(((m, f), clock), &recorded)| CaptureSummary {
            label: m.label.clone(),
            file: m.file.clone(),
            format: m.format.clone(),
            link_types: m.link_types.clone(),
            packets: m.packets,
            overlays: m.overlays.clone(),
            flows: f.flows.len() as u64,
            clock_offset_ns: clock.offset_ns,
            offset_spread_ns: clock.spread_ns,
            offset_samples: clock.samples as u64,
            offset_method: clock.method,
            recorded,
        })
        .collect()
}

/// What one window of a stream adds to the run's totals: only what it owns,
/// so the windows' sums are the run's. A window owns the requests (chains)
/// whose flow at capture 1 begins in its times as capture 1 recorded them, and
/// at a later capture the flows that begin in its times on capture 1's clock.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowTotals {
    /// Per capture: the flows it owns.
    pub flows: Vec<u64>,
    /// Per capture after the first: the unmatched flows it owns (listed with `--all`).
    pub unmatched: Vec<Unmatched>,
    /// Per neighbour boundary: the traits of the requests it owns.
    pub boundaries: Vec<BoundaryTally>,
}

/// The totals of the window `[start, end)` (ns of capture 1's clock; see
/// [`WindowTotals`]) of this correlation.
pub fn window_totals(
    captures: &[Flows],
    corr: &Correlation,
    own: (i64, i64),
    options: &VerdictOptions,
) -> WindowTotals {
    let ctx = Ctx::new(captures.len(), captures, corr);
    totals_of(&ctx, unmatched_lists(&ctx, &stray_roots(&ctx)), own, options)
}

/// [`window_totals`] from the run's view and its unmatched flows (`lists`).
fn totals_of(
    ctx: &Ctx<'_>,
    mut lists: Vec<Vec<usize>>,
    (start, end): (i64, i64),
    options: &VerdictOptions,
) -> WindowTotals {
    let (captures, corr) = (ctx.captures, ctx.corr);
    // Capture 1 as recorded (the requests' own rule), the others corrected.
    let owns = |c: usize, f: &Flow| {
        let t = if c == 0 { f.first_ns } else { ctx.corrected(c, f.first_ns) };
        start <= t && t < end
    };
    let flows = (captures.iter().enumerate())
        .map(|(c, f)| f.flows.iter().filter(|f| owns(c, f)).count() as u64)
        .collect();
    for (c, list) in lists.iter_mut().enumerate() {
        list.retain(|&i| owns(c, ctx.flow(c, i)));
    }
    let first = |chain: usize| corr.chains[chain].hops[0].map(|f| ctx.flow(0, f));
    WindowTotals {
        flows,
        unmatched: unmatched_of(ctx, options, &lists),
        boundaries: rewrite::boundary_tallies(ctx, |c| first(c).is_some_and(|f| owns(0, f))),
    }
}

/// Per capture, the indices of its flows in no request, in order: unmatched
/// by the correlator, or of a chain that is a stray reply reported on another
/// request.
fn unmatched_lists(ctx: &Ctx<'_>, strays: &FxHashSet<usize>) -> Vec<Vec<usize>> {
    let mut lists = ctx.corr.unmatched.clone();
    for &s in strays {
        for (c, hop) in ctx.corr.chains[s].hops.iter().enumerate().skip(1) {
            if let (Some(f), Some(list)) = (hop, lists.get_mut(c)) {
                list.push(*f);
            }
        }
    }
    for list in &mut lists {
        list.sort_unstable();
        list.dedup();
    }
    lists
}

/// The unmatched flows of each capture after the first (`lists`: their indices).
fn unmatched_of(ctx: &Ctx<'_>, options: &VerdictOptions, lists: &[Vec<usize>]) -> Vec<Unmatched> {
    lists
        .iter()
        .enumerate()
        .skip(1)
        .map(|(c, flows)| Unmatched {
            capture: c,
            count: flows.len() as u64,
            flows: if options.list_unmatched {
                flows
                    .iter()
                    .map(|&i| {
                        let f = ctx.flow(c, i);
                        UnmatchedFlow {
                            proto: f.proto,
                            client: endpoint(f, &f.client),
                            server: endpoint(f, &f.server),
                            time_ns: ctx.corrected(c, f.first_ns),
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

/// A TCP flow for the verdict unit tests: `client -> server` with a SYN at
/// `t_ns`, nothing else yet (tests set what came back).
#[cfg(test)]
pub(crate) fn test_flow(client: (&str, u16), server: (&str, u16), t_ns: i64) -> Flow {
    use crate::flows::Ns;
    let ep = |(a, p): (&str, u16)| format!("{a}:{p}");
    let mut f = Flow::test_tcp(&ep(client), &ep(server), t_ns, 1);
    // a SYN only: nothing came back yet
    f.last_ns = t_ns;
    (f.first_server_ns, f.server_isn, f.synack_ns, f.seq_pair) = (Ns::NONE, None, Ns::NONE, None);
    (f.syn_mss, f.client_ip_id, f.server_ttl) = (Some(1460), Some(7), None);
    (f.packets_to_server, f.packets_to_client, f.bytes_to_server, f.bytes_to_client) = (1, 0, 60, 0);
    f
}

/// `f` with a server reply (SYN-ACK and data) seen at `t_ns`.
#[cfg(test)]
pub(crate) fn answered(mut f: Flow, t_ns: i64) -> Flow {
    use crate::flows::Ns;
    f.first_server_ns = Ns::at(t_ns);
    f.synack_ns = Ns::at(t_ns);
    f.server_data_ns = Ns::at(t_ns + 1);
    f.packets_to_client = 3;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_shift_is_measured_per_side_by_isn_else_by_the_first_ack_and_wraps() {
        let b = Between { from: 1, to: 2 };
        let a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 0xffff_fff0);
        let mut c = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 0x10);
        // the server's ISN moved another way than the client's
        c.server_isn = a.server_isn.map(|i| i.wrapping_sub(7));
        assert_eq!(seq_shift(b, &a, &c), SeqShift { between: b, client: Some(0x20), server: Some(-7) });
        assert_eq!(seq_shift(b, &c, &a).client, Some(-0x20));
        // no SYN at the later capture: its first ACK tells
        let mut mid = c.clone();
        (mid.client_isn, mid.server_isn) = (None, None);
        mid.seq_pair = a.seq_pair.map(|(x, y)| (x.wrapping_add(1000), y.wrapping_sub(3)));
        assert_eq!(seq_shift(b, &a, &mid), SeqShift { between: b, client: Some(1000), server: Some(-3) });
        // neither
        mid.seq_pair = None;
        assert_eq!(seq_shift(b, &a, &mid), SeqShift { between: b, client: None, server: None });
    }

    /// A capture of no packets, labelled `label`.
    fn meta(label: &str) -> CaptureMeta {
        CaptureMeta {
            label: label.into(),
            file: format!("{label}.pcap"),
            format: "pcap".into(),
            link_types: Vec::new(),
            packets: 0,
            overlays: Vec::new(),
            interfaces: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// A clock estimated from nine request-reply samples, `offset_ns` ahead of capture 1's.
    fn clock(offset_ns: i64) -> crate::correlate::ClockEstimate {
        crate::correlate::ClockEstimate {
            offset_ns,
            spread_ns: 0,
            samples: 9,
            method: crate::correlate::OffsetMethodKind::RequestReply,
        }
    }

    #[test]
    fn a_window_owns_requests_by_capture_1s_time_and_later_flows_by_corrected_time() {
        use crate::correlate::{Link, Strength};
        // Capture 2's clock runs 100 ns ahead. The window is [10, 20) on capture 1's clock.
        let at = |c: usize, t: i64, port: u16| {
            let host = if c == 0 { "198.18.90.42" } else { "198.19.3.17" };
            test_flow((host, port), ("198.19.96.10", 80), t)
        };
        let mut first = Flows::default();
        let mut second = Flows::default();
        // Requests at 5, 10, 15 and 20 (the last one is the next window's).
        for (i, t) in [5, 10, 15, 20].into_iter().enumerate() {
            first.flows.push(at(0, t, 40000 + i as u16));
            // The first request's port is remapped, the others' kept.
            second.flows.push(at(1, t + 100, if i == 0 { 20000 } else { 40000 + i as u16 }));
        }
        // Unmatched at capture 2: at 8 and 12 on capture 1's clock (108, 112 recorded).
        second.flows.push(at(1, 108, 30000));
        second.flows.push(at(1, 112, 30001));
        let link = Link {
            from: 0,
            to: 1,
            strength: Strength::Strong,
            evidence: Evidences::new(),
            kind: LinkKind::Forwarded,
            candidates: Vec::new(),
            syn_missed: None,
        };
        let chains = (0..4)
            .map(|i| crate::correlate::Chain {
                hops: vec![Some(i), Some(i)],
                links: vec![link.clone()],
                attempts: Vec::new(),
            })
            .collect();
        let corr = Correlation {
            clocks: vec![clock(0), clock(100)],
            delays_ns: vec![Some(3)],
            chains,
            unmatched: vec![Vec::new(), vec![4, 5]],
            estimated: None,
        };
        let captures = [first, second];
        let listed = VerdictOptions { list_unmatched: true, ..VerdictOptions::default() };
        let t = window_totals(&captures, &corr, (10, 20), &listed);
        // Capture 1: 10 and 15; capture 2: 110, 115 and 112 (not 105, 108 or 120).
        assert_eq!(t.flows, [2, 3]);
        assert_eq!(t.unmatched.len(), 1);
        assert_eq!((t.unmatched[0].capture, t.unmatched[0].count), (1, 1));
        let u = &t.unmatched[0].flows;
        assert_eq!((u.len(), u[0].time_ns, u[0].client.port), (1, 12, Some(30001)));
        // The boundary of the owned requests only: ports kept (the remapped one is the window before's).
        let b = finish_boundaries(&t.boundaries, &corr.delays_ns);
        assert_eq!((b[0].ports, b[0].delay_ns), (Kept::Kept, Some(3)));
        // Without --all the unmatched are counted, not listed.
        let counted = window_totals(&captures, &corr, (10, 20), &VerdictOptions::default());
        assert_eq!((counted.unmatched[0].count, counted.unmatched[0].flows.len()), (1, 0));
        // The window before owns the first request and the flow at 8; the
        // windows' sums are the whole correlation's.
        let before = window_totals(&captures, &corr, (0, 10), &listed);
        let after = window_totals(&captures, &corr, (20, 30), &listed);
        assert_eq!((before.flows, after.flows), (vec![1, 2], vec![1, 1]));
        assert_eq!((before.unmatched[0].count, after.unmatched[0].count), (1, 0));
        let mut tallies = before.boundaries;
        tallies[0].merge(&t.boundaries[0]);
        tallies[0].merge(&after.boundaries[0]);
        let all = verdict(&[meta("decap"), meta("backend")], &captures, &corr, &[], &listed);
        assert_eq!(finish_boundaries(&tallies, &corr.delays_ns), all.boundaries);
        assert_eq!(all.boundaries[0].ports, Kept::Mixed);
    }

    #[test]
    fn an_unmatched_flow_of_the_same_endpoints_and_time_is_named_where_the_request_was_not_seen() {
        const S: i64 = 1_000_000_000;
        // Capture 2's clock runs 5 s ahead. Three requests at capture 1, none chained on.
        let mut first = Flows::default();
        for (port, t) in [(40000, 10 * S), (40001, 20 * S), (40002, 30 * S)] {
            first.flows.push(test_flow(("198.18.90.42", port), ("198.19.96.10", 80), t));
        }
        let mut second = Flows::default();
        let at = |port, t| test_flow(("198.18.90.42", port), ("198.19.96.10", 80), t);
        // 40000 at the same time (on capture 1's clock: 10.5 s); 40001 three
        // seconds later (not the same time); 40002's port changed.
        second.flows.extend([at(40000, 15 * S + S / 2), at(40001, 28 * S), at(40003, 35 * S)]);
        let corr = Correlation {
            clocks: vec![clock(0), clock(5 * S)],
            delays_ns: vec![None],
            chains: (0..3)
                .map(|i| crate::correlate::Chain {
                    hops: vec![Some(i), None],
                    links: Vec::new(),
                    attempts: Vec::new(),
                })
                .collect(),
            unmatched: vec![Vec::new(), vec![0, 1, 2]],
            estimated: None,
        };
        let captures = [first, second];
        let f = verdict(&[meta("decap"), meta("egress")], &captures, &corr, &[], &VerdictOptions::default());
        let same: Vec<(u16, &[usize])> = (f.requests.iter())
            .map(|r| (r.captures[0].client.unwrap().port.unwrap(), r.same_tuple.as_slice()))
            .collect();
        assert_eq!(same, [(40000, &[1][..]), (40001, &[][..]), (40002, &[][..])]);
        // 40002 seen the other way round (only its answer, from the server): the same endpoints.
        let mut turned = [captures[0].clone(), captures[1].clone()];
        turned[1].flows[2] = test_flow(("198.19.96.10", 80), ("198.18.90.42", 40002), 35 * S);
        let f = verdict(&[meta("decap"), meta("egress")], &turned, &corr, &[], &VerdictOptions::default());
        assert_eq!(f.requests[2].same_tuple, [1]);
        // Matched there (not unmatched): nothing to say.
        let mut corr = corr;
        corr.unmatched[1].retain(|&f| f != 0);
        let f = verdict(&[meta("decap"), meta("egress")], &captures, &corr, &[], &VerdictOptions::default());
        assert!(f.requests.iter().all(|r| r.same_tuple.is_empty()));
    }

    #[test]
    fn a_capture_without_flows_is_blind_unless_the_run_reads_part_of_the_captures() {
        use crate::correlate::{ClockEstimate, OffsetMethodKind};
        let mut first = Flows::default();
        let mut f = test_flow(("198.18.90.42", 40000), ("198.19.96.10", 80), 10);
        f.rst_to_client = Some(Box::new(crate::flows::TcpEvent {
            ts_ns: 12,
            to_client: true,
            sender: f.server.addr,
            ttl: 64,
        }));
        first.flows.push(f);
        let captures = [first, Flows::default()];
        let clock = ClockEstimate { offset_ns: 0, spread_ns: 0, samples: 0, method: OffsetMethodKind::None };
        let corr = Correlation {
            clocks: vec![clock; 2],
            delays_ns: vec![None],
            chains: vec![crate::correlate::Chain {
                hops: vec![Some(0), None],
                links: Vec::new(),
                attempts: Vec::new(),
            }],
            unmatched: vec![Vec::new(), Vec::new()],
            estimated: None,
        };
        let metas = [meta("decap"), meta("backend")];
        let whole = verdict(&metas, &captures, &corr, &[], &VerdictOptions::default());
        let r = &whole.requests[0];
        assert_eq!((r.blind.clone(), r.outcome.kind, r.outcome.origin), (vec![1], OutcomeKind::Reset, None));
        assert_eq!(whole.captures[0].recorded, Some((10, 10)));
        assert_eq!(whole.captures[1].recorded, None);
        // A shard or a stream window: when backend recorded is not known, so the
        // RST missing there entered between the captures, as before.
        let part = VerdictOptions { part: true, ..VerdictOptions::default() };
        let r = &verdict(&metas, &captures, &corr, &[], &part).requests[0];
        assert!(r.blind.is_empty());
        assert_eq!(r.outcome.origin, Some(Origin::Between(Between { from: 0, to: 1 })));
        // A live window: backend still recording, or stopped after the request
        // began (at 10, last packet 10): not blind.
        for stopped in [vec![None, None], vec![None, Some(10)], vec![Some(0), Some(11)]] {
            let live = VerdictOptions { part: true, stopped: stopped.clone(), ..VerdictOptions::default() };
            let r = &verdict(&metas, &captures, &corr, &[], &live).requests[0];
            assert!(r.blind.is_empty(), "{stopped:?}");
            assert_eq!(r.outcome.origin, Some(Origin::Between(Between { from: 0, to: 1 })), "{stopped:?}");
        }
        // Backend's input ended before the request began: blind, origin unknown.
        let live = VerdictOptions { part: true, stopped: vec![None, Some(9)], ..VerdictOptions::default() };
        let r = &verdict(&metas, &captures, &corr, &[], &live).requests[0];
        assert_eq!((r.blind.clone(), r.outcome.origin), (vec![1], None));
        // On capture 1's clock: backend runs 5 ahead, so its 14 is decap's 9.
        let mut ahead = corr.clone();
        ahead.clocks[1].offset_ns = 5;
        let live = VerdictOptions { part: true, stopped: vec![None, Some(14)], ..VerdictOptions::default() };
        assert_eq!(verdict(&metas, &captures, &ahead, &[], &live).requests[0].blind, vec![1]);
        let live = VerdictOptions { part: true, stopped: vec![None, Some(15)], ..VerdictOptions::default() };
        assert!(verdict(&metas, &captures, &ahead, &[], &live).requests[0].blind.is_empty());
    }

    #[test]
    fn an_attempt_ends_by_what_came_back() {
        let syn = test_flow(("198.19.3.17", 40000), ("198.19.96.10", 80), 0);
        assert_eq!(attempt_end(&syn), AttemptEnd::NoAnswer);
        let mut bare = syn.clone();
        bare.packets_to_client = 1;
        assert_eq!(attempt_end(&bare), AttemptEnd::BareAck);
        let answered = answered(syn.clone(), 100);
        assert_eq!(attempt_end(&answered), AttemptEnd::HandshakeOnly);
        let mut reset = bare.clone();
        reset.rst_to_client = Some(Box::new(crate::flows::TcpEvent {
            ts_ns: 100,
            to_client: true,
            sender: reset.server.addr,
            ttl: 64,
        }));
        assert_eq!(attempt_end(&reset), AttemptEnd::Rst);
        let mut client_reset = bare;
        client_reset.rst_to_server = reset.rst_to_client.clone();
        assert_eq!(
            attempt_end(&client_reset),
            AttemptEnd::BareAck,
            "the client's own RST answers the bare ACK"
        );
    }
}
