//! `--pcapng FILE`: after the verdicts, every capture is read again and its
//! packets are written into one pcapng, merged in order of corrected time
//! (capture 1's clock). One interface per capture point (per input interface
//! when a pcapng capture has several): name = label, description = file and
//! clock offset, link type as read, nanosecond timestamps. Each packet of a
//! reported request gets an EPB comment `tuplecorr request 17 at egress: ...`,
//! found through the request's flow at that capture (tuple and time range).
//!
//! Streaming: one reader thread per capture feeds a bounded channel; the
//! merger keeps a reorder window per capture (at most [`REORDER_RECORDS`]
//! records or [`REORDER_BYTES`] bytes) and always writes the earliest head.
//! Captures are nearly time-sorted; a packet later than its capture's window
//! allows is written when it comes out (so out of order in the file, which
//! pcapng allows) and counted in a warning.
//!
//! Written with the pcap-file crate's pcapng writer: it writes EPB comments and
//! IDB options (name, description, `if_tsresol`) and always writes EPB
//! timestamps in nanoseconds, which `if_tsresol = 9` declares.

use crate::decode::{self, ip_proto, Fragment, IcmpMessage, Packet, Transport};
use crate::flows::points::PointKey;
use crate::flows::{Endpoint, FlowProto};
use crate::ladder::{Ladder, LadderCapture};
use crate::read::CaptureSpec;
use crate::read::{self, LinkType, NoProgress, RawRecord};
use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Findings, Request};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::Duration;

/// Most records held per capture to put slightly disordered packets in order.
pub const REORDER_RECORDS: usize = 4096;
/// Most captured bytes held per capture in that window.
pub const REORDER_BYTES: usize = 8 << 20;
/// Records in flight from each reader thread.
const CHANNEL: usize = 1024;

/// Settings of the merge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// `--pcapng-only-requests`: leave out packets of no reported request.
    pub only_requests: bool,
}

/// What the merge wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    pub written: u64,
    pub annotated: u64,
    /// Left out by `--pcapng-only-requests`.
    pub left_out: u64,
    /// Written later than a packet of the same capture with a later time: more
    /// disorder than the reorder window holds.
    pub out_of_order: u64,
    /// Corrected time before 1970: written at time 0.
    pub before_epoch: u64,
    /// Records naming an interface the capture did not describe: left out.
    pub bad_interface: u64,
}

impl MergeStats {
    /// One line per thing the user should know.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.out_of_order > 0 {
            w.push(format!(
                "{} packets were further out of time order in their capture than the reorder window \
                 ({REORDER_RECORDS} packets) holds; written late, out of time order",
                self.out_of_order
            ));
        }
        if self.before_epoch > 0 {
            w.push(format!(
                "{} packets have a corrected time before 1970; written at time 0",
                self.before_epoch
            ));
        }
        if self.bad_interface > 0 {
            w.push(format!("{} packets name an undescribed interface; left out", self.bad_interface));
        }
        w
    }
}

/// One record read again, owned.
struct Rec {
    /// Corrected (capture 1's clock).
    ts_ns: i64,
    /// Order within the capture (ties).
    seq: u64,
    interface: u32,
    link_type: LinkType,
    orig_len: u32,
    data: Vec<u8>,
}

