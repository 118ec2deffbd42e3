#!/usr/bin/env python3
"""Request plans, expectations and cross-checks of the tuplecorr lab (stdlib only).

  plan SCENARIO                     the requests the client sends (JSON, stdout)
  expect SCENARIO --work W --dest D LABEL=FILE... [--offset LABEL=MS...]
                                    writes D/expected.json from the scenario's model
                                    (what lab.sh configured), the client/server/proxy
                                    socket logs and the conntrack -E events in W
  verify D [--work W]               cross-checks D/expected.json against tshark's
                                    reading of the captures; writes D/checks.json;
                                    exits 1 on any disagreement
  index OUT                         rewrites OUT/index.tsv from OUT/*/expected.json
  compare EXPECTED ACTUAL           structural comparison used by lab-ci.sh

expected.json never comes from parsing the captures; verify is the independent check.
"""
import argparse
import json
import os
import re
import subprocess
import sys

SCENARIOS = [
    "preserved", "masquerade-node", "masquerade-pod", "dnat-service", "no-return-route", "reject",
    "proxy", "proxy-v1", "proxy-v2", "proxy-xff", "udp-icmp", "concurrent", "any-node", "clock-shift", "delay", "healthcheck", "ipv6",
    "rp-filter", "asymmetric", "syn-retransmit", "lossy-capture",
    "pmtu", "pmtu-blackhole", "pmtu-mss-clamp", "pmtu-ipv6", "any-node-sll", "any-router", "any-router-sll", "reply-elsewhere", "vxlan",
    "multihomed", "masq-agent", "masq-agent-drift", "nft-service", "proxy-nginx", "keepalive", "any-node-fork",
    "forward-drop", "stale-gateway", "backend-no-route", "dead-end-route", "pool-nodes", "follow-late-iface", "dnat-reject",
]

C42 = "198.18.90.42"
C43 = "198.18.90.43"
BACKEND = "198.19.96.10"
VIP = "198.19.200.10"
BACKEND2 = "198.19.96.11"  # reply-elsewhere: the backend's secondary address
BACKEND3 = "198.19.97.10"  # any-node-fork, follow-late-iface: the backend's second link, behind the node's be1;
#                             pool-nodes: the backend's second address, masqueraded by both nodes
C6 = "2001:db8:90::42"
BACKEND6 = "2001:db8:96::10"


def marker(sc, n):
    return f"tclab-{sc}-r{n:03d}"


def tcp(sc, n, src, sport, dst, dport, mk=None, **kw):
    mk = mk or marker(sc, n)
    d = {"id": n, "proto": "tcp", "src": src, "sport": sport, "dst": dst, "dport": dport, "marker": mk,
         "payload": f"GET /{mk} HTTP/1.1\r\nHost: backend\r\nUser-Agent: tclab\r\n\r\n"}
    d.update(kw)
    return d


def big_tcp(sc, n, src, sport, dst, dport, body=4000):
    """A request whose bytes need full-size segments: a 4 KB body after the marker line."""
    d = tcp(sc, n, src, sport, dst, dport, tcp_info=True)
    d["payload"] = (f"POST /{d['marker']} HTTP/1.1\r\nHost: backend\r\nContent-Length: {body}\r\n\r\n"
                    + "x" * body)
    return d


def udp(sc, n, src, sport, dst, dport=9000, **kw):
    mk = marker(sc, n)
    d = {"id": n, "proto": "udp", "src": src, "sport": sport, "dst": dst, "dport": dport, "marker": mk,
         "payload": f"{mk} udp-request\n"}
    d.update(kw)
    return d


def icmp(sc, n, src, ident, dst, count=3, **kw):
    mk = marker(sc, n)
    d = {"id": n, "proto": "icmp", "src": src, "ident": ident, "dst": dst, "count": count, "marker": mk,
         "payload": f"{mk} icmp-echo"}
    d.update(kw)
    return d


HTTP11_PORT = 8088  # traffic.py server --http11 (keepalive)


def http11(sc, n, src, sport, dst, requests, pipeline=False, **kw):
    """One keep-alive connection carrying several HTTP/1.1 requests (traffic.py
    run_http11); the marker travels in an X-Tclab header of every request."""
    reqs = []
    for q in requests:
        method, _, target = q.partition(" ") if " " in q else ("GET", "", q)
        reqs.append({"method": method, "target": target})
    d = {"id": n, "proto": "http11", "src": src, "sport": sport, "dst": dst, "dport": HTTP11_PORT,
         "marker": marker(sc, n), "pipeline": pipeline, "requests": reqs, "response_timeout": 3}
    d.update(kw)
    return d


def plan(sc):
    if sc == "keepalive":
        # one connection after another (`at`: small gaps), each from its own bound port
        conns = [
            (["/ok/1", "/ok/2", "/ok/3"], False),
            (["/ok/a", "/ok/b", "/slow/2000", "/status/500", "/ok/c"], False),
            (["/ok/p1", "/ok/p2", "/ok/p3", "/ok/p4"], True),
            (["/ok/x", "/ok/y", "/hang"], False),
            (["POST /ok/upload", "/ok/after-post", "HEAD /ok/head", "/ok/after-head"], False),
            (["/chunked", "/ok/after-chunked"], False),
            (["/ok/q1", "/hang", "/ok/q3"], True),
            (["/ok/d1", "/drop"], False),  # the node drops the response carrying X-Drop: yes
        ]
        out = [http11(sc, n, C42, 40000 + n, BACKEND, reqs, pipeline=pipe, gap=0.3)
               for n, (reqs, pipe) in enumerate(conns, 1)]
        out[4]["requests"][0]["body_len"] = 3000  # spans segments
        return out
    if sc == "preserved":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                udp(sc, 3, C42, 40003, BACKEND), icmp(sc, 4, C42, 4004, BACKEND),
                tcp(sc, 5, C42, 40005, BACKEND, 8082, expect="handshake-only")]  # silent server
    if sc in ("masq-agent", "masq-agent-drift"):
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80),
                tcp(sc, 3, C42, 40003, BACKEND2, 80), udp(sc, 4, C42, 40004, BACKEND)]
    if sc in ("masquerade-node", "clock-shift"):
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                tcp(sc, 3, C43, 40003, BACKEND, 80), udp(sc, 4, C42, 40004, BACKEND)]
    if sc == "masquerade-pod":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                tcp(sc, 3, C43, 40003, BACKEND, 80), udp(sc, 4, C42, 40004, BACKEND),
                icmp(sc, 5, C42, 4005, BACKEND)]
    if sc == "dnat-service":
        return [tcp(sc, n, C42, 40000 + n, VIP, 80) for n in (1, 2, 3)]
    if sc == "dnat-reject":
        return [tcp(sc, 1, C42, 40001, VIP, 80), tcp(sc, 2, C43, 40002, VIP, 80),
                tcp(sc, 3, C42, 40003, VIP, 80)]
    if sc == "nft-service":
        return [tcp(sc, 1, C42, 40001, VIP, 80), tcp(sc, 2, C43, 40002, VIP, 80),
                tcp(sc, 3, C42, 40003, BACKEND, 80), udp(sc, 4, C42, 40004, BACKEND)]
    if sc == "no-return-route":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), udp(sc, 2, C42, 40002, BACKEND),
                icmp(sc, 3, C42, 4003, BACKEND, count=2)]
    if sc == "reject":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80),
                tcp(sc, 2, C43, 40002, BACKEND, 80),     # icmp-admin-prohibited (source .43)
                tcp(sc, 3, C42, 40003, BACKEND, 8081),   # tcp-reset (port 8081)
                udp(sc, 4, C43, 40004, BACKEND),         # icmp-admin-prohibited, quoting the marker
                udp(sc, 5, C42, 40005, BACKEND)]
    if sc == "proxy":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                tcp(sc, 3, C43, 40003, BACKEND, 80),
                tcp(sc, 4, C42, 40004, BACKEND, 8080)]  # not redirected: routed as is
    if sc == "proxy-v2":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80)]
    if sc == "proxy-v1":
        spoofed = tcp(sc, 3, C42, 40003, BACKEND, 8080, xff="203.0.113.9")
        spoofed["payload"] = spoofed["payload"].replace("\r\n\r\n", "\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n")
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80),
                spoofed]  # port 8080: not redirected; the client sets X-Forwarded-For itself
    if sc == "proxy-xff":
        reqs = []
        for n, src, sport, xff in ((1, C42, 40001, None), (2, C43, 40002, "203.0.113.9"),
                                   (3, C42, 40003, None)):
            r = tcp(sc, n, src, sport, BACKEND, 80, xff=xff)
            extra = f"X-Request-ID: 4f1c2b7a-{marker(sc, n)}\r\n"
            if xff:
                extra += f"X-Forwarded-For: {xff}\r\n"
            r["payload"] = r["payload"].replace("\r\n\r\n", "\r\n" + extra + "\r\n")
            reqs.append(r)
        return reqs
    if sc == "proxy-nginx":
        # what crosses nginx: a request id, a W3C trace context only, or no id at all
        trace = "traceparent: 00-4bf92f3577b34da6a3ce9290000000{n:02d}-00f067aa0ba902b7-01"
        reqs = []
        for n, src, sport, header in ((1, C42, 40001, "X-Request-ID: 4f1c2b7a-{mk}"), (2, C43, 40002, trace),
                                      (3, C42, 40003, None), (4, C43, 40004, trace),
                                      (5, C43, 40005, None), (6, C42, 40006, "X-Request-ID: 4f1c2b7a-{mk}")):
            # Connection: close: nginx keeps an HTTP/1.1 client's connection open, and
            # the lab's client reads its answer until the server closes
            r = tcp(sc, n, src, sport, BACKEND, 80)
            extra = "Connection: close\r\n"
            if header:
                extra += header.format(mk=marker(sc, n), n=n) + "\r\n"
            r["payload"] = r["payload"].replace("\r\n\r\n", "\r\n" + extra + "\r\n")
            reqs.append(r)
        return reqs
    if sc == "udp-icmp":
        # the same source port / echo identifier from two client addresses: the
        # node's masquerade must remap the second one
        return [udp(sc, 1, C42, 5353, BACKEND), udp(sc, 2, C43, 5353, BACKEND),
                icmp(sc, 3, C42, 777, BACKEND), icmp(sc, 4, C43, 777, BACKEND),
                udp(sc, 5, C42, 40005, BACKEND)]
    if sc == "concurrent":
        return [tcp(sc, n, C42 if n % 2 else C43, 41000 + n, BACKEND, 80) for n in range(1, 41)]
    if sc == "concurrent-background-node":
        return [tcp("concurrent", 901, "198.19.3.17", 45001, BACKEND, 80, mk="tclab-concurrent-bg-node")]
    if sc == "concurrent-background-pod":
        return [icmp("concurrent", 902, "198.18.10.2", 902, "198.18.10.1", count=5, interval=0.2)]
    if sc == "vxlan":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80),
                udp(sc, 3, C42, 40003, BACKEND), icmp(sc, 4, C42, 4004, BACKEND)]
    if sc == "reply-elsewhere":
        # requests 2 and 4 go to the backend's secondary address; their replies leave
        # from the primary one (lab.sh cfg_reply-elsewhere); ICMP gives clock samples
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND2, 80, expect="no-reply"),
                udp(sc, 3, C42, 40003, BACKEND), udp(sc, 4, C42, 40004, BACKEND2, expect="no-reply"),
                icmp(sc, 5, C42, 4005, BACKEND, count=2)]
    if sc in ("any-node", "any-node-sll", "any-router", "any-router-sll"):
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80),
                udp(sc, 3, C42, 40003, BACKEND), icmp(sc, 4, C42, 4004, BACKEND)]
    if sc == "any-node-fork":
        # two destinations behind two interfaces of the node (be0 kept, be1
        # masqueraded); two pings with one echo identifier and one payload (as
        # fping and Windows ping send them), one to each; a datagram the node's
        # FORWARD chain drops
        echo = "tclab-any-node-fork-echo icmp-echo"
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND3, 80),
                icmp(sc, 3, C42, 777, BACKEND, marker="tclab-any-node-fork-echo", payload=echo),
                icmp(sc, 4, C42, 777, BACKEND3, marker="tclab-any-node-fork-echo", payload=echo),
                udp(sc, 5, C43, 40005, BACKEND3, expect="no-reply"), udp(sc, 6, C42, 40006, BACKEND),
                tcp(sc, 7, C43, 40007, BACKEND3, 80, expect="no-reply")]
    if sc == "follow-late-iface":
        # the first requests (0 to 0.6 s) all leave the node by be0 (kept); the
        # first one by be1 (masqueraded) is sent at 2.5 s: for --follow, an
        # out-interface that first carries traffic late. TCP only: a datagram
        # or an echo (a flow that may go on) holds --follow's windows around it
        # for --stream-hold, and lab-follow.sh's 14 s bound is for lines that
        # come as their connections close
        return [tcp(sc, 1, C42, 40001, BACKEND, 80, at=0), tcp(sc, 2, C42, 40002, BACKEND, 8080, at=0.2),
                tcp(sc, 3, C42, 40003, BACKEND, 80, at=0.4), tcp(sc, 4, C43, 40004, BACKEND, 80, at=0.6),
                tcp(sc, 5, C42, 40005, BACKEND3, 80, at=2.5), tcp(sc, 6, C42, 40006, BACKEND3, 8080, at=2.8),
                tcp(sc, 7, C43, 40007, BACKEND3, 80, at=3.1), tcp(sc, 8, C42, 40008, BACKEND, 80, at=3.4)]
    if sc == "pool-nodes":
        # .42 crosses node (masquerades everything), .43 crosses node2
        # (masquerades 198.19.97.0/24 only); UDP only to the primary address
        # (the server's UDP replies leave from it)
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80),
                tcp(sc, 3, C43, 40003, BACKEND3, 80), udp(sc, 4, C42, 40004, BACKEND),
                udp(sc, 5, C43, 40005, BACKEND), icmp(sc, 6, C43, 4006, BACKEND3),
                icmp(sc, 7, C42, 4007, BACKEND), tcp(sc, 8, C42, 40008, BACKEND3, 80)]
    if sc == "forward-drop":
        # the node's FORWARD chain drops everything from .43 (TCP, UDP, ICMP); .42 passes
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C43, 40002, BACKEND, 80, expect="no-reply"),
                udp(sc, 3, C43, 40003, BACKEND, expect="no-reply"),
                icmp(sc, 4, C43, 4004, BACKEND, count=2, expect="no-reply"), udp(sc, 5, C42, 40005, BACKEND)]
    if sc == "stale-gateway":
        # the node's route to the pool points at a gateway that no longer answers:
        # .42's replies die in the node; .43 has a host route via the live pod
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), udp(sc, 2, C42, 40002, BACKEND),
                icmp(sc, 3, C42, 4003, BACKEND, count=2), tcp(sc, 4, C43, 40004, BACKEND, 80)]
    if sc == "backend-no-route":
        # the backend has no route back to .42 (it answers nothing), one to .43
        return [tcp(sc, 1, C42, 40001, BACKEND, 80, expect="no-reply"),
                udp(sc, 2, C42, 40002, BACKEND, expect="no-reply"),
                icmp(sc, 3, C42, 4003, BACKEND, count=2, expect="no-reply"), tcp(sc, 4, C43, 40004, BACKEND, 80)]
    if sc == "dead-end-route":
        # the node's route to 198.19.96.0/24 is a blackhole; a host route to the
        # backend's second address 198.19.96.11 passes (TCP: its UDP replies
        # would leave from the primary address). Requests 1 and 5 frame the lost
        # ones, so the backend's capture is seen recording while they ran
        return [tcp(sc, 1, C42, 40001, BACKEND2, 80), tcp(sc, 2, C42, 40002, BACKEND, 80, expect="no-reply"),
                udp(sc, 3, C42, 40003, BACKEND, expect="no-reply"),
                icmp(sc, 4, C42, 4004, BACKEND, count=2, expect="no-reply"), tcp(sc, 5, C42, 40005, BACKEND2, 80)]
    if sc == "delay":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                tcp(sc, 3, C42, 40003, BACKEND, 80), udp(sc, 4, C42, 40004, BACKEND),
                icmp(sc, 5, C42, 4005, BACKEND)]
    if sc == "healthcheck":
        # TCLAB_HEALTHCHECK_SECONDS (scripts/lab-follow.sh): that long instead
        # of 3 s, still one every 200 ms (the committed captures hold 15)
        count = round(float(os.environ.get("TCLAB_HEALTHCHECK_SECONDS", "3")) / 0.2)
        return [tcp(sc, n, C42, 42000 + n, BACKEND, 80, mk="tclab-healthcheck", at=(n - 1) * 0.2)
                for n in range(1, count + 1)]
    if sc == "ipv6":
        return [tcp(sc, 1, C6, 40001, BACKEND6, 80), tcp(sc, 2, C6, 40002, BACKEND6, 80),
                udp(sc, 3, C6, 40003, BACKEND6), icmp(sc, 4, C6, 4004, BACKEND6)]
    if sc in ("asymmetric", "multihomed"):
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                udp(sc, 3, C42, 40003, BACKEND), icmp(sc, 4, C42, 4004, BACKEND)]
    if sc == "syn-retransmit":
        # TCP one at a time (so the node's every-other-SYN drop hits each first SYN);
        # UDP and ICMP give the clock estimate its samples
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), tcp(sc, 2, C42, 40002, BACKEND, 80),
                tcp(sc, 3, C43, 40003, BACKEND, 8080), udp(sc, 4, C42, 40004, BACKEND),
                icmp(sc, 5, C42, 4005, BACKEND)]
    if sc == "lossy-capture":
        # each client waits 200 ms between its handshake and its request, so
        # egress (which records only packets with payload, FIN or RST) first sees a
        # connection 200 ms after its SYN
        return [tcp(sc, 1, C42, 40001, BACKEND, 80, pause=0.2), tcp(sc, 2, C42, 40002, BACKEND, 80, pause=0.2),
                tcp(sc, 3, C43, 40003, BACKEND, 8080, pause=0.2), udp(sc, 4, C42, 40004, BACKEND),
                icmp(sc, 5, C42, 4005, BACKEND)]
    if sc == "rp-filter":
        return [tcp(sc, 1, C42, 40001, BACKEND, 80), udp(sc, 2, C42, 40002, BACKEND),
                icmp(sc, 3, C42, 4003, BACKEND, count=2)]
    if sc in ("pmtu", "pmtu-blackhole", "pmtu-mss-clamp"):
        # one connection at a time; UDP and ICMP give the clock estimate samples
        return [big_tcp(sc, 1, C42, 40001, BACKEND, 80), big_tcp(sc, 2, C42, 40002, BACKEND, 80),
                udp(sc, 3, C42, 40003, BACKEND), icmp(sc, 4, C42, 4004, BACKEND)]
    if sc == "pmtu-ipv6":
        return [big_tcp(sc, 1, C6, 40001, BACKEND6, 80), big_tcp(sc, 2, C6, 40002, BACKEND6, 80),
                udp(sc, 3, C6, 40003, BACKEND6), icmp(sc, 4, C6, 4004, BACKEND6)]
    raise SystemExit(f"no plan for scenario {sc}")


