//! Untrusted text files, bounded: at most [`MAX_BYTES`] read, at most
//! [`MAX_LINES`] lines, each at most [`MAX_LINE`] bytes; every line a parser
//! cannot read is named by number in a note (the first [`MAX_NOTES`] of a
//! file, then a count). Takes a path or text; gives lines and notes.

use std::io::Read;

/// Bytes read from one file; a longer file is refused (not read in part).
pub const MAX_BYTES: u64 = 64 << 20;
/// Lines read from one file; the rest are left, with a note.
pub const MAX_LINES: usize = 1_000_000;
/// Bytes of one line; a longer line is not read, with a note.
pub const MAX_LINE: usize = 64 << 10;
/// Notes kept per file; the rest are counted.
pub const MAX_NOTES: usize = 20;

/// What a parser could not read in one file, by line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    pub file: String,
    /// `(line, message)`, line 0 = the file as a whole.
    pub list: Vec<(u32, String)>,
    /// Notes past [`MAX_NOTES`].
    pub more: u64,
}

impl Notes {
    pub fn new(file: &str) -> Notes {
        Notes { file: file.to_string(), ..Notes::default() }
    }

    /// Notes that line `line` was not read and why.
    pub fn line(&mut self, line: u32, message: impl Into<String>) {
        if self.list.len() < MAX_NOTES {
            self.list.push((line, message.into()));
        } else {
            self.more += 1;
        }
    }

    /// One message per note, naming the file and line, and what happens next.
    pub fn messages(&self) -> Vec<String> {
        let mut out: Vec<String> = (self.list.iter())
            .map(|(l, m)| match l {
                0 => format!("{}: {m}", self.file),
                l => format!("{}:{l}: {m}; line not used", self.file),
            })
            .collect();
        if self.more > 0 {
            out.push(format!("{}: {} more lines not read", self.file, self.more));
        }
        out
    }
}

/// The text of a file, at most [`MAX_BYTES`]; invalid UTF-8 is replaced (the
/// lines holding it then fail to parse and are noted).
pub fn read(path: &std::path::Path) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    f.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("{}: larger than {} MiB, not read", path.display(), MAX_BYTES >> 20));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The lines of `text` with their 1-based numbers, at most [`MAX_LINES`];
/// lines too long are noted and skipped, lines past the cap noted once.
pub fn lines<'t>(text: &'t str, notes: &mut Notes) -> Vec<(u32, &'t str)> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if i >= MAX_LINES {
            notes.line(n, format!("the file has more than {MAX_LINES} lines: the rest is not read"));
            break;
        }
        if l.len() > MAX_LINE {
            notes.line(n, format!("longer than {MAX_LINE} bytes"));
            continue;
        }
        out.push((n, l.trim_end_matches('\r')));
    }
    out
}

/// Shell-like words: blanks separate, `"…"` (with `\"` and `\\`) quotes; None
/// for an unterminated quote.
pub fn words(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(chars.next()?),
                        x => cur.push(x),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_quoted_blanks_and_refuse_an_open_quote() {
        assert_eq!(
            words(r#"-A X -m comment --comment "a \"b\" c" -j RETURN"#).unwrap(),
            ["-A", "X", "-m", "comment", "--comment", "a \"b\" c", "-j", "RETURN"]
        );
        assert_eq!(words(r#"--comment """#).unwrap(), ["--comment", ""]);
        assert!(words(r#"--comment "open"#).is_none());
    }

    #[test]
    fn long_lines_and_lines_past_the_cap_are_noted_by_number() {
        let text = format!("a\n{}\nb\n", "x".repeat(MAX_LINE + 1));
        let mut notes = Notes::new("f");
        let got = lines(&text, &mut notes);
        assert_eq!(got, [(1, "a"), (3, "b")]);
        assert_eq!(notes.messages(), [format!("f:2: longer than {MAX_LINE} bytes; line not used")]);
        let mut many = Notes::new("g");
        for i in 1..=(MAX_NOTES as u32 + 3) {
            many.line(i, "bad");
        }
        assert_eq!(many.messages().last().unwrap(), "g: 3 more lines not read");
    }
}
