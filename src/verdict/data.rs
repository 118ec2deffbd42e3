//! How far a TCP request's data got (issue 18): per direction, the captures
//! whose flow saw payload, compared by sequence range (stream offsets from the
//! ISN, so GRO/TSO re-segmentation and retransmissions do not matter), and the
//! path-MTU messages (IPv4 3/4, ICMPv6 2/0) quoting the request, with where
//! they were seen and where they were lost on their way to the client.
//! Takes a chain's flows per capture; gives a typed `DataPath`. Never formats text.

use super::model::{Between, Cut, DataPath, PathMtu, Segment};
use crate::flows::{Flow, FlowProto, MaxSegment, Orientation};

/// The data findings of one chain; `None` when not TCP or nothing to say
/// (no payload and no path-MTU message anywhere). `connection(c)`: which TCP
/// connection of the chain capture `c` saw (it changes at a terminating
/// proxy): byte counts are compared only within one connection — a proxy
/// rewrites what it passes on (headers, chunking), so fewer bytes beyond it
/// are no loss.
pub(crate) fn data_path(flows: &[Option<&Flow>], connection: impl Fn(usize) -> usize) -> Option<DataPath> {
    let first = flows.iter().flatten().next()?;
    if first.proto != FlowProto::Tcp {
        return None;
    }
    let seen: Vec<(usize, &Flow)> = flows.iter().enumerate().filter_map(|(c, f)| Some((c, (*f)?))).collect();
    let any = |g: fn(&Flow) -> bool| seen.iter().any(|(_, f)| g(f));
    if !any(|f| f.client_payload.is_some() || f.server_payload.is_some() || f.mtu_signal.is_some()) {
        return None;
    }
    let reached = seen.iter().rev().find(|(_, f)| f.client_payload.is_some()).map(|&(c, _)| c);
    let server_reached = seen.iter().find(|(_, f)| f.server_payload.is_some()).map(|&(c, _)| c);
    // Client data travels away from the client: it stops where the capture
    // nearer the client saw more of it than the next one and every later one
    // (seen again further on, it went around a capture: no stop). A capture
    // that got every packet, each cut shorter, saw a truncation, not a stop.
    let one = |i: usize, j: usize| connection(seen[i].0) == connection(seen[j].0);
    let later = |k: usize| (k..seen.len()).filter(move |&j| one(k - 1, j)).map(|j| seen[j].1);
    let stopped = (1..seen.len()).filter(|&k| one(k - 1, k)).find_map(|k| {
        let up = client(seen[k - 1].1);
        later(k)
            .all(|x| short(&up, &client(x)) && !cut(&up, &client(x)))
            .then_some(Between { from: seen[k - 1].0, to: seen[k].0 })
    });
    let cut_at = |k: usize, up: Way, down: Way| -> Option<Cut> {
        // Re-segmented data (TSO/GRO) that all arrived is neither cut nor stopped.
        if !(one(k - 1, k) && short(&up, &down) && cut(&up, &down)) {
            return None;
        }
        let between = Between { from: seen[k - 1].0, to: seen[k].0 };
        Some(Cut { between, before: segment(up.largest)?, after: segment(down.largest)? })
    };
    let client_cut = (1..seen.len()).find_map(|k| cut_at(k, client(seen[k - 1].1), client(seen[k].1)));
    // Server data travels towards the client: the mirror image.
    let server_stopped = (1..seen.len()).rev().filter(|&k| one(k - 1, k)).find_map(|k| {
        let up = server(seen[k].1);
        (0..k)
            .filter(|&j| one(j, k))
            .all(|j| short(&up, &server(seen[j].1)) && !cut(&up, &server(seen[j].1)))
            .then_some(Between { from: seen[k - 1].0, to: seen[k].0 })
    });
    let server_cut = (1..seen.len()).rev().find_map(|k| cut_at(k, server(seen[k].1), server(seen[k - 1].1)));
    let at = |c: usize, g: fn(&Flow) -> MaxSegment| flows[c].and_then(|f| segment(g(f)));
    Some(DataPath {
        reached,
        stopped,
        stopped_segment: stopped.and_then(|b| at(b.from, |f| f.max_to_server)),
        server_reached,
        server_stopped,
        server_stopped_segment: server_stopped.and_then(|b| at(b.to, |f| f.max_to_client)),
        cut: client_cut,
        server_cut,
        mtu: path_mtu(&seen),
    })
}

