#!/usr/bin/env python3
"""Client and server of the tuplecorr lab (python3 stdlib only).

  server  --tcp PORTS --udp PORTS [--icmp]  logs, per request, what its sockets saw
          (getpeername/getsockname, the marker) as JSON lines; answers TCP with an
          HTTP-like response, UDP with an echo; --icmp opens raw ICMP/ICMPv6 sockets
          that log the echo requests the backend's kernel answers.
  client  --plan FILE  runs the requests of a plan (JSON list) and logs, per request,
          getsockname/getpeername and how it ended (response, refused, unreachable,
          timeout). A plan entry with "proto": "http11" is one keep-alive connection
          carrying several HTTP/1.1 requests (sequential or pipelined), logged per
          exchange.
  server --http11 PORTS  answers HTTP/1.1 keep-alive on those ports, in order, the
          target choosing the behaviour (/ok/*, /status/500, /slow/MS, /hang,
          /chunked, /drop, HEAD), one log line per request.

Markers are ASCII strings carried in the request bytes. Every socket has a
timeout; the server ends at --lifetime.
"""
import argparse
import errno
import json
import select
import signal
import socket
import struct
import sys
import threading
import time

STOP = False
LOCK = threading.Lock()


def _stop(_signum, _frame):
    global STOP
    STOP = True


def log(path, obj):
    with LOCK:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(obj, sort_keys=True) + "\n")


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def ep(sa):
    return [sa[0], sa[1]]


# --------------------------------------------------------------------------- server
def identity_received(a, conn, data):
    """What an application would take for the client: a PROXY protocol v1 line
    (on --proxy-protocol ports, where it must come first) and the X-Forwarded-For
    header. Returns (request bytes without the PROXY line, log fields)."""
    got = {}
    v2 = b"\r\n\r\n\x00\r\nQUIT\n"
    if conn.getsockname()[1] in a.proxy_protocol and data.startswith(v2) and len(data) >= 16:
        n = 16 + struct.unpack("!H", data[14:16])[0]
        if data[12] == 0x21 and data[13] == 0x11 and len(data) >= max(n, 28):
            src = socket.inet_ntoa(data[16:20])
            dst = socket.inet_ntoa(data[20:24])
            sport, dport = struct.unpack("!HH", data[24:28])
            got["proxy"] = {"version": 2, "src": [src, sport], "dst": [dst, dport]}
            data = data[n:]
        else:
            got["proxy_error"] = data[:16].hex()
    elif conn.getsockname()[1] in a.proxy_protocol:
        line, sep, rest = data.partition(b"\r\n")
        f = line.decode("ascii", "replace").split(" ")
        if not sep or f[0] != "PROXY" or len(f) != 6 or f[1] not in ("TCP4", "TCP6"):
            got["proxy_error"] = line[:107].decode("ascii", "replace")
        else:
            got["proxy"] = {"version": 1, "src": [f[2], int(f[4])], "dst": [f[3], int(f[5])]}
            data = rest
    for h in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = h.partition(b":")
        if name.strip().lower() == b"x-forwarded-for":
            got["x_forwarded_for"] = [v.strip() for v in value.decode("ascii", "replace").split(",")]
    return data, got


def head_done(data):
    """The request head is complete (after a PROXY v2 header, whose signature
    starts with a blank line)."""
    if data.startswith(b"\r\n\r\n\x00\r\nQUIT\n"):
        if len(data) < 16:
            return False
        data = data[16 + struct.unpack("!H", data[14:16])[0]:]
    return b"\r\n\r\n" in data


def serve_tcp_conn(a, conn, peer):
    conn.settimeout(a.timeout)
    data = b""
    try:
        while not head_done(data) and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        data, identity = identity_received(a, conn, data)
        text = data.decode("ascii", "replace")
        marker = text.split("\r\n", 1)[0]
        log(a.log, dict({"proto": "tcp", "event": "request", "peer": ep(peer), "sock": ep(conn.getsockname()),
                         "request_line": marker, "bytes": len(data), "t": time.time()}, **identity))
        if conn.getsockname()[1] in a.silent:
            # a server that accepts and never answers: wait (bounded) for the client
            # to give up; a client reset ends it without a FIN from this side
            conn.settimeout(a.timeout * 2)
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        body = ("ok " + marker + "\n").encode()
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        conn.shutdown(socket.SHUT_WR)
        # drain until the client closes (bounded by the timeout)
        while conn.recv(4096):
            pass
    except OSError as e:
        log(a.log, {"proto": "tcp", "event": "error", "peer": ep(peer), "error": str(e)})
    finally:
        conn.close()


