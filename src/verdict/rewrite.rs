//! Where the client's (source) and server's (destination) endpoints changed
//! between consecutive captures that saw a request — `snat`/`dnat` (address
//! changed, the port may too), `port-only`, `proxy` (a new connection begins at
//! that boundary; reported on the source side) — and the traits of each
//! boundary over all its requests. Takes a chain's flows; gives typed changes
//! and boundary traits. Never formats text.

use super::model::{Between, Boundary, Change, ChangeKind, Kept, TtlBy};
use super::{endpoint, Ctx};
use crate::correlate::{Chain, LinkKind};
use crate::flows::{Flow, FlowProto};

/// Source and destination changes of one request, in path order.
pub(crate) fn changes(chain: &Chain, flows: &[Option<&Flow>]) -> (Vec<Change>, Vec<Change>) {
    // Sized to what they hold, a change at a time (a Vec grown by `push`
    // holds four): a request keeps them, and most hold one or none.
    let (mut source, mut destination) = (Vec::new(), Vec::new());
    let push = |v: &mut Vec<Change>, c: Change| {
        v.reserve_exact(1);
        v.push(c);
    };
    for link in &chain.links {
        let (Some(a), Some(b)) = (flows[link.from], flows[link.to]) else { continue };
        let icmp = a.proto == FlowProto::Icmp;
        let between = Between { from: link.from, to: link.to };
        let same = |x: &crate::flows::Endpoint, y: &crate::flows::Endpoint| {
            if icmp {
                x.addr == y.addr
            } else {
                x == y
            }
        };
        if link.kind == LinkKind::Proxy {
            push(
                &mut source,
                Change {
                    between,
                    kind: ChangeKind::Proxy,
                    before: endpoint(a, &a.client),
                    after: endpoint(b, &b.client),
                },
            );
        } else if !same(&a.client, &b.client) {
            let kind = if a.client.addr != b.client.addr { ChangeKind::Snat } else { ChangeKind::PortOnly };
            push(
                &mut source,
                Change { between, kind, before: endpoint(a, &a.client), after: endpoint(b, &b.client) },
            );
        }
        if !same(&a.server, &b.server) {
            let kind = if a.server.addr != b.server.addr { ChangeKind::Dnat } else { ChangeKind::PortOnly };
            push(
                &mut destination,
                Change { between, kind, before: endpoint(a, &a.server), after: endpoint(b, &b.server) },
            );
        }
    }
    (source, destination)
}

/// Traits of each neighbour boundary across all requests that crossed it.
pub(crate) fn boundaries(ctx: &Ctx<'_>) -> Vec<Boundary> {
    let tallies = boundary_tallies(ctx, |_| true);
    finish_boundaries(&tallies, &ctx.corr.delays_ns)
}

/// The boundaries of `tallies` (one per neighbour boundary, in path order),
/// with the boundaries' one-way delays.
pub fn finish_boundaries(tallies: &[BoundaryTally], delays_ns: &[Option<i64>]) -> Vec<Boundary> {
    (tallies.iter().enumerate())
        .map(|(i, t)| t.finish(Between { from: i, to: i + 1 }, delays_ns.get(i).copied().flatten()))
        .collect()
}

/// Per neighbour boundary, the traits of the chains `counted` chooses (by
/// index): what a stream's window adds for the requests it owns.
pub(crate) fn boundary_tallies(ctx: &Ctx<'_>, counted: impl Fn(usize) -> bool) -> Vec<BoundaryTally> {
    let n = ctx.n;
    let mut tallies = vec![BoundaryTally::default(); n.saturating_sub(1)];
    for (_, chain) in ctx.corr.chains.iter().enumerate().filter(|(c, _)| counted(*c)) {
        for (i, t) in tallies.iter_mut().enumerate() {
            t.add(ctx, chain, i);
        }
    }
    tallies
}

/// What the requests that crossed one boundary say of it so far; tallies of
/// disjoint sets of requests merge into the tally of their union, so a
/// stream's windows give the whole run's traits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundaryTally {
    ports: Tally,
    server_ports: Tally,
    icmp_id: Tally,
    mss_clamped: bool,
    seq_shift: bool,
    /// The client's sequence shifts seen (where measured).
    seq_shifts: std::collections::BTreeSet<i32>,
    /// The client's first TOS byte and VLAN tag kept or changed, and each change seen.
    tos: Tally,
    tos_changes: std::collections::BTreeSet<(u8, u8)>,
    vlan: Tally,
    vlan_changes: std::collections::BTreeSet<(Option<u16>, Option<u16>)>,
    /// TTL decrements and how many links showed each.
    ttl: Counts,
    /// The client's TTLs on arrival at the later capture.
    ttl_after: std::collections::BTreeSet<u8>,
    /// The same per protocol and direction (true: replies), at
    /// [`split_index`] (in key order).
    ttl_split: [Option<TtlCounts>; SPLIT_KEYS.len()],
    smallest_mtu: Option<(u32, std::net::IpAddr)>,
    syn_mss: Option<(u16, u16)>,
    largest_segment: Option<u32>,
}

