//! A small capture writer for tests: pcap (µs or ns, either byte order) and
//! pcapng (sections of interface description and enhanced packet blocks, either
//! byte order, any `if_tsresol`) built in memory from packets, plus the byte
//! range of every record so tests can cut or damage a capture exactly.

/// One packet to write. `ts_units` is in the interface's timestamp unit.
#[derive(Clone, Debug)]
pub struct Packet {
    pub interface: u32,
    pub ts_units: u64,
    pub data: Vec<u8>,
    pub orig_len: u32,
}

/// One pcapng interface.
#[derive(Clone, Debug)]
pub struct Iface {
    pub link_type: u16,
    pub snaplen: u32,
    /// `if_tsresol` (high bit: power of two), 6 (µs) when absent.
    pub tsresol: Option<u8>,
}

/// A written capture and where each packet record starts and ends.
#[derive(Clone, Debug)]
pub struct Written {
    pub bytes: Vec<u8>,
    /// `[start, end)` of each packet record (header included), in order.
    pub records: Vec<(usize, usize)>,
    /// Where the first packet record may start (after file header or header blocks).
    pub header_end: usize,
}

struct Out {
    big: bool,
    bytes: Vec<u8>,
}

impl Out {
    fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    fn pad4(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }
}

/// A pcap file: `ts_units` is `seconds * 10^6 + µs` (or `* 10^9 + ns` when `nanos`).
pub fn pcap(big: bool, nanos: bool, link_type: u32, snaplen: u32, packets: &[Packet]) -> Written {
    let mut o = Out { big, bytes: Vec::new() };
    o.u32(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    o.u16(2);
    o.u16(4);
    o.u32(0);
    o.u32(0);
    o.u32(snaplen);
    o.u32(link_type);
    let header_end = o.bytes.len();
    let per_s = if nanos { 1_000_000_000 } else { 1_000_000 };
    let mut records = Vec::new();
    for p in packets {
        let start = o.bytes.len();
        o.u32((p.ts_units / per_s) as u32);
        o.u32((p.ts_units % per_s) as u32);
        o.u32(p.data.len() as u32);
        o.u32(p.orig_len);
        o.bytes.extend_from_slice(&p.data);
        records.push((start, o.bytes.len()));
    }
    Written { bytes: o.bytes, records, header_end }
}

/// A pcapng file with `sections` sections, each describing all of `ifaces`
/// (so a packet's global interface is `section * ifaces.len() + interface`);
/// packet `i` goes to section `i * sections / packets.len()`.
pub fn pcapng(big: bool, sections: usize, ifaces: &[Iface], packets: &[Packet]) -> Written {
    let mut o = Out { big, bytes: Vec::new() };
    let mut records = Vec::new();
    let mut header_end = 0;
    let sections = sections.max(1);
    for s in 0..sections {
        let from = s * packets.len() / sections;
        let to = (s + 1) * packets.len() / sections;
        block(&mut o, 0x0a0d_0d0a, |o| {
            o.u32(0x1a2b_3c4d);
            o.u16(1);
            o.u16(0);
            o.u32(0xffff_ffff);
            o.u32(0xffff_ffff);
        });
        for i in ifaces {
            block(&mut o, 1, |o| {
                o.u16(i.link_type);
                o.u16(0);
                o.u32(i.snaplen);
                if let Some(r) = i.tsresol {
                    o.u16(9);
                    o.u16(1);
                    o.bytes.push(r);
                    o.pad4();
                    o.u16(0);
                    o.u16(0);
                }
            });
        }
        if s == 0 {
            header_end = o.bytes.len();
        }
        for p in &packets[from..to] {
            let start = o.bytes.len();
            block(&mut o, 6, |o| {
                o.u32(p.interface);
                o.u32((p.ts_units >> 32) as u32);
                o.u32(p.ts_units as u32);
                o.u32(p.data.len() as u32);
                o.u32(p.orig_len);
                o.bytes.extend_from_slice(&p.data);
                o.pad4();
            });
            records.push((start, o.bytes.len()));
        }
    }
    Written { bytes: o.bytes, records, header_end }
}

/// Writes one block: type, length, body, length.
fn block(o: &mut Out, btype: u32, body: impl FnOnce(&mut Out)) {
    let start = o.bytes.len();
    o.u32(btype);
    o.u32(0);
    body(o);
    o.pad4();
    let len = (o.bytes.len() - start + 4) as u32;
    o.u32(len);
    let l = if o.big { len.to_be_bytes() } else { len.to_le_bytes() };
    o.bytes[start + 4..start + 8].copy_from_slice(&l);
}

/// UTC ns of `units` in resolution `tsresol` (the pcapng spec, computed here
/// independently of the reader: 10^-v s, or 2^-v s with the high bit).
pub fn units_to_ns(units: u64, tsresol: u8) -> i64 {
    let v = u32::from(tsresol & 0x7f);
    let ns = if tsresol & 0x80 != 0 {
        (u128::from(units) * 1_000_000_000) >> v
    } else if v <= 9 {
        u128::from(units) * 10u128.pow(9 - v)
    } else {
        u128::from(units) / 10u128.pow(v - 9)
    };
    i64::try_from(ns).unwrap_or(i64::MAX)
}