# What lab.sh configured, per scenario: used to derive expectations and checked
# against the socket logs and conntrack events (a disagreement aborts).
MODELS = {
    "preserved": {"desc": "No NAT anywhere: the client's source 198.18.90.42 is kept end to end; the node "
                          "routes replies back to the tunnel pool via the pod. TCP, UDP and ICMP echo; "
                          "request 5 goes to TCP 8082, where the server accepts and never answers: the "
                          "client gives up after 2 s with a RST (handshake-only)."},
    "asymmetric": {"bypass_egress": True,
                   "desc": "No NAT; asymmetric routing: requests leave the pod by eth0 (the egress capture), "
                           "but the node routes the tunnel pool back over a second pod link (eth1, not "
                           "captured): replies are seen at backend and decap, never at egress: reply path "
                           "bypassed (egress); outcomes completed."},
    "multihomed": {"desc": "No NAT; the backend is a multi-homed end host: requests reach it on eth0 (from the "
                           "node's be0), its route back to the tunnel pool leaves by a second link eth1 (to the "
                           "node's be1). Its capture is tcpdump -i any (LINUX_SLL2): requests on one interface, "
                           "replies on the other, no packet on both: one observation point 'backend' (an end "
                           "host is not split into in/out sub-points), replies seen there; outcomes completed."},
    "masq-agent": {"desc": "ip-masq-agent on the node: POSTROUTING jumps (addrtype ! LOCAL) to an IP-MASQ-AGENT "
                           "chain that RETURNs for 169.254.0.0/16 and 198.19.96.11/32 and masquerades the rest, "
                           "as its ConfigMap (masq-agent.yaml, nonMasqueradeCIDRs 198.19.96.11/32) asks; the "
                           "backend holds a second address 198.19.96.11. Requests to 198.19.96.10 become "
                           "198.19.3.17 between egress and backend (ports kept); request 3, to 198.19.96.11, "
                           "keeps its source. rules-node.txt, nft-node.txt and conntrack-node.log beside."},
    "masq-agent-drift": {"desc": "As masq-agent, but the ConfigMap keeps all of 198.19.96.0/24 unmasqueraded while "
                                 "the node's IP-MASQ-AGENT chain still RETURNs only for 198.19.96.11/32 (the "
                                 "agent has not applied it): requests to 198.19.96.10 are masqueraded to "
                                 "198.19.3.17 against the ConfigMap's intent; request 3 keeps its source."},
    "masquerade-node": {"desc": "iptables MASQUERADE on the node (-o be0): the source becomes 198.19.3.17 "
                                "between egress and backend (ports kept); replies on the same path."},
    "masquerade-pod": {"desc": "iptables MASQUERADE in the VPN pod (-o eth0): the source becomes the pod's "
                               "198.18.10.2 between decap and egress (ports kept). pcapng files "
                               "(editcap -F pcapng)."},
    "dnat-service": {"random_node_ports": True,
                     "desc": "kube-proxy-like service on the node: DNAT 198.19.200.10:80 -> 198.19.96.10:8080 "
                             "plus MASQUERADE --random-fully: source and destination both change between "
                             "egress and backend; source ports chosen at random (*)."},
    "nft-service": {"desc": "Native nftables on the node, no iptables rule (kube-proxy's nftables mode in small): "
                            "a service map DNATs 198.19.200.10:80 to 198.19.96.10:8080 (`dnat ip addr . port "
                            "to ip daddr . tcp dport map @services`, requests 1 and 2), and `oifname \"be0\" ip "
                            "saddr 198.18.90.0/24 masquerade` makes the source 198.19.3.17 between egress and "
                            "backend (ports kept) for every request. nft-node.txt, nft-node.json and "
                            "conntrack-node.log beside."},
    "no-return-route": {"return_ok": False,
                        "desc": "No NAT and the node has no route back to the tunnel pool 198.18.90.0/24: "
                                "requests reach the backend, its replies die on the node (which answers the "
                                "backend with ICMP net unreachable, 3/0, rate limited): reply-lost between "
                                "egress and backend, outcome no-reply."},
    "dnat-reject": {"random_node_ports": True,
                    "reject": [{"src": C43, "with": "icmp", "icmp": "3/13"}],
                    "desc": "As dnat-service (DNAT 198.19.200.10:80 -> 198.19.96.10:8080, MASQUERADE "
                            "--random-fully), and the node's FORWARD chain rejects source 198.18.90.43 with "
                            "icmp-admin-prohibited after the DNAT: the node's error quotes the translated "
                            "packet, and conntrack translates it back on its way to the client, its sender "
                            "included: request 2's error arrives from the service address 198.19.200.10, "
                            "which sent nothing (by 198.19.200.10, origin egress->backend). Requests 1 and 3 "
                            "complete."},
    "reject": {"reject": [{"src": C43, "with": "icmp", "icmp": "3/13"},
                          {"dport": 8081, "proto": "tcp", "with": "tcp-reset"}],
               "desc": "No NAT; the node's FORWARD chain rejects source 198.18.90.43 with "
                       "icmp-admin-prohibited (3/13, sent by the node from 198.18.10.1: by 198.18.10.1, origin "
                       "egress->backend) and TCP port 8081 with tcp-reset (RST forged with the backend's "
                       "address 198.19.96.10:8081, seen at decap and egress, never at backend: origin "
                       "egress->backend). Requests 2 and 3 never carry bytes (SYN only): marker null. "
                       "Requests 1 and 5 complete."},
    "proxy": {"proxy": True,
              "desc": "A terminating TCP proxy in the pod (iptables REDIRECT of tun0's port 80 to a python "
                      "proxy reading SO_ORIGINAL_DST) opens a new connection from 198.18.10.2 (random port *) "
                      "carrying the same request bytes: source change at decap->egress of kind proxy. "
                      "Request 4 (port 8080) is not redirected and keeps its source."},
    "proxy-v1": {"proxy": True, "send_proxy": "v1",
                 "desc": "A terminating TCP proxy in the pod (as in proxy) that writes a PROXY protocol v1 line "
                         "with the client's address before the request (haproxy's send-proxy), MASQUERADE on "
                         "the node, and a backend that reads the PROXY line on port 80 and logs the identity "
                         "it received: the source becomes 198.18.10.2 (proxy, decap->egress), then "
                         "198.19.3.17 (egress->backend), and the PROXY v1 line added decap->egress carries "
                         "the client (identity preserved). Request 3 (port 8080, not redirected) carries an "
                         "X-Forwarded-For: 203.0.113.9 the client set itself: client-side, not to be trusted."},
    "proxy-v2": {"proxy": True, "send_proxy": "v2",
                 "desc": "As proxy-v1 with a PROXY protocol v2 header (binary, PROXY command, TCP over IPv4, a "
                         "NOOP TLV; haproxy's send-proxy-v2) that the backend reads on port 80 and logs: "
                         "source changes decap->egress (proxy) and egress->backend (snat); the PROXY v2 "
                         "header added decap->egress carries the client (identity preserved)."},
    "proxy-xff": {"proxy": True, "http_proxy": True,
                  "desc": "An HTTP reverse proxy in the pod (iptables REDIRECT of tun0's port 80 to labnet.py "
                          "proxy --http) that rewrites every request (HTTP/1.0, Via, X-Forwarded-For with the "
                          "client appended, Connection) and every response (Via), keeping only the "
                          "X-Request-ID each request carries; MASQUERADE on the node. The request id alone "
                          "chains decap->egress (strong, request-id); the source changes decap->egress "
                          "(proxy) and egress->backend (snat); the X-Forwarded-For the backend logs was added "
                          "decap->egress and carries the client. Request 2's client sent X-Forwarded-For: "
                          "203.0.113.9 itself: the proxy appended the real client after it (client_set "
                          "203.0.113.9)."},
    "proxy-nginx": {"proxy": True, "http_proxy": True,
                    "desc": "nginx (as Debian ships it) as the HTTP reverse proxy in the pod: iptables REDIRECT of "
                            "tun0's port 80 to nginx, proxy_pass to the backend (HTTP/1.0 upstream, Host and "
                            "Connection rewritten, X-Forwarded-For with the client appended, every other header "
                            "passed on); MASQUERADE on the node. Requests 1 and 6 carry an X-Request-ID, 2 and 4 "
                            "only a W3C traceparent, 3 and 5 no id at all: every one is chained decap->egress "
                            "(proxy) and egress->backend (snat); the X-Forwarded-For the backend logs was added "
                            "decap->egress and carries the client."},
    "udp-icmp": {"desc": "UDP request/response and ICMP echo (3 echoes per flow) through MASQUERADE on the "
                         "node. Requests 1 and 2 use the same source port 5353 from .42 and .43, requests 3 "
                         "and 4 the same echo identifier 777: the node keeps the first and remaps the second "
                         "(port *; the echo identifier is rewritten, see checks.json). Files are gzip "
                         "compressed (.pcap.gz)."},
    "concurrent": {"desc": "40 concurrent TCP connections (alternating 198.18.90.42/.43) through MASQUERADE "
                           "on the node, plus background flows that are not requests: the pod pings the node "
                           "(seen only at egress) and the node itself talks to the backend "
                           "(marker tclab-concurrent-bg-node, seen only at backend)."},
    "any-node-fork": {"any_node": True, "ifaces": ("if2", {BACKEND: "if3", BACKEND3: "if4"}),
                      "drop": [{"src": C43, "dst": BACKEND3, "proto": "udp"}],
                      "reply_out": {C43: "if5"},
                      "desc": "A node with three interfaces: pod0 (ifindex 2) in, be0 (3) to the backend's eth0 "
                              "198.19.96.10 with the source kept, be1 (4) to the backend's second link eth1 "
                              "198.19.97.10 with MASQUERADE -o be1 (the source becomes 198.19.97.1); the node's "
                              "FORWARD chain drops 198.18.90.43 -> 198.19.97.10. Its capture 'node' is tcpdump "
                              "-i any (LINUX_SLL2): two sides, 'node(in)' (iface if2) and 'node(out)' (iface if3 "
                              "or if4 by destination), never a point per interface. Requests 3 and 4 are two "
                              "pings with one echo identifier (777) and one payload, one to each destination: "
                              "two requests, the second masqueraded at node(in)->node(out). Request 5 (UDP, "
                              "dropped) is seen at node(in), never at node(out). The node's route to 198.18.90.43 "
                              "leaves by up0 (ifindex 5, to a namespace that drops everything): request 7's "
                              "SYN-ACK, de-masqueraded, leaves the node by up0, not by pod0 (reply_iface if5 at "
                              "node(in)), and never reaches egress: reply-lost at egress->node(in), outcome "
                              "no-reply. The backend's capture is tcpdump -i any on its two links (an end host: "
                              "one point)."},
    "follow-late-iface": {
        "any_node": True, "ifaces": ("if2", {BACKEND: "if3", BACKEND3: "if4"}),
        "desc": "For --follow: a node with two out-interfaces, the second first used 2.5 s into the run. pod0 "
                "(ifindex 2) in; be0 (3) to the backend's eth0 198.19.96.10, source kept; be1 (4) to the "
                "backend's second link eth1 198.19.97.10 with MASQUERADE -o be1 (the source becomes "
                "198.19.97.1). TCP only, one connection every 0.2-0.3 s: requests 1-4 (0 to 0.6 s, from "
                "198.18.90.42 and, 4, from .43) go to 198.19.96.10 by be0; request 5 (at 2.5 s) is the first "
                "packet on be1, then 6 and 7 (from .43) by be1 and 8 by be0 again. The capture 'node' is tcpdump -i any "
                "(LINUX_SLL2): 'node(in)' (iface if2) and 'node(out)' (iface if3, or if4 from 2.5 s on); the "
                "source of requests 5-7 changes at node(in)->node(out). The backend's capture is tcpdump -i "
                "any on its two links (an end host: one point)."},
    "pool-nodes": {
        "pool": {"point": "nodes", "after": "egress",
                 "hosts": {"node-a.pcap": {"namespace": "node", "address": "198.19.3.17", "clients": [C42],
                                           "keep_to": None},
                           "node-b.pcap": {"namespace": "node2", "address": "198.19.3.18", "clients": [C43],
                                           "keep_to": "198.19.96."}}},
        "desc": "Two nodes of a pool side by side between the pod and the backend, on one L2 each side (a bridge "
                "br0 in the pod over its links to both nodes, one in the backend): the pod routes "
                "198.18.90.42 through node (198.18.10.1) and 198.18.90.43 through node2 (198.18.10.3, policy "
                "rule from 198.18.90.43 lookup 102). node masquerades all it sends (-A POSTROUTING -o be0 -j "
                "MASQUERADE: source 198.19.3.17, a pool without ip-masq-agent); node2 keeps the source to "
                "198.19.96.0/24 (-A POSTROUTING -d 198.19.96.0/24 -o be0 -j RETURN first, as ip-masq-agent "
                "does: requests 2 and 5, answered through node2) and masquerades the rest (the same "
                "MASQUERADE rule, one line later in its file: source 198.19.3.18, requests 3 and 6 to "
                "198.19.97.10). The backend holds 198.19.96.10 and 198.19.97.10. The point "
                "'nodes' is captured on both nodes' be0 at once: node-a.pcap (node) and node-b.pcap (node2), "
                "one label for two files (nodes=node-a.pcap nodes=node-b.pcap, between egress and backend); "
                "hosts.json holds per request the node file that recorded it, its endpoints there, whether "
                "its source was masqueraded and the MASQUERADE rule (rules-node.txt, rules-node2.txt: file "
                "and line). expected.json keeps the points one file each: decap, egress (the pod's br0) and "
                "backend (its br0); masqueraded sources change at egress->backend, ports kept."},
    "any-node": {"any_node": True, "ifaces": ("if2", "if3"),
                 "desc": "MASQUERADE on the node, with an additional capture point 'node' taken on the node "
                         "with tcpdump -i any (LINUX_SLL2, link type 276) between egress and backend: it holds "
                         "each packet twice, on pod0 (ifindex 2) before NAT and on be0 (ifindex 3) after NAT: "
                         "two observation points, the node's sides 'node(in)' (requests received: iface if2) and "
                         "'node(out)' (requests sent: iface if3), so the source changes inside the node, at "
                         "node(in)->node(out)."},
    "any-node-sll": {"any_node": True, "points": ("node(in)", "node(out)"),
                     "desc": "As any-node, but the node's capture is tcpdump -i any -y LINUX_SLL (link type 113: "
                             "no interface index, only the packet type): the node capture splits by direction "
                             "into 'node(in)' (packets the node received: on pod0 before NAT, and the replies on "
                             "be0) and 'node(out)' (packets it sent), so the source changes inside the node, at "
                             "node(in)->node(out)."},
    "any-router": {"any_node": True, "points": ("router(in)", "router(out)"), "ifaces": ("if2", "if3"),
                   "desc": "No NAT: the node only routes. Its capture 'router' is tcpdump -i any (LINUX_SLL2, "
                           "link type 276) and holds each forwarded packet twice, on pod0 (ifindex 2) and on be0 "
                           "(ifindex 3), with the same addresses and ports (the TTL drops by one): two "
                           "observation points, the sides 'router(in)' (iface if2) and 'router(out)' (iface if3), "
                           "no change anywhere."},
    "any-router-sll": {"any_node": True, "points": ("router(in)", "router(out)"),
                       "desc": "As any-router, captured with tcpdump -i any -y LINUX_SLL (link type 113, tcpdump "
                               "4.99's default for -i any: no interface index, only the packet type). Without NAT "
                               "each forwarded packet is seen twice with one tuple: received (on pod0 for "
                               "requests, on be0 for replies) and sent. Two observation points 'router(in)' (the "
                               "pod0 side: requests received, replies sent) and 'router(out)' (the be0 side), no "
                               "change anywhere."},
    "reply-elsewhere": {"reply_from": {BACKEND2: BACKEND},
                        "desc": "No NAT; the backend holds a secondary address 198.19.96.11. UDP: the server, bound "
                                "to 0.0.0.0, answers with sendto() and the kernel picks the route's source, the "
                                "primary 198.19.96.10 (ip route get, in the run); TCP: a stateless nftables rule in "
                                "the backend rewrites the source of 198.19.96.11:80's packets to 198.19.96.10. "
                                "Requests 2 (TCP) and 4 (UDP) to 198.19.96.11 get their reply from 198.19.96.10 "
                                "at every capture: the client rejects it (TCP RST, UDP ICMP 3/3) and times out: "
                                "outcome no-reply, unexpected source seen at decap. Requests 1, 3 and 5 (to "
                                "198.19.96.10) complete."},
    "vxlan": {"desc": "MASQUERADE on the node (-o vxlan0), and the node-backend link is a VXLAN (VNI 42, "
                      "UDP 4789) over an underlay veth 198.19.250.1/30 - 198.19.250.2/30: an additional "
                      "capture point 'underlay' on the node's underlay interface be0, between egress and "
                      "backend, holds every request and reply inside VXLAN (outer 198.19.250.1 <-> "
                      "198.19.250.2); 'backend' is the backend's vxlan0 (plain). The inner packets at "
                      "underlay are after NAT: the source becomes 198.19.3.17 at egress->underlay "
                      "(ports kept); tuplecorr peels the VXLAN (vni 42) at underlay."},
    "clock-shift": {"desc": "Like masquerade-node, then timestamps shifted after capture with editcap -t: "
                            "egress +2.75 s (its clock runs ahead of decap's: +2750 ms), backend -1.3 s "
                            "(-1300 ms)."},
    "delay": {"desc": "No NAT; every packet forwarded by the node (both directions, between egress and "
                      "backend) is held 20 ms by an NFQUEUE program (labnet.py nfqdelay; no sch_netem on "
                      "this kernel): one-way delay egress->backend about 20 ms each way (plus ~0.1-1 ms of "
                      "userspace latency), clocks not shifted (offsets 0)."},
    "healthcheck": {"desc": "15 identical health-check requests (the same bytes, marker tclab-healthcheck) "
                            "every 200 ms through MASQUERADE on the node: only ISN, ports and time tell them "
                            "apart, never the bytes."},
    "ipv6": {"v6": True,
             "desc": "IPv6: ip6tables MASQUERADE on the node: the source 2001:db8:90::42 becomes "
                     "2001:db8:3::17 between egress and backend (ports kept). TCP, UDP and ICMPv6 echo."},
    "syn-retransmit": {"desc": "MASQUERADE on the node, whose FORWARD chain drops every other TCP SYN "
                               "(statistic nth 2, packet 0): each connection's first SYN is seen at decap "
                               "and egress but dies in the node; the retransmission 1 s later reaches the "
                               "backend as 198.19.3.17 (ports kept). UDP and ICMP pass untouched."},
    "lossy-capture": {"desc": "MASQUERADE on the node; the egress capture loses packets: its tcpdump filter "
                              "keeps only TCP segments with payload, FIN or RST, so at egress each connection "
                              "(whose client waits 200 ms before its request) starts midstream, 200 ms after its "
                              "SYN. Every request is still seen at egress; the source changes at "
                              "egress->backend (to 198.19.3.17, ports kept)."},
    "pmtu": {"mtu": {"mtu": 1100, "sender": "198.18.10.1", "lost": None, "link_mtu": 1500},
             "desc": "No NAT; the node's link to the backend (be0) has MTU 1100, the rest 1500. Each TCP "
                     "request carries a 4 KB body in 1500-byte segments: the node answers the first with "
                     "ICMP 3/4 (next-hop MTU 1100, from its address towards the client, 198.18.10.1), the "
                     "client lowers its path MTU to 1100 (TCP_INFO tcpi_pmtu, in the client log) and "
                     "resends: completed, data reached the backend, path MTU 1100 seen at decap and egress."},
    "pmtu-blackhole": {"mtu": {"mtu": 1100, "sender": "198.18.10.1", "lost": "decap->egress",
                               "link_mtu": 1500},
                       "desc": "As pmtu, and the pod's FORWARD chain drops ICMP fragmentation-needed coming "
                               "from eth0: a path-MTU black hole. The handshake passes; the 1500-byte "
                               "segments are seen at decap and egress (retransmitted) and never at the "
                               "backend; the node's ICMP 3/4 (MTU 1100) are seen at egress, never at decap. "
                               "The client's tcpi_pmtu stays 1500 and the server never receives a request "
                               "(its log has no line for the marker): outcome data-stopped, data stopped "
                               "egress->backend, ICMP lost decap->egress. Marker null: it never reaches "
                               "the backend, whose capture still sees the handshake."},
    "pmtu-mss-clamp": {"mtu": None, "mss": 1060,
                       "desc": "As pmtu-blackhole, plus MSS clamping in the pod (mangle FORWARD, both ways, "
                               "TCPMSS --set-mss 1060 on SYN and SYN-ACK): the client's segments are at most 1100 bytes, "
                               "no ICMP is needed: requests complete; the SYN MSS changes decap->egress "
                               "(1460 -> 1060; the client's tcpi_snd_mss is at most 1060)."},
    "pmtu-ipv6": {"v6": True, "mtu": {"mtu": 1280, "sender": "2001:db8:10::1", "lost": None, "link_mtu": 1500},
                  "desc": "IPv6, no NAT; the node's link to the backend has MTU 1280: ICMPv6 packet-too-big "
                          "(2/0, MTU 1280, from the node's 2001:db8:10::1) makes the client lower its path "
                          "MTU (tcpi_pmtu 1280): requests complete, path MTU 1280 seen at decap and egress."},
    "rp-filter": {"rp_drop_at_pod": True,
                  "desc": "No NAT; policy routing by fwmark in the pod sends the tunnel's traffic out of eth0 "
                          "(table 100) while the main table routes 198.19.0.0/16 via a second link eth1. "
                          "Replies return on eth0 unmarked and strict rp_filter (=1) in the pod drops them "
                          "after the egress capture: reply-lost between decap and egress, outcome no-reply. "
                          "The pod's IPReversePathFilter counter (in checks.json) proves the drop."},
    "forward-drop": {"drop": [{"src": C43}],
                     "desc": "No NAT; the node's FORWARD chain drops one client: iptables -A FORWARD -s 198.18.90.43/32 -j DROP "
                             "(after the lab's own conntrack rule). Requests 2 (TCP), 3 (UDP) and 4 (ICMP echo) from "
                             "198.18.90.43 are seen at decap and egress (the SYN retransmitted) and never at backend: no "
                             "reply, no ICMP error, outcome no-reply (marker null for the TCP one: no byte was sent). "
                             "Requests 1 and 5 from 198.18.90.42 complete. The node has no nat rule: rules-node.txt "
                             "(iptables-save) is saved for its filter rules."},
    "stale-gateway": {"return_lost": [C42],
                      "desc": "No NAT; the eviction retest: the node's route to the tunnel pool 198.18.90.0/24 points via "
                              "198.18.10.99, an address in the pod subnet that no namespace owns (the VPN pod moved), "
                              "while 198.18.90.43 has a host route via the pod's live 198.18.10.2. The requests of "
                              "198.18.90.42 (1 TCP, 2 UDP, 3 ICMP echo) reach the backend; its replies die in the node: "
                              "the node's ARP requests for 198.18.10.99 (seen at egress, three per resolution, 1 s "
                              "apart) go unanswered, the entry turns INCOMPLETE, then FAILED (neigh-node.txt, taken "
                              "after the traffic, shows FAILED), and the node answers the replies it held with ICMP host "
                              "unreachable (3/1, from 198.19.3.17, seen at backend). Replies seen at backend, never at "
                              "egress: reply-lost egress->backend, outcome no-reply. Request 4 (from .43) completes."},
    "backend-no-route": {"backend_silent": [C42],
                         "desc": "No NAT; the backend has no route back to the client range (its 198.18.0.0/15 via "
                                 "198.19.3.17 removed), only a host route to 198.18.90.43. The requests of 198.18.90.42 "
                                 "(1 TCP, 2 UDP, 3 ICMP echo) are seen at every capture, backend included, and nothing "
                                 "answers them: the backend's kernel cannot route a SYN-ACK or an echo reply, and the "
                                 "server's UDP answer fails (sendto: network unreachable, in its log), so no packet leaves "
                                 "the backend for them, not even an ICMP error (it needs the same route): its capture "
                                 "holds the SYN and its retransmission, the datagram and the echo requests, nothing back. "
                                 "Outcome no-reply, reply seen nowhere (marker null for the TCP one): the captures show "
                                 "the request got as far as backend, not where the answer died; routes-backend.txt "
                                 "(no route to 198.18.90.42) says why. Request 4 (from .43) completes."},
    "dead-end-route": {"drop": [{"dst": BACKEND}],
                       "desc": "No NAT; the node's route to the backend's subnet is a blackhole (ip route replace "
                               "blackhole 198.19.96.0/24), with a host route on-link by be0 to the backend's second "
                               "address 198.19.96.11. Requests 2 (TCP), 3 (UDP) and 4 (ICMP echo) to 198.19.96.10 are seen "
                               "at decap and egress and never at backend: the node drops them silently (a blackhole "
                               "sends no ICMP error, no conntrack entry is confirmed), outcome no-reply (marker null for "
                               "the TCP one). Requests 1 and 5 (TCP to 198.19.96.11, before and after them) complete, so "
                               "the backend's capture is seen recording while the lost ones ran."},
    "keepalive": {"http11": {"drop_targets": ["/drop"], "drop_rule": "X-Drop: yes"},
                  "desc": "HTTP/1.1 keep-alive through MASQUERADE on the node: 8 TCP connections from "
                          "198.18.90.42 to a keep-alive server on 198.19.96.10:8088, each carrying several "
                          "requests answered in order (sequential; 3 and 7 pipelined, all requests in one "
                          "segment before the first response): 3 GETs; 5 with a 2 s /slow and a 500; 4 "
                          "pipelined; 3 whose last (/hang) is never answered, the client closes (FIN) after "
                          "3 s; a 3000-byte POST then GET, HEAD, GET; a chunked response then a GET; 3 "
                          "pipelined whose 2nd hangs (1 answer); a GET then /drop, whose response (header "
                          "X-Drop: yes) the node's FORWARD chain drops (iptables -m string): it is seen and "
                          "retransmitted at backend, never at egress or decap, and the client closes after 3 s. "
                          "One request per TCP connection, every one completed (some response came back); "
                          "the source becomes 198.19.3.17 between egress and backend (ports kept). "
                          "exchanges.json holds the truth per exchange."},
}


