//! pcapng framing: sections in either byte order, interface description blocks
//! (`if_tsresol` powers of ten and of two, `if_tsoffset`, `if_name`, snaplen),
//! enhanced, simple and obsolete packet blocks; other blocks are skipped. Sections
//! of version 1.x are read (one warning for the first that is not 1.0); a later
//! section of another major version is skipped with a warning. Takes a
//! `Feeder` positioned at the first section header block; gives each packet to the
//! callback with interfaces numbered across sections in file order. Block lengths
//! are checked against `MAX_PCAPNG_BLOCK` before the block is buffered; options are
//! walked with bounds checks. Never decodes packets, never allocates per record.

use super::feeder::Feeder;
use super::{read_u16, read_u32, read_u64};
use super::{
    ByteOrder, Ctx, Format, InterfaceInfo, LinkType, Noted, RawRecord, ReadErrorKind, MAX_PCAPNG_BLOCK,
};

/// Block types.
const BT_SHB: u32 = 0x0a0d_0d0a;
const BT_IDB: u32 = 0x0000_0001;
const BT_PB: u32 = 0x0000_0002;
const BT_SPB: u32 = 0x0000_0003;
const BT_EPB: u32 = 0x0000_0006;

/// Byte-order magic of the section header block, as written.
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// Option codes.
const OPT_ENDOFOPT: u16 = 0;
const OPT_IF_NAME: u16 = 2;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;

/// Byte positions in blocks. Body offsets are relative to the block body (after
/// type and length).
mod field {
    pub const BLOCK_TYPE: usize = 0;
    pub const BLOCK_LEN: usize = 4;
    pub const BODY: usize = 8;
    /// Type + length + trailing length.
    pub const BLOCK_OVERHEAD: usize = 12;

    // SHB, from the block start
    pub const SHB_BYTE_ORDER: usize = 8;
    pub const SHB_MIN_LEN: usize = 28;
    // SHB body
    pub const SHB_MAJOR: usize = 4;
    pub const SHB_MINOR: usize = 6;

    // IDB body
    pub const IDB_LINKTYPE: usize = 0;
    pub const IDB_SNAPLEN: usize = 4;
    pub const IDB_OPTIONS: usize = 8;

    // EPB body
    pub const EPB_INTERFACE: usize = 0;
    pub const EPB_TS_HIGH: usize = 4;
    pub const EPB_TS_LOW: usize = 8;
    pub const EPB_CAPLEN: usize = 12;
    pub const EPB_ORIG_LEN: usize = 16;
    pub const EPB_DATA: usize = 20;

    // obsolete PB body: 16-bit interface id and drops count, then as EPB
    pub const PB_INTERFACE: usize = 0;

    // SPB body
    pub const SPB_ORIG_LEN: usize = 0;
    pub const SPB_DATA: usize = 4;

    // option header
    pub const OPT_CODE: usize = 0;
    pub const OPT_LEN: usize = 2;
    pub const OPT_VALUE: usize = 4;
}

/// True for the section header block's type, which reads the same in both orders.
pub(crate) fn sniff(first: &[u8]) -> bool {
    read_u32(first, field::BLOCK_TYPE, ByteOrder::Little) == Some(BT_SHB)
}

/// How an interface's timestamp units become UTC ns: `(units * mul >> shift) / div + offset_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Clock {
    mul: i128,
    shift: u32,
    div: i128,
    offset_ns: i128,
}

impl Clock {
    /// From `if_tsresol` (high bit set: 2^-v s, else 10^-v s) and `if_tsoffset` (s).
    fn new(tsresol: u8, tsoffset_s: i64) -> Clock {
        let v = u32::from(tsresol & 0x7f);
        let offset_ns = i128::from(tsoffset_s) * 1_000_000_000;
        if tsresol & 0x80 != 0 {
            // 1e9 * units < 2^94, so shifts past 127 and beyond give 0 anyway.
            Clock { mul: 1_000_000_000, shift: v.min(127), div: 1, offset_ns }
        } else if v <= 9 {
            Clock { mul: 10i128.pow(9 - v), shift: 0, div: 1, offset_ns }
        } else {
            Clock { mul: 1, shift: 0, div: 10i128.checked_pow(v - 9).unwrap_or(i128::MAX), offset_ns }
        }
    }

