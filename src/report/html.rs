//! Findings → one self-contained HTML page (`--format html`): no network, no
//! external scripts, fonts or styles. The data is embedded once, as JSON in
//! `<script type="application/json">` blocks — the findings exactly as the JSON
//! writer's model serialises them, the ladder events of the reported requests
//! (not part of the JSON contract) and the text summary — and everything is
//! drawn by the page's own script (`html/app.js`). Every `<` inside the JSON
//! is written as `\u003c`, so no capture-derived text can close the block or
//! become markup. Never reads captures.

use crate::ladder::{Embedded, Ladder};
use crate::verdict::Findings;
use std::io::{self, Write};

const PAGE: &str = include_str!("html/page.html");
const STYLE: &str = include_str!("html/style.css");
const APP: &str = include_str!("html/app.js");

/// `--format html`. Without ladder data the ladders say there are no events.
pub fn write_html(findings: &Findings, ladder: Option<&Ladder>, out: &mut dyn Write) -> io::Result<()> {
    write_html_with(&crate::report::words::Words::new(findings), findings, ladder, out)
}

/// [`write_html`] with names (the embedded findings carry `*_name` fields and
/// the summary speaks of names) and zone.
pub fn write_html_with(
    w: &crate::report::words::Words<'_>,
    findings: &Findings,
    ladder: Option<&Ladder>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (head, rest) = split(PAGE, "/*STYLE*/");
    let (middle, rest) = split(rest, "<!--DATA-->");
    let (before_app, tail) = split(rest, "/*APP*/");
    out.write_all(head.as_bytes())?;
    out.write_all(STYLE.as_bytes())?;
    out.write_all(middle.as_bytes())?;
    json_block(out, "tc-findings", |o| {
        serde_json::to_writer(o, &super::to_wire::findings_with(w, findings))
    })?;
    let reported: Vec<u64> = findings.requests.iter().map(|r| r.request).collect();
    let empty = Ladder::default();
    let embedded = Embedded { ladder: ladder.unwrap_or(&empty), reported: &reported };
    json_block(out, "tc-ladder", |w| serde_json::to_writer(w, &embedded))?;
    let mut summary = Vec::new();
    super::summary::write_summary_with(w, findings, false, &mut summary)?;
    let summary = String::from_utf8_lossy(&summary);
    json_block(out, "tc-summary", |w| serde_json::to_writer(w, summary.trim_end()))?;
    let overview = FirstScreen {
        overview: super::summary::overview(w, findings),
        selected: first_to_show(findings),
        failure: findings.requests.iter().any(is_failure),
    };
    json_block(out, "tc-overview", |w| serde_json::to_writer(w, &overview))?;
    out.write_all(before_app.as_bytes())?;
    out.write_all(APP.as_bytes())?;
    out.write_all(tail.as_bytes())
}

/// What the page opens on: the summary's patterns, and the request whose
/// ladder is drawn first.
#[derive(serde::Serialize)]
struct FirstScreen {
    overview: super::summary::Overview,
    /// The first failure, else the first request (None without requests).
    selected: Option<u64>,
    /// `selected` is a failure.
    failure: bool,
}

/// A request that did not go through cleanly: its reply was lost, went
/// around a point or never came, or it was reset, rejected by ICMP, never
/// answered after the handshake, or its data stopped on the way.
pub fn is_failure(r: &crate::verdict::Request) -> bool {
    use crate::verdict::{OutcomeKind, ReplyPath};
    matches!(r.reply.path, ReplyPath::ReplyLost | ReplyPath::NoReply | ReplyPath::Bypassed)
        || matches!(
            r.outcome.kind,
            OutcomeKind::Reset
                | OutcomeKind::IcmpError
                | OutcomeKind::NoReply
                | OutcomeKind::DataStopped
                | OutcomeKind::HandshakeOnly
        )
}

/// The request the page opens on: the first failure (in report order), else
/// the first request.
pub fn first_to_show(findings: &Findings) -> Option<u64> {
    (findings.requests.iter().find(|r| is_failure(r))).or(findings.requests.first()).map(|r| r.request)
}

/// The template around a marker (the template is ours: the marker is there).
fn split<'a>(text: &'a str, marker: &str) -> (&'a str, &'a str) {
    text.split_once(marker).unwrap_or((text, ""))
}

/// `<script type="application/json" id=ID>JSON</script>` with every `<` escaped.
fn json_block(
    out: &mut dyn Write,
    id: &str,
    write: impl FnOnce(&mut EscapeLt<'_>) -> serde_json::Result<()>,
) -> io::Result<()> {
    write!(out, "<script type=\"application/json\" id=\"{id}\">")?;
    let mut w = EscapeLt { out: &mut *out };
    write(&mut w)?;
    out.write_all(b"</script>\n")
}

/// Writes JSON text with `<` as `\u003c` (it only occurs inside strings, where
/// the escape means the same character).
struct EscapeLt<'a> {
    out: &'a mut dyn Write,
}

