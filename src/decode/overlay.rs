//! Overlays and tunnels. Takes one decoded IP layer (its protocol and transport
//! bytes); says whether it carries another IP packet in an overlay we peel —
//! VXLAN (UDP 4789, 8472), Geneve (UDP 6081), GRE (IP protocol 47: IPv4, IPv6
//! or transparent Ethernet bridging), IPv4 or IPv6 in IPv4 or IPv6 (protocols 4
//! and 41) — and where the inner packet starts; and recognises encrypted
//! tunnels by shape (WireGuard, IPsec ESP, OpenVPN), which cannot be peeled.
//! Never parses the inner IP header itself (`decode` does, and keeps the outer
//! packet when that fails). Never panics, never allocates.
//!
//! Not an overlay (the outer packet is kept, silently): a UDP datagram to an
//! overlay port whose header has the wrong shape (VXLAN without the I flag,
//! Geneve version ≠ 0), GRE version ≠ 0 (PPTP) or with routing, a payload type
//! we do not peel (ERSPAN, MPLS, ...). An overlay frame carrying ARP (and the
//! like) is not an IP packet at all (`decode` says so).
//! Malformed (kept, counted, warned): an overlay header cut short, or an inner
//! IP header that does not parse.

use super::ip_proto;
use super::link::ethertype;
use std::fmt;

/// IP protocol numbers of the overlays.
pub mod proto {
    pub const IPV4_IN_IP: u8 = 4;
    pub const IPV6_IN_IP: u8 = 41;
    pub const GRE: u8 = 47;
    pub const ESP: u8 = 50;
}

/// UDP ports of the overlays and tunnels.
pub mod port {
    pub const VXLAN: u16 = 4789;
    /// Linux's default VXLAN port before IANA's (flannel uses it).
    pub const VXLAN_LINUX: u16 = 8472;
    pub const GENEVE: u16 = 6081;
    pub const IPSEC_NAT_T: u16 = 4500;
    pub const OPENVPN: u16 = 1194;
}

/// Transparent Ethernet bridging (GRE, Geneve): an Ethernet frame follows.
const TEB: u16 = 0x6558;

/// VXLAN header (RFC 7348).
mod vxlan {
    pub const HEADER_LEN: usize = 8;
    /// The I flag: the VNI is valid.
    pub const FLAG_I: u8 = 0x08;
}

/// Geneve header (RFC 8926).
mod geneve {
    use std::ops::Range;
    pub const HEADER_LEN: usize = 8;
    pub const PROTOCOL: Range<usize> = 2..4;
    /// Bits 0-1 of byte 0: version; bits 2-7: option length in 4-byte words.
    pub const OPT_LEN_MASK: u8 = 0x3f;
}

/// GRE header (RFC 2784, RFC 2890).
mod gre {
    use std::ops::Range;
    pub const FLAGS: Range<usize> = 0..2;
    pub const PROTOCOL: Range<usize> = 2..4;
    pub const HEADER_LEN: usize = 4;
    pub const CHECKSUM: u16 = 0x8000;
    pub const ROUTING: u16 = 0x4000;
    pub const KEY: u16 = 0x2000;
    pub const SEQUENCE: u16 = 0x1000;
    pub const VERSION: u16 = 0x0007;
    pub const OPTION_LEN: usize = 4;
}

/// Which overlay carried a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OverlayKind {
    Vxlan,
    Geneve,
    /// GRE carrying IPv4 or IPv6.
    Gre,
    /// GRE carrying Ethernet frames (transparent Ethernet bridging, gretap).
    GreEthernet,
    /// IPv4 in IPv4 (IP-in-IP, protocol 4).
    Ip4In4,
    /// IPv6 in IPv4 (6in4, protocol 41).
    Ip6In4,
    /// IPv4 in IPv6 (protocol 4).
    Ip4In6,
    /// IPv6 in IPv6 (protocol 41).
    Ip6In6,
    /// An MPLS label stack (ethertype 0x8847/0x8848) below the IP packet or,
    /// with a pseudowire control word, below an Ethernet frame; its id is the
    /// outermost label.
    Mpls,
}

