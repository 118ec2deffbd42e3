//! `tuplecorr inspect`: what each capture holds, before any correlation — format,
//! byte order, interfaces with link types, snaplen and timestamp resolution,
//! packets, time range, counts by protocol, truncated and undecodable packets,
//! the busiest flows, and every warning.
//!
//! Takes capture specs; gives one `Inspection` per capture (each read by its own
//! rayon task through read → decode → flows) and writes them as an aligned table
//! or as JSON. serde_json is used here for the JSON form: inspect's output is its
//! own small contract (an array of `Inspection`), not the correlation report of
//! `report/`. Never correlates captures, never parses the command line (no clap),
//! never prints by itself: the writers take a `Write`, the caller prints errors.
//!
//! What the counts mean:
//! - `packets`: every packet record read, decodable or not (what capinfos reports).
//! - `protocols`: decoded IP packets by transport (`tcp`, `udp`, `icmp`, `icmpv6`,
//!   `other_ip`), `fragments` (later IP fragments: no transport header; a first
//!   fragment counts under its transport), plus `non_ip` (the link layer carries
//!   something else: ARP, LLDP, ...). `ipv4` and `ipv6` split the decoded packets
//!   by IP version.
//! - `undecodable`: records that gave no IP packet (`non_ip` included), with
//!   `undecodable_by_kind` saying why (`not-ip`, `unsupported-link-type`,
//!   `truncated-<layer>`, `malformed-<layer>`). So `tcp + udp + icmp + icmpv6 +
//!   other_ip + fragments + undecodable == packets`.
//! - `truncated`: decoded packets whose record ended before their headers said
//!   (snaplen or damage); they are also counted under their protocol.
//! - `first_time` / `last_time`: the earliest and latest record timestamps (file
//!   order need not be time order), RFC 3339 UTC with nanoseconds.

use crate::decode::{DecodeError, Fragment, Packet, Transport};
use crate::drive::ingest::{Ingested, Sink};
use crate::flows::FlowConfig;
use crate::flows::{Flow, FlowProto, FlowTable};
use crate::read::{ByteOrder, CaptureInfo, Progress, ReadError};
use crate::read::{CaptureSpec, ReadConfig};
use crate::time::rfc3339;
use crate::warning::Warning;
use rayon::prelude::*;
use serde::Serialize;
use std::io::{self, Write};

/// Flows listed per capture, busiest first.
pub const TOP_FLOWS: usize = 10;

/// What one capture holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inspection {
    /// Capture label (file name without capture/compression extensions, or `LABEL=`).
    pub label: String,
    /// File as given (`-` for standard input).
    pub file: String,
    /// `pcap`, `pcap-modified` or `pcapng`.
    pub format: String,
    /// `little-endian` or `big-endian` (pcapng: of the first section).
    pub byte_order: String,
    /// The file was gzip-compressed.
    pub gzip: bool,
    /// Timestamp resolution of the interfaces (`us`, `ns`, ...), distinct values in
    /// interface order joined by `, `; null without interfaces.
    pub ts_resolution: Option<String>,
    pub interfaces: Vec<InterfaceOut>,
    /// Every packet record read, decodable or not.
    pub packets: u64,
    /// Bytes of the (decompressed) capture stream read.
    pub bytes: u64,
    /// Earliest record timestamp, RFC 3339 UTC with ns; null without packets.
    pub first_time: Option<String>,
    /// Latest record timestamp, RFC 3339 UTC with ns; null without packets.
    pub last_time: Option<String>,
    /// `last_time - first_time` in seconds; null without packets.
    pub duration_s: Option<f64>,
    pub protocols: Protocols,
    /// Decoded packets cut short (snaplen or damage).
    pub truncated: u64,
    /// Records that gave no IP packet.
    pub undecodable: u64,
    pub undecodable_by_kind: Vec<UndecodableKind>,
    /// Overlays peeled off the packets (see the report's `captures[].overlays`);
    /// absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<crate::report::wire::OverlayOut>,
    /// Encrypted tunnel packets recognised by shape; absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub encrypted_tunnels: Vec<EncryptedOut>,
    /// Flows built from the decoded packets (TCP connections, UDP exchanges, ICMP echo sequences).
    pub flows: u64,
    /// The `TOP_FLOWS` flows with the most packets.
    pub top_flows: Vec<TopFlow>,
    pub warnings: Vec<WarningOut>,
}