# --------------------------------------------------------------------------- helpers
def fmt_ep(addr, port):
    """Endpoint as in the output contract; port None for ICMP (bare address)."""
    if port is None:
        return addr
    p = "*" if port == "*" else str(port)
    return f"[{addr}]:{p}" if ":" in addr else f"{addr}:{p}"


def read_jsonl(path):
    out = []
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    return out


CT_RE = re.compile(r"\[(NEW|UPDATE|DESTROY)\]\s+(\w+)\s+\d+\s+(.*)$")


def read_conntrack(path):
    """NEW events of `conntrack -E` as (proto, orig, reply) with orig/reply dicts."""
    events = []
    if not os.path.exists(path):
        return events
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = CT_RE.search(line)
            if not m or m.group(1) != "NEW":
                continue
            proto = m.group(2)
            kv = re.findall(r"(\w+)=(\S+)", m.group(3))
            orig, reply = {}, {}
            for k, v in kv:
                if k not in ("src", "dst", "sport", "dport", "id", "type", "code"):
                    continue
                tgt = orig if k not in orig else reply
                tgt[k] = v
            events.append((proto, orig, reply))
    return events


def ct_key(proto, tup):
    """tup = (caddr, cport_or_id, saddr, sport_or_None)"""
    return (proto, tup[0], str(tup[1]), tup[2], str(tup[3]))