impl OverlayKind {
    /// The stable wire name (JSON).
    pub fn wire(self) -> &'static str {
        match self {
            OverlayKind::Vxlan => "vxlan",
            OverlayKind::Geneve => "geneve",
            OverlayKind::Gre => "gre",
            OverlayKind::GreEthernet => "gre-ethernet",
            OverlayKind::Ip4In4 => "ipip",
            OverlayKind::Ip6In4 => "6in4",
            OverlayKind::Ip4In6 => "4in6",
            OverlayKind::Ip6In6 => "ip6ip6",
            OverlayKind::Mpls => "mpls",
        }
    }

    /// The inverse of `wire`.
    pub fn from_wire(text: &str) -> Option<OverlayKind> {
        ALL_KINDS.iter().copied().find(|k| k.wire() == text)
    }

    /// What its `id` is called (VXLAN/Geneve VNI, GRE key).
    pub fn id_name(self) -> Option<&'static str> {
        match self {
            OverlayKind::Vxlan | OverlayKind::Geneve => Some("vni"),
            OverlayKind::Gre | OverlayKind::GreEthernet => Some("key"),
            OverlayKind::Mpls => Some("label"),
            _ => None,
        }
    }
}

const ALL_KINDS: [OverlayKind; 9] = [
    OverlayKind::Vxlan,
    OverlayKind::Geneve,
    OverlayKind::Gre,
    OverlayKind::GreEthernet,
    OverlayKind::Ip4In4,
    OverlayKind::Ip6In4,
    OverlayKind::Ip4In6,
    OverlayKind::Ip6In6,
    OverlayKind::Mpls,
];

/// One overlay layer peeled off a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Overlay {
    pub kind: OverlayKind,
    /// VXLAN/Geneve VNI or GRE key, when the header carries one.
    pub id: Option<u32>,
}

/// An overlay header that could not be peeled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverlayDamage {
    pub kind: OverlayKind,
    pub what: Damage,
}

/// What was wrong with an overlay header (one byte: it rides in every `Packet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    HeaderCut,
    OptionsCut,
    InnerVersion,
    NoInner,
    InnerEthernet,
    InnerIp,
}

impl fmt::Display for OverlayDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.what {
            Damage::HeaderCut => "header cut short",
            Damage::OptionsCut => "options cut short",
            Damage::InnerVersion => "the inner IP version is wrong",
            Damage::NoInner => "no inner packet captured",
            Damage::InnerEthernet => "the inner Ethernet header is cut short or malformed",
            Damage::InnerIp => "the inner IP header is cut short or malformed",
        };
        write!(f, "{}: {what}", self.kind.wire())
    }
}

/// An encrypted tunnel recognised by shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Encrypted {
    WireGuard,
    IpsecEsp,
    OpenVpn,
}

impl Encrypted {
    pub fn name(self) -> &'static str {
        match self {
            Encrypted::WireGuard => "WireGuard",
            Encrypted::IpsecEsp => "IPsec ESP",
            Encrypted::OpenVpn => "OpenVPN",
        }
    }
}

/// What follows an overlay header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inner {
    /// An IP packet at this offset of the transport bytes.
    Ip(usize),
    /// An Ethernet frame at this offset of the transport bytes.
    Ethernet(usize),
}

/// The verdict on one IP layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peel {
    /// Not an overlay we peel.
    No,
    Inner(Overlay, Inner),
    Malformed(OverlayDamage),
}

/// Whether an IP layer with this protocol and transport may carry an overlay
/// (the cheap test before `peel`: IP-in-IP, GRE, UDP to an overlay port).
pub fn may_carry(protocol: u8, transport: &super::Transport) -> bool {
    match transport {
        super::Transport::Udp(u) => matches!(u.dst_port, port::VXLAN | port::VXLAN_LINUX | port::GENEVE),
        super::Transport::Other { .. } => {
            matches!(protocol, proto::IPV4_IN_IP | proto::IPV6_IN_IP | proto::GRE)
        }
        _ => false,
    }
}

