//! IP layer via etherparse's lax slicer. Takes the bytes from the IP header to
//! the record's end; gives addresses, TTL, IP ID, DF, the lengths the header
//! declares, the fragment state and the transport slice (bounded by the IP
//! length, so Ethernet padding is never payload). The version nibble decides
//! IPv4 vs IPv6, whatever the link layer said. Never parses the transport.

use super::{DecodeError, FragPos, Fragment};
use etherparse::err::ip::{HeaderError, LaxHeaderSliceError};
use etherparse::err::ipv6_exts::HeaderSliceError as ExtError;
use etherparse::LaxIpSlice;
use std::net::IpAddr;

/// Fixed IPv6 header length.
const IPV6_HEADER_LEN: usize = 40;

/// What the IP header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpLayer<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub ttl: u8,
    /// IPv4 TOS byte / IPv6 traffic class (DSCP << 2 | ECN).
    pub tos: u8,
    pub ip_id: Option<u16>,
    pub dont_fragment: bool,
    /// Header + payload per the header (captured bytes when the header says 0).
    pub ip_len: u32,
    pub fragment: Fragment,
    /// The fragment's place in its datagram (zero when not a fragment).
    pub frag: FragPos,
    /// The transport protocol (after extension headers; for a later IPv6
    /// fragment, the fragment header's next header).
    pub protocol: u8,
    /// IP header plus extension headers (IPv4 AH, IPv6 extensions), bytes.
    pub header_len: usize,
    /// The transport bytes present (never beyond the IP length).
    pub payload: &'a [u8],
    /// The transport length per the header.
    pub payload_len: u32,
    /// The IP length says more bytes than were captured, or an extension
    /// header was cut short.
    pub truncated: bool,
}

/// Parses the IP header at the start of `bytes`.
pub fn parse(bytes: &[u8]) -> Result<IpLayer<'_>, DecodeError> {
    let (slice, stop) = LaxIpSlice::from_slice(bytes).map_err(translate)?;
    let ext_cut = matches!(stop, Some((ExtError::Len(_), _)));
    let captured = len_u32(bytes.len());
    match slice {
        LaxIpSlice::Ipv4(v4) => {
            let h = v4.header();
            let ihl_len = h.slice().len();
            let auth_len = v4.extensions().auth.map_or(0, |a| a.slice().len());
            let header_len = ihl_len + auth_len;
            let total = usize::from(h.total_len());
            // 0 (TSO/GRO) or nonsense below the header length: use what was captured.
            let ip_len = if total < ihl_len { captured } else { len_u32(total) };
            let offset = h.fragments_offset().value();
            let fragment = fragment_state(offset, h.more_fragments());
            let frag = match fragment {
                Fragment::None => FragPos::default(),
                _ => FragPos {
                    id: u32::from(h.identification()),
                    offset: u32::from(offset) * 8,
                    len: ip_len.saturating_sub(len_u32(ihl_len)),
                    more: h.more_fragments(),
                },
            };
            let payload = v4.payload();
            Ok(IpLayer {
                src: IpAddr::V4(h.source_addr()),
                dst: IpAddr::V4(h.destination_addr()),
                ttl: h.ttl(),
                tos: h.slice().get(1).copied().unwrap_or(0),
                ip_id: Some(h.identification()),
                dont_fragment: h.dont_fragment(),
                ip_len,
                fragment,
                frag,
                protocol: payload.ip_number.0,
                header_len,
                payload: payload.payload,
                payload_len: ip_len.saturating_sub(len_u32(header_len)),
                truncated: payload.incomplete || ext_cut,
            })
        }
        LaxIpSlice::Ipv6(v6) => {
            let h = v6.header();
            let declared = usize::from(h.payload_length());
            let ip_len =
                if declared == 0 { captured } else { len_u32(IPV6_HEADER_LEN.saturating_add(declared)) };
            // Find the fragment header (if any) and where it ends.
            let frag = find_fragment_header(h.next_header().0, v6.extensions().slice());
            let payload = v6.payload();
            let pos = |offset: u16, more: bool, id: u32, end: usize| FragPos {
                id,
                offset: u32::from(offset) * 8,
                len: ip_len.saturating_sub(len_u32(IPV6_HEADER_LEN.saturating_add(end))),
                more,
            };
            let frag_pos = match frag {
                Some((offset, more, _, id, end)) if fragment_state(offset, more) != Fragment::None => {
                    pos(offset, more, id, end)
                }
                _ => FragPos::default(),
            };
            let (fragment, protocol, header_len, transport) = match frag {
                Some((offset, more, next, _, end)) if offset != 0 => {
                    // A later fragment: what follows the fragment header is data,
                    // even if it looked like more extension headers to the slicer.
                    let start = IPV6_HEADER_LEN + end;
                    let limit = usize::try_from(ip_len).unwrap_or(usize::MAX).min(bytes.len());
                    let data = bytes.get(start..limit).unwrap_or(&[]);
                    (fragment_state(offset, more), next, start, data)
                }
                Some((offset, more, _, _, _)) => (
                    fragment_state(offset, more),
                    payload.ip_number.0,
                    IPV6_HEADER_LEN + v6.extensions().slice().len(),
                    payload.payload,
                ),
                None => (
                    Fragment::None,
                    payload.ip_number.0,
                    IPV6_HEADER_LEN + v6.extensions().slice().len(),
                    payload.payload,
                ),
            };
            Ok(IpLayer {
                src: IpAddr::V6(h.source_addr()),
                dst: IpAddr::V6(h.destination_addr()),
                ttl: h.hop_limit(),
                tos: match h.slice() {
                    [a, b, ..] => (a << 4) | (b >> 4),
                    _ => 0,
                },
                ip_id: None,
                dont_fragment: false,
                ip_len,
                fragment,
                frag: frag_pos,
                protocol,
                header_len,
                payload: transport,
                payload_len: ip_len.saturating_sub(len_u32(header_len)),
                truncated: payload.incomplete || ext_cut,
            })
        }
    }
}

