#!/usr/bin/env python3
"""Checks a lab scenario run with TCLAB_FOLLOW (scripts/lab-follow.sh): the
lines `tuplecorr --follow` wrote while tcpdump was still writing the captures
are the batch run's NDJSON over the finished captures, line for line, and each
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

    check-follow.py BIN SCENARIO_DIR [LIMIT] [MEDIAN]
"""
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path


def epoch(rfc3339):
    whole, frac = rfc3339.rstrip("Z").split(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + int(frac) / 10 ** len(frac)


def main():
    binary, scenario = sys.argv[1], Path(sys.argv[2])
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    median_limit = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
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
    if got != want:
        for n, (a, b) in enumerate(zip(got, want)):
            if a != b:
                sys.exit(f"check-follow: line {n + 1} differs\n live:  {a}\n batch: {b}")
        sys.exit(f"check-follow: {len(got)} live lines, {len(want)} batch lines")
    if not got:
        sys.exit("check-follow: no request at all")
    late = []
    for at, line in follow["lines"]:
        r = json.loads(line)
        first = epoch(r["captures"][0]["raw_time"])
        late.append((at - first, r["request"]))
    worst = max(late)
    med = statistics.median(d for d, _ in late)
    print(f"check-follow: {len(got)} requests equal to the batch run; written {min(late)[0]:.1f} to "
          f"{worst[0]:.1f} s after their first packet (median {med:.1f} s)")
    if worst[0] > limit:
        sys.exit(f"check-follow: request {worst[1]} written {worst[0]:.1f} s after its first packet (> {limit} s)")
    if med > median_limit:
        sys.exit(f"check-follow: median {med:.1f} s after the first packet (> {median_limit} s)")


if __name__ == "__main__":
    main()