/// One interface of a capture (pcap files have one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InterfaceOut {
    /// Interface index in the capture (pcapng: across sections, in file order).
    pub index: u32,
    /// `ethernet`, `raw`, `sll`, `sll2`, `null`, `ppp`, `nflog`, ...; a type
    /// not decoded has its registry name in lower case (`fddi`) or `unknown-N`.
    pub link_type: String,
    /// The LINKTYPE_* number.
    pub link_type_number: u32,
    /// False when tuplecorr does not decode this link type (its packets are skipped).
    pub decoded: bool,
    /// Largest record the capturer kept, bytes (pcapng: 0 means no limit).
    pub snaplen: u32,
    /// `us`, `ns`, `2^-20 s`, ...
    pub ts_resolution: String,
    /// pcapng `if_tsoffset`, seconds.
    pub ts_offset_s: i64,
    /// pcapng `if_name`.
    pub name: Option<String>,
    /// Packet records read on this interface.
    pub packets: u64,
}

/// Packets by protocol. See the module doc for what each count holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Protocols {
    pub tcp: u64,
    pub udp: u64,
    pub icmp: u64,
    pub icmpv6: u64,
    pub other_ip: u64,
    pub fragments: u64,
    pub non_ip: u64,
    pub ipv4: u64,
    pub ipv6: u64,
}

/// Undecodable records of one kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UndecodableKind {
    /// `not-ip`, `unsupported-link-type`, `truncated-<layer>`, `malformed-<layer>`.
    pub kind: String,
    pub packets: u64,
    /// Record number of the first one.
    pub first_record: u64,
    /// The decoder's message for the first one.
    pub example: String,
}

/// Encrypted tunnel packets of one kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EncryptedOut {
    /// `WireGuard`, `IPsec ESP` or `OpenVPN`.
    pub tunnel: String,
    pub packets: u64,
}

/// One of the busiest flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopFlow {
    /// `client -> server` (`ip:port`, `[v6]:port`; bare addresses for ICMP).
    pub flow: String,
    /// `tcp`, `udp` or `icmp`.
    pub proto: String,
    pub packets: u64,
    pub packets_to_server: u64,
    pub packets_to_client: u64,
    /// IP bytes both ways.
    pub bytes: u64,
    pub first_time: String,
    pub last_time: String,
}

/// A non-fatal problem met while reading the capture.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarningOut {
    pub label: String,
    pub file: String,
    /// 1-based record number, when the problem is tied to one.
    pub record: Option<u64>,
    /// Byte offset of that record in the (decompressed) stream.
    pub byte_offset: Option<u64>,
    /// What is wrong; what tuplecorr did about it.
    pub message: String,
}

impl From<&Warning> for WarningOut {
    fn from(w: &Warning) -> WarningOut {
        WarningOut {
            label: w.label.clone(),
            file: w.file.clone(),
            record: w.record,
            byte_offset: w.byte_offset,
            message: w.message(),
        }
    }
}

/// Inspects every capture, each in its own rayon task; results in the given order.
pub fn inspect_all(
    specs: &[CaptureSpec],
    flows: &FlowConfig,
    progress: &dyn Progress,
) -> Vec<Result<Inspection, ReadError>> {
    let read = ReadConfig::default();
    specs
        .par_iter()
        .enumerate()
        .map(|(i, spec)| inspect_with(spec, i, specs.len(), &read, flows, progress))
        .collect()
}

/// Inspects one capture (`index` names it to `progress`).
pub fn inspect_capture(
    spec: &CaptureSpec,
    index: usize,
    flows: &FlowConfig,
    progress: &dyn Progress,
) -> Result<Inspection, ReadError> {
    inspect_with(spec, index, 1, &ReadConfig::default(), flows, progress)
}

/// Inspects one of `captures` captures through the drivers' ingest path (`drive::ingest`)
/// (a large file is read in parallel chunks when threads are to spare).
pub fn inspect_with(
    spec: &CaptureSpec,
    index: usize,
    captures: usize,
    read: &ReadConfig,
    flows: &FlowConfig,
    progress: &dyn Progress,
) -> Result<Inspection, ReadError> {
    let mut tally = Tally::new(flows);
    let info = crate::drive::ingest::ingest(
        spec,
        index,
        read,
        captures,
        flows.payload_limit(),
        progress,
        &mut tally,
    )?;
    Ok(tally.finish(&spec.label, &spec.display_name(), info))
}

