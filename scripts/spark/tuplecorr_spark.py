#!/usr/bin/env python3
"""Runs tuplecorr over a fleet's rotated captures as time shards on Spark and
writes one Parquet dataset (issue 16 item 4; docs/guide/spark.md).

    spark-submit scripts/spark/tuplecorr_spark.py --tuplecorr /usr/local/bin/tuplecorr \\
        --point decap=/data/decap/ --point egress=/data/egress/ --point backend=/data/backend/ \\
        --shard-seconds 3600 --out /data/tuplecorr-day/

(or `python3 scripts/spark/tuplecorr_spark.py --master local[4] ...`). Points are
given in path order, each a folder of rotated files (`tcpdump -G`); the first
is capture 1, whose time the shards cut. Steps:

1. inventory: `tuplecorr inspect --format json` on the executors gives each
   file's first and last packet time;
2. clocks: one tuplecorr run on the driver over each point's files of the first
   `--clocks-seconds` fixes every clock offset and boundary delay; its report
   (requests dropped) is shipped to every shard as `--clocks-from`, so the
   shards union to what one run over everything reports;
3. plan: shards of `--shard-seconds`, aligned to multiples of it since the
   epoch, covering capture 1's time span;
4. shards: each shard runs `tuplecorr --format parquet --shard-start A
   --shard-end B` on an executor with every file of every point (tuplecorr
   reads only those its shard and margin need) into `--staging`; Spark then
   reads them and writes `--out` with three more columns: `shard_start`
   (TIMESTAMP) and `shard_start_ns` (BIGINT, exact), and `request_key`
   (`proto capture-1-client capture-1-raw_time_ns`, unique over the whole run:
   `request` is numbered per shard).

The tuplecorr binary and the capture folders must be at the same paths on the
driver and every executor (a shared file system), and so must `--staging`
(default: a temporary folder, enough in local mode). `--out` also gets
`_tuplecorr_clocks.json` (the pinned clocks) and `_tuplecorr_shards.json`
(each shard's bounds, wall time and warnings); readers skip `_` files.
A shard whose tuplecorr fails fails the job, naming the shard and quoting
tuplecorr's stderr.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

CAPTURE_NAME = re.compile(r"\.(pcap|pcapng|cap|dmp)(\.gz)?$")
FAILED = "tuplecorr shard failed"


def ns_of(rfc3339):
    """tuplecorr's `2026-11-30T04:29:32.155211000Z` → ns since the epoch."""
    whole, _, frac = rfc3339.rstrip("Z").partition(".")
    secs = int(datetime.fromisoformat(whole).replace(tzinfo=timezone.utc).timestamp())
    return secs * 10**9 + int(frac.ljust(9, "0")[:9])


def epoch(ns):
    """ns → exact epoch seconds as tuplecorr's --shard-start accepts them."""
    return f"{ns // 10**9}.{ns % 10**9:09d}"


def list_points(points):
    """`label=DIR` arguments → [(label, [file, ...])], files sorted by name."""
    out = []
    for spec in points:
        label, sep, folder = spec.partition("=")
        if not sep or not label or not os.path.isdir(folder):
            sys.exit(f"tuplecorr_spark: --point {spec}: expected LABEL=FOLDER with an existing folder")
        files = sorted(os.path.join(os.path.abspath(folder), f) for f in os.listdir(folder)
                       if CAPTURE_NAME.search(f))
        if not files:
            sys.exit(f"tuplecorr_spark: --point {spec}: no capture files (*.pcap, *.pcapng, *.cap, .gz)")
        out.append((label, files))
    return out


