//! Observation points inside one capture. `tcpdump -i any` on a host that
//! forwards (a NAT node, a router) sees each forwarded packet twice: on the
//! interface it came in by and on the one it left by. Such a capture is split
//! into sub-points — one per interface (pcapng interface, SLL2 interface
//! index), or per direction (SLL packet type incoming / outgoing) when the link
//! layer names no interface — ordered along the path by where the same packet
//! is seen first. A capture is split only when it holds copies (the same
//! request seen at two of its sub-points at nearly the same time): anything
//! else stays one point, exactly as before.

use super::copies::{are_copies, copy_groups, nearer_client};
use super::{Flow, Flows};

/// Most sub-points one capture is split into; a capture with more interfaces
/// holding copies stays one point with its copies folded.
pub const MAX_POINTS: usize = 8;

/// What makes a sub-point of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PointKey {
    /// Packets seen on this interface: the SLL2 interface index when the link
    /// layer carries one, else the capture's interface number (pcapng IDB).
    Interface(u32),
    /// SLL without interface index: flows whose first packet came in (false)
    /// or went out (true).
    Direction { outgoing: bool },
}

impl PointKey {
    /// Whether a packet on `interface` with SLL packet type `packet_type` (as in
    /// [`Flow::first_interface`] / `first_packet_type`) belongs to this point.
    pub fn holds(self, interface: u32, packet_type: Option<u8>) -> bool {
        match self {
            PointKey::Interface(i) => i == interface,
            PointKey::Direction { outgoing } => outgoing == (packet_type == Some(OUTGOING)),
        }
    }

    fn of(self, f: &Flow) -> PointKey {
        match self {
            PointKey::Interface(_) => PointKey::Interface(f.first_interface),
            PointKey::Direction { .. } => {
                PointKey::Direction { outgoing: f.first_packet_type == Some(OUTGOING) }
            }
        }
    }
}

/// SLL packet type of a packet sent by the capturing host.
const OUTGOING: u8 = 4;

/// One sub-point: its key and its flows (in order of their first packet).
#[derive(Debug)]
pub struct Point {
    pub key: PointKey,
    pub flows: Flows,
}

/// Splits the flows of one capture into sub-points in path order, or gives
/// them back when the capture is one point (one interface and direction, or no
/// copies between its interfaces / directions, or more than [`MAX_POINTS`]).
pub fn split(flows: Flows) -> Result<Vec<Point>, Flows> {
    let Some(first) = flows.flows.first() else { return Err(flows) };
    let by_interface = flows.flows.iter().any(|f| f.first_interface != first.first_interface);
    let kind = if by_interface {
        PointKey::Interface(0)
    } else if flows.flows.iter().any(|f| f.first_packet_type.is_some()) {
        PointKey::Direction { outgoing: false }
    } else {
        return Err(flows);
    };
    let mut keys: Vec<PointKey> = flows.flows.iter().map(|f| kind.of(f)).collect();
    keys.sort_unstable();
    keys.dedup();
    if keys.len() < 2 || keys.len() > MAX_POINTS {
        return Err(flows);
    }
    let at = |f: &Flow| keys.binary_search(&kind.of(f)).unwrap_or(0);
    // votes[a][b]: copies seen first at a, then at b.
    let n = keys.len();
    let mut votes = vec![vec![0u64; n]; n];
    let mut any = false;
    for group in copy_groups(&flows.flows) {
        for (x, &i) in group.iter().enumerate() {
            for &j in &group[x + 1..] {
                let (a, b) = (&flows.flows[i], &flows.flows[j]);
                if are_copies(a, b) {
                    let (early, late) = if nearer_client(b, a) { (b, a) } else { (a, b) };
                    votes[at(early)][at(late)] += 1;
                    any = true;
                }
            }
        }
    }
    if !any {
        return Err(flows);
    }
    // Path order: the sub-point that sees more copies first than after others
    // leads; ties keep the keys' order (interface number, incoming first).
    let score = |a: usize| -> i64 {
        (0..n).map(|b| i64::from(votes[a][b] > votes[b][a]) - i64::from(votes[b][a] > votes[a][b])).sum()
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&a| (std::cmp::Reverse(score(a)), a));
    let mut rank = vec![0; n];
    for (r, &k) in order.iter().enumerate() {
        rank[k] = r;
    }
    let Flows { flows: all, stats } = flows;
    let mut points: Vec<Point> = order
        .iter()
        .map(|&k| Point { key: keys[k], flows: Flows { flows: Vec::new(), stats: Default::default() } })
        .collect();
    points[0].flows.stats = stats;
    for f in all {
        let r = rank[at(&f)];
        points[r].flows.flows.push(f);
    }
    Ok(points)
}

