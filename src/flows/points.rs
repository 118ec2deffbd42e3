//! Observation points inside one capture. `tcpdump -i any` on a host that
//! forwards (a NAT node, a router) sees each forwarded packet twice: on the
//! interface it came in by and on the one it left by. A host is a fork, not a
//! line: requests enter by one of its interfaces and leave by one. Such a
//! capture is split into its two sides — `in` (where requests enter the host)
//! and `out` (where they leave it) — never into one point per interface: the
//! interface a request took at a side is a field of that request there
//! (`Flow::first_interface`), so two requests leaving by two interfaces are
//! two requests at one side, never a hop from one interface to the other.
//!
//! The side of a flow is its first packet's direction where the link layer
//! says it (SLL and SLL2 packet type: received or sent by the host); where it
//! names only interfaces (a pcapng file of several interfaces), the side of
//! its interface, found from the copies: an interface where copies are seen
//! first is on the in-side, the others on the out-side. A capture is split
//! only when it holds copies (the same request seen at both sides at nearly
//! the same time): anything else (an end host, even a multi-homed one) stays
//! one point. ARCHITECTURE.md, "Points, sides and branches".

use super::copies::{are_copies, copy_groups, nearer_client};
use super::{Flow, Flows};

/// Most interfaces a pcapng capture without packet directions may have to be
/// split into sides (a bit each in [`PointKey::Side`]); one with more
/// interfaces holding copies stays one point with its copies folded.
pub const MAX_INTERFACES: u32 = 64;

/// What makes a side of a capture. A capture split in two has the `in` key
/// and the `out` key of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PointKey {
    /// The link layer gives each packet's direction (SLL, SLL2): flows whose
    /// first packet the host received (`outgoing` false) or sent (true).
    Direction { outgoing: bool },
    /// Only interfaces are known (pcapng): flows on an interface of `ins`
    /// (bit i: interface i, where copies are seen first) are on the in-side,
    /// the others on the out-side (`outgoing` true).
    Side { outgoing: bool, ins: u64 },
}

impl PointKey {
    /// Whether this is the out-side (where requests leave the host).
    pub fn outgoing(self) -> bool {
        match self {
            PointKey::Direction { outgoing } | PointKey::Side { outgoing, .. } => outgoing,
        }
    }

    /// Whether a packet on `interface`, sent by the host (`outgoing`) or
    /// not, belongs to this side.
    pub fn takes(self, interface: u32, outgoing: bool) -> bool {
        match self {
            PointKey::Direction { outgoing: k } => k == outgoing,
            PointKey::Side { outgoing: k, ins } => k != is_in(ins, interface),
        }
    }

    /// Whether a packet on `interface` with SLL packet type `packet_type` (as in
    /// [`Flow::first_interface`] / `first_packet_type`) belongs to this side.
    pub fn holds(self, interface: u32, packet_type: Option<u8>) -> bool {
        self.takes(interface, packet_type == Some(OUTGOING))
    }

    /// Whether flow `f` belongs to this side (see [`PointKey::of`]).
    pub fn holds_flow(self, f: &Flow) -> bool {
        self.of(f) == self
    }

    /// The side of this key's kind that flow `f` belongs to.
    fn of(self, f: &Flow) -> PointKey {
        match self {
            // A side is where requests enter (in) or leave (out): a flow first
            // seen by a reply (a capture or a stream's window that began after
            // its request) is on the side that reply's direction is not.
            PointKey::Direction { .. } => {
                let reply_first = f.first_client_ns.get() != Some(f.first_ns);
                PointKey::Direction { outgoing: (f.first_packet_type == Some(OUTGOING)) != reply_first }
            }
            PointKey::Side { ins, .. } => PointKey::Side { outgoing: !is_in(ins, f.first_interface), ins },
        }
    }
}

/// Whether `interface` is one of the in-side's interfaces `ins`.
fn is_in(ins: u64, interface: u32) -> bool {
    interface < MAX_INTERFACES && ins >> interface & 1 == 1
}