/// Inspects a capture held in memory (tests, fuzzing); `label` names it.
pub fn inspect_bytes(label: &str, bytes: &[u8], flows: &FlowConfig) -> Result<Inspection, ReadError> {
    let mut tally = Tally::new(flows);
    let info = crate::drive::ingest::ingest_bytes(label, bytes, &mut tally)?;
    Ok(tally.finish(label, label, info))
}

/// Counts gathered record by record; memory grows with flows, not packets.
struct Tally {
    table: FlowTable,
    protocols: Protocols,
    truncated: u64,
    undecodable: u64,
    kinds: Vec<UndecodableKind>,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    tunnels: crate::drive::tunnels::TunnelTally,
}

impl Sink for Tally {
    fn add(&mut self, rec: &Ingested<'_>) {
        self.first_ns = Some(self.first_ns.map_or(rec.ts_ns, |t| t.min(rec.ts_ns)));
        self.last_ns = Some(self.last_ns.map_or(rec.ts_ns, |t| t.max(rec.ts_ns)));
        match rec.packet {
            Ok(p) => {
                self.count(p);
                self.tunnels.note(p, rec.record, rec.byte_offset);
                self.table.insert(p, rec.payload);
            }
            Err(e) => self.undecodable(rec.record, e),
        }
    }
}

impl Tally {
    fn new(flows: &FlowConfig) -> Tally {
        Tally {
            table: FlowTable::new(flows),
            protocols: Protocols::default(),
            truncated: 0,
            undecodable: 0,
            kinds: Vec::new(),
            first_ns: None,
            last_ns: None,
            tunnels: Default::default(),
        }
    }

    fn count(&mut self, p: &Packet) {
        let c = &mut self.protocols;
        if p.src.is_ipv4() {
            c.ipv4 += 1;
        } else {
            c.ipv6 += 1;
        }
        if p.truncated {
            self.truncated += 1;
        }
        if p.fragment == Fragment::Later {
            c.fragments += 1;
            return;
        }
        match &p.transport {
            Transport::Tcp(_) => c.tcp += 1,
            Transport::Udp(_) => c.udp += 1,
            Transport::Icmp(i) if i.v6 => c.icmpv6 += 1,
            Transport::Icmp(_) => c.icmp += 1,
            Transport::Other { .. } => c.other_ip += 1,
        }
    }

    fn undecodable(&mut self, record: u64, e: &DecodeError) {
        self.undecodable += 1;
        let kind = match e {
            DecodeError::NotIp { .. } => {
                self.protocols.non_ip += 1;
                "not-ip".to_string()
            }
            DecodeError::UnsupportedLinkType => "unsupported-link-type".to_string(),
            DecodeError::Truncated { layer, .. } => format!("truncated-{layer}"),
            DecodeError::Malformed { layer, .. } => format!("malformed-{layer}"),
        };
        match self.kinds.iter_mut().find(|k| k.kind == kind) {
            Some(k) => k.packets += 1,
            None => self.kinds.push(UndecodableKind {
                kind,
                packets: 1,
                first_record: record,
                example: e.to_string(),
            }),
        }
    }

