//! `conntrack -L` and `conntrack -E` lines (with or without `-o
//! timestamp,extended`) → the kernel's translation records: per entry its
//! original and reply tuples, the event, the time, the line. Strict: a line
//! that is not one entry is noted by number and left out.

use super::text::{self, Notes};
use std::collections::HashMap;
use std::net::IpAddr;

/// One direction of a connection: `src dst sport dport` (ICMP: the echo id as both ports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuple {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: Option<u16>,
    pub dport: Option<u16>,
}

/// `conntrack -E`'s event; None for a `conntrack -L` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    New,
    Update,
    Destroy,
}

/// One entry or event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub line: u32,
    pub event: Option<Event>,
    /// `-o timestamp`: when the event was seen, ns since the Unix epoch.
    pub time_ns: Option<i64>,
    pub proto: u8,
    pub orig: Tuple,
    pub reply: Tuple,
}

/// The entries of one file, found by their original tuple.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub file: String,
    pub entries: Vec<Entry>,
    by_orig: HashMap<(u8, Tuple), Vec<usize>>,
}

/// What the kernel recorded for one translation seen in the captures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// An entry whose original and reply tuples are the captures' before and after.
    Confirms(&'a Entry),
    /// An entry for the same original tuple whose reply tuple is another.
    Disagrees(&'a Entry),
    None,
}

impl Table {
    /// The entry for a connection seen as `orig` before the host and whose
    /// reply, after the host, goes `reply`.
    pub fn find(&self, proto: u8, orig: Tuple, reply: Tuple) -> Record<'_> {
        self.first_where(proto, orig, |e| e.reply == reply)
    }

    /// The entry for a connection seen as `orig` before the host that the
    /// host sent to a local proxy: confirmed when its reply comes from
    /// another endpoint than the one the client addressed (the kernel
    /// redirected it); an entry replying from that endpoint disagrees.
    pub fn redirected(&self, proto: u8, orig: Tuple) -> Record<'_> {
        self.first_where(proto, orig, |e| (e.reply.src, e.reply.sport) != (orig.dst, orig.dport))
    }

    /// The first entry of original tuple `orig` that `agrees`; else the first
    /// of that tuple, which disagrees.
    fn first_where(&self, proto: u8, orig: Tuple, agrees: impl Fn(&Entry) -> bool) -> Record<'_> {
        let Some(list) = self.by_orig.get(&(proto, orig)) else { return Record::None };
        match list.iter().map(|&i| &self.entries[i]).find(|e| agrees(e)) {
            Some(e) => Record::Confirms(e),
            None => list.first().map_or(Record::None, |&i| Record::Disagrees(&self.entries[i])),
        }
    }
}

/// Parses `conntrack -L` / `-E` output.
pub fn parse(file: &str, input: &str) -> (Table, Notes) {
    let mut notes = Notes::new(file);
    let mut table = Table { file: file.to_string(), ..Table::default() };
    for (n, line) in text::lines(input, &mut notes) {
        let l = line.trim();
        if l.is_empty() || (l.starts_with("conntrack v") && l.contains(" have been shown")) {
            continue;
        }
        match entry(n, l) {
            Ok(e) => {
                let i = table.entries.len();
                table.by_orig.entry((e.proto, e.orig)).or_default().push(i);
                table.entries.push(e);
            }
            Err(why) => notes.line(n, why),
        }
    }
    (table, notes)
}

/// A tuple being read: src, dst, sport, dport.
type Partial = (Option<IpAddr>, Option<IpAddr>, Option<u16>, Option<u16>);