impl BoundaryTally {
    /// What `chain` says of boundary `i -> i + 1`.
    fn add(&mut self, ctx: &Ctx<'_>, chain: &Chain, i: usize) {
        // Path-MTU messages seen at `i` and not at `i + 1` came from beyond `i`.
        if let Some(s) = chain.hops[i].and_then(|f| ctx.flow(i, f).mtu_signal.as_deref()) {
            let further = chain.hops[i + 1].is_some_and(|f| ctx.flow(i + 1, f).mtu_signal.is_some());
            if !further {
                self.smallest_mtu = smaller_mtu(self.smallest_mtu, Some((s.mtu, s.sender)));
            }
        }
        for link in chain.links.iter().filter(|l| l.from == i && l.to == i + 1) {
            let (Some(fa), Some(fb)) = (chain.hops[i], chain.hops[i + 1]) else { continue };
            let (a, b) = (ctx.flow(i, fa), ctx.flow(i + 1, fb));
            if link.kind == LinkKind::SeqShift {
                self.seq_shift = true;
                self.seq_shifts.extend(super::seq_moved(a, b).0);
            }
            if link.kind == LinkKind::Proxy {
                continue;
            }
            match a.proto {
                FlowProto::Icmp => self.icmp_id.add(a.client.port == b.client.port),
                _ => {
                    self.ports.add(a.client.port == b.client.port);
                    self.server_ports.add(a.server.port == b.server.port);
                }
            }
            if let (Some(x), Some(y)) = (a.syn_mss, b.syn_mss) {
                self.mss_clamped |= x != y;
                self.syn_mss = smaller_mss(self.syn_mss, Some((x, y)));
            }
            let crossed = [(a.max_to_server, b.max_to_server), (a.max_to_client, b.max_to_client)]
                .iter()
                .filter(|(x, y)| x.bytes > 0 && y.bytes > 0)
                .map(|(x, y)| x.bytes.min(y.bytes))
                .max();
            self.largest_segment = self.largest_segment.max(crossed);
            // A reply crosses the boundary from `b`'s side to `a`'s.
            if let (Some(x), Some(y)) = (a.server_ttl, b.server_ttl) {
                self.split((a.proto, true)).add(i64::from(y) - i64::from(x), x);
            }
            if a.first_client_ns.is_some() && b.first_client_ns.is_some() {
                self.ttl.add(i64::from(a.client_ttl) - i64::from(b.client_ttl), 1);
                self.ttl_after.insert(b.client_ttl);
                self.split((a.proto, false))
                    .add(i64::from(a.client_ttl) - i64::from(b.client_ttl), b.client_ttl);
                self.tos.add(a.client_tos == b.client_tos);
                if a.client_tos != b.client_tos {
                    self.tos_changes.insert((a.client_tos, b.client_tos));
                }
                self.vlan.add(a.vlan() == b.vlan());
                if a.vlan() != b.vlan() {
                    self.vlan_changes.insert((a.vlan(), b.vlan()));
                }
            }
        }
    }

    /// The TTL counts of one protocol and direction.
    fn split(&mut self, (proto, reply): (FlowProto, bool)) -> &mut TtlCounts {
        self.ttl_split[split_index(proto, reply)].get_or_insert_with(TtlCounts::default)
    }

    /// Adds the tally of requests that came after these (`later`: on a tie of
    /// smallest MTUs the earlier sender stays, as in one pass over all).
    pub fn merge(&mut self, later: &BoundaryTally) {
        self.ports.kept += later.ports.kept;
        self.ports.changed += later.ports.changed;
        self.server_ports.kept += later.server_ports.kept;
        self.server_ports.changed += later.server_ports.changed;
        self.icmp_id.kept += later.icmp_id.kept;
        self.icmp_id.changed += later.icmp_id.changed;
        self.mss_clamped |= later.mss_clamped;
        self.seq_shift |= later.seq_shift;
        self.seq_shifts.extend(&later.seq_shifts);
        self.tos.kept += later.tos.kept;
        self.tos.changed += later.tos.changed;
        self.tos_changes.extend(&later.tos_changes);
        self.vlan.kept += later.vlan.kept;
        self.vlan.changed += later.vlan.changed;
        self.vlan_changes.extend(&later.vlan_changes);
        for (d, n) in later.ttl.iter() {
            self.ttl.add(d, n);
        }
        self.ttl_after.extend(&later.ttl_after);
        for (&k, t) in SPLIT_KEYS.iter().zip(&later.ttl_split).filter_map(|(k, t)| Some((k, t.as_ref()?))) {
            let mine = self.split(k);
            for (d, n) in t.drops.iter() {
                mine.drops.add(d, n);
            }
            mine.after.extend(&t.after);
        }
        self.smallest_mtu = smaller_mtu(self.smallest_mtu, later.smallest_mtu);
        self.syn_mss = smaller_mss(self.syn_mss, later.syn_mss);
        self.largest_segment = self.largest_segment.max(later.largest_segment);
    }

