//! A request's HTTP/1.x exchanges across the captures: the list where the
//! client is, and for its first unanswered exchange how far the request got
//! and where its response was read.

use super::model::{ExchangeCount, Exchanges, Unanswered};
use crate::flows::Flow;

/// The exchanges of a request whose flows (one per capture, path order) are
/// `flows`, when some capture read more than one answered exchange (or one
/// unanswered, or not every byte): `at` is the first such capture.
/// `corrected` puts a capture's time on capture 1's clock.
pub(super) fn exchanges(flows: &[Option<&Flow>], corrected: impl Fn(usize, i64) -> i64) -> Option<Exchanges> {
    let (at, at_flow, first) = (flows.iter().enumerate())
        .find_map(|(c, f)| f.as_ref().and_then(|f| Some((c, *f, f.exchanges.as_deref()?))))?;
    // Every capture that read the connection: those with one answered
    // exchange hold a flag only.
    let counts: Vec<ExchangeCount> = (flows.iter().enumerate())
        .filter_map(|(capture, f)| {
            let f = f.as_ref()?;
            let (requests, responses, complete) = match f.exchanges.as_deref() {
                Some(x) => (x.requests, x.responses, x.complete),
                None if f.one_exchange => (1, 1, true),
                None => return None,
            };
            Some(ExchangeCount { capture, requests, responses, complete })
        })
        .collect();
    let unanswered = (first.complete && first.requests > first.responses).then(|| {
        let n = first.responses + 1;
        Unanswered {
            n,
            request_reached: counts.iter().rev().find(|c| c.requests >= n).map_or(at, |c| c.capture),
            response_seen: counts.iter().filter(|c| c.responses >= n).map(|c| c.capture).collect(),
            open: at_flow.server_fin_ns.is_none()
                && at_flow.rst_to_client.is_none()
                && at_flow.rst_to_server.is_none(),
        }
    });
    let list = (first.kept.iter())
        .map(|e| {
            let mut e = e.clone();
            e.request_ns = corrected(at, e.request_ns);
            e.response_ns = e.response_ns.get().map(|t| corrected(at, t)).into();
            e
        })
        .collect();
    Some(Exchanges { at, counts, list, worst_status: first.worst_status, slowest: first.slowest, unanswered })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::exchange::{Exchange, Exchanges as Read};
    use crate::flows::{Ns, TcpEvent};
    use crate::verdict::test_flow;

    /// A connection read at two captures: two requests at each, the second
    /// answered only at the second capture.
    fn flows() -> [Flow; 2] {
        let read = |responses: u32| {
            let mut kept = vec![Exchange::new(b"GET", b"/a", 10), Exchange::new(b"GET", b"/b", 20)];
            kept[0].status = Some(200);
            Read {
                requests: 2,
                responses,
                kept,
                worst_status: Some(200),
                slowest: Some((1, 5)),
                complete: true,
            }
        };
        let mut f = [
            test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 0),
            test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 0),
        ];
        f[0].exchanges = Some(Box::new(read(1)));
        f[1].exchanges = Some(Box::new(read(2)));
        f
    }

    fn unanswered(f: &[Flow; 2]) -> Unanswered {
        let refs = [Some(&f[0]), Some(&f[1])];
        exchanges(&refs, |_, t| t).and_then(|x| x.unanswered).expect("exchange 2 unanswered at capture 0")
    }

    #[test]
    fn an_unanswered_exchange_is_open_unless_its_capture_saw_the_server_side_end() {
        let mut f = flows();
        let u = unanswered(&f);
        assert_eq!((u.n, u.request_reached, u.response_seen.clone(), u.open), (2, 1, vec![1], true));
        // The client's FIN alone: the server could still answer (half-close).
        f[0].client_fin_ns = Ns::at(30);
        assert!(unanswered(&f).open);
        f[0].server_fin_ns = Ns::at(40);
        assert!(!unanswered(&f).open, "the server closed its side");
        f[0].server_fin_ns = Ns::NONE;
        let rst = TcpEvent { ts_ns: 40, to_client: false, sender: "198.18.90.42".parse().unwrap(), ttl: 64 };
        f[0].rst_to_server = Some(Box::new(rst));
        assert!(!unanswered(&f).open, "a reset ends the connection");
        // What the other capture saw of the end says nothing of capture 0's record.
        let mut f = flows();
        f[1].server_fin_ns = Ns::at(40);
        assert!(unanswered(&f).open);
    }
}
