//! `sysctl -a` (or `sysctl.conf`, or `grep -r . /proc/sys/net/ipv4/conf/*/…`)
//! → the settings that decide whether the kernel forwards a packet and checks
//! its source: `net.ipv4.conf.*.{rp_filter,src_valid_mark,accept_local,
//! forwarding}`, `net.ipv4.ip_forward`, `net.ipv6.conf.*.forwarding`, each
//! with its line; every other key is left without a note (a `sysctl -a`
//! holds a thousand). A key given twice keeps its last value, as
//! `sysctl -p` would leave it.
//!
//! How the kernel combines `conf/all` with `conf/IFACE` differs per setting
//! (its `IN_DEV_*` macros): `rp_filter` is `IN_DEV_MAXCONF`, the larger of
//! the two; `src_valid_mark` and `accept_local` are `IN_DEV_ORCONF`, on when
//! either is; `forwarding` is the interface's own (`all` is copied to every
//! interface when written).

use crate::why::text::{self, Notes};
use std::collections::HashMap;

/// A setting kept.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// `net.ipv4.conf.IFACE.NAME` (IFACE as the interface is named, with its
    /// dots; `all`, `default`), NAME one of `rp_filter`, `src_valid_mark`,
    /// `accept_local`, `forwarding`.
    V4Conf(String, &'static str),
    /// `net.ipv6.conf.IFACE.forwarding`.
    V6Forwarding(String),
    /// `net.ipv4.ip_forward`.
    IpForward,
}

/// The settings of one file: key → (value, line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sysctl {
    pub file: String,
    pub values: HashMap<Key, (i64, u32)>,
}

/// The reverse-path filter in effect on one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpFilter {
    /// 0 off, 1 strict, 2 loose: the larger of conf/all and conf/IFACE, a
    /// key not in the file counted as 0 (any value but 0 and 1 is loose: the
    /// kernel tests for 1).
    pub mode: u8,
    /// The lines that decided it.
    pub lines: Vec<u32>,
    /// False when one of the two keys is missing and could raise the mode.
    pub certain: bool,
}

impl RpFilter {
    /// The modes the interface may have: `mode` alone when certain, else
    /// `mode` and every stricter-to-looser one above it.
    pub fn possible(&self) -> Vec<u8> {
        if self.certain {
            vec![self.mode]
        } else {
            (self.mode..=2).collect()
        }
    }
}

/// An on/off setting in effect on one interface (conf/all OR conf/IFACE).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    pub on: bool,
    pub lines: Vec<u32>,
    /// False when it is off as far as the file says but a missing key could turn it on.
    pub certain: bool,
}

impl Sysctl {
    fn v4(&self, iface: &str, name: &'static str) -> Option<(i64, u32)> {
        self.values.get(&Key::V4Conf(iface.to_string(), name)).copied()
    }

    /// `rp_filter` in effect on `iface`: max(conf/all, conf/IFACE) (the
    /// kernel's `IN_DEV_RPFILTER`); None when the file has neither key.
    pub fn rp_filter(&self, iface: &str) -> Option<RpFilter> {
        let all = self.v4("all", "rp_filter");
        let own = self.v4(iface, "rp_filter");
        if all.is_none() && own.is_none() {
            return None;
        }
        let raw = all.map_or(0, |a| a.0).max(own.map_or(0, |o| o.0));
        let mode = match raw {
            0 => 0,
            1 => 1,
            _ => 2,
        };
        let mut lines: Vec<u32> = [all, own].into_iter().flatten().map(|(_, l)| l).collect();
        lines.sort_unstable();
        let certain = (all.is_some() && own.is_some()) || mode == 2;
        Some(RpFilter { mode, lines, certain })
    }

    /// `src_valid_mark` in effect on `iface`: conf/all OR conf/IFACE (the
    /// kernel's `IN_DEV_SRC_VMARK`); when on, the reverse-path lookup uses
    /// the packet's mark, else mark 0. None when the file has neither key.
    pub fn src_valid_mark(&self, iface: &str) -> Option<Flag> {
        self.flag(iface, "src_valid_mark")
    }

    /// `accept_local` in effect on `iface`: conf/all OR conf/IFACE (the
    /// kernel's `IN_DEV_ACCEPT_LOCAL`): packets from one of the host's own
    /// addresses are accepted. None when the file has neither key.
    pub fn accept_local(&self, iface: &str) -> Option<Flag> {
        self.flag(iface, "accept_local")
    }

    fn flag(&self, iface: &str, name: &'static str) -> Option<Flag> {
        let all = self.v4("all", name);
        let own = self.v4(iface, name);
        if all.is_none() && own.is_none() {
            return None;
        }
        let set: Vec<(i64, u32)> = [all, own].into_iter().flatten().collect();
        let on = set.iter().any(|(v, _)| *v != 0);
        // when on, the lines that turn it on; when off, both
        let mut lines: Vec<u32> = set.iter().filter(|(v, _)| !on || *v != 0).map(|(_, l)| *l).collect();
        lines.sort_unstable();
        Some(Flag { on, lines, certain: on || set.len() == 2 })
    }