    /// The boundary these requests describe.
    pub fn finish(&self, between: Between, delay_ns: Option<i64>) -> Boundary {
        Boundary {
            between,
            delay_ns,
            ttl_decrement: lower_median(&self.ttl),
            ttl_set_to: ttl_set(&self.ttl, &self.ttl_after),
            ttl_by: (SPLIT_KEYS.iter().zip(&self.ttl_split))
                .filter_map(|(k, t)| Some((k, t.as_ref()?)))
                .map(|(&(proto, reply), t)| TtlBy {
                    proto,
                    reply,
                    decrement: lower_median(&t.drops),
                    set_to: ttl_set(&t.drops, &t.after),
                    requests: t.drops.total(),
                })
                .collect(),
            ports: self.ports.kept(),
            server_ports: self.server_ports.kept(),
            icmp_id: self.icmp_id.kept(),
            mss_clamped: self.mss_clamped,
            seq_shift: self.seq_shift,
            seq_shift_by: only(&self.seq_shifts),
            tos: self.tos.kept(),
            tos_change: only(&self.tos_changes),
            vlan: self.vlan.kept(),
            vlan_change: only(&self.vlan_changes),
            smallest_mtu: self.smallest_mtu,
            syn_mss: self.syn_mss,
            largest_segment: self.largest_segment,
            fragmentation: None,
        }
    }
}

/// The one value of a set, None when it holds none or several.
fn only<T: Copy + Ord>(set: &std::collections::BTreeSet<T>) -> Option<T> {
    set.first().copied().filter(|_| set.len() == 1)
}

/// The smaller MTU of two, the first on a tie.
fn smaller_mtu(
    a: Option<(u32, std::net::IpAddr)>,
    b: Option<(u32, std::net::IpAddr)>,
) -> Option<(u32, std::net::IpAddr)> {
    match (a, b) {
        (Some(x), Some(y)) if y.0 < x.0 => Some(y),
        (None, y) => y,
        (x, _) => x,
    }
}

/// Each side's smaller MSS.
fn smaller_mss(a: Option<(u16, u16)>, b: Option<(u16, u16)>) -> Option<(u16, u16)> {
    match (a, b) {
        (Some((p, q)), Some((x, y))) => Some((p.min(x), q.min(y))),
        (a, b) => a.or(b),
    }
}

/// The median of counted values (the lower one of an even count, as
/// `clock::median_mad` takes it); None for none.
/// Most router hops a TTL change across one boundary is taken to be (a
/// drop; a rise of a few hops is captures given in reverse order, which
/// `checks` names).
const MOST_HOPS: i64 = 32;

/// The TTL a middlebox sets on every packet (a proxy, a normalizer,
/// `tcprewrite --ttl`): one value on arrival over all links, and a change
/// no count of hops explains (more than [`MOST_HOPS`] either way) on at
/// least one of them — a median would call it "kept" where half the
/// senders already used that value (Linux 64, Windows 128, both arriving
/// 64). Drops that merely differ are no sign: flows opened from the server
/// side cross a boundary the other way, and their TTL rises. None where
/// routers only decrement it.
fn ttl_set(drops: &Counts, after: &std::collections::BTreeSet<u8>) -> Option<u8> {
    let only = after.first().copied().filter(|_| after.len() == 1)?;
    drops.iter().any(|(d, _)| !(-MOST_HOPS..=MOST_HOPS).contains(&d)).then_some(only)
}

/// Values counted (how many times each was seen), in value order. A sorted
/// list: a boundary sees a handful of distinct TTL changes, and a map's
/// entry cost several times a short search on every request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Counts(Vec<(i64, u64)>);

impl Counts {
    fn add(&mut self, value: i64, n: u64) {
        match self.0.binary_search_by_key(&value, |&(v, _)| v) {
            Ok(i) => self.0[i].1 += n,
            Err(i) => self.0.insert(i, (value, n)),
        }
    }

    /// Each value and its count, smallest value first.
    fn iter(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        self.0.iter().copied()
    }

    fn total(&self) -> u64 {
        self.0.iter().map(|&(_, n)| n).sum()
    }
}

impl FromIterator<(i64, u64)> for Counts {
    fn from_iter<I: IntoIterator<Item = (i64, u64)>>(it: I) -> Counts {
        let mut c = Counts::default();
        it.into_iter().for_each(|(v, n)| c.add(v, n));
        c
    }
}

/// Each protocol and direction a boundary's TTLs are told apart by, in key
/// order (the order `ttl_by` lists them).
const SPLIT_KEYS: [(FlowProto, bool); 6] = [
    (FlowProto::Tcp, false),
    (FlowProto::Tcp, true),
    (FlowProto::Udp, false),
    (FlowProto::Udp, true),
    (FlowProto::Icmp, false),
    (FlowProto::Icmp, true),
];

