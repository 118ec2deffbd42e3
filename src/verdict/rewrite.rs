//! Where the client's (source) and server's (destination) endpoints changed
//! between consecutive captures that saw a request — `snat`/`dnat` (address
//! changed, the port may too), `port-only`, `proxy` (a new connection begins at
//! that boundary; reported on the source side) — and the traits of each
//! boundary over all its requests. Takes a chain's flows; gives typed changes
//! and boundary traits. Never formats text.

use super::model::{Between, Boundary, Change, ChangeKind, Kept};
use super::{endpoint, Ctx};
use crate::correlate::{Chain, LinkKind};
use crate::flows::{Flow, FlowProto};

/// Source and destination changes of one request, in path order.
pub(crate) fn changes(chain: &Chain, flows: &[Option<&Flow>]) -> (Vec<Change>, Vec<Change>) {
    let mut source = Vec::new();
    let mut destination = Vec::new();
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
            source.push(Change {
                between,
                kind: ChangeKind::Proxy,
                before: endpoint(a, &a.client),
                after: endpoint(b, &b.client),
            });
        } else if !same(&a.client, &b.client) {
            let kind = if a.client.addr != b.client.addr { ChangeKind::Snat } else { ChangeKind::PortOnly };
            source.push(Change {
                between,
                kind,
                before: endpoint(a, &a.client),
                after: endpoint(b, &b.client),
            });
        }
        if !same(&a.server, &b.server) {
            let kind = if a.server.addr != b.server.addr { ChangeKind::Dnat } else { ChangeKind::PortOnly };
            destination.push(Change {
                between,
                kind,
                before: endpoint(a, &a.server),
                after: endpoint(b, &b.server),
            });
        }
    }
    (source, destination)
}

/// Traits of each neighbour boundary across all requests that crossed it.
pub(crate) fn boundaries(ctx: &Ctx<'_>) -> Vec<Boundary> {
    let n = ctx.n;
    (0..n.saturating_sub(1))
        .map(|i| {
            let mut ports = Tally::default();
            let mut icmp_id = Tally::default();
            let mut mss_clamped = false;
            let mut seq_shift = false;
            let mut ttl: Vec<i64> = Vec::new();
            let mut smallest_mtu: Option<(u32, std::net::IpAddr)> = None;
            let mut syn_mss: Option<(u16, u16)> = None;
            let mut largest_segment: Option<u32> = None;
            for chain in &ctx.corr.chains {
                // Path-MTU messages seen at `i` and not at `i + 1` came from beyond `i`.
                if let Some(s) = chain.hops[i].and_then(|f| ctx.flow(i, f).mtu_signal.as_deref()) {
                    let further = chain.hops[i + 1].is_some_and(|f| ctx.flow(i + 1, f).mtu_signal.is_some());
                    if !further && smallest_mtu.is_none_or(|(m, _)| s.mtu < m) {
                        smallest_mtu = Some((s.mtu, s.sender));
                    }
                }
                for link in chain.links.iter().filter(|l| l.from == i && l.to == i + 1) {
                    let (Some(fa), Some(fb)) = (chain.hops[i], chain.hops[i + 1]) else { continue };
                    let (a, b) = (ctx.flow(i, fa), ctx.flow(i + 1, fb));
                    if link.kind == LinkKind::SeqShift {
                        seq_shift = true;
                    }
                    if link.kind == LinkKind::Proxy {
                        continue;
                    }
                    match a.proto {
                        FlowProto::Icmp => icmp_id.add(a.client.port == b.client.port),
                        _ => ports.add(a.client.port == b.client.port),
                    }
                    if let (Some(x), Some(y)) = (a.syn_mss, b.syn_mss) {
                        mss_clamped |= x != y;
                        syn_mss = Some(syn_mss.map_or((x, y), |(p, q)| (p.min(x), q.min(y))));
                    }
                    let crossed = [(a.max_to_server, b.max_to_server), (a.max_to_client, b.max_to_client)]
                        .iter()
                        .filter(|(x, y)| x.bytes > 0 && y.bytes > 0)
                        .map(|(x, y)| x.bytes.min(y.bytes))
                        .max();
                    largest_segment = largest_segment.max(crossed);
                    if a.first_client_ns.is_some() && b.first_client_ns.is_some() {
                        ttl.push(i64::from(a.client_ttl) - i64::from(b.client_ttl));
                    }
                }
            }
            let ttl_decrement = (!ttl.is_empty()).then(|| crate::correlate::clock::median_mad(&mut ttl).0);
            Boundary {
                between: Between { from: i, to: i + 1 },
                delay_ns: ctx.corr.delays_ns.get(i).copied().flatten(),
                ttl_decrement,
                ports: ports.kept(),
                icmp_id: icmp_id.kept(),
                mss_clamped,
                seq_shift,
                smallest_mtu,
                syn_mss,
                largest_segment,
            }
        })
        .collect()
}

#[derive(Default)]
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