    /// `net.ipv4.ip_forward`: (on, line).
    pub fn ip_forward(&self) -> Option<(bool, u32)> {
        self.values.get(&Key::IpForward).map(|(v, l)| (*v != 0, *l))
    }

    /// `net.ipv4.conf.IFACE.forwarding` (`v6`: `net.ipv6.conf.IFACE.forwarding`):
    /// (on, line); the interface's own value is the one in effect.
    pub fn forwarding(&self, iface: &str, v6: bool) -> Option<(bool, u32)> {
        let v = if v6 {
            self.values.get(&Key::V6Forwarding(iface.to_string())).copied()
        } else {
            self.v4(iface, "forwarding")
        };
        v.map(|(v, l)| (v != 0, l))
    }
}

/// Parses `sysctl -a` output, `sysctl.conf` lines or `PATH:VALUE` lines of
/// `grep -r . /proc/sys/net/…`.
pub fn parse_sysctl(file: &str, input: &str) -> (Sysctl, Notes) {
    let mut notes = Notes::new(file);
    let mut out = Sysctl { file: file.to_string(), ..Sysctl::default() };
    for (n, line) in text::lines(input, &mut notes) {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        // sysctl.conf: `-key = value` ignores a failure to set it
        let t = t.strip_prefix('-').unwrap_or(t);
        let (key, value) = if let Some(path) = t.strip_prefix("/proc/sys/") {
            match path.split_once([':', '=']) {
                Some((k, v)) => (Path::Slashes(k.trim()), v),
                None => {
                    notes.line(n, "neither KEY = VALUE nor PATH:VALUE");
                    continue;
                }
            }
        } else {
            match t.split_once('=') {
                Some((k, v)) => {
                    let k = k.trim();
                    let slashes = k.find(['.', '/']).is_some_and(|i| k.as_bytes()[i] == b'/');
                    (if slashes { Path::Slashes(k) } else { Path::Dots(k) }, v)
                }
                None => {
                    notes.line(n, "neither KEY = VALUE nor PATH:VALUE");
                    continue;
                }
            }
        };
        let key = match key.kept() {
            Ok(Some(k)) => k,
            Ok(None) => continue,
            Err(why) => {
                notes.line(n, why);
                continue;
            }
        };
        let value = value.trim();
        match value.parse::<i64>() {
            Ok(v) => {
                out.values.insert(key, (v, n));
            }
            Err(_) => notes.line(n, format!("{value:?} is not a number")),
        }
    }
    (out, notes)
}

