//! `ip neigh` / `ip -6 neigh` (also `show nud all`, `-s`) → the host's
//! neighbour entries: per address and interface its link-layer address and
//! state, with its line. A packet to a neighbour in `FAILED` or `INCOMPLETE`
//! is held or dropped by the kernel, not sent.

use crate::why::text::{self, Notes};
use std::net::IpAddr;

/// A neighbour entry's state (`NUD_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NeighState {
    /// Resolution sent, no answer yet: packets wait in a small queue.
    Incomplete,
    Reachable,
    Stale,
    Delay,
    Probe,
    /// Resolution failed: packets to it are dropped (ICMP host unreachable).
    Failed,
    /// No resolution needed (multicast, point-to-point).
    Noarp,
    /// Set by hand.
    Permanent,
    /// No state printed (`NUD_NONE`).
    Unset,
}

impl NeighState {
    fn parse(word: &str) -> Option<NeighState> {
        Some(match word {
            "INCOMPLETE" => NeighState::Incomplete,
            "REACHABLE" => NeighState::Reachable,
            "STALE" => NeighState::Stale,
            "DELAY" => NeighState::Delay,
            "PROBE" => NeighState::Probe,
            "FAILED" => NeighState::Failed,
            "NOARP" => NeighState::Noarp,
            "PERMANENT" => NeighState::Permanent,
            "NONE" => NeighState::Unset,
            _ => return None,
        })
    }
}

/// One neighbour line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbour {
    pub line: u32,
    pub addr: IpAddr,
    /// None under `ip neigh show dev X`, which leaves it out.
    pub dev: Option<String>,
    pub lladdr: Option<String>,
    /// The first state printed (iproute2 prints each state bit; the kernel sets one).
    pub state: NeighState,
    /// IPv6: the neighbour said it is a router.
    pub router: bool,
}

/// The entries of one file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Neighbours {
    pub file: String,
    pub entries: Vec<Neighbour>,
}

impl Neighbours {
    /// The state of `addr`'s first entry (on `dev` when given; an entry
    /// without a device matches any) and its line.
    pub fn state(&self, addr: IpAddr, dev: Option<&str>) -> Option<(NeighState, u32)> {
        (self.entries.iter())
            .find(|e| e.addr == addr && (dev.is_none() || e.dev.is_none() || e.dev.as_deref() == dev))
            .map(|e| (e.state, e.line))
    }
}

/// Parses `ip neigh` output.
pub fn parse_neigh(file: &str, input: &str) -> (Neighbours, Notes) {
    let mut notes = Notes::new(file);
    let mut out = Neighbours { file: file.to_string(), ..Neighbours::default() };
    for (n, line) in text::lines(input, &mut notes) {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with('$') {
            continue;
        }
        match entry(n, t) {
            Ok(e) => out.entries.push(e),
            Err(why) => notes.line(n, why),
        }
    }
    (out, notes)
}

fn entry(n: u32, t: &str) -> Result<Neighbour, String> {
    let mut w = t.split_whitespace();
    let first = w.next().ok_or("an empty line")?;
    // `ip neigh show` may print `miss` or `proxy` lists: only addresses are read
    let addr: IpAddr = first.parse().map_err(|_| format!("{first}: not an address"))?;
    let mut e = Neighbour { line: n, addr, dev: None, lladdr: None, state: NeighState::Unset, router: false };
    let mut state = None;
    while let Some(word) = w.next() {
        match word {
            "dev" => e.dev = Some(w.next().ok_or("dev without a name")?.to_string()),
            "lladdr" => e.lladdr = Some(w.next().ok_or("lladdr without an address")?.to_string()),
            "router" => e.router = true,
            // `-s`: `ref 1 used 0/60/0 probes 4` (iproute2 6.1 prints `used 0/60/0probes 4`)
            "proto" | "protocol" | "ref" | "used" | "probes" | "nud" => {
                w.next();
            }
            s => {
                if let Some(st) = NeighState::parse(s) {
                    state.get_or_insert(st);
                }
                // a flag (proxy, extern_learn, offload, managed) or a later word: skipped
            }
        }
    }
    e.state = state.unwrap_or(NeighState::Unset);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip -n NS neigh show nud all` of the lab (`kernel-lab.sh`) 6.3 s after
    /// datagrams to an absent 198.18.10.99 and 2001:db8:20::99, to the peer
    /// 198.18.10.254 and to 198.18.10.18 (a STALE entry with a made-up
    /// address).
    const NEIGH: &str = include_str!("../testdata/kernel-neigh.txt");
    /// `ip -n NS -s neigh show nud all` 0.2 s after them.
    const STATS: &str = include_str!("../testdata/kernel-neigh-stats.txt");

    fn a(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn states_read_with_their_lines() {
        let (n, notes) = parse_neigh("neigh.txt", NEIGH);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        assert_eq!(n.entries.len(), 23);
        assert_eq!(n.state(a("198.18.10.99"), Some("eth0")), Some((NeighState::Failed, 7)));
        assert_eq!(n.state(a("198.18.10.99"), Some("eth1")), None);
        assert_eq!(n.state(a("2001:db8:20::99"), None), Some((NeighState::Failed, 11)));
        assert_eq!(n.state(a("198.18.10.18"), None), Some((NeighState::Probe, 3)));
        assert_eq!(n.state(a("198.18.10.254"), Some("eth0")), Some((NeighState::Reachable, 2)));
        assert_eq!(n.state(a("198.18.10.20"), None), Some((NeighState::Permanent, 1)));
        assert_eq!(n.state(a("198.18.20.17"), None), Some((NeighState::Unset, 5)));
        assert_eq!(n.state(a("ff02::16"), Some("eth0.100")), Some((NeighState::Noarp, 17)));
        let r = &n.entries[20];
        assert_eq!(
            (r.addr, r.router, r.lladdr.as_deref()),
            (a("2001:db8:10::17"), true, Some("02:00:00:00:00:08"))
        );
        let (s, notes) = parse_neigh("stats.txt", STATS);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        assert_eq!(s.state(a("198.18.10.99"), None), Some((NeighState::Incomplete, 6)));
        assert_eq!(s.state(a("198.18.10.18"), None), Some((NeighState::Delay, 3)));
        assert_eq!(s.state(a("198.18.20.17"), None), Some((NeighState::Unset, 4)));
        assert_eq!(s.state(a("198.18.10.20"), None), Some((NeighState::Permanent, 1)));
    }

    #[test]
    fn lines_without_an_address_are_noted() {
        let text =
            "198.18.10.17 lladdr 02:00:00:00:00:02 REACHABLE\nnope dev eth0 FAILED\n198.18.10.1 dev\n\n";
        let (n, notes) = parse_neigh("n", text);
        assert_eq!(notes.list.iter().map(|(l, _)| *l).collect::<Vec<_>>(), [2, 3]);
        // `ip neigh show dev eth0` leaves the device out: any device matches
        assert_eq!(n.state(a("198.18.10.17"), Some("eth0")), Some((NeighState::Reachable, 1)));
    }
}
