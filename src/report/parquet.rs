//! `--format parquet`: one Parquet file, a row per request, for DuckDB, Spark
//! and pandas (docs/output.md "Parquet"). The columns are the JSON request's
//! keys with the JSON's nesting and words (taken from `to_wire::request`, never
//! re-derived), plus what SQL needs without parsing text: timestamps
//! (`TIMESTAMP(MICROS, UTC)`, with the exact nanoseconds beside them as
//! `*_ns`), endpoints split into `*_addr` / `*_port`, and the CSV's
//! `first_seen`, `client`, `service`, `source_changed_at`,
//! `destination_changed_at`. Every key of the JSON request is a column
//! (`loss`, `predicted`, a change's `rule` and `conntrack` of host files too,
//! issue 54) but `--tz`'s `time_local`: timestamps are absolute. The rest of the JSON report (version, captures with clock
//! offsets, boundaries, unmatched counts, warnings, the run's `intent` and
//! `blast_radius`) is the file's key-value metadata `tuplecorr.report`, as
//! JSON.
//!
//! Written in row groups of [`ROW_GROUP`] requests, built in batches of
//! [`BATCH`]: besides the findings, one batch's columns and the row group's
//! encoded pages are held at a time.

use crate::report::to_wire;
use crate::report::wire::{self, WireName};
use crate::report::words::Words;
use crate::verdict as v;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{ArrowError, Field};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::io::{self, Write};
use std::sync::Arc;

/// Requests per row group: large enough for column compression and fast
/// scans, small enough that one group's columns stay a few tens of MB.
pub const ROW_GROUP: usize = 65_536;

/// Requests per record batch: what is built at a time besides the row group
/// being encoded (wire views and arrays of 4096 requests, a few MB).
const BATCH: usize = 4096;

/// Bytes of one column's dictionary and of one data page before it is
/// compressed (the crate's defaults are 1 MiB each): the writer holds both
/// for each leaf column (227 since issue 54; most are null in most runs),
/// and a column of mostly distinct values (explanations, endpoints, times)
/// falls back to plain encoding sooner. On 10,000 generated requests, when
/// measured (fewer columns): 75-81 MB peak RSS instead of 82-84, a file 8%
/// smaller.
const DICT_LIMIT: usize = 64 << 10;
const PAGE_LIMIT: usize = 128 << 10;

/// The key of the key-value metadata that holds the rest of the report.
pub const METADATA_KEY: &str = "tuplecorr.report";

type Col = (&'static str, ArrayRef);
type Result<T> = std::result::Result<T, ArrowError>;

/// Writes the findings as Parquet (snappy-compressed) to `out`.
pub fn write_parquet_with(
    w: &Words<'_>,
    findings: &v::Findings,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    write_groups(w, findings, out, ROW_GROUP)
}

/// [`write_parquet_with`] in row groups of `group` requests.
fn write_groups(
    w: &Words<'_>,
    findings: &v::Findings,
    out: &mut (dyn Write + Send),
    group: usize,
) -> io::Result<()> {
    let props = properties(&findings.tuplecorr, group, Some(run_metadata(w, findings)?));
    // The schema is the first batch's (an empty one for no requests): the
    // columns are written in one place only, `batch`. Batches of BATCH
    // requests: the writer encodes one (and closes a row group every `group`
    // rows) while the pool builds the next.
    let mut batches = findings.requests.chunks(BATCH);
    let mut ready = batch(w, batches.next().unwrap_or(&[])).map_err(io_error)?;
    let mut writer = ArrowWriter::try_new(out, ready.schema(), Some(props)).map_err(io_error)?;
    loop {
        let next = batches.next();
        let (written, built) = rayon::join(|| writer.write(&ready), || next.map(|b| batch(w, b)));
        written.map_err(io_error)?;
        match built {
            Some(b) => ready = b.map_err(io_error)?,
            None => break,
        }
    }
    writer.close().map_err(io_error)?;
    Ok(())
}

/// How every report's file is written: snappy, small pages, row groups of
/// `group` requests, the rest of the report as metadata when known up front.
fn properties(version: &str, group: usize, run: Option<KeyValue>) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_dictionary_page_size_limit(DICT_LIMIT)
        .set_data_page_size_limit(PAGE_LIMIT)
        .set_max_row_group_row_count(Some(group))
        .set_created_by(format!("tuplecorr {version}"))
        .set_key_value_metadata(run.map(|kv| vec![kv]))
        .build()
}

/// The rest of the report (all but its requests, with the run's `intent` and
/// `blast_radius` when `w.why` has them) as the file's metadata.
fn run_metadata(w: &Words<'_>, findings: &v::Findings) -> io::Result<KeyValue> {
    let run = serde_json::to_string(&to_wire::findings_around(findings, w.why))?;
    Ok(KeyValue::new(METADATA_KEY.to_string(), run))
}

/// `--stream --format parquet`: the requests appended window by window (in
/// row groups of [`ROW_GROUP`], batches of [`BATCH`]); the rest of the report,
/// the run's totals, is the metadata written when the file is closed.
pub struct ParquetStream<'o> {
    /// Until the first batch gives the writer its schema.
    out: Option<&'o mut (dyn Write + Send)>,
    writer: Option<ArrowWriter<&'o mut (dyn Write + Send)>>,
    group: usize,
}

