//! Link-layer header types (LINKTYPE_* values of pcap and pcapng) and the
//! names tcpdump.org's registry gives them.

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
    /// 9, PPP (RFC 1661), with or without the 0xff 0x03 HDLC address and control.
    Ppp,
    /// 50, PPP in HDLC-like framing (RFC 1662), or Cisco HDLC framing.
    PppHdlc,
    /// 104, Cisco HDLC: address, control, ethertype.
    CiscoHdlc,
    /// 239, Linux netfilter log (`tcpdump -i nflog:N`): a header, then TLVs.
    Nflog,
    /// Anything else: records are counted and skipped.
    Unknown(u32),
}

/// Registry names (tcpdump.org `linktypes.html`, without `LINKTYPE_`) of the
/// values tuplecorr does not decode, for warnings and reports.
const REGISTRY: &[(u32, &str)] = &[
    (2, "EXP_ETHERNET"),
    (3, "AX25"),
    (6, "IEEE802_5"),
    (7, "ARCNET_BSD"),
    (8, "SLIP"),
    (10, "FDDI"),
    (51, "PPP_ETHER"),
    (99, "SYMANTEC_FIREWALL"),
    (100, "ATM_RFC1483"),
    (105, "IEEE802_11"),
    (107, "FRELAY"),
    (114, "LTALK"),
    (117, "PFLOG"),
    (119, "IEEE802_11_PRISM"),
    (122, "IP_OVER_FC"),
    (123, "SUNATM"),
    (127, "IEEE802_11_RADIOTAP"),
    (129, "ARCNET_LINUX"),
    (138, "APPLE_IP_OVER_IEEE1394"),
    (139, "MTP2_WITH_PHDR"),
    (140, "MTP2"),
    (141, "MTP3"),
    (142, "SCCP"),
    (143, "DOCSIS"),
    (144, "LINUX_IRDA"),
    (163, "IEEE802_11_AVS"),
    (165, "BACNET_MS_TP"),
    (166, "PPP_PPPD"),
    (169, "GPRS_LLC"),
    (177, "LINUX_LAPD"),
    (187, "BLUETOOTH_HCI_H4"),
    (189, "USB_LINUX"),
    (192, "PPI"),
    (195, "IEEE802_15_4_WITHFCS"),
    (197, "ERF"),
    (201, "BLUETOOTH_HCI_H4_WITH_PHDR"),
    (204, "PPP_WITH_DIR"),
    (205, "C_HDLC_WITH_DIR"),
    (220, "USB_LINUX_MMAPPED"),
    (226, "IPNET"),
    (227, "CAN_SOCKETCAN"),
    (230, "IEEE802_15_4_NOFCS"),
    (231, "DBUS"),
    (240, "NETANALYZER"),
    (241, "NETANALYZER_TRANSPARENT"),
    (242, "IPOIB"),
    (243, "MPEG_2_TS"),
    (247, "INFINIBAND"),
    (248, "SCTP"),
    (249, "USBPCAP"),
    (251, "BLUETOOTH_LE_LL"),
    (253, "NETLINK"),
    (254, "BLUETOOTH_LINUX_MONITOR"),
    (256, "BLUETOOTH_LE_LL_WITH_PHDR"),
    (258, "PKTAP"),
    (266, "USB_DARWIN"),
    (271, "VSOCK"),
    (272, "NORDIC_BLE"),
    (274, "ETHERNET_MPACKET"),
    (280, "VPP_DISPATCH"),
    (283, "IEEE802_15_4_TAP"),
    (288, "USB_2_0"),
    (290, "ETW"),
];