def inventory(sc, tuplecorr, points):
    """{file: (first_ns, last_ns)} from `tuplecorr inspect --format json`, run
    on the executors over batches of files."""
    files = [f for _, fs in points for f in fs]

    def inspect(batch):
        batch = list(batch)
        if not batch:
            return
        run = subprocess.run([tuplecorr, "inspect", "--format", "json", *batch], capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"tuplecorr inspect failed (exit {run.returncode}): {run.stderr.strip()}")
        for c in json.loads(run.stdout):
            if c.get("first_time") and c.get("last_time"):
                yield c["file"], (ns_of(c["first_time"]), ns_of(c["last_time"]))

    slices = max(1, min(len(files), sc.defaultParallelism * 2))
    found = dict(sc.parallelize(files, slices).mapPartitions(inspect).collect())
    empty = [f for f in files if f not in found]
    if empty:
        print(f"tuplecorr_spark: {len(empty)} files hold no packet: {empty[:5]}", file=sys.stderr)
    return found


def point_args(points):
    return [f"{label}={f}" for label, files in points for f in files]


def pin_clocks(tuplecorr, points, ranges, seconds, work):
    """One run over each point's files that begin within `seconds` of its
    first packet; returns its JSON report without requests (as text)."""
    early = []
    for label, files in points:
        timed = [f for f in files if f in ranges]
        if not timed:
            sys.exit(f"tuplecorr_spark: point {label} holds no packet in any file")
        start = min(ranges[f][0] for f in timed)
        early.append((label, [f for f in timed if ranges[f][0] < start + int(seconds * 1e9)]))
    report = os.path.join(work, "clocks-run.json")
    run = subprocess.run([tuplecorr, "-q", "--format", "json", "-o", report, *point_args(early)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"tuplecorr_spark: the clocks run failed (exit {run.returncode}): {run.stderr.strip()}")
    with open(report) as f:
        clocks = json.load(f)
    clocks["requests"] = []
    return json.dumps(clocks)


def plan(points, ranges, shard_ns):
    """[(start_ns, end_ns)] of `shard_ns` each, aligned to multiples of it,
    covering capture 1's files' time span."""
    first = [ranges[f] for f in points[0][1] if f in ranges]
    if not first:
        sys.exit(f"tuplecorr_spark: capture 1 ({points[0][0]}) holds no packet")
    lo, hi = min(a for a, _ in first), max(b for _, b in first)
    start = lo // shard_ns * shard_ns
    return [(a, a + shard_ns) for a in range(start, hi + 1, shard_ns)]


def shard_runner(tuplecorr, args, clocks, staging):
    """The executors' function: runs each shard of a partition, yields one
    summary per shard; a failing tuplecorr raises with the shard and stderr.
    `clocks` is the broadcast clocks report (text)."""

    def run(shards):
        with tempfile.TemporaryDirectory(prefix="tuplecorr-shard-") as tmp:
            pinned = os.path.join(tmp, "clocks.json")
            with open(pinned, "w") as f:
                f.write(clocks.value)
            for start, end in shards:
                out = os.path.join(staging, f"shard-{start}-{end}.parquet")
                cmd = [tuplecorr, "-q", "--format", "parquet", "-o", out, "--clocks-from", pinned,
                       "--shard-start", epoch(start), "--shard-end", epoch(end), *args]
                t0 = time.monotonic()
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    raise RuntimeError(f"{FAILED}: [{epoch(start)}, {epoch(end)}) exit {done.returncode}: "
                                       + " | ".join(done.stderr.strip().splitlines()))
                yield {"start": epoch(start), "end": epoch(end), "parquet": out,
                       "seconds": round(time.monotonic() - t0, 3), "warnings": done.stderr.splitlines()}

    return run


def phases():
    """A function printing the seconds since its last call with a name (stderr)."""
    last = [time.monotonic()]

    def step(name):
        now = time.monotonic()
        print(f"tuplecorr_spark: {name}: {now - last[0]:.2f} s", file=sys.stderr)
        last[0] = now

    return step


def run_job(spark, opts):
    """The whole job on an existing SparkSession; returns the shards' summaries."""
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    if os.path.basename(__file__) not in {os.path.basename(f) for f in sc.listFiles}:
        sc.addPyFile(os.path.abspath(__file__))  # the executors' functions live here when imported
    tuplecorr = os.path.abspath(shutil.which(opts.tuplecorr) or opts.tuplecorr)
    points = list_points(opts.point)
    step = phases()
    ranges = inventory(sc, tuplecorr, points)
    step(f"inventory of {len(ranges)} files")
    work = tempfile.mkdtemp(prefix="tuplecorr-spark-")
    staging = opts.staging or os.path.join(work, "staging")
    os.makedirs(staging, exist_ok=True)
    try:
        if opts.clocks_from:
            with open(opts.clocks_from) as f:
                clocks_text = f.read()
        else:
            clocks_text = pin_clocks(tuplecorr, points, ranges, opts.clocks_seconds, work)
            step("clocks run")
        shards = plan(points, ranges, int(round(opts.shard_seconds * 1e9)))
        args = [*opts.tuplecorr_arg, *point_args(points)]
        runner = shard_runner(tuplecorr, args, sc.broadcast(clocks_text), staging)
        try:
            done = sc.parallelize(shards, len(shards)).mapPartitions(runner).collect()
        except Exception as e:  # Py4JJavaError: quote the shard's own message
            said = [line.strip() for line in str(e).splitlines() if FAILED in line]
            sys.exit("tuplecorr_spark: " + (said[0] if said else str(e)))
        step(f"{len(shards)} shards")
        frame = spark.read.parquet(*[d["parquet"] for d in done])
        start_ns = F.regexp_extract(F.col("_metadata.file_path"), r"shard-(\d+)-\d+\.parquet$", 1).cast("long")
        key = F.concat_ws(" ", F.col("proto"), F.col("captures")[0]["client"],
                          F.col("captures")[0]["raw_time_ns"].cast("string"))
        frame = frame.withColumn("shard_start_ns", start_ns) \
                     .withColumn("shard_start", F.expr("timestamp_micros(shard_start_ns div 1000)")) \
                     .withColumn("request_key", key)
        frame.write.mode("overwrite").parquet(opts.out)
        step("dataset written")
        with open(os.path.join(opts.out, "_tuplecorr_clocks.json"), "w") as f:
            f.write(clocks_text)
        with open(os.path.join(opts.out, "_tuplecorr_shards.json"), "w") as f:
            json.dump([{k: v for k, v in d.items() if k != "parquet"} for d in done], f, indent=1)
        return done
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if opts.staging:
            for name in os.listdir(staging):
                if name.startswith("shard-"):
                    os.remove(os.path.join(staging, name))


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--point", action="append", required=True, metavar="LABEL=FOLDER",
                   help="a capture point's folder of rotated files, in path order (repeat)")
    p.add_argument("--out", required=True, help="the Parquet dataset to write (replaced)")
    p.add_argument("--tuplecorr", default="tuplecorr", help="the binary, same path on every executor")
    p.add_argument("--shard-seconds", type=float, default=3600.0, help="shard length (default 3600)")
    p.add_argument("--clocks-seconds", type=float, default=600.0,
                   help="each point's first files within this many seconds pin the clocks (default 600)")
    p.add_argument("--clocks-from", help="a tuplecorr JSON report whose clocks to pin instead")
    p.add_argument("--staging", help="folder for the shards' Parquet files, shared by every executor")
    p.add_argument("--tuplecorr-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for every shard's tuplecorr, e.g. --tuplecorr-arg=--shard-margin=200")
    p.add_argument("--master", help="Spark master (default: spark-submit's)")
    return p.parse_args(argv)


def session(master=None):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName("tuplecorr-shards") \
        .config("spark.ui.enabled", "false") \
        .config("spark.ui.showConsoleProgress", "false") \
        .config("spark.sql.shuffle.partitions", "4") \
        .config("spark.sql.session.timeZone", "UTC") \
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    if master:
        b = b.master(master)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def main(argv=None):
    opts = parse(argv)
    spark = session(opts.master)
    try:
        done = run_job(spark, opts)
    finally:
        spark.stop()
    lines = sum(len(d["warnings"]) for d in done)
    print(f"tuplecorr_spark: {len(done)} shards written to {opts.out} ({lines} warning lines in "
          "_tuplecorr_shards.json)", file=sys.stderr)


if __name__ == "__main__":
    main()