/// Looks at one IP layer: `protocol` and `outer_v6` from its header, `bytes`
/// its transport bytes (bounded by the IP length).
pub fn peel(protocol: u8, outer_v6: bool, bytes: &[u8]) -> Peel {
    match protocol {
        proto::IPV4_IN_IP | proto::IPV6_IN_IP => {
            let inner_v6 = protocol == proto::IPV6_IN_IP;
            let kind = match (outer_v6, inner_v6) {
                (false, false) => OverlayKind::Ip4In4,
                (false, true) => OverlayKind::Ip6In4,
                (true, false) => OverlayKind::Ip4In6,
                (true, true) => OverlayKind::Ip6In6,
            };
            let want = if inner_v6 { 6 } else { 4 };
            match bytes.first().map(|b| b >> 4) {
                Some(v) if v == want => Peel::Inner(Overlay { kind, id: None }, Inner::Ip(0)),
                Some(_) => Peel::Malformed(OverlayDamage { kind, what: Damage::InnerVersion }),
                None => Peel::Malformed(OverlayDamage { kind, what: Damage::NoInner }),
            }
        }
        proto::GRE => peel_gre(bytes),
        ip_proto::UDP => {
            // Both directions of a VXLAN/Geneve tunnel go to the well-known port.
            let Some(dst) = be16(bytes, 2) else { return Peel::No };
            let payload = bytes.get(8..).unwrap_or(&[]);
            if dst == port::VXLAN || dst == port::VXLAN_LINUX {
                if let Some(p) = peel_vxlan(payload) {
                    return p;
                }
            }
            if dst == port::GENEVE {
                if let Some(p) = peel_geneve(payload) {
                    return p;
                }
            }
            Peel::No
        }
        _ => Peel::No,
    }
}

/// Moves `inner` past the 8-byte UDP header.
fn after_udp(p: Peel) -> Peel {
    match p {
        Peel::Inner(o, Inner::Ethernet(at)) => Peel::Inner(o, Inner::Ethernet(at + 8)),
        Peel::Inner(o, Inner::Ip(at)) => Peel::Inner(o, Inner::Ip(at + 8)),
        other => other,
    }
}

/// VXLAN, or None when the shape says it is not (no I flag, or too short to tell).
fn peel_vxlan(payload: &[u8]) -> Option<Peel> {
    let header = payload.get(..vxlan::HEADER_LEN)?;
    if header[0] & vxlan::FLAG_I == 0 {
        return None;
    }
    let vni = u32::from_be_bytes([0, header[4], header[5], header[6]]);
    let overlay = Overlay { kind: OverlayKind::Vxlan, id: Some(vni) };
    Some(after_udp(Peel::Inner(overlay, Inner::Ethernet(vxlan::HEADER_LEN))))
}

/// Geneve, or None when the shape says it is not (version ≠ 0, too short to tell).
fn peel_geneve(payload: &[u8]) -> Option<Peel> {
    let header = payload.get(..geneve::HEADER_LEN)?;
    if header[0] >> 6 != 0 {
        return None;
    }
    let options = usize::from(header[0] & geneve::OPT_LEN_MASK) * 4;
    let vni = u32::from_be_bytes([0, header[4], header[5], header[6]]);
    let overlay = Overlay { kind: OverlayKind::Geneve, id: Some(vni) };
    let at = geneve::HEADER_LEN + options;
    if payload.len() < at {
        let what = Damage::OptionsCut;
        return Some(Peel::Malformed(OverlayDamage { kind: OverlayKind::Geneve, what }));
    }
    let inner = match be16(header, geneve::PROTOCOL.start)? {
        TEB => Inner::Ethernet(at),
        ethertype::IPV4 | ethertype::IPV6 => Inner::Ip(at),
        _ => return None,
    };
    Some(after_udp(Peel::Inner(overlay, inner)))
}

