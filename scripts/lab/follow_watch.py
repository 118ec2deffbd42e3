#!/usr/bin/env python3
"""Runs `tuplecorr --follow` on captures tcpdump is still writing and records
when each line of its output came (lab.sh with TCLAB_FOLLOW=BIN).

    follow_watch.py BIN OUT.json file LABEL=FILE...
    follow_watch.py BIN OUT.json pipe LABEL=FILE...

file: tuplecorr reads the files tcpdump -U -w FILE is writing (growing files).
pipe: tcpdump -U writes into the FIFO FILE.fifo (made here, before tcpdump
starts); this script copies each FIFO into FILE (for the batch run to compare
with) and into a pipe that tuplecorr reads as /dev/fd/N, as a process
substitution `LABEL=<(tcpdump -U -w -)` gives it.

OUT.json: {"rc": exit status, "stderr": text, "lines": [[unix time, line], ...],
"command": the command run}.
"""
import json
import os
import subprocess
import sys
import threading
import time


def tee(fifo, path, write_end):
    with open(fifo, "rb", buffering=0) as src, open(path, "wb") as keep:
        while True:
            data = src.read(65536)
            if not data:
                break
            keep.write(data)
            keep.flush()
            try:
                os.write(write_end, data)
            except BrokenPipeError:
                pass
    os.close(write_end)


def main():
    binary, out, mode, caps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    args, fds, threads = [], [], []
    for cap in caps:
        label, path = cap.split("=", 1)
        if mode == "pipe":
            fifo = path + ".fifo"
            os.mkfifo(fifo)
            r, w = os.pipe()
            fds.append(r)
            args.append(f"{label}=/dev/fd/{r}")
            threads.append(threading.Thread(target=tee, args=(fifo, path, w), daemon=True))
        else:
            args.append(cap)
    cmd = [binary, "--follow", "--follow-idle", "25", "--format", "ndjson", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, pass_fds=fds)
    for r in fds:
        os.close(r)
    for t in threads:
        t.start()
    lines = []
    for line in proc.stdout:
        lines.append([time.time(), line.rstrip("\n")])
    err = proc.stderr.read()
    rc = proc.wait()
    with open(out, "w") as f:
        json.dump({"rc": rc, "stderr": err, "lines": lines, "command": cmd, "mode": mode}, f)


if __name__ == "__main__":
    main()
