//! analyze(): one rayon task per point (its files read through `ingest`,
//! within a time shard's plan), then correlate → verdict. `analyze_bytes` runs
//! the same stages on captures held in memory (fuzzing, tests). Also what both
//! drivers conclude with (`conclude*`, the points' names and metas). Takes
//! settings and captures; gives findings. Never formats a report.

use super::ingest::{ingest, ingest_bytes, merge_info, reading_order, Builder, CaptureResult, Cut, Overlaps};
use super::shard;
use super::Config;
use crate::correlate;
use crate::flows::points::PointKey;
use crate::flows::Flows;
use crate::ladder::{self, Ladder, LadderCapture, LadderInterface};
use crate::read::{self, CaptureInfo, LinkType, Progress, ReadError};
use crate::verdict::{self, CaptureMeta, Findings, VerdictOptions};
use crate::warning::Warning;
use rayon::prelude::*;

/// Reads, decodes and builds the flows of one observation point from its
/// files (`files`: indices into `config.captures`, one label; `points`: how
/// many points the run has). Several files (tcpdump -C/-G rotation) are read
/// one after the other into one flow table, in the order of their first
/// packet's time, so a connection alive across a rotation is one flow; files
/// that overlap in time get one warning. Gives the result and the point's
/// files in reading order (comma-separated).
fn read_point(
    config: &Config,
    capture: usize,
    files: &[usize],
    points: usize,
    progress: &dyn Progress,
) -> Result<(CaptureResult, String), ReadError> {
    let specs = &config.captures;
    let (order, firsts) = reading_order(specs, files);
    let label = specs[order[0]].label.as_str();
    let first_of: Vec<(usize, Option<i64>)> = order.iter().copied().zip(firsts.iter().copied()).collect();
    let mut hosts = Hosts::default();
    // Which files, and which records of them, the point reads (a time shard
    // reads part of them): planned before reading.
    let mut plan = shard::ReadPlan::new(config, capture, label, order, firsts);
    let limit = config.flows.payload_limit();
    let mut b = Builder::new(config);
    let mut info: Option<CaptureInfo> = None;
    let mut files = Overlaps::default();
    while let Some(f) = plan.next_file() {
        let spec = &specs[f];
        let from = b.table().flows().len();
        let file_info =
            plan.read(&mut b, |sink| ingest(spec, f, &config.read, points, limit, progress, sink))?;
        let span = b.end_file(label, &spec.display_name(), &file_info.warnings);
        files.note(specs, f, span, label);
        let first = first_of.iter().find(|x| x.0 == f).and_then(|x| x.1);
        let host = hosts.file(first, span, spec.display_name());
        b.table().set_host(from, host);
        info = Some(merge_info(info, file_info));
        plan.after_file(b.table().flows());
    }
    let order = plan.files_read();
    let (cut, no_packet, skipped) = plan.finish(specs, label);
    b.warnings_mut().extend(no_packet);
    let names: Vec<String> = order.iter().map(|&f| specs[f].display_name()).collect();
    let names = names.join(", ");
    let host_names = hosts.names();
    files.finish_hosts(b.warnings_mut(), order.len(), host_names.len().max(1));
    b.warnings_mut().extend(skipped);
    // `files` is never empty (a point has a label because a file gave it).
    let info = info.ok_or_else(|| ReadError { file: label.to_string(), kind: read::ReadErrorKind::Empty })?;
    // A shard splits a `tcpdump -i any` capture as the run its --clocks-from
    // report came from: also where its own flows are too few (or none) to.
    let keys = config.shard.as_ref().and_then(|_| pinned_keys(config, label, &info));
    let (mut result, elsewhere) = b.finish_as(label, &names, info, keys.as_deref());
    if elsewhere > 0 {
        result.warnings.push(Warning {
            label: label.to_string(),
            file: names.clone(),
            record: None,
            byte_offset: None,
            problem: format!(
                "{elsewhere} flows were on interfaces the --clocks-from report did not split this capture by"
            ),
            consequence: "they were counted at its first point".into(),
        });
    }
    result.cut = cut;
    result.hosts = host_names;
    Ok((result, names))
}

/// The hosts of one point, as its files are read in the order of their first
/// packet: a file that begins after one host's files end continues that host
/// (rotation, `tcpdump -C`/`-G`); one that begins before every host's files
/// end is another host's capture (a pool's nodes, ECMP, replicas: one label
/// given to files overlapping in time). See `Flow::host`.
#[derive(Default)]
struct Hosts {
    /// Per host: where its files read so far end, and their names.
    hosts: Vec<(Option<i64>, Vec<String>)>,
}