/// SLL packet type of a packet sent by the capturing host.
const OUTGOING: u8 = 4;

/// One side: its key and its flows (in order of their first packet).
#[derive(Debug)]
pub struct Point {
    pub key: PointKey,
    pub flows: Flows,
}

/// Splits the flows of one capture into its in-side and out-side (in that
/// order), or gives them back when the capture is one point: one interface and
/// no direction, no copies between its sides, or (pcapng) copies that name no
/// in-side and out-side, or an interface past [`MAX_INTERFACES`].
pub fn split(flows: Flows) -> Result<Vec<Point>, Flows> {
    let Some(first) = flows.flows.first() else { return Err(flows) };
    let by_interface = flows.flows.iter().any(|f| f.first_interface != first.first_interface);
    let kind = if flows.flows.iter().any(|f| f.first_packet_type.is_some()) {
        PointKey::Direction { outgoing: false }
    } else if by_interface {
        match interface_sides(&flows.flows) {
            Some(ins) => PointKey::Side { outgoing: false, ins },
            None => return Err(flows),
        }
    } else {
        return Err(flows);
    };
    let keys = [kind.of_side(false), kind.of_side(true)];
    // Copies between the two sides: else the host is an end host (or routed
    // nothing while capturing), one point.
    let side = |f: &Flow| kind.of(f).outgoing();
    let copies = copy_groups(&flows.flows).iter().any(|group| {
        group.iter().enumerate().any(|(x, &i)| {
            group[x + 1..].iter().any(|&j| {
                let (a, b) = (&flows.flows[i], &flows.flows[j]);
                side(a) != side(b) && are_copies(a, b)
            })
        })
    });
    if !copies {
        return Err(flows);
    }
    Ok(split_into(flows, &keys).0)
}

impl PointKey {
    /// The key of one side of this key's kind.
    fn of_side(self, outgoing: bool) -> PointKey {
        match self {
            PointKey::Direction { .. } => PointKey::Direction { outgoing },
            PointKey::Side { ins, .. } => PointKey::Side { outgoing, ins },
        }
    }
}

/// The in-side's interfaces of a capture without packet directions: those
/// that see more copies first than after another interface. None when no
/// interface does, or every one does, or an interface is past
/// [`MAX_INTERFACES`].
fn interface_sides(flows: &[Flow]) -> Option<u64> {
    if flows.iter().any(|f| f.first_interface >= MAX_INTERFACES) {
        return None;
    }
    // (first, then) per interface: copies seen here first, and here after another.
    let mut first = [0u64; MAX_INTERFACES as usize];
    let mut then = [0u64; MAX_INTERFACES as usize];
    let mut seen = 0u64;
    for f in flows {
        seen |= 1 << f.first_interface;
    }
    for group in copy_groups(flows) {
        for (x, &i) in group.iter().enumerate() {
            for &j in &group[x + 1..] {
                let (a, b) = (&flows[i], &flows[j]);
                if a.first_interface != b.first_interface && are_copies(a, b) {
                    let (early, late) = if nearer_client(b, a) { (b, a) } else { (a, b) };
                    first[early.first_interface as usize] += 1;
                    then[late.first_interface as usize] += 1;
                }
            }
        }
    }
    let ins =
        (0..MAX_INTERFACES).filter(|&i| first[i as usize] > then[i as usize]).fold(0u64, |m, i| m | 1 << i);
    (ins != 0 && ins & seen != seen).then_some(ins)
}

/// Splits the flows of one capture into the sides `keys` (in that order, as
/// an earlier [`split`] of the same capture gave them: a stream's windows
/// keep its first window's sides). A flow of none of them goes to the first;
/// their count is given.
pub fn split_as(flows: Flows, keys: &[PointKey]) -> (Vec<Point>, u64) {
    split_into(flows, keys)
}

