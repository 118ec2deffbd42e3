#!/usr/bin/env python3
"""Runs `tuplecorr --follow` on captures tcpdump is still writing and records
when each line of its output came (lab.sh with TCLAB_FOLLOW=BIN).

    follow_watch.py BIN OUT.json LABEL=FILE...

OUT.json: {"rc": exit status, "stderr": text, "lines": [[unix time, line], ...]}.
"""
import json
import subprocess
import sys
import time


def main():
    binary, out, caps = sys.argv[1], sys.argv[2], sys.argv[3:]
    cmd = [binary, "--follow", "--follow-idle", "25", "--format", "ndjson", *caps]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stdout:
        lines.append([time.time(), line.rstrip("\n")])
    err = proc.stderr.read()
    rc = proc.wait()
    with open(out, "w") as f:
        json.dump({"rc": rc, "stderr": err, "lines": lines, "command": cmd}, f)


if __name__ == "__main__":
    main()