# HTTP/1.1 keep-alive (--http11 PORTS): requests answered in order on one
# connection, the target choosing the behaviour (see serve_http11_conn)
HTTP11_REASON = {200: "OK", 500: "Internal Server Error"}


def http11_read_head(conn, buf):
    """(head bytes, rest) once buf holds a whole request head; None at EOF."""
    while b"\r\n\r\n" not in buf:
        if len(buf) > 65536:
            raise OSError("request head over 64 KiB")
        chunk = conn.recv(4096)
        if not chunk:
            return None, buf
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head, rest


def http11_headers(head):
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for h in lines[1:]:
        name, _, value = h.partition(":")
        hdrs[name.strip().lower()] = value.strip()
    return lines[0], hdrs


def serve_http11_conn(a, conn, peer):
    """Reads request heads (and Content-Length bodies) in a loop and answers each
    in order: /ok/* 200, /status/500 500, /slow/<ms> 200 after <ms> (at most
    3000), /chunked 200 in 3 chunks, /drop 200 with X-Drop: yes (a node rule drops
    it), HEAD the headers only, /hang never (nor anything after it: the server then
    only reads, bounded, until the client closes). One log line per request."""
    conn.settimeout(a.timeout)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock, buf, hung = ep(conn.getsockname()), b"", False
    try:
        while not STOP:
            if hung:
                conn.settimeout(a.timeout * 2)  # outlive the client's patience
            head, buf = http11_read_head(conn, buf)
            if head is None:
                break
            t_recv = time.time()
            line, hdrs = http11_headers(head)
            f = line.split(" ")
            method, target = f[0], (f[1] if len(f) > 1 else "")
            need = int(hdrs.get("content-length", "0") or 0)
            while len(buf) < need:
                chunk = conn.recv(65536)
                if not chunk:
                    raise OSError("EOF inside a request body")
                buf += chunk
            body_len, buf = need, buf[need:]
            entry = {"proto": "tcp", "event": "http11", "peer": ep(peer), "sock": sock, "method": method,
                     "target": target, "marker": hdrs.get("x-tclab"), "body_len": body_len, "t": t_recv}
            if hung or target == "/hang":
                # never answered: a /hang, or a request queued behind one
                log(a.log, dict(entry, status="hang", behind_hang=hung, t_answered=None))
                hung = True
                continue
            status, extra, chunks = 200, "", None
            body = ("ok %s %s\n" % (method, target)).encode()
            if target == "/status/500":
                status, body = 500, b"error on purpose\n"
            elif target.startswith("/slow/"):
                try:
                    ms = min(max(int(target[6:]), 0), 3000)
                except ValueError:
                    ms = 0
                time.sleep(ms / 1000)
            elif target == "/chunked":
                chunks = [b"first chunk\n", b"second chunk, a bit longer\n", b"third\n"]
            elif target == "/drop":
                extra = "X-Drop: yes\r\n"
            hd = "HTTP/1.1 %d %s\r\n%s" % (status, HTTP11_REASON[status], extra)
            if chunks is not None:
                # head, then each chunk in a send of its own (10 ms apart), the last
                # one with the terminating 0-size chunk
                conn.sendall((hd + "Transfer-Encoding: chunked\r\n\r\n").encode())
                for i, c in enumerate(chunks):
                    time.sleep(0.01)
                    last = b"0\r\n\r\n" if i == len(chunks) - 1 else b""
                    conn.sendall(b"%x\r\n" % len(c) + c + b"\r\n" + last)
            else:
                out = (hd + "Content-Length: %d\r\n\r\n" % len(body)).encode()
                conn.sendall(out if method == "HEAD" else out + body)
            log(a.log, dict(entry, status=status, behind_hang=False, t_answered=time.time()))
    except OSError as e:
        log(a.log, {"proto": "tcp", "event": "error", "peer": ep(peer), "sock": sock, "error": str(e)})
    finally:
        conn.close()


