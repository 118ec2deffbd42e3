//! Golden outputs: the binary's exact bytes for every lab scenario in every
//! report format (table, summary, CSV, JSON, NDJSON), for `compare` on two lab
//! pairs, and for a generated three-point set. They pin the output contract:
//! a refactor must leave them byte-identical, and a deliberate change of the
//! contract re-blesses them in the same commit:
//!
//!     TUPLECORR_BLESS=1 cargo test golden
//!
//! then review `git diff testdata/golden`. The binary runs inside the scenario's
//! folder with relative file names, so no path of this machine enters a file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/golden")
}

fn blessing() -> bool {
    std::env::var_os("TUPLECORR_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Runs the binary in `dir` and returns its standard output; panics with its
/// standard error when it does not exit 0.
fn run_in(dir: &Path, args: &[String]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(dir)
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run tuplecorr");
    assert!(
        out.status.success(),
        "tuplecorr {args:?} in {} exited {:?}: {}",
        dir.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Compares `got` with the golden file `name` (or writes it when blessing);
/// returns a one-line failure instead of panicking so one run lists them all.
fn check(name: &str, got: &[u8]) -> Option<String> {
    let path = golden_dir().join(name);
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return None;
    }
    let want = match std::fs::read(&path) {
        Ok(w) => w,
        Err(e) => {
            return Some(format!("{name}: cannot read golden file ({e}); bless with TUPLECORR_BLESS=1"))
        }
    };
    if want == got {
        return None;
    }
    let (w, g) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
    let line = w
        .lines()
        .zip(g.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(w.lines().count().min(g.lines().count()));
    Some(format!(
        "{name}: differs at line {}:\n  golden: {}\n  got:    {}",
        line + 1,
        w.lines().nth(line).unwrap_or("<end>"),
        g.lines().nth(line).unwrap_or("<end>")
    ))
}

fn report(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} golden outputs differ (if the change is deliberate: TUPLECORR_BLESS=1 cargo test golden, then review git diff testdata/golden):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The capture files of a lab scenario, in path order (from its expected.json).
fn lab_files(dir: &Path) -> Vec<String> {
    let exp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let index = std::fs::read_to_string(dir.parent().unwrap().join("index.tsv")).unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    let row = index.lines().find(|l| l.split('\t').next() == Some(name)).expect("scenario in index.tsv");
    let files: Vec<String> = row.split('\t').nth(1).unwrap().split(',').map(str::to_string).collect();
    // The points of one split capture (`node(in)`, `node(out)`) name one file.
    let mut listed: Vec<&str> =
        exp["captures"].as_object().unwrap().values().filter_map(|f| f.as_str()).collect();
    listed.sort_unstable();
    listed.dedup();
    assert_eq!(files.len(), listed.len(), "{name}: index.tsv vs expected.json");
    files
}

fn lab_scenarios() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/lab");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 16, "lab scenarios missing under {}", root.display());
    dirs
}

/// Every format of the main form on `files` run in `dir`, checked against `prefix.*`.
fn every_format(dir: &Path, files: &[String], prefix: &str, failures: &mut Vec<String>) {
    let forms: [(&str, &[&str]); 5] = [
        ("table.txt", &["--format", "table", "--color", "never"]),
        ("summary.txt", &["--summary", "--color", "never"]),
        ("csv", &["--format", "csv"]),
        ("json", &["--format", "json"]),
        ("ndjson", &["--format", "ndjson"]),
    ];
    for (ext, flags) in forms {
        let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        args.push("--quiet".into());
        args.extend(files.iter().cloned());
        failures.extend(check(&format!("{prefix}.{ext}"), &run_in(dir, &args)));
    }
}

#[test]
fn golden_lab_scenarios_every_format() {
    let mut failures = Vec::new();
    for dir in lab_scenarios() {
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        every_format(&dir, &lab_files(&dir), &format!("lab/{name}"), &mut failures);
        html_data(&dir, &lab_files(&dir), &format!("lab/{name}"), &mut failures);
    }
    report(failures);
}

/// The text of the page's `<script type="application/json" id=ID>` block.
fn html_block<'a>(html: &'a str, id: &str) -> &'a str {
    let start = format!("<script type=\"application/json\" id=\"{id}\">");
    let from = html.find(&start).unwrap_or_else(|| panic!("no {id} block")) + start.len();
    &html[from..from + html[from..].find("</script>").unwrap()]
}

/// `--format html`: the data the page draws, not its script (which may change
/// without changing what it shows). The ladder events are pinned in
/// `prefix.ladder.json`; the embedded findings must equal `--format json`'s.
fn html_data(dir: &Path, files: &[String], prefix: &str, failures: &mut Vec<String>) {
    let args = |format: &str| {
        let mut a: Vec<String> = vec!["--format".into(), format.into(), "--quiet".into()];
        a.extend(files.iter().cloned());
        a
    };
    let html = String::from_utf8(run_in(dir, &args("html"))).unwrap();
    let mut ladder = html_block(&html, "tc-ladder").to_string();
    ladder.push('\n');
    failures.extend(check(&format!("{prefix}.ladder.json"), ladder.as_bytes()));
    let embedded: serde_json::Value = serde_json::from_str(html_block(&html, "tc-findings")).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&run_in(dir, &args("json"))).unwrap();
    if embedded != json {
        failures.push(format!("{prefix}: the HTML page's findings differ from --format json"));
    }
}

