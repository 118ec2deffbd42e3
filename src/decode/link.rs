//! Link layer → where the IP packet starts. Takes a record's link type and bytes;
//! gives the offset of the IP header plus what the Linux cooked headers say
//! (packet type, SLL2 interface index). Ethernet with any stack of 802.1Q /
//! 802.1ad / 0x9100 tags (bounded), raw IP, SLL, SLL2, BSD null and loop, PPP
//! (with or without HDLC address and control), Cisco HDLC and NFLOG are read by
//! hand (etherparse has none of the last ones). Never looks at the IP header
//! itself: the version nibble decides IPv4 vs IPv6 later.

use super::DecodeError;
use crate::read::LinkType;
use std::ops::Range;

/// Ethertypes we act on.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86dd;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88a8;
    pub const QINQ_OLD: u16 = 0x9100;
    pub const MPLS: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
}

/// An MPLS label stack (RFC 3032) and what follows its bottom entry.
mod mpls {
    /// One label stack entry: label (20 bits), traffic class (3), bottom of
    /// stack (1), TTL (8).
    pub const ENTRY_LEN: usize = 4;
    /// Deeper stacks than this are treated as malformed (real ones hold 1–4).
    pub const MAX_LABELS: usize = 8;
    /// The pseudowire control word (RFC 4385) before an Ethernet frame.
    pub const CONTROL_WORD_LEN: usize = 4;
}

/// Ethernet II header fields.
mod eth {
    use std::ops::Range;
    pub const ETHERTYPE: Range<usize> = 12..14;
    pub const HEADER_LEN: usize = 14;
}

/// One 802.1Q / 802.1ad tag (after the tag protocol identifier).
mod vlan {
    use std::ops::Range;
    /// The tag control information and the inner ethertype, relative to the tag start.
    pub const TCI: Range<usize> = 0..2;
    pub const ETHERTYPE: Range<usize> = 2..4;
    pub const TAG_LEN: usize = 4;
    /// Deeper stacks than this are treated as malformed.
    pub const MAX_DEPTH: usize = 8;
}

/// Linux cooked capture v1 (LINKTYPE_LINUX_SLL, 113).
mod sll {
    use std::ops::Range;
    pub const PACKET_TYPE: Range<usize> = 0..2;
    pub const PROTOCOL: Range<usize> = 14..16;
    pub const HEADER_LEN: usize = 16;
}

/// Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, 276).
mod sll2 {
    use std::ops::Range;
    pub const PROTOCOL: Range<usize> = 0..2;
    pub const IFINDEX: Range<usize> = 4..8;
    pub const PACKET_TYPE: usize = 10;
    pub const HEADER_LEN: usize = 20;
}

/// BSD null / OpenBSD loop: a 4-byte address family.
mod null {
    use std::ops::Range;
    pub const FAMILY: Range<usize> = 0..4;
    pub const HEADER_LEN: usize = 4;
    pub const AF_INET: u32 = 2;
    /// Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, macOS 30.
    pub const AF_INET6: [u32; 4] = [10, 24, 28, 30];
    /// A family read little-endian below this was written little-endian.
    pub const LE_LIMIT: u32 = 0x1_0000;
    /// Some writers put an ethertype here instead of a family (Wireshark's
    /// packet-null.c accepts it too): bytes 2..4, big-endian.
    pub const ETHERTYPE: Range<usize> = 2..4;
}

/// PPP (RFC 1661) and PPP in HDLC-like framing (RFC 1662).
mod ppp {
    /// HDLC address and control bytes that may precede the protocol field.
    pub const ADDRESS_CONTROL: [u8; 2] = [0xff, 0x03];
    pub const IPV4: u16 = 0x0021;
    pub const IPV6: u16 = 0x0057;
}

