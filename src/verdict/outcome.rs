//! How a request ended, judged at the first capture where it appears (docs/output.md
//! "Verdicts", normative). TCP: `completed` when the server sent data or a FIN,
//! `reset` when a RST came before any server data, `icmp-error`,
//! `handshake-only`, `no-reply`, `midstream`; UDP and ICMP echo: `completed` when
//! anything came back. `by` is the RST / ICMP sender; `origin` is where it came
//! into the path: the last capture when it was seen there, else the boundary
//! after the furthest capture that saw it (a RST appearing between two captures
//! was forged in between, even though it carries the server's address).
//! TCP's path-MTU messages (3/4, ICMPv6 2/0) ask for smaller segments and end
//! nothing: they are no `icmp-error`. A connection whose client data stopped
//! before a capture that saw it, with nothing from the server, is `data-stopped`.
//! Takes a chain's flows per capture; gives a typed `Outcome`. Never formats text.

use super::model::{Between, DataPath, IcmpCode, Origin, Outcome, OutcomeKind};
use crate::flows::{Flow, FlowProto, Orientation};

pub(crate) fn outcome(flows: &[Option<&Flow>], data: Option<&DataPath>) -> Outcome {
    let Some(f) = flows.iter().flatten().next() else {
        return Outcome::plain(OutcomeKind::NoReply);
    };
    let tcp = f.proto == FlowProto::Tcp;
    let ends = |e: &&crate::flows::IcmpError| !(tcp && e.is_path_mtu());
    let icmp_error = f.request_errors().find(ends);
    let plain = Outcome::plain;
    let reset = |f: &Flow| {
        let rst = *f.rst_to_client.as_deref()?;
        Some(Outcome {
            kind: OutcomeKind::Reset,
            by: Some(rst.sender),
            origin: Some(origin(flows, |g| g.rst_to_client.is_some())),
            icmp: None,
        })
    };
    let icmp = |f: &Flow| {
        let e = icmp_error?;
        let _ = f;
        Some(Outcome {
            kind: OutcomeKind::IcmpError,
            by: Some(e.sender),
            origin: Some(origin(flows, |g| g.request_errors().any(|e| ends(&e)))),
            icmp: Some(IcmpCode { ty: e.icmp_type, code: e.code }),
        })
    };
    match f.proto {
        FlowProto::Tcp => {
            if f.orientation == Orientation::Midstream {
                plain(OutcomeKind::Midstream)
            } else if f.server_data_ns.is_some() || f.server_fin_ns.is_some() {
                plain(OutcomeKind::Completed)
            } else if let Some(o) = reset(f) {
                o
            } else if data.is_some_and(|d| d.stopped.is_some()) && f.synack_ns.is_some() {
                plain(OutcomeKind::DataStopped)
            } else if let Some(o) = icmp(f) {
                o
            } else if f.synack_ns.is_some() {
                plain(OutcomeKind::HandshakeOnly)
            } else {
                plain(OutcomeKind::NoReply)
            }
        }
        FlowProto::Udp | FlowProto::Icmp => {
            let answered = match f.proto {
                FlowProto::Icmp => f.echo.as_ref().is_some_and(|e| e.replies > 0),
                _ => f.packets_to_client > 0,
            };
            if answered {
                plain(OutcomeKind::Completed)
            } else if let Some(o) = icmp(f) {
                o
            } else {
                plain(OutcomeKind::NoReply)
            }
        }
    }
}

