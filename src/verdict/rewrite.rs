//! Where the client's (source) and server's (destination) endpoints changed
//! between consecutive captures that saw a request — `snat`/`dnat` (address
//! changed, the port may too), `port-only`, `proxy` (a new connection begins at
//! that boundary; reported on the source side) — and the traits of each
//! boundary over all its requests.

use super::model::{Boundary, Change, ChangeKind, Changes};
use super::Ctx;
use crate::correlate::{Chain, LinkKind};
use crate::flows::{Flow, FlowProto};

/// Source and destination changes of one request, in path order.
pub(crate) fn changes(ctx: &Ctx<'_>, chain: &Chain, flows: &[Option<&Flow>]) -> (Changes, Changes) {
    let mut source = Changes::default();
    let mut destination = Changes::default();
    for link in &chain.links {
        let (Some(a), Some(b)) = (flows[link.from], flows[link.to]) else { continue };
        let icmp = a.proto == FlowProto::Icmp;
        let between = ctx.between(link.from, link.to);
        let same = |x: &crate::flows::Endpoint, y: &crate::flows::Endpoint| {
            if icmp {
                x.addr == y.addr
            } else {
                x == y
            }
        };
        if link.kind == LinkKind::Proxy {
            source.changed.push(Change {
                between: between.clone(),
                kind: ChangeKind::Proxy,
                before: a.client.display(icmp),
                after: b.client.display(icmp),
            });
        } else if !same(&a.client, &b.client) {
            let kind = if a.client.addr != b.client.addr { ChangeKind::Snat } else { ChangeKind::PortOnly };
            source.changed.push(Change {
                between: between.clone(),
                kind,
                before: a.client.display(icmp),
                after: b.client.display(icmp),
            });
        }
        if !same(&a.server, &b.server) {
            let kind = if a.server.addr != b.server.addr { ChangeKind::Dnat } else { ChangeKind::PortOnly };
            destination.changed.push(Change {
                between,
                kind,
                before: a.server.display(icmp),
                after: b.server.display(icmp),
            });
        }
    }
    (source, destination)
}

/// Traits of each neighbour boundary across all requests that crossed it.
pub(crate) fn boundaries(ctx: &Ctx<'_>) -> Vec<Boundary> {
    let n = ctx.labels.len();
    (0..n.saturating_sub(1))
        .map(|i| {
            let mut ports = Tally::default();
            let mut icmp_id = Tally::default();
            let mut mss_clamped = false;
            let mut seq_shift = false;
            let mut ttl: Vec<i64> = Vec::new();
            for chain in &ctx.corr.chains {
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
                    }
                    if a.first_client_ns.is_some() && b.first_client_ns.is_some() {
                        ttl.push(i64::from(a.client_ttl) - i64::from(b.client_ttl));
                    }
                }
            }
            let ttl_decrement = (!ttl.is_empty()).then(|| crate::correlate::clock::median_mad(&mut ttl).0);
            Boundary {
                between: ctx.between(i, i + 1),
                delay_ms: ctx.corr.delays_ns.get(i).copied().flatten().map(super::ms),
                ttl_decrement,
                ports: ports.word("kept", "remapped"),
                icmp_id: icmp_id.word("kept", "rewritten"),
                mss_clamped,
                seq_shift,
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

    fn word(&self, kept: &str, changed: &str) -> String {
        match (self.kept, self.changed) {
            (0, 0) => "unknown".into(),
            (_, 0) => kept.into(),
            (0, _) => changed.into(),
            _ => "mixed".into(),
        }
    }
}