    fn finish(self, label: &str, file: &str, info: CaptureInfo) -> Inspection {
        let flows = self.table.finish();
        let mut warnings: Vec<WarningOut> = info.warnings.iter().map(WarningOut::from).collect();
        if let Some(mut w) =
            crate::drive::ingest::duplicate_flows_warning(label, file, flows.stats.duplicate_flows)
        {
            w.consequence = "each is counted once in flows and top flows".to_string();
            warnings.push(WarningOut::from(&w));
        }
        warnings.extend(self.tunnels.warnings(label, file).iter().map(WarningOut::from));
        let mut ranked: Vec<&Flow> = flows.flows.iter().collect();
        // Busiest first; ties in order of first packet (the table's order), so
        // the list is deterministic.
        ranked.sort_by_key(|f| std::cmp::Reverse(f.packets_to_server + f.packets_to_client));
        let top_flows = ranked.into_iter().take(TOP_FLOWS).map(top_flow).collect();
        let mut resolutions: Vec<&str> = Vec::new();
        for i in &info.interfaces {
            if !resolutions.contains(&i.ts_resolution.as_str()) {
                resolutions.push(&i.ts_resolution);
            }
        }
        let interfaces = info
            .interfaces
            .iter()
            .enumerate()
            .map(|(n, i)| InterfaceOut {
                index: u32::try_from(n).unwrap_or(u32::MAX),
                link_type: i.link_type.name(),
                link_type_number: i.link_type.number(),
                decoded: i.link_type.is_decoded(),
                snaplen: i.snaplen,
                ts_resolution: i.ts_resolution.clone(),
                ts_offset_s: i.ts_offset_s,
                name: i.name.clone(),
                packets: i.packets,
            })
            .collect();
        let duration_s = match (self.first_ns, self.last_ns) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e9),
            _ => None,
        };
        Inspection {
            label: label.to_string(),
            file: file.to_string(),
            format: info.format.name().to_string(),
            byte_order: match info.byte_order {
                ByteOrder::Little => "little-endian".to_string(),
                ByteOrder::Big => "big-endian".to_string(),
            },
            gzip: info.gzip,
            ts_resolution: if resolutions.is_empty() { None } else { Some(resolutions.join(", ")) },
            interfaces,
            packets: info.packets,
            bytes: info.bytes,
            first_time: self.first_ns.map(rfc3339),
            last_time: self.last_ns.map(rfc3339),
            duration_s,
            protocols: self.protocols,
            truncated: self.truncated,
            undecodable: self.undecodable,
            undecodable_by_kind: self.kinds,
            overlays: (self.tunnels.overlays().iter())
                .map(|(o, n)| crate::report::wire::OverlayOut::of(o, *n))
                .collect(),
            encrypted_tunnels: (self.tunnels.encrypted().iter())
                .map(|(e, n)| EncryptedOut { tunnel: e.name().to_string(), packets: *n })
                .collect(),
            flows: flows.flows.len() as u64,
            top_flows,
            warnings,
        }
    }
}

fn top_flow(f: &Flow) -> TopFlow {
    TopFlow {
        flow: f.describe(),
        proto: match f.proto {
            FlowProto::Tcp => "tcp",
            FlowProto::Udp => "udp",
            FlowProto::Icmp => "icmp",
        }
        .to_string(),
        packets: f.packets_to_server + f.packets_to_client,
        packets_to_server: f.packets_to_server,
        packets_to_client: f.packets_to_client,
        bytes: f.bytes_to_server + f.bytes_to_client,
        first_time: rfc3339(f.first_ns),
        last_time: rfc3339(f.last_ns),
    }
}

/// Writes the inspections as one pretty-printed JSON array, then a newline.
pub fn write_json(inspections: &[Inspection], out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, inspections)?;
    writeln!(out)
}

/// Width of the key column of the table.
const KEY_WIDTH: usize = 13;

/// Writes the inspections as aligned text, one block per capture, blank lines between.
pub fn write_table(inspections: &[Inspection], out: &mut dyn Write) -> io::Result<()> {
    for (n, i) in inspections.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        write_block(i, out)?;
    }
    Ok(())
}

