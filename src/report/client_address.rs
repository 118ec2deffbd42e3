//! Findings → the summary's "Client address at the backend" section: per
//! service (protocol and server endpoint at capture 1), does the last capture
//! see the client's address (else where it is replaced, by what, by which
//! rule), did the requests that keep it get replies, and is there a proxy on
//! the way. Each statement is read from fields the JSON shows — the
//! captures' `client` and `reply_seen`, `source.changed`, `reply`,
//! `identity` — and names a few of its requests. Counted request by request
//! so that a stream's windows add up to the run's. Never reads captures.

use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Between, ChangeKind, Endpoint, Findings, ReplyPath, Request};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Request numbers named as evidence for one statement.
const SHOWN: usize = 4;

/// Services written out; the others are counted on one line.
const SERVICES: usize = 8;

/// How many requests a statement holds, and the first few of them.
#[derive(Clone, Debug, Default)]
struct Shown {
    count: usize,
    /// The smallest `SHOWN` request numbers, ascending.
    first: Vec<u64>,
}

impl Shown {
    fn add(&mut self, n: u64) {
        self.count += 1;
        let at = self.first.partition_point(|&m| m < n);
        if at < SHOWN {
            self.first.insert(at, n);
            self.first.truncate(SHOWN);
        }
    }

    /// Adds what `other` holds (of other requests).
    fn merge(&mut self, other: Shown) {
        self.count += other.count;
        self.first.extend(other.first);
        self.first.sort_unstable();
        self.first.truncate(SHOWN);
    }

    /// `request 4`, `requests 1, 2, 3`, `requests 1, 2, 3, 4 and 6 more`.
    fn requests(&self) -> String {
        let list: Vec<String> = self.first.iter().map(u64::to_string).collect();
        let word = if self.count == 1 { "request" } else { "requests" };
        let more = self.count - self.first.len();
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!("{word} {}{more}", list.join(", "))
    }
}

/// One source change that moved the client's address: where, its kind, the
/// address after it, and `, by `rule` (file:line)` when `--rules` named it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Moved {
    between: Between,
    kind: &'static str,
    to: IpAddr,
    rule: String,
}

/// What the last capture saw as the request's source.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Address {
    /// The address the first capture saw.
    Kept,
    /// Another: the source changes that moved it, in path order.
    Replaced(Vec<Moved>),
}

/// What came back for a request that kept the client's address.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Back {
    /// `captures[0].reply_seen`.
    Replied,
    /// `reply.path` reply-lost: explain's words for it (where, what can drop it).
    Lost(String),
    /// `reply.path` no-reply: nothing came back at any capture.
    NoReply,
    /// No reply at the first capture otherwise.
    NotAtFirst,
}

/// What stands between the client and the last capture that saw the request.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Hops {
    /// Seen at two captures or more, no source change of kind proxy.
    Forwarded,
    /// The first source change of kind proxy, and what its `identity` says.
    Proxy(Between, Carried),
}

/// Who the backend is told the client is, after a proxy (`identity`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Carried {
    /// No `identity`: no capture saw a carrier.
    Nothing,
    /// `identity.carried` null: none reached `identity.at`.
    NotAt(usize),
    /// The carrier's name, where it is read, and whether it is the client's
    /// address at capture 1 (`identity.preserved`); else the address it carries.
    Carrier { name: &'static str, at: usize, preserved: bool, addr: Option<IpAddr> },
}

/// What one service's requests say.
#[derive(Clone, Debug, Default)]
struct Service {
    /// Its first request (services are written in this order).
    first: u64,
    requests: usize,
    /// Seen at the last capture, by what it saw.
    address: BTreeMap<Address, Shown>,
    /// Not seen at the last capture.
    unreached: Shown,
    /// Not seen at the last capture, which recorded nothing while they ran
    /// (JSON `blind`: its silence is no evidence).
    blind: Shown,
    /// Of the requests that kept the address, by what came back.
    back: BTreeMap<Back, Shown>,
    /// Seen at two captures or more, by what stood between.
    hops: BTreeMap<Hops, Shown>,
}

