#!/usr/bin/env python3
"""Checks a lab scenario run with TCLAB_FOLLOW (scripts/lab-follow.sh): the
lines `tuplecorr --follow` wrote while tcpdump was still writing the captures
are the batch run's NDJSON over the finished captures, line for line (the
times corrected to capture 1's clock within CLOCK_SLACK: the live run pins
the clocks of its first requests, the batch run estimates them from all), and each
came soon after its request: within LIMIT seconds of its first packet at
capture 1 (window 1 s + margin 5 s + clock slack 2 s + a tick, then the
connection's end and 2 s of silence, or the hold of 10 s for a flow that may
go on: a SYN never answered, a UDP flow within --udp-idle), the median within
MEDIAN seconds. follow_watch.py gives --follow-idle 25, and the lab stops
tcpdump about 2 s after the last request: on growing files (TCLAB_FOLLOW_INPUT
=file) a line that came that soon was written while the captures were still
live, not at the end; through pipes the run ends when tcpdump closes them.
The lab's clocks are one host's, so capture times and the times the lines
came are comparable.

    check-follow.py BIN SCENARIO_DIR [LIMIT] [MEDIAN] [END_LIMIT]

END_LIMIT: seconds from the connection's last packet at capture 1 (tshark)
to its line.
"""
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path


# Largest difference allowed between a live and a batch corrected time (s).
CLOCK_SLACK = 0.001


def epoch(rfc3339):
    whole, frac = rfc3339.rstrip("Z").split(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + int(frac) / 10 ** len(frac)


def main():
    binary, scenario = sys.argv[1], Path(sys.argv[2])
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    median_limit = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
    end_limit = float(sys.argv[5]) if len(sys.argv) > 5 else 20.0
    follow = json.loads((scenario / "follow.json").read_text())
    if follow["rc"] != 0:
        sys.exit(f"check-follow: tuplecorr --follow exited {follow['rc']}: {follow['stderr']}")
    caps = [a for a in follow["command"] if "=" in a]
    labels = [a.split("=", 1)[0] for a in caps]
    files = []
    for label in labels:
        found = sorted(scenario.glob(f"{label}.pcap*"))
        if not found:
            sys.exit(f"check-follow: no capture of {label} in {scenario}")
        files.append(f"{label}={found[0]}")
    batch = subprocess.run([binary, "--format", "ndjson", *files], capture_output=True, text=True, check=True)
    want = batch.stdout.splitlines()
    got = [line for _, line in follow["lines"]]
    if len(got) != len(want):
        sys.exit(f"check-follow: {len(got)} live lines, {len(want)} batch lines")
    # A live run pins its clocks from its first settled requests, the batch run
    # estimates them from all: the times on capture 1's clock ("time") may
    # differ by the estimates' difference (microseconds); all else is equal.
    apart = 0.0
    for n, (a, b) in enumerate(zip(got, want)):
        if a == b:
            continue
        ra, rb = json.loads(a), json.loads(b)
        for ca, cb in zip(ra["captures"], rb["captures"]):
            ta, tb = ca.pop("time", None), cb.pop("time", None)
            if (ta is None) != (tb is None):
                sys.exit(f"check-follow: line {n + 1}: a corrected time on one side only\n live:  {a}\n batch: {b}")
            if ta is not None:
                apart = max(apart, abs(epoch(ta) - epoch(tb)))
        if ra != rb or apart > CLOCK_SLACK:
            sys.exit(f"check-follow: line {n + 1} differs\n live:  {a}\n batch: {b}")
    if not got:
        sys.exit("check-follow: no request at all")
    ends = last_packets(files[0].split("=", 1)[1])
    late, after_end = [], []
    for at, line in follow["lines"]:
        r = json.loads(line)
        first = epoch(r["captures"][0]["raw_time"])
        late.append((at - first, r["request"]))
        # the connection's end: its last packet at capture 1 (ICMP: its first)
        end = max(first, ends.get(r["captures"][0].get("client", ""), first))
        after_end.append((at - end, r["request"]))
    worst, worst_end = max(late), max(after_end)
    med = statistics.median(d for d, _ in late)
    print(f"check-follow: {len(got)} requests equal to the batch run (corrected times within "
          f"{apart * 1e6:.1f} us); written {min(late)[0]:.1f} to "
          f"{worst[0]:.1f} s after their first packet (median {med:.1f} s), at most {worst_end[0]:.1f} s "
          f"after their connection's last packet")
    if worst_end[0] > end_limit:
        sys.exit(f"check-follow: request {worst_end[1]} written {worst_end[0]:.1f} s after its connection's "
                 f"last packet (> {end_limit} s)")
    if worst[0] > limit:
        sys.exit(f"check-follow: request {worst[1]} written {worst[0]:.1f} s after its first packet (> {limit} s)")
    if med > median_limit:
        sys.exit(f"check-follow: median {med:.1f} s after the first packet (> {median_limit} s)")


def last_packets(path):
    """The last packet's time (s) of each TCP/UDP endpoint (`addr:port`, IPv6
    as `[addr]:port`) in a capture, as tshark reads it."""
    out = subprocess.run(
        ["tshark", "-r", path, "-T", "fields", "-E", "separator=,", "-e", "frame.time_epoch", "-e", "ip.src",
         "-e", "ipv6.src", "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.srcport", "-e", "udp.srcport",
         "-e", "tcp.dstport", "-e", "udp.dstport"],
        capture_output=True, text=True, check=True).stdout
    last = {}
    for row in out.splitlines():
        t, s4, s6, d4, d6, ts, us, td, ud = (row.split(",") + [""] * 9)[:9]
        for addr, port in ((s4 or s6, ts or us), (d4 or d6, td or ud)):
            if addr and port:
                key = f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"
                last[key] = max(last.get(key, 0.0), float(t))
    return last


if __name__ == "__main__":
    main()
