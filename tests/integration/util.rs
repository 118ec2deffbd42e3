//! Shared test helpers: where the shared corpus and testdata live, and reading a
//! capture into owned records so tests can assert on them. Never writes files.

use std::path::PathBuf;
use tuplecorr::config::{CaptureSpec, Source};
use tuplecorr::read::{self, CaptureInfo, LinkType, NoProgress, ReadError};

/// An owned copy of one `RawRecord`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    pub ts_ns: i64,
    pub interface: u32,
    pub link_type: LinkType,
    pub data: Vec<u8>,
    pub orig_len: u32,
    pub record: u64,
    pub byte_offset: u64,
}

/// `../shared/corpus` beside the repository; panics loudly when it is missing.
pub fn corpus_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    assert!(
        dir.join("index.tsv").is_file(),
        "the shared corpus is missing: expected {} (a copy of shared/ beside the repository)",
        dir.display()
    );
    dir
}

/// `testdata/<rel>` in this repository.
pub fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(rel)
}

/// A capture spec for a file, labelled by its file name.
pub fn spec(path: &std::path::Path) -> CaptureSpec {
    let label = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    CaptureSpec { label, source: Source::Path(path.to_path_buf()) }
}

/// Reads a file with `read_capture`, keeping every record.
pub fn read_file(path: &std::path::Path) -> Result<(Vec<Rec>, CaptureInfo), ReadError> {
    let mut recs = Vec::new();
    let info = read::read_capture(&spec(path), 0, &NoProgress, &mut |r| recs.push(own(r)))?;
    Ok((recs, info))
}

/// Reads bytes with `read_bytes`, keeping every record.
pub fn read_mem(label: &str, bytes: &[u8]) -> Result<(Vec<Rec>, CaptureInfo), ReadError> {
    let mut recs = Vec::new();
    let info = read::read_bytes(label, bytes, &mut |r| recs.push(own(r)))?;
    Ok((recs, info))
}

/// An owned copy of a record.
pub fn own(r: &read::RawRecord<'_>) -> Rec {
    Rec {
        ts_ns: r.ts_ns,
        interface: r.interface,
        link_type: r.link_type,
        data: r.data.to_vec(),
        orig_len: r.orig_len,
        record: r.record,
        byte_offset: r.byte_offset,
    }
}