impl<'o> ParquetStream<'o> {
    pub fn new(out: &'o mut (dyn Write + Send)) -> ParquetStream<'o> {
        ParquetStream { out: Some(out), writer: None, group: ROW_GROUP }
    }

    /// Appends one window's requests.
    pub fn window(&mut self, w: &Words<'_>, requests: &[v::Request]) -> io::Result<()> {
        for chunk in requests.chunks(BATCH) {
            let b = batch(w, chunk).map_err(io_error)?;
            self.writer(&b)?.write(&b).map_err(io_error)?;
        }
        Ok(())
    }

    /// The writer, opened with `b`'s schema (every batch has the same).
    fn writer(&mut self, b: &RecordBatch) -> io::Result<&mut ArrowWriter<&'o mut (dyn Write + Send)>> {
        if self.writer.is_none() {
            let out = self.out.take().ok_or_else(|| io::Error::other("the Parquet writer is gone"))?;
            let props = properties(crate::VERSION, self.group, None);
            self.writer = Some(ArrowWriter::try_new(out, b.schema(), Some(props)).map_err(io_error)?);
        }
        self.writer.as_mut().ok_or_else(|| io::Error::other("the Parquet writer is gone"))
    }

    /// Writes the run's totals (`run`, its requests left out) and closes the file.
    pub fn finish(mut self, w: &Words<'_>, run: &v::Findings) -> io::Result<()> {
        if self.writer.is_none() {
            // No request at all: the file still has every column.
            self.writer(&batch(w, &[]).map_err(io_error)?)?;
        }
        let Some(mut writer) = self.writer.take() else {
            return Err(io::Error::other("the Parquet writer is gone"));
        };
        writer.append_key_value_metadata(run_metadata(w, run)?);
        writer.close().map_err(io_error)?;
        Ok(())
    }
}

/// An arrow or parquet error as an io error; the writer's own io error (a
/// closed pipe, a full disk) is given back as it was. `output` names the file.
fn io_error(e: impl Into<ParquetError>) -> io::Error {
    match e.into() {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(other) => io::Error::other(other),
        },
        e => io::Error::other(e),
    }
}

/// One row group: the requests' columns.
fn batch(w: &Words<'_>, requests: &[v::Request]) -> Result<RecordBatch> {
    use rayon::prelude::*;
    let wire: Vec<wire::Request> = requests.par_iter().map(|r| to_wire::request(w, r)).collect();
    let rows: Vec<(&v::Request, &wire::Request)> = requests.iter().zip(&wire).collect();
    let first = |r: &v::Request| r.captures.iter().position(|h| h.seen);
    let first_ns: Vec<Option<i64>> =
        rows.iter().map(|(r, _)| first(r).and_then(|i| r.captures[i].time_ns)).collect();
    let at_first = |side: fn(&wire::Hop) -> Option<&str>, typed: fn(&v::Hop) -> Option<v::Endpoint>| {
        rows.iter()
            .map(|(r, q)| match first(r) {
                Some(i) => (side(&q.captures[i]), typed(&r.captures[i])),
                None => (None, None),
            })
            .collect::<Vec<Endpoints<'_>>>()
    };
    let first_client = at_first(|h| h.client.as_deref(), |h| h.client);
    let first_server = at_first(|h| h.server.as_deref(), |h| h.server);
    let changed_at = |c: &wire::Changes| {
        (!c.changed.is_empty())
            .then(|| c.changed.iter().map(|x| x.between.as_str()).collect::<Vec<_>>().join(";"))
    };
    let mut cols: Vec<Col> = vec![
        ("request", i64s(rows.iter().map(|(_, q)| Some(q.request as i64)))),
        ("proto", strs(rows.iter().map(|(_, q)| Some(q.proto.wire())))),
        ("first_seen", times(first_ns.iter().copied())),
        ("first_seen_ns", i64s(first_ns.iter().copied())),
    ];
    cols.extend(endpoint_cols(["client", "client_addr", "client_port"], &first_client));
    cols.extend(endpoint_cols(["service", "service_addr", "service_port"], &first_server));
    cols.push(("captures", hops(&rows)?));
    cols.push(("matches", matches(&rows)?));
    cols.push(("source_changed_at", strs(rows.iter().map(|(_, q)| changed_at(&q.source)))));
    use crate::why::attach::Side;
    let side = |typed: fn(&v::Request) -> &[v::Change], wire: fn(&wire::Request) -> &wire::Changes| {
        rows.iter().map(move |(r, q)| (r.request, typed(r), wire(q)))
    };
    cols.push(("source", changes(w, Side::Source, side(|r| &r.source, |q| &q.source))?));
    cols.push(("destination_changed_at", strs(rows.iter().map(|(_, q)| changed_at(&q.destination)))));
    cols.push(("destination", changes(w, Side::Destination, side(|r| &r.destination, |q| &q.destination))?));
    cols.push(("reply", reply(&rows)?));
    cols.push(("outcome", outcome(&rows)?));
    cols.push(("syn_missed", syn_missed(&rows)?));
    cols.push(("attempts", attempts(&rows)?));
    cols.push(("data", data(&rows)?));
    cols.push(("identity", identity(&rows)?));
    let blind = strs(rows.iter().flat_map(|(_, q)| q.blind.iter().map(Some)));
    cols.push(("blind", list(rows.iter().map(|(_, q)| q.blind.len()), blind)?));
    let apart = strs(rows.iter().flat_map(|(_, q)| q.apart.iter().map(Some)));
    cols.push(("apart", list(rows.iter().map(|(_, q)| q.apart.len()), apart)?));
    cols.push(("explanation", strs(rows.iter().map(|(_, q)| Some(q.explanation.as_str())))));
    cols.push(("app", app(&rows)?));
    cols.push(("exchanges", exchanges(&rows)?));
    cols.push(("seq_shift", seq_shift(&rows)?));
    let same = strs(rows.iter().flat_map(|(_, q)| q.same_tuple.iter().map(Some)));
    cols.push(("same_tuple", list(rows.iter().map(|(_, q)| q.same_tuple.len()), same)?));
    cols.push(("fragments", fragments(&rows)?));
    cols.push(("loss", loss(&rows)?));
    cols.push(("predicted", predicted(&rows)?));
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().map(field).unzip();
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays)
}

// ---- column helpers ----

