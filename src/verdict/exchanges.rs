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
    let (at, first) =
        (flows.iter().enumerate()).find_map(|(c, f)| Some((c, f.as_ref()?.exchanges.as_deref()?)))?;
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