def cmd_server(a):
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    deadline = time.monotonic() + a.lifetime
    socks = {}
    fams = [socket.AF_INET] + ([socket.AF_INET6] if a.ipv6 else [])
    for fam in fams:
        any_addr = "::" if fam == socket.AF_INET6 else "0.0.0.0"
        for port in a.tcp + a.http11:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((any_addr, port))
            s.listen(128)
            s.setblocking(False)
            socks[s] = "tcp"
        for port in a.udp:
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((any_addr, port))
            s.setblocking(False)
            socks[s] = "udp"
        if a.icmp:
            if fam == socket.AF_INET:
                s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                socks[s] = "icmp"
            else:
                s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
                socks[s] = "icmp6"
            s.setblocking(False)
    with open(a.ready, "w", encoding="utf-8") as f:
        f.write("ready\n")
    threads = []
    while not STOP and time.monotonic() < deadline:
        r, _, _ = select.select(list(socks), [], [], 0.2)
        for s in r:
            kind = socks[s]
            try:
                if kind == "tcp":
                    conn, peer = s.accept()
                    conn.setblocking(True)
                    serve = serve_http11_conn if conn.getsockname()[1] in a.http11 else serve_tcp_conn
                    t = threading.Thread(target=serve, args=(a, conn, peer), daemon=True)
                    t.start()
                    threads.append(t)
                elif kind == "udp":
                    data, peer = s.recvfrom(65535)
                    sock = s.getsockname()
                    log(a.log, {"proto": "udp", "event": "request", "peer": ep(peer), "sock": ep(sock),
                                "request_line": data.decode("ascii", "replace"), "bytes": len(data),
                                "t": time.time()})
                    s.sendto(b"echo " + data, peer)
                elif kind == "icmp":
                    data, peer = s.recvfrom(65535)
                    ihl = (data[0] & 0x0F) * 4
                    dst = socket.inet_ntoa(data[16:20])
                    icmp = data[ihl:]
                    if len(icmp) >= 8 and icmp[0] == 8:
                        ident, seq = struct.unpack("!HH", icmp[4:8])
                        log(a.log, {"proto": "icmp", "event": "request", "peer": [peer[0], ident],
                                    "sock": [dst, ident], "seq": seq,
                                    "request_line": icmp[8:].decode("ascii", "replace"), "t": time.time()})
                elif kind == "icmp6":
                    data, peer = s.recvfrom(65535)
                    if len(data) >= 8 and data[0] == 128:
                        ident, seq = struct.unpack("!HH", data[4:8])
                        log(a.log, {"proto": "icmp", "event": "request", "peer": [peer[0].split("%")[0], ident],
                                    "sock": [None, ident], "seq": seq,
                                    "request_line": data[8:].decode("ascii", "replace"), "t": time.time()})
            except (BlockingIOError, socket.timeout):
                pass
            except OSError as e:
                log(a.log, {"proto": kind, "event": "error", "error": str(e)})
    for t in threads:
        t.join(0.5)


# --------------------------------------------------------------------------- client
def outcome_of_error(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, OSError) and e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EACCES,
                                              errno.EPERM):
        return "unreachable"
    return "error"


def connect(s, r, res):
    """Binds `s` to the plan's source, connects it to its destination, and
    logs both ends and the start time in `res`."""
    s.bind((r["src"], r.get("sport", 0)))
    res["sock"] = ep(s.getsockname())
    res["t_start"] = time.time()
    s.connect((r["dst"], r["dport"]))
    res["peer"] = ep(s.getpeername())
    res["connected"] = True


def run_tcp(r, timeout):
    fam = family_of(r["dst"])
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(timeout)
    res = {"id": r["id"], "proto": "tcp", "marker": r.get("marker")}
    try:
        connect(s, r, res)
        # a client that thinks before it speaks (bounded: plans use a fraction of a second)
        time.sleep(min(float(r.get("pause", 0)), 1.0))
        s.sendall(r["payload"].encode())
        resp = b""
        while len(resp) < 65536:
            chunk = s.recv(4096)
            if not chunk:
                break
            resp += chunk
        res["response"] = resp.decode("ascii", "replace")
        res["result"] = "response" if resp else "closed"
    except OSError as e:
        res["result"] = outcome_of_error(e)
        res["error"] = str(e)
        res.setdefault("peer", [r["dst"], r["dport"]])
        if res.get("connected"):
            # give up with a reset, as an impatient client does
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        res["t_end"] = time.time()
        if res.get("connected") and r.get("tcp_info"):
            res["tcp_info"] = tcp_info(s)
        s.close()
    return res