/// Where `(proto, reply)` stands in [`SPLIT_KEYS`].
fn split_index(proto: FlowProto, reply: bool) -> usize {
    let p = match proto {
        FlowProto::Tcp => 0,
        FlowProto::Udp => 1,
        FlowProto::Icmp => 2,
    };
    2 * p + usize::from(reply)
}

/// TTL changes counted (how many requests showed each) and the TTLs the
/// packets arrived with, of one protocol and direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TtlCounts {
    drops: Counts,
    after: std::collections::BTreeSet<u8>,
}

impl TtlCounts {
    fn add(&mut self, drop: i64, arrived: u8) {
        self.drops.add(drop, 1);
        self.after.insert(arrived);
    }
}

fn lower_median(counts: &Counts) -> Option<i64> {
    let want = counts.total().checked_sub(1)? / 2;
    let mut seen = 0;
    for (value, n) in counts.iter() {
        seen += n;
        if seen > want {
            return Some(value);
        }
    }
    None
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tally {
    kept: usize,
    changed: usize,
}

impl Tally {
    fn add(&mut self, kept: bool) {
        if kept {
            self.kept += 1;
        } else {
            self.changed += 1;
        }
    }

    fn kept(&self) -> Kept {
        match (self.kept, self.changed) {
            (0, 0) => Kept::Unknown,
            (_, 0) => Kept::Kept,
            (0, _) => Kept::Changed,
            _ => Kept::Mixed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::{Link, Strength};
    use crate::verdict::{test_flow, Endpoint};

    fn link(from: usize, to: usize, kind: LinkKind) -> Link {
        Link {
            from,
            to,
            strength: Strength::Strong,
            evidence: crate::verdict::Evidences::new(),
            kind,
            candidates: vec![],
            syn_missed: None,
        }
    }

    fn ep(a: &str, port: u16) -> Endpoint {
        Endpoint { addr: a.parse().unwrap(), port: Some(port) }
    }

    #[test]
    fn address_change_is_snat_or_dnat_and_a_port_change_alone_is_port_only() {
        let a = test_flow(("198.18.90.42", 51514), ("198.19.96.10", 80), 0);
        let b = test_flow(("198.18.90.42", 40000), ("198.19.96.10", 80), 0);
        let c = test_flow(("198.19.3.17", 40112), ("198.19.99.5", 8080), 0);
        let flows = [Some(&a), Some(&b), Some(&c)];
        let chain = Chain {
            hops: vec![Some(0), Some(0), Some(0)],
            links: vec![link(0, 1, LinkKind::Forwarded), link(1, 2, LinkKind::Forwarded)],
            attempts: Vec::new(),
        };
        let (source, destination) = changes(&chain, &flows);
        let kinds: Vec<(Between, ChangeKind)> = source.iter().map(|c| (c.between, c.kind)).collect();
        assert_eq!(
            kinds,
            [
                (Between { from: 0, to: 1 }, ChangeKind::PortOnly),
                (Between { from: 1, to: 2 }, ChangeKind::Snat)
            ]
        );
        assert_eq!(
            (source[1].before, source[1].after),
            (ep("198.18.90.42", 40000), ep("198.19.3.17", 40112))
        );
        assert_eq!(destination.len(), 1);
        assert_eq!((destination[0].kind, destination[0].after), (ChangeKind::Dnat, ep("198.19.99.5", 8080)));
    }

    #[test]
    fn a_proxy_link_is_a_source_change_even_when_nothing_else_moved() {
        let a = test_flow(("198.18.90.42", 51514), ("198.19.96.10", 80), 0);
        let chain = Chain {
            hops: vec![Some(0), Some(0)],
            links: vec![link(0, 1, LinkKind::Proxy)],
            attempts: Vec::new(),
        };
        let (source, destination) = changes(&chain, &[Some(&a), Some(&a)]);
        assert_eq!(source.len(), 1);
        assert_eq!(source[0].kind, ChangeKind::Proxy);
        assert!(destination.is_empty());
    }

    /// Two points and one request per pair of flows, each linked `kind` (the
    /// second point's flows in the other order, so no chain has one index at both).
    fn two_points(
        pairs: Vec<(Flow, Flow, LinkKind)>,
    ) -> (Vec<crate::flows::Flows>, crate::correlate::Correlation) {
        let mut captures = vec![crate::flows::Flows::default(), crate::flows::Flows::default()];
        let mut chains = Vec::new();
        let n = pairs.len();
        let mut second = Vec::new();
        for (i, (a, b, kind)) in pairs.into_iter().enumerate() {
            captures[0].flows.push(a);
            second.push(b);
            let hops = vec![Some(i), Some(n - 1 - i)];
            chains.push(Chain { hops, links: vec![link(0, 1, kind)], attempts: Vec::new() });
        }
        second.reverse();
        captures[1].flows = second;
        let clock = crate::correlate::ClockEstimate {
            offset_ns: 0,
            spread_ns: 0,
            samples: 0,
            method: crate::correlate::OffsetMethodKind::Reference,
        };
        let correlation = crate::correlate::Correlation {
            clocks: vec![clock; 2],
            delays_ns: vec![Some(40_000)],
            chains,
            unmatched: vec![Vec::new(); 2],
            estimated: None,
        };
        (captures, correlation)
    }

    /// A forwarded request `i`: TTL 64 → 64 − `ttl_drop`, SYN MSS `mss` → `mss_after`,
    /// the client's port kept or not, `segment` IP bytes each way.
    fn forwarded(
        i: u16,
        ttl_drop: u8,
        (mss, mss_after): (u16, u16),
        kept: bool,
        segment: u32,
    ) -> (Flow, Flow) {
        let mut a = test_flow(("198.18.90.42", 40000 + i), ("198.19.96.10", 80), i64::from(i));
        let port = if kept { 40000 + i } else { 20000 + i };
        let mut b = test_flow(("198.19.3.17", port), ("198.19.96.10", 80), i64::from(i));
        (a.client_ttl, b.client_ttl) = (64, 64 - ttl_drop);
        (a.first_client_ns, b.first_client_ns) = (crate::flows::Ns::at(0), crate::flows::Ns::at(1));
        (a.syn_mss, b.syn_mss) = (Some(mss), Some(mss_after));
        for f in [&mut a, &mut b] {
            f.max_to_server = crate::flows::MaxSegment { bytes: segment, count: 1 };
            f.max_to_client = crate::flows::MaxSegment { bytes: segment / 2, count: 1 };
        }
        (a, b)
    }

    fn mtu(f: &mut Flow, mtu: u32, sender: &str) {
        f.mtu_signal = Some(Box::new(crate::flows::MtuSignal {
            mtu,
            sender: sender.parse().unwrap(),
            v6: false,
            count: 1,
            first_ns: 0,
        }));
    }

    #[test]
    fn a_ttl_is_set_when_every_request_arrives_with_one_value_the_drops_do_not_explain() {
        use std::collections::BTreeSet;
        let drops = |d: &[(i64, u64)]| d.iter().copied().collect::<Counts>();
        let after = |a: &[u8]| a.iter().copied().collect::<BTreeSet<u8>>();
        // Routers: one drop of 1 (or 32 hops at most), whatever arrives; a
        // rise of 32 at most is captures in reverse order, not a setter.
        assert_eq!(ttl_set(&drops(&[(1, 5)]), &after(&[63])), None);
        assert_eq!(ttl_set(&drops(&[(32, 5)]), &after(&[32])), None);
        assert_eq!(ttl_set(&drops(&[(0, 5)]), &after(&[64])), None);
        assert_eq!(ttl_set(&drops(&[(-1, 5)]), &after(&[64])), None);
        assert_eq!(ttl_set(&drops(&[(-32, 5)]), &after(&[96])), None);
        assert_eq!(ttl_set(&drops(&[(33, 5)]), &after(&[31])), Some(31));
        assert_eq!(ttl_set(&drops(&[(-33, 5)]), &after(&[97])), Some(97));
        // Requests one way and flows opened the other way (drops 1 and -1)
        // arriving with one TTL are no setter.
        // 64 and 128 both arriving as 58: no path of 6 hops makes 58 of 128,
        // whichever sender is the majority (a median said "-6" for the first)
        assert_eq!(ttl_set(&drops(&[(6, 3), (70, 2)]), &after(&[58])), Some(58));
        assert_eq!(ttl_set(&drops(&[(6, 2), (70, 3)]), &after(&[58])), Some(58));
        // every drop within the hops a path has: routers, not a middlebox
        assert_eq!(ttl_set(&drops(&[(6, 3), (7, 2)]), &after(&[58])), None);
        assert_eq!(ttl_set(&drops(&[(-1, 2), (1, 3)]), &after(&[63])), None);
        // A drop of 197 (255 -> 58) or a rise (64 -> 122): no hops explain it.
        assert_eq!(ttl_set(&drops(&[(197, 4)]), &after(&[58])), Some(58));
        assert_eq!(ttl_set(&drops(&[(-58, 4)]), &after(&[122])), Some(122));
        // Several values on arrival: routers on paths of several lengths.
        assert_eq!(ttl_set(&drops(&[(1, 3), (2, 2)]), &after(&[62, 63])), None);
        assert_eq!(ttl_set(&drops(&[(-58, 4)]), &after(&[122, 123])), None);
        assert_eq!(ttl_set(&drops(&[]), &after(&[])), None);
        // Through the tally: 255 and 128 both arrive as 58; merged halves say the same.
        let (mut a1, mut b1) = forwarded(1, 6, (1460, 1460), true, 1500);
        let (mut a2, mut b2) = forwarded(2, 6, (1460, 1460), true, 1500);
        (a1.client_ttl, b1.client_ttl, a2.client_ttl, b2.client_ttl) = (128, 58, 255, 58);
        let (captures, corr) = two_points(vec![(a1, b1, LinkKind::Forwarded), (a2, b2, LinkKind::Forwarded)]);
        let ctx = Ctx::new(2, &captures, &corr);
        assert_eq!(boundaries(&ctx)[0].ttl_set_to, Some(58));
        let mut early = boundary_tallies(&ctx, |c| c < 1);
        early[0].merge(&boundary_tallies(&ctx, |c| c >= 1)[0]);
        assert_eq!(finish_boundaries(&early, &corr.delays_ns)[0].ttl_set_to, Some(58));
        let first = boundary_tallies(&ctx, |c| c < 1);
        assert_eq!(finish_boundaries(&first, &corr.delays_ns)[0].ttl_set_to, Some(58), "128 -> 58 alone");
        // Two arrival values: none.
        let (mut a3, mut b3) = forwarded(3, 6, (1460, 1460), true, 1500);
        (a3.client_ttl, b3.client_ttl) = (255, 59);
        let (a1, b1) = (captures[0].flows[0].clone(), captures[1].flows[1].clone());
        let (captures, corr) = two_points(vec![(a1, b1, LinkKind::Forwarded), (a3, b3, LinkKind::Forwarded)]);
        assert_eq!(boundaries(&Ctx::new(2, &captures, &corr))[0].ttl_set_to, None);
    }

    #[test]
    fn tallies_of_requests_split_anyhow_merge_into_the_boundary_of_all() {
        let mut pairs = Vec::new();
        for (i, drop, mss, kept, segment) in [
            (0, 1, (1460, 1460), true, 1500),
            (1, 1, (1460, 1400), false, 9000),
            (2, 2, (1380, 1360), true, 600),
            (3, 3, (1460, 1460), true, 1500),
            (4, 1, (1460, 1440), true, 1500),
        ] {
            let (a, mut b) = forwarded(i, drop, mss, kept, segment);
            if i == 2 {
                b.server.port = 8080; // a DNAT to another port
            }
            if i == 3 {
                b.client_isn = a.client_isn.map(|isn| isn.wrapping_add(500)); // a sequence shift
            }
            pairs.push((a, b, if i == 3 { LinkKind::SeqShift } else { LinkKind::Forwarded }));
        }
        // Path-MTU messages from beyond the first point: 1400 twice (the first
        // sender stays), a larger one, and one also seen at the second point.
        mtu(&mut pairs[1].0, 1400, "198.18.0.7");
        mtu(&mut pairs[2].0, 1492, "198.18.0.8");
        mtu(&mut pairs[3].0, 1400, "198.18.0.9");
        mtu(&mut pairs[4].0, 1200, "198.18.0.10");
        mtu(&mut pairs[4].1, 1200, "198.18.0.10");
        let (captures, corr) = two_points(pairs);
        let ctx = Ctx::new(2, &captures, &corr);
        let all = boundaries(&ctx);
        let b = &all[0];
        assert_eq!(b.delay_ns, Some(40_000));
        assert_eq!((b.ports, b.server_ports), (Kept::Mixed, Kept::Mixed));
        assert_eq!(b.icmp_id, Kept::Unknown);
        assert!(b.mss_clamped && b.seq_shift);
        assert_eq!(b.seq_shift_by, Some(500));
        // TTL drops 1, 1, 2, 3, 1: the median is 1; each side's smallest MSS.
        assert_eq!(b.ttl_decrement, Some(1));
        assert_eq!(b.syn_mss, Some((1380, 1360)));
        assert_eq!(b.largest_segment, Some(9000));
        assert_eq!(b.smallest_mtu, Some((1400, "198.18.0.7".parse().unwrap())));
        // Any split of the requests, merged in order, is the same boundary.
        for cut in 0..=5 {
            let mut early = boundary_tallies(&ctx, |c| c < cut);
            let late = boundary_tallies(&ctx, |c| c >= cut);
            early[0].merge(&late[0]);
            assert_eq!(finish_boundaries(&early, &corr.delays_ns), all, "split at {cut}");
        }
        // Segments count only where both sides carried payload: a request
        // whose first side carried none says nothing of the largest segment.
        let (mut a, b) = forwarded(9, 1, (1460, 1460), true, 1500);
        (a.max_to_server, a.max_to_client) = Default::default();
        let (captures, corr) = two_points(vec![(a, b, LinkKind::Forwarded)]);
        let only = boundaries(&Ctx::new(2, &captures, &corr));
        assert_eq!((only[0].largest_segment, only[0].ttl_decrement), (None, Some(1)));
        assert_eq!((only[0].ports, only[0].server_ports), (Kept::Kept, Kept::Kept));
        // The server's port moved alone: client ports kept, server ports remapped.
        let (a, mut b) = forwarded(9, 1, (1460, 1460), true, 1500);
        b.server.port = 8080;
        let (captures, corr) = two_points(vec![(a, b, LinkKind::Forwarded)]);
        let moved = boundaries(&Ctx::new(2, &captures, &corr));
        assert_eq!((moved[0].ports, moved[0].server_ports), (Kept::Kept, Kept::Changed));
        // Two shifts by other amounts: shifted, by no one amount.
        let shifted = |i: u16, by: u32| {
            let (a, mut b) = forwarded(i, 1, (1460, 1460), true, 1500);
            b.client_isn = a.client_isn.map(|isn| isn.wrapping_add(by));
            (a, b, LinkKind::SeqShift)
        };
        let (captures, corr) = two_points(vec![shifted(1, 500), shifted(2, 600)]);
        let two = boundaries(&Ctx::new(2, &captures, &corr));
        assert_eq!((two[0].seq_shift, two[0].seq_shift_by), (true, None));
        // A tally of none is the unknown boundary.
        let none = boundary_tallies(&ctx, |_| false);
        let b = none[0].finish(Between { from: 0, to: 1 }, None);
        assert_eq!(
            (b.ports, b.ttl_decrement, b.syn_mss, b.largest_segment),
            (Kept::Unknown, None, None, None)
        );
        assert!(!b.mss_clamped && !b.seq_shift && b.smallest_mtu.is_none());
    }

    #[test]
    fn tos_and_vlan_rewrites_are_told_with_their_one_change_or_as_mixed() {
        const UNTAGGED: u16 = Flow::NO_VLAN;
        let pair = |i: u16, tos: (u8, u8), vlan: (u16, u16)| {
            let (mut a, mut b) = forwarded(i, 1, (1460, 1460), true, 1500);
            ((a.client_tos, b.client_tos), (a.client_vlan, b.client_vlan)) = (tos, vlan);
            (a, b, LinkKind::Forwarded)
        };
        let traits = |b: &Boundary| (b.tos, b.tos_change, b.vlan, b.vlan_change);
        // Every request: DSCP 0 -> 46 (EF), a VLAN tag 100 added.
        let (captures, corr) =
            two_points(vec![pair(0, (0, 184), (UNTAGGED, 100)), pair(1, (0, 184), (UNTAGGED, 100))]);
        let b = &boundaries(&Ctx::new(2, &captures, &corr))[0];
        assert_eq!(traits(b), (Kept::Changed, Some((0, 184)), Kept::Changed, Some((None, Some(100)))));
        // Changed, kept, changed another way, kept: mixed, no one change.
        let (captures, corr) = two_points(vec![
            pair(0, (0, 184), (7, 8)),
            pair(1, (0, 0), (7, 7)),
            pair(2, (0, 4), (7, 9)),
            pair(3, (0, 0), (7, 7)),
        ]);
        let ctx = Ctx::new(2, &captures, &corr);
        let all = boundaries(&ctx);
        assert_eq!(traits(&all[0]), (Kept::Mixed, None, Kept::Mixed, None));
        for cut in 0..=4 {
            let mut early = boundary_tallies(&ctx, |c| c < cut);
            let late = boundary_tallies(&ctx, |c| c >= cut);
            early[0].merge(&late[0]);
            assert_eq!(finish_boundaries(&early, &corr.delays_ns), all, "split at {cut}");
        }
        // Two requests that agree on one change, merged from two tallies.
        let (captures, corr) =
            two_points(vec![pair(0, (0, 1), (5, UNTAGGED)), pair(1, (0, 1), (5, UNTAGGED))]);
        let ctx = Ctx::new(2, &captures, &corr);
        let mut early = boundary_tallies(&ctx, |c| c < 1);
        early[0].merge(&boundary_tallies(&ctx, |c| c >= 1)[0]);
        let b = &finish_boundaries(&early, &corr.delays_ns)[0];
        assert_eq!(traits(b), (Kept::Changed, Some((0, 1)), Kept::Changed, Some((Some(5), None))));
        // Kept everywhere; and unknown where one side missed the first client packet.
        let (captures, corr) = two_points(vec![pair(0, (184, 184), (UNTAGGED, UNTAGGED))]);
        assert_eq!(
            traits(&boundaries(&Ctx::new(2, &captures, &corr))[0]),
            (Kept::Kept, None, Kept::Kept, None)
        );
        let (a, mut b, kind) = pair(0, (0, 184), (1, 2));
        b.first_client_ns = crate::flows::Ns::NONE;
        let (captures, corr) = two_points(vec![(a, b, kind)]);
        assert_eq!(
            traits(&boundaries(&Ctx::new(2, &captures, &corr))[0]),
            (Kept::Unknown, None, Kept::Unknown, None)
        );
    }

    /// A middlebox that sets TCP's TTL to 122 (64 → 122) among more UDP
    /// requests that lose one hop: the boundary's median is UDP's, and TCP is
    /// said apart; replies lose two hops (routed back another way), said too
    /// (issue 30).
    #[test]
    fn a_protocol_or_direction_that_fares_otherwise_is_told_apart() {
        let mut pairs = Vec::new();
        for i in 0..5u16 {
            let (mut a, mut b) = forwarded(i, 1, (1460, 1460), true, 1500);
            if i < 3 {
                (a.proto, b.proto) = (FlowProto::Udp, FlowProto::Udp);
            } else {
                b.client_ttl = 122;
            }
            (a.server_ttl, b.server_ttl) = (Some(62), Some(64));
            pairs.push((a, b, LinkKind::Forwarded));
        }
        let (captures, corr) = two_points(pairs);
        let ctx = Ctx::new(2, &captures, &corr);
        let b = &boundaries(&ctx)[0];
        assert_eq!((b.ttl_decrement, b.ttl_set_to), (Some(1), None));
        let by =
            |proto, reply, decrement, set_to, requests| TtlBy { proto, reply, decrement, set_to, requests };
        assert_eq!(
            b.ttl_by,
            vec![
                by(FlowProto::Tcp, false, Some(-58), Some(122), 2),
                by(FlowProto::Tcp, true, Some(2), None, 2),
                by(FlowProto::Udp, false, Some(1), None, 3),
                by(FlowProto::Udp, true, Some(2), None, 3),
            ]
        );
        assert_eq!(b.ttl_otherwise().collect::<Vec<_>>(), vec![&b.ttl_by[0], &b.ttl_by[1], &b.ttl_by[3]]);
        // Any split of the requests, merged, is the same boundary.
        for cut in 0..=5 {
            let mut early = boundary_tallies(&ctx, |c| c < cut);
            early[0].merge(&boundary_tallies(&ctx, |c| c >= cut)[0]);
            assert_eq!(&finish_boundaries(&early, &corr.delays_ns)[0], b, "split at {cut}");
        }
    }

    #[test]
    fn only_one_value_is_one() {
        let set = |v: &[u8]| v.iter().copied().collect::<std::collections::BTreeSet<u8>>();
        assert_eq!(only(&set(&[])), None);
        assert_eq!(only(&set(&[7])), Some(7));
        assert_eq!(only(&set(&[7, 8])), None);
    }

    #[test]
    fn split_keys_stand_at_their_index_in_key_order() {
        for (i, &(proto, reply)) in SPLIT_KEYS.iter().enumerate() {
            assert_eq!(split_index(proto, reply), i);
        }
        assert!(SPLIT_KEYS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_median_of_counted_values_is_the_lower_middle_one() {
        let counts = |v: &[(i64, u64)]| v.iter().copied().collect::<Counts>();
        assert_eq!(lower_median(&counts(&[])), None);
        assert_eq!(lower_median(&counts(&[(3, 1)])), Some(3));
        // 1 2 (even: the lower), 1 1 2 (odd), 1 2 2 2.
        assert_eq!(lower_median(&counts(&[(1, 1), (2, 1)])), Some(1));
        assert_eq!(lower_median(&counts(&[(1, 2), (2, 1)])), Some(1));
        assert_eq!(lower_median(&counts(&[(1, 1), (2, 3)])), Some(2));
        assert_eq!(lower_median(&counts(&[(-1, 2), (0, 1), (5, 2)])), Some(0));
        for values in [vec![4, 1, 3, 2], vec![5, 1, 3], vec![2, 2, 7, 7, 7, 1]] {
            let mut c = Counts::default();
            for v in &values {
                c.add(*v, 1);
            }
            let mut v = values.clone();
            assert_eq!(lower_median(&c), Some(crate::correlate::clock::median_mad(&mut v).0), "{values:?}");
        }
    }

    #[test]
    fn the_smaller_mtu_and_mss_are_taken_side_by_side() {
        let ip = |s: &str| -> std::net::IpAddr { s.parse().unwrap() };
        let (a, b) = (Some((1400, ip("198.18.0.1"))), Some((1400, ip("198.18.0.2"))));
        assert_eq!(smaller_mtu(a, b), a, "a tie keeps the first");
        assert_eq!(smaller_mtu(b, Some((1300, ip("198.18.0.3")))), Some((1300, ip("198.18.0.3"))));
        assert_eq!(smaller_mtu(Some((1300, ip("198.18.0.3"))), b), Some((1300, ip("198.18.0.3"))));
        assert_eq!(smaller_mtu(None, b), b);
        assert_eq!(smaller_mtu(a, None), a);
        assert_eq!(smaller_mss(Some((1460, 1400)), Some((1380, 1440))), Some((1380, 1400)));
        assert_eq!(smaller_mss(None, Some((1380, 1440))), Some((1380, 1440)));
        assert_eq!(smaller_mss(Some((1380, 1440)), None), Some((1380, 1440)));
        assert_eq!(smaller_mss(None, None), None);
    }

    #[test]
    fn tally_says_kept_changed_mixed_or_unknown() {
        let mut t = Tally::default();
        assert_eq!(t.kept(), Kept::Unknown);
        t.add(true);
        assert_eq!(t.kept(), Kept::Kept);
        t.add(false);
        assert_eq!(t.kept(), Kept::Mixed);
        let mut only_changed = Tally::default();
        only_changed.add(false);
        assert_eq!(only_changed.kept(), Kept::Changed);
    }
}
