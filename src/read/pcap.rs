//! Legacy pcap framing: µs and ns magics in both byte orders, and Alexey
//! Kuznetsov's "modified" format (24-byte record headers). Takes a `Feeder`
//! positioned at the file header; gives each record to the callback with its
//! timestamp in UTC ns. Captured lengths are checked against `MAX_PCAP_RECORD`
//! before anything is buffered; a caplen above the snaplen is accepted up to that
//! cap. Major version 2 only; a minor version other than 4 is read with one
//! warning. Never decodes packets, never allocates per record.

use super::feeder::Feeder;
use super::{read_u16, read_u32};
use super::{
    ByteOrder, Ctx, Format, InterfaceInfo, LinkType, Noted, RawRecord, ReadErrorKind, MAX_PCAP_RECORD,
};

/// Byte positions in the pcap file header and record headers.
mod field {
    pub const MAGIC: usize = 0;
    pub const VERSION_MAJOR: usize = 4;
    pub const VERSION_MINOR: usize = 6;
    pub const SNAPLEN: usize = 16;
    pub const LINKTYPE: usize = 20;
    pub const FILE_HEADER_LEN: usize = 24;

    pub const TS_SEC: usize = 0;
    pub const TS_FRAC: usize = 4;
    pub const CAPLEN: usize = 8;
    pub const ORIG_LEN: usize = 12;
    pub const RECORD_HEADER_LEN: usize = 16;
    /// Kuznetsov's header adds ifindex (4), protocol (2), pkt_type (1), pad (1).
    pub const MODIFIED_RECORD_HEADER_LEN: usize = 24;
}

/// The minor version every libpcap since 0.4 writes (with major 2).
const VERSION_MINOR: u16 = 4;

/// Magic numbers as read little-endian.
const MAGIC_US: u32 = 0xa1b2_c3d4;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const MAGIC_MODIFIED: u32 = 0xa1b2_cd34;

/// What the magic number says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PcapKind {
    pub order: ByteOrder,
    pub nanos: bool,
    pub modified: bool,
}

/// Recognises a pcap magic in the first four bytes.
pub(crate) fn sniff(first: &[u8]) -> Option<PcapKind> {
    let le = read_u32(first, field::MAGIC, ByteOrder::Little)?;
    let kind = |order, nanos, modified| Some(PcapKind { order, nanos, modified });
    match (le, le.swap_bytes()) {
        (MAGIC_US, _) => kind(ByteOrder::Little, false, false),
        (_, MAGIC_US) => kind(ByteOrder::Big, false, false),
        (MAGIC_NS, _) => kind(ByteOrder::Little, true, false),
        (_, MAGIC_NS) => kind(ByteOrder::Big, true, false),
        (MAGIC_MODIFIED, _) => kind(ByteOrder::Little, false, true),
        (_, MAGIC_MODIFIED) => kind(ByteOrder::Big, false, true),
        _ => None,
    }
}

