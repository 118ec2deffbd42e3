//! Non-fatal input problems as data: where (capture, record, byte offset), what,
//! and what tuplecorr did about it. They are printed on stderr and also appear in
//! every report. Takes nothing, gives `Warning`; never prints.

use std::fmt;

/// One problem with one input that did not stop the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Capture label (e.g. `egress`).
    pub label: String,
    /// File name as given on the command line (`-` for standard input).
    pub file: String,
    /// 1-based record (packet) number, when the problem is tied to one.
    pub record: Option<u64>,
    /// Byte offset of that record in the (decompressed) capture stream.
    pub byte_offset: Option<u64>,
    /// What is wrong, e.g. "record is cut short: its header says 1514 bytes, the file ends after 306 (tcpdump stopped mid-write?)".
    pub problem: String,
    /// What tuplecorr did, e.g. "dropped it, kept the 18411 records before it".
    pub consequence: String,
}

impl Warning {
    /// A problem of the run at capture `label`, tied to no file or record.
    pub fn of_run(label: &str, problem: String, consequence: &str) -> Warning {
        Warning {
            label: label.to_string(),
            file: String::new(),
            record: None,
            byte_offset: None,
            problem,
            consequence: consequence.to_string(),
        }
    }

    /// `problem; consequence` — the `message` field of the report.
    pub fn message(&self) -> String {
        if self.consequence.is_empty() {
            self.problem.clone()
        } else {
            format!("{}; {}", self.problem, self.consequence)
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        match (self.record, self.byte_offset) {
            (Some(r), Some(o)) => write!(f, "record {r} at byte {o}: ")?,
            (Some(r), None) => write!(f, "record {r}: ")?,
            (None, Some(o)) => write!(f, "byte {o}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message())
    }
}
