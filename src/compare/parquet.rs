//! Reads a `--format parquet` report back (docs/output.md "Parquet"): the
//! file's `tuplecorr.report` metadata is the JSON report without its
//! requests, and each row is a JSON request with the JSON's keys and nesting
//! — so a row is turned back into that JSON object and read through the same
//! wire types as a JSON report. Columns the JSON has not (`first_seen`,
//! `*_addr`, `*_port`, `*_changed_at`) are passed over; a timestamp is taken
//! from the exact `*_ns` column beside it. Takes a file; gives wire findings
//! or why not. Holds one record batch's rows at a time besides the requests.

use crate::report::parquet::METADATA_KEY;
use crate::report::wire;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::record::{Field, Row};
use serde_json::{Map, Value};
use std::fs::File;

/// Why a Parquet file is not a tuplecorr report: the row (1-based request
/// row) when one is at fault, and the sentence.
pub type Failure = (Option<usize>, String);

/// The wire findings of the Parquet report in `file`. Read row by row with
/// the parquet crate's record reader, not its Arrow one: that one would
/// make the binary a third larger (13.1 MB instead of 9.9) for one
/// conversion.
pub fn wire_findings(file: File) -> Result<wire::Findings, Failure> {
    let reader = SerializedFileReader::new(file).map_err(|e| (None, e.to_string()))?;
    let run = (reader.metadata().file_metadata().key_value_metadata())
        .and_then(|kv| kv.iter().find(|kv| kv.key == METADATA_KEY))
        .and_then(|kv| kv.value.as_deref())
        .ok_or_else(|| {
            (None, format!("a Parquet file without the `{METADATA_KEY}` metadata a report has"))
        })?;
    let mut findings: wire::Findings =
        serde_json::from_str(run).map_err(|e| (None, format!("its `{METADATA_KEY}` metadata: {e}")))?;
    let rows = reader.get_row_iter(None).map_err(|e| (None, e.to_string()))?;
    for row in rows {
        let n = findings.requests.len() + 1;
        let row = row.map_err(|e| (Some(n), e.to_string()))?;
        let request = serde_json::from_value(object(&row)).map_err(|e| (Some(n), e.to_string()))?;
        findings.requests.push(request);
    }
    Ok(findings)
}

/// A row (or a struct in it) as a JSON object: a timestamp field as the
/// RFC 3339 text of its `*_ns` neighbour (the JSON's words).
fn object(row: &Row) -> Value {
    let fields: Vec<(&String, &Field)> = row.get_column_iter().collect();
    let mut out = Map::with_capacity(fields.len());
    for &(name, field) in &fields {
        let v = match field {
            Field::TimestampMicros(_) | Field::TimestampMillis(_) => {
                let exact = format!("{name}_ns");
                match fields.iter().find(|(n, _)| **n == exact) {
                    Some((_, Field::Long(ns))) => Value::String(crate::time::rfc3339(*ns)),
                    _ => Value::Null,
                }
            }
            _ => value(field),
        };
        out.insert(name.clone(), v);
    }
    Value::Object(out)
}

/// One value as JSON (null for a null or a type no report writes).
fn value(f: &Field) -> Value {
    match f {
        Field::Str(s) => Value::String(s.clone()),
        Field::Bool(b) => Value::Bool(*b),
        Field::Int(n) => Value::from(*n),
        Field::Long(n) => Value::from(*n),
        Field::Double(x) => Value::from(*x),
        Field::ListInternal(items) => Value::Array(items.elements().iter().map(value).collect()),
        Field::Group(row) => object(row),
        _ => Value::Null,
    }
}