impl Hosts {
    /// The host of the file just read (`first`: its first packet's time,
    /// `span`: what its records spanned, `name`: its name).
    fn file(&mut self, first: Option<i64>, span: Option<(i64, i64)>, name: String) -> u16 {
        let start = first.or(span.map(|s| s.0));
        let ended = |h: &(Option<i64>, Vec<String>)| match (h.0, start) {
            (Some(end), Some(start)) => end <= start,
            _ => true,
        };
        let at = match self.hosts.iter().position(ended) {
            Some(h) => h,
            None if self.hosts.len() < usize::from(u16::MAX) => {
                self.hosts.push((None, Vec::new()));
                self.hosts.len() - 1
            }
            None => self.hosts.len() - 1,
        };
        let host = &mut self.hosts[at];
        host.0 = match (host.0, span) {
            (Some(end), Some((_, hi))) => Some(end.max(hi)),
            (end, span) => end.or(span.map(|s| s.1)),
        };
        host.1.push(name);
        at as u16
    }

    /// Each host's files (`a.pcap, a1.pcap`), when there are several hosts.
    fn names(self) -> Vec<String> {
        if self.hosts.len() < 2 {
            return Vec::new();
        }
        self.hosts.into_iter().map(|h| h.1.join(", ")).collect()
    }
}

/// Runs the whole pipeline on the configured captures.
pub fn analyze(config: &Config, progress: &dyn Progress) -> Result<Findings, ReadError> {
    analyze_full(config, progress, false).map(|(findings, _)| findings)
}

/// [`analyze`], and with `ladder` also the per-request packet events and flow
/// tuples (HTML ladders, merged pcapng).
pub fn analyze_full(
    config: &Config,
    progress: &dyn Progress,
    ladder: bool,
) -> Result<(Findings, Option<Ladder>), ReadError> {
    let points = crate::read::point_files(&config.captures);
    if worker_per_point(config.threads, points.len(), rayon::current_num_threads()) {
        // No pool to be had (threads refused): the run goes on in the current one.
        if let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(points.len()).build() {
            return pool.install(|| analyze_points(config, &points, progress, ladder));
        }
    }
    analyze_points(config, &points, progress, ladder)
}

/// [`analyze_full`] in the current rayon pool: the points read across its
/// workers, then concluded.
fn analyze_points(
    config: &Config,
    points: &[Vec<usize>],
    progress: &dyn Progress,
    ladder: bool,
) -> Result<(Findings, Option<Ladder>), ReadError> {
    let results: Vec<Result<(CaptureResult, String), ReadError>> = (points.par_iter().enumerate())
        .map(|(c, files)| read_point(config, c, files, points.len(), progress))
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let names: Vec<(String, String)> = (points.iter().zip(&results))
        .map(|(files, (_, names))| (config.captures[files[0]].label.clone(), names.clone()))
        .collect();
    let results = results.into_iter().map(|(r, _)| r).collect();
    Ok(conclude(config, &names, results, ladder))
}

/// Whether the run gets a pool of one worker a point: only when it may use
/// every core (no `--threads`) and there are more points than rayon workers.
/// Rayon would otherwise read the points in waves: three captures on two
/// cores take two captures' time, the last one alone on one core while the
/// other idles. With a worker a point the kernel shares the cores among all
/// points (1.5 captures' time). With `--threads N` the points are read N at a
/// time, as asked.
///
/// The whole run (not only the reading) goes to that pool, so that the later
/// stages allocate on the threads whose memory the reading freed: with the
/// reading alone on threads of its own, each reader kept a malloc arena the
/// later stages never reused (peak RSS 175 vs 163 MiB on the bench set).
pub fn worker_per_point(threads: Option<usize>, points: usize, workers: usize) -> bool {
    threads.is_none() && points > workers
}

/// Runs the whole pipeline on captures held in memory, `(label, bytes)` in path
/// order, sequentially (fuzzing, tests). `config.captures` is not used; each
/// label also names its capture in warnings.
pub fn analyze_bytes(config: &Config, captures: &[(&str, &[u8])]) -> Result<Findings, ReadError> {
    let mut results = Vec::with_capacity(captures.len());
    for &(label, bytes) in captures {
        let mut b = Builder::new(config);
        let info = ingest_bytes(label, bytes, &mut b)?;
        b.end_file(label, label, &info.warnings);
        results.push(b.finish(label, label, info));
    }
    let names: Vec<(String, String)> =
        captures.iter().map(|&(label, _)| (label.to_string(), label.to_string())).collect();
    Ok(conclude(config, &names, results, false).0)
}