fn field((name, a): Col) -> (Field, ArrayRef) {
    (Field::new(name, a.data_type().clone(), true), a)
}

fn strs<S: AsRef<str>>(v: impl IntoIterator<Item = Option<S>>) -> ArrayRef {
    Arc::new(StringArray::from_iter(v))
}

fn i64s(v: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from_iter(v))
}

fn u64s(v: impl IntoIterator<Item = Option<u64>>) -> ArrayRef {
    // Counts: Spark has no unsigned 64-bit type; no count reaches 2^63.
    i64s(v.into_iter().map(|n| n.map(|n| i64::try_from(n).unwrap_or(i64::MAX))))
}

fn i32s(v: impl IntoIterator<Item = Option<i32>>) -> ArrayRef {
    Arc::new(Int32Array::from_iter(v))
}

fn f64s(v: impl IntoIterator<Item = Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from_iter(v))
}

fn bools(v: impl IntoIterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(BooleanArray::from_iter(v))
}

/// ns since the epoch → `TIMESTAMP(MICROS, UTC)` (Spark reads no nanosecond
/// timestamps; the exact value is in the `*_ns` column beside it).
fn times(v: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    let us = v.into_iter().map(|t| t.map(|ns| ns.div_euclid(1000)));
    Arc::new(TimestampMicrosecondArray::from_iter(us).with_timezone("UTC"))
}

/// `NAME` (the wire text), `NAME_addr`, `NAME_port` of endpoints.
/// Each endpoint as (its wire text, typed): the text is the report's, the
/// address is written straight into the column (no string per value).
fn endpoint_cols(names: [&'static str; 3], e: &[Endpoints<'_>]) -> [Col; 3] {
    use std::fmt::Write as _;
    let mut addr = arrow_array::builder::StringBuilder::with_capacity(e.len(), e.len() * 16);
    for (_, typed) in e {
        match typed {
            Some(t) => {
                let _ = write!(addr, "{}", t.addr);
                addr.append_value("");
            }
            None => addr.append_null(),
        }
    }
    [
        (names[0], strs(e.iter().map(|(text, _)| *text))),
        (names[1], Arc::new(addr.finish())),
        (names[2], i32s(e.iter().map(|(_, t)| t.and_then(|t| t.port).map(i32::from)))),
    ]
}

/// An endpoint's wire text and typed value.
type Endpoints<'a> = (Option<&'a str>, Option<v::Endpoint>);

/// A struct column; `valid` false makes that row null.
fn structure(cols: Vec<Col>, valid: Option<Vec<bool>>) -> Result<ArrayRef> {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().map(field).unzip();
    let nulls = valid.map(arrow_buffer::NullBuffer::from);
    Ok(Arc::new(StructArray::try_new(fields.into(), arrays, nulls)?))
}

/// A list column of `values`, row i holding the next `lengths[i]` of them (never null: empty).
fn list(lengths: impl IntoIterator<Item = usize>, values: ArrayRef) -> Result<ArrayRef> {
    let item = Arc::new(Field::new("item", values.data_type().clone(), true));
    let offsets = arrow_buffer::OffsetBuffer::<i32>::from_lengths(lengths);
    Ok(Arc::new(ListArray::try_new(item, offsets, values, None)?))
}

type Rows<'a> = [(&'a v::Request, &'a wire::Request)];

// ---- the columns ----

fn hops(rows: &Rows<'_>) -> Result<ArrayRef> {
    let typed: Vec<&v::Hop> = rows.iter().flat_map(|(r, _)| &r.captures).collect();
    let wire: Vec<&wire::Hop> = rows.iter().flat_map(|(_, q)| &q.captures).collect();
    let clients: Vec<Endpoints<'_>> =
        wire.iter().zip(&typed).map(|(w, t)| (w.client.as_deref(), t.client)).collect();
    let servers: Vec<Endpoints<'_>> =
        wire.iter().zip(&typed).map(|(w, t)| (w.server.as_deref(), t.server)).collect();
    let mut cols: Vec<Col> = vec![
        ("label", strs(wire.iter().map(|h| Some(h.label.as_str())))),
        ("seen", bools(wire.iter().map(|h| Some(h.seen)))),
        ("time", times(typed.iter().map(|h| h.time_ns))),
        ("time_ns", i64s(typed.iter().map(|h| h.time_ns))),
        ("raw_time", times(typed.iter().map(|h| h.raw_time_ns))),
        ("raw_time_ns", i64s(typed.iter().map(|h| h.raw_time_ns))),
    ];
    cols.extend(endpoint_cols(["client", "client_addr", "client_port"], &clients));
    cols.extend(endpoint_cols(["server", "server_addr", "server_port"], &servers));
    cols.extend([
        ("client_name", strs(wire.iter().map(|h| h.client_name.as_deref()))),
        ("server_name", strs(wire.iter().map(|h| h.server_name.as_deref()))),
        ("reply_seen", bools(wire.iter().map(|h| Some(h.reply_seen)))),
        ("rtt_ms", f64s(wire.iter().map(|h| h.rtt_ms))),
        ("packets_to_server", u64s(wire.iter().map(|h| h.packets_to_server))),
        ("packets_to_client", u64s(wire.iter().map(|h| h.packets_to_client))),
        ("bytes_to_server", u64s(wire.iter().map(|h| h.bytes_to_server))),
        ("bytes_to_client", u64s(wire.iter().map(|h| h.bytes_to_client))),
        ("community_id", strs(wire.iter().map(|h| h.community_id.as_deref()))),
        ("wireshark_filter", strs(wire.iter().map(|h| h.wireshark_filter.as_deref()))),
        ("icmp_id", i32s(wire.iter().map(|h| h.icmp_id.map(i32::from)))),
        ("icmp_seqs", strs(wire.iter().map(|h| h.icmp_seqs.as_deref()))),
        ("largest_to_server", i64s(wire.iter().map(|h| h.largest_to_server.map(i64::from)))),
        ("largest_to_client", i64s(wire.iter().map(|h| h.largest_to_client.map(i64::from)))),
        ("iface", strs(wire.iter().map(|h| h.iface.as_deref()))),
        ("reply_iface", strs(wire.iter().map(|h| h.reply_iface.as_deref()))),
        ("host", strs(wire.iter().map(|h| h.host.as_deref()))),
    ]);
    list(rows.iter().map(|(_, q)| q.captures.len()), structure(cols, None)?)
}