/// LINKTYPE_USER0 .. USER15 (147-162), private use.
const USER: std::ops::RangeInclusive<u32> = 147..=162;

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
            9 => LinkType::Ppp,
            50 => LinkType::PppHdlc,
            104 => LinkType::CiscoHdlc,
            239 => LinkType::Nflog,
            _ => LinkType::Unknown(raw & 0xffff),
        }
    }

    /// The LINKTYPE_* number (raw IP reads as 101 whatever the file said).
    pub fn number(self) -> u32 {
        match self {
            LinkType::Ethernet => 1,
            LinkType::RawIp => 101,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::LinuxSll => 113,
            LinkType::LinuxSll2 => 276,
            LinkType::Null => 0,
            LinkType::Loop => 108,
            LinkType::Ppp => 9,
            LinkType::PppHdlc => 50,
            LinkType::CiscoHdlc => 104,
            LinkType::Nflog => 239,
            LinkType::Unknown(v) => v,
        }
    }

    /// True when tuplecorr finds the IP packet in records of this link type.
    pub fn is_decoded(self) -> bool {
        !matches!(self, LinkType::Unknown(_))
    }

    /// The registry name of a value tuplecorr does not decode (`FDDI`,
    /// `USER3`), or None when the registry table here does not know it.
    pub fn registry_name(self) -> Option<String> {
        let LinkType::Unknown(v) = self else { return None };
        if USER.contains(&v) {
            return Some(format!("USER{}", v - USER.start()));
        }
        REGISTRY.iter().find(|(n, _)| *n == v).map(|(_, name)| (*name).to_string())
    }

    /// Short name used in reports (`ethernet`, `raw`, `sll`, `ppp`, `nflog`,
    /// ...); a type not decoded gives its registry name in lower case (`fddi`),
    /// or `unknown-N` when the registry table here does not know it.
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
            LinkType::Ppp => "ppp".into(),
            LinkType::PppHdlc => "ppp_hdlc".into(),
            LinkType::CiscoHdlc => "c_hdlc".into(),
            LinkType::Nflog => "nflog".into(),
            LinkType::Unknown(v) => match self.registry_name() {
                Some(name) => name.to_ascii_lowercase(),
                None => format!("unknown-{v}"),
            },
        }
    }

    /// How warnings name a type that is not decoded: `FDDI (10)`, or
    /// `4000 (unknown)`.
    pub fn describe(self) -> String {
        match self.registry_name() {
            Some(name) => format!("{name} ({})", self.number()),
            None if self.is_decoded() => format!("{} ({})", self.name(), self.number()),
            None => format!("{} (unknown)", self.number()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decoded_value_round_trips_through_its_number() {
        for raw in [1, 101, 228, 229, 113, 276, 0, 108, 9, 50, 104, 239] {
            let lt = LinkType::from_u32(raw);
            assert!(lt.is_decoded(), "{raw}");
            assert_eq!(lt.number(), raw);
            assert_eq!(lt.registry_name(), None);
        }
        assert_eq!(LinkType::from_u32(12).number(), 101);
    }

    #[test]
    fn types_not_decoded_are_named_by_the_registry() {
        let named = |v| (LinkType::from_u32(v).name(), LinkType::from_u32(v).describe());
        assert_eq!(named(10), ("fddi".to_string(), "FDDI (10)".to_string()));
        assert_eq!(named(105), ("ieee802_11".to_string(), "IEEE802_11 (105)".to_string()));
        assert_eq!(named(51), ("ppp_ether".to_string(), "PPP_ETHER (51)".to_string()));
        assert_eq!(named(144), ("linux_irda".to_string(), "LINUX_IRDA (144)".to_string()));
        assert_eq!(named(143), ("docsis".to_string(), "DOCSIS (143)".to_string()));
        assert_eq!(named(189), ("usb_linux".to_string(), "USB_LINUX (189)".to_string()));
        assert_eq!(named(187), ("bluetooth_hci_h4".to_string(), "BLUETOOTH_HCI_H4 (187)".to_string()));
        assert_eq!(named(147), ("user0".to_string(), "USER0 (147)".to_string()));
        assert_eq!(named(162), ("user15".to_string(), "USER15 (162)".to_string()));
        assert_eq!(named(4000), ("unknown-4000".to_string(), "4000 (unknown)".to_string()));
    }

    #[test]
    fn registry_table_is_sorted_without_duplicates_or_decoded_values() {
        assert!(REGISTRY.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(REGISTRY.iter().all(|(v, _)| !LinkType::from_u32(*v).is_decoded() && !USER.contains(v)));
    }
}