impl PartialEq for Rec {
    fn eq(&self, o: &Rec) -> bool {
        (self.ts_ns, self.seq) == (o.ts_ns, o.seq)
    }
}
impl Eq for Rec {}
impl PartialOrd for Rec {
    fn partial_cmp(&self, o: &Rec) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Rec {
    fn cmp(&self, o: &Rec) -> std::cmp::Ordering {
        (self.ts_ns, self.seq).cmp(&(o.ts_ns, o.seq))
    }
}

enum Msg {
    Rec(Rec),
    Failed(String),
}

/// One capture being merged: its channel and its reorder window.
struct Input {
    rx: Receiver<Msg>,
    window: BinaryHeap<Reverse<Rec>>,
    /// Most records in `window`.
    cap: usize,
    bytes: usize,
    done: bool,
    /// Latest time written from this capture.
    last_ns: Option<i64>,
}

impl Input {
    /// Tops the window up; Err when the reader failed.
    fn fill(&mut self) -> io::Result<()> {
        while !self.done && self.window.len() < self.cap && self.bytes < REORDER_BYTES {
            match self.rx.recv() {
                Ok(Msg::Rec(r)) => {
                    self.bytes += r.data.len();
                    self.window.push(Reverse(r));
                }
                Ok(Msg::Failed(e)) => return Err(io::Error::other(e)),
                Err(_) => self.done = true,
            }
        }
        Ok(())
    }
}

/// The canonical flow key the flow stage uses (protocol, endpoints sorted,
/// and at a sub-point by direction the side of the host: `flows::side_of`).
/// The last element tells apart flows of one tuple at the two sides of a host:
/// the side bit for SLL v1 (`flows::side_of`), the interface for SLL2, 0
/// for every other capture.
type Key = (FlowProto, Endpoint, Endpoint, u32);

fn key(proto: FlowProto, a: Endpoint, b: Endpoint) -> Key {
    if a <= b {
        (proto, a, b, 0)
    } else {
        (proto, b, a, 0)
    }
}

/// A reported request's flow at one capture: first and last raw time, and the
/// index of its comment.
type Span = (i64, i64, usize);

/// Per capture: flow key → the reported requests' flows there.
struct Lookup {
    flows: Vec<FxHashMap<Key, Vec<Span>>>,
    /// Per capture, per entry of `requests`: the comment.
    comments: Vec<Vec<String>>,
}

impl Lookup {
    fn new(ladder: &Ladder, findings: &Findings, reported: &[u64]) -> Lookup {
        let n = ladder.captures.len();
        let mut flows = vec![FxHashMap::default(); n];
        let mut comments = vec![Vec::new(); n];
        let by_number: FxHashMap<u64, &Request> = findings.requests.iter().map(|r| (r.request, r)).collect();
        let words = Words::new(findings);
        for &number in reported {
            let Some(lr) = number.checked_sub(1).and_then(|i| ladder.requests.get(i as usize)) else {
                continue;
            };
            let Some(req) = by_number.get(&number) else { continue };
            for (c, hop) in lr.hops.iter().enumerate().take(n) {
                let Some(h) = hop else { continue };
                let label = &ladder.captures[c].label;
                comments[c].push(comment(&words, req, label));
                let entry = (h.first_ns, h.last_ns, comments[c].len() - 1);
                let mut k = key(h.proto, h.client, h.server);
                let sll2 = ladder.captures[c].interfaces.iter().any(|i| i.link_type == LinkType::LinuxSll2);
                match (ladder.captures[c].point, sll2) {
                    // SLL2 keys flows by interface: the flow's, and its reply's
                    // when that came by another (a side holds whole flows).
                    (Some(PointKey::Direction { .. }), true) => {
                        for i in std::iter::once(h.interface).chain(h.other_interface) {
                            k.3 = i;
                            flows[c].entry(k).or_insert_with(Vec::new).push(entry);
                        }
                        continue;
                    }
                    // SLL v1 keys flows by side (`flows::side_of`): the side its
                    // first packet (the client's) was seen on.
                    (Some(PointKey::Direction { outgoing }), false) => {
                        k.3 = u32::from((h.client <= h.server) != outgoing);
                    }
                    _ => {}
                }
                flows[c].entry(k).or_insert_with(Vec::new).push(entry);
            }
        }
        Lookup { flows, comments }
    }

    /// The point of capture (file) `source` a packet belongs to (its interface,
    /// or its direction: SLL incoming / outgoing) and its comment, when it belongs
    /// to a reported request there; None for packets without an IP packet.
    fn find(
        &self,
        captures: &[LadderCapture],
        source: usize,
        rec: &Rec,
        raw_ts: i64,
    ) -> Option<(usize, Option<&str>)> {
        let raw = RawRecord {
            ts_ns: raw_ts,
            interface: rec.interface,
            link_type: rec.link_type,
            data: &rec.data,
            orig_len: rec.orig_len,
            record: 0,
            byte_offset: 0,
        };
        let p = decode::decode(&raw).ok()?;
        let interface = crate::flows::interface_of(&p);
        let point = (captures.iter().enumerate())
            .filter(|(_, lc)| lc.source == source)
            .find(|(_, lc)| lc.point.is_none_or(|k| k.holds(interface, p.sll_packet_type)))
            .map(|(c, _)| c)?;
        match self.note(captures, source, point, &p, raw_ts) {
            Some((at, note)) => Some((at, Some(note))),
            None => Some((point, None)),
        }
    }