fn peel_gre(bytes: &[u8]) -> Peel {
    let damage = |kind, what| Peel::Malformed(OverlayDamage { kind, what });
    let (Some(flags), Some(protocol)) = (be16(bytes, gre::FLAGS.start), be16(bytes, gre::PROTOCOL.start))
    else {
        return damage(OverlayKind::Gre, Damage::HeaderCut);
    };
    if flags & gre::VERSION != 0 || flags & gre::ROUTING != 0 {
        // PPTP's enhanced GRE (version 1) or source routing: not peeled.
        return Peel::No;
    }
    let kind = match protocol {
        TEB => OverlayKind::GreEthernet,
        ethertype::IPV4 | ethertype::IPV6 => OverlayKind::Gre,
        _ => return Peel::No,
    };
    let mut at = gre::HEADER_LEN;
    if flags & gre::CHECKSUM != 0 {
        at += gre::OPTION_LEN;
    }
    let id = if flags & gre::KEY != 0 {
        let key = be32(bytes, at);
        at += gre::OPTION_LEN;
        match key {
            Some(k) => Some(k),
            None => return damage(kind, Damage::HeaderCut),
        }
    } else {
        None
    };
    if flags & gre::SEQUENCE != 0 {
        at += gre::OPTION_LEN;
    }
    if bytes.len() < at {
        return damage(kind, Damage::HeaderCut);
    }
    let inner = if kind == OverlayKind::GreEthernet { Inner::Ethernet(at) } else { Inner::Ip(at) };
    Peel::Inner(Overlay { kind, id }, inner)
}

/// Recognises an encrypted tunnel packet: `protocol` of the (innermost) IP
/// layer, its ports when TCP/UDP, and its transport payload.
pub fn encrypted(protocol: u8, ports: Option<(u16, u16)>, tcp: bool, payload: &[u8]) -> Option<Encrypted> {
    if protocol == proto::ESP {
        return Some(Encrypted::IpsecEsp);
    }
    let (src, dst) = ports?;
    let on = |p: u16| src == p || dst == p;
    if !tcp {
        if on(port::IPSEC_NAT_T) && payload.len() >= 8 && payload[..4] != [0, 0, 0, 0] {
            // ESP in UDP (RFC 3948): a non-zero SPI; zero marks IKE, 0xff a keepalive.
            return Some(Encrypted::IpsecEsp);
        }
        if is_wireguard(payload) {
            return Some(Encrypted::WireGuard);
        }
    }
    if on(port::OPENVPN) && is_openvpn(payload, tcp) {
        return Some(Encrypted::OpenVpn);
    }
    None
}

/// WireGuard messages: type 1-4, three reserved zero bytes, and each type's
/// length (initiation 148, response 92, cookie 64, data ≥ 32 in 16-byte steps).
fn is_wireguard(payload: &[u8]) -> bool {
    let Some(head) = payload.get(..4) else { return false };
    if head[1..] != [0, 0, 0] {
        return false;
    }
    let len = payload.len();
    match head[0] {
        1 => len == 148,
        2 => len == 92,
        3 => len == 64,
        4 => len >= 32 && len.is_multiple_of(16),
        _ => false,
    }
}

/// OpenVPN: the opcode (high 5 bits of the first byte, after TCP's 2-byte
/// length) is one of the defined ones, 1-11; on TCP the length must fit.
fn is_openvpn(payload: &[u8], tcp: bool) -> bool {
    let body = if tcp {
        let Some(len) = be16(payload, 0) else { return false };
        if usize::from(len) + 2 < payload.len() || len == 0 {
            return false;
        }
        &payload[2..]
    } else {
        payload
    };
    body.first().is_some_and(|b| (1..=11).contains(&(b >> 3))) && body.len() >= 2
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}
