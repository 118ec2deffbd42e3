//! The evidence tokens of DESIGN.md's matching table and the strength of a match.

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
    IpId,
    Ports,
    Time,
}

impl Evidence {
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
            Evidence::IpId => "ip-id",
            Evidence::Ports => "ports",
            Evidence::Time => "time",
        }
    }
}