    /// The comment of a decoded packet of `source` at `point`, and the point
    /// whose request it belongs to (`point`, or for a sub-point by direction,
    /// which holds whole flows, the sub-point holding the packet's flow).
    fn note(
        &self,
        captures: &[LadderCapture],
        source: usize,
        point: usize,
        p: &Packet,
        raw_ts: i64,
    ) -> Option<(usize, &str)> {
        if p.fragment == Fragment::Later {
            return None;
        }
        let ep = |addr, port| Endpoint { addr, port };
        // (protocol, from, to, the packet travelled the other way: a quoted header)
        let (proto, src, dst, reverse) = match &p.transport {
            Transport::Tcp(t) => (FlowProto::Tcp, ep(p.src, t.src_port), ep(p.dst, t.dst_port), false),
            Transport::Udp(u) => (FlowProto::Udp, ep(p.src, u.src_port), ep(p.dst, u.dst_port), false),
            Transport::Icmp(i) => match &i.message {
                IcmpMessage::EchoRequest { id, .. } | IcmpMessage::EchoReply { id, .. } => {
                    (FlowProto::Icmp, ep(p.src, *id), ep(p.dst, *id), false)
                }
                IcmpMessage::Error(q) => {
                    let (proto, sport, dport) = match q.protocol {
                        ip_proto::TCP => (FlowProto::Tcp, q.src_port?, q.dst_port?),
                        ip_proto::UDP => (FlowProto::Udp, q.src_port?, q.dst_port?),
                        ip_proto::ICMP | ip_proto::ICMPV6 => (FlowProto::Icmp, q.echo?.0, q.echo?.0),
                        _ => return None,
                    };
                    (proto, ep(q.src, sport), ep(q.dst, dport), true)
                }
                IcmpMessage::Other => return None,
            },
            Transport::Other { .. } => return None,
        };
        let mut k = key(proto, src, dst);
        let at = |c: usize, k: &Key| -> Option<&str> {
            let entries = self.flows.get(c)?.get(k)?;
            let &(_, _, i) = entries.iter().find(|(first, last, _)| (*first..=*last).contains(&raw_ts))?;
            self.comments[c].get(i).map(String::as_str)
        };
        // A sub-point by interface holds only that interface's packets; a
        // sub-point by direction holds whole flows (both directions).
        match captures[point].point {
            Some(PointKey::Direction { .. }) => {
                k.3 = match p.sll_ifindex {
                    Some(i) => i,
                    None => u32::from(crate::flows::side_of(p, src, dst, reverse)),
                };
                (captures.iter().enumerate())
                    .filter(|(_, lc)| lc.source == source)
                    .find_map(|(c, _)| Some((c, at(c, &k)?)))
            }
            _ => Some((point, at(point, &k)?)),
        }
    }
}

/// `tuplecorr request 17 at egress: source A -> B changed decap->egress; ...`.
pub fn comment(w: &Words<'_>, r: &Request, label: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (side, changes) in [("source", &r.source), ("destination", &r.destination)] {
        for c in changes {
            parts.push(format!(
                "{side} {} -> {} changed {} ({})",
                c.before,
                c.after,
                w.between(c.between),
                c.kind.wire()
            ));
        }
    }
    if parts.is_empty() {
        parts.push("addresses unchanged".into());
    }
    parts.push(format!("reply {}, outcome {}", r.reply.path.wire(), r.outcome.kind.wire()));
    format!("tuplecorr request {} at {label}: {}", r.request, parts.join("; "))
}

