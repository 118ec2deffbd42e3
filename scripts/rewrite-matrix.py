#!/usr/bin/env python3
"""How often tuplecorr chains real traffic through a real rewriter, and
whether what it says of it holds (issue 30).

For each capture given (real traffic: the shared corpus's many-protocol,
IPv6, VLAN and cooked captures, the lab's captures) and each rewrite below,
`tcprewrite` (or `editcap`) makes the "after" capture from the "before" one,
packet for packet. The truth is then known per packet: the flow a packet
belongs to before and after. tuplecorr runs on (before, after); each TCP or
UDP flow of the before capture whose rewritten flow is its own (no two flows
rewritten onto one: "non-colliding") is scored:

  right   chained to the flow its packets became
  wrong   chained to another flow
  missed  not chained (seen only at one capture, or left unmatched)

Flows some of whose packets the rewriter itself gave another payload length
(tcprewrite 4.4 turns Ethernet padding into payload when it edits a packet)
are scored apart, as `altered`: their bytes differ, so no tool can know them
for the same flow by their bytes; the target is on the others.

Run the debug build to also check every sentence against its fields: a test
build asserts the consistency checker on every request it writes, so a
contradiction stops the run (counted as `contradiction`).

  scripts/rewrite-matrix.py target/debug/tuplecorr "$TUPLECORR_CORPUS"/pcpp__ExamplesTest__many-protocols.pcap ...

Needs tcprewrite (Debian tcpreplay), editcap and tshark (Debian tshark).
Prints one line per capture and rewrite, then the totals; exits 1 when a
rewrite scores below 99.5 % right or a contradiction was found.
"""

import bisect
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

# name -> (tool, arguments); `{i}` and `{o}` are the input and output files.
REWRITES = [
    ("pnat", "tcprewrite", ["--pnat=0.0.0.0/1:128.0.0.0/1,128.0.0.0/1:0.0.0.0/1"]),
    ("portmap", "tcprewrite", ["--portmap=80:8080,443:8443,53:5353,5060:15060"]),
    # server ports moved above every client port: midstream connections are
    # guessed the other way round after it, until the other side settles them
    ("portmap-high", "tcprewrite", ["--portmap=80:65080,443:65443,53:65053,1075:65075,5060:65060"]),
    ("tcp-sequence", "tcprewrite", ["--tcp-sequence=12345"]),
    ("ttl-set", "tcprewrite", ["--ttl=58"]),
    ("ttl-plus", "tcprewrite", ["--ttl=+3"]),
    ("tos", "tcprewrite", ["--tos=184"]),
    ("mtu-trunc", "tcprewrite", ["--mtu=300", "--mtu-trunc"]),
    ("vlan-add", "tcprewrite", ["--enet-vlan=add", "--enet-vlan-tag=40", "--enet-vlan-cfi=0", "--enet-vlan-pri=0"]),
    ("clock+2.5s", "editcap", ["-t", "2.5"]),
    ("loss-2%", "editcap", []),  # every 50th packet dropped (see make)
]

FIELDS = ["frame.number", "ip.proto", "ipv6.nxt", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
          "tcp.srcport", "tcp.dstport", "udp.srcport", "udp.dstport", "ip.flags.mf", "ip.frag_offset",
          "tcp.len", "udp.length"]


def packets(path):
    """frame number -> (canonical flow key (proto, endpoint, endpoint), payload
    length), TCP and UDP only."""
    args = ["tshark", "-n", "-r", path, "-o", "ip.defragment:FALSE", "-T", "fields"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=False).stdout
    keys = {}
    for line in out.splitlines():
        c = line.split("\t")
        c += [""] * (len(FIELDS) - len(c))
        num, proto4, proto6, s4, d4, s6, d6, ts, td, us, ud, mf, off, tlen, ulen = c[:15]
        # the first value of each field: the outer header of a tunnel
        first = lambda v: v.split(",")[0]
        src, dst = first(s4) or first(s6), first(d4) or first(d6)
        if ts:
            proto, sp, dp = "tcp", first(ts), first(td)
        elif us:
            proto, sp, dp = "udp", first(us), first(ud)
        else:
            continue
        if not src or (off and first(off) not in ("", "0")):
            continue
        a, b = f"{src}|{sp}", f"{dst}|{dp}"
        keys[int(num)] = ((proto,) + tuple(sorted((a, b))), first(tlen) or first(ulen))
    return keys


def endpoint_key(proto, client, server):
    def split(e):
        host, _, port = e.rpartition(":")
        return f"{host.strip('[]')}|{port}"
    return (proto,) + tuple(sorted((split(client), split(server))))