/// Cisco HDLC (LINKTYPE_C_HDLC, 104): address, control, ethertype.
mod chdlc {
    use std::ops::Range;
    /// Unicast and broadcast address bytes.
    pub const ADDRESSES: [u8; 2] = [0x0f, 0x8f];
    pub const PROTOCOL: Range<usize> = 2..4;
    pub const HEADER_LEN: usize = 4;
}

/// Linux netfilter log (LINKTYPE_NFLOG, 239): family (1), version (1), resource
/// id (2, big-endian), then TLVs whose length (which counts the 4-byte TLV
/// header) and type are in the byte order of the capturing host, each padded to
/// 4 bytes. The packet is the value of the payload TLV.
mod nflog {
    pub const HEADER_LEN: usize = 4;
    pub const TLV_HEADER_LEN: usize = 4;
    /// NFULA_PAYLOAD.
    pub const PAYLOAD: u16 = 9;
    /// The type's upper bits are netlink flags (nested, network byte order).
    pub const TYPE_MASK: u16 = 0x3fff;
}

/// Where the IP packet starts and what the link layer said about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// Offset of the IP header in the record's data.
    pub ip_offset: usize,
    pub sll_packet_type: Option<u8>,
    pub sll_ifindex: Option<u32>,
    /// The outermost VLAN tag's VLAN ID (12 bits), when tagged.
    pub vlan: Option<u16>,
    /// The outermost MPLS label (20 bits), when the packet came labelled.
    pub mpls: Option<u32>,
}

impl LinkInfo {
    fn at(ip_offset: usize) -> LinkInfo {
        LinkInfo { ip_offset, sll_packet_type: None, sll_ifindex: None, vlan: None, mpls: None }
    }

    fn tagged(t: Tags) -> LinkInfo {
        LinkInfo { vlan: t.vlan, mpls: t.mpls, ..LinkInfo::at(t.ip_offset) }
    }
}

/// What lay between the link header and the IP header: VLAN tags, MPLS labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tags {
    ip_offset: usize,
    vlan: Option<u16>,
    mpls: Option<u32>,
}

/// Finds the IP header in `data` for `link_type`.
pub fn locate_ip(link_type: LinkType, data: &[u8]) -> Result<LinkInfo, DecodeError> {
    match link_type {
        LinkType::Ethernet => {
            let ty = be16(data, eth::ETHERTYPE, "ethernet")?;
            Ok(LinkInfo::tagged(follow_tags(data, ty, eth::HEADER_LEN)?))
        }
        LinkType::RawIp | LinkType::Ipv4 | LinkType::Ipv6 => Ok(LinkInfo::at(0)),
        LinkType::LinuxSll => {
            need(data, sll::HEADER_LEN, "sll")?;
            let packet_type = be16(data, sll::PACKET_TYPE, "sll")?;
            let ty = be16(data, sll::PROTOCOL, "sll")?;
            let found = follow_tags(data, ty, sll::HEADER_LEN)?;
            let sll_packet_type = Some(u8::try_from(packet_type).unwrap_or(u8::MAX));
            Ok(LinkInfo { sll_packet_type, ..LinkInfo::tagged(found) })
        }
        LinkType::LinuxSll2 => {
            need(data, sll2::HEADER_LEN, "sll2")?;
            let ty = be16(data, sll2::PROTOCOL, "sll2")?;
            let ifindex = be32(data, sll2::IFINDEX, "sll2")?;
            let packet_type = data.get(sll2::PACKET_TYPE).copied();
            let found = follow_tags(data, ty, sll2::HEADER_LEN)?;
            Ok(LinkInfo {
                sll_packet_type: packet_type,
                sll_ifindex: Some(ifindex),
                ..LinkInfo::tagged(found)
            })
        }
        LinkType::Null => {
            let raw = bytes4(data, null::FAMILY, "null")?;
            let le = u32::from_le_bytes(raw);
            // The family is in the byte order of the host that wrote the file.
            let family = if le < null::LE_LIMIT { le } else { u32::from_be_bytes(raw) };
            family_to_ip(family, data)
        }
        LinkType::Loop => {
            let family = u32::from_be_bytes(bytes4(data, null::FAMILY, "loop")?);
            family_to_ip(family, data)
        }
        LinkType::Ppp => ppp_to_ip(data, 0),
        LinkType::PppHdlc => match data.first() {
            Some(a) if chdlc::ADDRESSES.contains(a) => cisco_hdlc(data),
            _ => ppp_to_ip(data, 0),
        },
        LinkType::CiscoHdlc => cisco_hdlc(data),
        LinkType::Nflog => nflog_payload(data).map(LinkInfo::at),
        LinkType::Unknown(_) => Err(DecodeError::UnsupportedLinkType),
    }
}

