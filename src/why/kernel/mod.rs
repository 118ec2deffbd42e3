//! A Linux host's routing state, read as untrusted text, to explain why its
//! kernel dropped a packet: the policy rules and routes (`ip rule`, `ip -6
//! rule`, `ip route show table all`), the neighbours (`ip neigh`) and the
//! sysctl settings of forwarding and source validation (`sysctl -a`); and
//! the kernel's reverse-path check (`fib_validate_source`) over them. Takes
//! text; gives the parsed state, every item with its line (a line not read
//! is noted by number), fib lookups, and the check's verdict with the lines
//! that decided it.

pub mod neigh;
pub mod route;
pub mod sysctl;

pub use neigh::{parse_neigh, NeighState, Neighbour, Neighbours};
pub use route::{parse_routes, Lookup, PolicyRule, Route, RouteKind, Routes, RuleAction, TableId};
pub use sysctl::{parse_sysctl, Flag, Key, RpFilter, Sysctl};

use std::net::IpAddr;

/// Why the reverse-path check drops a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpDrop {
    /// No route back to the source: none found, or a blackhole, unreachable
    /// or prohibit one (strict and loose alike).
    NoRouteBack,
    /// Strict: the route back to the source leaves by another interface.
    WrongInterface,
    /// The source is one of the host's own addresses and `accept_local` is off.
    LocalSource,
    /// The route back to the source is a broadcast, multicast or anycast one.
    InvalidSource,
    /// The arriving interface has no IPv4 address (strict and loose alike).
    NoAddress,
}

/// The verdict of the reverse-path check on one packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpCheck {
    /// Accepted: `mode` 0, or the route back (line `route`) satisfies it.
    Pass { mode: u8, sysctl_lines: Vec<u32>, route: Option<u32> },
    /// IPv6: the kernel has no reverse-path filter for IPv6 (only
    /// netfilter's, `-m rpfilter` or nft `fib saddr . iif oif missing`).
    NotApplicable,
    /// Dropped; `route` is the line of the route (or rule) back, `leaves_by`
    /// the interfaces that route leaves by.
    Drop { mode: u8, reason: RpDrop, sysctl_lines: Vec<u32>, route: Option<u32>, leaves_by: Option<String> },
    /// The files do not say enough.
    Unknown { why: String },
}

/// The kernel's source validation (`fib_validate_source`) of an IPv4 packet
/// from `src` to `dst` arriving on `iif` with firewall mark `mark`:
///
/// - the mode is `rp_filter` of `iif` (max of conf/all and conf/IFACE);
///   mode 0 passes, unless the source is one of the host's own addresses
///   (a `local` route of table local) and `accept_local` is off;
/// - otherwise the kernel looks up a route to `src` from `dst`, as arriving
///   on the interface the packet itself leaves by (`lo` for a packet to the
///   host; as here when the packet has no route at all), with no output
///   interface, and with the packet's mark only when `src_valid_mark` of
///   `iif` (conf/all OR conf/IFACE) is on, else mark 0;
/// - no route, or a blackhole, unreachable or prohibit one, drops (strict and
///   loose); a broadcast, multicast or anycast route drops; a local route
///   drops unless `accept_local`;
/// - a route that leaves by `iif` (or one of whose nexthops does) passes;
///   else, an `iif` without an IPv4 address (none in table local) drops;
///   strict (1) drops; loose (2) passes.
///
/// A setting not in the file that could change the verdict gives Unknown,
/// as does a policy rule passed over (see [`Lookup::unsure`]). Martian
/// checks outside this function (multicast or loopback sources) and IPsec
/// (which skips the check) are not modelled.
pub fn reverse_path(
    routes: &Routes,
    sysctl: &Sysctl,
    src: IpAddr,
    dst: IpAddr,
    iif: &str,
    mark: u32,
) -> RpCheck {
    match (src.is_ipv6(), dst.is_ipv6()) {
        (true, true) => return RpCheck::NotApplicable,
        (false, false) => {}
        _ => return RpCheck::Unknown { why: format!("{src} and {dst} are of two families") },
    }
    let Some(rp) = sysctl.rp_filter(iif) else {
        return RpCheck::Unknown {
            why: format!(
                "{} has neither net.ipv4.conf.all.rp_filter nor net.ipv4.conf.{}.rp_filter",
                sysctl.file,
                iif.replace('.', "/")
            ),
        };
    };
    if !routes.routes.iter().any(|r| r.dst.addr.is_ipv4()) {
        return RpCheck::Unknown { why: format!("{} holds no IPv4 route", routes.file) };
    }
    let outcomes: Vec<(u8, RpCheck)> = rp
        .possible()
        .into_iter()
        .map(|m| (m, check(m, &rp.lines, routes, sysctl, src, dst, iif, mark)))
        .collect();
    let same =
        outcomes.windows(2).all(|w| std::mem::discriminant(&w[0].1) == std::mem::discriminant(&w[1].1));
    if same {
        return outcomes.into_iter().next().map_or(RpCheck::Unknown { why: "no mode".into() }, |(_, c)| c);
    }
    let lines: Vec<String> = rp.lines.iter().map(|l| format!("{}:{l}", sysctl.file)).collect();
    let each: Vec<String> =
        outcomes.iter().map(|(m, c)| format!("mode {m}: {}", describe(c, &routes.file))).collect();
    RpCheck::Unknown {
        why: format!(
            "rp_filter of {iif} is {} or more ({}; conf/all or conf/{iif} is not in the file): {}",
            rp.mode,
            lines.join(", "),
            each.join("; ")
        ),
    }
}