/// Where the RST / ICMP error entered the path.
fn origin(flows: &[Option<&Flow>], saw: impl Fn(&Flow) -> bool) -> Origin {
    let n = flows.len();
    let furthest = (0..n).rev().find(|&c| flows[c].is_some_and(&saw)).unwrap_or(0);
    if furthest + 1 == n {
        Origin::Capture(furthest)
    } else {
        Origin::Between(Between { from: furthest, to: furthest + 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::Ns;
    use crate::flows::{IcmpError, TcpEvent};
    use crate::verdict::{answered, test_flow};

    fn flow() -> Flow {
        test_flow(("198.18.90.42", 51514), ("198.19.96.10", 80), 0)
    }

    fn judge(flows: &[Option<Flow>]) -> Outcome {
        let refs: Vec<Option<&Flow>> = flows.iter().map(Option::as_ref).collect();
        outcome(&refs, None)
    }

    fn rst(f: &mut Flow) {
        f.rst_to_client = Some(Box::new(TcpEvent {
            ts_ns: 5,
            to_client: true,
            sender: "198.19.96.10".parse().unwrap(),
            ttl: 63,
        }));
        f.first_server_ns = Ns::at(5);
        f.packets_to_client = 1;
    }

    /// An ICMP error quoting the request, path-MTU (3/4) or not.
    fn icmp_error(f: &mut Flow, ty: u8, code: u8) {
        f.icmp_errors.push(IcmpError {
            ts_ns: 5,
            sender: "198.19.3.1".parse().unwrap(),
            icmp_type: ty,
            code,
            v6: false,
            about_request: true,
            ttl: 63,
        });
    }

    #[test]
    fn a_path_mtu_message_ends_a_datagram_but_not_a_tcp_connection() {
        // TCP lowers its segment size and goes on; a datagram is gone.
        let mut t = flow();
        t.synack_ns = Ns::at(3);
        icmp_error(&mut t, 3, 4);
        assert_eq!(judge(&[Some(t)]).kind, OutcomeKind::HandshakeOnly);
        let mut u = flow();
        (u.proto, u.synack_ns, u.packets_to_client) = (FlowProto::Udp, Ns::NONE, 0);
        icmp_error(&mut u, 3, 4);
        let o = judge(&[Some(u)]);
        assert_eq!((o.kind, o.icmp), (OutcomeKind::IcmpError, Some(IcmpCode { ty: 3, code: 4 })));
    }

    #[test]
    fn server_data_completes_a_tcp_request() {
        let o = judge(&[Some(answered(flow(), 10)), Some(answered(flow(), 10))]);
        assert_eq!(o, Outcome::plain(OutcomeKind::Completed));
    }

    #[test]
    fn reset_seen_at_the_last_capture_came_from_beyond_it() {
        let mut a = flow();
        let mut b = flow();
        rst(&mut a);
        rst(&mut b);
        let o = judge(&[Some(a), Some(b)]);
        assert_eq!(o.kind, OutcomeKind::Reset);
        assert_eq!(o.by, Some("198.19.96.10".parse().unwrap()));
        assert_eq!(o.origin, Some(Origin::Capture(1)));
    }

    #[test]
    fn reset_missing_at_the_last_capture_was_forged_in_between() {
        let mut a = flow();
        rst(&mut a);
        let o = judge(&[Some(a), Some(flow()), Some(flow())]);
        assert_eq!(o.origin, Some(Origin::Between(Between { from: 0, to: 1 })));
    }

    #[test]
    fn icmp_error_about_the_request_names_type_code_and_sender() {
        let mut a = flow();
        a.icmp_errors.push(IcmpError {
            ts_ns: 3,
            sender: "198.19.3.1".parse().unwrap(),
            v6: false,
            icmp_type: 3,
            code: 13,
            ttl: 63,
            about_request: true,
        });
        let o = judge(&[Some(a), Some(flow()), None]);
        assert_eq!(o.kind, OutcomeKind::IcmpError);
        assert_eq!(o.icmp, Some(IcmpCode { ty: 3, code: 13 }));
        assert_eq!(o.by, Some("198.19.3.1".parse().unwrap()));
        assert_eq!(o.origin, Some(Origin::Between(Between { from: 0, to: 1 })));
    }

    #[test]
    fn syn_ack_only_is_handshake_only_and_silence_is_no_reply() {
        let mut a = flow();
        a.synack_ns = Ns::at(4);
        a.first_server_ns = Ns::at(4);
        a.packets_to_client = 1;
        assert_eq!(judge(&[Some(a)]).kind, OutcomeKind::HandshakeOnly);
        assert_eq!(judge(&[Some(flow())]).kind, OutcomeKind::NoReply);
        assert_eq!(judge(&[None, None]).kind, OutcomeKind::NoReply);
    }
}