/// PPP from `at`: optional 0xff 0x03, then a 1-byte (compressed, odd) or 2-byte
/// protocol field.
fn ppp_to_ip(data: &[u8], mut at: usize) -> Result<LinkInfo, DecodeError> {
    if data.get(at..at + 2) == Some(&ppp::ADDRESS_CONTROL[..]) {
        at += 2;
    }
    let first = *data.get(at).ok_or(DecodeError::Truncated {
        layer: "ppp",
        needed: at + 1,
        available: data.len(),
    })?;
    let (protocol, len) =
        if first & 1 == 1 { (u16::from(first), 1) } else { (be16(data, at..at + 2, "ppp")?, 2) };
    match protocol {
        ppp::IPV4 | ppp::IPV6 => Ok(LinkInfo::at(at + len)),
        other => Err(DecodeError::NotIp { ethertype: other }),
    }
}

fn cisco_hdlc(data: &[u8]) -> Result<LinkInfo, DecodeError> {
    let ty = be16(data, chdlc::PROTOCOL, "c_hdlc")?;
    match ty {
        ethertype::IPV4 | ethertype::IPV6 => Ok(LinkInfo::at(chdlc::HEADER_LEN)),
        other => Err(DecodeError::NotIp { ethertype: other }),
    }
}

/// Offset of the NFLOG payload TLV's value. The TLV byte order is the capturing
/// host's, which the record does not say: the walk that reaches the payload
/// with every length in bounds wins, little-endian (most hosts) tried first.
fn nflog_payload(data: &[u8]) -> Result<usize, DecodeError> {
    need(data, nflog::HEADER_LEN, "nflog")?;
    let walk = |read: fn([u8; 2]) -> u16| -> Option<usize> {
        let mut at = nflog::HEADER_LEN;
        // Every step moves at least 4 bytes forward, so this ends.
        while let Some(hdr) = data.get(at..at + nflog::TLV_HEADER_LEN) {
            let len = usize::from(read([hdr[0], hdr[1]]));
            let ty = read([hdr[2], hdr[3]]) & nflog::TYPE_MASK;
            if len < nflog::TLV_HEADER_LEN {
                return None;
            }
            if ty == nflog::PAYLOAD {
                // The payload may be cut by the snaplen; the IP stage says so.
                return Some(at + nflog::TLV_HEADER_LEN);
            }
            at = at.checked_add(len.div_ceil(4) * 4)?;
        }
        None
    };
    walk(u16::from_le_bytes).or_else(|| walk(u16::from_be_bytes)).ok_or_else(|| DecodeError::Malformed {
        layer: "nflog",
        what: "no packet payload (TLV type 9) within the record".to_string(),
    })
}

fn family_to_ip(family: u32, data: &[u8]) -> Result<LinkInfo, DecodeError> {
    let ethertype = be16(data, null::ETHERTYPE, "null")?;
    if family == null::AF_INET
        || null::AF_INET6.contains(&family)
        || ethertype == ethertype::IPV4
        || ethertype == ethertype::IPV6
    {
        Ok(LinkInfo::at(null::HEADER_LEN))
    } else {
        // NotIp carries a u16; families are small numbers.
        Err(DecodeError::NotIp { ethertype: u16::try_from(family).unwrap_or(u16::MAX) })
    }
}

