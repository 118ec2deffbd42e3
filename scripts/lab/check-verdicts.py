#!/usr/bin/env python3
"""Runs tuplecorr on lab scenario folders and compares every request's verdict
fields with the scenario's expected.json (an independent check of the binary on
captures the lab just made, e.g. live in CI).

    scripts/lab/check-verdicts.py TUPLECORR SCENARIO_DIR...

Exit 1 on any mismatch, printing scenario, request and field."""
import json
import os
import re
import subprocess
import sys


def endpoint_ok(expected, got):
    if expected is None or got is None:
        return expected == got
    pat = "^" + re.escape(expected).replace(r"\*", r"\d+") + "$"
    return re.match(pat, got) is not None


def boundaries(lst):
    return [x if isinstance(x, str) else f"{x['between']}:{x['kind']}" for x in lst]


def check(binary, d):
    exp = json.load(open(os.path.join(d, "expected.json")))  # dicts keep file order
    labels = list(exp["captures"].keys())
    # The observation points of one split capture (`node(in)`,
    # `node(out)`) are one file given once, labelled `node`.
    args = []
    for label, f in exp["captures"].items():
        arg = f"{label.split('(')[0]}={os.path.join(d, f)}"
        if not args or args[-1] != arg:
            args.append(arg)
    out = subprocess.run([binary, "--format", "json", "-q"] + args, capture_output=True, text=True)
    if out.returncode != 0:
        return [f"exit {out.returncode}: {out.stderr.strip()[:300]}"]
    got = json.loads(out.stdout)
    # A reply from elsewhere is also listed as a flow of its own with the
    # request's client endpoint: find requests by client and server.
    by_ends = {(r["captures"][0].get("client"), r["captures"][0].get("server")): r for r in got["requests"]}
    errs = []
    offsets = {c["label"]: c["clock_offset_ms"] for c in got["captures"]}
    for label, ms in exp["clock_offsets_ms"].items():
        if abs(offsets.get(label, 0) - ms) > 1.0:
            errs.append(f"clock offset of {label}: expected {ms}, got {offsets.get(label)}")
    for r in exp["requests"]:
        c0 = r["captures"][labels[0]]["client"]
        g = next((g for (c, s), g in by_ends.items()
                  if endpoint_ok(c0, c) and endpoint_ok(r["captures"][labels[0]]["server"], s)), None)
        where = f"request {r['id']} ({c0})"
        if g is None:
            errs.append(f"{where}: not found")
            continue
        for label in labels:
            e = r["captures"][label]
            h = next(x for x in g["captures"] if x["label"] == label)
            for key in ("seen", "reply_seen"):
                if e[key] != h[key]:
                    errs.append(f"{where}: {label}.{key} expected {e[key]}, got {h[key]}")
            for key in ("client", "server"):
                if not endpoint_ok(e.get(key), h.get(key)):
                    errs.append(f"{where}: {label}.{key} expected {e.get(key)}, got {h.get(key)}")
            # the interface a request took at a side of a split capture
            for key in ("iface", "reply_iface"):
                if key in e and e[key] != h.get(key):
                    errs.append(f"{where}: {label}.{key} expected {e[key]}, got {h.get(key)}")
        gs = [c["between"] if c["kind"] != "proxy" else f"{c['between']}:proxy" for c in g["source"]["changed"]]
        gd = [c["between"] for c in g["destination"]["changed"]]
        pairs = [
            ("source_changed_at", boundaries(r["source_changed_at"]), gs),
            ("destination_changed_at", boundaries(r["destination_changed_at"]), gd),
            ("reply_path", r["reply_path"], g["reply"]["path"]),
            ("outcome", r["outcome"], g["outcome"]["kind"]),
            ("outcome_icmp", r.get("outcome_icmp"), g["outcome"]["icmp"]),
        ]
        if "unexpected_source" in r:
            pairs.append(("unexpected_source", r["unexpected_source"], g["reply"]["unexpected_source"]))
        if "identity" in r:
            # who the backend took for the client (its own log) and who put it there (configuration)
            want, have = r["identity"], g.get("identity")
            if want is None or have is None:
                pairs.append(("identity", want, have))
            else:
                for key in ("carrier", "carried", "added", "preserved", "client_set"):
                    pairs.append((f"identity.{key}", want.get(key), have.get(key)))
        for name, want, have in pairs:
            if want != have:
                errs.append(f"{where}: {name} expected {want}, got {have}")
    return errs


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, dirs = sys.argv[1], sys.argv[2:]
    bad = 0
    for d in dirs:
        errs = check(binary, d)
        name = os.path.basename(os.path.normpath(d))
        for e in errs:
            print(f"{name}: {e}")
        bad += len(errs)
        print(f"check-verdicts: {name}: {'OK' if not errs else f'{len(errs)} mismatches'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
