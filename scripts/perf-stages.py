#!/usr/bin/env python3
"""Where the time goes, by pipeline stage, from a `perf record -g` profile.

    cargo build --profile profiling      # release code with line tables and symbols
    perf record -F 2999 --call-graph dwarf,32768 -o perf.data target/profiling/tuplecorr -q A B C >/dev/null
    perf script -i perf.data -F comm,tid,ip,sym | scripts/perf-stages.py

The release build has neither debug info nor symbols (what `cargo install`
gives); the `profiling` profile is the same code with both.

Each sample goes to the stage whose entry point is on its stack (see ENTRIES:
report, verdict, correlate, flows, decode, read; `read (kernel copy)` when the
leaf is in the kernel; `free Findings` for the drop at exit), and prints per
stage the share of samples, the innermost tuplecorr functions and the leaf
symbols. Needs inlined frames (do not pass --no-inline to perf script).
"""
import re
import sys
from collections import Counter, defaultdict

# Stage entry points, checked in this order against every frame of a sample
# (decode and flows run inside read's callback, so they come before read).
ENTRIES = [
    ("free Findings (exit)", "core::ptr::drop_in_place<tuplecorr::verdict::model::Findings>"),
    ("report", "tuplecorr::report::write"),
    ("verdict", "tuplecorr::verdict::verdict"),
    ("correlate", "tuplecorr::correlate::correlate"),
    ("flows", "tuplecorr::flows::table::FlowTable::insert"),
    ("flows", "tuplecorr::flows::table::FlowTable::finish"),
    ("decode", "tuplecorr::decode::decode"),
    ("read", "tuplecorr::read::read_capture"),
    ("read", "tuplecorr::read::read_chunk"),
]


def stage_of(frames):
    """frames: leaf first, as (symbol, is_kernel)."""
    names = {sym for sym, _ in frames}
    for stage, entry in ENTRIES:
        if entry in names:
            if stage == "read":
                return "read (kernel copy)" if frames[0][1] else "read (framing, callback)"
            return stage
    for sym, _ in frames:  # no entry point (inlined away, or called from app.rs)
        m = re.match(r"tuplecorr::(report|verdict|correlate|flows|decode)::", sym)
        if m:
            return m.group(1) + " (outside its entry point)"
    return "other (start-up, rayon, libc)"


def samples(lines):
    frames = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if not line.startswith((" ", "\t")):
            frames = []  # sample header
            continue
        parts = line.strip().split(None, 1)
        sym = parts[1] if len(parts) > 1 else "?"
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        sym = re.sub(r" \(.*\)$", "", sym)
        frames.append((sym, parts[0].startswith("ffff")))
    if frames:
        yield frames


def main():
    by_stage, leaves, funcs, total = Counter(), defaultdict(Counter), defaultdict(Counter), 0
    for frames in samples(sys.stdin):
        total += 1
        s = stage_of(frames)
        by_stage[s] += 1
        leaves[s][frames[0][0][:80]] += 1
        own = next((f for f, _ in frames if f.startswith("tuplecorr::") and "{{closure}}" not in f), "-")
        funcs[s][own[:80]] += 1
    print(f"{total} samples\n")
    print("| stage | share | innermost tuplecorr functions | top leaf symbols |")
    print("|---|---:|---|---|")
    for s, n in by_stage.most_common():
        fn = ", ".join(f"`{f}` {c / total:.1%}" for f, c in funcs[s].most_common(4))
        top = ", ".join(f"`{sym}` {c / total:.1%}" for sym, c in leaves[s].most_common(3))
        print(f"| {s} | {n / total:.1%} | {fn} | {top} |")
    print("\n(shares are of all samples)")


if __name__ == "__main__":
    main()
