#!/usr/bin/env python3
"""Tests the Spark job (tuplecorr_spark.py) in local mode: its dataset must
equal one tuplecorr run over the same files with the same pinned clocks.

    scripts/spark/test_spark.py --tuplecorr target/release/tuplecorr [--generated DIR]

Sets: lab scenarios (testdata/lab/) with each point's capture split into
several files (`editcap -c`; pcapng and gzip kept), and a generated
three-point set spread over 10 minutes (decap/egress/backend.pcap in
--generated, else made with examples/synth_captures and SPREAD_NS) rotated
into 60 s files (`editcap -i`). Each set runs as shards shorter than its
requests' spread, of an uneven length (boundaries inside busy seconds), with
`--master local[2]`; then tuplecorr runs once on all the files with the job's `_tuplecorr_clocks.json`. DuckDB compares
the two: request count, the key set (`request_key`), and per request every
column but `request` (verdict words, endpoints, where things changed, times to
the ns, matches, explanation); each row's `shard_start` holds its capture-1
time; the per-hour query of docs/guide/spark.md gives the same answer (one set with
--staging and --clocks-from given). A shard whose
tuplecorr fails fails the job with the shard and tuplecorr's stderr.

Exit 0 with `test_spark: ... ok` lines; 1 listing differences; 3 when pyspark,
java or duckdb is missing (the caller skips)."""
import argparse
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

try:
    import duckdb
    import pyspark  # noqa: F401
except ImportError as e:
    print(f"test_spark: {e.name} is missing (pip install pyspark duckdb)", file=sys.stderr)
    sys.exit(3)
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    print("test_spark: java is missing (apt-get install openjdk-17-jre-headless)", file=sys.stderr)
    sys.exit(3)

import tuplecorr_spark as job  # noqa: E402

# (scenario, points in path order, packets per split file)
LAB = [
    ("masquerade-pod", ["decap.pcapng", "egress.pcapng", "backend.pcapng"], 7),
    ("udp-icmp", ["decap.pcap.gz", "egress.pcap.gz", "backend.pcap.gz"], 5),
    ("healthcheck", ["decap.pcap", "egress.pcap", "backend.pcap"], 25),
    ("syn-retransmit", ["decap.pcap", "egress.pcap", "backend.pcap"], 9),
    ("concurrent", ["decap.pcap", "egress.pcap", "backend.pcap"], 70),
    ("dnat-service", ["decap.pcap", "egress.pcap", "backend.pcap"], 8),
]


def split(src, folder, how):
    """editcap `how` (e.g. ["-c", "7"]) of `src` into `folder`; a .gz source gives .gz files."""
    os.makedirs(folder)
    name = os.path.basename(src)
    gz = name.endswith(".gz")
    subprocess.run(["editcap", *how, src, os.path.join(folder, name.removesuffix(".gz"))], check=True)
    pieces = sorted(glob.glob(os.path.join(folder, "*")))
    if gz:
        for p in pieces:
            with open(p, "rb") as f, gzip.open(p + ".gz", "wb") as g:
                shutil.copyfileobj(f, g)
            os.remove(p)
    assert len(pieces) >= 2, f"{src} split into {len(pieces)} file(s) only"
    return len(pieces)


def request_spread(tuplecorr, files):
    """Seconds from the first request's capture-1 start to the last's, in one run."""
    out = subprocess.run([tuplecorr, "-q", "--format", "json", *files], capture_output=True, text=True, check=True)
    t = [job.ns_of(r["captures"][0]["raw_time"]) for r in json.loads(out.stdout)["requests"]]
    return (max(t) - min(t)) / 1e9


def compare(con, out, whole, shard_ns):
    """Differences between the Spark dataset `out` and the single run's Parquet `whole`."""
    con.execute(f"""CREATE OR REPLACE VIEW w AS SELECT concat_ws(' ', proto, captures[1].client,
                    captures[1].raw_time_ns) AS k, * EXCLUDE (request) FROM read_parquet('{whole}')""")
    con.execute(f"""CREATE OR REPLACE VIEW s AS SELECT request_key AS k, * EXCLUDE (request, request_key, shard_start, shard_start_ns)
                    FROM read_parquet('{out}/*.parquet')""")
    con.execute(f"CREATE OR REPLACE VIEW sh AS SELECT * FROM read_parquet('{out}/*.parquet')")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    problems = []
    n_w, n_s = q("SELECT count(*) FROM w")[0][0], q("SELECT count(*) FROM s")[0][0]
    if n_w != n_s or n_w == 0:
        problems.append(f"request count: single run {n_w}, Spark {n_s}")
    for view in ("w", "s"):
        dup = q(f"SELECT k, count(*) FROM {view} GROUP BY k HAVING count(*) > 1 LIMIT 3")
        if dup:
            problems.append(f"key not unique in {view}: {dup}")
    for a, b, what in (("w", "s", "missing from Spark"), ("s", "w", "only in Spark")):
        keys = q(f"SELECT k FROM {a} EXCEPT SELECT k FROM {b} LIMIT 5")
        if keys:
            problems.append(f"{what}: {keys}")
    columns = [r[0] for r in q("DESCRIBE w")]
    if columns != [r[0] for r in q("DESCRIBE s")]:
        problems.append(f"columns differ: {columns} vs {[r[0] for r in q('DESCRIBE s')]}")
    else:
        for c in columns[1:]:
            bad = q(f'SELECT w.k, w."{c}", s."{c}" FROM w JOIN s USING (k) WHERE w."{c}" IS DISTINCT FROM s."{c}" LIMIT 2')
            if bad:
                problems.append(f"column {c} differs: {bad}")
    wrong = q(f"""SELECT request_key, shard_start_ns FROM sh WHERE NOT (captures[1].raw_time_ns >= shard_start_ns
                  AND captures[1].raw_time_ns < shard_start_ns + {shard_ns}
                  AND epoch_us(shard_start) = shard_start_ns // 1000) LIMIT 3""")
    if wrong:
        problems.append(f"rows outside their shard_start's shard: {wrong}")
    readme = """SELECT date_trunc('hour', first_seen) AS hour, source_changed_at, count(*) AS requests
                FROM {} WHERE source_changed_at IS NOT NULL GROUP BY ALL ORDER BY ALL"""
    if q(readme.format("w")) != q(readme.format("sh")):
        problems.append(f"per-hour source changes: single {q(readme.format('w'))}, Spark {q(readme.format('sh'))}")
    return n_w, q("SELECT count(DISTINCT shard_start) FROM sh")[0][0], problems