fn pcap_err(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

/// The interface blocks: one per capture (per input interface of a capture
/// with several). Returns the first output interface of each capture.
fn interfaces(captures: &[LadderCapture]) -> (Vec<InterfaceDescriptionBlock<'static>>, Vec<u32>) {
    let mut blocks = Vec::new();
    let mut base = Vec::new();
    let reference = captures.first().map_or("", |c| c.label.as_str());
    for c in captures {
        base.push(blocks.len() as u32);
        let several = c.interfaces.len() > 1;
        for (i, itf) in c.interfaces.iter().enumerate() {
            let name = match (several, &itf.name) {
                (false, _) => c.label.clone(),
                (true, Some(n)) => format!("{}/{n}", c.label),
                (true, None) => format!("{}/{i}", c.label),
            };
            let description = format!(
                "{} (clock offset {:+.6} ms against {reference}; times here are corrected)",
                c.file,
                c.offset_ns as f64 / 1e6
            );
            blocks.push(InterfaceDescriptionBlock {
                linktype: DataLink::from(itf.link_type.number()),
                snaplen: itf.snaplen,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name)),
                    InterfaceDescriptionOption::IfDescription(Cow::Owned(description)),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            });
        }
    }
    (blocks, base)
}

/// Merges the captures into `out` as pcapng. `reported`: the request numbers
/// of the report (filters applied); only those are annotated.
pub fn write_merged(
    specs: &[CaptureSpec],
    ladder: &Ladder,
    findings: &Findings,
    reported: &[u64],
    options: &MergeOptions,
    out: &mut dyn Write,
) -> io::Result<MergeStats> {
    let run = Run { specs, ladder, findings, reported, options };
    merge(&run, REORDER_RECORDS, out)
}

/// The inputs of one merge.
struct Run<'a> {
    specs: &'a [CaptureSpec],
    ladder: &'a Ladder,
    findings: &'a Findings,
    reported: &'a [u64],
    options: &'a MergeOptions,
}