def make(name, tool, args, src, dst):
    if name.startswith("loss"):
        n = int(subprocess.run(["capinfos", "-c", "-M", src], capture_output=True, text=True)
                .stdout.split()[-1])
        drop = [str(k) for k in range(50, n + 1, 50)]
        subprocess.run(["editcap", src, dst] + drop, check=True, capture_output=True)
        return {int(k) for k in drop}
    cmd = [tool] + args + (["-i", src, "-o", dst] if tool == "tcprewrite" else [src, dst])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[:200]}")
    return set()


def score(tool, before, name, tool_name, args, tmp):
    after = os.path.join(tmp, f"{name}.pcap")
    dropped = make(name, tool_name, args, before, after)
    kb = packets(before)
    ka = packets(after)
    # packet k of `before` is packet k - (drops before it) of `after`
    truth = defaultdict(Counter)
    # Flows some of whose packets the rewriter itself gave another payload
    # length (tcprewrite 4.4 --tcp-sequence turns Ethernet padding into
    # payload): other bytes, not the same flow as far as any tool can know.
    altered = set()
    gone = sorted(dropped)
    for k in sorted(kb):
        if k in dropped:
            continue
        shift = bisect.bisect_left(gone, k)  # the packets dropped before it
        if k - shift in ka:
            (fb, lb), (fa, la) = kb[k], ka[k - shift]
            truth[fb][fa] += 1
            if lb != la and name != "mtu-trunc":
                altered.add(fb)
    became = {f: c.most_common(1)[0][0] for f, c in truth.items()}
    onto = Counter(became.values())
    fair = {f for f, g in became.items() if onto[g] == 1}
    r = subprocess.run([tool, "--quiet", "--format", "json", before, after], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        panic = "contradicts the fields" in r.stderr or "panicked" in r.stderr
        return {"contradiction" if panic else "error": 1, "detail": r.stderr.strip()[-300:]}
    report = json.loads(r.stdout)
    chained = defaultdict(set)
    for q in report["requests"]:
        if q["proto"] not in ("tcp", "udp"):
            continue
        h = q["captures"]
        if h[0]["seen"] and h[1]["seen"]:
            a = endpoint_key(q["proto"], h[0]["client"], h[0]["server"])
            b = endpoint_key(q["proto"], h[1]["client"], h[1]["server"])
            chained[a].add(b)
    out = Counter()
    for f in fair:
        got = chained.get(f)
        verdict = "missed" if not got else "right" if got == {became[f]} else "wrong"
        out[verdict if f not in altered else f"altered-{verdict}"] += 1
    out["colliding"] = sum(1 for g in became.values() if onto[g] > 1)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    tool, captures = sys.argv[1], sys.argv[2:]
    totals = defaultdict(Counter)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for cap in captures:
            for name, tool_name, args in REWRITES:
                try:
                    s = score(tool, cap, name, tool_name, args, tmp)
                except RuntimeError as e:
                    print(f"{os.path.basename(cap):50} {name:13} skipped: {e}")
                    continue
                detail = s.pop("detail", "") if isinstance(s, dict) else ""
                s = Counter(s)
                totals[name].update(s)
                n = s["right"] + s["wrong"] + s["missed"]
                pct = 100.0 * s["right"] / n if n else 100.0
                print(f"{os.path.basename(cap):50} {name:13} right {s['right']:4} wrong {s['wrong']:3} "
                      f"missed {s['missed']:3} colliding {s['colliding']:3} {pct:6.2f} %; altered: right "
                      f"{s['altered-right']}, wrong {s['altered-wrong']}, missed {s['altered-missed']}"
                      + (f"  {list(k for k in ('error', 'contradiction') if s[k])} {detail}" if detail else ""))
    print("\ntotals per rewrite (non-colliding TCP/UDP flows):")
    for name, _, _ in REWRITES:
        s = totals[name]
        n = s["right"] + s["wrong"] + s["missed"]
        pct = 100.0 * s["right"] / n if n else 100.0
        bad = pct < 99.5 or s["contradiction"] or s["error"]
        failed |= bool(bad)
        print(f"  {name:13} right {s['right']:5} of {n:5} ({pct:6.2f} %), wrong {s['wrong']}, missed {s['missed']}, "
              f"contradictions {s['contradiction']}, errors {s['error']}; altered by the rewriter: right "
              f"{s['altered-right']}, wrong {s['altered-wrong']}, missed {s['altered-missed']}"
              + ("  BELOW TARGET" if bad else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