/// One observation point: a capture, or a sub-point of a split capture.
struct PointOf<'a> {
    /// Index of its capture.
    source: usize,
    /// Its place among its capture's points.
    n: usize,
    label: String,
    key: Option<PointKey>,
    result: &'a CaptureResult,
    /// A side's interfaces by index and name (see `CaptureMeta::interfaces`).
    interfaces: Vec<(u32, String)>,
}

/// The observation points of the run in path order: each capture's points in
/// its own order. A side of a split capture is labelled with the capture's
/// label and, in parentheses, `in` (where requests enter the host) or `out`
/// (where they leave it): `node(in)`, `node(out)`, whatever interfaces the
/// host has; the interface a request took there is a field of the request.
fn expand<'a>(names: &[(String, String)], results: &'a [CaptureResult], links: &Links) -> Vec<PointOf<'a>> {
    let mut out = Vec::new();
    for (source, ((label, _), r)) in names.iter().zip(results).enumerate() {
        for (n, (key, flows, _)) in r.points.iter().enumerate() {
            let (label, interfaces) = match key {
                None => (label.clone(), Vec::new()),
                // SLL v1 in a pcap file carries no interface: none is named
                Some(k) if !names_interfaces(&r.info) => (format!("{label}({})", point_name(*k)), Vec::new()),
                Some(k) => {
                    let mut indexes: Vec<u32> = (flows.flows.iter())
                        .flat_map(|f| std::iter::once(f.first_interface).chain(f.other_interface()))
                        .collect();
                    indexes.sort_unstable();
                    indexes.dedup();
                    let named =
                        indexes.into_iter().map(|i| (i, interface_label(i, &r.info, links))).collect();
                    (format!("{label}({})", point_name(*k)), named)
                }
            };
            out.push(PointOf { source, n, label, key: *key, result: r, interfaces });
        }
    }
    out
}

/// The sub-points (as keys, in path order) the `--clocks-from` report split
/// capture `label` into: its labels read back as [`point_name`] wrote them.
/// None when the report names fewer than two sub-points of it, or one this
/// capture cannot have.
fn pinned_keys(config: &Config, label: &str, info: &CaptureInfo) -> Option<Vec<Option<PointKey>>> {
    let pinned = config.clocks_from.as_ref()?;
    let names: Vec<&str> = (pinned.clocks.iter())
        .map(|(l, _, _)| l.as_str())
        .filter(|l| *l != label && crate::read::capture_of_point(l) == label)
        .map(|l| &l[label.len() + 1..l.len() - 1])
        .collect();
    if names.len() < 2 {
        return None;
    }
    names.iter().map(|n| point_key_named(n, info, &config.link_names).map(Some)).collect()
}

/// The key of a side named `in` or `out` (see [`point_name`]), of a capture
/// whose link layer gives packet directions (SLL, SLL2). An earlier release's
/// `in if4`, `out eth0` names the same sides. None for a capture that names
/// only interfaces (pcapng): its sides are found again from its copies.
fn point_key_named(name: &str, info: &CaptureInfo, _links: &Links) -> Option<PointKey> {
    let role = name.split_once(' ').map_or(name, |(role, _)| role);
    if !matches!(role, "in" | "out") {
        return None;
    }
    let directed =
        info.interfaces.iter().any(|itf| matches!(itf.link_type, LinkType::LinuxSll | LinkType::LinuxSll2));
    directed.then_some(PointKey::Direction { outgoing: role == "out" })
}

/// Interface names by index (`Config::link_names`).
type Links = std::collections::BTreeMap<u32, String>;

/// A pcapng `if_name` as a sub-point's label shows it: without control
/// characters and parentheses, at most 32 characters; None when blank.
fn interface_name(name: &str) -> Option<String> {
    let n: String = name.chars().filter(|c| !c.is_control() && !matches!(c, '(' | ')')).take(32).collect();
    (!n.trim().is_empty()).then_some(n)
}

/// The name of interface `i` of a capture: the pcapng `if_name` when present;
/// for an SLL2 interface index, its name in `links` (`ip -o link` output given
/// to `--names`); else `if` and its number (SLL2 interface index or pcapng
/// interface number): `eth0`, `pod0`, `if4`.
pub(crate) fn interface_label(i: u32, info: &CaptureInfo, links: &Links) -> String {
    let sll2 = info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2);
    let name = if sll2 {
        links.get(&i).cloned()
    } else {
        info.interfaces.get(i as usize).and_then(|itf| itf.name.as_deref()).and_then(interface_name)
    };
    name.unwrap_or_else(|| format!("if{i}"))
}