fn matches(rows: &Rows<'_>) -> Result<ArrayRef> {
    let all: Vec<&wire::Match> = rows.iter().flat_map(|(_, q)| &q.matches).collect();
    let evidence = strs(all.iter().flat_map(|m| m.evidence.iter().map(|e| Some(e.wire()))));
    let candidates = strs(all.iter().flat_map(|m| m.candidates.iter().map(|c| Some(c.as_str()))));
    let cols: Vec<Col> = vec![
        ("between", strs(all.iter().map(|m| Some(m.between.as_str())))),
        ("strength", strs(all.iter().map(|m| Some(m.strength.wire())))),
        ("evidence", list(all.iter().map(|m| m.evidence.len()), evidence)?),
        ("candidates", list(all.iter().map(|m| m.candidates.len()), candidates)?),
    ];
    list(rows.iter().map(|(_, q)| q.matches.len()), structure(cols, None)?)
}

/// `source` / `destination`: `{changed: [{between, kind, before, before_addr,
/// …, rule, rule_note, conntrack}], kept: [{at, rule_note}]}`, from each
/// row's (request number, typed changes, wire view). A conntrack entry's
/// `time` is its typed time (as a hop's), of the entry the wire view names.
fn changes<'a>(
    w: &Words<'_>,
    side: crate::why::attach::Side,
    rows: impl Iterator<Item = (u64, &'a [v::Change], &'a wire::Changes)> + Clone,
) -> Result<ArrayRef> {
    let typed: Vec<(u64, &v::Change)> =
        rows.clone().flat_map(|(n, t, _)| t.iter().map(move |c| (n, c))).collect();
    let wire: Vec<&wire::Change> = rows.clone().flat_map(|(_, _, c)| &c.changed).collect();
    let before: Vec<Endpoints<'_>> =
        wire.iter().zip(&typed).map(|(w, (_, t))| (Some(w.before.as_str()), Some(t.before))).collect();
    let after: Vec<Endpoints<'_>> =
        wire.iter().zip(&typed).map(|(w, (_, t))| (Some(w.after.as_str()), Some(t.after))).collect();
    let rule: Vec<Option<&wire::RuleOut>> = wire.iter().map(|c| c.rule.as_ref()).collect();
    let ct: Vec<Option<&wire::ConntrackOut>> = wire.iter().map(|c| c.conntrack.as_ref()).collect();
    let ct_ns: Vec<Option<i64>> = (ct.iter().zip(&typed))
        .map(|(c, &(n, t))| {
            c.and(w.why)
                .and_then(|x| x.of(n, side, t.between))
                .and_then(|x| x.conntrack.as_ref())
                .and_then(|x| x.time_ns)
        })
        .collect();
    let mut cols: Vec<Col> = vec![
        ("between", strs(wire.iter().map(|c| Some(c.between.as_str())))),
        ("kind", strs(wire.iter().map(|c| Some(c.kind.wire())))),
    ];
    cols.extend(endpoint_cols(["before", "before_addr", "before_port"], &before));
    cols.extend(endpoint_cols(["after", "after_addr", "after_port"], &after));
    cols.push(("before_name", strs(wire.iter().map(|c| c.before_name.as_deref()))));
    cols.push(("after_name", strs(wire.iter().map(|c| c.after_name.as_deref()))));
    cols.push(("rule", rules(&rule)?));
    cols.push(("rule_note", strs(wire.iter().map(|c| c.rule_note.as_deref()))));
    cols.push((
        "conntrack",
        structure(
            vec![
                ("file", strs(ct.iter().map(|c| c.map(|c| c.file.as_str())))),
                ("line", i64s(ct.iter().map(|c| c.map(|c| i64::from(c.line))))),
                ("confirmed", bools(ct.iter().map(|c| c.map(|c| c.confirmed)))),
                ("time", times(ct_ns.iter().copied())),
                ("time_ns", i64s(ct_ns.iter().copied())),
                ("reply", strs(ct.iter().map(|c| c.and_then(|c| c.reply.as_deref())))),
            ],
            Some(ct.iter().map(Option::is_some).collect()),
        )?,
    ));
    let changed = list(rows.clone().map(|(_, _, c)| c.changed.len()), structure(cols, None)?)?;
    let kept: Vec<&wire::Kept> = rows.clone().flat_map(|(_, _, c)| &c.kept).collect();
    let kept_cols: Vec<Col> = vec![
        ("at", strs(kept.iter().map(|k| Some(k.at.as_str())))),
        ("rule_note", strs(kept.iter().map(|k| Some(k.rule_note.as_str())))),
    ];
    let kept = list(rows.map(|(_, _, c)| c.kept.len()), structure(kept_cols, None)?)?;
    structure(vec![("changed", changed), ("kept", kept)], None)
}

/// A nat or filter rule (`{file, line, table, chain, text, decided}`), null where absent.
fn rules(r: &[Option<&wire::RuleOut>]) -> Result<ArrayRef> {
    let text = |f: fn(&wire::RuleOut) -> &str| strs(r.iter().map(|r| r.map(f)));
    let decided = strs(r.iter().flat_map(|r| r.iter().flat_map(|r| r.decided.iter().map(Some))));
    structure(
        vec![
            ("file", text(|r| r.file.as_str())),
            ("line", i64s(r.iter().map(|r| r.map(|r| i64::from(r.line))))),
            ("table", text(|r| r.table.as_str())),
            ("chain", text(|r| r.chain.as_str())),
            ("text", text(|r| r.text.as_str())),
            ("decided", list(r.iter().map(|r| r.map_or(0, |r| r.decided.len())), decided)?),
        ],
        Some(r.iter().map(Option::is_some).collect()),
    )
}

