//! Per request, per capture: the flow it was seen as (tuple, raw time range)
//! and its packet events (SYN, SYN-ACK, first data, first reply data, FIN, RST,
//! ICMP errors) on capture 1's clock. Built from the flow summaries and the
//! correlation, next to the findings and apart from them: the HTML report draws
//! its ladders from it and the merged pcapng maps packets to requests with it.
//! It is not part of the JSON contract (`--format json` never shows it).

use crate::correlate::Correlation;
use crate::flows::{Endpoint, Flow, FlowProto, Flows};
use crate::read::LinkType;
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

/// The ladder data of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ladder {
    pub captures: Vec<LadderCapture>,
    /// In request order: `requests[n]` is request `n + 1`.
    pub requests: Vec<LadderRequest>,
}

/// One capture point.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderCapture {
    pub label: String,
    pub file: String,
    /// Clock offset against capture 1 (positive: runs ahead); corrected = raw - offset.
    pub offset_ns: i64,
    /// The capture's interfaces in file order (pcap: one).
    pub interfaces: Vec<LadderInterface>,
    /// Index of the capture (file) this point is, or is a sub-point of.
    pub source: usize,
    /// That capture's label (`label` with the sub-point's name removed).
    pub capture: String,
    /// Which of the capture's packets make this point (None: all of them).
    pub point: Option<crate::flows::points::PointKey>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LadderInterface {
    pub link_type: LinkType,
    pub snaplen: u32,
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LadderRequest {
    pub request: u64,
    /// One entry per capture, in path order; None where it was not seen.
    pub hops: Vec<Option<LadderHop>>,
}

/// The request's flow at one capture.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderHop {
    pub proto: FlowProto,
    pub client: Endpoint,
    pub server: Endpoint,
    /// First and last packet of the flow as recorded (this capture's clock).
    pub first_ns: i64,
    pub last_ns: i64,
    /// Packets counted for the flow (both ways; ICMP errors not included).
    pub packets: u64,
    /// The interface of its first packet and, when another, of its other
    /// direction (`Flow::first_interface`, `Flow::other_interface`).
    pub interface: u32,
    pub other_interface: Option<u32>,
    /// In time order.
    pub events: Vec<LadderEvent>,
}

/// What a packet event was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Syn,
    SynAck,
    /// First client data (TCP), first datagram / echo request (UDP, ICMP).
    Request,
    /// First server data (TCP), first reply datagram / echo reply (UDP, ICMP).
    Reply,
    Fin,
    Rst,
    IcmpError,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Syn => "SYN",
            EventKind::SynAck => "SYN-ACK",
            EventKind::Request => "data",
            EventKind::Reply => "reply data",
            EventKind::Fin => "FIN",
            EventKind::Rst => "RST",
            EventKind::IcmpError => "ICMP",
        }
    }
}

/// One packet event at one capture.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderEvent {
    pub kind: EventKind,
    /// On capture 1's clock.
    pub ts_ns: i64,
    /// Travelling towards the client.
    pub to_client: bool,
    /// RST / ICMP: the sender, and the ICMP type/code.
    pub detail: Option<String>,
}

/// Builds the ladder data; `order` is the verdict's request order. Sets each
/// capture's clock offset from the correlation.
pub fn build(
    mut captures: Vec<LadderCapture>,
    flows: &[Flows],
    corr: &Correlation,
    order: &[usize],
) -> Ladder {
    for (c, clock) in captures.iter_mut().zip(&corr.clocks) {
        c.offset_ns = clock.offset_ns;
    }
    let requests = order
        .iter()
        .enumerate()
        .map(|(n, &c)| {
            let chain = &corr.chains[c];
            let hops = (0..flows.len())
                .map(|cap| {
                    let f = chain.hops.get(cap).copied().flatten().and_then(|i| flows[cap].flows.get(i))?;
                    let offset = corr.clocks.get(cap).map_or(0, |k| k.offset_ns);
                    Some(hop(f, offset))
                })
                .collect();
            LadderRequest { request: n as u64 + 1, hops }
        })
        .collect();
    Ladder { captures, requests }
}