/// Reads a whole pcap stream. Errors only for an unusable file header.
pub(crate) fn read(
    feeder: &mut Feeder<'_>,
    ctx: &mut Ctx<'_>,
    kind: PcapKind,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<(), ReadErrorKind> {
    let bo = kind.order;
    let avail = feeder.fill(field::FILE_HEADER_LEN);
    let head = feeder.window();
    if avail < field::FILE_HEADER_LEN {
        return Err(ReadErrorKind::BadHeader {
            what: format!("pcap file header is cut short: {avail} of {} bytes", field::FILE_HEADER_LEN),
        });
    }
    let major = read_u16(head, field::VERSION_MAJOR, bo).unwrap_or(0);
    let minor = read_u16(head, field::VERSION_MINOR, bo).unwrap_or(0);
    if major != 2 {
        return Err(ReadErrorKind::BadHeader {
            what: format!("pcap version {major}.{minor} is not supported (only 2.x is)"),
        });
    }
    if minor != VERSION_MINOR {
        ctx.warn(
            None,
            Some(0),
            format!("the file header says pcap version {major}.{minor}; tcpdump and libpcap write 2.{VERSION_MINOR}"),
            format!("read it as version 2.{VERSION_MINOR}"),
        );
    }
    let snaplen = read_u32(head, field::SNAPLEN, bo).unwrap_or(0);
    let link_type = LinkType::from_u32(read_u32(head, field::LINKTYPE, bo).unwrap_or(0));
    ctx.info.format = if kind.modified { Format::PcapModified } else { Format::Pcap };
    ctx.info.byte_order = bo;
    ctx.info.interfaces.push(InterfaceInfo {
        link_type,
        snaplen,
        ts_resolution: if kind.nanos { "ns" } else { "us" }.to_string(),
        ts_offset_s: 0,
        name: None,
        packets: 0,
    });
    feeder.consume(field::FILE_HEADER_LEN);

    let mut st = Resume { kind, link_type, packets: 0 };
    read_records(feeder, ctx, &mut st, on_record);
    Ok(())
}

/// Where the record walk stands: enough to resume it at a record boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resume {
    kind: PcapKind,
    link_type: LinkType,
    /// Records before this point.
    packets: u64,
}

impl Resume {
    /// Records before this point.
    pub(crate) fn packets(&self) -> u64 {
        self.packets
    }
}