fn entry(n: u32, line: &str) -> Result<Entry, String> {
    let mut w = line.split_whitespace().peekable();
    let mut time_ns = None;
    let mut event = None;
    while let Some(t) = w.peek().copied() {
        let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) else { break };
        match inner {
            "NEW" => event = Some(Event::New),
            "UPDATE" => event = Some(Event::Update),
            "DESTROY" => event = Some(Event::Destroy),
            ts => {
                time_ns = Some(timestamp(ts).ok_or_else(|| format!("[{ts}] is not an event or a timestamp"))?)
            }
        }
        w.next();
    }
    // `ipv4 2` (extended)
    if matches!(w.peek(), Some(&"ipv4" | &"ipv6")) {
        w.next();
        w.next();
    }
    let name = w.next().ok_or("an empty entry")?;
    let proto: u8 = w.next().and_then(|p| p.parse().ok()).ok_or("no protocol number after the protocol")?;
    if super::model::proto_number(name).is_some_and(|p| p != proto) && name != "unknown" {
        return Err(format!("protocol {name} with number {proto}"));
    }
    let mut tuples: Vec<Partial> = Vec::new();
    let mut cur = (None, None, None, None);
    for t in w {
        let Some((k, v)) = t.split_once('=') else {
            continue; // timeout, state, [ASSURED], [UNREPLIED]
        };
        match k {
            "src" => {
                if cur.0.is_some() {
                    tuples.push(cur);
                    cur = (None, None, None, None);
                }
                cur.0 = Some(v.parse().map_err(|_| format!("src={v} is not an address"))?);
            }
            "dst" => cur.1 = Some(v.parse().map_err(|_| format!("dst={v} is not an address"))?),
            "sport" => cur.2 = Some(v.parse().map_err(|_| format!("sport={v} is not a port"))?),
            "dport" => cur.3 = Some(v.parse().map_err(|_| format!("dport={v} is not a port"))?),
            "id" if proto == 1 || proto == 58 => {
                let id: u16 = v.parse().map_err(|_| format!("id={v} is not an ICMP id"))?;
                (cur.2, cur.3) = (Some(id), Some(id));
            }
            _ => {}
        }
    }
    if cur.0.is_some() {
        tuples.push(cur);
    }
    let tuple = |t: &Partial| -> Result<Tuple, String> {
        Ok(Tuple { src: t.0.ok_or("no src=")?, dst: t.1.ok_or("no dst=")?, sport: t.2, dport: t.3 })
    };
    if tuples.len() != 2 {
        return Err(format!("{} tuples (src=… dst=…), not an original and a reply", tuples.len()));
    }
    Ok(Entry { line: n, event, time_ns, proto, orig: tuple(&tuples[0])?, reply: tuple(&tuples[1])? })
}