impl Write for EscapeLt<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for part in buf.split_inclusive(|&b| b == b'<') {
            match part.split_last() {
                Some((b'<', text)) => {
                    self.out.write_all(text)?;
                    self.out.write_all(b"\\u003c")?;
                }
                _ => self.out.write_all(part)?,
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn page(f: &Findings) -> String {
        let mut out = Vec::new();
        write_html(f, None, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The text of the `<script type="application/json" id=ID>` block.
    fn block<'a>(html: &'a str, id: &str) -> &'a str {
        let start = format!("<script type=\"application/json\" id=\"{id}\">");
        let from = html.find(&start).unwrap() + start.len();
        &html[from..from + html[from..].find("</script>").unwrap()]
    }

    #[test]
    fn findings_are_embedded_once_and_read_back_equal() {
        let f = findings();
        let html = page(&f);
        let back: super::super::wire::Findings = serde_json::from_str(block(&html, "tc-findings")).unwrap();
        assert_eq!(back.requests.len(), f.requests.len());
        let explanation =
            crate::report::explain::explain(&crate::report::words::Words::new(&f), &f.requests[0]);
        assert_eq!(back.requests[0].explanation, explanation);
        assert_eq!(html.matches(&explanation).count(), 1);
        let summary: String = serde_json::from_str(block(&html, "tc-summary")).unwrap();
        assert!(summary.starts_with("5 requests across"));
    }

    #[test]
    fn capture_text_cannot_close_the_block_or_become_markup() {
        let mut f = findings();
        let hostile = "</script><script>alert(1)</script><!--<img src=x onerror=alert(2)>";
        f.captures[0].label = hostile.into();
        f.captures[1].file = hostile.into();
        // the explanation of request 1 names the boundary egress->backend
        f.captures[2].label = hostile.into();
        f.warnings.push(crate::verdict::WarningOut {
            label: hostile.into(),
            record: None,
            byte_offset: None,
            message: hostile.into(),
        });
        let html = page(&f);
        assert!(!html.contains("alert(1)</script>"));
        assert!(!html.contains("<img"));
        assert_eq!(html.matches("<script").count(), 5, "four data blocks and the app");
        let back: super::super::wire::Findings = serde_json::from_str(block(&html, "tc-findings")).unwrap();
        assert_eq!(back.captures[0].label, hostile);
        assert!(back.requests[0].explanation.contains(hostile), "{}", back.requests[0].explanation);
    }

    #[test]
    fn the_page_opens_on_the_first_failure_else_the_first_request() {
        use crate::verdict::{OutcomeKind, ReplyPath};
        let mut f = findings();
        // the fixture: 1 completes, 2 loses its reply
        assert!(!is_failure(&f.requests[0]) && is_failure(&f.requests[1]));
        assert_eq!(first_to_show(&f), Some(f.requests[1].request));
        let html = page(&f);
        let first: serde_json::Value = serde_json::from_str(block(&html, "tc-overview")).unwrap();
        assert_eq!(first["selected"], f.requests[1].request);
        assert_eq!(first["failure"], true);
        let patterns = first["overview"]["patterns"].as_array().unwrap();
        let total: u64 = patterns.iter().map(|p| p["requests"].as_u64().unwrap()).sum();
        assert_eq!(total, f.requests.len() as u64);
        assert!(first["overview"]["headline"].as_str().unwrap().starts_with("5 requests across"));
        assert!(patterns.iter().any(|p| p["tone"] == "bad"));
        // every request clean: the first one
        for r in &mut f.requests {
            r.reply.path = ReplyPath::SamePath;
            r.outcome.kind = OutcomeKind::Completed;
        }
        assert_eq!(first_to_show(&f), Some(f.requests[0].request));
        // each kind that is a failure, alone on the last request
        let last = f.requests.len() - 1;
        for kind in [
            OutcomeKind::Reset,
            OutcomeKind::IcmpError,
            OutcomeKind::NoReply,
            OutcomeKind::DataStopped,
            OutcomeKind::HandshakeOnly,
        ] {
            let mut g = f.clone();
            g.requests[last].outcome.kind = kind;
            assert_eq!(first_to_show(&g), Some(g.requests[last].request), "{kind:?}");
        }
        for path in [ReplyPath::ReplyLost, ReplyPath::NoReply, ReplyPath::Bypassed] {
            let mut g = f.clone();
            g.requests[last].reply.path = path;
            assert_eq!(first_to_show(&g), Some(g.requests[last].request), "{path:?}");
        }
        let mut g = f.clone();
        g.requests[last].outcome.kind = OutcomeKind::Midstream;
        assert_eq!(first_to_show(&g), Some(g.requests[0].request), "midstream is no failure");
        g.requests.clear();
        assert_eq!(first_to_show(&g), None);
    }

    #[test]
    fn page_is_self_contained() {
        let html = page(&findings());
        for external in ["src=", "href=", "http://", "https://", "@import", "url("] {
            let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "").replace("url(#", "");
            assert!(!outside_svg_ns.contains(external), "{external}");
        }
        assert!(html.contains("default-src 'none'"));
    }
}
