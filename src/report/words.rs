//! Capture indices in words: a capture's label, a boundary `A->B`, an origin.
//! Takes typed findings; gives the names every report format uses. Never
//! decides anything about a request.

use crate::verdict::{Between, Findings, Origin};

/// The labels of a run, to name captures and boundaries.
#[derive(Clone, Debug)]
pub struct Words<'a> {
    pub labels: Vec<&'a str>,
}

impl<'a> Words<'a> {
    pub fn new(f: &'a Findings) -> Words<'a> {
        Words { labels: f.captures.iter().map(|c| c.label.as_str()).collect() }
    }

    /// Label of capture `index` (`?` when out of range).
    pub fn label(&self, index: usize) -> &'a str {
        self.labels.get(index).copied().unwrap_or("?")
    }

    /// `A->B`.
    pub fn between(&self, b: Between) -> String {
        format!("{}->{}", self.label(b.from), self.label(b.to))
    }

    /// `A and B`.
    pub fn between_words(&self, b: Between) -> String {
        format!("{} and {}", self.label(b.from), self.label(b.to))
    }

    /// A capture label, or a boundary `A->B`.
    pub fn origin(&self, o: Origin) -> String {
        match o {
            Origin::Capture(c) => self.label(c).to_string(),
            Origin::Between(b) => self.between(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_read_as_labels_and_out_of_range_as_a_question_mark() {
        let w = Words { labels: vec!["decap", "egress", "backend"] };
        assert_eq!(w.between(Between { from: 1, to: 2 }), "egress->backend");
        assert_eq!(w.between_words(Between { from: 0, to: 2 }), "decap and backend");
        assert_eq!(w.origin(Origin::Capture(2)), "backend");
        assert_eq!(w.label(7), "?");
    }
}