/// IPv6 extension header numbers.
const EXT_HOP_BY_HOP: u8 = 0;
const EXT_ROUTING: u8 = 43;
const EXT_FRAGMENT: u8 = 44;
const EXT_AUTH: u8 = 51;
const EXT_DEST_OPTIONS: u8 = 60;

/// Walks the extension headers the slicer validated (`exts`, starting with
/// header `first`) to the first fragment header: its offset (8-byte units), MF
/// flag, next header, identification and where it ends within `exts`. Our own bounds-checked
/// walk: etherparse 0.21's `Ipv6ExtensionSliceIter` reads past the validated
/// bytes (unchecked) when the slicer stopped at a cut-short extension header
/// whose type the last valid header names (found by fuzzing).
fn find_fragment_header(first: u8, exts: &[u8]) -> Option<(u16, bool, u8, u32, usize)> {
    let mut next = first;
    let mut at = 0usize;
    while let Some(rest) = exts.get(at..).filter(|r| r.len() >= 8) {
        let len = match next {
            EXT_HOP_BY_HOP | EXT_ROUTING | EXT_DEST_OPTIONS => (usize::from(rest[1]) + 1) * 8,
            EXT_FRAGMENT => 8,
            EXT_AUTH => (usize::from(rest[1]) + 2) * 4,
            _ => return None,
        };
        if len > rest.len() {
            return None;
        }
        if next == EXT_FRAGMENT {
            let field = u16::from_be_bytes([rest[2], rest[3]]);
            let id = u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]);
            return Some((field >> 3, field & 1 != 0, rest[0], id, at + len));
        }
        next = rest[0];
        at += len;
    }
    None
}

/// Offset (in 8-byte units) and MF → fragment state. Offset 0 without MF is
/// an atomic fragment (RFC 6946): not fragmented.
fn fragment_state(offset: u16, more_fragments: bool) -> Fragment {
    match (offset, more_fragments) {
        (0, false) => Fragment::None,
        (0, true) => Fragment::First,
        _ => Fragment::Later,
    }
}

fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn translate(err: LaxHeaderSliceError) -> DecodeError {
    match err {
        LaxHeaderSliceError::Len(e) => {
            DecodeError::Truncated { layer: "ip", needed: e.required_len, available: e.len }
        }
        LaxHeaderSliceError::Content(HeaderError::UnsupportedIpVersion { version_number }) => {
            DecodeError::Malformed { layer: "ip", what: format!("IP version {version_number}") }
        }
        LaxHeaderSliceError::Content(HeaderError::Ipv4HeaderLengthSmallerThanHeader { ihl }) => {
            DecodeError::Malformed {
                layer: "ipv4",
                what: format!("header length {ihl} (×4 bytes) is below the minimum of 5"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    // IPv4 198.18.0.1 -> 198.18.0.2, ID 0x1234, DF, TTL 64, UDP, total length 28,
    // then an 8-byte UDP header and 4 bytes of Ethernet padding.
    const V4_UDP_PADDED: &[u8] = &[
        0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 198, 18, 0, 1, 198, 18, 0,
        2, // header
        0x30, 0x39, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00, // UDP 12345 -> 53
        0, 0, 0, 0, // padding
    ];

    #[test]
    fn ipv4_fields_and_padding_excluded() {
        let ip = parse(V4_UDP_PADDED).unwrap();
        assert_eq!(ip.src, IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1)));
        assert_eq!(ip.dst, IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2)));
        assert_eq!((ip.ttl, ip.ip_id, ip.dont_fragment), (64, Some(0x1234), true));
        assert_eq!((ip.ip_len, ip.header_len, ip.payload_len), (28, 20, 8));
        assert_eq!(ip.payload.len(), 8);
        assert_eq!((ip.protocol, ip.fragment, ip.truncated), (17, Fragment::None, false));
    }

    #[test]
    fn ipv4_cut_by_snaplen_keeps_declared_length() {
        let ip = parse(&V4_UDP_PADDED[..24]).unwrap();
        assert_eq!((ip.ip_len, ip.payload_len, ip.payload.len(), ip.truncated), (28, 8, 4, true));
    }

    #[test]
    fn ipv4_header_cut_is_an_error() {
        assert_eq!(
            parse(&V4_UDP_PADDED[..12]),
            Err(DecodeError::Truncated { layer: "ip", needed: 20, available: 12 })
        );
        assert_eq!(parse(&[]), Err(DecodeError::Truncated { layer: "ip", needed: 1, available: 0 }));
    }

    // IPv6 2001:db8::1 -> 2001:db8::2, hop limit 64, next header 60 (destination
    // options, 8 bytes, next 17), payload length 16; then 8 bytes of UDP header.
    const V6_DSTOPT_UDP: &[u8] = &[
        0x60, 0, 0, 0, 0x00, 0x10, 60, 64, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        17, 0, 1, 4, 0, 0, 0, 0, // dest options: PadN
        0x30, 0x39, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00, // UDP 12345 -> 53
    ];

    #[test]
    fn ipv6_extension_headers_count_in_header_len() {
        let ip = parse(V6_DSTOPT_UDP).unwrap();
        assert_eq!(ip.src, IpAddr::V6("2001:db8::1".parse::<Ipv6Addr>().unwrap()));
        assert_eq!((ip.ttl, ip.ip_id, ip.ip_len, ip.header_len, ip.payload_len), (64, None, 56, 48, 8));
        assert_eq!((ip.protocol, ip.fragment, ip.truncated), (17, Fragment::None, false));
    }

    #[test]
    fn fragment_states() {
        assert_eq!(fragment_state(0, false), Fragment::None);
        assert_eq!(fragment_state(0, true), Fragment::First);
        assert_eq!(fragment_state(185, true), Fragment::Later);
        assert_eq!(fragment_state(185, false), Fragment::Later);
    }
}