/// One direction of a flow at one capture: its payload's stream range, its
/// largest segment and how many packets went that way.
struct Way<'a> {
    payload: Option<(u32, u32)>,
    flow: &'a Flow,
    largest: MaxSegment,
    packets: u64,
}

fn client(f: &Flow) -> Way<'_> {
    Way { payload: f.client_payload, flow: f, largest: f.max_to_server, packets: f.packets_to_server }
}

fn server(f: &Flow) -> Way<'_> {
    Way { payload: f.server_payload, flow: f, largest: f.max_to_client, packets: f.packets_to_client }
}

/// Whether the capture downstream (`down`) saw less of a direction's payload
/// than the one upstream (`up`). Offsets of midstream flows start at whatever
/// each capture saw first, so they are compared only by presence.
fn short(up: &Way<'_>, down: &Way<'_>) -> bool {
    let midstream =
        up.flow.orientation == Orientation::Midstream || down.flow.orientation == Orientation::Midstream;
    match (up.payload, down.payload) {
        (Some(_), None) => true,
        // Only the tail got through (a short last segment under the MTU) counts too.
        (Some((start_up, end_up)), Some((start_down, end_down))) => {
            !midstream && (end_down < end_up || start_down > start_up)
        }
        _ => false,
    }
}

/// Whether `down` got every packet `up` saw that way, but each cut to a
/// smaller largest segment: packets truncated on the way (`tcprewrite
/// --mtu-trunc`, a middlebox cutting at an MTU), not data that stopped.
fn cut(up: &Way<'_>, down: &Way<'_>) -> bool {
    // (Payload there means a largest segment there: every one is counted in it.)
    down.payload.is_some() && down.largest.bytes < up.largest.bytes && down.packets >= up.packets
}

fn path_mtu(seen: &[(usize, &Flow)]) -> Option<Box<PathMtu>> {
    let signals: Vec<(usize, crate::flows::MtuSignal)> =
        seen.iter().filter_map(|&(c, f)| Some((c, *f.mtu_signal.as_deref()?))).collect();
    let smallest = signals.iter().map(|(_, s)| s).min_by_key(|s| (s.mtu, s.first_ns))?;
    // The nearest-to-client capture that saw them: if a capture before it (that
    // saw the connection) did not, they were lost in between.
    let (nearest, _) = signals[0];
    let lost =
        seen.iter().take_while(|&&(c, _)| c < nearest).last().map(|&(c, _)| Between { from: c, to: nearest });
    Some(Box::new(PathMtu {
        mtu: smallest.mtu,
        sender: smallest.sender,
        v6: smallest.v6,
        messages: signals.iter().map(|(_, s)| s.count).max().unwrap_or(0),
        seen_at: signals.iter().map(|&(c, _)| c).collect(),
        lost,
    }))
}