/// The section's counts: per service (protocol, server endpoint at capture 1).
#[derive(Clone, Debug, Default)]
pub struct ClientTally {
    services: BTreeMap<(&'static str, Endpoint), Service>,
}

impl ClientTally {
    /// Adds the requests of `findings` seen at the first capture (of a run
    /// with two captures or more).
    pub fn add(&mut self, w: &Words<'_>, findings: &Findings) {
        use rayon::prelude::*;
        let counted = (findings.requests.par_iter())
            .fold(ClientTally::default, |mut t, r| {
                t.add_request(w, r);
                t
            })
            .reduce(ClientTally::default, ClientTally::merged);
        *self = std::mem::take(self).merged(counted);
    }

    /// Both tallies in one (of different requests).
    fn merged(mut self, other: ClientTally) -> ClientTally {
        fn each<K: Ord>(into: &mut BTreeMap<K, Shown>, from: BTreeMap<K, Shown>) {
            for (k, v) in from {
                into.entry(k).or_default().merge(v);
            }
        }
        for (key, o) in other.services {
            let s = self.services.entry(key).or_default();
            if s.requests == 0 || (o.requests > 0 && o.first < s.first) {
                s.first = o.first;
            }
            s.requests += o.requests;
            each(&mut s.address, o.address);
            s.unreached.merge(o.unreached);
            s.blind.merge(o.blind);
            each(&mut s.back, o.back);
            each(&mut s.hops, o.hops);
        }
        self
    }

    fn add_request(&mut self, w: &Words<'_>, r: &Request) {
        let (Some(first), Some(last)) = (r.captures.first(), r.captures.last()) else { return };
        let (Some(client), Some(server)) = (first.client, first.server) else { return };
        if r.captures.len() < 2 || !first.seen {
            return;
        }
        let s = self.services.entry((r.proto.wire(), server)).or_default();
        if s.requests == 0 || r.request < s.first {
            s.first = r.request;
        }
        s.requests += 1;
        if r.captures.iter().filter(|h| h.seen).count() >= 2 {
            let hops = match r.source.iter().find(|c| c.kind == ChangeKind::Proxy) {
                Some(c) => Hops::Proxy(c.between, carried(r)),
                None => Hops::Forwarded,
            };
            s.hops.entry(hops).or_default().add(r.request);
        }
        let Some(at_last) = last.client.filter(|_| last.seen) else {
            match r.blind.contains(&(r.captures.len() - 1)) {
                true => s.blind.add(r.request),
                false => s.unreached.add(r.request),
            }
            return;
        };
        if at_last.addr != client.addr {
            let moved = (r.source.iter())
                .filter(|c| c.before.addr != c.after.addr)
                .map(|c| Moved {
                    between: c.between,
                    kind: c.kind.wire(),
                    to: c.after.addr,
                    rule: crate::report::explain::by_rule(w, r, crate::why::attach::Side::Source, c),
                })
                .collect();
            s.address.entry(Address::Replaced(moved)).or_default().add(r.request);
            return;
        }
        s.address.entry(Address::Kept).or_default().add(r.request);
        let back = match (r.reply.path, r.reply.lost_between) {
            (ReplyPath::ReplyLost, Some(b)) => {
                let mut words = crate::report::explain::reply_lost_words(w, r, b);
                if w.why.and_then(|x| x.loss(r.request)).is_some() {
                    words.push_str(" (\"Why requests were lost\" below says why)");
                }
                Back::Lost(words)
            }
            (ReplyPath::NoReply, _) => Back::NoReply,
            _ if first.reply_seen => Back::Replied,
            _ => Back::NotAtFirst,
        };
        s.back.entry(back).or_default().add(r.request);
    }

