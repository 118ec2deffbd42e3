//! What one capture's packets say about overlays and tunnels: the overlays the
//! decoder peeled (by kind and VNI/key, with packet counts), damaged overlay
//! headers (one warning naming the first), and encrypted tunnel traffic (one
//! warning when it is nearly all the capture holds). Takes decoded packets in
//! file order (the correlation run and `inspect` both feed it); gives counts and
//! warnings. Never reads captures itself, never formats a report.

use crate::decode::{Encrypted, Overlay, OverlayDamage, Packet};
use crate::warning::Warning;

/// Distinct overlays (kind and id) counted one by one; later ones count under
/// their kind without an id (a hostile capture may name any VNI).
const COUNTED_OVERLAYS: usize = 32;

/// Share of a capture's decoded packets above which encrypted tunnel traffic
/// is "all it holds": 90 %.
const ENCRYPTED_SHARE: (u64, u64) = (9, 10);

/// The encrypted tunnels in the order they are named.
const ENCRYPTED: [Encrypted; 3] = [Encrypted::WireGuard, Encrypted::IpsecEsp, Encrypted::OpenVpn];

/// Counts of one capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TunnelTally {
    overlays: Vec<(Overlay, u64)>,
    damaged: u64,
    first_damage: Option<(u64, u64, OverlayDamage)>,
    /// Packets per `ENCRYPTED` entry.
    encrypted: [u64; 3],
    decoded: u64,
}

