//! TCP and UDP headers, read by hand with named byte ranges: a header cut by the
//! snaplen must still give its ports and sequence numbers, which etherparse's
//! TcpHeaderSlice/UdpHeaderSlice refuse to slice. Takes the transport bytes
//! present (bounded by the IP length); gives the `Transport` summary, the header
//! length and whether it was cut short. Never reads past the given bytes.

use super::be::{be16, be32};
use super::{icmp, ip_proto, Fragment, TcpInfo, Transport, UdpInfo};

/// TCP header fields (RFC 9293 §3.1).
mod tcp {
    use std::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const SEQ: Range<usize> = 4..8;
    pub const ACK: Range<usize> = 8..12;
    /// High nibble: header length in 32-bit words.
    pub const DATA_OFFSET: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WINDOW: Range<usize> = 14..16;
    pub const HEADER_LEN: usize = 20;
    pub const OPT_END: u8 = 0;
    pub const OPT_NOP: u8 = 1;
    pub const OPT_MSS: u8 = 2;
    pub const OPT_MSS_LEN: u8 = 4;
}

/// UDP header fields (RFC 768).
mod udp {
    use std::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const HEADER_LEN: usize = 8;
}

/// The transport layer of one packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportLayer {
    pub transport: Transport,
    /// Bytes before the payload (TCP data offset, 8 for UDP and ICMP, 0 otherwise).
    pub header_len: usize,
    /// The header is unusable past its fixed part (bad TCP data offset): no payload.
    pub no_payload: bool,
    /// The header was cut short.
    pub truncated: bool,
}

/// Parses the transport header of `protocol` from `bytes`; `segment_len` is the
/// transport length the IP header declares.
pub fn parse(protocol: u8, fragment: Fragment, bytes: &[u8], segment_len: u32) -> TransportLayer {
    let other = |truncated| TransportLayer {
        transport: Transport::Other { protocol },
        header_len: 0,
        no_payload: false,
        truncated,
    };
    if fragment == Fragment::Later {
        return other(false);
    }
    match protocol {
        ip_proto::TCP => parse_tcp(bytes, segment_len).unwrap_or_else(|| other(true)),
        ip_proto::UDP => {
            let (Some(src_port), Some(dst_port)) = (be16(bytes, udp::SRC_PORT), be16(bytes, udp::DST_PORT))
            else {
                return other(true);
            };
            TransportLayer {
                transport: Transport::Udp(UdpInfo { src_port, dst_port }),
                header_len: udp::HEADER_LEN,
                no_payload: false,
                truncated: bytes.len() < udp::HEADER_LEN,
            }
        }
        ip_proto::ICMP | ip_proto::ICMPV6 => {
            // ICMP (1) inside IPv6 or ICMPv6 (58) inside IPv4 are read by their own numbering.
            let icmp_v6 = protocol == ip_proto::ICMPV6;
            match icmp::parse(icmp_v6, bytes) {
                Some((info, truncated)) => TransportLayer {
                    transport: Transport::Icmp(info),
                    header_len: icmp::HEADER_LEN,
                    no_payload: false,
                    truncated,
                },
                None => other(true),
            }
        }
        _ => other(false),
    }
}

/// TCP: `None` when not even the ports were captured.
fn parse_tcp(bytes: &[u8], segment_len: u32) -> Option<TransportLayer> {
    let src_port = be16(bytes, tcp::SRC_PORT)?;
    let dst_port = be16(bytes, tcp::DST_PORT)?;
    // Fields past the cut read as 0; `truncated` tells the flow stage.
    let mut info = TcpInfo {
        src_port,
        dst_port,
        seq: be32(bytes, tcp::SEQ).unwrap_or(0),
        ack: be32(bytes, tcp::ACK).unwrap_or(0),
        flags: bytes.get(tcp::FLAGS).copied().unwrap_or(0),
        window: be16(bytes, tcp::WINDOW).unwrap_or(0),
        mss: None,
    };
    let Some(offset_byte) = bytes.get(tcp::DATA_OFFSET) else {
        return Some(TransportLayer {
            transport: Transport::Tcp(info),
            header_len: tcp::HEADER_LEN,
            no_payload: true,
            truncated: true,
        });
    };
    let header_len = usize::from(offset_byte >> 4) * 4;
    let declared = usize::try_from(segment_len).unwrap_or(usize::MAX);
    if header_len < tcp::HEADER_LEN || header_len > declared {
        // Bad data offset: keep the fixed fields, trust nothing after them.
        return Some(TransportLayer {
            transport: Transport::Tcp(info),
            header_len: tcp::HEADER_LEN,
            no_payload: true,
            truncated: true,
        });
    }
    let options = bytes.get(tcp::HEADER_LEN..header_len.min(bytes.len())).unwrap_or(&[]);
    info.mss = find_mss(options);
    Some(TransportLayer {
        transport: Transport::Tcp(info),
        header_len,
        no_payload: false,
        truncated: bytes.len() < header_len,
    })
}