fn split_into(flows: Flows, keys: &[PointKey]) -> (Vec<Point>, u64) {
    let Flows { flows: all, stats } = flows;
    let mut points: Vec<Point> = keys
        .iter()
        .map(|&key| Point { key, flows: Flows { flows: Vec::new(), stats: Default::default() } })
        .collect();
    let mut elsewhere = 0;
    for f in all {
        let at = keys.iter().position(|k| k.of(&f) == *k);
        elsewhere += u64::from(at.is_none());
        if let Some(p) = points.get_mut(at.unwrap_or(0)) {
            p.flows.flows.push(f);
        }
    }
    if let Some(first) = points.first_mut() {
        first.flows.stats = stats;
    }
    (points, elsewhere)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request seen on interface 2 (pre-NAT), then on 3 (post-NAT) 20 µs later.
    fn forwarded(first_on: u32, then_on: u32) -> Flows {
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 7);
        a.first_interface = first_on;
        let mut b = Flow::test_tcp("198.19.9.9:40000", "198.19.0.1:80", 20_000, 7);
        b.first_interface = then_on;
        let mut c = Flow::test_tcp("198.18.0.2:40001", "198.19.0.1:80", 50_000, 8);
        c.first_interface = first_on;
        Flows { flows: vec![a, b, c], stats: Default::default() }
    }

    fn ports(p: &Point) -> Vec<u16> {
        p.flows.flows.iter().map(|f| f.client.port).collect()
    }

    fn keys(points: &[Point]) -> Vec<PointKey> {
        points.iter().map(|p| p.key).collect()
    }

    #[test]
    fn flows_split_as_given_sides_keep_their_order_and_strays_go_first() {
        let mut flows = forwarded(2, 3);
        flows.stats.duplicate_flows = 4;
        for f in &mut flows.flows {
            f.first_packet_type = Some(if f.first_interface == 3 { OUTGOING } else { 0 });
        }
        let mut d = Flow::test_tcp("198.18.0.3:40002", "198.19.0.1:80", 60_000, 9);
        d.first_interface = 5;
        flows.flows.push(d);
        // The sides as an earlier split gave them, out first.
        let keys = [PointKey::Direction { outgoing: true }, PointKey::Direction { outgoing: false }];
        let (points, elsewhere) = split_as(flows, &keys);
        assert_eq!(super::tests::keys(&points), keys);
        // Interface 5's flow has no direction: the in-side's (not sent by the host).
        assert_eq!(
            (ports(&points[0]), ports(&points[1]), elsewhere),
            (vec![40000], vec![40000, 40001, 40002], 0)
        );
        assert_eq!((points[0].flows.stats.duplicate_flows, points[1].flows.stats.duplicate_flows), (4, 0));
        // A side no flow of is given: its flows go to the first, counted.
        let (points, elsewhere) = split_as(forwarded(2, 3), &keys[..1]);
        assert_eq!((points.len(), points[0].flows.flows.len(), elsewhere), (1, 3, 3));
    }

    #[test]
    fn interfaces_holding_copies_split_into_an_in_side_and_an_out_side() {
        for (first, then) in [(2, 3), (7, 4), (0, 63)] {
            let points = split(forwarded(first, then)).expect("split");
            let ins = 1u64 << first;
            assert_eq!(
                keys(&points),
                [PointKey::Side { outgoing: false, ins }, PointKey::Side { outgoing: true, ins }]
            );
            assert_eq!(ports(&points[0]), [40000, 40001], "both requests entered on the first interface");
            assert_eq!(ports(&points[1]), [40000]);
            assert!(points[0].key.holds(first, None) && !points[0].key.holds(then, None));
            assert!(points[1].key.holds(then, None) && points[1].key.holds(then + 1, None));
        }
    }

    /// Two pings from one client with one ICMP id and payload (as fping sends
    /// them): one leaves by interface 3, one by 4. Two requests at the
    /// out-side, never a hop from 3 to 4.
    #[test]
    fn two_out_interfaces_are_one_side_not_two_points() {
        let mut flows = forwarded(2, 3);
        let mut again = Flow::test_tcp("198.18.0.1:40000", "198.19.0.2:80", 1_100_000_000, 9);
        again.first_interface = 2;
        let mut out = Flow::test_tcp("198.19.3.1:40000", "198.19.0.2:80", 1_100_020_000, 9);
        out.first_interface = 4;
        flows.flows.extend([again, out]);
        let points = split(flows).expect("split");
        assert_eq!(points.len(), 2, "one in-side and one out-side");
        assert_eq!(keys(&points)[1], PointKey::Side { outgoing: true, ins: 1 << 2 });
        let out_ifaces: Vec<u32> = points[1].flows.flows.iter().map(|f| f.first_interface).collect();
        assert_eq!(out_ifaces, [3, 4]);
        assert_eq!(points[0].flows.flows.len(), 3);
    }

    #[test]
    fn one_interface_or_no_copies_stays_one_point() {
        assert!(split(forwarded(2, 2)).is_err(), "one interface");
        let mut f = forwarded(2, 3);
        f.flows[1].client_isn = Some(99);
        assert!(split(f).is_err(), "two interfaces, no packet seen on both");
        let mut f = forwarded(2, 3);
        f.flows[1].first_interface = MAX_INTERFACES;
        assert!(split(f).is_err(), "an interface past the mask");
    }

    #[test]
    fn sll_directions_split_incoming_before_outgoing() {
        let mut f = forwarded(0, 0);
        f.flows[0].first_packet_type = Some(0);
        f.flows[1].first_packet_type = Some(OUTGOING);
        f.flows[2].first_packet_type = Some(0);
        let points = split(f).expect("split");
        assert_eq!(
            keys(&points),
            [PointKey::Direction { outgoing: false }, PointKey::Direction { outgoing: true }]
        );
        assert!(points[1].key.holds(5, Some(OUTGOING)) && !points[1].key.holds(5, Some(0)));
    }

    /// SLL2 names interfaces and directions: the sides are the directions,
    /// whatever the interfaces (a request received on 2 or 6, sent on 3 or 4).
    #[test]
    fn sll2_splits_by_direction_whatever_the_interfaces() {
        let mut f = forwarded(2, 3);
        f.flows[2].first_interface = 6;
        let mut g = Flow::test_tcp("198.19.9.9:40001", "198.19.0.1:80", 50_020, 8);
        g.first_interface = 4;
        f.flows.push(g);
        for x in &mut f.flows {
            x.first_packet_type = Some(if matches!(x.first_interface, 3 | 4) { OUTGOING } else { 0 });
        }
        let points = split(f).expect("split");
        assert_eq!(
            keys(&points),
            [PointKey::Direction { outgoing: false }, PointKey::Direction { outgoing: true }]
        );
        let ifaces = |p: &Point| p.flows.flows.iter().map(|f| f.first_interface).collect::<Vec<_>>();
        assert_eq!((ifaces(&points[0]), ifaces(&points[1])), (vec![2, 6], vec![3, 4]));
        // Copies only within one side (a bridge port and its bridge, both received): one point.
        let mut f = forwarded(2, 3);
        for x in &mut f.flows {
            x.first_packet_type = Some(0);
        }
        assert!(split(f).is_err());
    }

    #[test]
    fn sll_sides_of_a_host_routing_without_nat_hold_one_tuple_twice() {
        // one tuple received on one side (first packet incoming), then sent on the other
        let mut f = forwarded(0, 0);
        f.flows[1].client = f.flows[0].client;
        f.flows[0].first_packet_type = Some(0);
        f.flows[1].first_packet_type = Some(OUTGOING);
        f.flows[2].first_packet_type = Some(0);
        let points = split(f).expect("split");
        assert_eq!(points[1].flows.flows[0].client, points[0].flows.flows[0].client);
        assert_eq!(points[1].key, PointKey::Direction { outgoing: true });
    }
}