    #[inline]
    fn to_ns(self, units: u64) -> i64 {
        let ns = ((i128::from(units) * self.mul) >> self.shift) / self.div + self.offset_ns;
        ns.clamp(i128::from(super::EARLIEST_NS), i128::from(i64::MAX)) as i64
    }
}

/// Human form of `if_tsresol` for `InterfaceInfo::ts_resolution`.
fn resolution_name(tsresol: u8) -> String {
    let v = tsresol & 0x7f;
    if tsresol & 0x80 != 0 {
        return format!("2^-{v} s");
    }
    match v {
        0 => "s".into(),
        3 => "ms".into(),
        6 => "us".into(),
        9 => "ns".into(),
        _ => format!("10^-{v} s"),
    }
}

/// One interface as the reader needs it per record.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Iface {
    link_type: LinkType,
    snaplen: u32,
    clock: Clock,
}

/// Walks an options area, calling `f(code, value)` until `opt_endofopt` or the end.
/// Err names the first option that overruns the area.
fn walk_options(opts: &[u8], bo: ByteOrder, mut f: impl FnMut(u16, &[u8])) -> Result<(), String> {
    let mut at = 0usize;
    while let (Some(code), Some(len)) =
        (read_u16(opts, at + field::OPT_CODE, bo), read_u16(opts, at + field::OPT_LEN, bo))
    {
        if code == OPT_ENDOFOPT {
            return Ok(());
        }
        let start = at + field::OPT_VALUE;
        let Some(value) = opts.get(start..start + usize::from(len)) else {
            return Err(format!(
                "option {code} says {len} bytes, only {} are left in the block",
                opts.len().saturating_sub(start)
            ));
        };
        f(code, value);
        at = start + usize::from(len).div_ceil(4) * 4;
    }
    Ok(())
}

/// Reading state across blocks: enough to resume the walk at a block boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct State {
    /// No section header read yet: an unusable block is a `BadHeader`.
    first: bool,
    /// Byte order of the current section.
    bo: ByteOrder,
    /// Global interface index of each interface of the current section.
    section_ifaces: Vec<u32>,
    /// Per global interface.
    ifaces: Vec<Iface>,
    /// Blocks are skipped until the next section header (unknown version).
    skip_section: bool,
    /// A section of version 1.x other than 1.0 was warned about.
    minor_warned: bool,
    /// Packet blocks seen (the record number of the last one).
    records: u64,
    /// Timestamp of the last packet, for simple packet blocks.
    last_ts_ns: i64,
}

impl State {
    /// Packet blocks before this point.
    pub(crate) fn records(&self) -> u64 {
        self.records
    }
}

/// Reads a whole pcapng stream. Errors only when the first section header is unusable.
pub(crate) fn read(
    feeder: &mut Feeder<'_>,
    ctx: &mut Ctx<'_>,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<(), ReadErrorKind> {
    ctx.info.format = Format::Pcapng;
    let mut st = State {
        first: true,
        bo: ByteOrder::Little,
        section_ifaces: Vec::new(),
        ifaces: Vec::new(),
        skip_section: false,
        minor_warned: false,
        records: 0,
        last_ts_ns: 0,
    };
    read_blocks(feeder, ctx, &mut st, on_record)
}