fn reply(rows: &Rows<'_>) -> Result<ArrayRef> {
    let r: Vec<&wire::Reply> = rows.iter().map(|(_, q)| &q.reply).collect();
    let cause: Vec<Option<&wire::LostCause>> = r.iter().map(|r| r.lost_cause.as_ref()).collect();
    let stray: Vec<Option<&wire::UnexpectedSource>> =
        r.iter().map(|r| r.unexpected_source.as_ref()).collect();
    let lost_cause = structure(
        vec![
            ("icmp", strs(cause.iter().map(|c| c.map(|c| c.icmp.as_str())))),
            ("by", strs(cause.iter().map(|c| c.map(|c| c.by.as_str())))),
            ("seen_at", strs(cause.iter().map(|c| c.map(|c| c.seen_at.as_str())))),
        ],
        Some(cause.iter().map(Option::is_some).collect()),
    )?;
    let unexpected = structure(
        vec![
            ("from", strs(stray.iter().map(|u| u.map(|u| u.from.as_str())))),
            ("seen_at", strs(stray.iter().map(|u| u.map(|u| u.seen_at.as_str())))),
            ("packet", strs(stray.iter().map(|u| u.map(|u| u.packet.wire())))),
        ],
        Some(stray.iter().map(Option::is_some).collect()),
    )?;
    structure(
        vec![
            ("path", strs(r.iter().map(|r| Some(r.path.wire())))),
            ("lost_between", strs(r.iter().map(|r| r.lost_between.as_deref()))),
            ("bypassed", strs(r.iter().map(|r| r.bypassed.as_deref()))),
            ("reached", strs(r.iter().map(|r| r.reached.as_deref()))),
            ("lost_cause", lost_cause),
            ("unexpected_source", unexpected),
        ],
        None,
    )
}

fn outcome(rows: &Rows<'_>) -> Result<ArrayRef> {
    let o: Vec<&wire::Outcome> = rows.iter().map(|(_, q)| &q.outcome).collect();
    structure(
        vec![
            ("kind", strs(o.iter().map(|o| Some(o.kind.wire())))),
            ("by", strs(o.iter().map(|o| o.by.as_deref()))),
            ("by_name", strs(o.iter().map(|o| o.by_name.as_deref()))),
            ("origin", strs(o.iter().map(|o| o.origin.as_deref()))),
            ("icmp", strs(o.iter().map(|o| o.icmp.as_deref()))),
            ("icmp_cause", strs(o.iter().map(|o| o.icmp_cause.map(|c| c.wire())))),
        ],
        None,
    )
}

fn syn_missed(rows: &Rows<'_>) -> Result<ArrayRef> {
    let m: Vec<Option<&wire::SynMissed>> = rows.iter().map(|(_, q)| q.syn_missed.as_ref()).collect();
    structure(
        vec![
            ("at", strs(m.iter().map(|m| m.map(|m| m.at.as_str())))),
            ("syns", i64s(m.iter().map(|m| m.map(|m| i64::from(m.syns))))),
            ("retransmission_after_ms", f64s(m.iter().map(|m| m.map(|m| m.retransmission_after_ms)))),
        ],
        Some(m.iter().map(Option::is_some).collect()),
    )
}

fn attempts(rows: &Rows<'_>) -> Result<ArrayRef> {
    let typed: Vec<&v::Attempt> = rows.iter().flat_map(|(r, _)| &r.attempts).collect();
    let wire: Vec<&wire::Attempt> = rows.iter().flat_map(|(_, q)| &q.attempts).collect();
    let cols: Vec<Col> = vec![
        ("at", strs(wire.iter().map(|a| Some(a.at.as_str())))),
        ("client", strs(wire.iter().map(|a| Some(a.client.as_str())))),
        ("server", strs(wire.iter().map(|a| Some(a.server.as_str())))),
        ("time", times(typed.iter().map(|a| Some(a.time_ns)))),
        ("time_ns", i64s(typed.iter().map(|a| Some(a.time_ns)))),
        ("ending", strs(wire.iter().map(|a| Some(a.ending.wire())))),
    ];
    list(rows.iter().map(|(_, q)| q.attempts.len()), structure(cols, None)?)
}

/// `{bytes, count}` of optional segments.
fn segment(s: impl Iterator<Item = Option<wire::Segment>> + Clone) -> Result<ArrayRef> {
    structure(
        vec![
            ("bytes", i64s(s.clone().map(|s| s.map(|s| i64::from(s.bytes))))),
            ("count", i64s(s.clone().map(|s| s.map(|s| i64::from(s.count))))),
        ],
        Some(s.map(|s| s.is_some()).collect()),
    )
}