/// Whether a capture tells its packets' interfaces apart: an SLL2 interface
/// index, or several pcapng interfaces.
fn names_interfaces(info: &CaptureInfo) -> bool {
    info.interfaces.len() > 1 || info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2)
}

/// `in` or `out`: see [`expand`].
fn point_name(key: PointKey) -> &'static str {
    if key.outgoing() {
        "out"
    } else {
        "in"
    }
}

/// When interface names were given (`links`): one warning when no capture
/// holds interface indexes they could name (a LINUX_SLL capture carries none),
/// and one per capture whose sub-points have indexes they do not name (the
/// `ip -o link` of another host?). Nothing without `links`.
fn link_name_warnings(names: &[(String, String)], results: &[CaptureResult], links: &Links) -> Vec<Warning> {
    if links.is_empty() {
        return Vec::new();
    }
    let warning = |label: &str, file: &str, problem: String, consequence: &str| Warning {
        label: label.to_string(),
        file: file.to_string(),
        record: None,
        byte_offset: None,
        problem,
        consequence: consequence.to_string(),
    };
    let mut out = Vec::new();
    let mut any = false;
    for ((label, file), r) in names.iter().zip(results) {
        if !r.info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2) {
            continue;
        }
        // An SLL2 capture holds indexes, split or not (one interface, an end host).
        any = true;
        // The interfaces of a split capture's requests (a field of each request at a side).
        let mut indexes: Vec<u32> = (r.points.iter())
            .filter(|(k, _, _)| k.is_some())
            .flat_map(|(_, flows, _)| flows.flows.iter().map(|f| f.first_interface))
            .collect();
        indexes.sort_unstable();
        indexes.dedup();
        let missing: Vec<String> =
            indexes.iter().filter(|i| !links.contains_key(i)).map(|i| format!("if{i}")).collect();
        if !missing.is_empty() {
            out.push(warning(
                label,
                file,
                format!(
                    "the interface names given to --names (ip link output) name no interface {} of this capture",
                    missing.join(", ")
                ),
                "those interfaces keep their index as name (`ifN`); give the `ip -o link` of the host this capture was \
                 taken on",
            ));
        }
    }
    if !any {
        // named after the capture split into sub-points (else the first)
        let split = results.iter().position(|r| r.points.len() > 1).unwrap_or(0);
        let (label, file) = names.get(split).map_or(("", ""), |(l, f)| (l.as_str(), f.as_str()));
        out.push(warning(
            label,
            file,
            "interface names were given to --names (ip link output), but no capture holds interface indexes they \
             could name (only LINUX_SLL2, `tcpdump -i any -y LINUX_SLL2`, carries them; LINUX_SLL carries none)"
                .into(),
            "the names are not used; a request's interface at a side is named by the pcapng interface name, else \
             by its number",
        ));
    }
    out
}

/// What the verdict stage is told of each observation point of `results`.
pub(crate) fn capture_metas(
    names: &[(String, String)],
    results: &[CaptureResult],
    links: &Links,
) -> Vec<CaptureMeta> {
    metas_of(names, &expand(names, results, links))
}