/// Walks blocks from the feeder's position to the end (or the first damage).
pub(crate) fn read_blocks(
    feeder: &mut Feeder<'_>,
    ctx: &mut Ctx<'_>,
    st: &mut State,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<(), ReadErrorKind> {
    loop {
        let offset = feeder.offset();
        if ctx.wants_cut(offset) {
            ctx.cut(offset, super::Resume::Pcapng(st.clone()));
        }
        let first = st.first;
        let avail = feeder.fill(field::SHB_BYTE_ORDER + 4);
        if avail == 0 {
            break;
        }
        let bad = |what: String| ReadErrorKind::BadHeader { what };
        let win = feeder.window();
        let Some(raw_type) = read_u32(win, field::BLOCK_TYPE, ByteOrder::Little).filter(|_| avail >= 8)
        else {
            if first {
                return Err(bad(format!("pcapng section header is cut short: {avail} bytes")));
            }
            // With its type readable, a cut-short packet block still gets its number.
            let packet =
                read_u32(win, field::BLOCK_TYPE, st.bo).filter(|t| matches!(*t, BT_EPB | BT_SPB | BT_PB));
            let record = packet.map(|_| st.records + 1);
            let what = if record.is_some() { "record header" } else { "block header" };
            ctx.cut_short(feeder, record, offset, what, 8, avail, false);
            break;
        };
        if raw_type == BT_SHB {
            let order = match read_u32(win, field::SHB_BYTE_ORDER, ByteOrder::Little) {
                Some(BYTE_ORDER_MAGIC) => Some(ByteOrder::Little),
                Some(m) if m.swap_bytes() == BYTE_ORDER_MAGIC => Some(ByteOrder::Big),
                _ => None,
            };
            let Some(order) = order else {
                // fill() gives fewer bytes only at the end of the file
                let rest = win.get(field::SHB_BYTE_ORDER..avail.min(win.len())).unwrap_or(&[]);
                let hex: Vec<String> = rest.iter().take(4).map(|b| format!("{b:02x}")).collect();
                let found = match hex.len() {
                    4 => hex.join(" "),
                    0 => "the end of the file".to_string(),
                    n => format!("only {} ({n} of its 4 bytes), then the end of the file", hex.join(" ")),
                };
                let what = format!(
                    "section header block has no byte-order magic: expected 1a2b3c4d or 4d3c2b1a, found {found}"
                );
                if first {
                    return Err(bad(what));
                }
                ctx.stop(None, offset, what);
                break;
            };
            st.bo = order;
            if first {
                ctx.info.byte_order = order;
            }
        }
        let bo = st.bo;
        let btype = read_u32(win, field::BLOCK_TYPE, bo).unwrap_or(0);
        let len32 = read_u32(win, field::BLOCK_LEN, bo).unwrap_or(0);
        let is_packet = matches!(btype, BT_EPB | BT_SPB | BT_PB);
        let record = is_packet.then_some(st.records + 1);
        let min_len = if btype == BT_SHB { field::SHB_MIN_LEN } else { field::BLOCK_OVERHEAD };
        if (len32 as usize) < min_len || !len32.is_multiple_of(4) {
            let what =
                format!("block length {len32} is impossible: expected a multiple of 4, at least {min_len}");
            if first {
                return Err(bad(format!("pcapng section header: {what}")));
            }
            ctx.stop(record, offset, what);
            break;
        }
        if len32 > MAX_PCAPNG_BLOCK {
            if first {
                return Err(bad(format!(
                    "pcapng section header: block length {len32} exceeds the {MAX_PCAPNG_BLOCK}-byte cap"
                )));
            }
            ctx.over_cap(record, offset, "block length", len32, MAX_PCAPNG_BLOCK);
            break;
        }
        let len = len32 as usize;
        let avail = feeder.fill(len);
        if avail < len {
            if first {
                return Err(bad(format!("pcapng section header is cut short: {avail} of {len} bytes")));
            }
            let what = if is_packet { "record" } else { "block" };
            ctx.cut_short(feeder, record, offset, what, len, avail, true);
            break;
        }
        let block = feeder.window().get(..len).unwrap_or(&[]);
        let trailer = read_u32(block, len - 4, bo).unwrap_or(0);
        if trailer != len32 {
            let what = format!("block length {len32} at its start and {trailer} at its end disagree");
            if first {
                return Err(bad(format!("pcapng section header: {what}")));
            }
            ctx.stop(record, offset, what);
            break;
        }
        let body = block.get(field::BODY..len - 4).unwrap_or(&[]);
        match btype {
            BT_SHB => {
                let major = read_u16(body, field::SHB_MAJOR, bo).unwrap_or(0);
                let minor = read_u16(body, field::SHB_MINOR, bo).unwrap_or(0);
                if major != 1 {
                    if first {
                        return Err(bad(format!(
                            "pcapng version {major}.{minor} is not supported (only 1.x is)"
                        )));
                    }
                    ctx.warn(
                        None,
                        Some(offset),
                        format!("this section has pcapng version {major}.{minor}; only version 1 sections can be read"),
                        "skipped its blocks up to the next section header".to_string(),
                    );
                    st.skip_section = true;
                } else {
                    if minor != 0 && !st.minor_warned {
                        st.minor_warned = true;
                        ctx.warn(
                            None,
                            Some(offset),
                            format!("this section has pcapng version 1.{minor}; the format defines only 1.0"),
                            "read it, and any later such section, as version 1.0".to_string(),
                        );
                    }
                    st.skip_section = false;
                }
                st.section_ifaces.clear();
                st.first = false;
            }
            _ if st.skip_section && is_packet => st.records += 1,
            _ if st.skip_section => {}
            BT_IDB => interface(ctx, st, body, offset),
            BT_EPB | BT_PB | BT_SPB => {
                st.records += 1;
                packet(ctx, st, btype, body, offset, on_record);
            }
            _ => {}
        }
        feeder.consume(len);
    }
    Ok(())
}

/// An interface description block: registers the next global interface.
fn interface(ctx: &mut Ctx<'_>, st: &mut State, body: &[u8], offset: u64) {
    let bo = st.bo;
    let global = st.ifaces.len() as u32;
    let (link_raw, snaplen) = match (
        read_u16(body, field::IDB_LINKTYPE, bo),
        read_u32(body, field::IDB_SNAPLEN, bo),
    ) {
        (Some(l), Some(s)) => (u32::from(l), s),
        _ => {
            ctx.warn(
                    None,
                    Some(offset),
                    format!(
                        "interface {global}'s description block is too short: expected at least 8 body bytes, found {}",
                        body.len()
                    ),
                    "its packets are skipped".to_string(),
                );
            (0xffff, 0)
        }
    };
    let mut tsresol = 6u8;
    let mut tsoffset_s = 0i64;
    let mut name = None;
    let opts = body.get(field::IDB_OPTIONS..).unwrap_or(&[]);
    let walked = walk_options(opts, bo, |code, value| match code {
        OPT_IF_NAME => name = Some(String::from_utf8_lossy(value).trim_end_matches('\0').to_string()),
        OPT_IF_TSRESOL => {
            if let Some(&r) = value.first() {
                tsresol = r;
            }
        }
        OPT_IF_TSOFFSET => {
            if let Some(o) = read_u64(value, 0, bo) {
                tsoffset_s = o as i64;
            }
        }
        _ => {}
    });
    if let Err(what) = walked {
        ctx.warn(
            None,
            Some(offset),
            format!("interface {global}'s options are malformed: {what}"),
            "used the options before it".to_string(),
        );
    }
    let link_type = LinkType::from_u32(link_raw);
    st.section_ifaces.push(global);
    st.ifaces.push(Iface { link_type, snaplen, clock: Clock::new(tsresol, tsoffset_s) });
    ctx.info.interfaces.push(InterfaceInfo {
        link_type,
        snaplen,
        ts_resolution: resolution_name(tsresol),
        ts_offset_s: tsoffset_s,
        name,
        packets: 0,
    });
}

/// An EPB, obsolete PB or SPB: yields its packet, or warns and skips it.
fn packet(
    ctx: &mut Ctx<'_>,
    st: &mut State,
    btype: u32,
    body: &[u8],
    offset: u64,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) {
    let bo = st.bo;
    let record = st.records;
    let fields = if btype == BT_SPB {
        read_u32(body, field::SPB_ORIG_LEN, bo).map(|orig| (0, None, orig, orig, field::SPB_DATA))
    } else {
        let local = if btype == BT_PB {
            read_u16(body, field::PB_INTERFACE, bo).map(u32::from)
        } else {
            read_u32(body, field::EPB_INTERFACE, bo)
        };
        match (
            local,
            read_u32(body, field::EPB_TS_HIGH, bo),
            read_u32(body, field::EPB_TS_LOW, bo),
            read_u32(body, field::EPB_CAPLEN, bo),
            read_u32(body, field::EPB_ORIG_LEN, bo),
        ) {
            (Some(l), Some(hi), Some(lo), Some(cap), Some(orig)) => {
                Some((l, Some(u64::from(hi) << 32 | u64::from(lo)), cap, orig, field::EPB_DATA))
            }
            _ => None,
        }
    };
    let Some((local, units, caplen, orig_len, data_at)) = fields else {
        let needed = if btype == BT_SPB { field::SPB_DATA } else { field::EPB_DATA };
        ctx.skip_record(
            record,
            offset,
            format!("packet block is too short: expected at least {needed} body bytes, found {}", body.len()),
        );
        return;
    };
    let Some(&global) = st.section_ifaces.get(local as usize) else {
        ctx.skip_record(
            record,
            offset,
            format!(
                "packet refers to interface {local}, but its section describes {}",
                st.section_ifaces.len()
            ),
        );
        return;
    };
    let Some(iface) = st.ifaces.get(global as usize) else { return };
    let room = body.len().saturating_sub(data_at);
    let caplen = if btype == BT_SPB {
        // SPB: the captured length is implied by the block and the snaplen.
        let mut c = (caplen as usize).min(room);
        if iface.snaplen != 0 {
            c = c.min(iface.snaplen as usize);
        }
        c
    } else if caplen as usize > room {
        ctx.skip_record(
            record,
            offset,
            format!("captured length {caplen} exceeds the {room} data bytes its block holds"),
        );
        return;
    } else {
        caplen as usize
    };
    let ts_ns = match units {
        Some(u) => {
            let ts = iface.clock.to_ns(u);
            if ts == i64::MAX || ts == super::EARLIEST_NS {
                ctx.timestamp_out_of_range(record, offset);
            }
            ts
        }
        None => st.last_ts_ns,
    };
    st.last_ts_ns = ts_ns;
    let snaplen = if btype == BT_SPB { 0 } else { iface.snaplen };
    ctx.odd.note(Noted { record, byte_offset: offset, interface: global, ts_ns, caplen, snaplen, orig_len });
    let data = body.get(data_at..data_at + caplen).unwrap_or(&[]);
    on_record(&RawRecord {
        ts_ns,
        interface: global,
        link_type: iface.link_type,
        data,
        orig_len,
        record,
        byte_offset: offset,
    });
    ctx.info.packets += 1;
    if let Some(info) = ctx.info.interfaces.get_mut(global as usize) {
        info.packets += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{read_bytes, CaptureInfo};

    /// Builds a block with `body` in byte order `bo`.
    fn block(bo: ByteOrder, btype: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + body.len()).div_ceil(4) * 4;
        let u32b = |v: u32| if bo == ByteOrder::Little { v.to_le_bytes() } else { v.to_be_bytes() };
        let mut b = u32b(btype).to_vec();
        b.extend_from_slice(&u32b(len as u32));
        b.extend_from_slice(body);
        b.resize(len - 4, 0);
        b.extend_from_slice(&u32b(len as u32));
        b
    }

    // SHB body: byte-order magic, version 1.0, section length -1
    fn shb(bo: ByteOrder) -> Vec<u8> {
        let mut body = match bo {
            ByteOrder::Little => BYTE_ORDER_MAGIC.to_le_bytes().to_vec(),
            ByteOrder::Big => BYTE_ORDER_MAGIC.to_be_bytes().to_vec(),
        };
        body.extend_from_slice(if bo == ByteOrder::Little { &[1, 0, 0, 0] } else { &[0, 1, 0, 0] });
        body.extend_from_slice(&[0xff; 8]);
        block(bo, BT_SHB, &body)
    }

    // little-endian IDB: link type, snaplen 0, then options
    fn idb_le(link: u16, opts: &[u8]) -> Vec<u8> {
        let mut body = link.to_le_bytes().to_vec();
        body.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        body.extend_from_slice(opts);
        block(ByteOrder::Little, BT_IDB, &body)
    }

    // little-endian EPB on interface `iface`, timestamp `units`, data `data`
    fn epb_le(iface: u32, units: u64, data: &[u8]) -> Vec<u8> {
        let mut body = iface.to_le_bytes().to_vec();
        body.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(units as u32).to_le_bytes());
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(data);
        block(ByteOrder::Little, BT_EPB, &body)
    }

    /// (ts_ns, interface, record, byte_offset, data length)
    type Rec = (i64, u32, u64, u64, usize);

    fn collect(bytes: &[u8]) -> (Vec<Rec>, CaptureInfo) {
        let mut out = Vec::new();
        let info = read_bytes("t", bytes, &mut |r| {
            out.push((r.ts_ns, r.interface, r.record, r.byte_offset, r.data.len()))
        })
        .expect("reads");
        (out, info)
    }

    #[test]
    fn clock_handles_powers_of_ten_and_two_and_offset() {
        assert_eq!(Clock::new(6, 0).to_ns(1_500_000), 1_500_000_000);
        assert_eq!(Clock::new(9, 0).to_ns(7), 7);
        assert_eq!(Clock::new(12, 0).to_ns(7_000), 7);
        assert_eq!(Clock::new(0x80 | 10, 0).to_ns(1024 + 512), 1_500_000_000);
        assert_eq!(Clock::new(6, 100).to_ns(1), 100_000_001_000);
        assert_eq!(Clock::new(127, 0).to_ns(u64::MAX), 0);
        assert_eq!(Clock::new(0xff, 0).to_ns(u64::MAX), 0);
        assert_eq!(Clock::new(0, i64::MAX).to_ns(u64::MAX), i64::MAX);
        assert_eq!(Clock::new(0, i64::MIN).to_ns(0), crate::read::EARLIEST_NS);
    }

    #[test]
    fn options_walk_stops_at_overrun() {
        // if_name "eth0", then an option claiming 200 bytes
        let opts = [2, 0, 4, 0, b'e', b't', b'h', b'0', 9, 0, 200, 0, 6];
        let mut seen = Vec::new();
        let r = walk_options(&opts, ByteOrder::Little, |c, v| seen.push((c, v.to_vec())));
        assert_eq!(seen, vec![(2, b"eth0".to_vec())]);
        assert!(r.unwrap_err().contains("200"));
    }

    #[test]
    fn two_interfaces_with_different_resolutions() {
        let mut f = shb(ByteOrder::Little);
        f.extend(idb_le(1, &[]));
        // if_tsresol 2^-10, if_tsoffset 1000 s
        let mut opts = vec![9, 0, 1, 0, 0x8a, 0, 0, 0, 14, 0, 8, 0];
        opts.extend_from_slice(&1000u64.to_le_bytes());
        opts.extend_from_slice(&[0, 0, 0, 0]);
        f.extend(idb_le(101, &opts));
        let epb_at = f.len() as u64;
        f.extend(epb_le(0, 2_000_001, &[1, 2, 3]));
        f.extend(epb_le(1, 2048, &[1, 2, 3, 4, 5]));
        let (recs, info) = collect(&f);
        assert_eq!(recs[0], (2_000_001_000, 0, 1, epb_at, 3));
        assert_eq!(recs[1].0, 1_002_000_000_000);
        assert_eq!((recs[1].1, recs[1].2, recs[1].4), (1, 2, 5));
        assert_eq!(info.interfaces[1].ts_resolution, "2^-10 s");
        assert_eq!(info.interfaces[1].ts_offset_s, 1000);
        assert_eq!(info.interfaces[1].link_type, LinkType::RawIp);
        assert_eq!(info.interfaces.iter().map(|i| i.packets).collect::<Vec<_>>(), vec![1, 1]);
    }

    #[test]
    fn unknown_interface_id_skips_the_record_with_a_warning() {
        let mut f = shb(ByteOrder::Little);
        f.extend(idb_le(1, &[]));
        let bad_at = f.len() as u64;
        f.extend(epb_le(5, 1, &[1]));
        f.extend(epb_le(0, 1, &[1]));
        let (recs, info) = collect(&f);
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].2, 2, "record numbers count the skipped block");
        assert_eq!(info.warnings[0].record, Some(1));
        assert_eq!(info.warnings[0].byte_offset, Some(bad_at));
        assert!(info.warnings[0].problem.contains("interface 5"));
    }

    #[test]
    fn trailer_mismatch_in_first_shb_is_a_bad_header() {
        let mut f = shb(ByteOrder::Little);
        let n = f.len();
        f[n - 4] = 0x30;
        assert!(matches!(
            read_bytes("t", &f, &mut |_| {}).unwrap_err().kind,
            ReadErrorKind::BadHeader { .. }
        ));
    }

    #[test]
    fn block_length_not_multiple_of_four_stops_later_blocks() {
        let mut f = shb(ByteOrder::Little);
        f.extend(idb_le(1, &[]));
        f.extend(epb_le(0, 1, &[1]));
        let at = f.len() as u64;
        let mut bad = epb_le(0, 1, &[1]);
        bad[4] = 33;
        f.extend(bad);
        let (recs, info) = collect(&f);
        assert_eq!(recs.len(), 1);
        assert_eq!((info.warnings[0].record, info.warnings[0].byte_offset), (Some(2), Some(at)));
    }
}
