//! The files of one host the user gave (`--rules`, `--conntrack`,
//! `--masq-agent`, `--routes`, `--sysctl`, `--neigh`) and where it sits
//! among the captures: what the post-passes (`attach`, `lost`) read.

use super::conntrack;
use super::kernel;
use super::masq::MasqConfig;
use super::model::Ruleset;
use crate::verdict::{Proto, Request};
use std::net::IpAddr;

/// The files of one host and where it sits.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    /// WHERE as given (`egress->backend`, `node`).
    pub at: String,
    /// The captures around it: a change between `from` and `to` with
    /// `span.0 <= from` and `to <= span.1` happened in it.
    pub span: (usize, usize),
    /// `WHERE@FILE`: the host (its files, as `captures[].host` names them)
    /// whose requests these files explain; None: every request there.
    pub only: Option<String>,
    /// Interfaces named by the points of a split capture (labels of an
    /// earlier release's reports: `node(in pod0)`).
    pub iif: Option<String>,
    pub oif: Option<String>,
    /// WHERE is a split capture: `span` is its in-side and out-side, and each
    /// request's interface there (`Hop::iface`) is its input and output
    /// interface at this host.
    pub sides: bool,
    /// Every rules file's tables, in the order given.
    pub rules: Option<Ruleset>,
    pub conntrack: Vec<conntrack::Table>,
    pub masq: Option<MasqConfig>,
    /// `--routes`, `--sysctl`, `--neigh`: the host's routing state.
    pub routes: Option<kernel::Routes>,
    pub sysctl: Option<kernel::Sysctl>,
    pub neigh: Option<kernel::Neighbours>,
    /// `--masq-agent-after`: the ConfigMap proposed (change preview).
    pub masq_after: Option<MasqConfig>,
    /// `--rules-after`: the nat ruleset as edited (change preview).
    pub rules_after: Option<Ruleset>,
}

impl Host {
    /// True when these files explain request `r`: always, or, for
    /// `WHERE@FILE`, when the host they belong to recorded it at a point
    /// around WHERE.
    pub fn holds(&self, r: &Request) -> bool {
        self.only.as_deref().is_none_or(|only| {
            (self.span.0..=self.span.1).any(|i| r.captures.get(i).and_then(|h| h.host()) == Some(only))
        })
    }
}

/// The protocol number of a request's packets.
pub fn proto_number(p: Proto, addr: IpAddr) -> u8 {
    match p {
        Proto::Tcp => 6,
        Proto::Udp => 17,
        Proto::Icmp if addr.is_ipv6() => 58,
        Proto::Icmp => 1,
    }
}

/// `if3`: a capture's interface index, not a name (the rules name interfaces).
pub fn numbered(name: &str) -> bool {
    name.strip_prefix("if").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
