//! The owned per-packet summary the flow stage needs. No lifetimes: payload bytes
//! stay in the record and are reached through `Packet::payload(record.data)`.

use std::net::IpAddr;

/// TCP flag bits as on the wire.
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// IP protocol numbers used here.
pub mod ip_proto {
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ICMPV6: u8 = 58;
}

/// One decoded packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// From the record (UTC ns).
    pub ts_ns: i64,
    /// From the record.
    pub record: u64,
    /// Capture interface (pcapng interface id, or the SLL2 interface index when
    /// the link layer carries one).
    pub interface: u32,
    /// Linux cooked capture packet type (0 host, 1 broadcast, 2 multicast,
    /// 3 other host, 4 outgoing), when the link type is SLL or SLL2.
    pub sll_packet_type: Option<u8>,
    /// SLL2 interface index, when present.
    pub sll_ifindex: Option<u32>,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 TOS byte or IPv6 traffic class: DSCP (upper six bits) and ECN.
    pub tos: u8,
    /// The outermost 802.1Q / 802.1ad tag's VLAN ID, when the frame is tagged.
    pub vlan: Option<u16>,
    /// IPv4 identification (None for IPv6).
    pub ip_id: Option<u16>,
    /// IPv4 DF bit.
    pub dont_fragment: bool,
    /// IP bytes per the IP header (header + payload; IPv6: 40 + payload length),
    /// independent of the snaplen. Falls back to captured bytes when the header
    /// says 0 (TSO/GRO) .
    pub ip_len: u32,
    pub fragment: Fragment,
    /// Where a fragment's data lies in its datagram (zero when `fragment` is
    /// `None`): the reassembly of `flows::reassembly` reads it.
    pub frag: FragPos,
    pub transport: Transport,
    /// Offset of the transport payload in the record's data (after TCP/UDP/ICMP
    /// header; for ICMP echo: after the 8-byte echo header).
    pub payload_offset: u32,
    /// Transport payload length per the headers (may exceed what was captured).
    pub payload_len: u32,
    /// Payload bytes actually present in the record (≤ payload_len).
    pub payload_captured: u32,
    /// The record ended before the headers said it would (snaplen or damage).
    pub truncated: bool,
    /// The outermost overlay peeled off (VXLAN, Geneve, GRE, IP-in-IP): every
    /// field above then describes the innermost packet. None: not encapsulated.
    pub overlay: Option<super::Overlay>,
    /// Overlay layers peeled (0 without one).
    pub overlay_depth: u8,
    /// An overlay header (or its inner packet) that did not parse: the packet
    /// is described as far as it was peeled.
    pub overlay_damage: Option<super::OverlayDamage>,
    /// The packet is encrypted tunnel traffic (recognised by shape).
    pub encrypted: Option<super::Encrypted>,
}

impl Packet {
    /// The captured payload bytes, given the record's data this packet was decoded from.
    pub fn payload<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        let start = (self.payload_offset as usize).min(data.len());
        let end = start.saturating_add(self.payload_captured as usize).min(data.len());
        &data[start..end]
    }

    /// IP protocol number of the transport (6, 17, 1, 58, or the other value).
    pub fn protocol(&self) -> u8 {
        match &self.transport {
            Transport::Tcp(_) => ip_proto::TCP,
            Transport::Udp(_) => ip_proto::UDP,
            Transport::Icmp(i) => {
                if i.v6 {
                    ip_proto::ICMPV6
                } else {
                    ip_proto::ICMP
                }
            }
            Transport::Other { protocol } => *protocol,
        }
    }
}

/// IPv4/IPv6 fragmentation state of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fragment {
    /// Not a fragment.
    None,
    /// First fragment (offset 0, more fragments): carries the transport header.
    First,
    /// A later fragment: no transport header; counted, not flowed.
    Later,
}

/// One fragment's place in its datagram, as its IP header says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragPos {
    /// IPv4 identification or IPv6 fragment header identification.
    pub id: u32,
    /// Offset of this fragment's data in the datagram's payload (bytes: the
    /// header's 8-byte units × 8). IPv4: after the IP header; IPv6: after the
    /// fragment header.
    pub offset: u32,
    /// The data bytes this fragment carries per its IP header (not what was
    /// captured): for the first fragment the transport header and payload.
    pub len: u32,
    /// More fragments follow (MF / M flag).
    pub more: bool,
}

/// The transport layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp(TcpInfo),
    Udp(UdpInfo),
    Icmp(IcmpInfo),
    /// Another protocol, or a later fragment (then `protocol` is the fragment's
    /// next-header value and `fragment` is `Later`).
    Other {
        protocol: u8,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpInfo {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// See `tcp_flags`.
    pub flags: u8,
    pub window: u16,
    /// MSS option value (SYN packets), when present and captured.
    pub mss: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdpInfo {
    pub src_port: u16,
    pub dst_port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcmpInfo {
    /// ICMPv6 (type/code numbers are ICMPv6's).
    pub v6: bool,
    pub icmp_type: u8,
    pub code: u8,
    pub message: IcmpMessage,
    /// The MTU a path-MTU message asks for: IPv4 3/4 "fragmentation needed"
    /// (next-hop MTU, 0 from pre-RFC 1191 routers) or ICMPv6 2/0 "packet too big".
    pub mtu: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IcmpMessage {
    EchoRequest {
        id: u16,
        seq: u16,
    },
    EchoReply {
        id: u16,
        seq: u16,
    },
    /// Destination unreachable, time exceeded, parameter problem, packet too big,
    /// (v4) source quench / redirect: the quoted original packet's header.
    Error(Quoted),
    Other,
}

/// The original packet's header quoted in an ICMP error, as far as it was captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quoted {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub protocol: u8,
    pub src_port: Option<u16>,
    pub dst_port: Option<u16>,
    /// TCP sequence number of the quoted segment.
    pub tcp_seq: Option<u32>,
    /// Quoted ICMP echo (identifier, sequence).
    pub echo: Option<(u16, u16)>,
    /// IPv4 identification of the quoted packet.
    pub ip_id: Option<u16>,
}