/// A flow's largest segment one way as findings hold it (`None`: no payload).
fn segment(m: MaxSegment) -> Option<Segment> {
    (m.bytes > 0).then_some(Segment { bytes: m.bytes, count: m.count })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(isn: u32) -> Flow {
        Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000, isn)
    }

    fn signal(mtu: u32, count: u32) -> crate::flows::MtuSignal {
        crate::flows::MtuSignal { mtu, sender: "198.19.1.1".parse().unwrap(), v6: false, count, first_ns: 5 }
    }

    #[test]
    fn client_data_that_stops_between_two_captures_is_located_with_the_lost_mtu_messages() {
        let (mut decap, mut egress, backend) = (flow(1), flow(2), flow(3));
        decap.client_payload = Some((0, 6000));
        egress.client_payload = Some((0, 6000));
        egress.max_to_server = MaxSegment { bytes: 1207, count: 5 };
        egress.mtu_signal = Some(Box::new(signal(1100, 51)));
        let d = data_path(&[Some(&decap), Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!(d.reached, Some(1));
        assert_eq!(d.stopped, Some(Between { from: 1, to: 2 }));
        assert_eq!(d.stopped_segment, Some(Segment { bytes: 1207, count: 5 }));
        assert_eq!((d.server_reached, d.server_stopped), (None, None));
        let m = d.mtu.unwrap();
        assert_eq!((m.mtu, m.messages, m.seen_at.clone()), (1100, 51, vec![1]));
        assert_eq!(m.lost, Some(Between { from: 0, to: 1 }), "seen at egress, never at decap");
    }

    #[test]
    fn data_that_arrived_re_segmented_did_not_stop_and_mtu_messages_that_reached_the_client_were_not_lost() {
        let (mut decap, mut egress, mut backend) = (flow(1), flow(2), flow(3));
        for f in [&mut decap, &mut egress, &mut backend] {
            f.client_payload = Some((0, 6000));
            f.server_payload = Some((0, 200));
        }
        decap.mtu_signal = Some(Box::new(signal(1100, 1)));
        egress.mtu_signal = Some(Box::new(signal(1100, 1)));
        let d = data_path(&[Some(&decap), Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!(
            (d.reached, d.stopped, d.server_reached, d.server_stopped),
            (Some(2), None, Some(0), None)
        );
        let m = d.mtu.unwrap();
        assert_eq!((m.seen_at.clone(), m.lost), (vec![0, 1], None));
    }

    #[test]
    fn part_of_the_data_stopping_counts_and_server_data_lost_on_its_way_back_too() {
        let (mut decap, mut backend) = (flow(1), flow(3));
        decap.client_payload = Some((0, 6000));
        backend.client_payload = Some((0, 300)); // the headers passed, the body did not
        backend.server_payload = Some((0, 9000));
        let d = data_path(&[Some(&decap), None, Some(&backend)], |_| 0).unwrap();
        assert_eq!(d.stopped, Some(Between { from: 0, to: 2 }), "compared with the next capture that saw it");
        assert_eq!(d.server_stopped, Some(Between { from: 0, to: 2 }));
        assert_eq!(d.server_reached, Some(2));
        assert_eq!(d.mtu, None);
        backend.client_payload = Some((5800, 6000)); // only the short last segment passed
        let d = data_path(&[Some(&decap), None, Some(&backend)], |_| 0).unwrap();
        assert_eq!(d.stopped, Some(Between { from: 0, to: 2 }));
    }

    #[test]
    fn data_seen_again_further_on_went_around_a_capture_and_did_not_stop() {
        let (mut decap, egress, mut backend) = (flow(1), flow(2), flow(3));
        decap.server_payload = Some((0, 100));
        backend.server_payload = Some((0, 100));
        decap.client_payload = Some((0, 50));
        backend.client_payload = Some((0, 50));
        let d = data_path(&[Some(&decap), Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!((d.stopped, d.server_stopped), (None, None));
        assert_eq!((d.reached, d.server_reached), (Some(2), Some(0)));
    }

    #[test]
    fn bytes_are_not_compared_across_a_terminating_proxy() {
        // haproxy in HTTP mode rewrote the response: 252 bytes from the
        // server, 181 to the client; the request grew by the headers it added.
        let (mut decap, mut egress, mut backend) = (flow(1), flow(2), flow(3));
        decap.server_payload = Some((0, 181));
        (egress.server_payload, backend.server_payload) = (Some((0, 252)), Some((0, 252)));
        decap.client_payload = Some((0, 400));
        (egress.client_payload, backend.client_payload) = (Some((0, 300)), Some((0, 300)));
        let flows = [Some(&decap), Some(&egress), Some(&backend)];
        let one = data_path(&flows, |_| 0).unwrap();
        assert_eq!(one.server_stopped, Some(Between { from: 0, to: 1 }), "one connection: the data stopped");
        assert_eq!(one.stopped, Some(Between { from: 0, to: 1 }));
        let proxied = data_path(&flows, |c| usize::from(c > 0)).unwrap();
        assert_eq!(
            (proxied.stopped, proxied.server_stopped),
            (None, None),
            "a proxy between decap and egress"
        );
        assert_eq!((proxied.reached, proxied.server_reached), (Some(2), Some(0)));
        // within the proxy's own connection, a loss is still found
        backend.server_payload = Some((0, 600));
        let flows = [Some(&decap), Some(&egress), Some(&backend)];
        let proxied = data_path(&flows, |c| usize::from(c > 0)).unwrap();
        assert_eq!(proxied.server_stopped, Some(Between { from: 1, to: 2 }));
    }

    #[test]
    fn server_data_alone_or_an_mtu_message_alone_is_something_to_say() {
        let (mut decap, mut backend) = (flow(1), flow(3));
        decap.server_payload = Some((0, 100));
        backend.server_payload = Some((0, 100));
        let d = data_path(&[Some(&decap), Some(&backend)], |_| 0).expect("server data");
        assert_eq!((d.reached, d.server_reached, d.stopped), (None, Some(0), None));
        let (mut decap, backend) = (flow(1), flow(3));
        decap.mtu_signal = Some(Box::new(signal(1100, 1)));
        let d = data_path(&[Some(&decap), Some(&backend)], |_| 0).expect("an MTU message");
        assert_eq!((d.reached, d.mtu.map(|m| m.mtu)), (None, Some(1100)));
    }

    #[test]
    fn a_midstream_flow_on_either_side_is_compared_by_presence_only() {
        // Offsets of a flow that missed its handshake start wherever its capture
        // began: a smaller range there is no loss, whichever side it is on.
        for midstream_at in [0, 1] {
            let (mut decap, mut backend) = (flow(1), flow(3));
            decap.client_payload = Some((0, 6000));
            backend.client_payload = Some((0, 1000));
            [&mut decap, &mut backend][midstream_at].orientation = Orientation::Midstream;
            let d = data_path(&[Some(&decap), Some(&backend)], |_| 0).unwrap();
            assert_eq!(d.stopped, None, "midstream at {midstream_at}");
        }
    }

    #[test]
    fn every_packet_arriving_cut_shorter_is_a_truncation_not_a_stop() {
        let (mut egress, mut backend) = (flow(1), flow(2));
        for (f, bytes) in [(&mut egress, 130), (&mut backend, 80)] {
            (f.packets_to_server, f.packets_to_client) = (5, 5);
            f.client_payload = Some((0, bytes - 52));
            f.server_payload = Some((0, bytes - 52));
            f.max_to_server = MaxSegment { bytes, count: 1 };
            f.max_to_client = MaxSegment { bytes, count: 1 };
        }
        let d = data_path(&[Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!((d.stopped, d.server_stopped), (None, None), "no stop");
        let between = Between { from: 0, to: 1 };
        let cut =
            Cut { between, before: Segment { bytes: 130, count: 1 }, after: Segment { bytes: 80, count: 1 } };
        assert_eq!(d.cut, Some(cut));
        assert_eq!(
            d.server_cut, None,
            "the server's segments grew on their way to the client: cut at the server's side"
        );
        // The server's data cut on its way back.
        let d = data_path(&[Some(&backend), Some(&egress)], |_| 0).unwrap();
        assert_eq!(
            d.server_cut.map(|c| (c.between, c.after.bytes, c.before.bytes)),
            Some((between, 80, 130))
        );
        assert_eq!((d.cut, d.stopped, d.server_stopped), (None, None, None));
        // Super-segments (TSO) upstream, MTU-sized ones downstream, all the
        // data there: neither cut nor stopped.
        let (mut tso, mut mtu) = (flow(1), flow(2));
        for (f, bytes, packets) in [(&mut tso, 3040, 2), (&mut mtu, 1488, 5)] {
            (f.packets_to_server, f.client_payload) = (packets, Some((0, 6000)));
            f.max_to_server = MaxSegment { bytes, count: 1 };
        }
        let d = data_path(&[Some(&tso), Some(&mtu)], |_| 0).unwrap();
        assert_eq!((d.stopped, d.cut), (None, None));
        // A packet missing downstream: a stop, whatever the sizes.
        backend.packets_to_server = 4;
        let d = data_path(&[Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!((d.stopped, d.cut), (Some(between), None));
        // Every packet, none smaller: the offsets alone decide (the tail got through).
        backend.packets_to_server = 5;
        backend.max_to_server = MaxSegment { bytes: 130, count: 1 };
        let d = data_path(&[Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!((d.stopped, d.cut), (Some(between), None));
        // No payload downstream: stopped, not cut.
        backend.client_payload = None;
        backend.max_to_server = MaxSegment::default();
        let d = data_path(&[Some(&egress), Some(&backend)], |_| 0).unwrap();
        assert_eq!((d.stopped, d.cut), (Some(between), None));
    }

    #[test]
    fn a_flow_without_payload_has_no_largest_segment() {
        assert_eq!(segment(MaxSegment { bytes: 0, count: 0 }), None);
        assert_eq!(segment(MaxSegment { bytes: 1, count: 1 }), Some(Segment { bytes: 1, count: 1 }));
    }

    #[test]
    fn nothing_to_say_without_payload_or_for_other_protocols() {
        let f = flow(1);
        assert_eq!(data_path(&[Some(&f), Some(&f)], |_| 0), None);
        let mut u = flow(1);
        u.proto = FlowProto::Udp;
        u.client_payload = Some((0, 10));
        assert_eq!(data_path(&[Some(&u)], |_| 0), None);
    }
}
