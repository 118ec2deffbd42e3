//! Splitting a large uncompressed capture file at record boundaries so its
//! chunks can be framed (and decoded) in parallel. Takes a file path and a chunk
//! size; gives a `ChunkPlan` (the whole capture's `CaptureInfo` plus chunks that
//! carry the framing state to resume from) and reads chunks on their own. One
//! planning pass walks the records with no callback work; each chunk is then read
//! with its own buffer. Never splits gzip or standard input.

use super::feeder::{CountingRead, Feeder, READ_CHUNK};
use super::{pcap, pcapng, read_stream, Ctx, Planner, Who};
use super::{CaptureInfo, NoProgress, Progress, RawRecord, ReadError, ReadErrorKind};
use crate::config::{CaptureSpec, Source};
use std::fs::File;
use std::io::Read;

/// Where a chunk's record walk resumes (format state at a record boundary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resume {
    Pcap(pcap::Resume),
    Pcapng(pcapng::State),
}

/// A piece of an uncompressed capture file that starts and ends at record (pcapng:
/// block) boundaries and can be framed on its own, in parallel with the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Byte offset of its first record or block.
    pub start: u64,
    /// Byte offset one past its last record or block.
    pub end: u64,
    /// Packet records before it (its first record is number `records_before + 1`).
    pub records_before: u64,
    resume: Resume,
}

/// The chunks of one capture, plus everything the planning pass learned (the
/// same `CaptureInfo`, warnings included, that `read_capture` would give).
#[derive(Clone, Debug)]
pub struct ChunkPlan {
    pub info: CaptureInfo,
    pub chunks: Vec<Chunk>,
}

/// Walks a splittable file's record headers once (no callback work) and cuts it
/// about every `chunk_bytes` bytes at record boundaries. Errors as `read_capture`.
pub fn plan_chunks(spec: &CaptureSpec, chunk_bytes: u64) -> Result<ChunkPlan, ReadError> {
    let file = spec.display_name();
    let err = |kind| ReadError { file: file.clone(), kind };
    let Source::Path(path) = &spec.source else {
        return Err(err(ReadErrorKind::BadHeader { what: "standard input cannot be split".into() }));
    };
    let f = File::open(path).map_err(|e| err(ReadErrorKind::Io(e)))?;
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut planner = Some(Planner::new(chunk_bytes));
    let info = read_stream(
        Box::new(f),
        Some(total),
        Who { label: &spec.label, file: &file, capture: 0 },
        &NoProgress,
        &mut planner,
        &mut |_| {},
    )
    .map_err(err)?;
    if info.gzip {
        return Err(err(ReadErrorKind::BadHeader { what: "a gzip file cannot be split".into() }));
    }
    let cuts = planner.map(Planner::into_cuts).unwrap_or_default();
    let ends: Vec<u64> = cuts.iter().skip(1).map(|(o, _)| *o).chain(std::iter::once(info.bytes)).collect();
    let chunks = cuts
        .into_iter()
        .zip(ends)
        .filter(|((start, _), end)| end > start)
        .map(|((start, resume), end)| {
            let records_before = match &resume {
                Resume::Pcap(st) => st.packets(),
                Resume::Pcapng(st) => st.records(),
            };
            Chunk { start, end, records_before, resume }
        })
        .collect();
    Ok(ChunkPlan { info, chunks })
}

/// Frames one chunk of a plan, calling `on_record` for each of its packet records
/// (numbered and offset as in a whole-file read). Problems inside it were already
/// reported by `plan_chunks`; only I/O failures are errors here.
pub fn read_chunk(
    spec: &CaptureSpec,
    capture: usize,
    chunk: &Chunk,
    progress: &dyn Progress,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<(), ReadError> {
    use std::io::{Seek, SeekFrom};
    let file = spec.display_name();
    let err = |kind| ReadError { file: file.clone(), kind };
    let Source::Path(path) = &spec.source else {
        return Err(err(ReadErrorKind::BadHeader { what: "standard input cannot be split".into() }));
    };
    let mut f = File::open(path).map_err(|e| err(ReadErrorKind::Io(e)))?;
    f.seek(SeekFrom::Start(chunk.start)).map_err(|e| err(ReadErrorKind::Io(e)))?;
    let len = chunk.end.saturating_sub(chunk.start);
    let (counted, raw_count) = CountingRead::new(f.take(len));
    let size = usize::try_from(len).unwrap_or(READ_CHUNK);
    let mut feeder =
        Feeder::new(Box::new(counted), raw_count, READ_CHUNK.min(size.saturating_add(16)), progress, capture)
            .starting_at(chunk.start);
    let mut ctx = Ctx::new(&spec.label, &file, false, None);
    match chunk.resume.clone() {
        Resume::Pcap(mut st) => pcap::read_records(&mut feeder, &mut ctx, &mut st, on_record),
        Resume::Pcapng(mut st) => {
            pcapng::read_blocks(&mut feeder, &mut ctx, &mut st, on_record).map_err(err)?
        }
    }
    feeder.finish();
    match feeder.take_error() {
        Some(e) => Err(err(ReadErrorKind::Io(e))),
        None => Ok(()),
    }
}