/// Walks TCP options (bounded by the slice) for the MSS option (kind 2, length 4).
fn find_mss(mut options: &[u8]) -> Option<u16> {
    while let Some(&kind) = options.first() {
        match kind {
            tcp::OPT_END => return None,
            tcp::OPT_NOP => options = options.get(1..)?,
            _ => {
                let len = usize::from(*options.get(1)?);
                if len < 2 {
                    return None; // would loop forever; malformed
                }
                if kind == tcp::OPT_MSS && len == usize::from(tcp::OPT_MSS_LEN) {
                    return be16(options, 2..4);
                }
                options = options.get(len..)?;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    // TCP SYN 51514 -> 80, seq 0x12345678, window 64240, options: MSS 1460,
    // NOP, NOP, SACK permitted, NOP, window scale 7 (header length 32).
    const SYN_MSS: &[u8] = &[
        0xc9, 0x3a, 0x00, 0x50, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 0x80, 0x02, 0xfa, 0xf0, 0, 0, 0, 0, 2, 4,
        0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7,
    ];

    #[test]
    fn syn_gives_seq_flags_and_mss() {
        let t = parse(6, Fragment::None, SYN_MSS, 32);
        let Transport::Tcp(tcp) = t.transport else { panic!("{t:?}") };
        assert_eq!((tcp.src_port, tcp.dst_port, tcp.seq, tcp.ack), (51514, 80, 0x1234_5678, 0));
        assert_eq!((tcp.flags, tcp.window, tcp.mss), (0x02, 64240, Some(1460)));
        assert_eq!((t.header_len, t.truncated, t.no_payload), (32, false, false));
    }

    #[test]
    fn options_cut_short_keep_fixed_fields() {
        let t = parse(6, Fragment::None, &SYN_MSS[..22], 32);
        let Transport::Tcp(tcp) = t.transport else { panic!("{t:?}") };
        assert_eq!((tcp.seq, tcp.flags, tcp.mss), (0x1234_5678, 0x02, None));
        assert!(t.truncated);
    }

    #[test]
    fn header_cut_after_ports_keeps_ports() {
        let t = parse(6, Fragment::None, &SYN_MSS[..6], 32);
        let Transport::Tcp(tcp) = t.transport else { panic!("{t:?}") };
        assert_eq!((tcp.src_port, tcp.dst_port, tcp.seq), (51514, 80, 0));
        assert!(t.truncated && t.no_payload);
        // Fewer than 4 bytes: no ports, protocol only.
        let t = parse(6, Fragment::None, &SYN_MSS[..3], 32);
        assert_eq!((t.transport, t.truncated), (Transport::Other { protocol: 6 }, true));
    }

    #[test]
    fn bad_data_offset_keeps_fixed_fields_without_payload() {
        let mut bytes = SYN_MSS.to_vec();
        bytes[12] = 0x30; // 12 bytes: below the minimum of 20
        let t = parse(6, Fragment::None, &bytes, 32);
        let Transport::Tcp(tcp) = t.transport else { panic!("{t:?}") };
        assert_eq!((tcp.src_port, tcp.seq, tcp.mss), (51514, 0x1234_5678, None));
        assert!(t.no_payload && t.truncated);
    }

    #[test]
    fn malformed_options_do_not_loop() {
        assert_eq!(find_mss(&[3, 0, 2, 4, 5, 0xb4]), None);
        assert_eq!(find_mss(&[1, 1, 8, 10, 0, 0]), None);
        assert_eq!(find_mss(&[2, 4, 0x05]), None);
        assert_eq!(find_mss(&[1, 2, 4, 0x02, 0x18]), Some(536));
    }

    #[test]
    fn later_fragment_is_other() {
        let t = parse(17, Fragment::Later, &[0; 16], 16);
        assert_eq!(t.transport, Transport::Other { protocol: 17 });
    }
}