fn data(rows: &Rows<'_>) -> Result<ArrayRef> {
    let d: Vec<Option<&wire::Data>> = rows.iter().map(|(_, q)| q.data.as_ref()).collect();
    let mtu: Vec<Option<&wire::Mtu>> = d.iter().map(|d| d.and_then(|d| d.mtu.as_ref())).collect();
    let seen_at =
        strs(mtu.iter().flat_map(|m| m.iter().flat_map(|m| m.seen_at.iter().map(|s| Some(s.as_str())))));
    let mtu_col = structure(
        vec![
            ("mtu", i64s(mtu.iter().map(|m| m.map(|m| i64::from(m.mtu))))),
            ("sender", strs(mtu.iter().map(|m| m.map(|m| m.sender.as_str())))),
            ("icmp", strs(mtu.iter().map(|m| m.map(|m| m.icmp.as_str())))),
            ("messages", i64s(mtu.iter().map(|m| m.map(|m| i64::from(m.messages))))),
            ("seen_at", list(mtu.iter().map(|m| m.map_or(0, |m| m.seen_at.len())), seen_at)?),
            ("lost", strs(mtu.iter().map(|m| m.and_then(|m| m.lost.as_deref())))),
        ],
        Some(mtu.iter().map(Option::is_some).collect()),
    )?;
    let text = |f: fn(&wire::Data) -> Option<&String>| strs(d.iter().map(|d| d.and_then(f)));
    structure(
        vec![
            ("reached", text(|d| d.reached.as_ref())),
            ("stopped", text(|d| d.stopped.as_ref())),
            ("stopped_segment", segment(d.iter().map(|d| d.and_then(|d| d.stopped_segment)))?),
            ("server_reached", text(|d| d.server_reached.as_ref())),
            ("server_stopped", text(|d| d.server_stopped.as_ref())),
            ("server_stopped_segment", segment(d.iter().map(|d| d.and_then(|d| d.server_stopped_segment)))?),
            ("cut", text(|d| d.cut.as_ref())),
            ("cut_from", segment(d.iter().map(|d| d.and_then(|d| d.cut_from)))?),
            ("cut_to", segment(d.iter().map(|d| d.and_then(|d| d.cut_to)))?),
            ("server_cut", text(|d| d.server_cut.as_ref())),
            ("server_cut_from", segment(d.iter().map(|d| d.and_then(|d| d.server_cut_from)))?),
            ("server_cut_to", segment(d.iter().map(|d| d.and_then(|d| d.server_cut_to)))?),
            ("mtu", mtu_col),
        ],
        Some(d.iter().map(Option::is_some).collect()),
    )
}

fn identity(rows: &Rows<'_>) -> Result<ArrayRef> {
    let i: Vec<Option<&wire::IdentityOut>> = rows.iter().map(|(_, q)| q.identity.as_ref()).collect();
    let text = |f: fn(&wire::IdentityOut) -> Option<&str>| strs(i.iter().map(|i| i.and_then(f)));
    structure(
        vec![
            ("at", text(|i| Some(i.at.as_str()))),
            ("peer", text(|i| Some(i.peer.as_str()))),
            ("carrier", text(|i| i.carrier.map(|c| c.wire()))),
            ("carried", text(|i| i.carried.as_deref())),
            ("added", text(|i| i.added.as_deref())),
            ("preserved", bools(i.iter().map(|i| i.map(|i| i.preserved)))),
            ("client_set", text(|i| i.client_set.as_deref())),
        ],
        Some(i.iter().map(Option::is_some).collect()),
    )
}

fn app(rows: &Rows<'_>) -> Result<ArrayRef> {
    let a: Vec<Option<&wire::AppOut>> = rows.iter().map(|(_, q)| q.app.as_ref()).collect();
    let text = |f: fn(&wire::AppOut) -> Option<&str>| strs(a.iter().map(|a| a.and_then(f)));
    let alpn = strs(a.iter().flat_map(|a| a.iter().flat_map(|a| a.alpn.iter().map(|p| Some(p.as_str())))));
    structure(
        vec![
            ("protocol", text(|a| Some(a.protocol.wire()))),
            ("at", text(|a| Some(a.at.as_str()))),
            ("method", text(|a| a.method.as_deref())),
            ("target", text(|a| a.target.as_deref())),
            ("host", text(|a| a.host.as_deref())),
            ("status", i64s(a.iter().map(|a| a.and_then(|a| a.status).map(i64::from)))),
            ("sni", text(|a| a.sni.as_deref())),
            ("alpn", list(a.iter().map(|a| a.map_or(0, |a| a.alpn.len())), alpn)?),
            ("qname", text(|a| a.qname.as_deref())),
            ("qtype", text(|a| a.qtype.as_deref())),
            ("rcode", text(|a| a.rcode.as_deref())),
        ],
        Some(a.iter().map(Option::is_some).collect()),
    )
}