/// One verdict in words, for an Unknown that names what each mode would do.
fn describe(c: &RpCheck, routes_file: &str) -> String {
    match c {
        RpCheck::Pass { .. } => "passes".into(),
        RpCheck::NotApplicable => "not applicable".into(),
        RpCheck::Drop { reason, route, leaves_by, .. } => {
            let at = route.map(|l| format!(" ({routes_file}:{l})")).unwrap_or_default();
            let by = leaves_by.as_ref().map(|d| format!(", leaves by {d}")).unwrap_or_default();
            format!("drops, {reason:?}{at}{by}")
        }
        RpCheck::Unknown { why } => why.clone(),
    }
}

/// The check with `mode` in effect.
#[allow(clippy::too_many_arguments)]
fn check(
    mode: u8,
    rp_lines: &[u32],
    routes: &Routes,
    sysctl: &Sysctl,
    src: IpAddr,
    dst: IpAddr,
    iif: &str,
    mark: u32,
) -> RpCheck {
    let mut lines = rp_lines.to_vec();
    let done = |mut lines: Vec<u32>| {
        lines.sort_unstable();
        lines.dedup();
        lines
    };
    let accept_local = |lines: &mut Vec<u32>| -> Result<bool, String> {
        match sysctl.accept_local(iif) {
            Some(f) if f.on || f.certain => {
                lines.extend(&f.lines);
                Ok(f.on)
            }
            _ => Err(format!(
                "{src} is the host's own address: dropped unless accept_local, which {} does not give for {iif}",
                sysctl.file
            )),
        }
    };
    if mode == 0 {
        let Some(local) = routes.is_local(src) else {
            return RpCheck::Pass { mode, sysctl_lines: done(lines), route: None };
        };
        return match accept_local(&mut lines) {
            Ok(true) => RpCheck::Pass { mode, sysctl_lines: done(lines), route: None },
            Ok(false) => RpCheck::Drop {
                mode,
                reason: RpDrop::LocalSource,
                sysctl_lines: done(lines),
                route: Some(local),
                leaves_by: None,
            },
            Err(why) => RpCheck::Unknown { why },
        };
    }
    // the reverse lookup's input interface: the one the packet leaves by
    let back_iif = match routes.lookup(dst, Some(src), Some(iif), mark) {
        Lookup::Route { route, .. } if route.kind == RouteKind::Unicast => {
            route.devs().first().map_or_else(|| "lo".to_string(), |d| d.to_string())
        }
        _ => "lo".to_string(),
    };
    let back_mark = if mark == 0 {
        0
    } else {
        match sysctl.src_valid_mark(iif) {
            Some(f) if f.on || f.certain => {
                lines.extend(&f.lines);
                if f.on {
                    mark
                } else {
                    0
                }
            }
            _ => {
                return RpCheck::Unknown {
                    why: format!(
                        "the route back uses mark {mark:#x} only with src_valid_mark, which {} does not give for {iif}",
                        sysctl.file
                    ),
                }
            }
        }
    };
    let back = routes.lookup(src, Some(dst), Some(&back_iif), back_mark);
    if !back.unsure().is_empty() {
        let at: Vec<String> = back.unsure().iter().map(|l| format!("{}:{l}", routes.file)).collect();
        return RpCheck::Unknown {
            why: format!(
                "the route back to {src} passes rules with selectors not evaluated ({})",
                at.join(", ")
            ),
        };
    }
    let drop = |reason, lines, route: Option<&Route>, line: Option<u32>| RpCheck::Drop {
        mode,
        reason,
        sysctl_lines: done(lines),
        route: route.map(|r| r.line).or(line),
        leaves_by: route.map(|r| r.devs().join(",")).filter(|d| !d.is_empty()),
    };
    let route = match back {
        Lookup::NoRoute { .. } => return drop(RpDrop::NoRouteBack, lines, None, None),
        Lookup::Refused { line, .. } => return drop(RpDrop::NoRouteBack, lines, None, Some(line)),
        Lookup::Route { route, .. } => route,
    };
    match route.kind {
        RouteKind::Local => match accept_local(&mut lines) {
            Ok(true) => {}
            Ok(false) => return drop(RpDrop::LocalSource, lines, Some(route), None),
            Err(why) => return RpCheck::Unknown { why },
        },
        RouteKind::Unicast => {}
        _ => return drop(RpDrop::InvalidSource, lines, Some(route), None),
    }
    if route.uses_dev(iif) || (route.kind == RouteKind::Local && iif == "lo") {
        return RpCheck::Pass { mode, sysctl_lines: done(lines), route: Some(route.line) };
    }
    if routes.has_local_of(false) && !routes.has_address(iif, false) {
        return drop(RpDrop::NoAddress, lines, Some(route), None);
    }
    if mode == 1 {
        return drop(RpDrop::WrongInterface, lines, Some(route), None);
    }
    RpCheck::Pass { mode, sysctl_lines: done(lines), route: Some(route.line) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTES: &str = include_str!("../testdata/kernel-routes.txt");
    const SYSCTL: &str = include_str!("../testdata/kernel-sysctl.txt");
    const LOOSE: &str = include_str!("../testdata/kernel-sysctl-loose.txt");

    /// Every fixture, with the parser it is for.
    const FIXTURES: &[(&str, &str)] = &[
        ("routes", ROUTES),
        ("routes", include_str!("../testdata/kernel-routes-main.txt")),
        ("routes", include_str!("../testdata/kernel-routes-detail.txt")),
        ("routes", include_str!("../testdata/kernel-rules-bare.txt")),
        ("sysctl", SYSCTL),
        ("sysctl", LOOSE),
        ("sysctl", include_str!("../testdata/kernel-sysctl-proc.txt")),
        ("neigh", include_str!("../testdata/kernel-neigh.txt")),
        ("neigh", include_str!("../testdata/kernel-neigh-stats.txt")),
    ];

    fn a(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn lab() -> (Routes, Sysctl) {
        let (r, n1) = parse_routes("routes.txt", ROUTES);
        let (s, n2) = parse_sysctl("sysctl.txt", SYSCTL);
        assert!(n1.list.is_empty() && n2.list.is_empty());
        (r, s)
    }

    #[test]
    fn strict_drops_a_packet_whose_route_back_leaves_by_another_interface() {
        let (r, s) = lab();
        // eth1: all=1 (line 4), eth1=1 (line 24); the route back to 198.19.5.5 is main's /16 via eth0
        assert_eq!(
            reverse_path(&r, &s, a("198.19.5.5"), a("198.18.20.1"), "eth1", 0),
            RpCheck::Drop {
                mode: 1,
                reason: RpDrop::WrongInterface,
                sysctl_lines: vec![4, 24],
                route: Some(33),
                leaves_by: Some("eth0".into())
            }
        );
        // eth0: all=1 over eth0=0; the route back to 198.19.96.5 is the /24 via eth1
        assert_eq!(
            reverse_path(&r, &s, a("198.19.96.5"), a("198.18.10.1"), "eth0", 0),
            RpCheck::Drop {
                mode: 1,
                reason: RpDrop::WrongInterface,
                sysctl_lines: vec![4, 14],
                route: Some(42),
                leaves_by: Some("eth1".into())
            }
        );
        assert_eq!(
            reverse_path(&r, &s, a("198.19.5.5"), a("198.18.10.1"), "eth0", 0),
            RpCheck::Pass { mode: 1, sysctl_lines: vec![4, 14], route: Some(33) }
        );
        // a multipath route back passes when one nexthop leaves by the interface
        assert_eq!(
            reverse_path(&r, &s, a("198.19.80.5"), a("198.18.20.1"), "eth1", 0),
            RpCheck::Pass { mode: 1, sysctl_lines: vec![4, 24], route: Some(39) }
        );
    }

    #[test]
    fn with_src_valid_mark_the_fwmark_rule_chooses_the_route_back() {
        let (r, s) = lab();
        // mark 0x1 and src_valid_mark on eth1 (line 25): table 100's default via eth1 (line 23)
        assert_eq!(
            reverse_path(&r, &s, a("198.19.5.5"), a("198.18.20.1"), "eth1", 0x1),
            RpCheck::Pass { mode: 1, sysctl_lines: vec![4, 24, 25], route: Some(23) }
        );
        // without src_valid_mark the mark is not used: main's /16 via eth0
        let off =
            SYSCTL.replace("net.ipv4.conf.eth1.src_valid_mark = 1", "net.ipv4.conf.eth1.src_valid_mark = 0");
        let (off, _) = parse_sysctl("sysctl.txt", &off);
        assert_eq!(
            reverse_path(&r, &off, a("198.19.5.5"), a("198.18.20.1"), "eth1", 0x1),
            RpCheck::Drop {
                mode: 1,
                reason: RpDrop::WrongInterface,
                sysctl_lines: vec![4, 5, 24, 25],
                route: Some(33),
                leaves_by: Some("eth0".into())
            }
        );
        // a file that does not say, for a marked packet
        let (none, _) = parse_sysctl("s.txt", "net.ipv4.conf.all.rp_filter = 1\n");
        let RpCheck::Unknown { why } = reverse_path(&r, &none, a("198.19.5.5"), a("198.18.20.1"), "eth1", 1)
        else {
            panic!()
        };
        assert!(why.contains("src_valid_mark"), "{why}");
    }

    #[test]
    fn loose_drops_only_without_a_route_back() {
        let (r, s) = lab();
        // eth0.100: 2 (line 19)
        assert_eq!(
            reverse_path(&r, &s, a("198.19.5.5"), a("198.18.30.1"), "eth0.100", 0),
            RpCheck::Pass { mode: 2, sysctl_lines: vec![4, 19], route: Some(33) }
        );
        let drop = |src: &str| reverse_path(&r, &s, a(src), a("198.18.30.1"), "eth0.100", 0);
        assert_eq!(
            drop("198.19.66.5"),
            RpCheck::Drop {
                mode: 2,
                reason: RpDrop::NoRouteBack,
                sysctl_lines: vec![4, 19],
                route: Some(35),
                leaves_by: None
            }
        );
        assert!(matches!(drop("198.19.67.5"), RpCheck::Drop { route: Some(36), .. }));
        // all=0 (line 2), eth0=2 (line 8)
        let (loose, _) = parse_sysctl("loose.txt", LOOSE);
        assert_eq!(
            reverse_path(&r, &loose, a("198.19.96.5"), a("198.18.10.1"), "eth0", 0),
            RpCheck::Pass { mode: 2, sysctl_lines: vec![2, 8], route: Some(42) }
        );
        // the route back is looked up as arriving on the interface the packet leaves by:
        // forwarded to eth1, `iif eth1 to 198.19.50.0/24 blackhole` (line 4) holds
        assert!(matches!(
            reverse_path(&r, &s, a("198.19.50.7"), a("198.19.96.9"), "eth0.100", 0),
            RpCheck::Drop { reason: RpDrop::NoRouteBack, route: Some(4), .. }
        ));
        // delivered to the host, it is looked up as arriving on lo: main's /16
        assert!(matches!(
            reverse_path(&r, &s, a("198.19.50.7"), a("198.18.30.1"), "eth0.100", 0),
            RpCheck::Pass { route: Some(33), .. }
        ));
    }

    #[test]
    fn own_sources_need_accept_local_and_off_passes_the_rest() {
        let (r, s) = lab();
        // 198.18.10.1 is eth0's (table local, line 46); eth1 has no accept_local (lines 1, 21)
        assert_eq!(
            reverse_path(&r, &s, a("198.18.10.1"), a("198.18.20.1"), "eth1", 0),
            RpCheck::Drop {
                mode: 1,
                reason: RpDrop::LocalSource,
                sysctl_lines: vec![1, 4, 21, 24],
                route: Some(46),
                leaves_by: Some("eth0".into())
            }
        );
        // eth0.100 has it (line 16), and is loose
        assert_eq!(
            reverse_path(&r, &s, a("198.18.10.1"), a("198.18.30.1"), "eth0.100", 0),
            RpCheck::Pass { mode: 2, sysctl_lines: vec![4, 16, 19], route: Some(46) }
        );
        // mode 0 (lo: all=0, lo=0 in the loose file): passes, except an own source,
        // which needs accept_local, not in that file
        let (loose, _) = parse_sysctl("loose.txt", LOOSE);
        assert_eq!(
            reverse_path(&r, &loose, a("198.19.5.5"), a("198.18.10.1"), "lo", 0),
            RpCheck::Pass { mode: 0, sysctl_lines: vec![2, 17], route: None }
        );
        let RpCheck::Unknown { why } = reverse_path(&r, &loose, a("198.18.20.1"), a("198.18.10.1"), "lo", 0)
        else {
            panic!()
        };
        assert!(why.contains("accept_local"), "{why}");
    }

    #[test]
    fn what_the_files_do_not_say_is_unknown() {
        let (r, s) = lab();
        // only conf/all = 1: eth1 may be strict (drop) or loose (pass)
        let (all, _) = parse_sysctl("s.txt", "net.ipv4.conf.all.rp_filter = 1\n");
        let RpCheck::Unknown { why } = reverse_path(&r, &all, a("198.19.5.5"), a("198.18.20.1"), "eth1", 0)
        else {
            panic!()
        };
        assert!(why.contains("mode 1: drops, WrongInterface (routes.txt:33), leaves by eth0"), "{why}");
        assert!(why.contains("mode 2: passes") && why.contains("s.txt:1"), "{why}");
        // both drop without a route back
        assert_eq!(
            reverse_path(&r, &all, a("198.19.66.5"), a("198.18.20.1"), "eth1", 0),
            RpCheck::Drop {
                mode: 1,
                reason: RpDrop::NoRouteBack,
                sysctl_lines: vec![1],
                route: Some(35),
                leaves_by: None
            }
        );
        let (empty, _) = parse_sysctl("e.txt", "kernel.pid_max = 1\n");
        assert!(matches!(
            reverse_path(&r, &empty, a("198.19.5.5"), a("198.18.20.1"), "eth1", 0),
            RpCheck::Unknown { .. }
        ));
        assert_eq!(
            reverse_path(&r, &s, a("2001:db8:96::5"), a("2001:db8:20::1"), "eth1", 0),
            RpCheck::NotApplicable
        );
        // an interface without an IPv4 address drops in loose mode too
        let (loose_all, _) = parse_sysctl("s.txt", "net.ipv4.conf.all.rp_filter = 2\n");
        assert!(matches!(
            reverse_path(&r, &loose_all, a("198.19.5.5"), a("198.18.20.1"), "peer9", 0),
            RpCheck::Drop { reason: RpDrop::NoAddress, route: Some(33), .. }
        ));
        // a rule this reader cannot evaluate on the way back
        let (u, _) =
            parse_routes("u.txt", "100:\tfrom all uidrange 0-0 lookup main\n198.19.0.0/16 dev eth0\n");
        let RpCheck::Unknown { why } = reverse_path(&u, &s, a("198.19.5.5"), a("198.18.20.1"), "eth1", 0)
        else {
            panic!()
        };
        assert!(why.contains("u.txt:1"), "{why}");
    }

    #[test]
    fn hostile_input_is_noted_not_a_panic() {
        let garbage: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let garbage = String::from_utf8_lossy(&garbage).into_owned();
        let long = format!("198.18.0.0/24 dev eth0\n{}\n0:\tfrom all lookup main\n", "a".repeat(10 << 20));
        let bad_len = "198.18.0.0/99 dev eth0\n0:\tfrom 198.18.0.0/99 lookup main\nnet.ipv4.conf.all.rp_filter = 99999999999999999999\n198.18.0.0/99 dev eth0 FAILED\n";
        for text in [garbage.as_str(), long.as_str(), bad_len] {
            let (r, n1) = parse_routes("r", text);
            let (s, n2) = parse_sysctl("s", text);
            let (_, n3) = parse_neigh("n", text);
            assert!(!n1.list.is_empty() && !n3.list.is_empty());
            let _ = reverse_path(&r, &s, a("198.18.0.1"), a("198.18.0.2"), "eth0", 1);
            let _ = (n2, r.lookup(a("198.18.0.1"), None, None, 0));
        }
        let (r, notes) = parse_routes("r", &long);
        assert_eq!(notes.list[0].0, 2);
        assert_eq!((r.routes.len(), r.rules_v4.len()), (1, 1));
        let (_, notes) = parse_routes("r", bad_len);
        assert_eq!(&notes.list.iter().map(|(l, _)| *l).collect::<Vec<_>>()[..2], [1, 2]);
        let (_, notes) = parse_sysctl("s", bad_len);
        assert_eq!(notes.list.iter().map(|(l, _)| *l).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert!(notes.list[2].1.contains("not a number"), "{:?}", notes.list);
    }

    #[test]
    fn many_rules_listings_and_tables_stay_linear() {
        let mut text = String::new();
        for i in 0..40_000u32 {
            // a new listing every line (the preference goes down), a table each, gotos to nowhere
            let pref = if i % 2 == 0 { 2 } else { 1 };
            text.push_str(&format!("{pref}:\tfrom all to 198.18.0.0/15 lookup {}\n", 1000 + i));
            text.push_str(&format!("{pref}:\tfrom all goto {}\n", 3 + i));
            text.push_str(&format!("198.18.{}.0/24 dev eth0 table {}\n", i % 256, 1000 + i));
        }
        let (r, notes) = parse_routes("big", &text);
        assert!(notes.list.is_empty());
        assert_eq!((r.rules_v4.len(), r.tables.len()), (80_000, 40_000));
        let (s, _) = parse_sysctl("s", "net.ipv4.conf.all.rp_filter = 1\n");
        assert!(matches!(r.lookup(a("198.19.7.1"), None, None, 0), Lookup::NoRoute { .. }));
        assert!(matches!(
            reverse_path(&r, &s, a("198.18.7.1"), a("198.18.9.9"), "eth0", 0),
            RpCheck::Pass { .. }
        ));
    }

    #[test]
    fn every_fixture_line_with_any_byte_changed_reads_without_a_panic() {
        let (_, sysctl) = lab();
        let swaps = ["0", "/", " ", "é"];
        let mut tried = 0u32;
        for (kind, text) in FIXTURES {
            for line in text.lines() {
                for i in (0..line.len()).filter(|i| line.is_char_boundary(*i)) {
                    let end = (i + 1..=line.len()).find(|j| line.is_char_boundary(*j)).unwrap_or(line.len());
                    for s in swaps {
                        let changed = format!("{}{s}{}", &line[..i], &line[end..]);
                        tried += 1;
                        let notes = match *kind {
                            "routes" => {
                                let (r, n) = parse_routes("f", &changed);
                                let _ =
                                    reverse_path(&r, &sysctl, a("198.19.5.5"), a("198.18.20.1"), "eth1", 1);
                                n
                            }
                            "sysctl" => {
                                let (s, n) = parse_sysctl("f", &changed);
                                let _ = (
                                    s.rp_filter("eth0.100"),
                                    s.src_valid_mark("eth1"),
                                    s.accept_local("all"),
                                );
                                n
                            }
                            _ => parse_neigh("f", &changed).1,
                        };
                        assert!(notes.list.iter().all(|(l, _)| *l <= 1), "{changed:?}: {:?}", notes.list);
                    }
                }
            }
        }
        assert!(tried > 40_000, "{tried}");
    }
}