/// `1700000000.123456` → ns.
fn timestamp(t: &str) -> Option<i64> {
    let (s, frac) = t.split_once('.').unwrap_or((t, "0"));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = s.parse().ok()?;
    let frac_ns: i64 = format!("{frac:0<9}").parse().ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENTS: &str = "\
[1764756000.123456]\t    [NEW] tcp      6 120 SYN_SENT src=198.18.90.42 dst=198.19.96.10 sport=40001 dport=80 [UNREPLIED] src=198.19.96.10 dst=198.19.3.17 sport=80 dport=40001
[1764756000.124000]\t [UPDATE] tcp      6 60 SYN_RECV src=198.18.90.42 dst=198.19.96.10 sport=40001 dport=80 src=198.19.96.10 dst=198.19.3.17 sport=80 dport=40001
[1764756000.200000]\t    [NEW] udp      17 30 src=198.18.90.43 dst=198.19.96.10 sport=5353 dport=9000 [UNREPLIED] src=198.19.96.10 dst=198.19.3.17 sport=9000 dport=1024
[1764756000.300000]\t    [NEW] icmp     1 30 src=198.18.90.42 dst=198.19.96.10 type=8 code=0 id=777 [UNREPLIED] src=198.19.96.10 dst=198.19.3.17 type=0 code=0 id=777
[1764756001.000000]\t[DESTROY] tcp      6 src=198.18.90.42 dst=198.19.96.10 sport=40001 dport=80 src=198.19.96.10 dst=198.19.3.17 sport=80 dport=40001 [ASSURED] delta-time=1
    [NEW] ipv4     2 tcp      6 120 SYN_SENT src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 [UNREPLIED] src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 mark=0 zone=0
tcp      6 431999 ESTABLISHED src=2001:db8:90::42 dst=2001:db8:96::10 sport=40001 dport=80 src=2001:db8:96::10 dst=2001:db8:3::17 sport=80 dport=40001 [ASSURED] mark=0 use=1
conntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.
conntrack v1.4.7 (conntrack-tools): 7 flow events have been shown.
";

    fn t(src: &str, sport: u16, dst: &str, dport: u16) -> Tuple {
        Tuple { src: src.parse().unwrap(), dst: dst.parse().unwrap(), sport: Some(sport), dport: Some(dport) }
    }

    #[test]
    fn events_and_list_lines_read_with_their_tuples_times_and_lines() {
        let (table, notes) = parse("ct.log", EVENTS);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        assert_eq!(table.entries.len(), 7);
        let e = &table.entries[0];
        assert_eq!(
            (e.line, e.event, e.time_ns, e.proto),
            (1, Some(Event::New), Some(1_764_756_000_123_456_000), 6)
        );
        assert_eq!(e.reply, t("198.19.96.10", 80, "198.19.3.17", 40001));
        assert_eq!(table.entries[4].event, Some(Event::Destroy));
        assert_eq!(table.entries[3].orig.sport, Some(777));
        assert_eq!(table.entries[6].event, None);
        // found by the captures' tuples: the first event that agrees
        let found = table.find(
            6,
            t("198.18.90.42", 40001, "198.19.96.10", 80),
            t("198.19.96.10", 80, "198.19.3.17", 40001),
        );
        assert!(matches!(found, Record::Confirms(e) if e.line == 1));
        // the capture saw port 5353 kept; the kernel chose 1024
        let found = table.find(
            17,
            t("198.18.90.43", 5353, "198.19.96.10", 9000),
            t("198.19.96.10", 9000, "198.19.3.17", 5353),
        );
        assert!(matches!(found, Record::Disagrees(e) if e.line == 3));
        assert_eq!(
            table.find(17, t("1.1.1.1", 1, "2.2.2.2", 2), t("2.2.2.2", 2, "1.1.1.1", 1)),
            Record::None
        );
    }

    #[test]
    fn a_connection_sent_to_a_local_proxy_is_confirmed_by_a_reply_from_another_endpoint() {
        let text = "\
[1796429379.714638]\t    [NEW] tcp      6 120 SYN_SENT src=198.18.90.42 dst=198.19.96.10 sport=40001 dport=80 [UNREPLIED] src=198.18.90.1 dst=198.18.90.42 sport=3128 dport=40001
[1796429379.717301]\t    [NEW] tcp      6 120 SYN_SENT src=198.18.10.2 dst=198.19.96.10 sport=56984 dport=80 [UNREPLIED] src=198.19.96.10 dst=198.18.10.2 sport=80 dport=56984
";
        let (table, notes) = parse("ct.log", text);
        assert!(notes.list.is_empty());
        let client = t("198.18.90.42", 40001, "198.19.96.10", 80);
        assert!(matches!(table.redirected(6, client), Record::Confirms(e) if e.line == 1));
        // the proxy's own connection was not redirected: its entry replies from the server
        let upstream = t("198.18.10.2", 56984, "198.19.96.10", 80);
        assert!(matches!(table.redirected(6, upstream), Record::Disagrees(e) if e.line == 2));
        assert_eq!(table.redirected(17, client), Record::None);
    }

    #[test]
    fn lines_that_are_not_one_entry_are_named() {
        let text = "tcp 6 120 src=1.1.1.1 dst=2.2.2.2 sport=1 dport=2\n[NEW] tcp 17 1 src=1.1.1.1 dst=2.2.2.2 src=2.2.2.2 dst=1.1.1.1\n\
            [12x] tcp 6 src=1.1.1.1 dst=2.2.2.2 src=2.2.2.2 dst=1.1.1.1\ntcp 6 src=1.1.1.1 dst=nope src=2.2.2.2 dst=1.1.1.1\n\
            tcp 6 src=1.1.1.1 dst=2.2.2.2 src=2.2.2.2 dst=1.1.1.1\n";
        let (table, notes) = parse("c", text);
        let lines: Vec<u32> = notes.list.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 3, 4], "{:?}", notes.messages());
        assert_eq!(table.entries.len(), 1);
        assert_eq!(timestamp("1.5"), Some(1_500_000_000));
        assert_eq!(timestamp("99999999999999999999.1"), None);
    }
}
