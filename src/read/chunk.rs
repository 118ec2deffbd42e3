//! Splitting a large uncompressed capture file at record boundaries so its
//! chunks can be framed (and decoded) in parallel. Takes a file path and a chunk
//! size; gives a `ChunkPlan` (the whole capture's `CaptureInfo` plus chunks that
//! carry the framing state to resume from) and reads chunks on their own. One
//! planning pass walks the records with no callback work; each chunk is then read
//! with its own buffer. Never splits gzip or standard input.

use super::feeder::{CountingRead, Feeder, READ_CHUNK};
use super::{pcap, pcapng, read_stream, Ctx, Planner, Who};
use super::{CaptureInfo, NoProgress, Progress, RawRecord, ReadError, ReadErrorKind};
use super::{CaptureSpec, Source};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{read_capture, CaptureInfo};
    use std::io::Write;

    /// (ts_ns, interface, record, byte_offset, data) of one record.
    type Rec = (i64, u32, u64, u64, Vec<u8>);

    fn rec(r: &RawRecord<'_>) -> Rec {
        (r.ts_ns, r.interface, r.record, r.byte_offset, r.data.to_vec())
    }

    fn spec(file: &tempfile::NamedTempFile) -> CaptureSpec {
        CaptureSpec { label: "a".into(), source: Source::Path(file.path().to_path_buf()) }
    }

    fn file_of(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f.flush().unwrap();
        f
    }

    /// A pcap of `n` records of 1 to 90 bytes (LINKTYPE_RAW, ns).
    fn pcap_bytes(n: usize) -> Vec<u8> {
        let pkts: Vec<(i64, Vec<u8>, u32)> =
            (0..n).map(|i| (1_000_000 + i as i64 * 1_000, vec![i as u8; 1 + i * 7 % 90], 100)).collect();
        let mut out = Vec::new();
        tuplecorr_synth::write_pcap(&mut out, 65535, &pkts).unwrap();
        out
    }

    /// A little-endian pcapng block.
    fn block(btype: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + body.len()).div_ceil(4) * 4;
        let mut b = btype.to_le_bytes().to_vec();
        b.extend_from_slice(&(len as u32).to_le_bytes());
        b.extend_from_slice(body);
        b.resize(len - 4, 0);
        b.extend_from_slice(&(len as u32).to_le_bytes());
        b
    }

    /// A pcapng of two interfaces (raw IP), `n` packets alternating between
    /// them, with a second interface description block in the middle.
    fn pcapng_bytes(n: usize) -> Vec<u8> {
        let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
        shb.extend_from_slice(&[1, 0, 0, 0]);
        shb.extend_from_slice(&[0xff; 8]);
        let mut out = block(0x0a0d_0d0a, &shb);
        let idb = block(1, &[101, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&idb);
        for i in 0..n {
            if i == n / 2 {
                out.extend_from_slice(&idb);
            }
            let interface = if i >= n / 2 { (i % 2) as u32 } else { 0 };
            let data = vec![i as u8; 1 + i * 11 % 70];
            let units = 1_700_000_000_000_000u64 + i as u64;
            let mut body = interface.to_le_bytes().to_vec();
            body.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
            body.extend_from_slice(&(units as u32).to_le_bytes());
            body.extend_from_slice(&(data.len() as u32).to_le_bytes());
            body.extend_from_slice(&(data.len() as u32).to_le_bytes());
            body.extend_from_slice(&data);
            out.extend_from_slice(&block(6, &body));
        }
        out
    }

    fn whole(spec: &CaptureSpec) -> (Vec<Rec>, CaptureInfo) {
        let mut out = Vec::new();
        let info = read_capture(spec, 0, &NoProgress, &mut |r| out.push(rec(r))).unwrap();
        (out, info)
    }

    /// The chunks of `plan` read one by one, each record with the chunk it came from.
    fn by_chunks(spec: &CaptureSpec, plan: &ChunkPlan) -> Vec<(usize, Rec)> {
        let mut out = Vec::new();
        for (k, c) in plan.chunks.iter().enumerate() {
            read_chunk(spec, 0, c, &NoProgress, &mut |r| out.push((k, rec(r)))).unwrap();
        }
        out
    }

    /// What every plan of `bytes` must be: chunks that follow each other
    /// without gap or overlap up to where a whole read ends, each (but the last)
    /// at least `every` bytes, each starting at a block boundary with its
    /// records numbered on; read one by one they give exactly the records
    /// (numbers, offsets, times, interfaces, bytes) and the info of a whole read.
    fn check_plan(bytes: &[u8], every: u64) -> ChunkPlan {
        let file = file_of(bytes);
        let spec = spec(&file);
        let (records, info) = whole(&spec);
        let plan = plan_chunks(&spec, every).unwrap();
        assert_eq!(plan.info, info, "every {every}: the plan learns what a whole read does");
        assert!(!plan.chunks.is_empty());
        assert!(plan.chunks[0].start <= records[0].3, "the first chunk holds the first record");
        assert_eq!(plan.chunks.last().unwrap().end, info.bytes, "the last chunk ends where reading did");
        if info.warnings.is_empty() {
            assert_eq!(info.bytes, bytes.len() as u64, "a sound file is read to its end");
        }
        for w in plan.chunks.windows(2) {
            assert_eq!(w[0].end, w[1].start, "every {every}: chunks follow each other");
            assert!(w[0].end - w[0].start >= every, "every {every}: a chunk is cut after `every` bytes");
        }
        let read = by_chunks(&spec, &plan);
        let got: Vec<Rec> = read.iter().map(|(_, r)| r.clone()).collect();
        assert_eq!(got, records, "every {every}: the chunks read as the whole file");
        for (k, c) in plan.chunks.iter().enumerate() {
            let before = records.iter().filter(|r| r.3 < c.start).count() as u64;
            assert_eq!(c.records_before, before, "every {every}: chunk {k}");
            let mine: Vec<&Rec> = read.iter().filter(|(j, _)| *j == k).map(|(_, r)| r).collect();
            assert!(mine.iter().all(|r| r.3 >= c.start && r.3 < c.end), "chunk {k} gives its own records");
            if let Some(first) = mine.first() {
                assert_eq!(first.2, c.records_before + 1, "chunk {k} numbers its records on");
            }
        }
        plan
    }

    #[test]
    fn a_pcap_is_cut_at_record_boundaries_into_chunks_that_read_as_the_whole_file() {
        let bytes = pcap_bytes(60);
        for every in [1, 50, 100, 333, 1000] {
            let plan = check_plan(&bytes, every);
            for c in &plan.chunks {
                assert!(
                    c.end - c.start < every + 16 + 90,
                    "every {every}: cut at the first boundary after it"
                );
            }
        }
        assert_eq!(check_plan(&bytes, 1).chunks.len(), 60, "a cut at every record");
        let one = check_plan(&bytes, 1 << 20);
        assert_eq!(one.chunks.len(), 1);
        assert_eq!((one.chunks[0].start, one.chunks[0].records_before), (24, 0), "after the file header");
    }

    #[test]
    fn a_pcapng_is_cut_at_block_boundaries_with_its_interfaces_carried_across() {
        let bytes = pcapng_bytes(40);
        for every in [1, 64, 200, 555, 1 << 20] {
            let plan = check_plan(&bytes, every);
            assert_eq!(plan.info.interfaces.len(), 2);
        }
        assert!(check_plan(&bytes, 64).chunks.len() > 10);
    }

    #[test]
    fn a_file_cut_short_is_planned_as_it_reads_warning_included() {
        let mut bytes = pcap_bytes(30);
        bytes.truncate(bytes.len() - 5);
        let plan = check_plan(&bytes, 200);
        assert_eq!(plan.info.packets, 29);
        assert!(plan.info.bytes < bytes.len() as u64, "the last record is left out");
        assert_eq!(plan.info.warnings.len(), 1, "{:?}", plan.info.warnings);
        assert_eq!(plan.info.warnings[0].record, Some(30));
    }

    #[test]
    fn gzip_and_standard_input_are_never_split() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&pcap_bytes(5)).unwrap();
        let file = file_of(&gz.finish().unwrap());
        let e = plan_chunks(&spec(&file), 10).unwrap_err();
        assert!(e.to_string().contains("a gzip file cannot be split"), "{e}");
        let stdin = CaptureSpec { label: "a".into(), source: Source::Stdin };
        let e = plan_chunks(&stdin, 10).unwrap_err();
        assert!(e.to_string().contains("standard input cannot be split"), "{e}");
        let plain = file_of(&pcap_bytes(5));
        let chunk = plan_chunks(&spec(&plain), 10).unwrap().chunks.remove(0);
        let e = read_chunk(&stdin, 0, &chunk, &NoProgress, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("standard input cannot be split"), "{e}");
    }
}