/// [`write_merged`] with a reorder window of `window` records per capture.
fn merge(run: &Run<'_>, window: usize, out: &mut dyn Write) -> io::Result<MergeStats> {
    let Run { specs, ladder, findings, reported, options } = *run;
    if let Some(once) = specs.iter().find(|s| !s.readable_again()) {
        return Err(io::Error::other(format!(
            "--pcapng reads every capture again: {} ({}) is standard input, a pipe or a FIFO, which cannot be read twice",
            once.label,
            once.display_name()
        )));
    }
    let lookup = Lookup::new(ladder, findings, reported);
    let (blocks, base) = interfaces(&ladder.captures);
    let counts: Vec<u32> = ladder.captures.iter().map(|c| c.interfaces.len() as u32).collect();
    let offsets: Vec<i64> = ladder.captures.iter().map(|c| c.offset_ns).collect();
    // Each capture (file) is read once, at its first point's clock offset (the
    // files of one label are one capture of the ladder).
    let capture_of: Vec<usize> = (specs.iter())
        .map(|s| {
            (crate::read::point_files(specs).iter()).position(|p| specs[p[0]].label == s.label).unwrap_or(0)
        })
        .collect();
    let first_point: Vec<usize> = (0..specs.len())
        .map(|s| ladder.captures.iter().position(|c| c.source == capture_of[s]).unwrap_or(s))
        .collect();
    let mut writer = PcapNgWriter::new(out).map_err(pcap_err)?;
    for b in blocks {
        writer.write_pcapng_block(b).map_err(pcap_err)?;
    }
    let mut stats = MergeStats::default();
    std::thread::scope(|scope| -> io::Result<()> {
        let mut inputs: Vec<Input> = specs
            .iter()
            .enumerate()
            .map(|(c, spec)| {
                let (tx, rx) = sync_channel(CHANNEL);
                let offset = first_point.get(c).and_then(|&p| offsets.get(p)).copied().unwrap_or(0);
                scope.spawn(move || {
                    let mut seq = 0u64;
                    let mut open = true;
                    let result = read::read_capture(spec, c, &NoProgress, &mut |r| {
                        seq += 1;
                        if open {
                            let rec = Rec {
                                ts_ns: r.ts_ns.saturating_sub(offset),
                                seq,
                                interface: r.interface,
                                link_type: r.link_type,
                                orig_len: r.orig_len,
                                data: r.data.to_vec(),
                            };
                            // The merger stopped (an error): read on without sending.
                            open = tx.send(Msg::Rec(rec)).is_ok();
                        }
                    });
                    if let Err(e) = result {
                        let _ = tx.send(Msg::Failed(e.to_string()));
                    }
                });
                Input {
                    rx,
                    window: BinaryHeap::new(),
                    cap: window.max(1),
                    bytes: 0,
                    done: false,
                    last_ns: None,
                }
            })
            .collect();
        loop {
            for input in &mut inputs {
                input.fill()?;
            }
            let next = (inputs.iter().enumerate())
                .filter_map(|(c, i)| i.window.peek().map(|Reverse(r)| (r.ts_ns, c)))
                .min();
            let Some((_, c)) = next else { break };
            let input = &mut inputs[c];
            let Some(Reverse(rec)) = input.window.pop() else { break };
            input.bytes -= rec.data.len();
            if input.last_ns.is_some_and(|t| rec.ts_ns < t) {
                stats.out_of_order += 1;
            }
            input.last_ns = Some(input.last_ns.map_or(rec.ts_ns, |t| t.max(rec.ts_ns)));
            let raw_ts = rec.ts_ns.saturating_add(offsets[first_point[c]]);
            let (c, note) =
                lookup.find(&ladder.captures, capture_of[c], &rec, raw_ts).unwrap_or((first_point[c], None));
            if note.is_none() && options.only_requests {
                stats.left_out += 1;
                continue;
            }
            if rec.interface >= counts[c] {
                stats.bad_interface += 1;
                continue;
            }
            // One file, one clock: a split capture's packets are all written at
            // its first point's offset.
            let ts = u64::try_from(rec.ts_ns).unwrap_or_else(|_| {
                stats.before_epoch += 1;
                0
            });
            let block = EnhancedPacketBlock {
                interface_id: base[c] + rec.interface,
                timestamp: Duration::from_nanos(ts),
                original_len: rec.orig_len.max(rec.data.len() as u32),
                data: Cow::Borrowed(&rec.data),
                options: note
                    .map(|n| vec![EnhancedPacketOption::Comment(Cow::Borrowed(n))])
                    .unwrap_or_default(),
            };
            writer.write_pcapng_block(block).map_err(pcap_err)?;
            stats.written += 1;
            stats.annotated += u64::from(note.is_some());
        }
        Ok(())
    })?;
    writer.get_mut().flush()?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Source;
    use crate::report::fixtures::findings;

    #[test]
    fn comment_names_request_point_and_changes() {
        let f = findings();
        let c = comment(&Words::new(&f), &f.requests[0], "egress");
        assert!(c.starts_with("tuplecorr request 1 at egress: source "), "{c}");
        assert!(c.contains(" changed "), "{c}");
        assert!(c.contains("reply "), "{c}");
    }

    /// Three points of the synthetic mix (clocks +2.75 s and -1.3 s) as pcap
    /// files; `egress` gets the record at `move_from` moved to `move_to`.
    fn captures(dir: &std::path::Path, move_from: usize, move_to: usize) -> Vec<CaptureSpec> {
        let mut points: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
        for c in 0..30 {
            let (caps, _) = tuplecorr_synth::mix_connection(c, 1, 300);
            for (all, p) in points.iter_mut().zip(caps.points) {
                all.extend(p);
            }
        }
        for p in &mut points {
            p.sort_by_key(|(t, _, _)| *t);
        }
        let r = points[1].remove(move_from);
        points[1].insert(move_to, r);
        (["decap", "egress", "backend"].iter().zip(&points))
            .map(|(label, p)| {
                let path = dir.join(format!("{label}.pcap"));
                tuplecorr_synth::write_pcap(&mut std::fs::File::create(&path).unwrap(), 65535, p).unwrap();
                CaptureSpec { label: label.to_string(), source: Source::Path(path) }
            })
            .collect()
    }

    /// A written packet: interface, timestamp (ns), comment.
    type Written = (u32, u64, Option<String>);

    /// Merges with `window`; gives the stats, the written packets and the interface names.
    fn merged(specs: &[CaptureSpec], window: usize) -> (MergeStats, Vec<Written>, Vec<String>) {
        use pcap_file::pcapng::{Block, PcapNgReader};
        let config = crate::drive::Config { captures: specs.to_vec(), quiet: true, ..Default::default() };
        let (findings, ladder) =
            crate::drive::pipeline::analyze_full(&config, &crate::read::NoProgress, true).unwrap();
        let ladder = ladder.unwrap();
        let reported: Vec<u64> = findings.requests.iter().map(|r| r.request).collect();
        let options = MergeOptions::default();
        let run = Run { specs, ladder: &ladder, findings: &findings, reported: &reported, options: &options };
        let mut out = Vec::new();
        let stats = merge(&run, window, &mut out).unwrap();
        let mut reader = PcapNgReader::new(&out[..]).unwrap();
        let (mut packets, mut names) = (Vec::new(), Vec::new());
        while let Some(block) = reader.next_block() {
            match block.unwrap() {
                Block::EnhancedPacket(p) => {
                    let comment = p.options.iter().find_map(|o| match o {
                        EnhancedPacketOption::Comment(c) => Some(c.to_string()),
                        _ => None,
                    });
                    packets.push((p.interface_id, p.timestamp.as_nanos() as u64, comment));
                }
                Block::InterfaceDescription(i) => names.extend(i.options.iter().filter_map(|o| match o {
                    InterfaceDescriptionOption::IfName(n) => Some(n.to_string()),
                    _ => None,
                })),
                _ => {}
            }
        }
        (stats, packets, names)
    }

    #[test]
    fn slight_disorder_is_put_in_order_and_every_packet_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let specs = captures(dir.path(), 10, 13);
        let (stats, packets, names) = merged(&specs, 8);
        assert_eq!(names, ["decap", "egress", "backend"]);
        let total: u64 =
            specs.iter().map(|s| read::read_capture(s, 0, &NoProgress, &mut |_| {}).unwrap().packets).sum();
        assert_eq!(packets.len() as u64, total);
        assert_eq!((stats.written, stats.out_of_order), (total, 0));
        assert!(packets.windows(2).all(|w| w[0].1 <= w[1].1), "corrected-time order");
        // Every interface appears; packets of requests carry their comment.
        for i in 0..3 {
            assert!(packets.iter().any(|p| p.0 == i));
        }
        assert_eq!(packets.iter().filter(|p| p.2.is_some()).count() as u64, stats.annotated);
        assert!(stats.annotated > total / 2);
    }

    #[test]
    fn disorder_beyond_the_window_is_written_late_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        // egress's record 40 now comes after 50 later ones: more than a window of 8.
        let specs = captures(dir.path(), 40, 90);
        let (stats, packets, _) = merged(&specs, 8);
        assert_eq!(stats.out_of_order, 1);
        assert_eq!(stats.written, packets.len() as u64);
        assert_eq!(packets.windows(2).filter(|w| w[0].1 > w[1].1).count(), 1, "one packet out of place");
        assert_eq!(stats.warnings().len(), 1);
        // A large enough window puts it back in order.
        let (stats, packets, _) = merged(&specs, 256);
        assert_eq!(stats.out_of_order, 0);
        assert!(packets.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn windows_pop_in_time_order_then_sequence() {
        let rec = |ts_ns, seq| Rec {
            ts_ns,
            seq,
            interface: 0,
            link_type: LinkType::RawIp,
            orig_len: 0,
            data: vec![],
        };
        let mut h = BinaryHeap::new();
        for r in [rec(5, 1), rec(3, 2), rec(5, 0), rec(-1, 3)] {
            h.push(Reverse(r));
        }
        let order: Vec<(i64, u64)> =
            std::iter::from_fn(|| h.pop().map(|Reverse(r)| (r.ts_ns, r.seq))).collect();
        assert_eq!(order, [(-1, 3), (3, 2), (5, 0), (5, 1)]);
    }
}