def tcp_info(s):
    """The kernel's view of the connection (struct tcp_info, linux/tcp.h): the path
    MTU it learned (tcpi_pmtu), its sending MSS and how many segments it retransmitted."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    except OSError:
        return None
    if len(raw) < 104:
        return None
    snd_mss = struct.unpack_from("I", raw, 16)[0]
    pmtu = struct.unpack_from("I", raw, 60)[0]
    total_retrans = struct.unpack_from("I", raw, 100)[0]
    return {"pmtu": pmtu, "snd_mss": snd_mss, "total_retrans": total_retrans}


def run_udp(r, timeout):
    fam = family_of(r["dst"])
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    res = {"id": r["id"], "proto": "udp", "marker": r.get("marker")}
    try:
        s.bind((r["src"], r.get("sport", 0)))
        s.connect((r["dst"], r["dport"]))
        res["sock"] = ep(s.getsockname())
        res["peer"] = ep(s.getpeername())
        res["t_start"] = time.time()
        s.send(r["payload"].encode())
        data = s.recv(65535)
        res["response"] = data.decode("ascii", "replace")
        res["result"] = "response"
    except OSError as e:
        res["result"] = outcome_of_error(e)
        res["error"] = str(e)
    finally:
        res["t_end"] = time.time()
        s.close()
    return res


def run_icmp(r, timeout):
    """ICMP echo through a ping socket bound to a chosen identifier."""
    fam = family_of(r["dst"])
    proto = socket.IPPROTO_ICMPV6 if fam == socket.AF_INET6 else socket.IPPROTO_ICMP
    s = socket.socket(fam, socket.SOCK_DGRAM, proto)
    s.settimeout(timeout)
    res = {"id": r["id"], "proto": "icmp", "marker": r.get("marker"), "seqs": []}
    replies = 0
    try:
        s.bind((r["src"], r.get("ident", 0)))
        res["sock"] = ep(s.getsockname())
        res["peer"] = [r["dst"], 0]
        res["t_start"] = time.time()
        etype = 128 if fam == socket.AF_INET6 else 8
        for seq in range(1, r.get("count", 1) + 1):
            pkt = struct.pack("!BBHHH", etype, 0, 0, 0, seq) + r["payload"].encode()
            s.sendto(pkt, (r["dst"], 0))
            res["seqs"].append(seq)
            try:
                s.recv(65535)
                replies += 1
            except socket.timeout:
                pass
            time.sleep(r.get("interval", 0.05))
        res["replies"] = replies
        res["result"] = "response" if replies else "timeout"
    except OSError as e:
        res["result"] = outcome_of_error(e)
        res["error"] = str(e)
    finally:
        res["t_end"] = time.time()
        s.close()
    return res


class Http11Reader:
    """Reads HTTP/1.1 responses off one connection by their framing
    (Content-Length, chunked, none for HEAD), never until close; every wait
    ends at the deadline the caller gives (socket.timeout)."""

    def __init__(self, s):
        self.s, self.buf = s, b""

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("no response in time")
        self.s.settimeout(left)
        chunk = self.s.recv(65536)
        if not chunk:
            raise ConnectionResetError("closed by the server")
        self.buf += chunk

    def _until(self, sep, deadline):
        while sep not in self.buf:
            self._fill(deadline)
        x, _, self.buf = self.buf.partition(sep)
        return x

    def _take(self, n, deadline):
        while len(self.buf) < n:
            self._fill(deadline)
        x, self.buf = self.buf[:n], self.buf[n:]
        return x

    def response(self, method, deadline):
        head = self._until(b"\r\n\r\n", deadline).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ")[1])
        hdrs = {}
        for h in head[1:]:
            name, _, value = h.partition(":")
            hdrs[name.strip().lower()] = value.strip()
        info = {"status": status}
        if "x-drop" in hdrs:
            info["x_drop"] = hdrs["x-drop"]
        if method == "HEAD":
            info["body_len"] = 0
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            n_chunks, total = 0, 0
            while True:
                size = int(self._until(b"\r\n", deadline).split(b";")[0], 16)
                if size == 0:
                    self._until(b"\r\n", deadline)  # no trailers
                    break
                self._take(size + 2, deadline)
                n_chunks, total = n_chunks + 1, total + size
            info.update(chunks=n_chunks, body_len=total)
        else:
            info["body_len"] = len(self._take(int(hdrs.get("content-length", "0")), deadline))
        return info


def run_http11(r, timeout):
    """One TCP connection carrying r["requests"] (HTTP/1.1 keep-alive): one at a
    time, or all sent at once when r["pipeline"]. Each response is read by its
    framing; one that has not come within r["response_timeout"] (3 s) is
    unanswered, and so are the ones after it: the client then closes (FIN)."""
    fam = family_of(r["dst"])
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(timeout)
    wait = float(r.get("response_timeout", 3))
    pipeline = bool(r.get("pipeline"))
    res = {"id": r["id"], "proto": "http11", "marker": r.get("marker"), "pipelined": pipeline, "exchanges": []}
    ex = res["exchanges"]
    try:
        connect(s, r, res)
        wire = []
        for n, q in enumerate(r["requests"], 1):
            body = b"b" * int(q.get("body_len") or 0)
            head = "%s %s HTTP/1.1\r\nHost: lab.example\r\nUser-Agent: tclab\r\nX-Tclab: %s\r\n" % (
                q["method"], q["target"], r.get("marker"))
            if q.get("body_len") is not None:
                head += "Content-Length: %d\r\n" % len(body)
            wire.append(head.encode() + b"\r\n" + body)
            ex.append({"n": n, "method": q["method"], "target": q["target"], "status": None,
                       "request_t": None, "response_t": None})
        rd = Http11Reader(s)
        if pipeline:
            t = time.time()
            s.sendall(b"".join(wire))  # every request before the first response
            for e in ex:
                e["request_t"] = t
        for e, w in zip(ex, wire):
            if not pipeline:
                e["request_t"] = time.time()
                s.sendall(w)
            try:
                info = rd.response(e["method"], time.monotonic() + wait)
            except socket.timeout:
                break  # unanswered: so is everything after it
            e["response_t"] = time.time()
            e.update(info)
        answered = [e for e in ex if e["status"] is not None]
        res["unanswered"] = [e["n"] for e in ex if e["status"] is None]
        res["result"] = "response" if answered else "timeout"
    except OSError as e:
        res["result"] = outcome_of_error(e)
        res["error"] = str(e)
        res.setdefault("peer", [r["dst"], r["dport"]])
    finally:
        res["t_end"] = time.time()
        s.close()  # a normal close (FIN), also after an unanswered request
    time.sleep(min(float(r.get("gap", 0)), 1.0))  # a small pause before the next connection
    return res


RUNNERS = {"tcp": run_tcp, "udp": run_udp, "icmp": run_icmp, "http11": run_http11}


def cmd_client(a):
    with open(a.plan, encoding="utf-8") as f:
        plan = json.load(f)
    results = []
    start = time.monotonic()
    threads = []
    for r in plan:
        at = r.get("at")
        if at is not None:
            wait = start + at - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, 30))
        runner = RUNNERS[r["proto"]]
        if r.get("background", False) or a.concurrent:
            def work(r=r, runner=runner):
                res = runner(r, a.timeout)
                with LOCK:
                    results.append(res)
            t = threading.Thread(target=work, daemon=True)
            t.start()
            threads.append(t)
        else:
            results.append(runner(r, a.timeout))
    for t in threads:
        t.join(a.timeout * 3 + 1)
    results.sort(key=lambda x: x["id"])
    with open(a.log, "w", encoding="utf-8") as f:
        for res in results:
            f.write(json.dumps(res, sort_keys=True) + "\n")
    bad = [x["id"] for x in results if x.get("result") not in ("response",)]
    print(f"client: {len(results)} requests, not answered: {bad}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--tcp", type=int, nargs="*", default=[])
    s.add_argument("--udp", type=int, nargs="*", default=[])
    s.add_argument("--silent", type=int, nargs="*", default=[], help="TCP ports that never answer")
    s.add_argument("--proxy-protocol", type=int, nargs="*", default=[],
                   help="TCP ports whose connections start with a PROXY protocol v1 line")
    s.add_argument("--http11", type=int, nargs="*", default=[],
                   help="TCP ports speaking HTTP/1.1 keep-alive (many requests per connection)")
    s.add_argument("--icmp", action="store_true")
    s.add_argument("--ipv6", action="store_true")
    s.add_argument("--log", required=True)
    s.add_argument("--ready", required=True)
    s.add_argument("--timeout", type=float, default=3)
    s.add_argument("--lifetime", type=float, default=90)
    c = sub.add_parser("client")
    c.add_argument("--plan", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--timeout", type=float, default=2)
    c.add_argument("--concurrent", action="store_true")
    a = p.parse_args()
    {"server": cmd_server, "client": cmd_client}[a.cmd](a)


if __name__ == "__main__":
    main()
