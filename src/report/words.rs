//! Capture indices in words: a capture's label, a boundary `A->B`, an origin.
//! Takes typed findings; gives the names every report format uses. Never
//! decides anything about a request.

use crate::names::Names;
use crate::report::when::TimeStyle;
use crate::verdict::{Between, Endpoint, Findings, Origin};
use std::net::IpAddr;

/// The labels of a run, to name captures and boundaries; with `--names`, the
/// names of addresses; with `--tz`/`--time-format`, how times read.
#[derive(Clone, Debug)]
pub struct Words<'a> {
    pub labels: Vec<&'a str>,
    /// `--names`: None when not given (then no name is looked up at all).
    pub names: Option<&'a Names>,
    /// `--tz` and `--time-format`; None = RFC 3339 UTC.
    pub time: Option<&'a TimeStyle>,
    /// `--clocks-from REPORT`: where the clocks not estimated came from (else `--offset`).
    pub clocks_from: Option<&'a str>,
    /// `--rules`, `--conntrack`, `--masq-agent`: the rule and entry behind each change.
    pub why: Option<&'a crate::why::attach::Explained>,
}

impl<'a> Words<'a> {
    pub fn new(f: &'a Findings) -> Words<'a> {
        Words {
            labels: f.captures.iter().map(|c| c.label.as_str()).collect(),
            names: None,
            time: None,
            clocks_from: None,
            why: None,
        }
    }

    /// [`Words::new`] with the names and time style of `--names`, `--tz`, `--time-format`.
    pub fn with(f: &'a Findings, names: Option<&'a Names>, time: Option<&'a TimeStyle>) -> Words<'a> {
        Words { names, time, ..Words::new(f) }
    }

    /// The name `--names` gives `addr`.
    pub fn name_of(&self, addr: IpAddr) -> Option<&'a str> {
        self.names?.lookup(addr)
    }

    /// An address as text: `name (addr)` when it has a name.
    pub fn addr(&self, addr: IpAddr) -> String {
        match self.name_of(addr) {
            Some(name) => format!("{name} ({addr})"),
            None => super::endpoint::addr_text(addr),
        }
    }

    /// An endpoint as text: `name (ip:port)` when its address has a name.
    pub fn endpoint(&self, e: Endpoint) -> String {
        let mut text = String::with_capacity(48);
        self.push_endpoint(&mut text, e);
        text
    }

    /// Appends [`Words::endpoint`]'s text to `out`.
    pub fn push_endpoint(&self, out: &mut String, e: Endpoint) {
        match self.name_of(e.addr) {
            Some(name) => {
                for part in [name, " ("] {
                    out.push_str(part);
                }
                super::endpoint::push_endpoint(out, e);
                out.push(')');
            }
            None => super::endpoint::push_endpoint(out, e),
        }
    }

    /// A time as the report writes it: RFC 3339 in the chosen zone (UTC: `Z`).
    pub fn time(&self, ns: i64) -> String {
        match self.time {
            Some(t) => t.rfc3339(ns),
            None => crate::time::rfc3339(ns),
        }
    }

    /// Label of capture `index` (`?` when out of range).
    pub fn label(&self, index: usize) -> &'a str {
        self.labels.get(index).copied().unwrap_or("?")
    }

    /// `A->B`.
    pub fn between(&self, b: Between) -> String {
        let mut text = String::new();
        self.push_between(&mut text, b);
        text
    }

    /// Appends [`Words::between`]'s text to `out` (a report reusing its strings).
    pub fn push_between(&self, out: &mut String, b: Between) {
        out.push_str(self.label(b.from));
        out.push_str("->");
        out.push_str(self.label(b.to));
    }

    /// `A and B`.
    pub fn between_words(&self, b: Between) -> String {
        format!("{} and {}", self.label(b.from), self.label(b.to))
    }

    /// A capture label, or a boundary `A->B`.
    pub fn origin(&self, o: Origin) -> String {
        let mut text = String::new();
        self.push_origin(&mut text, o);
        text
    }

    /// Appends [`Words::origin`]'s text to `out`.
    pub fn push_origin(&self, out: &mut String, o: Origin) {
        match o {
            Origin::Capture(c) => out.push_str(self.label(c)),
            Origin::Between(b) => self.push_between(out, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_read_as_labels_and_out_of_range_as_a_question_mark() {
        let w = Words {
            labels: vec!["decap", "egress", "backend"],
            names: None,
            time: None,
            clocks_from: None,
            why: None,
        };
        assert_eq!(w.between(Between { from: 1, to: 2 }), "egress->backend");
        assert_eq!(w.between_words(Between { from: 0, to: 2 }), "decap and backend");
        assert_eq!(w.origin(Origin::Capture(2)), "backend");
        assert_eq!(w.label(7), "?");
    }
}
