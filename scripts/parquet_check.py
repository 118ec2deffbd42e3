#!/usr/bin/env python3
"""Reads a tuplecorr Parquet report with DuckDB and compares it with the JSON
report of the same run: request count, then per request its number, protocol,
outcome and reply words, first_seen, client and service, where the source and
destination changed (boundary, kind, before, after, addresses and ports), and
per capture point (the `captures` list: its length and order) the label,
seen, endpoints, time to the nanosecond and packets; then the run's metadata
(`tuplecorr.report`, with `intent` and `blast_radius` when the run has them)
and the query of docs/guide/usage.md, "which requests had their source
changed, where, per hour", against the same answer computed from the JSON.

    scripts/parquet_check.py REPORT.parquet REPORT.json

Exit 0 and one line `parquet_check: ... ok` when everything agrees; exit 1
listing every difference; exit 3 when the duckdb package is missing."""
import datetime
import json
import sys

try:
    import duckdb
except ImportError:
    print("parquet_check: the duckdb Python package is missing (pip install duckdb)", file=sys.stderr)
    sys.exit(3)


def rfc3339(ns):
    """ns since the epoch → tuplecorr's RFC 3339 UTC text (nine decimals)."""
    secs, frac = divmod(ns, 1_000_000_000)
    t = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


def split(endpoint):
    """`a.b.c.d:port`, `[v6]:port`, or an address alone → (addr, port)."""
    if endpoint is None:
        return (None, None)
    if endpoint.startswith("["):
        addr, _, port = endpoint[1:].partition("]:")
        return (addr, int(port))
    if endpoint.count(":") == 1:
        addr, port = endpoint.split(":")
        return (addr, int(port))
    return (endpoint, None)


def main(parquet, report):
    with open(report) as f:
        js = json.load(f)
    con = duckdb.connect()
    con.read_parquet(parquet).create_view("r")
    problems = []

    def differ(what, want, got):
        if want != got:
            problems.append(f"{what}: JSON {want!r}, Parquet {got!r}")

    requests = js["requests"]
    differ("request count", len(requests), con.execute("SELECT count(*) FROM r").fetchone()[0])
    rows = con.execute(
        """SELECT request, proto, outcome.kind, reply.path, reply.lost_between, outcome.origin,
                  first_seen_ns, epoch_us(first_seen), client, service,
                  source_changed_at, destination_changed_at, len(captures),
                  [struct_pack(label := h.label, seen := h.seen, client := h.client,
                               client_addr := h.client_addr, client_port := h.client_port,
                               server := h.server, time_ns := h.time_ns, time_us := epoch_us(h.time),
                               packets := h.packets_to_server) FOR h IN captures],
                  [struct_pack(between := c.between, kind := c.kind, before := c.before, after := c.after,
                               after_addr := c.after_addr, after_port := c.after_port)
                   FOR c IN source.changed],
                  [c.between FOR c IN destination.changed],
                  explanation
           FROM r ORDER BY request"""
    ).fetchall()
    for want, got in zip(requests, rows):
        (num, proto, outcome, path, lost, origin, first_ns, first_us, client, service,
         src_at, dst_at, points, hops, src, dst, explanation) = got
        at = f"request {want['request']}"
        differ(f"{at} number", want["request"], num)
        differ(f"{at} proto", want["proto"], proto)
        differ(f"{at} outcome", want["outcome"]["kind"], outcome)
        differ(f"{at} outcome origin", want["outcome"]["origin"], origin)
        differ(f"{at} reply path", want["reply"]["path"], path)
        differ(f"{at} reply lost_between", want["reply"]["lost_between"], lost)
        differ(f"{at} explanation", want["explanation"], explanation)
        first = next(h for h in want["captures"] if h["seen"])
        differ(f"{at} first_seen", first.get("time"), rfc3339(first_ns) if first_ns is not None else None)
        differ(f"{at} first_seen µs", first_ns // 1000 if first_ns is not None else None, first_us)
        differ(f"{at} client", first.get("client"), client)
        differ(f"{at} service", first.get("server"), service)
        changed = want["source"]["changed"]
        differ(f"{at} source_changed_at", ";".join(c["between"] for c in changed) or None, src_at)
        differ(f"{at} source changes", [(c["between"], c["kind"], c["before"], c["after"], *split(c["after"]))
                                         for c in changed],
               [(c["between"], c["kind"], c["before"], c["after"], c["after_addr"], c["after_port"]) for c in src])
        dchanged = [c["between"] for c in want["destination"]["changed"]]
        differ(f"{at} destination_changed_at", ";".join(dchanged) or None, dst_at)
        differ(f"{at} destination changes", dchanged, dst)
        differ(f"{at} capture points", len(want["captures"]), points)
        for h, g in zip(want["captures"], hops):
            where = f"{at} at {h['label']}"
            differ(f"{where} label", h["label"], g["label"])
            differ(f"{where} seen", h["seen"], g["seen"])
            differ(f"{where} client", h.get("client"), g["client"])
            differ(f"{where} client addr/port", split(h.get("client")), (g["client_addr"], g["client_port"]))
            differ(f"{where} server", h.get("server"), g["server"])
            differ(f"{where} time", h.get("time"), rfc3339(g["time_ns"]) if g["time_ns"] is not None else None)
            differ(f"{where} time µs", g["time_ns"] // 1000 if g["time_ns"] is not None else None, g["time_us"])
            differ(f"{where} packets", h.get("packets_to_server"), g["packets"])

    # The rest of the report: the key-value metadata, as JSON.
    kv = {bytes(k).decode(): bytes(v).decode()
          for k, v in con.execute("SELECT key, value FROM parquet_kv_metadata(?)", [parquet]).fetchall()}
    run = json.loads(kv.get("tuplecorr.report", "{}"))
    for key in ("tuplecorr", "captures", "boundaries", "unmatched", "warnings"):
        differ(f"metadata {key}", js[key], run.get(key))
    # --masq-agent / --masq-agent-after only: absent from both otherwise.
    for key in ("intent", "blast_radius"):
        differ(f"metadata {key}", js.get(key), run.get(key))

    # The query of docs/guide/usage.md (and docs/guide/spark.md).
    hourly = con.execute(
        """SELECT strftime(date_trunc('hour', first_seen), '%Y-%m-%dT%H') AS hour, source_changed_at,
                  count(*) AS requests
           FROM r WHERE source_changed_at IS NOT NULL GROUP BY ALL ORDER BY ALL"""
    ).fetchall()
    counts = {}
    for q in requests:
        if q["source"]["changed"]:
            first = next(h for h in q["captures"] if h["seen"])
            key = (first["time"][:13], ";".join(c["between"] for c in q["source"]["changed"]))
            counts[key] = counts.get(key, 0) + 1
    differ("source changes per hour", sorted((h, b, n) for (h, b), n in counts.items()), hourly)

    if problems:
        print(f"parquet_check: {parquet}: {len(problems)} differences", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    changed = sum(n for _, _, n in hourly)
    print(f"parquet_check: {parquet}: {len(requests)} requests, {changed} with a source change, "
          f"{sum(len(q['captures']) for q in requests)} capture entries: ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