/// Skips VLAN tags and MPLS label stacks starting at `offset` (where `ty`
/// was the last ethertype read): gives the offset of the IP header, the
/// outermost tag's VLAN ID and the outermost MPLS label, or NotIp. Below an
/// MPLS stack's bottom entry the first nibble tells: 4 is IPv4, 6 is IPv6, 0 a
/// pseudowire control word before an Ethernet frame (Ethernet over MPLS, its
/// own tags followed in turn); anything else is not IP.
fn follow_tags(data: &[u8], mut ty: u16, mut offset: usize) -> Result<Tags, DecodeError> {
    let mut tags = Tags { ip_offset: offset, vlan: None, mpls: None };
    for _ in 0..=vlan::MAX_DEPTH {
        match ty {
            ethertype::IPV4 | ethertype::IPV6 => return Ok(Tags { ip_offset: offset, ..tags }),
            ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_OLD => {
                let tag = data.get(offset..).unwrap_or(&[]);
                // The tag control information: priority (3 bits), DEI, VLAN ID (12 bits).
                let tci = be16(tag, vlan::TCI, "vlan")?;
                tags.vlan = tags.vlan.or(Some(tci & 0x0fff));
                ty = be16(tag, vlan::ETHERTYPE, "vlan")?;
                offset += vlan::TAG_LEN;
            }
            ethertype::MPLS | ethertype::MPLS_MULTICAST => {
                let (label, bottom) = label_stack(data, offset)?;
                tags.mpls = tags.mpls.or(Some(label));
                offset = bottom;
                let first = data.get(offset).ok_or(DecodeError::Truncated {
                    layer: "mpls",
                    needed: offset + 1,
                    available: data.len(),
                })?;
                ty = match first >> 4 {
                    4 => ethertype::IPV4,
                    6 => ethertype::IPV6,
                    0 => {
                        offset += mpls::CONTROL_WORD_LEN;
                        need(data, offset + eth::HEADER_LEN, "mpls")?;
                        let t =
                            be16(data, offset + eth::ETHERTYPE.start..offset + eth::ETHERTYPE.end, "mpls")?;
                        offset += eth::HEADER_LEN;
                        t
                    }
                    _ => return Err(DecodeError::NotIp { ethertype: ty }),
                };
            }
            other => return Err(DecodeError::NotIp { ethertype: other }),
        }
    }
    Err(DecodeError::Malformed {
        layer: "vlan",
        what: format!("more than {} stacked VLAN tags or MPLS stacks", vlan::MAX_DEPTH),
    })
}

/// The MPLS label stack starting at `offset`: its outermost label and the
/// offset after its bottom entry.
fn label_stack(data: &[u8], offset: usize) -> Result<(u32, usize), DecodeError> {
    let top = be32(data, offset..offset + mpls::ENTRY_LEN, "mpls")? >> 12;
    for k in 0..mpls::MAX_LABELS {
        let at = offset + k * mpls::ENTRY_LEN;
        // bit 8 of the entry: the bottom of the stack
        if be32(data, at..at + mpls::ENTRY_LEN, "mpls")? & 0x100 != 0 {
            return Ok((top, at + mpls::ENTRY_LEN));
        }
    }
    Err(DecodeError::Malformed {
        layer: "mpls",
        what: format!("more than {} MPLS labels without a bottom of stack", mpls::MAX_LABELS),
    })
}

fn need(data: &[u8], len: usize, layer: &'static str) -> Result<(), DecodeError> {
    if data.len() < len {
        return Err(DecodeError::Truncated { layer, needed: len, available: data.len() });
    }
    Ok(())
}

fn bytes4(data: &[u8], range: Range<usize>, layer: &'static str) -> Result<[u8; 4], DecodeError> {
    need(data, range.end, layer)?;
    data.get(range).and_then(|b| <[u8; 4]>::try_from(b).ok()).ok_or(DecodeError::Truncated {
        layer,
        needed: 4,
        available: data.len(),
    })
}