/// Splits the flows of one capture into the sub-points `keys` (in that
/// order, as an earlier [`split`] of the same capture gave them: a stream's
/// windows keep its first window's points). A flow of none of them goes to the
/// first; their count is given.
pub fn split_as(flows: Flows, keys: &[PointKey]) -> (Vec<Point>, u64) {
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

    #[test]
    fn flows_split_as_given_points_keep_their_order_and_strays_go_first() {
        let mut flows = forwarded(2, 3);
        flows.stats.duplicate_flows = 4;
        let mut d = Flow::test_tcp("198.18.0.3:40002", "198.19.0.1:80", 60_000, 9);
        d.first_interface = 5;
        flows.flows.push(d);
        // The points as an earlier split gave them: 3 first (it led the path there).
        let keys = [PointKey::Interface(3), PointKey::Interface(2)];
        let (points, elsewhere) = split_as(flows, &keys);
        assert_eq!(points.iter().map(|p| p.key).collect::<Vec<_>>(), keys);
        let ports = |p: &Point| p.flows.flows.iter().map(|f| f.client.port).collect::<Vec<_>>();
        // Interface 5 is neither: its flow goes to the first point, counted.
        assert_eq!(
            (ports(&points[0]), ports(&points[1]), elsewhere),
            (vec![40000, 40002], vec![40000, 40001], 1)
        );
        assert_eq!((points[0].flows.stats.duplicate_flows, points[1].flows.stats.duplicate_flows), (4, 0));
        // A point with no flow here stays, empty.
        let (points, elsewhere) = split_as(forwarded(2, 2), &keys);
        assert_eq!((points[0].flows.flows.len(), points[1].flows.flows.len(), elsewhere), (0, 3, 0));
    }

    #[test]
    fn interfaces_holding_copies_are_points_in_the_order_packets_cross_them() {
        for (first, then) in [(2, 3), (7, 4)] {
            let points = split(forwarded(first, then)).expect("split");
            let keys: Vec<PointKey> = points.iter().map(|p| p.key).collect();
            assert_eq!(keys, [PointKey::Interface(first), PointKey::Interface(then)]);
            assert_eq!(points[0].flows.flows.len(), 2, "both requests entered on the first interface");
            assert_eq!(points[1].flows.flows[0].client.port, 40000);
        }
    }

    #[test]
    fn one_interface_or_no_copies_stays_one_point() {
        assert!(split(forwarded(2, 2)).is_err(), "one interface");
        let mut f = forwarded(2, 3);
        f.flows[1].client_isn = Some(99);
        assert!(split(f).is_err(), "two interfaces, no packet seen on both");
    }

    #[test]
    fn sll_directions_split_incoming_before_outgoing() {
        let mut f = forwarded(0, 0);
        f.flows[0].first_packet_type = Some(0);
        f.flows[1].first_packet_type = Some(OUTGOING);
        f.flows[2].first_packet_type = Some(0);
        let points = split(f).expect("split");
        let keys: Vec<PointKey> = points.iter().map(|p| p.key).collect();
        assert_eq!(keys, [PointKey::Direction { outgoing: false }, PointKey::Direction { outgoing: true }]);
        assert!(keys[1].holds(5, Some(OUTGOING)) && !keys[1].holds(5, Some(0)));
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
