//! Why an ICMP error ended a request, read from typed fields only: the ICMP
//! type and code, its sender (`outcome.by`), where it entered the path
//! (`outcome.origin`) and the request's server address at the last capture
//! that saw it. Takes a typed request; gives an `IcmpCause` (JSON
//! `outcome.icmp_cause`), the message's name and the words the explanation and
//! the summary line both use. Never decides a verdict.

use crate::verdict::{Origin, OutcomeKind, Request};
use std::net::IpAddr;

/// Why an ICMP error came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IcmpCause {
    /// Administratively prohibited: IPv4 3/9, 3/10, 3/13; ICMPv6 1/1, 1/5, 1/6.
    Policy,
    /// Port unreachable (IPv4 3/3, ICMPv6 1/4) from the final destination:
    /// nothing listens on that port.
    PortClosed,
    /// Port unreachable from another address than the server's, injected in
    /// between: a filter answering in the server's place.
    OtherHost,
    /// Net or host unreachable (IPv4 3/0, 3/1; ICMPv6 1/0, 1/3) from a router.
    NoRoute,
    /// Protocol unreachable (IPv4 3/2) from the final destination.
    ProtocolUnsupported,
    /// Time (hop limit) exceeded in transit (IPv4 11/0, ICMPv6 3/0).
    TtlExceeded,
    /// Any other type/code, or one of the above from an unexpected sender.
    Unclassified,
}

/// The typed facts a cause is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpFacts {
    pub ty: u8,
    pub code: u8,
    /// ICMPv6 numbers (the sender, else the server, is an IPv6 address).
    pub v6: bool,
    /// The sender is the request's server address at the last capture that saw it.
    pub by_server: bool,
    /// The error was seen at the last capture of the path: sent from beyond it.
    pub at_last: bool,
    /// It entered between two captures: never seen at the later one, which
    /// recorded while the request ran.
    pub in_between: bool,
}

impl IcmpFacts {
    /// The facts of a request's outcome; None unless it is an ICMP error with a type/code.
    pub fn of(r: &Request) -> Option<IcmpFacts> {
        let o = &r.outcome;
        if o.kind != OutcomeKind::IcmpError {
            return None;
        }
        let icmp = o.icmp?;
        let server: Option<IpAddr> =
            r.captures.iter().rev().find(|h| h.seen).and_then(|h| h.server).map(|e| e.addr);
        Some(IcmpFacts {
            ty: icmp.ty,
            code: icmp.code,
            v6: o.by.or(server).is_some_and(|a| a.is_ipv6()),
            by_server: o.by.is_some() && o.by == server,
            at_last: matches!(o.origin, Some(Origin::Capture(_))),
            in_between: matches!(o.origin, Some(Origin::Between(_))),
        })
    }

    /// Sent in the server's name from between two captures: its sender is the
    /// address the client sent to, yet it never crossed the later capture —
    /// not the server, but a box in between (a DNAT translates the errors it
    /// sends itself back to the address the client sent to).
    pub fn in_servers_name(self) -> bool {
        self.by_server && self.in_between
    }

    /// The cause these facts give.
    pub fn cause(self) -> IcmpCause {
        let final_destination = (self.by_server && !self.in_between) || self.at_last;
        match (self.v6, self.ty, self.code) {
            (false, 3, 9 | 10 | 13) | (true, 1, 1 | 5 | 6) => IcmpCause::Policy,
            (false, 3, 3) | (true, 1, 4) if final_destination => IcmpCause::PortClosed,
            (false, 3, 3) | (true, 1, 4) => IcmpCause::OtherHost,
            (false, 3, 0 | 1) | (true, 1, 0 | 3) if !self.by_server => IcmpCause::NoRoute,
            (false, 3, 2) if final_destination => IcmpCause::ProtocolUnsupported,
            (false, 11, 0) | (true, 3, 0) => IcmpCause::TtlExceeded,
            _ => IcmpCause::Unclassified,
        }
    }

