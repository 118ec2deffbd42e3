"use strict";
// tuplecorr HTML report. Everything is drawn here from the data embedded once
// in the page (the findings as --format json writes them, the ladder events
// and the text summary). Capture-derived text only ever goes through
// textContent / setAttribute, never through markup.
(function () {
  const data = (id) => JSON.parse(document.getElementById(id).textContent);
  const F = data("tc-findings");
  const L = data("tc-ladder");
  const labels = F.captures.map((c) => c.label);
  const ladders = new Map(L.requests.map((r) => [r.request, r]));
  const SVG = "http://www.w3.org/2000/svg";
  const PAGE = 200;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function tableOf(node, head, rows) {
    node.replaceChildren(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))));
    const body = el("tbody");
    for (const r of rows) body.append(el("tr", {}, ...r.map((c) => el("td", {}, c == null ? "" : c))));
    node.append(body);
  }
  const ms = (v) => (v == null ? "" : v.toFixed(3) + " ms");
  const nsMs = (ns) => (ns / 1e6).toFixed(3) + " ms";

  // ---- overview: the summary's patterns with their counts ----
  const O = data("tc-overview");
  const MAX_PATTERNS = 6;
  document.getElementById("version").textContent = "tuplecorr " + F.tuplecorr;
  document.getElementById("headline").textContent = O.overview.headline;
  if (O.overview.span) {
    const sp = document.getElementById("span");
    sp.textContent = O.overview.span;
    sp.hidden = false;
  }
  const summaryBox = document.getElementById("summary");
  const patternList = document.getElementById("patterns");
  for (const p of O.overview.patterns.slice(0, MAX_PATTERNS)) {
    const li = el("li", { class: p.tone, tabindex: "0", title: "draw the ladder of request " + p.first + ", the first of these" },
      el("span", { class: "n" }, p.requests), el("span", { class: "text" }, p.text));
    li.dataset.first = String(p.first);
    const open = () => { showDetail(p.first); focusBox.scrollIntoView({ block: "start" }); };
    li.addEventListener("click", open);
    li.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
    patternList.append(li);
  }
  if (O.overview.patterns.length > MAX_PATTERNS) {
    const more = document.getElementById("more-patterns");
    more.textContent = "and " + (O.overview.patterns.length - MAX_PATTERNS) + " more patterns in the full summary below";
    more.hidden = false;
  }
  if (F.warnings.length) {
    const line = document.getElementById("warning-line");
    line.textContent = "⚠ " + F.warnings.length + (F.warnings.length === 1 ? " warning" : " warnings") + " in the full summary below";
    line.hidden = false;
    line.addEventListener("click", () => { summaryBox.open = true; summaryBox.scrollIntoView(); });
  }
  const focusBox = document.getElementById("focus");
  document.getElementById("summary-text").textContent = data("tc-summary");
  tableOf(
    document.getElementById("captures"),
    ["label", "file", "format", "link types", "packets", "flows", "clock offset", "spread", "method"],
    F.captures.map((c) => [c.label, c.file, c.format, c.link_types.join(", "), c.packets, c.flows,
      ms(c.clock_offset_ms), ms(c.offset_spread_ms), c.offset_method + " (" + c.offset_samples + ")"])
  );
  tableOf(
    document.getElementById("boundaries"),
    ["between", "delay", "TTL decrement", "ports", "ICMP id", "MSS clamped", "seq shift"],
    F.boundaries.map((b) => [b.between, ms(b.delay_ms), b.ttl_decrement, b.ports, b.icmp_id,
      b.mss_clamped ? "yes" : "no", b.seq_shift ? "yes" : "no"])
  );
  if (F.warnings.length) {
    const w = document.getElementById("warnings");
    w.append(el("h3", {}, "Warnings"));
    const ul = el("ul", { class: "warn" });
    for (const x of F.warnings) {
      const at = (x.record != null ? "record " + x.record + " " : "") + (x.byte_offset != null ? "at byte " + x.byte_offset : "");
      ul.append(el("li", {}, x.label + ": " + (at ? at.trim() + ": " : "") + x.message));
    }
    w.append(ul);
  }

  // ---- request table: the CSV's columns ----
  const head = ["request", "proto", "first_seen", "client", "service"];
  for (const l of labels) head.push(l + "_client", l + "_server", l + "_reply");
  head.push("source_changed_at", "source_before", "source_after", "destination_changed_at",
    "destination_before", "destination_after", "reply_path", "reply_lost_between", "outcome",
    "outcome_by", "outcome_origin", "outcome_icmp", "match_strength", "match_evidence", "explanation");
  function hopAt(r, i, label) {
    const h = r.captures[i];
    return h && h.label === label ? h : r.captures.find((x) => x.label === label);
  }
  // --names: "name (address)" where the report names an address (text only, never markup)
  const named = (addr, name) => (addr && name ? name + " (" + addr + ")" : addr || "");
  function row(r) {
    const first = r.captures.find((h) => h.seen) || {};
    const cells = [r.request, r.proto, first.time || "", named(first.client, first.client_name),
      named(first.server, first.server_name)];
    labels.forEach((l, i) => {
      const h = hopAt(r, i, l);
      const seen = h && h.seen ? h : {};
      cells.push(named(seen.client, seen.client_name), named(seen.server, seen.server_name),
        h && h.reply_seen ? "yes" : h && h.seen ? "no" : "");
    });
    for (const ch of [r.source.changed, r.destination.changed]) {
      cells.push(ch.map((c) => c.between).join(";"), ch.map((c) => named(c.before, c.before_name)).join(";"),
        ch.map((c) => named(c.after, c.after_name)).join(";"));
    }
    const o = r.outcome;
    cells.push(r.reply.path, r.reply.lost_between || "", o.kind, named(o.by, o.by_name), o.origin || "", o.icmp || "",
      r.matches.map((m) => m.strength).join(";"), r.matches.map((m) => m.evidence.join("+")).join(";"), r.explanation);
    return cells;
  }
  const rows = F.requests.map(row);
  let search = null; // lower-cased row text, built on first text filter
  const thead = document.querySelector("#table thead");
  const tbody = document.querySelector("#table tbody");
  const ths = head.map((h, i) => {
    const th = el("th", { "data-col": i }, h);
    th.addEventListener("click", () => sortBy(i));
    return th;
  });
  thead.append(el("tr", {}, ...ths));

  function fill(select, values) {
    for (const v of [...new Set(values)].sort()) select.append(el("option", { value: v }, v));
  }
  const fText = document.getElementById("f-text");
  const fOutcome = document.getElementById("f-outcome");
  const fReply = document.getElementById("f-reply");
  const fSource = document.getElementById("f-source");
  fill(fOutcome, F.requests.map((r) => r.outcome.kind));
  fill(fReply, F.requests.map((r) => r.reply.path));
  fill(fSource, F.requests.flatMap((r) => (r.source.changed.length ? r.source.changed.map((c) => c.between) : ["unchanged"])));

  let order = rows.map((_, i) => i);
  let shown = [];
  let limit = PAGE;
  let sortCol = 0, sortDir = 1;

  function matches(i) {
    const r = F.requests[i];
    if (fOutcome.value && r.outcome.kind !== fOutcome.value) return false;
    if (fReply.value && r.reply.path !== fReply.value) return false;
    if (fSource.value) {
      const at = r.source.changed.map((c) => c.between);
      if (fSource.value === "unchanged" ? at.length : !at.includes(fSource.value)) return false;
    }
    const q = fText.value.trim().toLowerCase();
    if (q) {
      if (!search) search = rows.map((c) => c.join("\u0001").toLowerCase());
      if (!q.split(/\s+/).every((w) => search[i].includes(w))) return false;
    }
    return true;
  }
  function applyFilters() {
    shown = order.filter(matches);
    limit = PAGE;
    render();
  }
  function sortBy(col) {
    sortDir = sortCol === col ? -sortDir : 1;
    sortCol = col;
    const num = rows.every((c) => c[col] === "" || !isNaN(Number(c[col])));
    order.sort((a, b) => {
      const x = rows[a][col], y = rows[b][col];
      const d = num ? Number(x) - Number(y) : String(x).localeCompare(String(y));
      return d * sortDir || a - b;
    });
    ths.forEach((t, i) => t.className = i === col ? (sortDir > 0 ? "sorted-asc" : "sorted-desc") : "");
    applyFilters();
  }
  function render() {
    const frag = document.createDocumentFragment();
    for (const i of shown.slice(0, limit)) {
      const n = F.requests[i].request;
      const tr = el("tr", { "data-request": n, tabindex: "0", title: "draw the ladder of request " + n },
        ...rows[i].map((c) => el("td", {}, c)));
      tr.classList.toggle("selected", n === current);
      const open = () => { showDetail(n); focusBox.scrollIntoView({ block: "start" }); };
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
      frag.append(tr);
    }
    tbody.replaceChildren(frag);
    document.getElementById("count").textContent =
      "(" + shown.length + " of " + rows.length + (shown.length > limit ? ", first " + limit + " shown" : "") + ")";
    document.getElementById("more-line").hidden = shown.length <= limit;
  }
  document.getElementById("more").addEventListener("click", () => { limit += PAGE; render(); });
  for (const f of [fText, fOutcome, fReply, fSource]) f.addEventListener("input", applyFilters);

  // ---- detail: ladder and evidence ----
  const byNumber = new Map(F.requests.map((r) => [r.request, r]));
  let current = null;
  // `opened`: why the page opened on it (its first screen), else chosen by the reader.
  function showDetail(n, opened) {
    const r = byNumber.get(n);
    const d = document.getElementById("detail");
    if (!r) { d.hidden = true; return; }
    current = n;
    for (const tr of tbody.children) tr.classList.toggle("selected", tr.dataset.request === String(n));
    const title = "Request " + r.request + " (" + r.proto + ")" + (opened ? " — " + opened : "");
    d.replaceChildren(
      el("h3", {}, title),
      el("p", {}, r.explanation),
      el("div", { class: "scroll" }, ladder(r, ladders.get(r.request))),
      el("h3", {}, "Per capture point"),
      el("div", { class: "scroll" }, hopsTable(r)),
      el("h3", {}, "Evidence of each match"),
      evidence(r),
      ...exchangesPanel(r)
    );
    d.hidden = false;
    if (!opened && location.hash !== "#request=" + n) history.replaceState(null, "", "#request=" + n);
  }
  function hopsTable(r) {
    const t = el("table");
    // The branch a request took where a point has them (JSON iface, reply_iface, host): a column only then.
    const branchOf = (h) => [h.iface && "via " + h.iface, h.reply_iface && "reply via " + h.reply_iface, h.host]
      .filter(Boolean).join(", ");
    const branches = r.captures.some((h) => branchOf(h));
    const head = ["point", "time (capture 1's clock)", "client", "server", "reply", "RTT", "packets →/←", "Wireshark filter"];
    tableOf(t, branches ? head.slice(0, 1).concat(["branch"], head.slice(1)) : head,
      r.captures.map((h) => {
        const row = h.seen
          ? [h.label, h.time, named(h.client, h.client_name), named(h.server, h.server_name), h.reply_seen ? "yes" : "no", ms(h.rtt_ms),
            h.packets_to_server + " / " + h.packets_to_client, h.wireshark_filter]
          : [h.label, "not seen", "", "", h.reply_seen ? "yes" : "", "", "", ""];
        return branches ? row.slice(0, 1).concat([branchOf(h)], row.slice(1)) : row;
      }));
    return t;
  }
  function evidence(r) {
    const t = el("table", { class: "evidence" });
    tableOf(t, ["between", "strength", "evidence", "candidates"],
      r.matches.map((m) => [m.between, m.strength, m.evidence.join(" + "), (m.candidates || []).join("\n")]));
    return t;
  }

  // ---- HTTP/1.x exchanges (JSON `exchanges`, present only where they say more than `app`) ----
  // The request's HTTP/1.x exchanges: what `at` read, and the counts of every
  // capture that read the connection. Counts of a connection not read whole are
  // lower bounds (`N+`, "at least"): nothing here says more than the fields do.
  function exchangesPanel(r) {
    const ex = r.exchanges;
    if (!ex) return [];
    const list = el("table", { class: "exchanges" });
    tableOf(list, ["n", "method", "target", "status", "after"],
      ex.list.map((e) => [e.n, e.method, e.target, e.status == null ? "no response read" : e.status, ms(e.after_ms)]));
    ex.list.forEach((e, k) => {
      const tr = list.tBodies[0].rows[k];
      tr.dataset.n = String(e.n);
      if (e.status == null) tr.className = "unanswered";
    });
    const plus = (v, whole) => v + (whole ? "" : "+");
    const seen = el("table", { class: "exchanges-seen" });
    tableOf(seen, ["capture", "requests", "responses", "read whole"],
      ex.seen.map((c) => [c.at, plus(c.requests, c.complete), plus(c.responses, c.complete),
        c.complete ? "yes" : "no: counts are lower bounds"]));
    return [el("h3", {}, "HTTP/1.x exchanges"), el("p", { id: "exchanges-summary" }, exchangeWords(ex)),
      el("div", { class: "cols" }, el("div", { class: "scroll" }, list), el("div", {}, seen))];
  }
  // One line from the fields, in the explanation's words.
  function exchangeWords(ex) {
    const least = ex.complete ? "" : "at least ";
    const parts = ["At " + ex.at + ": " + least + ex.count + (ex.count === 1 ? " exchange" : " exchanges") + ", " +
      least + ex.answered + " answered"];
    if (!ex.complete) parts.push("bytes after some point could not be read");
    if (ex.worst_status != null) parts.push("worst status " + ex.worst_status);
    if (ex.slowest) parts.push("slowest: exchange " + ex.slowest.n + ", " + ms(ex.slowest.after_ms) + " after its request");
    if (ex.list.length < ex.count) parts.push("the first " + ex.list.length + " are listed");
    const u = ex.unanswered;
    if (u) {
      const e = ex.list.find((x) => x.n === u.n);
      parts.push("exchange " + u.n + (e ? " (" + e.method + " " + e.target + ")" : "") + " got no response at " + ex.at +
        (u.open ? " (which saw no FIN from the server and no RST: the capture may have ended before a response)" : "") +
        (u.request_reached ? ", its request was last read at " + u.request_reached : "") + ", " +
        (u.response_seen.length ? "its response was read at " + u.response_seen.join(", ") : "no capture read a response to it (" + ex.seen.map((c) => c.at).join(", ") + " read the connection)"));
    }
    return parts.join("; ");
  }
  // The exchanges as ladder marks: a request at its `time`, its response
  // `after_ms` later, or the request alone when no response was read. Times are
  // ns after the ladder's t0, on capture 1's clock as the ladder's events are.
  function exchangeMarks(r) {
    const ex = r.exchanges, t0 = exactT0(r.request);
    if (!ex || t0 == null || !labels.includes(ex.at)) return [];
    const marks = [];
    for (const e of ex.list) {
      const at = epochNs(e.time);
      if (at == null) continue;
      const t = Number(at - t0);
      if (e.status == null) { marks.push({ t, kind: "unanswered", e }); continue; }
      marks.push({ t, kind: "request", e });
      if (e.after_ms != null) marks.push({ t: t + Math.round(e.after_ms * 1e6), kind: "response", e });
    }
    return marks;
  }
  // A ladder's t0 is ns since the epoch (about 1.8e18): as a JS number it is off
  // by up to 128 ns, so it is read exactly from the block's text, whose format is
  // ours (`"request":N,"t0":NS`; a `"` inside a string is escaped, so no match there).
  let ladderText = null;
  function exactT0(n) {
    if (ladderText == null) ladderText = document.getElementById("tc-ladder").textContent;
    const key = "\"request\":" + n + ",\"t0\":";
    const at = ladderText.indexOf(key);
    const m = at < 0 ? null : /^-?\d+/.exec(ladderText.slice(at + key.length, at + key.length + 24));
    return m ? BigInt(m[0]) : null;
  }
  // RFC 3339 (`2026-12-05T12:47:49.005826000Z`) → ns since the epoch, exact (Date keeps ms only).
  function epochNs(text) {
    const m = /^([^.]+?)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(text || "");
    const s = m ? Date.parse(m[1] + m[3]) : NaN;
    return isNaN(s) ? null : BigInt(s) * 1000000n + BigInt((m[2] || "").padEnd(9, "0"));
  }
  // For the ladder only (the table shows the target whole).
  const shorten = (text, max) => {
    const chars = Array.from(text);
    return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : text;
  };

  // The ladder: one vertical line per capture point in path order, time downwards.
  // Each packet event kind is one arrow band; arrows join the points that saw it.
  function ladder(r, lad) {
    const n = labels.length, colW = 210, left = 90, top = 74, bandH = 42;
    const hops = lad ? lad.hops : [];
    const seenAt = (i) => Boolean(hops[i]);
    // Bands: same kind and direction, the k-th occurrence at each point.
    const bands = new Map();
    hops.forEach((evs, i) => {
      if (!evs) return;
      const count = new Map();
      for (let [kind, dt, back, detail] of evs) {
        if (r.proto !== "tcp") kind = kind === "data" ? "request" : kind === "reply data" ? "reply" : kind;
        const key = kind + "/" + back;
        const k = (count.get(key) || 0) + 1;
        count.set(key, k);
        const id = key + "/" + k;
        if (!bands.has(id)) bands.set(id, { kind, back: back === 1, detail, at: new Map(), t: dt });
        const b = bands.get(id);
        b.at.set(i, dt);
        b.t = Math.min(b.t, dt);
        if (detail) b.detail = detail;
      }
    });
    const list = [...bands.values()].sort((a, b) => a.t - b.t);
    // One row per band and per exchange mark, in time order (on a tie the band
    // first; marks keep their order: pipelined requests sent at once stay by n).
    const markH = 20;
    const marks = exchangeMarks(r);
    const rows = [...list.map((b) => ({ t: b.t, h: bandH, band: b })), ...marks.map((m) => ({ t: m.t, h: markH, mark: m }))]
      .sort((a, b) => a.t - b.t || (a.band ? 0 : 1) - (b.band ? 0 : 1));
    const notDrawn = marks.length > 0 && r.exchanges.list.length < r.exchanges.count;
    const rowsH = Math.max(bandH, rows.reduce((sum, w) => sum + w.h, 0)) + (notDrawn ? markH : 0);
    const changes = [...r.source.changed.map((c) => ["source", c]), ...r.destination.changed.map((c) => ["destination", c])];
    const changeTop = top + 6, bandTop = changeTop + changes.length * 18 + 16;
    const width = left + (n - 1) * colW + 120, height = bandTop + rowsH + 20;
    const s = svg("svg", { class: "ladder", width, height, viewBox: "0 0 " + width + " " + height, role: "img" });
    s.append(svg("title", {}, "Ladder of request " + r.request));
    const defs = svg("defs");
    for (const [id, color] of [["head", "#0969da"], ["head-back", "#1a7f37"], ["head-bad", "#cf222e"]]) {
      const m = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" });
      m.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: color }));
      defs.append(m);
    }
    s.append(defs);
    const x = (i) => left + i * colW;
    labels.forEach((l, i) => {
      const h = r.captures[i] || {};
      s.append(svg("text", { x: x(i), y: 16, "text-anchor": "middle", "font-weight": "bold", class: "label" }, l));
      s.append(svg("text", { x: x(i), y: 32, "text-anchor": "middle", class: "small tuple" }, h.seen ? named(h.client, h.client_name) : "not seen"));
      s.append(svg("text", { x: x(i), y: 46, "text-anchor": "middle", class: "small tuple" }, h.seen ? "→ " + named(h.server, h.server_name) : ""));
      s.append(svg("line", { x1: x(i), y1: top - 14, x2: x(i), y2: height - 8, class: "point", "stroke-dasharray": seenAt(i) ? "" : "3 4" }));
    });
    changes.forEach(([side, c], k) => {
      const [a, b] = c.between.split("->").map((l) => labels.indexOf(l));
      if (a < 0 || b < 0) return;
      const y = changeTop + k * 18, text = side + " " + named(c.before, c.before_name) + " → " + named(c.after, c.after_name);
      // Spans the boundary, or the text when that is wider (about 6.5 px a character).
      const w = Math.max(x(b) - x(a) - 8, text.length * 6.5 + 12), mid = (x(a) + x(b)) / 2;
      s.append(svg("rect", { x: mid - w / 2, y, width: w, height: 15, rx: 3, class: "changed" }));
      s.append(svg("text", { x: mid, y: y + 11, "text-anchor": "middle", class: "change" }, text));
    });
    const deepest = Math.max(-1, ...hops.map((h, i) => (h ? i : -1)));
    // Where a RST / ICMP error came into the path, when between two points.
    const origin = (r.outcome.origin || "").split("->").map((l) => labels.indexOf(l));
    const enteredAfter = origin.length === 2 && origin[0] >= 0 && origin[1] === origin[0] + 1 ? origin[0] : -1;
    let y = bandTop;
    for (const w of rows) {
      s.append(w.band ? band(w.band, y) : exchangeMark(w.mark, y));
      y += w.h;
    }
    if (notDrawn) {
      s.append(svg("text", { x: x(labels.indexOf(r.exchanges.at)) + 6, y: y + 4, class: "small exchange-more" },
        "exchanges after the first " + r.exchanges.list.length + " are not drawn (the table below counts them)"));
    }
    if (!list.length) s.append(svg("text", { x: left, y: bandTop + 12 }, "no packet events recorded"));
    return s;

    function band(b, y) {
      const pts = [...b.at.keys()].sort((p, q) => p - q);
      const bad = b.kind === "RST" || b.kind === "ICMP";
      const cls = "arrow" + (b.back ? " back" : "") + (bad ? " bad" : "");
      const marker = "url(#" + (bad ? "head-bad" : b.back ? "head-back" : "head") + ")";
      const g = svg("g", { class: "band", "data-kind": b.kind, "data-dir": b.back ? "to-client" : "to-server" });
      const name = b.kind + (b.detail ? " " + b.detail : "");
      const first = b.back ? pts[pts.length - 1] : pts[0];
      g.append(svg("text", { x: x(first) + (b.back ? -6 : 6), y: y - 3, "text-anchor": b.back ? "end" : "start", class: "event" }, name));
      for (const i of pts) {
        g.append(svg("circle", { cx: x(i), cy: b.back ? y + 16 : y, r: 2.5, fill: "#57606a" }));
        g.append(svg("text", { x: x(i) + (i === n - 1 ? -4 : 4), y: (b.back ? y + 16 : y) + 12, "text-anchor": i === n - 1 ? "end" : "start", class: "small time" },
          "+" + nsMs(b.at.get(i))));
      }
      // Joined arrows between neighbouring points that both saw it.
      for (let j = 0; j + 1 < pts.length; j++) {
        const [a, c] = [pts[j], pts[j + 1]];
        if (c !== a + 1) continue;
        const [from, to] = b.back ? [c, a] : [a, c];
        const delay = b.at.get(to) - b.at.get(from);
        g.append(svg("line", { x1: x(from), y1: y, x2: x(to), y2: y + 16, class: cls, "marker-end": marker, "data-from": labels[from], "data-to": labels[to] }));
        g.append(svg("text", { x: (x(from) + x(to)) / 2, y: y + 21, "text-anchor": "middle", class: "small delay" }, nsMs(delay)));
      }
      if (!b.back) {
        // Not seen at the next point the request passed: the packet stops there.
        const last = pts[pts.length - 1];
        if (last + 1 < n && (seenAt(last + 1) || last === enteredAfter)) lost(g, x(last), x(last + 1), y, cls);
      } else {
        const lo = pts[0], hi = pts[pts.length - 1];
        if (hi < deepest || (bad && hi === enteredAfter)) {
          // Entered between hi and the next point: drawn from where it came in.
          const mid = (x(hi) + x(hi + 1)) / 2;
          g.append(svg("path", { d: "M" + (mid - 5) + "," + (y - 5) + " l5,5 l-5,5 l-5,-5 z", class: "entered", fill: "#cf222e" }));
          g.append(svg("line", { x1: mid, y1: y, x2: x(hi), y2: y + 16, class: cls + " entered", "marker-end": marker, "data-from": "between " + labels[hi] + " and " + labels[hi + 1], "data-to": labels[hi] }));
          g.append(svg("text", { x: mid + 6, y: y + 14, class: "small" }, "entered here"));
        }
        if (lo > 0 && seenAt(lo - 1)) lost(g, x(lo), x(lo - 1), y, cls);
      }
      return g;
    }

    // An HTTP/1.x exchange on the line of the capture that read it (`exchanges.at`):
    // a short tick towards the server for its request, back towards the client
    // for its response; dashed and red for a request no response was read to.
    // Its row's text sits where a band's label would (y - 3 .. y + 3).
    function exchangeMark(m, y) {
      const e = m.e, i = labels.indexOf(r.exchanges.at), back = m.kind === "response", bad = m.kind === "unanswered";
      const x0 = x(i), x1 = x0 + 18, ty = y - 4;
      const g = svg("g", { class: "exchange " + m.kind, "data-n": e.n });
      if (back) g.setAttribute("data-status", e.status);
      g.append(svg("title", {}, "exchange " + e.n + ": " + e.method + " " + e.target));
      const [from, to] = back ? [x1, x0] : [x0, x1];
      g.append(svg("line", { x1: from, y1: ty, x2: to, y2: ty, class: "arrow" + (back ? " back" : bad ? " bad lost" : ""),
        "marker-end": "url(#" + (back ? "head-back" : bad ? "head-bad" : "head") + ")" }));
      const text = back ? e.n + ": " + e.status + " after " + ms(e.after_ms)
        : e.n + " " + e.method + " " + shorten(e.target, 28) + (bad ? ": no response read at " + r.exchanges.at : "");
      // Beside the tick, on the side with room (left of the last point, as the times are).
      const last = i === n - 1;
      const t = svg("text", { x: last ? x0 - 6 : x1 + 6, y, "text-anchor": last ? "end" : "start", class: "exchange-label" + (bad ? " bad" : "") }, text);
      t.append(svg("tspan", { class: "time" }, "  +" + nsMs(m.t)));
      g.append(t);
      return g;
    }

    function lost(g, x1, x2, y, cls) {
      const xe = x1 + (x2 - x1) * 0.55, ye = y + 9;
      g.append(svg("line", { x1, y1: y, x2: xe, y2: ye, class: cls + " lost" }));
      g.append(svg("path", { d: "M" + (xe - 5) + "," + (ye - 5) + " l10,10 m0,-10 l-10,10", stroke: "#cf222e", "stroke-width": 2, class: "stop" }));
      g.append(svg("text", { x: xe + (x2 > x1 ? 8 : -8), y: ye + 4, "text-anchor": x2 > x1 ? "start" : "end", class: "small bad lost-label" }, "not seen at next point"));
    }
  }

  // ---- start: #request=N opens a ladder; #q=, #outcome=, #reply=, #source= filter ----
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has("q")) fText.value = params.get("q");
  if (params.has("outcome")) fOutcome.value = params.get("outcome");
  if (params.has("reply")) fReply.value = params.get("reply");
  if (params.has("source")) fSource.value = params.get("source");
  applyFilters();
  // The first screen: the ladder of the request asked for, else of the first
  // failure, else of the first request.
  if (params.has("request")) showDetail(Number(params.get("request")));
  else if (O.selected != null) showDetail(O.selected, O.failure ? "the first failure" : "the first request");
  // Where the first screen's ladder lies (tests read it from the DOM).
  const box = document.querySelector("#detail svg.ladder");
  if (box) {
    const b = box.getBoundingClientRect();
    Object.assign(document.body.dataset, { selected: String(current), ladderTop: String(Math.round(b.top)),
      ladderBottom: String(Math.round(b.bottom)), viewportHeight: String(window.innerHeight) });
  }
  // Milliseconds from the start of navigation until the page was drawn (scripts/html-scale.sh reads it).
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
})();
