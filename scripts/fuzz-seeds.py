#!/usr/bin/env python3
"""Builds the committed fuzz seeds in fuzz/seeds/<target>/ from testdata/edge/,
testdata/lab/ (when present) and the corpus folder named by $TUPLECORR_CORPUS
(when set; small files only).

    python3 scripts/fuzz-seeds.py [SYNTH_DIR]

read_capture: whole small captures. decode_packet: one byte choosing the link
type (see fuzz_targets/decode_packet.rs) + one record, for the records of small
pcap files. pipeline: a 2-byte little-endian length of the first capture, then
two captures (pairs of small captures, and SYNTH_DIR/decap.pcap + egress.pcap
written by `cargo run --example synth_captures -- SYNTH_DIR 3 300` if given).
"""
import hashlib, os, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
MAX_SEED = 12 * 1024
# decode_packet selector byte per pcap link type
SELECTOR = {1: 0, 101: 1, 12: 1, 14: 1, 228: 2, 229: 3, 113: 4, 276: 5, 0: 6, 108: 7, 9: 10, 50: 11, 104: 12, 239: 13}


def put(target, data):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def sources():
    dirs = [os.path.join(ROOT, "testdata", "edge"), os.path.join(ROOT, "testdata", "lab")]
    if os.environ.get("TUPLECORR_CORPUS"):
        dirs.append(os.environ["TUPLECORR_CORPUS"])
    for d in dirs:
        for dirpath, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith((".tsv", ".md", ".json")):
                    continue
                p = os.path.join(dirpath, f)
                if os.path.getsize(p) <= MAX_SEED:
                    yield p


def pcap_records(data):
    """(link_type, record bytes) of a plain pcap file; stops at any damage."""
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\x34\xcd\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d", b"\xa1\xb2\xcd\x34"):
        e = ">"
    else:
        return
    hdr = 24 if magic in (b"\x34\xcd\xb2\xa1", b"\xa1\xb2\xcd\x34") else 16
    link = struct.unpack(e + "I", data[20:24])[0] & 0xFFFF
    at = 24
    while at + hdr <= len(data):
        caplen = struct.unpack(e + "I", data[at + 8:at + 12])[0]
        if caplen > 65535 or at + hdr + caplen > len(data):
            return
        yield link, data[at + hdr:at + hdr + caplen]
        at += hdr + caplen


def main():
    small = []
    for p in sources():
        data = open(p, "rb").read()
        put("read_capture", data)
        small.append(data)
        for i, (link, rec) in enumerate(pcap_records(data)):
            if i >= 8:
                break
            put("decode_packet", bytes([SELECTOR.get(link, 8)]) + rec)
    pairs = [(a, b) for a, b in zip(small, small[1:]) if len(a) + len(b) <= MAX_SEED]
    synth = sys.argv[1] if len(sys.argv) > 1 else None
    if synth:
        a = open(os.path.join(synth, "decap.pcap"), "rb").read()
        b = open(os.path.join(synth, "egress.pcap"), "rb").read()
        pairs.append((a, b))
        put("read_capture", a)
    for a, b in pairs:
        put("pipeline", struct.pack("<H", len(a)) + a + b)


if __name__ == "__main__":
    main()