fn be16(data: &[u8], range: Range<usize>, layer: &'static str) -> Result<u16, DecodeError> {
    need(data, range.end, layer)?;
    data.get(range)
        .and_then(|b| <[u8; 2]>::try_from(b).ok())
        .map(u16::from_be_bytes)
        .ok_or(DecodeError::Truncated { layer, needed: 2, available: data.len() })
}

fn be32(data: &[u8], range: Range<usize>, layer: &'static str) -> Result<u32, DecodeError> {
    bytes4(data, range, layer).map(u32::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Ethernet II, ethertype IPv4, then the first IP byte.
    const ETH_IPV4: &[u8] = &[
        0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, // dst, src MAC (locally administered)
        0x08, 0x00, // IPv4
        0x45,
    ];
    // Ethernet, 802.1ad outer tag (VID 100), 802.1Q inner tag (VID 200), IPv6.
    const ETH_QINQ_IPV6: &[u8] = &[
        0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, //
        0x88, 0xa8, 0x00, 0x64, // S-tag VID 100
        0x81, 0x00, 0x00, 0xc8, // C-tag VID 200
        0x86, 0xdd, // IPv6
        0x60,
    ];
    // Ethernet, one 802.1Q tag, then ARP.
    const ETH_VLAN_ARP: &[u8] =
        &[0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x81, 0x00, 0x00, 0x0a, 0x08, 0x06, 0, 1];
    // SLL: packet type 4 (outgoing), ARPHRD_ETHER, addr len 6, MAC, protocol IPv4.
    const SLL_IPV4: &[u8] =
        &[0x00, 0x04, 0x00, 0x01, 0x00, 0x06, 0x02, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00, 0x45];
    // SLL2: protocol IPv6, reserved, ifindex 7, ARPHRD_ETHER, packet type 0 (host),
    // addr len 6, MAC + 2 pad bytes.
    const SLL2_IPV6: &[u8] = &[
        0x86, 0xdd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 0x00, 0x06, 0x02, 0, 0, 0, 0, 1, 0, 0,
        0x60,
    ];

    #[test]
    fn ethernet_ipv4_starts_after_14_bytes() {
        assert_eq!(locate_ip(LinkType::Ethernet, ETH_IPV4), Ok(LinkInfo::at(14)));
    }

    #[test]
    fn qinq_tags_are_skipped() {
        assert_eq!(
            locate_ip(LinkType::Ethernet, ETH_QINQ_IPV6),
            Ok(LinkInfo { vlan: Some(100), ..LinkInfo::at(22) })
        );
    }

    /// Ethernet, `labels` as MPLS entries (the last the bottom of the stack, TTL 64), then `rest`.
    fn mpls_frame(labels: &[u32], rest: &[u8]) -> Vec<u8> {
        let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x88, 0x47];
        for (k, &label) in labels.iter().enumerate() {
            let bottom = u32::from(k + 1 == labels.len());
            f.extend_from_slice(&((label << 12) | (bottom << 8) | 64).to_be_bytes());
        }
        f.extend_from_slice(rest);
        f
    }

    #[test]
    fn an_mpls_label_stack_is_skipped_to_ip_and_its_outer_label_kept() {
        let v4 = mpls_frame(&[16_001, 299_776], &[0x45]);
        assert_eq!(
            locate_ip(LinkType::Ethernet, &v4),
            Ok(LinkInfo { mpls: Some(16_001), ..LinkInfo::at(22) })
        );
        let v6 = mpls_frame(&[3], &[0x60]);
        assert_eq!(locate_ip(LinkType::Ethernet, &v6), Ok(LinkInfo { mpls: Some(3), ..LinkInfo::at(18) }));
        // A VLAN tag before the labels (a tagged PE link): both are kept.
        let mut tagged = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x81, 0x00, 0x00, 0x0a];
        tagged.extend_from_slice(&mpls_frame(&[17], &[0x45])[12..]);
        assert_eq!(
            locate_ip(LinkType::Ethernet, &tagged),
            Ok(LinkInfo { vlan: Some(10), mpls: Some(17), ..LinkInfo::at(22) })
        );
    }

    #[test]
    fn an_ethernet_pseudowire_after_its_control_word_is_followed_to_ip() {
        // control word 0, then an inner Ethernet frame with an 802.1Q tag and IPv4
        let mut rest = vec![0, 0, 0, 0];
        rest.extend_from_slice(&[
            0x02, 0, 0, 0, 0, 3, 0x02, 0, 0, 0, 0, 4, 0x81, 0x00, 0x00, 0x05, 0x08, 0x00, 0x45,
        ]);
        let pw = mpls_frame(&[42], &rest);
        // 14 + 4 (label) + 4 (control word) + 14 (inner Ethernet) + 4 (tag)
        assert_eq!(
            locate_ip(LinkType::Ethernet, &pw),
            Ok(LinkInfo { vlan: Some(5), mpls: Some(42), ..LinkInfo::at(40) })
        );
    }

    #[test]
    fn a_damaged_or_foreign_mpls_payload_is_said_not_guessed() {
        // nine entries, none the bottom of the stack
        let mut endless = mpls_frame(&[1; 9], &[0x45]);
        endless[14..14 + 9 * 4].chunks_mut(4).for_each(|e| e[2] &= !1);
        assert!(matches!(
            locate_ip(LinkType::Ethernet, &endless),
            Err(DecodeError::Malformed { layer: "mpls", .. })
        ));
        // cut inside the stack, and right after it
        let cut = mpls_frame(&[1, 2], &[]);
        assert!(matches!(
            locate_ip(LinkType::Ethernet, &cut[..20]),
            Err(DecodeError::Truncated { layer: "mpls", .. })
        ));
        assert!(matches!(
            locate_ip(LinkType::Ethernet, &cut),
            Err(DecodeError::Truncated { layer: "mpls", .. })
        ));
        // a first nibble that is neither IP nor a control word
        assert_eq!(
            locate_ip(LinkType::Ethernet, &mpls_frame(&[1], &[0x85])),
            Err(DecodeError::NotIp { ethertype: 0x8847 })
        );
        // a control word with no whole inner Ethernet header
        assert!(matches!(
            locate_ip(LinkType::Ethernet, &mpls_frame(&[1], &[0, 0, 0, 0, 0x02, 0])),
            Err(DecodeError::Truncated { layer: "mpls", .. })
        ));
    }

    #[test]
    fn vlan_tagged_arp_is_not_ip() {
        assert_eq!(
            locate_ip(LinkType::Ethernet, ETH_VLAN_ARP),
            Err(DecodeError::NotIp { ethertype: 0x0806 })
        );
    }

    #[test]
    fn endless_vlan_stack_is_malformed() {
        let mut bytes = vec![0u8; 12];
        for _ in 0..20 {
            bytes.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        assert!(matches!(
            locate_ip(LinkType::Ethernet, &bytes),
            Err(DecodeError::Malformed { layer: "vlan", .. })
        ));
    }

    #[test]
    fn cut_ethernet_header_is_truncated() {
        assert_eq!(
            locate_ip(LinkType::Ethernet, &ETH_IPV4[..10]),
            Err(DecodeError::Truncated { layer: "ethernet", needed: 14, available: 10 })
        );
        // A tag whose ethertype is missing.
        assert!(matches!(
            locate_ip(LinkType::Ethernet, &ETH_QINQ_IPV6[..17]),
            Err(DecodeError::Truncated { layer: "vlan", .. })
        ));
    }

    #[test]
    fn sll_gives_packet_type() {
        let info = locate_ip(LinkType::LinuxSll, SLL_IPV4).unwrap();
        assert_eq!(
            info,
            LinkInfo { ip_offset: 16, sll_packet_type: Some(4), sll_ifindex: None, vlan: None, mpls: None }
        );
    }

    #[test]
    fn sll2_gives_ifindex_and_packet_type() {
        let info = locate_ip(LinkType::LinuxSll2, SLL2_IPV6).unwrap();
        assert_eq!(
            info,
            LinkInfo {
                ip_offset: 20,
                sll_packet_type: Some(0),
                sll_ifindex: Some(7),
                vlan: None,
                mpls: None
            }
        );
    }

    #[test]
    fn raw_ip_starts_at_zero() {
        for lt in [LinkType::RawIp, LinkType::Ipv4, LinkType::Ipv6] {
            assert_eq!(locate_ip(lt, &[0x60]), Ok(LinkInfo::at(0)));
        }
    }

    #[test]
    fn null_family_in_either_byte_order() {
        // AF_INET written by a little-endian host, AF_INET6 (macOS, 30) by a big-endian one.
        assert_eq!(locate_ip(LinkType::Null, &[2, 0, 0, 0, 0x45]), Ok(LinkInfo::at(4)));
        assert_eq!(locate_ip(LinkType::Null, &[0, 0, 0, 30, 0x60]), Ok(LinkInfo::at(4)));
        // AF_INET6 as FreeBSD (28) and Linux (10) write it, little-endian.
        assert_eq!(locate_ip(LinkType::Null, &[28, 0, 0, 0, 0x60]), Ok(LinkInfo::at(4)));
        assert_eq!(locate_ip(LinkType::Null, &[10, 0, 0, 0, 0x60]), Ok(LinkInfo::at(4)));
        // AF_APPLETALK (16) is not IP.
        assert_eq!(locate_ip(LinkType::Null, &[16, 0, 0, 0]), Err(DecodeError::NotIp { ethertype: 16 }));
    }

    #[test]
    fn null_header_holding_an_ethertype_is_accepted() {
        // `0f 00 08 00`: record 3 of PcapPlusPlus's null_loopback.pcap, which
        // Wireshark reads as ethertype IPv4.
        assert_eq!(locate_ip(LinkType::Null, &[0x0f, 0, 0x08, 0, 0x45]), Ok(LinkInfo::at(4)));
    }

    #[test]
    fn loop_family_is_big_endian() {
        assert_eq!(locate_ip(LinkType::Loop, &[0, 0, 0, 24, 0x60]), Ok(LinkInfo::at(4)));
        // 2 read big-endian from LE bytes is 0x02000000: not a family.
        assert!(matches!(locate_ip(LinkType::Loop, &[2, 0, 0, 0]), Err(DecodeError::NotIp { .. })));
    }

    #[test]
    fn unknown_link_type_is_unsupported() {
        assert_eq!(locate_ip(LinkType::Unknown(147), &[0; 40]), Err(DecodeError::UnsupportedLinkType));
    }

    #[test]
    fn ppp_with_and_without_address_control_and_compressed_protocol() {
        assert_eq!(locate_ip(LinkType::Ppp, &[0xff, 0x03, 0x00, 0x21, 0x45]), Ok(LinkInfo::at(4)));
        assert_eq!(locate_ip(LinkType::Ppp, &[0x00, 0x57, 0x60]), Ok(LinkInfo::at(2)));
        // protocol field compression: one odd byte
        assert_eq!(locate_ip(LinkType::Ppp, &[0x21, 0x45]), Ok(LinkInfo::at(1)));
        assert_eq!(locate_ip(LinkType::PppHdlc, &[0xff, 0x03, 0x57, 0x60]), Ok(LinkInfo::at(3)));
        // LCP is not IP
        assert_eq!(
            locate_ip(LinkType::PppHdlc, &[0xff, 0x03, 0xc0, 0x21, 1]),
            Err(DecodeError::NotIp { ethertype: 0xc021 })
        );
        for cut in [&[][..], &[0xff, 0x03], &[0xff, 0x03, 0x00]] {
            assert!(matches!(
                locate_ip(LinkType::Ppp, cut),
                Err(DecodeError::Truncated { layer: "ppp", .. })
            ));
        }
    }

    #[test]
    fn cisco_hdlc_reads_the_ethertype_also_under_ppp_hdlc() {
        assert_eq!(locate_ip(LinkType::CiscoHdlc, &[0x0f, 0x00, 0x08, 0x00, 0x45]), Ok(LinkInfo::at(4)));
        assert_eq!(locate_ip(LinkType::PppHdlc, &[0x8f, 0x00, 0x86, 0xdd, 0x60]), Ok(LinkInfo::at(4)));
        // SLARP keepalive
        assert_eq!(
            locate_ip(LinkType::CiscoHdlc, &[0x8f, 0x00, 0x80, 0x35, 0, 0, 0, 2]),
            Err(DecodeError::NotIp { ethertype: 0x8035 })
        );
        assert!(matches!(
            locate_ip(LinkType::CiscoHdlc, &[0x0f, 0x00, 0x08]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    /// NFLOG header for AF_INET, then TLVs (length, type, value) in byte order `le`.
    fn nflog(le: bool, tlvs: &[(u16, &[u8])]) -> Vec<u8> {
        let mut b = vec![2, 0, 0, 5];
        for (ty, value) in tlvs {
            let len = 4 + value.len() as u16;
            let (l, t) = if le {
                (len.to_le_bytes(), ty.to_le_bytes())
            } else {
                (len.to_be_bytes(), ty.to_be_bytes())
            };
            b.extend_from_slice(&l);
            b.extend_from_slice(&t);
            b.extend_from_slice(value);
            b.resize(b.len().div_ceil(4) * 4, 0);
        }
        b
    }

    #[test]
    fn nflog_payload_is_found_in_either_byte_order() {
        // NFULA_PACKET_HDR (1), NFULA_PREFIX (10) "k8s-drop\0" (padded), NFULA_PAYLOAD (9)
        let tlvs: [(u16, &[u8]); 3] = [(1, &[0x08, 0x00, 3, 0]), (10, b"k8s-drop\0"), (9, &[0x45, 0, 0, 20])];
        // 4 (header) + 8 + 16 (13 padded) + 4 (payload TLV header)
        assert_eq!(locate_ip(LinkType::Nflog, &nflog(true, &tlvs)), Ok(LinkInfo::at(32)));
        assert_eq!(locate_ip(LinkType::Nflog, &nflog(false, &tlvs)), Ok(LinkInfo::at(32)));
    }

    #[test]
    fn nflog_without_a_reachable_payload_is_malformed() {
        let no_payload = nflog(true, &[(1, &[0x08, 0x00, 3, 0])]);
        assert!(matches!(
            locate_ip(LinkType::Nflog, &no_payload),
            Err(DecodeError::Malformed { layer: "nflog", .. })
        ));
        // A zero TLV length would loop forever if it were followed.
        let mut zero = vec![2, 0, 0, 0, 0, 0, 1, 0];
        zero.extend_from_slice(&[9, 0, 9, 0, 0x45]);
        assert!(matches!(locate_ip(LinkType::Nflog, &zero), Err(DecodeError::Malformed { .. })));
        assert!(matches!(
            locate_ip(LinkType::Nflog, &[2, 0, 0]),
            Err(DecodeError::Truncated { layer: "nflog", .. })
        ));
        // A length that points past the record ends the walk.
        let past = nflog(true, &[(1, &[0; 4])]);
        let mut past = past.clone();
        past[4] = 0xfc;
        past[5] = 0xff;
        assert!(locate_ip(LinkType::Nflog, &past).is_err());
    }
}
