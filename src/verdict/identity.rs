//! Who the backend thinks the client is: the source at the last capture that
//! saw the request, the identity carrier it reads there (PROXY protocol, then
//! `Forwarded`, `X-Forwarded-For`, `X-Real-IP`), the first capture where that
//! carrier appears (capture 1: the client side set it), and whether the
//! identity is the client's address at capture 1. Takes the request's flows in
//! path order; gives `Identity` only when some capture saw a carrier.

use super::{endpoint, Added, Between, CarriedAddress, Identity};
use crate::flows::{Carried, Flow};

/// The identity verdict of one request (`flows[c]`: its flow at capture c).
pub(crate) fn identity(flows: &[Option<&Flow>]) -> Option<Identity> {
    fn carriers(f: &Flow) -> Option<&crate::flows::Carriers> {
        f.carriers.as_deref().filter(|c| c.main().is_some())
    }
    if !flows.iter().flatten().any(|f| carriers(f).is_some()) {
        return None;
    }
    let first = flows.first().copied().flatten()?;
    let (at, last) = flows.iter().enumerate().rev().find_map(|(c, f)| f.map(|f| (c, f)))?;
    let peer = endpoint(last, &last.client);
    let client = first.client.addr;
    let main: Option<Carried> = carriers(last).and_then(|c| c.main().copied());
    let carried = main.map(|m| CarriedAddress { kind: m.kind, addr: m.addr, port: m.port });
    // The first capture (path order) where the same carrier, with the same
    // (last) address, is in the request; and the seen capture before it.
    let same = |f: &Flow, m: &Carried| {
        f.carriers.as_deref().and_then(|c| c.of(m.kind)).is_some_and(|c| c.addr == m.addr)
    };
    let added = main.and_then(|m| {
        let seen: Vec<(usize, &Flow)> =
            flows.iter().enumerate().filter_map(|(c, f)| f.map(|f| (c, f))).collect();
        // `seen[0]` is capture 1: every chain starts there.
        let k = seen.iter().position(|&(_, f)| same(f, &m))?;
        Some(match k.checked_sub(1) {
            None => Added::ClientSide,
            Some(before) => Added::Between(Between { from: seen[before].0, to: seen[k].0 }),
        })
    });
    // What the client side put in the same carrier, still there at the backend.
    let client_set = main.and_then(|m| {
        let at_client = first.carriers.as_deref().and_then(|c| c.of(m.kind))?;
        let sent = at_client.first.or(at_client.addr)?;
        (m.first.or(m.addr) == Some(sent)).then_some(sent)
    });
    let seen_as = match carried {
        Some(c) => c.addr,
        None => Some(peer.addr),
    };
    Some(Identity { at, peer, carried, added, preserved: seen_as == Some(client), client_set })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::CarrierKind;
    use crate::verdict::test_flow;

    fn with(mut f: Flow, head: &[u8]) -> Flow {
        let c = crate::flows::carrier::parse(head);
        f.carriers = (!c.is_empty()).then(|| Box::new(c));
        f
    }

    const PROXIED: &[u8] = b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80\r\nGET / HTTP/1.1\r\n\r\n";

    #[test]
    fn no_carrier_anywhere_is_no_identity() {
        let a = test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 0);
        let b = test_flow(("198.19.0.5", 40001), ("198.19.96.10", 80), 10);
        assert_eq!(identity(&[Some(&a), Some(&b)]), None);
        // A request id alone carries no identity.
        let b = with(b, b"GET / HTTP/1.1\r\nX-Request-ID: 0123456789\r\n\r\n");
        assert_eq!(identity(&[Some(&a), Some(&b)]), None);
    }

    #[test]
    fn proxy_v1_added_between_egress_and_backend_preserves_the_client_through_snat() {
        let a = test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 0);
        let b = test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 5);
        let c = with(test_flow(("198.19.0.5", 51000), ("198.19.96.10", 80), 10), PROXIED);
        let id = identity(&[Some(&a), Some(&b), Some(&c)]).expect("identity");
        assert_eq!(id.at, 2);
        assert_eq!(id.peer.to_string(), "198.19.0.5:51000");
        let carried = id.carried.expect("carried");
        assert_eq!(
            (carried.kind, carried.addr, carried.port),
            (CarrierKind::ProxyV1, Some(a.client.addr), Some(40001))
        );
        assert_eq!(id.added, Some(Added::Between(Between { from: 1, to: 2 })));
        assert!(id.preserved);
        assert_eq!(id.client_set, None);
        // Not seen at egress: the boundary is decap->backend.
        let id = identity(&[Some(&a), None, Some(&c)]).unwrap();
        assert_eq!(id.added, Some(Added::Between(Between { from: 0, to: 2 })));
        // The carried address is not the client's: flagged.
        let d = with(
            test_flow(("198.19.0.5", 51000), ("198.19.96.10", 80), 10),
            b"PROXY TCP4 198.18.90.43 198.19.96.10 40001 80\r\n",
        );
        let id = identity(&[Some(&a), Some(&b), Some(&d)]).unwrap();
        assert!(!id.preserved);
    }

    #[test]
    fn a_header_already_at_capture_1_was_set_by_the_client_side() {
        let spoofed = b"GET / HTTP/1.1\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n";
        let a = with(test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 0), spoofed);
        let b = with(test_flow(("198.19.0.5", 40001), ("198.19.96.10", 80), 5), spoofed);
        let id = identity(&[Some(&a), Some(&b)]).unwrap();
        assert_eq!(id.added, Some(Added::ClientSide));
        assert_eq!(id.client_set, Some("203.0.113.9".parse().unwrap()));
        assert!(!id.preserved);
        // A proxy appended the real client: its element is trustworthy, the first is not.
        let appended = b"GET / HTTP/1.1\r\nX-Forwarded-For: 203.0.113.9, 198.18.90.42\r\n\r\n";
        let c = with(test_flow(("198.19.0.5", 40001), ("198.19.96.10", 80), 5), appended);
        let id = identity(&[Some(&a), Some(&c)]).unwrap();
        assert_eq!(id.added, Some(Added::Between(Between { from: 0, to: 1 })));
        assert_eq!(id.client_set, Some("203.0.113.9".parse().unwrap()));
        assert!(id.preserved);
        // The client's own header gone at the backend: nothing client-set remains.
        let own = b"GET / HTTP/1.1\r\nX-Forwarded-For: 198.18.90.42\r\n\r\n";
        let d = with(test_flow(("198.19.0.5", 40001), ("198.19.96.10", 80), 5), own);
        let id = identity(&[Some(&a), Some(&d)]).unwrap();
        assert_eq!(id.client_set, None);
        assert!(id.preserved);
    }

    #[test]
    fn a_carrier_lost_on_the_way_leaves_the_peer_as_the_identity() {
        let a = with(test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 0), PROXIED);
        let b = test_flow(("198.19.0.5", 40001), ("198.19.96.10", 80), 5);
        let id = identity(&[Some(&a), Some(&b)]).unwrap();
        assert_eq!((id.carried, id.added, id.client_set), (None, None, None));
        assert!(!id.preserved, "the backend sees the SNAT address");
        let same = test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 5);
        assert!(identity(&[Some(&a), Some(&same)]).unwrap().preserved);
    }
}