def ct_index(events):
    idx = {}
    for proto, o, r in events:
        if proto == "icmpv6":
            proto = "icmp"
        if proto == "icmp":
            if o.get("type") not in ("8", "128"):
                continue
            k = (proto, o["src"], o["id"], o["dst"], "None")
            v = (r["dst"], int(r["id"]), r["src"], None)
        elif proto in ("tcp", "udp"):
            k = (proto, o["src"], o["sport"], o["dst"], o["dport"])
            v = (r["dst"], int(r["dport"]), r["src"], int(r["sport"]))
        else:
            continue
        idx.setdefault(k, v)
    return idx


def fail(msg):
    print(f"labexpect: {msg}", file=sys.stderr)
    sys.exit(1)


# --------------------------------------------------------------------------- expect
# The node's -i any capture as tuplecorr's sub-points (docs/output.md); a
# scenario's model may name them otherwise ("points").
NODE_POINTS = ("node(in)", "node(out)")


def cmd_expect(a):
    sc = a.scenario
    model = MODELS[sc]
    node_in, node_out = model.get("points", NODE_POINTS)
    captures = {}
    given = [x.split("=", 1) for x in a.captures]
    multi = {lb for lb, _ in given if sum(1 for y, _ in given if y == lb) > 1}
    host_files = {}  # a point captured on several hosts (pool-nodes): its files, described in hosts.json
    for lb, f in given:
        if lb in multi:
            host_files.setdefault(lb, []).append(f)
            continue
        if lb in ("node", "router"):
            # tcpdump -i any on the node forwards every packet from pod0 (ifindex 2:
            # the node namespace's first link after lo) to be0 (ifindex 3): tuplecorr
            # splits it into two observation points, named by the interface index
            # (SLL2) or by the packet type, incoming or outgoing (SLL).
            captures[node_in] = f
            captures[node_out] = f
        else:
            captures[lb] = f
    labels = list(captures)
    offsets = {lb: 0 for lb in labels}
    for o in a.offset or []:
        lb, ms = o.split("=", 1)
        offsets[lb] = float(ms) if "." in ms else int(ms)
    w = a.work
    client = {r["id"]: r for r in read_jsonl(os.path.join(w, "client.jsonl"))}
    server = read_jsonl(os.path.join(w, "server.jsonl"))
    proxy = read_jsonl(os.path.join(w, "proxy.jsonl"))
    pod_ct = ct_index(read_conntrack(os.path.join(w, "conntrack-pod.log")))
    node_ct = ct_index(read_conntrack(os.path.join(w, "conntrack-node.log")))
    pool = model.get("pool")
    host_ct = {}
    if pool:
        if set(host_files) != {pool["point"]} or sorted(host_files[pool["point"]]) != sorted(pool["hosts"]):
            fail(f"{sc}: the point {pool['point']} must be given the files {sorted(pool['hosts'])}: {host_files}")
        # each node's own conntrack; the backend's view is whichever node forwarded it
        node_ct = {}
        for f, h in pool["hosts"].items():
            host_ct[f] = ct_index(read_conntrack(os.path.join(w, f"conntrack-{h['namespace']}.log")))
            node_ct.update(host_ct[f])
    elif host_files:
        fail(f"{sc}: labels given several files, the model has no pool: {host_files}")
    pool_reqs = []
    proxy += nginx_proxied(w, server, node_ct)
    reqs = []
    problems = []
    for p in plan(sc):
        rid = p["id"]
        c = client.get(rid)
        if c is None:
            fail(f"{sc}: request {rid} missing from the client log")
        proto = "tcp" if p["proto"] == "http11" else p["proto"]  # a keep-alive connection is TCP
        is_icmp = proto == "icmp"
        # capture 1 (decap): what the client's socket saw
        caddr, cport = c["sock"][0], c["sock"][1]
        saddr, sport = c["peer"][0], (None if is_icmp else c["peer"][1])
        dec = (caddr, cport, saddr, sport)
        # egress: the pod's view (proxy log, or the pod's conntrack translation)
        proxied = False
        egr = dec
        if model.get("proxy") and proto == "tcp":
            ent = [x for x in proxy if x.get("event") == "proxied" and x["downstream_peer"] == [caddr, cport]]
            if ent:
                e = ent[0]
                proxied = True
                egr = (e["upstream_sock"][0], "*", e["upstream_peer"][0], e["upstream_peer"][1])
                egr_concrete = (e["upstream_sock"][0], e["upstream_sock"][1], e["upstream_peer"][0],
                                e["upstream_peer"][1])
        if not proxied:
            k = ct_key(proto, dec)
            if k not in pod_ct:
                problems.append(f"request {rid}: no conntrack NEW event in the pod for {k}")
            else:
                egr = pod_ct[k]
                if egr[1] != dec[1]:
                    egr = (egr[0], "*", egr[2], egr[3])
            egr_concrete = pod_ct.get(k, dec)
        # backend: the node's conntrack says whether (and how) it forwarded the request
        rej = None
        for rule in model.get("reject", []):
            if ("src" in rule and rule["src"] == caddr) or (
                    "dport" in rule and rule.get("proto") == proto and rule["dport"] == sport):
                rej = rule
                break
        # dropped by the node (its filter, a blackhole route): never forwarded, no
        # reply, no error; a rule without src, dst or proto matches any
        dropped = any(rule.get("src", caddr) == caddr and rule.get("dst", p["dst"]) == p["dst"]
                      and rule.get("proto", proto) == proto for rule in model.get("drop", []))
        k = ct_key(proto, egr_concrete)
        forwarded = k in node_ct
        if dropped and forwarded:
            problems.append(f"request {rid}: dropped by the model but forwarded by the node: {node_ct[k]}")
        if rej and forwarded:
            problems.append(f"request {rid}: rejected by the model but forwarded by the node: {node_ct[k]}")
        if not rej and not dropped and not forwarded:
            problems.append(f"request {rid}: not rejected by the model but no NEW event on the node for {k}")
        seen_backend = forwarded
        bck = None
        if forwarded:
            t = node_ct[k]
            port = t[1]
            if not is_icmp and (model.get("random_node_ports") or port != egr_concrete[1] or egr[1] == "*"):
                port = "*"  # chosen by the kernel at random (here or, kept, upstream)
            bck = (t[0], port, t[2], t[3])
            # the server's sockets must agree with the node's conntrack
            srv = [x for x in server if (x.get("event") == "request" and x["proto"] == proto
                                         and p["marker"] in x.get("request_line", ""))
                   or (x.get("event") == "http11" and x.get("marker") == p["marker"])]
            if proto != "tcp" or c.get("result") == "response":
                want = [list(t[:2])]
                if not any([x["peer"][0], x["peer"][1]] in want for x in srv):
                    problems.append(f"request {rid}: server sockets saw {[x['peer'] for x in srv]}, "
                                    f"node conntrack says {t}")
        # replies, per capture: the node's route back (return_ok; return_lost:
        # the clients whose replies die in the node) and whether the backend
        # answers at all (backend_silent: no route back from it)
        return_ok = model.get("return_ok", True) and caddr not in model.get("return_lost", ())
        silent = caddr in model.get("backend_silent", ())
        reply_backend = seen_backend and not silent
        if silent and proto == "udp" and not any(
                x.get("event") == "error" and x.get("proto") == "udp" and "unreachable" in x.get("error", "")
                for x in server):
            problems.append(f"request {rid}: the backend should fail to answer (no route), its log has no error")
        # a reply from elsewhere (reply-elsewhere) is not the request's reply
        elsewhere = model.get("reply_from", {}).get(saddr)
        if elsewhere:
            reply_backend = False
        # the node's route back to this client leaves by another interface (any-node-fork)
        reply_out = model.get("reply_out", {}).get(caddr) if reply_backend else None
        reply_egress = bool(rej) or (reply_backend and return_ok and not model.get("bypass_egress")
                                     and not reply_out)
        reply_decap = bool((reply_egress and not model.get("rp_drop_at_pod")) or proxied or (
            model.get("bypass_egress") and reply_backend))
        res = c.get("result")
        # outcome at capture 1 (decap), from the client's socket
        outcome_icmp = None
        if res == "response":
            outcome = "completed"
        elif res in ("refused", "reset") and proto == "tcp":
            outcome = "reset"
        elif res in ("refused", "unreachable"):
            outcome = "icmp-error"
            outcome_icmp = rej["icmp"] if rej and rej.get("icmp") else ("3/3" if res == "refused" else None)
        elif res == "timeout" and c.get("connected") and proto == "tcp" and \
                (model.get("mtu") or {}).get("lost") and not server_got(server, p["marker"]):
            outcome = "data-stopped"  # the server never received the request
        elif res == "timeout":
            outcome = "handshake-only" if c.get("connected") else "no-reply"
        else:
            outcome = res or "no-reply"
            problems.append(f"request {rid}: client result {res!r}: {c.get('error')}")
        if rej and rej["with"] == "tcp-reset" and outcome != "reset":
            problems.append(f"request {rid}: model says tcp-reset, client saw {res}")
        if rej and rej["with"] == "icmp" and outcome != "icmp-error":
            problems.append(f"request {rid}: model says icmp error, client saw {res}")
        data = None
        if p.get("tcp_info"):
            first_big = rid == min(x["id"] for x in plan(sc) if x.get("tcp_info"))
            data = expect_data(rid, model, c, problems, outcome, first_big)
            p = dict(p, expect="data-stopped" if data and data["stopped"] else p.get("expect", "completed"))
        if not rej and return_ok and not model.get("rp_drop_at_pod") and outcome != p.get("expect", "completed"):
            problems.append(f"request {rid}: expected completed, client saw {res}: {c.get('error')}")
        if (dropped or silent or not return_ok) and outcome != "no-reply":
            problems.append(f"request {rid}: its request or reply dies on the way, client saw {res}")
        # per-capture view
        view = {}
        for lb in labels:
            if lb == "decap":
                view[lb] = (True, dec, reply_decap)
            elif lb == "egress":
                view[lb] = (True, egr, reply_egress)
            elif lb == node_in:  # tcpdump -i any on the node, pod0: before NAT
                view[lb] = (True, egr, bool(rej) or reply_backend)
            elif lb == node_out:  # ... and be0: after NAT
                view[lb] = (seen_backend, bck, reply_backend)
            elif lb in ("backend", "underlay"):  # underlay: the inner packets, after NAT
                view[lb] = (seen_backend, bck, reply_backend)
            else:
                fail(f"unknown label {lb}")
        caps = {}
        for lb in labels:
            seen, tup, rs = view[lb]
            if seen:
                caps[lb] = {"seen": True,
                            "client": fmt_ep(tup[0], None if is_icmp else tup[1]),
                            "server": fmt_ep(tup[2], None if is_icmp else tup[3]),
                            "reply_seen": rs}
            else:
                caps[lb] = {"seen": False, "client": None, "server": None, "reply_seen": rs}
            # The interface a request took at a side of the node (a field of the
            # request, not a point): SLL2 names it, pod0 is ifindex 2, be0 ifindex 3.
            if seen and model.get("ifaces") and lb in (node_in, node_out):
                iface = model["ifaces"][0 if lb == node_in else 1]
                caps[lb]["iface"] = iface if isinstance(iface, str) else iface[p["dst"]]
                if reply_out and lb == node_in:
                    caps[lb]["reply_iface"] = reply_out
        seen_labels = [lb for lb in labels if caps[lb]["seen"]]
        src_changed, dst_changed = [], []
        for x, y in zip(seen_labels, seen_labels[1:]):
            b = f"{x}->{y}"
            if caps[x]["client"] != caps[y]["client"]:
                if proxied and x == "decap":
                    src_changed.append({"between": b, "kind": "proxy"})
                else:
                    src_changed.append(b)
            if caps[x]["server"] != caps[y]["server"]:
                dst_changed.append(b)
        req = {}
        if data is not None:
            req["data"] = data
        if "reply_from" in model:
            req["unexpected_source"] = None if not elsewhere else {
                "from": fmt_ep(elsewhere, None if is_icmp else sport), "seen_at": labels[0],
                "packet": {"tcp": "syn-ack", "udp": "datagram"}[proto]}
        if model.get("send_proxy") or model.get("http_proxy") or p.get("xff"):
            req["identity"] = expect_identity(rid, model, p, caddr, cport, server, problems)
        if pool:
            pool_reqs.append(expect_pool_request(rid, pool, p, proto, egr_concrete, dec, host_ct, caps, labels,
                                                 reply_backend, w, problems))
        reqs.append(dict(req, **{
            "id": rid, "proto": proto,
            "marker": None if (proto == "tcp" and (not c.get("connected") or (data and data["stopped"])))
            else p["marker"],
            "captures": caps,
            "source_changed_at": src_changed,
            "destination_changed_at": dst_changed,
            "reply_path": reply_path([caps[lb]["seen"] for lb in labels],
                                     [caps[lb]["reply_seen"] for lb in labels]),
            "outcome": outcome,
            "outcome_icmp": outcome_icmp,
        }))
    if "reply_from" in model:
        reply_elsewhere_config(w, model, problems)
    exchanges = http11_exchanges(sc, model, w, client, server, node_ct, problems) if "http11" in model else None
    if problems:
        fail(f"{sc}: the run disagrees with the scenario's model:\n  " + "\n  ".join(problems))
    # requests are numbered in order of their first time at capture 1 (client start time)
    order = sorted(reqs, key=lambda r: (client[r["id"]].get("t_start", 0), r["captures"][labels[0]]["client"]))
    renum = {r["id"]: i + 1 for i, r in enumerate(order)}
    for r in order:
        r["id"] = renum[r["id"]]
    doc = {
        "scenario": sc,
        "description": model["desc"],
        "captures": captures,
        "clock_offsets_ms": offsets,
        "requests": order,
    }
    with open(os.path.join(a.dest, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    if pool:
        for r in pool_reqs:
            r["id"] = renum[r["id"]]
        pool_reqs.sort(key=lambda r: r["id"])
        after = labels.index(pool["after"])
        hosts = {"scenario": sc, "point": pool["point"],
                 "path": labels[:after + 1] + [pool["point"]] + labels[after + 1:],
                 "files": {f: pool_host_doc(h, w) for f, h in pool["hosts"].items()},
                 "requests": pool_reqs}
        with open(os.path.join(a.dest, "hosts.json"), "w", encoding="utf-8") as f:
            json.dump(hosts, f, indent=2)
            f.write("\n")
    if exchanges is not None:
        with open(os.path.join(a.dest, "exchanges.json"), "w", encoding="utf-8") as f:
            json.dump(exchanges, f, indent=1)
            f.write("\n")
    print(f"labexpect: {sc}: {len(order)} requests written", file=sys.stderr)


def masquerade_rule(w, namespace):
    """The MASQUERADE rule of a host's saved iptables-save (rules-NS.txt): its
    file, 1-based line and text; exactly one in the nat table, else None."""
    fn = f"rules-{namespace}.txt"
    path = os.path.join(w, fn)
    if not os.path.exists(path):
        return None
    table, found = None, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("*"):
                table = line[1:]
            elif table == "nat" and line.startswith("-A ") and line.endswith("-j MASQUERADE"):
                found.append({"file": fn, "line": n, "text": line})
    return found[0] if len(found) == 1 else None


def pool_host_doc(h, w):
    """One host of a point captured on several hosts, as hosts.json describes it."""
    return {"namespace": h["namespace"], "address": h["address"], "rules": f"rules-{h['namespace']}.txt",
            "masquerade": masquerade_rule(w, h["namespace"])}


def expect_pool_request(rid, pool, p, proto, egr, dec, host_ct, caps, labels, reply_backend, w, problems):
    """hosts.json's entry of one request (pool-nodes): the host file that recorded it
    at the pool's point (the node whose conntrack forwarded it: the model routes
    each client through one node), its endpoints there (after that node's NAT:
    captured on be0) and whether and by which rule its source was masqueraded."""
    is_icmp = proto == "icmp"
    k = ct_key(proto, egr)
    crossed = [f for f in pool["hosts"] if k in host_ct[f]]
    want = [f for f, h in pool["hosts"].items() if dec[0] in h["clients"]]
    if crossed != want:
        problems.append(f"request {rid}: the model routes it through {want}, conntrack says {crossed}")
    if not crossed:
        return {"id": rid, "decap_client": caps[labels[0]]["client"], "decap_server": caps[labels[0]]["server"],
                "host": None, "namespace": None, "seen": False, "client": None, "server": None,
                "reply_seen": False, "masqueraded": None, "rule": None}
    f = crossed[0]
    h = pool["hosts"][f]
    t = host_ct[f][k]
    masq = h["keep_to"] is None or not p["dst"].startswith(h["keep_to"])
    if masq != (t[0] == h["address"]):
        problems.append(f"request {rid}: masquerade by {h['namespace']} is {masq} in the model, conntrack says {t}")
    port = t[1] if not is_icmp and t[1] == egr[1] else "*"
    rule = masquerade_rule(w, h["namespace"]) if masq else None
    if masq and rule is None:
        problems.append(f"request {rid}: no single MASQUERADE rule in rules-{h['namespace']}.txt")
    return {"id": rid, "decap_client": caps[labels[0]]["client"], "decap_server": caps[labels[0]]["server"],
            "host": f, "namespace": h["namespace"], "seen": True,
            "client": fmt_ep(t[0], None if is_icmp else port), "server": fmt_ep(t[2], None if is_icmp else t[3]),
            "reply_seen": reply_backend, "masqueraded": masq, "rule": rule}


def http11_expected_status(target, model, hung):
    """What the keep-alive server answers and the client gets (traffic.py
    serve_http11_conn; the node drops the responses to model's drop_targets)."""
    if hung or target == "/hang" or target in model["http11"]["drop_targets"]:
        return None
    return 500 if target == "/status/500" else 200


def http11_exchanges(sc, model, w, client, server, node_ct, problems):
    """exchanges.json: per keep-alive connection (plan order) what the client sent
    and got back (its log), how many requests the backend's server logged for the
    connection (its peer is the client after the node's MASQUERADE: found through
    the node's conntrack) and which responses the node dropped (the server answered
    them, the client never got them, the model's drop rule matched). Checked
    against the model: statuses, server counts, the drop rule's counter."""
    out = []
    dropped_total = 0
    for p in plan(sc):
        c = client[p["id"]]
        k = ct_key("tcp", (c["sock"][0], c["sock"][1], c["peer"][0], c["peer"][1]))
        t = node_ct.get(k)
        if t is None:
            problems.append(f"connection {p['id']}: no node conntrack entry for {k}")
            continue
        at_backend = [t[0], t[1]]
        srv = [x for x in server if x.get("event") == "http11" and x["peer"] == at_backend
               and x["sock"] == [p["dst"], p["dport"]]]
        if any(x.get("marker") != p["marker"] for x in srv):
            problems.append(f"connection {p['id']}: the server's log for {at_backend} has other markers: {srv}")
        exs, dropped, hung = [], [], False
        for e in c["exchanges"]:
            want = http11_expected_status(e["target"], model, hung)
            hung = hung or e["target"] == "/hang"
            if e["status"] != want:
                problems.append(f"connection {p['id']} exchange {e['n']} {e['target']}: status {want} expected, "
                                f"the client got {e['status']}")
            s_e = srv[e["n"] - 1] if e["n"] <= len(srv) else None
            if s_e is not None and s_e["target"] != e["target"]:
                problems.append(f"connection {p['id']} exchange {e['n']}: the server saw {s_e['target']}, the "
                                f"client sent {e['target']}")
            answered = s_e is not None and isinstance(s_e["status"], int)
            if answered and e["status"] is None:
                if e["target"] not in model["http11"]["drop_targets"]:
                    problems.append(f"connection {p['id']} exchange {e['n']}: answered by the server, not by "
                                    f"the model's drop rule, never reached the client")
                dropped.append(e["n"])
            exs.append({"n": e["n"], "method": e["method"], "target": e["target"], "status": e["status"],
                        "request_t": None if e["request_t"] is None else round(e["request_t"], 6),
                        "response_t": None if e["response_t"] is None else round(e["response_t"], 6)})
        if len(srv) != sum(1 for e in c["exchanges"] if e["request_t"] is not None):
            problems.append(f"connection {p['id']}: the client sent "
                            f"{sum(1 for e in c['exchanges'] if e['request_t'] is not None)} requests, the server "
                            f"logged {len(srv)}")
        dropped_total += len(dropped)
        out.append({"conn": p["id"], "client": c["sock"], "client_at_backend": at_backend,
                    "pipelined": c["pipelined"], "exchanges": exs, "server_saw": len(srv),
                    "response_dropped_at_node": dropped})
    # the drop rule's own counter (nft list ruleset after the traffic)
    path = os.path.join(w, "nft-node.txt")
    hits = None
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            m = re.search(r"xt match string counter packets (\d+)", line)
            if m:
                hits = int(m.group(1))
    if dropped_total and not hits:
        problems.append(f"{dropped_total} responses dropped at the node, its string rule counted {hits}")
    return out


def nginx_proxied(w, server, node_ct):
    """nginx's access log as the proxy log labnet.py writes: nginx does not log
    the local port of its upstream connection, so it is found from the backend's
    log (the peer that sent the request's target) through the node's
    MASQUERADE (conntrack: the pod's address and port it translated)."""
    path = os.path.join(w, "nginx-access.jsonl")
    if not os.path.exists(path):
        return []
    nat = {(v[0], v[1]): (k[1], int(k[2])) for k, v in node_ct.items() if k[0] == "tcp"}
    out = []
    for e in read_jsonl(path):
        target = e["request"].split(" ")[1]
        got = [x for x in server
               if x.get("event") == "request" and x.get("request_line", "").split(" ")[1:2] == [target]]
        host, _, port = e["upstream_peer"].rpartition(":")
        sock = nat.get(tuple(got[0]["peer"])) if got else None
        if sock is None:
            fail(f"nginx: no backend request and node translation for {e}")
        out.append({"event": "proxied", "downstream_peer": e["downstream_peer"],
                    "upstream_sock": list(sock), "upstream_peer": [host, int(port)], "http": True})
    return out


def reply_elsewhere_config(w, model, problems):
    """The backend's configuration as lab.sh recorded it: the kernel's source for a
    reply to the client (ip route get) and the nftables rewrite."""
    with open(os.path.join(w, "backend-route.txt"), encoding="utf-8") as f:
        route = f.read()
    with open(os.path.join(w, "backend-nft.txt"), encoding="utf-8") as f:
        nft = f.read()
    for secondary, primary in model["reply_from"].items():
        if f" src {primary} " not in route:
            problems.append(f"the backend's route to the client does not pick {primary}: {route.strip()}")
        if f"ip saddr {secondary} tcp sport 80 ip saddr set {primary}" not in nft:
            problems.append(f"no nftables rewrite of {secondary}:80 to {primary}: {nft.strip()}")


def expect_identity(rid, model, p, caddr, cport, server, problems):
    """Who the backend took for the client, from the backend application's own log
    (the PROXY line or X-Forwarded-For it received), and who put it there, from the
    configuration (the pod's proxy writes PROXY lines; the plan says which requests
    the client itself gave an X-Forwarded-For)."""
    got = [x for x in server if x.get("event") == "request" and p["marker"] in x.get("request_line", "")]
    if not got:
        problems.append(f"request {rid}: the backend logged no request")
        return None
    e = got[0]
    if "proxy" in e:
        src = e["proxy"]["src"]
        if src != [caddr, cport]:
            problems.append(f"request {rid}: the proxy wrote {src}, the client was {[caddr, cport]}")
        if e["proxy"]["version"] != int(model["send_proxy"][1:]):
            problems.append(f"request {rid}: the proxy writes PROXY {model['send_proxy']}, the backend read {e['proxy']}")
        return {"carrier": f"proxy-v{e['proxy']['version']}", "carried": fmt_ep(src[0], src[1]), "added": "decap->egress",
                "preserved": src[0] == caddr, "client_set": None}
    if "x_forwarded_for" in e:
        xs = e["x_forwarded_for"]
        sent = p.get("xff")
        if sent and xs[0] != sent:
            problems.append(f"request {rid}: the client sent X-Forwarded-For {sent}, the backend got {xs}")
        if model.get("http_proxy"):
            # the pod's proxy appends the client it saw: added decap->egress
            if xs[-1] != caddr or (sent and xs[:-1] != [sent]):
                problems.append(f"request {rid}: the proxy should append {caddr} to {sent}: the backend got {xs}")
            added = "decap->egress"
        else:
            added = "client-side" if sent and len(xs) == 1 else None
        return {"carrier": "x-forwarded-for", "carried": xs[-1], "added": added,
                "preserved": xs[-1] == caddr, "client_set": sent}
    problems.append(f"request {rid}: expected a carrier, the backend got none: {e}")
    return None


def server_got(server, marker):
    return any(x.get("event") == "request" and marker in x.get("request_line", "") for x in server)


def expect_data(rid, model, c, problems, outcome, first_big):
    """Where a big request's data got, from the scenario's MTUs and the client's TCP_INFO:
    {"stopped", "path_mtu", "mtu_sender", "icmp_lost_between"}. A client that learned the
    path MTU keeps it in its route cache (net.ipv4.route.mtu_expires, 10 min): only its
    first big request meets the ICMP message; later ones start with the smaller MTU."""
    info = c.get("tcp_info") or {}
    m = model.get("mtu")
    if m is None:
        mss = model.get("mss")
        if mss and not 0 < info.get("snd_mss", 0) <= mss:
            problems.append(f"request {rid}: MSS clamped to {mss}, client tcp_info says {info}")
        return {"stopped": None, "path_mtu": None, "mtu_sender": None, "icmp_lost_between": None}
    if m["lost"]:
        # a black hole: the client never learns the smaller MTU and keeps retransmitting
        if info.get("pmtu") != m["link_mtu"] or info.get("total_retrans", 0) < 1:
            problems.append(f"request {rid}: black hole expected, client tcp_info says {info}")
        if outcome != "data-stopped":
            problems.append(f"request {rid}: black hole expected, outcome {outcome}")
        stopped = "egress->backend"
    else:
        if info.get("pmtu") != m["mtu"]:
            problems.append(f"request {rid}: path MTU {m['mtu']} expected, client tcp_info says {info}")
        if not first_big:
            return {"stopped": None, "path_mtu": None, "mtu_sender": None, "icmp_lost_between": None}
        stopped = None
    return {"stopped": stopped, "path_mtu": m["mtu"], "mtu_sender": m["sender"], "icmp_lost_between": m["lost"]}


def reply_path(seen, replied):
    """docs/output.md "Verdicts": same-path / reply-lost / bypassed / no-reply over captures in path order."""
    if not any(replied):
        return "no-reply"
    idx = [i for i, s in enumerate(seen) if s]
    missing = [i for i in idx if not replied[i]]
    if not missing:
        return "same-path"
    for i in missing:
        if any(replied[j] for j in range(i)) and any(replied[j] for j in range(i + 1, len(seen))):
            return "bypassed"
    return "reply-lost"


# --------------------------------------------------------------------------- verify (tshark)
TS_FIELDS = ["frame.number", "frame.time_epoch", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport",
             "tcp.flags", "tcp.len", "udp.srcport", "udp.dstport", "icmp.type", "icmp.code", "icmp.ident",
             "icmpv6.type", "icmpv6.code", "icmpv6.echo.identifier", "tcp.payload", "udp.payload",
             "data.data", "vxlan.vni", "sll.pkttype"]
TCPDUMP_TIME_RE = re.compile(r"\d\d:\d\d:\d\d\.\d+ ")
MARKER_RE = re.compile(r"tclab-[A-Za-z0-9-]*[A-Za-z0-9]")


def tshark_packets(path):
    cmd = ["tshark", "-n", "-r", path, "-o", "tcp.desegment_tcp_streams:FALSE", "-T", "fields",
           "-E", "occurrence=a", "-E", "aggregator=|", "-E", "separator=/t"]
    for fld in TS_FIELDS:
        cmd += ["-e", fld]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    pkts = []
    for line in out.splitlines():
        cols = line.split("\t")
        cols += [""] * (len(TS_FIELDS) - len(cols))
        f = {k: [v for v in c.split("|") if v != ""] for k, c in zip(TS_FIELDS, cols)}
        pkts.append(classify(f))
    return pkts


def _int(v):
    return int(v, 0) if v.startswith("0x") else int(v)


def classify(f):
    """One packet: outer addresses, protocol, ports, and for ICMP errors the quoted tuple.
    A packet inside VXLAN is described by its inner packet (tshark lists the outer
    IP and UDP fields first)."""
    if f["vxlan.vni"]:
        for k in ("ip.src", "ip.dst", "udp.srcport", "udp.dstport"):
            f[k] = f[k][1:]
    src = (f["ip.src"] or f["ipv6.src"] or [None])[0]
    dst = (f["ip.dst"] or f["ipv6.dst"] or [None])[0]
    pk = {"n": int(f["frame.number"][0]), "t": float(f["frame.time_epoch"][0]), "src": src, "dst": dst, "proto": None, "sport": None, "dport": None,
          "flags": 0, "tcp_len": 0, "error": None, "inner": None, "icmp_type": None, "ident": None,
          "payload": "", "sent": (f["sll.pkttype"] or [""])[0] == "4"}
    itype = [int(x) for x in f["icmp.type"]]
    i6type = [int(x) for x in f["icmpv6.type"]]
    err = None
    if itype and itype[0] in (3, 4, 5, 11, 12):
        err = f"{itype[0]}/{f['icmp.code'][0]}"
        isrc, idst = (f["ip.src"] + [None, None])[1], (f["ip.dst"] + [None, None])[1]
    elif i6type and i6type[0] in (1, 2, 3, 4):
        err = f"{i6type[0]}/{f['icmpv6.code'][0]}"
        isrc, idst = (f["ipv6.src"] + [None, None])[1], (f["ipv6.dst"] + [None, None])[1]
    hexes = f["tcp.payload"] or f["udp.payload"] or f["data.data"]
    if hexes:
        try:
            pk["payload"] = bytes.fromhex(hexes[-1].replace(":", "")).decode("latin-1")
        except ValueError:
            pass
    if f["tcp.srcport"]:
        l4 = ("tcp", int(f["tcp.srcport"][-1]), int(f["tcp.dstport"][-1]))
    elif f["udp.srcport"]:
        l4 = ("udp", int(f["udp.srcport"][-1]), int(f["udp.dstport"][-1]))
    else:
        l4 = None
    if err:
        pk["proto"] = "icmp-error"
        pk["error"] = err
        if l4:
            pk["inner"] = (l4[0], isrc, l4[1], idst, l4[2])
        else:
            pk["inner"] = ("icmp", isrc, None, idst, None)
        return pk
    if l4:
        pk["proto"], pk["sport"], pk["dport"] = l4
        if l4[0] == "tcp":
            pk["flags"] = _int(f["tcp.flags"][0]) if f["tcp.flags"] else 0
            pk["tcp_len"] = int(f["tcp.len"][0]) if f["tcp.len"] else 0
    elif itype or i6type:
        pk["proto"] = "icmp"
        pk["icmp_type"] = (itype or i6type)[0]
        ids = f["icmp.ident"] or f["icmpv6.echo.identifier"]
        if ids:
            pk["ident"] = _int(ids[0])
    return pk


def parse_ep(s):
    """'a.b.c.d:p', '[v6]:p', bare address -> (addr, port or '*' or None)"""
    if s is None:
        return None
    if s.startswith("["):
        addr, _, port = s[1:].partition("]:")
        return addr, ("*" if port == "*" else int(port))
    if s.count(":") == 1:
        addr, port = s.split(":")
        return addr, ("*" if port == "*" else int(port))
    return s, None


def port_ok(want, got):
    return want == "*" or want is None or want == got


def is_request_pkt(pk, proto, cl, sv):
    if proto == "icmp":
        return pk["proto"] == "icmp" and pk["icmp_type"] in (8, 128) and pk["src"] == cl[0] and pk["dst"] == sv[0]
    return (pk["proto"] == proto and pk["src"] == cl[0] and pk["dst"] == sv[0]
            and port_ok(cl[1], pk["sport"]) and port_ok(sv[1], pk["dport"]))


def verify_request(r, label, pkts, problems):
    """Checks one request at one capture; returns a summary for checks.json."""
    cap = r["captures"][label]
    proto = r["proto"]
    mk = r["marker"]
    with_marker = [pk for pk in pkts if mk and mk in pk["payload"] and pk["proto"] == proto
                   or (mk and proto == "icmp" and pk["proto"] == "icmp" and pk["icmp_type"] in (8, 128)
                       and mk in pk["payload"])]
    # a side of a split capture (`node(in)`, `node(out)`): its requests came in
    # (SLL packet type other than 4) or went out (4) there
    if label.endswith("(in)") or label.endswith("(out)"):
        with_marker = [pk for pk in with_marker if pk["sent"] == label.endswith("(out)")]
    summary = {"marker_packets": len(with_marker)}
    if not cap["seen"]:
        if with_marker and r["proto"] != "tcp-healthcheck":
            # identical health checks share a marker: only flag a foreign endpoint
            problems.append(f"request {r['id']} at {label}: expected not seen, marker in {len(with_marker)} packets")
        return summary
    cl, sv = parse_ep(cap["client"]), parse_ep(cap["server"])
    # the request's packets at this capture: by endpoints (the marker pins '*' ports)
    reqp = [pk for pk in pkts if is_request_pkt(pk, proto, cl, sv)]
    if mk:
        mine = [pk for pk in reqp if mk in pk["payload"]]
        if not mine:
            problems.append(f"request {r['id']} at {label}: no packet carries {mk} from {cap['client']} to "
                            f"{cap['server']}")
            return summary
        if cl[1] == "*":
            cl = (cl[0], mine[0]["sport"])
            reqp = [pk for pk in reqp if pk["sport"] == cl[1]]
        if proto == "icmp":
            ident = mine[0]["ident"]
            reqp = [pk for pk in reqp if pk["ident"] == ident]
            summary["icmp_id"] = ident
    if not reqp:
        problems.append(f"request {r['id']} at {label}: no packet from {cap['client']} to {cap['server']}")
        return summary
    summary["tuple"] = [fmt_ep(cl[0], cl[1]), fmt_ep(sv[0], sv[1])]
    summary["first_request_time"] = round(reqp[0]["t"], 6)
    # replies: server->client packets of the flow, or ICMP errors quoting it
    replies, errors = [], []
    for pk in pkts:
        if proto == "icmp":
            if pk["proto"] == "icmp" and pk["icmp_type"] in (0, 129) and pk["src"] == sv[0] \
                    and pk["dst"] == cl[0] and pk["ident"] == summary.get("icmp_id"):
                replies.append(pk)
        elif pk["proto"] == proto and pk["src"] == sv[0] and pk["dst"] == cl[0] and pk["sport"] == sv[1] \
                and pk["dport"] == cl[1]:
            replies.append(pk)
        if pk["proto"] == "icmp-error" and pk["inner"]:
            ip, isrc, isp, idst, idp = pk["inner"]
            if ip == proto and isrc == cl[0] and idst == sv[0] and (proto == "icmp" or (isp == cl[1] and idp == sv[1])):
                errors.append(pk)
    reply_seen = bool(replies or errors)
    if replies or errors:
        summary["first_reply_time"] = round(min(pk["t"] for pk in replies + errors), 6)
    summary["replies"] = len(replies)
    if r.get("unexpected_source"):
        # the reply from elsewhere: a packet from that endpoint to the client's
        ua, up = parse_ep(r["unexpected_source"]["from"])
        stray = [pk for pk in pkts if pk["proto"] == proto and pk["src"] == ua and pk["sport"] == up
                 and pk["dst"] == cl[0] and pk["dport"] == cl[1]]
        summary["unexpected_source_packets"] = len(stray)
        if not stray:
            problems.append(f"request {r['id']} at {label}: no packet from {r['unexpected_source']['from']} "
                            f"to {cap['client']}")
    summary["icmp_errors"] = [[e["src"], e["error"]] for e in errors]
    if reply_seen != cap["reply_seen"]:
        problems.append(f"request {r['id']} at {label}: reply_seen {cap['reply_seen']} expected, tshark says "
                        f"{reply_seen} ({len(replies)} replies, {len(errors)} ICMP errors)")
    return summary


def verify_data(r, exp, pk_by_label, rs, problems):
    """tshark's view of a request whose data should have stopped: client payload at
    every capture up to the boundary, none after it."""
    labels = list(exp["captures"])
    a, b = r["data"]["stopped"].split("->")
    for lb in labels:
        s = rs[lb]
        if "tuple" not in s:
            continue
        cl, sv = parse_ep(s["tuple"][0]), parse_ep(s["tuple"][1])
        payload = [pk for pk in pk_by_label[lb] if is_request_pkt(pk, "tcp", cl, sv) and pk["tcp_len"] > 0]
        s["client_payload_packets"] = len(payload)
        want = labels.index(lb) <= labels.index(a)
        if bool(payload) != want:
            problems.append(f"request {r['id']} at {lb}: client payload {'expected' if want else 'not expected'}, "
                            f"tshark sees {len(payload)} packets")
    return "data-stopped"


HTTP11_REQ_RE = re.compile(r"(GET|HEAD|POST) (\S+) HTTP/1\.1\r\n")
HTTP11_RESP_RE = re.compile(r"HTTP/1\.1 (\d{3}) ")


def verify_http11(exp, dest, pk_by_label, per_req, problems):
    """tshark's view of exchanges.json, per connection and capture: the request
    lines the client sent, the status lines of the responses (each segment once:
    a retransmission repeats its bytes), and for a pipelined connection how many
    requests went out before the first byte of a response."""
    with open(os.path.join(dest, "exchanges.json"), encoding="utf-8") as f:
        conns = json.load(f)
    labels = list(exp["captures"])
    out = []
    for c in conns:
        cl0 = fmt_ep(c["client"][0], c["client"][1])
        r = next((r for r in exp["requests"] if r["captures"][labels[0]]["client"] == cl0), None)
        if r is None:
            problems.append(f"connection {c['conn']}: no request from {cl0} in expected.json")
            continue
        sent = [e["target"] for e in c["exchanges"] if e["request_t"] is not None]
        answered = [e["status"] for e in c["exchanges"] if e["status"] is not None]
        at_backend = [e["status"] if e["status"] is not None else 200 for e in c["exchanges"]
                      if e["status"] is not None or e["n"] in c["response_dropped_at_node"]]
        row = {"conn": c["conn"], "request": r["id"]}
        for lb in labels:
            tup = per_req[str(r["id"])][lb].get("tuple")
            if not tup:
                problems.append(f"connection {c['conn']}: not seen at {lb}")
                continue
            cl, sv = parse_ep(tup[0]), parse_ep(tup[1])
            fwd, rev, seen_fwd, seen_rev = [], [], set(), set()
            for pk in pk_by_label[lb]:
                if pk["proto"] != "tcp" or not pk["tcp_len"]:
                    continue
                if (pk["src"], pk["sport"], pk["dst"], pk["dport"]) == (cl[0], cl[1], sv[0], sv[1]):
                    if pk["payload"] not in seen_fwd:
                        seen_fwd.add(pk["payload"])
                        fwd.append(pk)
                elif (pk["src"], pk["sport"], pk["dst"], pk["dport"]) == (sv[0], sv[1], cl[0], cl[1]):
                    if pk["payload"] not in seen_rev:
                        seen_rev.add(pk["payload"])
                        rev.append(pk)
            targets = [m.group(2) for pk in fwd for m in HTTP11_REQ_RE.finditer(pk["payload"])]
            statuses = [int(m.group(1)) for pk in rev for m in HTTP11_RESP_RE.finditer(pk["payload"])]
            first_resp = rev[0]["t"] if rev else float("inf")
            before = sum(len(HTTP11_REQ_RE.findall(pk["payload"])) for pk in fwd if pk["t"] < first_resp)
            v = {"requests": targets, "statuses": statuses, "requests_before_first_response": before,
                 "request_segments": len(fwd), "response_segments": len(rev)}
            want = at_backend if lb == labels[-1] else answered
            if targets != sent:
                problems.append(f"connection {c['conn']} at {lb}: requests {sent} in the logs, tshark sees {targets}")
            if statuses != want:
                problems.append(f"connection {c['conn']} at {lb}: statuses {want} expected, tshark sees {statuses}")
            if c["pipelined"] and before != len(sent):
                problems.append(f"connection {c['conn']} at {lb}: pipelined, but only {before} of {len(sent)} "
                                f"requests precede the first response")
            row[lb] = v
        out.append(row)
    return out


def verify_hosts(exp, dest, files, problems):
    """tshark's view of hosts.json (a point captured on several hosts): each
    request at the host file that recorded it, from its endpoints there
    (carrying its marker), replies as said; in every other host's file, no
    packet carrying its marker. Adds the host files to `files`."""
    with open(os.path.join(dest, "hosts.json"), encoding="utf-8") as f:
        hosts = json.load(f)
    by_id = {r["id"]: r for r in exp["requests"]}
    pkts = {}
    for fn in hosts["files"]:
        path = os.path.join(dest, fn)
        pkts[fn] = tshark_packets(path)
        n_td = tcpdump_count(path)
        if n_td is not None and n_td != len(pkts[fn]):
            problems.append(f"{fn}: tshark counts {len(pkts[fn])} packets, tcpdump {n_td}")
        files[fn] = {"packets": len(pkts[fn]),
                     "markers": sorted({m for pk in pkts[fn] for m in MARKER_RE.findall(pk["payload"])})}
    out = {}
    for h in hosts["requests"]:
        r = by_id[h["id"]]
        first = list(exp["captures"])[0]
        if (r["captures"][first]["client"], r["captures"][first]["server"]) != (h["decap_client"], h["decap_server"]):
            problems.append(f"hosts.json request {h['id']}: not expected.json's request {h['id']}")
        views = {fn: ({k: h[k] for k in ("seen", "client", "server", "reply_seen")} if fn == h["host"] else
                      {"seen": False, "client": None, "server": None, "reply_seen": False}) for fn in pkts}
        rr = dict(r, captures=views)
        out[str(h["id"])] = {fn: verify_request(rr, fn, pkts[fn], problems) for fn in pkts}
    return out


def outcome_from(summary_pkts, proto):
    replies, errors = summary_pkts
    if proto == "tcp":
        if any(pk["tcp_len"] > 0 or pk["flags"] & 0x01 for pk in replies):
            return "completed", None
        if any(pk["flags"] & 0x04 for pk in replies):
            return "reset", None
        errors = [e for e in errors if e["error"] not in ("3/4", "2/0")]  # path MTU: no error
        if errors:
            return "icmp-error", errors[0]["error"]
        if any(pk["flags"] & 0x12 == 0x12 for pk in replies):
            return "handshake-only", None
        return "no-reply", None
    if replies:
        return "completed", None
    if errors:
        return "icmp-error", errors[0]["error"]
    return "no-reply", None


def flow_packets(r, label, pkts, summary):
    cap = r["captures"][label]
    if "tuple" not in summary:
        return [], []
    cl, sv = parse_ep(summary["tuple"][0]), parse_ep(summary["tuple"][1])
    proto = r["proto"]
    replies, errors = [], []
    for pk in pkts:
        if proto == "icmp":
            if pk["proto"] == "icmp" and pk["icmp_type"] in (0, 129) and pk["src"] == sv[0] and pk["dst"] == cl[0]\
                    and pk["ident"] == summary.get("icmp_id"):
                replies.append(pk)
        elif pk["proto"] == proto and pk["src"] == sv[0] and pk["dst"] == cl[0] and pk["sport"] == sv[1] \
                and pk["dport"] == cl[1]:
            replies.append(pk)
        if pk["proto"] == "icmp-error" and pk["inner"]:
            ip, isrc, isp, idst, idp = pk["inner"]
            if ip == proto and isrc == cl[0] and idst == sv[0] and (proto == "icmp" or (isp == cl[1] and idp == sv[1])):
                errors.append(pk)
    del cap
    return replies, errors


def timing(exp, per_req, problems):
    """Median of (first request time at L) - (at capture 1), as recorded, per label;
    and per boundary the median one-way delay of the requests (recorded times minus
    the scenario's known clock offsets). Checks the clock-shift and delay scenarios."""
    labels = list(exp["captures"])
    offs = exp["clock_offsets_ms"]
    out = {"recorded_minus_capture1": {}, "one_way_delay": {}}

    def med(xs):
        xs = sorted(xs)
        return round(xs[len(xs) // 2], 3) if xs else None

    if exp["scenario"] in ("syn-retransmit", "lossy-capture"):
        # a TCP request's first SYN died in the node (at backend its first packet is
        # the retransmission, 1 s later) or was not captured (egress starts at the
        # request, 200 ms later): the clocks are read from UDP and ICMP
        tcp_ids = {str(r["id"]) for r in exp["requests"] if r["proto"] == "tcp"}
        per_req = {k: v for k, v in per_req.items() if k not in tcp_ids}

    for lb in labels[1:]:
        d = [(per_req[k][lb]["first_request_time"] - per_req[k][labels[0]]["first_request_time"]) * 1000
             for k in per_req if "first_request_time" in per_req[k].get(lb, {})
             and "first_request_time" in per_req[k].get(labels[0], {})]
        out["recorded_minus_capture1"][lb] = med(d)
    for a, b in zip(labels, labels[1:]):
        d = [(per_req[k][b]["first_request_time"] - offs[b] / 1000 - per_req[k][a]["first_request_time"]
              + offs[a] / 1000) * 1000
             for k in per_req if "first_request_time" in per_req[k].get(a, {})
             and "first_request_time" in per_req[k].get(b, {})]
        out["one_way_delay"][f"{a}->{b}"] = med(d)
    sc = exp["scenario"]
    for lb in labels[1:]:
        rec = out["recorded_minus_capture1"][lb]
        if rec is not None and abs(rec - offs[lb]) > (30 if sc == "delay" else 10):
            problems.append(f"timing: {lb} is {rec} ms from capture 1, clock_offsets_ms says {offs[lb]}")
    if sc == "delay":
        d = out["one_way_delay"].get("egress->backend")
        if d is None or not 19.5 <= d <= 30:
            problems.append(f"timing: one-way delay egress->backend {d} ms, 20 ms configured")
    return out


def tcpdump_count(path):
    if path.endswith(".gz"):
        return None
    out = subprocess.run(["tcpdump", "-n", "-r", path], check=True, capture_output=True, text=True).stdout
    # one line per packet, starting with its time; tcpdump prints what a VXLAN
    # packet carries on a line of its own (without a time)
    return sum(1 for line in out.splitlines() if TCPDUMP_TIME_RE.match(line))


def cmd_verify(a):
    dest = a.dest
    with open(os.path.join(dest, "expected.json"), encoding="utf-8") as f:
        exp = json.load(f)
    problems = []
    files = {}
    pk_by_label = {}
    for label, fn in exp["captures"].items():
        path = os.path.join(dest, fn)
        pkts = tshark_packets(path)
        pk_by_label[label] = pkts
        n_td = tcpdump_count(path)
        if n_td is not None and n_td != len(pkts):
            problems.append(f"{fn}: tshark counts {len(pkts)} packets, tcpdump {n_td}")
        markers = sorted({m for pk in pkts for m in MARKER_RE.findall(pk["payload"])})
        files[fn] = {"packets": len(pkts), "markers": markers}
    per_req = {}
    for r in exp["requests"]:
        rs = {}
        first = None
        for label in exp["captures"]:
            s = verify_request(r, label, pk_by_label[label], problems)
            rs[label] = s
            if first is None and r["captures"][label]["seen"]:
                first = label
        if first is not None:
            oc, icmp_c = outcome_from(flow_packets(r, first, pk_by_label[first], rs[first]), r["proto"])
            rs["outcome_at_" + first] = [oc, icmp_c]
            if r["outcome"] == "data-stopped" and oc == "handshake-only":
                oc = verify_data(r, exp, pk_by_label, rs, problems)
            if r.get("data"):
                rs["path_mtu_seen_at"] = [lb for lb in exp["captures"] if any(
                    e[1] in ("3/4", "2/0") for e in rs[lb].get("icmp_errors", []))]
            if oc != r["outcome"] or icmp_c != r["outcome_icmp"]:
                problems.append(f"request {r['id']}: outcome {r['outcome']} {r['outcome_icmp']} expected, "
                                f"tshark at {first} says {oc} {icmp_c}")
        per_req[str(r["id"])] = rs
    checks = {"tool": "tshark (packet counts confirmed with tcpdump -r where it can read the file)",
              "files": files, "requests": per_req, "timing_ms": timing(exp, per_req, problems)}
    if os.path.exists(os.path.join(dest, "hosts.json")):
        checks["hosts"] = verify_hosts(exp, dest, files, problems)
    if os.path.exists(os.path.join(dest, "exchanges.json")):
        checks["http11"] = verify_http11(exp, dest, pk_by_label, per_req, problems)
    counters_path = os.path.join(a.work, "counters.json") if a.work else ""
    if counters_path and os.path.exists(counters_path):
        with open(counters_path, encoding="utf-8") as f:
            counters = json.load(f)
        if exp["scenario"] == "rp-filter":
            checks["kernel_counters_delta"] = counters
            if counters["pod"]["IPReversePathFilter"] <= 0:
                problems.append("the pod's IPReversePathFilter counter did not grow")
        elif counters["pod"]["IPReversePathFilter"] != 0:
            problems.append(f"unexpected rp_filter drops in the pod: {counters}")
    elif exp["scenario"] == "rp-filter":
        old = os.path.join(dest, "checks.json")
        if os.path.exists(old):  # re-verifying committed data: keep the recorded counters
            with open(old, encoding="utf-8") as f:
                prev = json.load(f)
            if "kernel_counters_delta" in prev:
                checks["kernel_counters_delta"] = prev["kernel_counters_delta"]
    with open(os.path.join(dest, "checks.json"), "w", encoding="utf-8") as f:
        json.dump(checks, f, indent=1, sort_keys=True)
        f.write("\n")
    if problems:
        print(f"labexpect verify {exp['scenario']}: {len(problems)} disagreements:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    counts = ", ".join(f"{k} {v['packets']}" for k, v in files.items())
    print(f"labexpect verify {exp['scenario']}: OK ({len(exp['requests'])} requests; packets: {counts})",
          file=sys.stderr)


# --------------------------------------------------------------------------- index / compare
def cmd_index(a):
    rows = []
    for sc in SCENARIOS:
        p = os.path.join(a.out, sc, "expected.json")
        if not os.path.exists(p):
            continue
        with open(p, encoding="utf-8") as f:
            e = json.load(f)
        files = list(dict.fromkeys(e["captures"].values()))  # a split capture once
        rows.append("\t".join([sc, ",".join(files), str(len(e["requests"])),
                               e["description"].replace("\t", " ")]))
    with open(os.path.join(a.out, "index.tsv"), "w", encoding="utf-8") as f:
        f.write("scenario\tcaptures\trequests\tdescription\n")
        for r in rows:
            f.write(r + "\n")


def ep_match(want, got):
    if want is None or got is None:
        return want == got
    w, g = parse_ep(want), parse_ep(got)
    return w[0] == g[0] and (w[1] == "*" or g[1] == "*" or w[1] == g[1])


def cmd_compare(a):
    with open(a.expected, encoding="utf-8") as f:
        want = json.load(f)
    with open(a.actual, encoding="utf-8") as f:
        got = json.load(f)
    problems = []
    if list(want["captures"]) != list(got["captures"]):
        problems.append(f"capture labels {list(want['captures'])} != {list(got['captures'])}")
    key = lambda r: (r["marker"] or "", r["captures"][list(r["captures"])[0]]["client"])  # noqa: E731
    wr, gr = sorted(want["requests"], key=key), sorted(got["requests"], key=key)
    if len(wr) != len(gr):
        problems.append(f"{len(wr)} requests expected, {len(gr)} in the live run")
    for w, g in zip(wr, gr):
        tag = f"request {w['marker'] or w['id']}"
        for fld in ("proto", "marker", "source_changed_at", "destination_changed_at", "reply_path", "outcome",
                    "outcome_icmp"):
            if w[fld] != g[fld]:
                problems.append(f"{tag}: {fld} {w[fld]!r} expected, live {g[fld]!r}")
        if "unexpected_source" in w and w["unexpected_source"] != g.get("unexpected_source"):
            problems.append(f"{tag}: unexpected_source {w['unexpected_source']!r} expected, "
                            f"live {g.get('unexpected_source')!r}")
        for lb, wc in w["captures"].items():
            gc = g["captures"].get(lb, {})
            for fld in ("seen", "reply_seen"):
                if wc[fld] != gc.get(fld):
                    problems.append(f"{tag} at {lb}: {fld} {wc[fld]!r} expected, live {gc.get(fld)!r}")
            for fld in ("client", "server"):
                if not ep_match(wc[fld], gc.get(fld)):
                    problems.append(f"{tag} at {lb}: {fld} {wc[fld]!r} expected, live {gc.get(fld)!r}")
    if problems:
        print("lab compare: live run differs from " + a.expected, file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print(f"lab compare: live run matches {a.expected} ({len(wr)} requests)", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    x = sub.add_parser("plan")
    x.add_argument("scenario")
    x = sub.add_parser("expect")
    x.add_argument("scenario")
    x.add_argument("--work", required=True)
    x.add_argument("--dest", required=True)
    x.add_argument("--offset", action="append")
    x.add_argument("captures", nargs="+")
    x = sub.add_parser("verify")
    x.add_argument("dest")
    x.add_argument("--work")
    x = sub.add_parser("index")
    x.add_argument("out")
    x = sub.add_parser("compare")
    x.add_argument("expected")
    x.add_argument("actual")
    a = p.parse_args()
    if a.cmd == "plan":
        json.dump(plan(a.scenario), sys.stdout, indent=1)
        print()
    elif a.cmd == "expect":
        cmd_expect(a)
    elif a.cmd == "verify":
        cmd_verify(a)
    elif a.cmd == "index":
        cmd_index(a)
    else:
        cmd_compare(a)


if __name__ == "__main__":
    main()