def check_set(spark, con, tuplecorr, name, folders, shard_seconds, work, extra=()):
    out, whole = os.path.join(work, f"{name}.spark"), os.path.join(work, f"{name}.parquet")
    opts = job.parse(["--tuplecorr", tuplecorr, "--out", out, "--shard-seconds", repr(shard_seconds),
                      *[f"--point={label}={d}" for label, d in folders], *extra])
    done = job.run_job(spark, opts)
    if opts.staging and os.listdir(opts.staging):
        return [f"{name}: --staging {opts.staging} still holds {os.listdir(opts.staging)}"]
    files = job.point_args(job.list_points(opts.point))
    single = subprocess.run([tuplecorr, "-q", "--format", "parquet", "-o", whole, "--clocks-from",
                             os.path.join(out, "_tuplecorr_clocks.json"), *files], capture_output=True, text=True)
    if single.returncode != 0:
        return [f"{name}: the single run failed: {single.stderr}"]
    requests, holding, problems = compare(con, out, whole, int(round(shard_seconds * 1e9)))
    if holding < 2:
        problems.append(f"only {holding} of {len(done)} shards held requests: the boundaries cut nothing")
    print(f"test_spark: {name}: {requests} requests, {len(files)} files, {len(done)} shards "
          f"({holding} with requests): {'ok' if not problems else 'DIFFERENT'}")
    return [f"{name}: {p}" for p in problems]


def failing_shard(spark, tuplecorr, folders, work):
    """A shard's tuplecorr that fails must fail the job, saying which and why."""
    opts = job.parse(["--tuplecorr", tuplecorr, "--out", os.path.join(work, "fail.spark"),
                      "--tuplecorr-arg=--udp-idle=soon", *[f"--point={label}={d}" for label, d in folders]])
    try:
        job.run_job(spark, opts)
    except SystemExit as e:
        said = str(e.code)
        if job.FAILED in said and "udp-idle" in said and "[" in said:
            print("test_spark: a failing shard fails the job with its bounds and tuplecorr's stderr: ok")
            return []
        return [f"failing shard: the job's message does not name the shard and tuplecorr's error: {said}"]
    return ["failing shard: the job succeeded although every shard's tuplecorr failed"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tuplecorr", default=os.path.join(ROOT, "target/release/tuplecorr"))
    p.add_argument("--generated", help="folder with a spread decap/egress/backend.pcap (else generated)")
    a = p.parse_args()
    tuplecorr = os.path.abspath(a.tuplecorr)
    work = tempfile.mkdtemp(prefix="test-spark-")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = job.session("local[2]")
    con = duckdb.connect()
    problems = []
    try:
        for scenario, files, count in LAB:
            folders = []
            for f in files:
                label = f.split(".")[0]
                folders.append((label, os.path.join(work, scenario, label)))
                split(os.path.join(ROOT, "testdata/lab", scenario, f), folders[-1][1], ["-c", str(count)])
            # Shorter than the requests' spread: the first and last request fall in different shards.
            originals = [os.path.join(ROOT, "testdata/lab", scenario, f) for f in files]
            spread = request_spread(tuplecorr, originals)
            extra = []
            if scenario == "concurrent":  # a given staging folder, clocks from a report given
                os.makedirs(os.path.join(work, "staging"))
                pinned = os.path.join(work, "concurrent-clocks.json")
                subprocess.run([tuplecorr, "-q", "--format", "json", "-o", pinned,
                                *[f"{f.split('.')[0]}={o}" for f, o in zip(files, originals)]], check=True)
                extra = ["--staging", os.path.join(work, "staging"), "--clocks-from", pinned]
            problems += check_set(spark, con, tuplecorr, scenario, folders, spread / 2.7, work, extra)
            if scenario == "masquerade-pod":
                problems += failing_shard(spark, tuplecorr, folders, work)
        gen = a.generated
        if not gen:
            gen = os.path.join(work, "generated")
            subprocess.run(["cargo", "run", "-q", "--release", "--example", "synth_captures", "--", gen, "600", "3000", "7"],
                           cwd=ROOT, check=True, env={**os.environ, "SPREAD_NS": "999800000"})
        folders = []
        for label in ("decap", "egress", "backend"):
            folders.append((label, os.path.join(work, "generated-rotated", label)))
            split(os.path.join(gen, f"{label}.pcap"), folders[-1][1], ["-i", "60"])
        problems += check_set(spark, con, tuplecorr, "generated", folders, 97.3, work)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    for line in problems:
        print(f"test_spark: {line}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