impl TunnelTally {
    /// Counts one decoded packet (`record`, `byte_offset`: where it is in the file).
    pub fn note(&mut self, p: &Packet, record: u64, byte_offset: u64) {
        self.decoded += 1;
        if let Some(o) = p.overlay {
            let key = if self.overlays.iter().any(|(k, _)| *k == o) || self.overlays.len() < COUNTED_OVERLAYS
            {
                o
            } else {
                Overlay { kind: o.kind, id: None }
            };
            match self.overlays.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => self.overlays.push((key, 1)),
            }
        }
        if let Some(d) = p.overlay_damage {
            self.damaged += 1;
            self.first_damage.get_or_insert((record, byte_offset, d));
        }
        if let Some(e) = p.encrypted {
            if let Some(i) = ENCRYPTED.iter().position(|&x| x == e) {
                self.encrypted[i] += 1;
            }
        }
    }

    /// The overlays peeled, with their packet counts, by kind then id.
    pub fn overlays(&self) -> Vec<(Overlay, u64)> {
        let mut list = self.overlays.clone();
        list.sort();
        list
    }

    /// Encrypted tunnel packets by tunnel (only those seen).
    pub fn encrypted(&self) -> Vec<(Encrypted, u64)> {
        ENCRYPTED.iter().copied().zip(self.encrypted).filter(|&(_, n)| n > 0).collect()
    }

    /// The warnings about this capture: damaged overlay headers; encrypted
    /// tunnel traffic making up more than 90 % of its decoded packets.
    pub fn warnings(&self, label: &str, file: &str) -> Vec<Warning> {
        let mut out = Vec::new();
        if let Some((record, byte_offset, d)) = self.first_damage {
            let n = self.damaged;
            out.push(Warning {
                label: label.to_string(),
                file: file.to_string(),
                record: Some(record),
                byte_offset: Some(byte_offset),
                problem: if n == 1 {
                    format!("1 packet has a damaged overlay header ({d})")
                } else {
                    format!("{n} packets have a damaged overlay header (this is the first: {d})")
                },
                consequence: format!("kept {} as the outer packet", if n == 1 { "it" } else { "them" }),
            });
        }
        let encrypted: u64 = self.encrypted.iter().sum();
        if encrypted > 0 && encrypted * ENCRYPTED_SHARE.1 > self.decoded * ENCRYPTED_SHARE.0 {
            let kinds: Vec<&str> = self.encrypted().iter().map(|(e, _)| e.name()).collect();
            out.push(Warning {
                label: label.to_string(),
                file: file.to_string(),
                record: None,
                byte_offset: None,
                problem: format!(
                    "this capture holds only encrypted tunnel traffic ({}: {encrypted} of {} packets)",
                    kinds.join(", "),
                    self.decoded
                ),
                consequence:
                    "capture on the decapsulated interface (the tunnel's inner side: wg0, tun0, ...)"
                        .to_string(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::OverlayKind;
    use crate::read::{LinkType, RawRecord};
    use crate::report::summary::overlay_name;

    /// Raw IPv4 UDP 198.18.0.1:40000 -> 198.18.0.2:`dport` carrying `payload`.
    fn udp(dport: u16, payload: &[u8]) -> Packet {
        let total = u16::try_from(28 + payload.len()).unwrap().to_be_bytes();
        let mut b =
            vec![0x45, 0, total[0], total[1], 0, 1, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2];
        b.extend_from_slice(&40000u16.to_be_bytes());
        b.extend_from_slice(&dport.to_be_bytes());
        b.extend_from_slice(&u16::try_from(8 + payload.len()).unwrap().to_be_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(payload);
        let rec = RawRecord {
            ts_ns: 1,
            interface: 0,
            link_type: LinkType::RawIp,
            data: &b,
            orig_len: 0,
            record: 1,
            byte_offset: 0,
        };
        crate::decode::decode(&rec).unwrap()
    }

    fn wireguard() -> Packet {
        udp(51820, &[&[4u8, 0, 0, 0][..], &[7; 60]].concat())
    }

    #[test]
    fn mostly_encrypted_capture_gives_one_warning_naming_the_tunnel() {
        let mut t = TunnelTally::default();
        for n in 0..95 {
            t.note(&wireguard(), n + 1, 24);
        }
        for n in 0..5 {
            t.note(&udp(53, b"plain"), n + 96, 24);
        }
        let w = t.warnings("wan", "wan.pcap");
        assert_eq!(w.len(), 1);
        assert_eq!(
            w[0].to_string(),
            "wan.pcap: this capture holds only encrypted tunnel traffic (WireGuard: 95 of 100 packets); \
             capture on the decapsulated interface (the tunnel's inner side: wg0, tun0, ...)"
        );
        assert_eq!(t.encrypted(), vec![(Encrypted::WireGuard, 95)]);
    }

    #[test]
    fn a_capture_with_some_encrypted_traffic_is_not_warned() {
        let mut t = TunnelTally::default();
        for n in 0..90 {
            t.note(&wireguard(), n + 1, 24);
        }
        for n in 0..10 {
            t.note(&udp(53, b"plain"), n + 91, 24);
        }
        // Exactly 90 %: not more than 90 %.
        assert_eq!(t.warnings("wan", "wan.pcap"), Vec::new());
    }

    #[test]
    fn overlays_are_counted_by_kind_and_id_and_named() {
        let mut t = TunnelTally::default();
        let mut p = udp(53, b"x");
        for (vni, n) in [(42, 3), (7, 1)] {
            p.overlay = Some(Overlay { kind: OverlayKind::Vxlan, id: Some(vni) });
            for _ in 0..n {
                t.note(&p, 1, 0);
            }
        }
        let list = t.overlays();
        assert_eq!(
            list.iter().map(|(o, n)| (overlay_name(o), *n)).collect::<Vec<_>>(),
            vec![("VXLAN vni 7".to_string(), 1), ("VXLAN vni 42".to_string(), 3)]
        );
        assert_eq!(overlay_name(&Overlay { kind: OverlayKind::Ip6In4, id: None }), "IPv6-in-IPv4 (6in4)");
    }

    #[test]
    fn many_vnis_are_bounded() {
        let mut t = TunnelTally::default();
        let mut p = udp(53, b"x");
        for vni in 0..100 {
            p.overlay = Some(Overlay { kind: OverlayKind::Vxlan, id: Some(vni) });
            t.note(&p, 1, 0);
        }
        let list = t.overlays();
        assert_eq!(list.len(), COUNTED_OVERLAYS + 1);
        assert_eq!(list[0], (Overlay { kind: OverlayKind::Vxlan, id: None }, 100 - COUNTED_OVERLAYS as u64));
    }

    #[test]
    fn damaged_overlays_give_one_warning_with_the_first_record() {
        let mut t = TunnelTally::default();
        let mut p = udp(4789, b"x");
        p.overlay_damage =
            Some(OverlayDamage { kind: OverlayKind::Vxlan, what: crate::decode::overlay::Damage::InnerIp });
        t.note(&udp(53, b"x"), 1, 24);
        t.note(&p, 2, 80);
        t.note(&p, 3, 140);
        let w = t.warnings("under", "under.pcap");
        assert_eq!(w.len(), 1);
        assert_eq!(
            w[0].to_string(),
            "under.pcap: record 2 at byte 80: 2 packets have a damaged overlay header (this is the first: \
             vxlan: the inner IP header is cut short or malformed); kept them as the outer packet"
        );
    }
}