fn exchanges(rows: &Rows<'_>) -> Result<ArrayRef> {
    let x: Vec<Option<&wire::ExchangesOut>> = rows.iter().map(|(_, q)| q.exchanges.as_ref()).collect();
    let typed: Vec<&v::Exchange> =
        rows.iter().flat_map(|(r, _)| r.exchanges.iter().flat_map(|x| &x.list)).collect();
    let num =
        |f: fn(&wire::ExchangesOut) -> Option<u32>| i64s(x.iter().map(|x| x.and_then(f).map(i64::from)));
    let slowest: Vec<Option<&wire::SlowestOut>> =
        x.iter().map(|x| x.and_then(|x| x.slowest.as_ref())).collect();
    let unanswered: Vec<Option<&wire::UnansweredOut>> =
        x.iter().map(|x| x.and_then(|x| x.unanswered.as_ref())).collect();
    let response_seen = strs(
        unanswered
            .iter()
            .flat_map(|u| u.iter().flat_map(|u| u.response_seen.iter().map(|l| Some(l.as_str())))),
    );
    let seen: Vec<&wire::ExchangeCountOut> = x.iter().flat_map(|x| x.iter().flat_map(|x| &x.seen)).collect();
    let items: Vec<&wire::ExchangeOut> = x.iter().flat_map(|x| x.iter().flat_map(|x| &x.list)).collect();
    structure(
        vec![
            ("protocol", strs(x.iter().map(|x| x.map(|x| x.protocol.wire())))),
            ("at", strs(x.iter().map(|x| x.map(|x| x.at.as_str())))),
            ("count", num(|x| Some(x.count))),
            ("answered", num(|x| Some(x.answered))),
            ("complete", bools(x.iter().map(|x| x.map(|x| x.complete)))),
            ("worst_status", num(|x| x.worst_status.map(u32::from))),
            (
                "slowest",
                structure(
                    vec![
                        ("n", i64s(slowest.iter().map(|s| s.map(|s| i64::from(s.n))))),
                        ("after_ms", f64s(slowest.iter().map(|s| s.map(|s| s.after_ms)))),
                    ],
                    Some(slowest.iter().map(Option::is_some).collect()),
                )?,
            ),
            (
                "unanswered",
                structure(
                    vec![
                        ("n", i64s(unanswered.iter().map(|u| u.map(|u| i64::from(u.n))))),
                        (
                            "request_reached",
                            strs(unanswered.iter().map(|u| u.map(|u| u.request_reached.as_str()))),
                        ),
                        (
                            "response_seen",
                            list(
                                unanswered.iter().map(|u| u.map_or(0, |u| u.response_seen.len())),
                                response_seen,
                            )?,
                        ),
                        ("open", bools(unanswered.iter().map(|u| u.map(|u| u.open)))),
                    ],
                    Some(unanswered.iter().map(Option::is_some).collect()),
                )?,
            ),
            (
                "seen",
                list(
                    x.iter().map(|x| x.map_or(0, |x| x.seen.len())),
                    structure(
                        vec![
                            ("at", strs(seen.iter().map(|c| Some(c.at.as_str())))),
                            ("requests", i64s(seen.iter().map(|c| Some(i64::from(c.requests))))),
                            ("responses", i64s(seen.iter().map(|c| Some(i64::from(c.responses))))),
                            ("complete", bools(seen.iter().map(|c| Some(c.complete)))),
                        ],
                        None,
                    )?,
                )?,
            ),
            (
                "list",
                list(
                    x.iter().map(|x| x.map_or(0, |x| x.list.len())),
                    structure(
                        vec![
                            ("n", i64s(items.iter().map(|e| Some(i64::from(e.n))))),
                            ("method", strs(items.iter().map(|e| Some(e.method.as_str())))),
                            ("target", strs(items.iter().map(|e| Some(e.target.as_str())))),
                            ("time", times(typed.iter().map(|e| Some(e.request_ns)))),
                            ("time_ns", i64s(typed.iter().map(|e| Some(e.request_ns)))),
                            ("status", i64s(items.iter().map(|e| e.status.map(i64::from)))),
                            ("after_ms", f64s(items.iter().map(|e| e.after_ms))),
                        ],
                        None,
                    )?,
                )?,
            ),
        ],
        Some(x.iter().map(Option::is_some).collect()),
    )
}

fn seq_shift(rows: &Rows<'_>) -> Result<ArrayRef> {
    let s: Vec<&wire::SeqShiftOut> = rows.iter().flat_map(|(_, q)| &q.seq_shift).collect();
    let cols: Vec<Col> = vec![
        ("between", strs(s.iter().map(|s| Some(s.between.as_str())))),
        ("client", i64s(s.iter().map(|s| s.client.map(i64::from)))),
        ("server", i64s(s.iter().map(|s| s.server.map(i64::from)))),
    ];
    list(rows.iter().map(|(_, q)| q.seq_shift.len()), structure(cols, None)?)
}

/// One direction's fragmented datagrams at a capture, null where absent.
fn frag_dir(d: &[Option<&wire::FragDirOut>]) -> Result<ArrayRef> {
    let num = |f: fn(&wire::FragDirOut) -> Option<u32>| i64s(d.iter().map(|d| d.and_then(f).map(i64::from)));
    structure(
        vec![
            ("fragments", num(|d| Some(d.fragments))),
            ("datagrams", num(|d| Some(d.datagrams))),
            ("incomplete", num(|d| Some(d.incomplete))),
            ("largest_fragment", num(|d| Some(d.largest_fragment))),
            ("largest_datagram", num(|d| d.largest_datagram)),
        ],
        Some(d.iter().map(Option::is_some).collect()),
    )
}

fn fragments(rows: &Rows<'_>) -> Result<ArrayRef> {
    let f: Vec<Option<&wire::FragmentsOut>> = rows.iter().map(|(_, q)| q.fragments.as_ref()).collect();
    let hops: Vec<&wire::FragHopOut> = f.iter().flat_map(|f| f.iter().flat_map(|f| &f.captures)).collect();
    let lost: Vec<&wire::FragLossOut> = f.iter().flat_map(|f| f.iter().flat_map(|f| &f.lost)).collect();
    let side = |d: fn(&wire::FragHopOut) -> Option<&wire::FragDirOut>| {
        frag_dir(&hops.iter().map(|h| d(h)).collect::<Vec<_>>())
    };
    let hop_cols: Vec<Col> = vec![
        ("label", strs(hops.iter().map(|h| Some(h.label.as_str())))),
        ("to_server", side(|h| h.to_server.as_ref())?),
        ("to_client", side(|h| h.to_client.as_ref())?),
    ];
    let num = |f: fn(&wire::FragLossOut) -> u32| i64s(lost.iter().map(|l| Some(i64::from(f(l)))));
    let lost_cols: Vec<Col> = vec![
        ("between", strs(lost.iter().map(|l| Some(l.between.as_str())))),
        ("direction", strs(lost.iter().map(|l| Some(l.direction.as_str())))),
        ("fragments_sent", num(|l| l.fragments_sent)),
        ("datagrams", num(|l| l.datagrams)),
        ("datagram_bytes", num(|l| l.datagram_bytes)),
        ("fragments_arrived", num(|l| l.fragments_arrived)),
        ("datagrams_arrived", num(|l| l.datagrams_arrived)),
        ("incomplete", num(|l| l.incomplete)),
        ("largest_passed", num(|l| l.largest_passed)),
    ];
    structure(
        vec![
            (
                "captures",
                list(f.iter().map(|f| f.map_or(0, |f| f.captures.len())), structure(hop_cols, None)?)?,
            ),
            ("lost", list(f.iter().map(|f| f.map_or(0, |f| f.lost.len())), structure(lost_cols, None)?)?),
        ],
        Some(f.iter().map(Option::is_some).collect()),
    )
}