fn write_block(i: &Inspection, out: &mut dyn Write) -> io::Result<()> {
    let key = |out: &mut dyn Write, k: &str, v: &str| writeln!(out, "{k:<KEY_WIDTH$}{v}");
    writeln!(out, "{}", i.label)?;
    key(out, "file", &i.file)?;
    let mut format = format!("{}, {}", i.format, i.byte_order);
    if i.gzip {
        format.push_str(", gzip");
    }
    if let Some(r) = &i.ts_resolution {
        format.push_str(&format!(", timestamps in {r}"));
    }
    key(out, "format", &format)?;
    key(out, "packets", &format!("{} ({} bytes read)", i.packets, i.bytes))?;
    let time = match (&i.first_time, &i.last_time, i.duration_s) {
        (Some(a), Some(b), Some(d)) => format!("{a} .. {b} ({d:.6} s)"),
        _ => "-".to_string(),
    };
    key(out, "time", &time)?;

    let rows: Vec<Vec<String>> = i
        .interfaces
        .iter()
        .map(|f| {
            vec![
                f.index.to_string(),
                if f.decoded {
                    format!("{} ({})", f.link_type, f.link_type_number)
                } else {
                    format!("{} ({}), not decoded", f.link_type, f.link_type_number)
                },
                if f.snaplen == 0 { "none".to_string() } else { f.snaplen.to_string() },
                f.ts_resolution.clone(),
                f.packets.to_string(),
                f.name.as_deref().map(printable).unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    if rows.is_empty() {
        key(out, "interfaces", "none")?;
    } else {
        sub_table(
            out,
            "interfaces",
            &["if", "link type", "snaplen", "ts", "packets", "name"],
            &[true, false, true, false, true, false],
            &rows,
        )?;
    }

    let p = &i.protocols;
    let counts = [p.tcp, p.udp, p.icmp, p.icmpv6, p.other_ip, p.fragments, p.non_ip, p.ipv4, p.ipv6];
    sub_table(
        out,
        "protocols",
        &["tcp", "udp", "icmp", "icmpv6", "other-ip", "fragments", "non-ip", "ipv4", "ipv6"],
        &[true; 9],
        &[counts.iter().map(u64::to_string).collect()],
    )?;
    key(out, "truncated", &i.truncated.to_string())?;
    key(out, "undecodable", &i.undecodable.to_string())?;
    if !i.undecodable_by_kind.is_empty() {
        let rows: Vec<Vec<String>> = i
            .undecodable_by_kind
            .iter()
            .map(|k| {
                vec![k.kind.clone(), k.packets.to_string(), k.first_record.to_string(), k.example.clone()]
            })
            .collect();
        sub_table(
            out,
            "",
            &["kind", "packets", "first record", "example"],
            &[false, true, true, false],
            &rows,
        )?;
    }
    if !i.overlays.is_empty() {
        let parts: Vec<String> = (i.overlays.iter())
            .filter_map(|o| o.typed())
            .map(|(o, n)| format!("{}: {n} packets", crate::report::summary::overlay_name(&o)))
            .collect();
        key(out, "overlays", &parts.join(", "))?;
    }
    if !i.encrypted_tunnels.is_empty() {
        let parts: Vec<String> =
            i.encrypted_tunnels.iter().map(|e| format!("{}: {} packets", e.tunnel, e.packets)).collect();
        key(out, "encrypted", &parts.join(", "))?;
    }

    if i.top_flows.is_empty() {
        key(out, "flows", &i.flows.to_string())?;
    } else {
        key(out, "flows", &format!("{} (top {} by packets)", i.flows, i.top_flows.len()))?;
        let rows: Vec<Vec<String>> = i
            .top_flows
            .iter()
            .map(|f| {
                vec![
                    f.packets.to_string(),
                    f.packets_to_server.to_string(),
                    f.packets_to_client.to_string(),
                    f.bytes.to_string(),
                    f.proto.clone(),
                    f.flow.clone(),
                ]
            })
            .collect();
        sub_table(
            out,
            "",
            &["packets", "to server", "to client", "bytes", "proto", "flow"],
            &[true, true, true, true, false, false],
            &rows,
        )?;
    }

    if i.warnings.is_empty() {
        key(out, "warnings", "none")?;
    } else {
        key(out, "warnings", &i.warnings.len().to_string())?;
        for w in &i.warnings {
            let place = match (w.record, w.byte_offset) {
                (Some(r), Some(o)) => format!("record {r} at byte {o}: "),
                (Some(r), None) => format!("record {r}: "),
                (None, Some(o)) => format!("byte {o}: "),
                (None, None) => String::new(),
            };
            key(out, "", &format!("{place}{}", w.message))?;
        }
    }
    Ok(())
}

/// Text read from a capture (interface names), safe for a terminal: control
/// characters are written as escapes.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

/// A header line and rows, columns padded to their widest cell (numbers right-aligned),
/// the first line keyed by `title` and all lines indented past the key column.
fn sub_table(
    out: &mut dyn Write,
    title: &str,
    header: &[&str],
    right: &[bool],
    rows: &[Vec<String>],
) -> io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let parts: Vec<String> = cells
            .zip(widths.iter().zip(right))
            .map(|(c, (&w, &r))| if r { format!("{c:>w$}") } else { format!("{c:<w$}") })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    writeln!(out, "{title:<KEY_WIDTH$}{}", line(&mut header.iter().copied()))?;
    for row in rows {
        writeln!(out, "{:<KEY_WIDTH$}{}", "", line(&mut row.iter().map(String::as_str)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// testdata/edge/eth-ipv4-tcp.pcap: Ethernet, LE µs pcap, a TCP handshake plus
    /// request (198.18.90.42:51514 -> 198.19.96.10:80), written by scripts/make-edge.py.
    fn edge(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/edge").join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn handshake_capture_counts_three_tcp_packets_in_one_flow() {
        let i = inspect_bytes("eth", &edge("eth-ipv4-tcp.pcap"), &FlowConfig::default()).unwrap();
        assert_eq!((i.format.as_str(), i.byte_order.as_str(), i.gzip), ("pcap", "little-endian", false));
        assert_eq!(i.packets, 3);
        assert_eq!(i.protocols, Protocols { tcp: 3, ipv4: 3, ..Protocols::default() });
        assert_eq!((i.truncated, i.undecodable, i.flows), (0, 0, 1));
        assert_eq!(i.top_flows[0].flow, "198.18.90.42:51514 -> 198.19.96.10:80");
        assert_eq!((i.top_flows[0].packets_to_server, i.top_flows[0].packets_to_client), (2, 1));
        assert_eq!(i.interfaces.len(), 1);
        assert_eq!((i.interfaces[0].link_type.as_str(), i.interfaces[0].link_type_number), ("ethernet", 1));
        assert!(i.warnings.is_empty());
    }

    #[test]
    fn unknown_link_type_records_are_undecodable_by_kind_and_warned() {
        // Interface 1 has link type 147 (USER0): two opaque records.
        let i = inspect_bytes("u", &edge("pcapng-unknown-linktype.pcapng"), &FlowConfig::default()).unwrap();
        assert_eq!((i.packets, i.protocols.tcp, i.undecodable), (3, 1, 2));
        assert_eq!(i.undecodable_by_kind.len(), 1);
        let k = &i.undecodable_by_kind[0];
        assert_eq!((k.kind.as_str(), k.packets, k.first_record), ("unsupported-link-type", 2, 2));
        assert_eq!(i.protocols.non_ip, 0);
        let messages: Vec<&str> = i.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            messages,
            ["interface 1 has link type USER0 (147), not decoded; its 2 packets are skipped"]
        );
        let iface = &i.interfaces[1];
        assert_eq!((iface.link_type.as_str(), iface.link_type_number, iface.decoded), ("user0", 147, false));
        assert!(i.interfaces[0].decoded);
    }

    #[test]
    fn interface_names_from_the_file_cannot_drive_the_terminal() {
        assert_eq!(printable("eth0\u{1b}[2J\n"), "eth0\\u{1b}[2J\\n");
        assert_eq!(printable("\\Device\\NPF_{5AE6}"), "\\Device\\NPF_{5AE6}");
    }

    #[test]
    fn every_cut_of_a_capture_is_inspected_or_refused_without_panic() {
        let whole = edge("pcapng-two-sections.pcapng");
        for len in 0..whole.len() {
            if let Ok(i) = inspect_bytes("cut", &whole[..len], &FlowConfig::default()) {
                assert!(i.packets <= 4, "{len}: {}", i.packets);
                let p = &i.protocols;
                assert_eq!(
                    p.tcp + p.udp + p.icmp + p.icmpv6 + p.other_ip + p.fragments + i.undecodable,
                    i.packets
                );
            }
        }
    }

    #[test]
    fn table_aligns_sub_table_columns() {
        let i = inspect_bytes("eth", &edge("eth-ipv4-tcp.pcap"), &FlowConfig::default()).unwrap();
        let mut out = Vec::new();
        write_table(&[i], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("protocols")).unwrap();
        // The count sits under the right edge of its column name.
        let end = lines[header].find("tcp").unwrap() + 3;
        assert_eq!(&lines[header + 1][end - 1..end], "3", "{text}");
        assert!(text.contains("warnings     none"), "{text}");
    }
}