/// A key as written: `net.ipv4.conf.eth0/100.rp_filter` (an interface's dots
/// written as `/`) or `net/ipv4/conf/eth0.100/rp_filter` (dots literal).
enum Path<'a> {
    Dots(&'a str),
    Slashes(&'a str),
}

impl Path<'_> {
    /// The key when kept; None for another; Err for a kept key not well written.
    fn kept(&self) -> Result<Option<Key>, String> {
        let (sep, text) = match self {
            Path::Dots(t) => ('.', *t),
            Path::Slashes(t) => ('/', *t),
        };
        let Some(rest) = text.strip_prefix("net").and_then(|r| r.strip_prefix(sep)) else { return Ok(None) };
        if rest == format!("ipv4{sep}ip_forward") {
            return Ok(Some(Key::IpForward));
        }
        let (v6, rest) = if let Some(r) = rest.strip_prefix(&format!("ipv4{sep}conf{sep}")) {
            (false, r)
        } else if let Some(r) = rest.strip_prefix(&format!("ipv6{sep}conf{sep}")) {
            (true, r)
        } else {
            return Ok(None);
        };
        let Some((iface, name)) = rest.rsplit_once(sep) else { return Ok(None) };
        let name: &'static str = match (v6, name) {
            (false, "rp_filter") => "rp_filter",
            (false, "src_valid_mark") => "src_valid_mark",
            (false, "accept_local") => "accept_local",
            (_, "forwarding") => "forwarding",
            _ => return Ok(None),
        };
        let iface = match self {
            Path::Dots(_) if iface.contains('.') => {
                return Err(format!(
                    "interface {iface:?}: in a dotted key an interface's dots are written as / ({})",
                    iface.replace('.', "/")
                ))
            }
            Path::Dots(_) => iface.replace('/', "."),
            Path::Slashes(_) => iface.to_string(),
        };
        if iface.is_empty() || iface.contains(char::is_whitespace) {
            return Err(format!("interface {iface:?}: not an interface name"));
        }
        Ok(Some(if v6 { Key::V6Forwarding(iface) } else { Key::V4Conf(iface, name) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip netns exec NS sysctl -a | grep -E
    /// 'rp_filter|src_valid_mark|ip_forward|accept_local|\.forwarding'` of the
    /// lab (`kernel-lab.sh`): all=1, eth0=0, eth1=1 with src_valid_mark,
    /// eth0.100=2 with accept_local.
    const SYSCTL: &str = include_str!("../testdata/kernel-sysctl.txt");
    /// The same after all=0, eth0=2 (`grep -E 'rp_filter|src_valid_mark|ip_forward'`).
    const LOOSE: &str = include_str!("../testdata/kernel-sysctl-loose.txt");
    /// `grep -r . /proc/sys/net/ipv4/conf/*/rp_filter …/src_valid_mark` in the lab.
    const PROC: &str = include_str!("../testdata/kernel-sysctl-proc.txt");

    fn read(text: &str) -> Sysctl {
        let (s, notes) = parse_sysctl("sysctl.txt", text);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        s
    }

    #[test]
    fn rp_filter_is_the_larger_of_all_and_the_interface() {
        let s = read(SYSCTL);
        // all=1 (line 4), eth0=0 (line 14): strict
        assert_eq!(s.rp_filter("eth0"), Some(RpFilter { mode: 1, lines: vec![4, 14], certain: true }));
        // `eth0/100` in the key is eth0.100
        assert_eq!(s.rp_filter("eth0.100"), Some(RpFilter { mode: 2, lines: vec![4, 19], certain: true }));
        assert_eq!(s.rp_filter("eth1").map(|r| r.mode), Some(1));
        // all=0 (line 2), eth0=2 (line 8): loose
        let l = read(LOOSE);
        assert_eq!(l.rp_filter("eth0"), Some(RpFilter { mode: 2, lines: vec![2, 8], certain: true }));
        assert_eq!(l.rp_filter("lo").map(|r| r.mode), Some(0));
        // an interface the file does not name: all alone, which it can only raise
        let only_all = s.rp_filter("wg0").unwrap();
        assert_eq!((only_all.mode, only_all.certain, only_all.possible()), (1, false, vec![1, 2]));
        assert_eq!(read("net.ipv4.conf.wg0.rp_filter = 2\n").rp_filter("wg0").unwrap().possible(), [2]);
        assert_eq!(read("").rp_filter("eth0"), None);
        // any value but 0 and 1 is loose
        assert_eq!(read("net.ipv4.conf.all.rp_filter=7\n").rp_filter("x").unwrap().mode, 2);
    }

    #[test]
    fn src_valid_mark_and_accept_local_are_on_when_all_or_the_interface_is() {
        let s = read(SYSCTL);
        assert_eq!(s.src_valid_mark("eth1"), Some(Flag { on: true, lines: vec![25], certain: true }));
        assert_eq!(s.src_valid_mark("eth0"), Some(Flag { on: false, lines: vec![5, 15], certain: true }));
        assert_eq!(s.accept_local("eth0.100"), Some(Flag { on: true, lines: vec![16], certain: true }));
        assert_eq!(s.accept_local("eth1").map(|f| f.on), Some(false));
        let all_on = read("net.ipv4.conf.all.src_valid_mark = 1\n");
        assert_eq!(all_on.src_valid_mark("eth9"), Some(Flag { on: true, lines: vec![1], certain: true }));
        let own_off = read("net.ipv4.conf.eth9.src_valid_mark = 0\n");
        assert_eq!(own_off.src_valid_mark("eth9").map(|f| (f.on, f.certain)), Some((false, false)));
        assert_eq!(read(LOOSE).accept_local("eth0"), None);
        assert_eq!(s.ip_forward(), Some((true, 31)));
        assert_eq!(s.forwarding("eth0.100", true), Some((true, 37)));
        assert_eq!(s.forwarding("eth1", false), Some((true, 23)));
    }

    #[test]
    fn proc_paths_and_sysctl_conf_lines_read_too() {
        let p = read(PROC);
        assert_eq!(p.rp_filter("eth0.100"), Some(RpFilter { mode: 2, lines: vec![1, 3], certain: true }));
        assert_eq!(p.src_valid_mark("eth1").map(|f| f.lines), Some(vec![11]));
        let conf = "# /etc/sysctl.d/90-rp.conf\n; comment\nnet/ipv4/conf/eth0.100/rp_filter = 1\n\
            -net.ipv4.conf.all.rp_filter=2\nnet.ipv4.conf.all.rp_filter = 0\nkernel.pid_max = 4194304\n";
        let c = read(conf);
        // the later all=0 overrides the earlier all=2
        assert_eq!(c.rp_filter("eth0.100"), Some(RpFilter { mode: 1, lines: vec![3, 5], certain: true }));
        assert_eq!(c.values.len(), 2);
    }

    #[test]
    fn lines_not_read_are_noted_and_other_keys_left_silently() {
        let text = "sysctl: permission denied on key 'net.ipv6.conf.all.stable_secret'\n\
            net.ipv4.conf.eth0.rp_filter = strict\nnet.ipv4.conf.eth0.100.rp_filter = 1\n\
            net.core.somaxconn = 4096\nnet.ipv4.conf.eth0.arp_filter = x\n/proc/sys/net/ipv4/ip_forward\n\
            net.ipv4.conf..rp_filter = 1\n";
        let (s, notes) = parse_sysctl("s", text);
        let lines: Vec<u32> = notes.list.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 3, 6, 7], "{:?}", notes.messages());
        assert!(notes.messages()[2].contains("eth0/100"), "{:?}", notes.messages());
        assert!(s.values.is_empty());
    }
}