fn loss(rows: &Rows<'_>) -> Result<ArrayRef> {
    let l: Vec<Option<&wire::LossOut>> = rows.iter().map(|(_, q)| q.loss.as_ref()).collect();
    let text = |f: fn(&wire::LossOut) -> &str| strs(l.iter().map(|l| l.map(f)));
    let rule: Vec<Option<&wire::RuleOut>> = l.iter().map(|l| l.and_then(|l| l.rule.as_ref())).collect();
    structure(
        vec![
            ("at", text(|l| l.at.as_str())),
            ("packet", text(|l| l.packet.as_str())),
            ("cause", text(|l| l.cause.as_str())),
            ("rule", rules(&rule)?),
            ("note", text(|l| l.note.as_str())),
        ],
        Some(l.iter().map(Option::is_some).collect()),
    )
}

fn predicted(rows: &Rows<'_>) -> Result<ArrayRef> {
    let p: Vec<Option<&wire::PredictedOut>> = rows.iter().map(|(_, q)| q.predicted.as_ref()).collect();
    let text = |f: fn(&wire::PredictedOut) -> Option<&str>| strs(p.iter().map(|p| p.and_then(f)));
    structure(
        vec![
            ("at", text(|p| Some(p.at.as_str()))),
            ("source_today", text(|p| Some(p.source_today.as_str()))),
            ("source_after", text(|p| p.source_after.as_deref())),
            ("changes", bools(p.iter().map(|p| p.map(|p| p.changes)))),
            ("reason", text(|p| Some(p.reason.as_str()))),
        ],
        Some(p.iter().map(Option::is_some).collect()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn written(f: &v::Findings, group: usize) -> Vec<u8> {
        let mut out = Vec::new();
        write_groups(&Words::new(f), f, &mut out, group).unwrap();
        out
    }

    #[test]
    fn requests_are_written_in_row_groups_in_order() {
        let f = findings();
        let n = f.requests.len();
        assert!(n >= 3);
        let bytes = bytes::Bytes::from(written(&f, 2));
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let groups: Vec<i64> = reader.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(groups.len(), n.div_ceil(2), "{groups:?}");
        assert!(groups.iter().all(|&g| g == 2 || g == (n % 2) as i64));
        let batches = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 1024).unwrap();
        let mut numbers = Vec::new();
        for b in batches {
            let b = b.unwrap();
            let col = b.column_by_name("request").unwrap();
            let col = col.as_any().downcast_ref::<Int64Array>().unwrap();
            numbers.extend(col.iter().map(|x| x.unwrap() as u64));
        }
        assert_eq!(numbers, f.requests.iter().map(|r| r.request).collect::<Vec<_>>());
    }

    #[test]
    fn no_request_is_an_empty_file_with_every_column() {
        let f = v::Findings { requests: vec![], ..findings() };
        let with = SerializedFileReader::new(bytes::Bytes::from(written(&findings(), ROW_GROUP))).unwrap();
        let without = SerializedFileReader::new(bytes::Bytes::from(written(&f, ROW_GROUP))).unwrap();
        assert_eq!(without.metadata().file_metadata().num_rows(), 0);
        assert_eq!(
            without.metadata().file_metadata().schema_descr().columns().len(),
            with.metadata().file_metadata().schema_descr().columns().len()
        );
    }

    /// `seq_shift`, `same_tuple` and `fragments` (rare in the lab captures)
    /// are columns that read back (as `compare` reads the file) to the JSON
    /// request's keys.
    #[test]
    fn seq_shifts_same_tuples_and_fragments_read_back_as_json_writes_them() {
        let mut f = findings();
        let eb = f.requests[0].source[0].between;
        f.requests[0].seq_shift = vec![v::SeqShift { between: eb, client: Some(12_345), server: Some(-7) }];
        f.requests[0].fragments = Some(Box::new(crate::report::fixtures::fragments_lost()));
        f.requests[1].seq_shift = vec![v::SeqShift { between: eb, client: None, server: Some(1) }];
        // Request 3 was not seen at backend: a flow of its endpoints there.
        f.requests[2].same_tuple = vec![2];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        std::fs::write(&path, written(&f, ROW_GROUP)).unwrap();
        let back = crate::compare::parquet::wire_findings(std::fs::File::open(&path).unwrap()).unwrap();
        let json = to_wire::findings(&f);
        assert!(json.requests[0].fragments.is_some() && !json.requests[2].same_tuple.is_empty());
        assert_eq!(back.requests.len(), json.requests.len());
        for (b, j) in back.requests.iter().zip(&json.requests) {
            // As JSON writes them (ms rounded): key by key.
            let (b, j) = (serde_json::to_value(b).unwrap(), serde_json::to_value(j).unwrap());
            assert_eq!(b, j, "request {}", j["request"]);
        }
        assert_eq!(back.requests[0].seq_shift[0].server, Some(-7));
        assert_eq!(back.requests[2].same_tuple, ["backend"]);
        assert_eq!(back.requests[0].fragments, json.requests[0].fragments);
    }

    /// A writer that fails after `left` bytes.
    struct Full {
        left: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::from(io::ErrorKind::StorageFull));
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_writer_is_an_error_at_every_point_never_a_panic() {
        let f = findings();
        let size = written(&f, 2).len();
        for left in (0..size).step_by(size / 24 + 1) {
            let err = write_groups(&Words::new(&f), &f, &mut Full { left }, 2).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{err}");
        }
        assert!(write_groups(&Words::new(&f), &f, &mut Full { left: size }, 2).is_ok());
    }
}