    /// The section's lines (without its title), or none when no request was counted.
    pub fn lines(&self, w: &Words<'_>) -> Vec<String> {
        let (first, last) =
            (w.labels.first().copied().unwrap_or("?"), w.labels.last().copied().unwrap_or("?"));
        let mut services: Vec<(&(&str, Endpoint), &Service)> = self.services.iter().collect();
        services.sort_by_key(|(_, s)| s.first);
        let mut out = Vec::new();
        for ((proto, server), s) in services.iter().take(SERVICES) {
            out.push(format!("  {proto} {} ({})", w.endpoint(*server), requests(s.requests)));
            let reached: usize = s.address.values().map(|e| e.count).sum();
            // why the last capture tells nothing: no request reached it, or
            // it recorded nothing while they ran
            let unknown = match s.unreached.count {
                0 => format!("unknown, because {last} recorded nothing while they ran (blind: its silence is no evidence)"),
                _ => format!("unknown, because no request reached {last}"),
            };
            let address: Vec<String> = if reached == 0 {
                vec![unknown.clone()]
            } else {
                let mut list: Vec<(usize, String)> = (s.address.iter())
                    .map(|(a, e)| (e.count, format!("{} ({})", address_words(w, a), e.requests())))
                    .collect();
                if s.unreached.count > 0 {
                    list.push((
                        s.unreached.count,
                        format!("not seen at {last} ({})", s.unreached.requests()),
                    ));
                }
                if s.blind.count > 0 {
                    list.push((
                        s.blind.count,
                        format!("unknown: {last} recorded nothing while they ran ({})", s.blind.requests()),
                    ));
                }
                counted(list, s.requests)
            };
            push(&mut out, "address", address);
            let kept = s.address.get(&Address::Kept).map_or(0, |e| e.count);
            let replies: Vec<String> = if reached == 0 {
                vec![unknown]
            } else if kept == 0 {
                vec![format!("untested: no request keeps the client's address at {last}")]
            } else {
                let keep = match kept {
                    1 => "the 1 request that keeps the client's address".to_string(),
                    n => format!("the {n} requests that keep the client's address"),
                };
                let mut list: Vec<(usize, String)> = (s.back.iter())
                    .map(|(b, e)| {
                        let n = e.count;
                        let text = match b {
                            Back::Replied => format!(
                                "replies come back: {n} of {keep} got a reply at {first} ({})",
                                e.requests()
                            ),
                            Back::Lost(words) => {
                                format!("no reply for {n} of {keep} ({}): {words}", e.requests())
                            }
                            Back::NoReply => {
                                format!("no reply at any capture for {n} of {keep} ({})", e.requests())
                            }
                            Back::NotAtFirst => {
                                format!("no reply at {first} for {n} of {keep} ({})", e.requests())
                            }
                        };
                        (n, text)
                    })
                    .collect();
                // most requests first, then in `Back`'s order (replies first)
                list.sort_by_key(|e| std::cmp::Reverse(e.0));
                list.into_iter().map(|(_, t)| t).collect()
            };
            push(&mut out, "return", replies);
            let across: usize = s.hops.values().map(|e| e.count).sum();
            let hops: Vec<String> = if across == 0 {
                vec![format!("unknown, because no request was seen beyond {first}")]
            } else {
                let list = (s.hops.iter()).map(|(h, e)| (e.count, hops_words(w, h, e))).collect();
                counted(list, across)
            };
            push(&mut out, "path", hops);
        }
        if services.len() > SERVICES {
            let rest: usize = services[SERVICES..].iter().map(|(_, s)| s.requests).sum();
            out.push(format!(
                "  and {} more ({}; each request's fields are in the JSON)",
                plural(services.len() - SERVICES, "service"),
                requests(rest)
            ));
        }
        out
    }
}

/// `1 request`, `2 requests`.
fn requests(n: usize) -> String {
    plural(n, "request")
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The statements of a line, most requests first (else in the order given);
/// each prefixed with `N of M requests: ` when there are more than one.
fn counted(mut list: Vec<(usize, String)>, of: usize) -> Vec<String> {
    list.sort_by_key(|e| std::cmp::Reverse(e.0));
    if list.len() == 1 {
        return list.into_iter().map(|(_, t)| t).collect();
    }
    list.into_iter().map(|(n, t)| format!("{n} of {of} requests: {t}")).collect()
}

/// `    address: …` then each further statement under the first.
fn push(out: &mut Vec<String>, lead: &str, lines: Vec<String>) {
    const WIDTH: usize = "address".len();
    for (i, line) in lines.into_iter().enumerate() {
        if i == 0 {
            out.push(format!("    {:<w$} {line}", format!("{lead}:"), w = WIDTH + 1));
        } else {
            out.push(format!("    {:<w$} {line}", "", w = WIDTH + 1));
        }
    }
}

fn address_words(w: &Words<'_>, a: &Address) -> String {
    let Address::Replaced(moved) = a else {
        return "the backend sees the client's address".to_string();
    };
    let steps: Vec<String> = (moved.iter())
        .map(|m| {
            let what = match m.kind {
                "proxy" => format!("proxy, new connection from {}", w.addr(m.to)),
                kind => format!("{kind} to {}", w.addr(m.to)),
            };
            format!("between {}: {what}{}", w.between_words(m.between), m.rule)
        })
        .collect();
    match steps.is_empty() {
        // the last capture saw another address and no change says where
        true => "the client's address is replaced (no source change says where)".to_string(),
        false => format!("the client's address is replaced {}", steps.join("; then ")),
    }
}

fn hops_words(w: &Words<'_>, h: &Hops, e: &Shown) -> String {
    let Hops::Proxy(b, carried) = h else {
        return format!("no proxy seen ({})", e.requests());
    };
    let mut text = format!(
        "a proxy between {} opens its own connection (change kind proxy; {})",
        w.between_words(*b),
        e.requests()
    );
    text.push_str(&match carried {
        Carried::Nothing => "; no PROXY protocol or forwarding header seen".to_string(),
        Carried::NotAt(at) => format!("; no PROXY protocol or forwarding header reached {}", w.label(*at)),
        Carried::Carrier { name, at, preserved: true, .. } => {
            format!("; {name} carries the client's address to {} (identity preserved)", w.label(*at))
        }
        Carried::Carrier { name, at, preserved: false, addr } => format!(
            "; the {name} {} reads carries {}, not the client's address (identity not preserved)",
            w.label(*at),
            addr.map_or_else(|| "an unknown address".to_string(), |a| w.addr(a))
        ),
    });
    text
}

fn carried(r: &Request) -> Carried {
    let Some(i) = r.identity.as_deref() else { return Carried::Nothing };
    match i.carried {
        None => Carried::NotAt(i.at),
        Some(c) => Carried::Carrier {
            name: crate::report::explain::carrier_name(c.kind),
            at: i.at,
            preserved: i.preserved,
            // the client's own when preserved: one statement for many clients
            addr: c.addr.filter(|_| !i.preserved),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{ep, findings, proxied_identity, unseen};
    use crate::verdict::{Between, Change, ReplyPath};

    /// The section's lines for these requests of the fixtures' run.
    fn section(requests: Vec<Request>) -> Vec<String> {
        let mut f = findings();
        f.requests = requests;
        let w = Words::new(&f);
        let mut t = ClientTally::default();
        t.add(&w, &f);
        t.lines(&w)
    }

    /// Request `n` (1: tcp to :80, snat egress->backend, replied; 2: the
    /// same, its reply lost between egress and backend) keeping the
    /// client's address: the backend sees what decap saw, no source change.
    fn kept(n: usize) -> Request {
        let mut r = findings().requests[n - 1].clone();
        r.captures[2].client = r.captures[0].client;
        r.source.clear();
        r
    }

    const LOST: &str = "reply seen at backend but not at egress: a return route, the reverse-path filter or a \
                        filter rule between them (--routes, --sysctl, --rules 'egress->backend=…' decide which)";

    #[test]
    fn the_backend_seeing_the_client_and_its_replies_coming_back() {
        assert_eq!(
            section(vec![kept(1)]),
            [
                "  tcp 198.19.96.10:80 (1 request)",
                "    address: the backend sees the client's address (request 1)",
                "    return:  replies come back: 1 of the 1 request that keeps the client's address got a reply at decap (request 1)",
                "    path:    no proxy seen (request 1)",
            ]
        );
    }

    #[test]
    fn snat_replaces_the_client_and_leaves_the_return_route_untested() {
        let f = findings();
        let (r1, mut r2) = (f.requests[0].clone(), f.requests[1].clone());
        r2.reply.path = ReplyPath::SamePath;
        r2.reply.lost_between = None;
        assert_eq!(
            section(vec![r1, r2]),
            [
                "  tcp 198.19.96.10:80 (2 requests)",
                "    address: the client's address is replaced between egress and backend: snat to 198.19.3.17 (requests 1, 2)",
                "    return:  untested: no request keeps the client's address at backend",
                "    path:    no proxy seen (requests 1, 2)",
            ]
        );
    }

    #[test]
    fn a_proxy_is_named_with_the_identity_it_carries() {
        let mut r = findings().requests[0].clone();
        let b = |from, to| Between { from, to };
        r.source = vec![
            Change {
                between: b(0, 1),
                kind: ChangeKind::Proxy,
                before: ep("198.18.90.42:51514"),
                after: ep("198.18.10.2:33000"),
            },
            Change {
                between: b(1, 2),
                kind: ChangeKind::Snat,
                before: ep("198.18.10.2:33000"),
                after: ep("198.19.3.17:40112"),
            },
        ];
        r.identity = Some(Box::new(proxied_identity()));
        let mut bare = r.clone();
        bare.request = 2;
        bare.identity = None;
        assert_eq!(
            section(vec![r, bare]),
            [
                "  tcp 198.19.96.10:80 (2 requests)",
                "    address: the client's address is replaced between decap and egress: proxy, new connection from \
                 198.18.10.2; then between egress and backend: snat to 198.19.3.17 (requests 1, 2)",
                "    return:  untested: no request keeps the client's address at backend",
                "    path:    1 of 2 requests: a proxy between decap and egress opens its own connection (change kind \
                 proxy; request 2); no PROXY protocol or forwarding header seen",
                "             1 of 2 requests: a proxy between decap and egress opens its own connection (change kind \
                 proxy; request 1); PROXY v1 carries the client's address to backend (identity preserved)",
            ]
        );
    }

    #[test]
    fn replies_missing_for_kept_addresses_are_said_in_the_explanations_words() {
        let lines = section(vec![kept(1), kept(2)]);
        assert_eq!(
            lines,
            [
                "  tcp 198.19.96.10:80 (2 requests)".to_string(),
                "    address: the backend sees the client's address (requests 1, 2)".to_string(),
                "    return:  replies come back: 1 of the 2 requests that keep the client's address got a reply at \
                 decap (request 1)"
                    .to_string(),
                format!("             no reply for 1 of the 2 requests that keep the client's address (request 2): {LOST}"),
                "    path:    no proxy seen (requests 1, 2)".to_string(),
            ]
        );
        // the explanation of request 2 says the same of its reply
        let f = findings();
        let text = crate::report::explain::explain(&Words::new(&f), &kept(2));
        assert!(text.contains(LOST), "{text}");
    }

    #[test]
    fn no_request_at_the_last_capture_leaves_address_and_return_unknown() {
        let mut r = kept(1);
        r.captures[2] = unseen(false);
        r.reply.reached = Some(1);
        let mut alone = kept(1);
        alone.request = 2;
        alone.captures = vec![alone.captures[0].clone(), unseen(false), unseen(false)];
        assert_eq!(
            section(vec![r, alone]),
            [
                "  tcp 198.19.96.10:80 (2 requests)",
                "    address: unknown, because no request reached backend",
                "    return:  unknown, because no request reached backend",
                "    path:    no proxy seen (request 1)",
            ]
        );
    }

    #[test]
    fn requests_that_disagree_are_each_counted_and_services_kept_apart() {
        let f = findings();
        let mut udp = kept(1);
        udp.request = 9;
        udp.proto = crate::verdict::Proto::Udp;
        for h in &mut udp.captures {
            h.server = Some(ep("198.19.96.10:9000"));
        }
        let mut late = kept(1);
        late.request = 3;
        late.captures[2] = unseen(false);
        let lines = section(vec![kept(1), f.requests[1].clone(), late, udp]);
        assert_eq!(
            lines[..4],
            [
                "  tcp 198.19.96.10:80 (3 requests)",
                "    address: 1 of 3 requests: the backend sees the client's address (request 1)",
                "             1 of 3 requests: the client's address is replaced between egress and backend: snat to \
                 198.19.3.17 (request 2)",
                "             1 of 3 requests: not seen at backend (request 3)",
            ]
        );
        assert_eq!(
            lines[4..7],
            [
                "    return:  replies come back: 1 of the 1 request that keeps the client's address got a reply at \
                 decap (request 1)",
                "    path:    no proxy seen (requests 1, 2, 3)",
                "  udp 198.19.96.10:9000 (1 request)",
            ]
        );
    }

    #[test]
    fn a_few_requests_are_named_and_the_rest_counted() {
        let mut e = Shown::default();
        for n in [9, 3, 7, 1, 5, 2] {
            e.add(n);
        }
        assert_eq!(e.requests(), "requests 1, 2, 3, 5 and 2 more");
    }

    #[test]
    fn tallies_of_parts_merge_into_the_tally_of_the_whole() {
        let mut e = Shown::default();
        let mut other = Shown::default();
        for n in [9, 3, 7] {
            e.add(n);
        }
        for n in [1, 5, 2] {
            other.add(n);
        }
        e.merge(other);
        assert_eq!(e.requests(), "requests 1, 2, 3, 5 and 2 more");
        // the fixtures' run in one part, and request by request (windows)
        let f = findings();
        let w = Words::new(&f);
        let mut whole = ClientTally::default();
        whole.add(&w, &f);
        let mut parts = ClientTally::default();
        for r in f.requests.iter().rev() {
            parts.add(&w, &Findings { requests: vec![r.clone()], ..f.clone() });
        }
        assert!(!whole.lines(&w).is_empty());
        assert_eq!(parts.lines(&w), whole.lines(&w));
    }

    #[test]
    fn a_last_capture_that_recorded_nothing_is_no_evidence_the_requests_stopped() {
        let mut r = kept(1);
        r.captures[2].seen = false;
        r.captures[2].client = None;
        r.blind = vec![2];
        let lines = section(vec![r.clone()]);
        let blind =
            "unknown, because backend recorded nothing while they ran (blind: its silence is no evidence)";
        assert_eq!(lines[1], format!("    address: {blind}"), "{lines:?}");
        assert_eq!(lines[2], format!("    return:  {blind}"), "{lines:?}");
        // beside a request the backend saw
        let mut seen = kept(2);
        seen.request = 2;
        let lines = section(vec![r, seen]);
        assert!(
            lines.iter().any(|l| l
                .ends_with("1 of 2 requests: unknown: backend recorded nothing while they ran (request 1)")),
            "{lines:?}"
        );
    }

    #[test]
    fn one_capture_or_no_request_says_nothing() {
        let f = findings();
        let w = Words::new(&f);
        let mut t = ClientTally::default();
        t.add(&w, &Findings { requests: Vec::new(), ..f.clone() });
        assert!(t.lines(&w).is_empty());
        let mut one = f.clone();
        for r in &mut one.requests {
            r.captures.truncate(1);
        }
        t.add(&w, &one);
        assert!(t.lines(&w).is_empty());
    }
}