fn hop(f: &Flow, offset_ns: i64) -> LadderHop {
    let mut events = Vec::new();
    let mut push = |kind, ts: Option<i64>, to_client, detail: Option<String>| {
        if let Some(ts) = ts {
            events.push(LadderEvent { kind, ts_ns: ts.saturating_sub(offset_ns), to_client, detail });
        }
    };
    if f.proto == FlowProto::Tcp {
        let syn = f.client_isn.is_some() && f.syn_count > 0;
        push(EventKind::Syn, if syn { f.first_client_ns.get() } else { None }, false, None);
        push(EventKind::SynAck, f.synack_ns.get(), true, None);
        push(EventKind::Request, f.client_data_ns.get(), false, None);
        push(EventKind::Reply, f.server_data_ns.get(), true, None);
        push(EventKind::Fin, f.client_fin_ns.get(), false, None);
        push(EventKind::Fin, f.server_fin_ns.get(), true, None);
        for (rst, to_client) in
            [(f.rst_to_client.as_deref().copied(), true), (f.rst_to_server.as_deref().copied(), false)]
        {
            if let Some(r) = rst {
                push(EventKind::Rst, Some(r.ts_ns), to_client, Some(format!("from {}", r.sender)));
            }
        }
    } else {
        push(EventKind::Request, f.first_client_ns.get(), false, None);
        push(EventKind::Reply, f.first_server_ns.get(), true, None);
    }
    for e in &f.icmp_errors {
        let detail = format!("{}/{} from {}", e.icmp_type, e.code, e.sender);
        push(EventKind::IcmpError, Some(e.ts_ns), e.about_request, Some(detail));
    }
    events.sort_by_key(|e| e.ts_ns);
    LadderHop {
        proto: f.proto,
        client: f.client,
        server: f.server,
        first_ns: f.first_ns,
        last_ns: f.last_ns,
        packets: f.packets_to_server + f.packets_to_client,
        interface: f.first_interface,
        other_interface: f.other_interface(),
        events,
    }
}

/// The ladder of the reported requests as the HTML report embeds it:
/// `{"requests":[{"request":N,"t0":NS,"hops":[null|[[KIND,DT_NS,TO_CLIENT(,DETAIL)],...]]}]}`,
/// times in ns after `t0` (the request's earliest event on capture 1's clock;
/// relative, so they stay exact as JavaScript numbers).
pub struct Embedded<'a> {
    pub ladder: &'a Ladder,
    /// The request numbers reported, ascending (filters keep numbers).
    pub reported: &'a [u64],
}

impl Serialize for Embedded<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            requests: Reqs<'a>,
        }
        struct Reqs<'a>(&'a Embedded<'a>);
        impl Serialize for Reqs<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let e = self.0;
                let mut seq = s.serialize_seq(None)?;
                for &n in e.reported {
                    // Request numbers are 1-based positions in `requests`.
                    if let Some(r) = n.checked_sub(1).and_then(|i| e.ladder.requests.get(i as usize)) {
                        seq.serialize_element(&Req(r))?;
                    }
                }
                seq.end()
            }
        }
        Out { requests: Reqs(self) }.serialize(s)
    }
}

struct Req<'a>(&'a LadderRequest);

impl Serialize for Req<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            request: u64,
            t0: i64,
            hops: Vec<Option<Vec<Ev<'a>>>>,
        }
        let r = self.0;
        let t0 = r.hops.iter().flatten().flat_map(|h| &h.events).map(|e| e.ts_ns).min().unwrap_or(0);
        let hops =
            r.hops.iter().map(|h| h.as_ref().map(|h| h.events.iter().map(|e| Ev(e, t0)).collect())).collect();
        Out { request: r.request, t0, hops }.serialize(s)
    }
}

struct Ev<'a>(&'a LadderEvent, i64);

impl Serialize for Ev<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Ev(e, t0) = self;
        let mut seq = s.serialize_seq(Some(if e.detail.is_some() { 4 } else { 3 }))?;
        seq.serialize_element(e.kind.name())?;
        seq.serialize_element(&e.ts_ns.saturating_sub(*t0))?;
        seq.serialize_element(&u8::from(e.to_client))?;
        if let Some(d) = &e.detail {
            seq.serialize_element(d)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn ep(last: u8, port: u16) -> Endpoint {
        Endpoint { addr: IpAddr::V4(Ipv4Addr::new(198, 18, 0, last)), port }
    }

    fn ladder() -> Ladder {
        let ev = |kind, ts_ns, to_client| LadderEvent { kind, ts_ns, to_client, detail: None };
        let hop = |t: i64| LadderHop {
            proto: FlowProto::Tcp,
            client: ep(1, 40000),
            server: ep(2, 80),
            first_ns: t,
            last_ns: t + 10,
            packets: 2,
            interface: 0,
            other_interface: None,
            events: vec![ev(EventKind::Syn, t, false), ev(EventKind::SynAck, t + 10, true)],
        };
        Ladder {
            captures: Vec::new(),
            requests: vec![
                LadderRequest { request: 1, hops: vec![Some(hop(1_700_000_000_000_000_000)), None] },
                LadderRequest { request: 2, hops: vec![Some(hop(5)), Some(hop(7))] },
            ],
        }
    }

    #[test]
    fn embedded_times_are_relative_and_only_reported_requests_appear() {
        let l = ladder();
        let text = serde_json::to_string(&Embedded { ladder: &l, reported: &[2] }).unwrap();
        assert_eq!(
            text,
            r#"{"requests":[{"request":2,"t0":5,"hops":[[["SYN",0,0],["SYN-ACK",10,1]],[["SYN",2,0],["SYN-ACK",12,1]]]}]}"#
        );
        let text = serde_json::to_string(&Embedded { ladder: &l, reported: &[1, 9] }).unwrap();
        assert!(text.contains(r#""t0":1700000000000000000,"hops":[[["SYN",0,0],["SYN-ACK",10,1]],null]"#));
        assert!(!text.contains(r#""request":9"#));
    }
}
