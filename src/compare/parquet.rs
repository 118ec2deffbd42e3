//! Reads a `--format parquet` report back (docs/output.md "Parquet"): the
//! file's `tuplecorr.report` metadata is the JSON report without its
//! requests, and each row is a JSON request with the JSON's keys and nesting
//! — so a row is turned back into that JSON object and read through the same
//! wire types as a JSON report. Columns the JSON has not (`first_seen`,
//! `*_addr`, `*_port`, `*_changed_at`) are passed over; a timestamp is taken
//! from the exact `*_ns` column beside it. Takes a file; gives wire findings
//! or why not. Holds one record batch's rows at a time besides the requests.

use crate::report::parquet::METADATA_KEY;
use crate::report::schema;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, StructArray};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};
use std::fs::File;

/// Why a Parquet file is not a tuplecorr report: the row (1-based request
/// row) when one is at fault, and the sentence.
pub type Failure = (Option<usize>, String);

/// The wire findings of the Parquet report in `file`.
pub fn wire_findings(file: File) -> Result<schema::Findings, Failure> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| (None, e.to_string()))?;
    let run = (builder.metadata().file_metadata().key_value_metadata())
        .and_then(|kv| kv.iter().find(|kv| kv.key == METADATA_KEY))
        .and_then(|kv| kv.value.as_deref())
        .ok_or_else(|| {
            (None, format!("a Parquet file without the `{METADATA_KEY}` metadata a report has"))
        })?;
    let mut findings: schema::Findings =
        serde_json::from_str(run).map_err(|e| (None, format!("its `{METADATA_KEY}` metadata: {e}")))?;
    let reader = builder.build().map_err(|e| (None, e.to_string()))?;
    for batch in reader {
        let rows = StructArray::from(batch.map_err(|e| (None, e.to_string()))?);
        for row in 0..rows.len() {
            let n = findings.requests.len() + 1;
            let request = serde_json::from_value(object(&rows, row)).map_err(|e| (Some(n), e.to_string()))?;
            findings.requests.push(request);
        }
    }
    Ok(findings)
}

/// Row `row` of a struct column as a JSON object: a timestamp field as the
/// RFC 3339 text of its `*_ns` neighbour (the JSON's words).
fn object(s: &StructArray, row: usize) -> Value {
    let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
    let mut out = Map::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let column = s.column(i);
        let v = match column.data_type() {
            DataType::Timestamp(..) => {
                let exact = format!("{name}_ns");
                match names.iter().position(|n| *n == exact) {
                    Some(j) if !s.column(j).is_null(row) => match s.column(j).as_primitive_opt::<Int64Type>()
                    {
                        Some(ns) => Value::String(crate::time::rfc3339(ns.value(row))),
                        None => Value::Null,
                    },
                    _ => Value::Null,
                }
            }
            _ => value(column.as_ref(), row),
        };
        out.insert(name.to_string(), v);
    }
    Value::Object(out)
}

/// One value of a column as JSON (null for a null or a type no report writes).
fn value(a: &dyn Array, row: usize) -> Value {
    if a.is_null(row) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Utf8 => Value::String(a.as_string::<i32>().value(row).to_string()),
        DataType::Boolean => Value::Bool(a.as_boolean().value(row)),
        DataType::Int32 => Value::from(a.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => Value::from(a.as_primitive::<Int64Type>().value(row)),
        DataType::Float64 => Value::from(a.as_primitive::<Float64Type>().value(row)),
        DataType::List(_) => {
            let items = a.as_list::<i32>().value(row);
            Value::Array((0..items.len()).map(|i| value(items.as_ref(), i)).collect())
        }
        DataType::Struct(_) => object(a.as_struct(), row),
        _ => Value::Null,
    }
}