    /// The message's name, e.g. `ICMP port unreachable`, `ICMPv6 admin-prohibited`,
    /// `ICMP 3/5` when it has none here.
    pub fn name(self) -> String {
        let name = match (self.v6, self.ty, self.code) {
            (false, 3, 0) => "ICMP net unreachable",
            (false, 3, 1) => "ICMP host unreachable",
            (false, 3, 2) => "ICMP protocol unreachable",
            (false, 3, 3) => "ICMP port unreachable",
            (false, 3, 9) => "ICMP net prohibited",
            (false, 3, 10) => "ICMP host prohibited",
            (false, 3, 13) => "ICMP admin-prohibited",
            (false, 11, 0) => "ICMP TTL exceeded",
            (true, 1, 0) => "ICMPv6 no route",
            (true, 1, 1) => "ICMPv6 admin-prohibited",
            (true, 1, 3) => "ICMPv6 address unreachable",
            (true, 1, 4) => "ICMPv6 port unreachable",
            (true, 1, 5) => "ICMPv6 source address failed policy",
            (true, 1, 6) => "ICMPv6 reject route",
            (true, 3, 0) => "ICMPv6 hop limit exceeded",
            (v6, ty, code) => return format!("{} {ty}/{code}", if v6 { "ICMPv6" } else { "ICMP" }),
        };
        name.to_string()
    }
}

/// The cause of a request's ICMP error; None unless its outcome is an ICMP error
/// with a type/code.
pub fn icmp_cause(r: &Request) -> Option<IcmpCause> {
    IcmpFacts::of(r).map(IcmpFacts::cause)
}