#[test]
fn golden_compare_on_lab_pairs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/lab");
    let list =
        |s: &str| lab_files(&root.join(s)).iter().map(|f| format!("{s}/{f}")).collect::<Vec<_>>().join(",");
    let mut failures = Vec::new();
    // Each with the expectation its change record states (it holds: exit status 0).
    for (before, after, source) in [
        ("preserved", "masquerade-node", "198.19.3.17"),
        ("masquerade-node", "masquerade-pod", "198.18.10.2"),
    ] {
        for format in ["table", "markdown", "csv", "json", "ndjson"] {
            let args: Vec<String> = ["compare", "--quiet", "--format", format, "--expect-source", source]
                .iter()
                .map(|s| s.to_string())
                .chain([list(before), list(after)])
                .collect();
            let ext = match format {
                "table" => "txt",
                "markdown" => "md",
                _ => format,
            };
            failures.extend(check(&format!("compare/{before}--{after}.{ext}"), &run_in(&root, &args)));
        }
    }
    report(failures);
}

/// A generated three-point set (the benchmark mix: SNAT with remapped ports,
/// clocks +2.75 s / -1.3 s, lost requests and replies, background flows).
#[test]
fn golden_generated_set_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let files = crate::util::write_mix_set(dir.path(), 300);
    let mut failures = Vec::new();
    every_format(dir.path(), &files, "generated/mix-300", &mut failures);
    report(failures);
}

/// Every golden JSON report reads back into the model and is written again
/// byte for byte (what `compare` relies on when it loads a report), and every
/// golden NDJSON line is the matching request of the JSON report: no key is
/// dropped, added or rounded differently on the way.
#[test]
fn golden_json_reads_back_and_writes_the_same_bytes() {
    let mut checked = 0;
    for dir in ["lab", "generated"] {
        for entry in std::fs::read_dir(golden_dir().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            // Reports only: `*.ladder.json` is the HTML page's ladder data.
            let name = path.file_name().unwrap().to_string_lossy();
            if !name.ends_with(".json") || name.ends_with(".ladder.json") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            // The wire model loses nothing: read and written again, the same bytes.
            let wire: tuplecorr::report::wire::Findings = serde_json::from_slice(&bytes).unwrap();
            let again = serde_json::to_string_pretty(&wire).unwrap() + "\n";
            assert!(again.as_bytes() == bytes, "{} does not survive a read and write", path.display());
            // Its requests read back into the typed model (what compare does)
            // and written as NDJSON are the golden NDJSON, byte for byte.
            let findings = wire.into_typed().unwrap();
            let ndjson = std::fs::read(path.with_extension("ndjson")).unwrap();
            let mut lines = Vec::new();
            tuplecorr::report::json::write_ndjson(&findings, &mut lines).unwrap();
            assert!(
                lines == ndjson,
                "{} is not the requests of the JSON report",
                path.with_extension("ndjson").display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 17, "{checked} golden JSON files");
}

/// The Parquet file's schema (column names, nesting, physical and logical
/// types: what DuckDB and Spark see) as the parquet crate prints it. The
/// file's bytes are not pinned (they hold the writer's version); its rows are
/// checked against the JSON by tests/integration/parquet.rs.
#[cfg(feature = "parquet")]
#[test]
fn golden_parquet_schema() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/lab/masquerade-node");
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.parquet");
    let mut args = lab_files(&dir);
    args.extend(["--quiet", "-o"].map(String::from));
    args.push(file.to_string_lossy().into_owned());
    run_in(&dir, &args);
    let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut text = Vec::new();
    parquet::schema::printer::print_schema(&mut text, reader.metadata().file_metadata().schema());
    report(check("parquet-schema.txt", &text).into_iter().collect());
}

/// Every golden report's explanations agree with their own fields (issue 30:
/// the consistency checker finds nothing).
#[test]
fn every_golden_explanation_agrees_with_its_fields() {
    use tuplecorr::report::consistency::contradictions;
    use tuplecorr::report::wire::Findings;
    let mut checked = 0;
    let mut found = Vec::new();
    for dir in ["testdata/golden/lab", "testdata/golden/generated"] {
        let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".json") || name.ends_with(".ladder.json") {
                continue;
            }
            let report: Findings = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            for r in &report.requests {
                checked += 1;
                found.extend(contradictions(r).into_iter().map(|c| format!("{name}: {c}")));
            }
        }
    }
    assert!(checked > 400, "{checked} requests checked");
    assert!(found.is_empty(), "{} contradictions:\n{}", found.len(), found.join("\n"));
}