fn metas_of(names: &[(String, String)], points: &[PointOf<'_>]) -> Vec<CaptureMeta> {
    points
        .iter()
        .map(|p| {
            let r = p.result;
            let mut link_types: Vec<String> = Vec::new();
            for i in &r.info.interfaces {
                let name = i.link_type.name();
                if !link_types.contains(&name) {
                    link_types.push(name);
                }
            }
            CaptureMeta {
                label: p.label.clone(),
                file: names[p.source].1.clone(),
                format: r.info.format.name().to_string(),
                link_types,
                packets: r.points[p.n].2,
                overlays: r.overlays.get(p.n).cloned().unwrap_or_default(),
                interfaces: p.interfaces.clone(),
                hosts: r.hosts.clone(),
            }
        })
        .collect()
}

/// Correlates the per-capture results (`names`: label and file of each) and
/// builds the findings (and the ladder data when asked).
pub(crate) fn conclude(
    config: &Config,
    names: &[(String, String)],
    results: Vec<CaptureResult>,
    want_ladder: bool,
) -> (Findings, Option<Ladder>) {
    let (findings, ladder, _) = conclude_owning(config, names, results, want_ladder, None);
    (findings, ladder)
}

/// [`conclude`], and with `own` (a stream's window on capture 1's clock) what
/// the window owns of the run's totals (`verdict::window_totals`).
pub(crate) fn conclude_owning(
    config: &Config,
    names: &[(String, String)],
    results: Vec<CaptureResult>,
    want_ladder: bool,
    own: Option<(i64, i64)>,
) -> (Findings, Option<Ladder>, Option<verdict::WindowTotals>) {
    let points = expand(names, &results, &config.link_names);
    let metas = metas_of(names, &points);
    let mut warnings: Vec<Warning> = results.iter().flat_map(|r| r.warnings.iter().cloned()).collect();
    warnings.extend(link_name_warnings(names, &results, &config.link_names));
    let ladder_captures = want_ladder.then(|| ladder_captures(names, &points));
    // A manual offset of a capture holds for each of its points (one clock).
    let mut correlate_config = config.correlate.clone();
    correlate_config.offsets_ns = (config.correlate.offsets_ns.iter())
        .flat_map(|&(c, o)| {
            points.iter().enumerate().filter(move |(_, p)| p.source == c).map(move |(i, _)| (i, o))
        })
        .collect();
    correlate_config.clock_of = points.iter().map(|p| p.source).collect();
    let labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
    let cuts: Vec<Cut> = points.iter().map(|p| p.result.cut).collect();
    if let Some(pinned) = &config.clocks_from {
        let (pins, missing) = shard::resolve_pins(pinned, &labels);
        correlate_config.pinned = Some(pins);
        warnings.extend(missing);
    }
    let files: Vec<String> =
        points.iter().map(|p| names.get(p.source).map(|n| n.1.clone()).unwrap_or_default()).collect();
    let hosts: Vec<Vec<String>> = points.iter().map(|p| p.result.hosts.clone()).collect();
    drop(points);
    let mut flows: Vec<Flows> = results.into_iter().flat_map(|r| r.points.into_iter().map(|p| p.1)).collect();
    // A whole run reads each capture on one clock, across a step of it (a time
    // shard or a stream window holds too little of the capture to tell).
    if config.shard.is_none() {
        // A point captured on several hosts has a clock per host: one clock first.
        let counts: Vec<usize> = hosts.iter().map(Vec::len).collect();
        let host_clocks = crate::clock_steps::correct_hosts(&mut flows, &correlate_config.clock_of, &counts);
        warnings.extend(host_clocks.iter().map(|h| crate::clock_steps::host_warning(h, &labels, &hosts)));
        let steps = crate::clock_steps::correct(&mut flows, &correlate_config.clock_of);
        warnings.extend(steps.iter().map(|s| crate::clock_steps::warning(s, &labels, &files)));
    }
    // A capture that kept only an exchange's answer holds it from the server: turned round.
    correlate::turn_answers(&mut flows);
    // A connection seen without its handshake whose sides a port guess got
    // wrong (another capture's sequence numbers say so): turned round.
    correlate::turn_midstream(&mut flows);
    let correlation = correlate::correlate(&flows, &correlate_config);
    // (chain, point): requests whose flow a point holds apart by its clock
    let mut apart = Vec::new();
    if config.shard.is_none() {
        let unbridged = crate::clock_steps::unlinked(&flows, &correlation, &correlate_config.clock_of);
        // The requests each warning makes unknown, by their numbers in the report.
        let numbers: Vec<u64> = if unbridged.is_empty() {
            Vec::new()
        } else {
            let mut numbers = vec![0; correlation.chains.len()];
            for (n, c) in verdict::request_order(&flows, &correlation).into_iter().enumerate() {
                numbers[c] = n as u64 + 1;
            }
            numbers
        };
        warnings.extend(
            unbridged.iter().map(|u| crate::clock_steps::unbridged_warning(u, &labels, &files, &numbers)),
        );
        apart.extend(unbridged.iter().flat_map(|u| u.chains.iter().map(|&c| (c, u.point))));
        apart.sort_unstable();
    }
    if let Some(pinned) = &config.clocks_from {
        warnings.extend(shard::clock_warnings(&labels, &correlation, &pinned.source));
    }
    if let Some(shard) = &config.shard {
        let skipped = cuts.iter().any(|c| *c != Cut::default());
        // A stream says it in its own words (`stream`).
        if skipped && config.clocks_from.is_none() && labels.len() > 1 && config.stream.is_none() {
            warnings.push(shard::estimated_clock_warning(&labels[0]));
        }
        let udp_idle = config.flows.udp_idle_ns;
        let hold = config.stream.map(|s| s.hold_ns);
        warnings.extend(shard::edge_warnings(shard, &labels, &cuts, &flows, &correlation, udp_idle, hold));
    }
    let options = VerdictOptions {
        list_unmatched: config.list_unmatched,
        part: config.shard.is_some(),
        stopped: config.stopped.clone(),
        apart,
    };
    let (mut findings, totals) =
        verdict::verdict_owning(&metas, &flows, &correlation, &warnings, &options, own);
    crate::fragments::add(&mut findings, &flows, &correlation);
    let ladder = ladder_captures.map(|caps| {
        let order = verdict::request_order(&flows, &correlation);
        ladder::build(caps, &flows, &correlation, &order)
    });
    (findings, ladder, totals)
}

/// The observation points as the ladder data describes them (offsets filled in
/// by `ladder::build`).
fn ladder_captures(names: &[(String, String)], points: &[PointOf<'_>]) -> Vec<LadderCapture> {
    (points.iter())
        .map(|p| LadderCapture {
            label: p.label.clone(),
            file: names[p.source].1.clone(),
            offset_ns: 0,
            interfaces: (p.result.info.interfaces.iter())
                .map(|i| LadderInterface { link_type: i.link_type, snaplen: i.snaplen, name: i.name.clone() })
                .collect(),
            source: p.source,
            capture: names[p.source].0.clone(),
            point: p.key,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_get_a_worker_each_only_without_a_thread_limit_and_beyond_the_workers() {
        assert!(worker_per_point(None, 3, 2));
        assert!(!worker_per_point(None, 2, 2), "one worker a point already");
        assert!(!worker_per_point(None, 3, 8));
        assert!(!worker_per_point(Some(2), 3, 2), "--threads 2 reads two at a time");
        assert!(worker_per_point(None, 2, 1));
    }

    fn info(link_type: LinkType, names: &[Option<&str>]) -> CaptureInfo {
        let interface = |name: &Option<&str>| crate::read::InterfaceInfo {
            link_type,
            snaplen: 262144,
            ts_resolution: "us".into(),
            ts_offset_s: 0,
            name: name.map(str::to_string),
            packets: 0,
        };
        CaptureInfo {
            format: crate::read::Format::Pcapng,
            byte_order: crate::read::ByteOrder::Little,
            gzip: false,
            interfaces: names.iter().map(interface).collect(),
            packets: 0,
            bytes: 0,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn sides_are_named_by_direction_and_interfaces_by_ip_link_names_only_for_sll2_indexes() {
        let links: Links = [(2, "pod0".to_string()), (3, "be0".to_string())].into_iter().collect();
        let none = Links::new();
        let sll2 = info(LinkType::LinuxSll2, &[Some("any")]);
        let ins = 1 << 2;
        assert_eq!(point_name(PointKey::Direction { outgoing: false }), "in");
        assert_eq!(point_name(PointKey::Side { outgoing: true, ins }), "out");
        assert_eq!(interface_label(2, &sll2, &links), "pod0");
        assert_eq!(interface_label(3, &sll2, &links), "be0");
        assert_eq!(interface_label(7, &sll2, &links), "if7", "not named: its index");
        assert_eq!(interface_label(2, &sll2, &none), "if2");
        // read back (--clocks-from): the side, also from an earlier release's `out be0`
        assert_eq!(point_key_named("in", &sll2, &links), Some(PointKey::Direction { outgoing: false }));
        assert_eq!(point_key_named("out be0", &sll2, &none), Some(PointKey::Direction { outgoing: true }));
        assert_eq!(point_key_named("up0", &sll2, &links), None);
        // pcapng interfaces are numbered by the file, not by the kernel: their if_name, never a link name
        let pcapng = info(LinkType::Ethernet, &[Some("eth0"), None, Some("(x)")]);
        assert_eq!(interface_label(0, &pcapng, &links), "eth0");
        assert_eq!(interface_label(1, &pcapng, &links), "if1");
        assert_eq!(interface_label(2, &pcapng, &links), "x");
        // its sides are found again from its copies, not read back
        assert_eq!(point_key_named("in", &pcapng, &links), None);
        let sll = info(LinkType::LinuxSll, &[None]);
        assert_eq!(point_key_named("out", &sll, &links), Some(PointKey::Direction { outgoing: true }));
    }
}