impl IcmpCause {
    /// What the cause means, in the words both the explanation and the summary
    /// line end with; None for `unclassified` (the type/code is named, no cause).
    pub fn words(self) -> Option<&'static str> {
        match self {
            IcmpCause::Policy => Some("policy, not path"),
            IcmpCause::PortClosed => Some("nothing listening on that port"),
            IcmpCause::OtherHost => {
                Some("sent by a host other than the server (a filter answering in its place)")
            }
            IcmpCause::NoRoute => Some("path: no route"),
            IcmpCause::ProtocolUnsupported => Some("protocol not supported by the server"),
            IcmpCause::TtlExceeded => Some("path: TTL exceeded (a routing loop, or a TTL too small)"),
            IcmpCause::Unclassified => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;
    use crate::verdict::{Between, IcmpCode, Outcome};

    fn facts(v6: bool, ty: u8, code: u8, by_server: bool, at_last: bool) -> IcmpFacts {
        IcmpFacts { ty, code, v6, by_server, at_last, in_between: false }
    }

    #[test]
    fn every_rule_of_type_code_and_sender() {
        use IcmpCause::*;
        for (v6, ty, code) in
            [(false, 3, 9), (false, 3, 10), (false, 3, 13), (true, 1, 1), (true, 1, 5), (true, 1, 6)]
        {
            for (by, last) in [(false, false), (true, false), (false, true), (true, true)] {
                assert_eq!(facts(v6, ty, code, by, last).cause(), Policy, "{ty}/{code} v6 {v6}");
            }
        }
        for (v6, ty, code) in [(false, 3, 3), (true, 1, 4)] {
            assert_eq!(facts(v6, ty, code, true, false).cause(), PortClosed, "sent by the server");
            assert_eq!(facts(v6, ty, code, false, true).cause(), PortClosed, "from beyond the last capture");
            assert_eq!(facts(v6, ty, code, false, false).cause(), OtherHost, "injected by another host");
            // from the server's address, yet entering between two captures: a
            // box in between in its name (a DNAT translates its errors back)
            let in_name = IcmpFacts { in_between: true, ..facts(v6, ty, code, true, false) };
            assert!(in_name.in_servers_name());
            assert_eq!(in_name.cause(), OtherHost, "a REJECT behind a DNAT, not a closed port");
        }
        assert!(!facts(false, 3, 3, true, false).in_servers_name(), "not in between: the server");
        for (v6, ty, code) in [(false, 3, 0), (false, 3, 1), (true, 1, 0), (true, 1, 3)] {
            assert_eq!(facts(v6, ty, code, false, false).cause(), NoRoute);
            assert_eq!(facts(v6, ty, code, false, true).cause(), NoRoute, "a router beyond the last capture");
            assert_eq!(
                facts(v6, ty, code, true, false).cause(),
                Unclassified,
                "the server itself is no router"
            );
        }
        assert_eq!(facts(false, 3, 2, true, false).cause(), ProtocolUnsupported);
        assert_eq!(facts(false, 3, 2, false, true).cause(), ProtocolUnsupported);
        assert_eq!(facts(false, 3, 2, false, false).cause(), Unclassified);
        assert_eq!(facts(false, 11, 0, false, false).cause(), TtlExceeded);
        assert_eq!(facts(true, 3, 0, true, true).cause(), TtlExceeded);
        // the other family's numbers, and codes without a rule
        for (v6, ty, code) in [
            (true, 3, 13),
            (false, 1, 1),
            (false, 3, 4),
            (false, 3, 5),
            (false, 11, 1),
            (true, 3, 1),
            (true, 1, 2),
            (false, 12, 0),
        ] {
            assert_eq!(facts(v6, ty, code, true, true).cause(), Unclassified, "{ty}/{code} v6 {v6}");
            assert_eq!(facts(v6, ty, code, false, false).cause(), Unclassified, "{ty}/{code} v6 {v6}");
        }
    }

    #[test]
    fn names_and_words() {
        assert_eq!(facts(false, 3, 13, false, false).name(), "ICMP admin-prohibited");
        assert_eq!(facts(true, 1, 4, true, false).name(), "ICMPv6 port unreachable");
        assert_eq!(facts(false, 3, 5, false, false).name(), "ICMP 3/5");
        assert_eq!(facts(true, 4, 1, false, false).name(), "ICMPv6 4/1");
        assert_eq!(IcmpCause::Policy.words(), Some("policy, not path"));
        assert_eq!(IcmpCause::PortClosed.words(), Some("nothing listening on that port"));
        assert_eq!(IcmpCause::Unclassified.words(), None);
    }

    /// Request 3 of the fixtures: UDP to 198.19.96.11:53, seen at decap and egress.
    fn with(by: &str, origin: Option<Origin>, ty: u8, code: u8) -> Request {
        let mut r = findings().requests.into_iter().find(|r| r.request == 3).unwrap();
        r.outcome = Outcome {
            kind: OutcomeKind::IcmpError,
            by: Some(by.parse().unwrap()),
            origin,
            icmp: Some(IcmpCode { ty, code }),
        };
        r
    }

    #[test]
    fn facts_come_from_the_request_s_server_sender_and_origin() {
        let eb = Some(Origin::Between(Between { from: 1, to: 2 }));
        let r = with("198.19.3.1", eb, 3, 13);
        assert_eq!(
            IcmpFacts::of(&r),
            Some(IcmpFacts {
                ty: 3,
                code: 13,
                v6: false,
                by_server: false,
                at_last: false,
                in_between: true
            })
        );
        assert_eq!(icmp_cause(&r), Some(IcmpCause::Policy));
        // the server's own address (at egress, the last capture that saw it)
        // answers 3/3, entering between egress and backend: not the server
        // (backend never saw it) but a box in its name
        assert_eq!(icmp_cause(&with("198.19.96.11", eb, 3, 3)), Some(IcmpCause::OtherHost));
        assert!(IcmpFacts::of(&with("198.19.96.11", eb, 3, 3)).unwrap().in_servers_name());
        // ... and from beyond the last capture: the server
        assert_eq!(
            icmp_cause(&with("198.19.96.11", Some(Origin::Capture(2)), 3, 3)),
            Some(IcmpCause::PortClosed)
        );
        assert_eq!(icmp_cause(&with("198.19.3.1", eb, 3, 3)), Some(IcmpCause::OtherHost));
        assert_eq!(
            icmp_cause(&with("198.19.3.1", Some(Origin::Capture(2)), 3, 3)),
            Some(IcmpCause::PortClosed)
        );
        assert_eq!(icmp_cause(&with("198.19.3.1", eb, 3, 0)), Some(IcmpCause::NoRoute));
        let v6 = IcmpFacts::of(&with("2001:db8::1", eb, 1, 4)).unwrap();
        assert!(v6.v6 && !v6.by_server);
        // not an ICMP error, or one without a type/code: no cause
        let mut r = with("198.19.3.1", eb, 3, 3);
        r.outcome.icmp = None;
        assert_eq!(icmp_cause(&r), None);
        r.outcome = Outcome::plain(OutcomeKind::Reset);
        assert_eq!(icmp_cause(&r), None);
    }
}
