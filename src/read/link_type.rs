//! Link-layer header types (LINKTYPE_* values of pcap and pcapng).

/// The link layer of a record. Raw IP covers LINKTYPE_RAW (101), IPV4 (228),
/// IPV6 (229) and the platform DLT values 12 and 14 that tcpdump reads as raw IP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// 1
    Ethernet,
    /// 101, 12, 14: IPv4 or IPv6, told by the version nibble.
    RawIp,
    /// 228
    Ipv4,
    /// 229
    Ipv6,
    /// 113, Linux cooked capture v1 (`tcpdump -i any`).
    LinuxSll,
    /// 276, Linux cooked capture v2 (carries the interface index).
    LinuxSll2,
    /// 0, BSD loopback: 4-byte address family in the writer's byte order.
    Null,
    /// 108, OpenBSD loopback: 4-byte address family, big-endian.
    Loop,
    /// Anything else: records are counted and skipped.
    Unknown(u32),
}

impl LinkType {
    /// From the link-type field of a pcap header or pcapng IDB (upper FCS bits masked).
    pub fn from_u32(raw: u32) -> LinkType {
        match raw & 0x0fff_ffff & 0xffff {
            1 => LinkType::Ethernet,
            101 | 12 | 14 => LinkType::RawIp,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            0 => LinkType::Null,
            108 => LinkType::Loop,
            _ => LinkType::Unknown(raw & 0xffff),
        }
    }

    /// Short name used in reports (`ethernet`, `raw`, `sll`, `sll2`, `null`, ...).
    pub fn name(self) -> String {
        match self {
            LinkType::Ethernet => "ethernet".into(),
            LinkType::RawIp => "raw".into(),
            LinkType::Ipv4 => "ipv4".into(),
            LinkType::Ipv6 => "ipv6".into(),
            LinkType::LinuxSll => "sll".into(),
            LinkType::LinuxSll2 => "sll2".into(),
            LinkType::Null => "null".into(),
            LinkType::Loop => "loop".into(),
            LinkType::Unknown(v) => format!("unknown-{v}"),
        }
    }
}