/// Walks records from the feeder's position to the end (or the first damage).
pub(crate) fn read_records(
    feeder: &mut Feeder<'_>,
    ctx: &mut Ctx<'_>,
    st: &mut Resume,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) {
    let kind = st.kind;
    let bo = kind.order;
    let link_type = st.link_type;
    let snaplen = ctx.info.interfaces.first().map_or(0, |i| i.snaplen);
    let hdr_len = if kind.modified { field::MODIFIED_RECORD_HEADER_LEN } else { field::RECORD_HEADER_LEN };
    let (frac_unit_ns, frac_limit): (i64, u32) =
        if kind.nanos { (1, 1_000_000_000) } else { (1_000, 1_000_000) };
    // First record whose fraction field is out of range, and how many there were.
    let mut bad_frac: Option<(u64, u64, u32)> = None;
    let mut bad_frac_count: u64 = 0;

    loop {
        let offset = feeder.offset();
        if ctx.wants_cut(offset) {
            ctx.cut(offset, super::Resume::Pcap(st.clone()));
        }
        let avail = feeder.fill(hdr_len);
        if avail == 0 {
            break;
        }
        let record = st.packets + 1;
        if avail < hdr_len {
            ctx.cut_short(feeder, Some(record), offset, "record header", hdr_len, avail, false);
            break;
        }
        let hdr = feeder.window();
        let (Some(ts_sec), Some(ts_frac), Some(caplen), Some(orig_len)) = (
            read_u32(hdr, field::TS_SEC, bo),
            read_u32(hdr, field::TS_FRAC, bo),
            read_u32(hdr, field::CAPLEN, bo),
            read_u32(hdr, field::ORIG_LEN, bo),
        ) else {
            break; // unreachable: `avail >= hdr_len` was checked
        };
        if caplen > MAX_PCAP_RECORD {
            ctx.over_cap(Some(record), offset, "captured length", caplen, MAX_PCAP_RECORD);
            break;
        }
        let need = hdr_len + caplen as usize;
        let avail = feeder.fill(need);
        if avail < need {
            ctx.cut_short(feeder, Some(record), offset, "record", caplen as usize, avail - hdr_len, true);
            break;
        }
        if ts_frac >= frac_limit {
            bad_frac_count += 1;
            bad_frac.get_or_insert((record, offset, ts_frac));
        }
        let ts_ns = i64::from(ts_sec)
            .saturating_mul(1_000_000_000)
            .saturating_add(i64::from(ts_frac).saturating_mul(frac_unit_ns));
        ctx.odd.note(Noted {
            record,
            byte_offset: offset,
            interface: 0,
            ts_ns,
            caplen: caplen as usize,
            snaplen,
            orig_len,
        });
        let data = feeder.window().get(hdr_len..need).unwrap_or(&[]);
        on_record(&RawRecord { ts_ns, interface: 0, link_type, data, orig_len, record, byte_offset: offset });
        st.packets = record;
        ctx.info.packets += 1;
        if let Some(iface) = ctx.info.interfaces.first_mut() {
            iface.packets += 1;
        }
        feeder.consume(need);
    }

    if let Some((record, offset, frac)) = bad_frac {
        let unit = if kind.nanos { "ns" } else { "µs" };
        ctx.warn(
            Some(record),
            Some(offset),
            format!(
                "timestamp fraction {frac} {unit} is not below one second ({bad_frac_count} such records in all)"
            ),
            "carried the excess into the seconds".to_string(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{read_bytes, ReadErrorKind};

    // pcap µs little-endian header, snaplen 65535, LINKTYPE_RAW (101)
    const LE_US_RAW_HEADER: [u8; 24] = [
        0xd4, 0xc3, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x00, 0x00, 101,
        0, 0, 0,
    ];
    // record: ts 1700000000.123456, caplen 4, orig 60, then 4 data bytes (45 00 00 3c)
    const LE_RECORD: [u8; 20] =
        [0x00, 0xf1, 0x53, 0x65, 0x40, 0xe2, 0x01, 0x00, 4, 0, 0, 0, 60, 0, 0, 0, 0x45, 0x00, 0x00, 0x3c];

    /// (ts_ns, interface, data, record, byte_offset, orig_len)
    type Rec = (i64, u32, Vec<u8>, u64, u64, u32);

    fn collect(bytes: &[u8]) -> (Vec<Rec>, super::super::CaptureInfo) {
        let mut out = Vec::new();
        let info = read_bytes("t", bytes, &mut |r| {
            out.push((r.ts_ns, r.interface, r.data.to_vec(), r.record, r.byte_offset, r.orig_len))
        })
        .expect("reads");
        (out, info)
    }

    #[test]
    fn sniff_knows_all_six_magics() {
        assert_eq!(
            sniff(&[0xd4, 0xc3, 0xb2, 0xa1]).map(|k| (k.order, k.nanos)),
            Some((ByteOrder::Little, false))
        );
        assert_eq!(
            sniff(&[0xa1, 0xb2, 0xc3, 0xd4]).map(|k| (k.order, k.nanos)),
            Some((ByteOrder::Big, false))
        );
        assert_eq!(
            sniff(&[0x4d, 0x3c, 0xb2, 0xa1]).map(|k| (k.order, k.nanos)),
            Some((ByteOrder::Little, true))
        );
        assert_eq!(
            sniff(&[0xa1, 0xb2, 0x3c, 0x4d]).map(|k| (k.order, k.nanos)),
            Some((ByteOrder::Big, true))
        );
        assert_eq!(
            sniff(&[0x34, 0xcd, 0xb2, 0xa1]).map(|k| (k.order, k.modified)),
            Some((ByteOrder::Little, true))
        );
        assert_eq!(
            sniff(&[0xa1, 0xb2, 0xcd, 0x34]).map(|k| (k.order, k.modified)),
            Some((ByteOrder::Big, true))
        );
        assert_eq!(sniff(&[0x0a, 0x0d, 0x0d, 0x0a]), None);
        assert_eq!(sniff(&[0xd4, 0xc3]), None);
    }

    #[test]
    fn one_record_gives_timestamp_offset_and_data() {
        let mut bytes = LE_US_RAW_HEADER.to_vec();
        bytes.extend_from_slice(&LE_RECORD);
        let (recs, info) = collect(&bytes);
        assert_eq!(recs, vec![(1_700_000_000_123_456_000, 0, vec![0x45, 0, 0, 0x3c], 1, 24, 60)]);
        assert_eq!(info.format, Format::Pcap);
        assert_eq!(info.interfaces[0].link_type, LinkType::RawIp);
        assert_eq!(info.interfaces[0].snaplen, 65535);
        assert_eq!(info.interfaces[0].packets, 1);
        assert_eq!(info.bytes, 44);
        assert!(info.warnings.is_empty());
    }

    #[test]
    fn truncated_last_record_is_a_warning_with_position() {
        let mut bytes = LE_US_RAW_HEADER.to_vec();
        bytes.extend_from_slice(&LE_RECORD);
        bytes.extend_from_slice(&LE_RECORD[..18]); // header + 2 of 4 data bytes
        let (recs, info) = collect(&bytes);
        assert_eq!(recs.len(), 1);
        assert_eq!(info.warnings.len(), 1);
        let w = &info.warnings[0];
        assert_eq!((w.record, w.byte_offset), (Some(2), Some(44)));
        assert!(w.problem.contains("header says 4 bytes, the file ends after 2"), "{}", w.problem);
        assert_eq!(w.consequence, "dropped it, kept the 1 record before it");
    }

    #[test]
    fn garbage_caplen_stops_with_a_warning() {
        let mut bytes = LE_US_RAW_HEADER.to_vec();
        let mut rec = LE_RECORD;
        rec[8..12].copy_from_slice(&0xc000_0000u32.to_le_bytes());
        bytes.extend_from_slice(&rec);
        let (recs, info) = collect(&bytes);
        assert!(recs.is_empty());
        assert_eq!(info.warnings[0].record, Some(1));
        assert!(info.warnings[0].problem.contains("3221225472"), "{}", info.warnings[0].problem);
    }

    #[test]
    fn version_1_is_a_bad_header() {
        let mut bytes = LE_US_RAW_HEADER.to_vec();
        bytes[4] = 1;
        let err = read_bytes("t", &bytes, &mut |_| {}).unwrap_err();
        assert!(matches!(err.kind, ReadErrorKind::BadHeader { .. }), "{err}");
    }

    #[test]
    fn big_endian_nanosecond_fraction_overflow_is_carried() {
        // BE ns header, link type 1 with FCS bits set in the upper nibble
        let mut bytes =
            vec![0xa1, 0xb2, 0x3c, 0x4d, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 96, 0x10, 0, 0, 1];
        // ts 10 s + 1_500_000_000 ns, caplen 0, orig 0
        bytes.extend_from_slice(&[0, 0, 0, 10, 0x59, 0x68, 0x2f, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
        let (recs, info) = collect(&bytes);
        assert_eq!(recs[0].0, 11_500_000_000);
        assert_eq!(info.byte_order, ByteOrder::Big);
        assert_eq!(info.interfaces[0].link_type, LinkType::Ethernet);
        assert_eq!(info.interfaces[0].snaplen, 96);
        assert_eq!(info.warnings.len(), 1);
        assert!(info.warnings[0].problem.contains("1500000000 ns"), "{}", info.warnings[0].problem);
    }

    #[test]
    fn modified_magic_uses_24_byte_record_headers() {
        let mut bytes = LE_US_RAW_HEADER.to_vec();
        bytes[0] = 0x34;
        bytes[1] = 0xcd;
        bytes.extend_from_slice(&LE_RECORD[..16]);
        bytes.extend_from_slice(&[2, 0, 0, 0, 0x08, 0x00, 0, 0]); // ifindex 2, protocol, pkt_type, pad
        bytes.extend_from_slice(&LE_RECORD[16..]);
        let (recs, info) = collect(&bytes);
        assert_eq!(info.format, Format::PcapModified);
        assert_eq!(recs[0].2, vec![0x45, 0, 0, 0x3c]);
    }
}
