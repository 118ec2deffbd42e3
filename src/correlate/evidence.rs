//! The evidence tokens of the matching table (docs/output.md "Verdicts", ARCHITECTURE.md
//! "Matching") and the strength of a match.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strength {
    Strong,
    Weak,
    Ambiguous,
}

impl Strength {
    pub fn name(self) -> &'static str {
        match self {
            Strength::Strong => "strong",
            Strength::Weak => "weak",
            Strength::Ambiguous => "ambiguous",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    Isn,
    ClientFingerprint,
    ServerFingerprint,
    UdpPayload,
    IcmpEcho,
    SeqShift,
    /// Midstream: the first seen sequence and acknowledgement numbers agree.
    SeqAck,
    /// The same request-id header value (`X-Request-ID`, `X-Correlation-ID`,
    /// `traceparent` trace id) on both sides: a request through a terminating
    /// proxy that rewrites everything else.
    RequestId,
    /// The same HTTP/1.x request line (method and target; the version may
    /// differ) on both sides, the later flow opened during the earlier one: a
    /// proxy's new connection for it, when nothing else ties them (weak).
    RequestLine,
    /// The same TLS server name (SNI) on both sides, the later flow opened
    /// during the earlier one (weak, as `RequestLine`).
    Sni,
    IpId,
    Ports,
    Time,
}

impl Evidence {
    /// Every kind, in declaration order.
    pub const ALL: [Evidence; 13] = [
        Evidence::Isn,
        Evidence::ClientFingerprint,
        Evidence::ServerFingerprint,
        Evidence::UdpPayload,
        Evidence::IcmpEcho,
        Evidence::SeqShift,
        Evidence::SeqAck,
        Evidence::RequestId,
        Evidence::RequestLine,
        Evidence::Sni,
        Evidence::IpId,
        Evidence::Ports,
        Evidence::Time,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Evidence::Isn => "isn",
            Evidence::ClientFingerprint => "client-fingerprint",
            Evidence::ServerFingerprint => "server-fingerprint",
            Evidence::UdpPayload => "udp-payload",
            Evidence::IcmpEcho => "icmp-echo",
            Evidence::SeqShift => "seq-shift",
            Evidence::SeqAck => "seq-ack",
            Evidence::RequestId => "request-id",
            Evidence::RequestLine => "request-line",
            Evidence::Sni => "sni",
            Evidence::IpId => "ip-id",
            Evidence::Ports => "ports",
            Evidence::Time => "time",
        }
    }
}

/// Kinds of [`Evidence`]: a pairing names each at most once.
const KINDS: usize = Evidence::ALL.len();

/// The evidence of one pairing in the order it was found, kept inline (at most
/// one of each kind). A pairing is scored for every candidate and a link is
/// copied to every chain that shares its flow: neither allocates.
#[derive(Clone, Copy)]
pub struct Evidences {
    len: u8,
    items: [Evidence; KINDS],
}

impl Evidences {
    pub fn new() -> Evidences {
        Evidences { len: 0, items: [Evidence::Time; KINDS] }
    }

    /// Appends `e` (a kind already listed is not pushed twice by any caller).
    pub fn push(&mut self, e: Evidence) {
        if let Some(slot) = self.items.get_mut(usize::from(self.len)) {
            *slot = e;
            self.len += 1;
        }
    }
}

impl Default for Evidences {
    fn default() -> Evidences {
        Evidences::new()
    }
}

impl std::ops::Deref for Evidences {
    type Target = [Evidence];
    fn deref(&self) -> &[Evidence] {
        &self.items[..usize::from(self.len)]
    }
}

impl PartialEq for Evidences {
    fn eq(&self, other: &Evidences) -> bool {
        self[..] == other[..]
    }
}

impl Eq for Evidences {}

impl std::fmt::Debug for Evidences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<const N: usize> From<[Evidence; N]> for Evidences {
    fn from(list: [Evidence; N]) -> Evidences {
        list.into_iter().collect()
    }
}

impl FromIterator<Evidence> for Evidences {
    fn from_iter<I: IntoIterator<Item = Evidence>>(iter: I) -> Evidences {
        let mut list = Evidences::new();
        iter.into_iter().for_each(|e| list.push(e));
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidences_keep_their_order_and_compare_by_what_was_pushed() {
        let mut a = Evidences::new();
        assert!(a.is_empty());
        a.push(Evidence::IpId);
        a.push(Evidence::Ports);
        a.push(Evidence::Time);
        assert_eq!(&a[..], &[Evidence::IpId, Evidence::Ports, Evidence::Time]);
        let b: Evidences = [Evidence::IpId, Evidence::Ports].into_iter().collect();
        assert_ne!(a, b);
        assert_eq!(b, [Evidence::IpId, Evidence::Ports].into_iter().collect());
        assert_eq!(format!("{b:?}"), "[IpId, Ports]");
        // Every kind fits; one push more has nowhere to go and is dropped.
        let all = Evidence::ALL;
        let mut full: Evidences = all.into_iter().collect();
        full.push(Evidence::Isn);
        assert_eq!(&full[..], &all[..]);
    }
}
