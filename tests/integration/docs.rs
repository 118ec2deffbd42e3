//! The documents stay true (issue 35): every relative link in README.md,
//! CHANGELOG.md, ARCHITECTURE.md and docs/**/*.md points to a file that
//! exists (and, into a Markdown file, to a heading that exists); the README's
//! commands run: each `tuplecorr ...` line of its code blocks runs with the
//! built binary (in a folder holding the lab's `masquerade-node` captures as
//! decap.pcap, egress.pcap and backend.pcap, and `testdata/`), every script
//! and test file it names exists, and its test command is the one CI runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CHANGELOG.md, ARCHITECTURE.md and every .md under docs/.
fn documents() -> Vec<PathBuf> {
    let mut docs =
        vec![root().join("README.md"), root().join("CHANGELOG.md"), root().join("ARCHITECTURE.md")];
    docs.extend(crate::util::files_under(&root().join("docs"), "md"));
    docs.sort();
    docs
}

/// The lines outside code blocks, with inline code spans blanked out, or
/// only their backticks with `keep_code`.
fn prose(text: &str, keep_code: bool) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") {
            continue;
        }
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 || keep_code {
                kept.push_str(part);
            }
        }
        out.push(kept);
    }
    out
}

/// GitHub's anchor of a heading: lower case, letters, digits, `-` and `_`
/// kept, spaces to `-`, everything else dropped; a repeated one gets `-1`, `-2`.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for line in prose(text, true) {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else { continue };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// The targets of the `[text](target)` links of a document's prose.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text, false) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            out.push(rest[..end].split_whitespace().next().unwrap_or("").to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_documents_points_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() { doc.clone() } else { doc.parent().unwrap().join(path) };
            if !file.exists() {
                broken.push(format!("{name}: {target}: no file {}", file.display()));
                continue;
            }
            let inside = file.canonicalize().unwrap();
            if !inside.starts_with(root().canonicalize().unwrap()) {
                broken.push(format!("{name}: {target}: outside the repository"));
            }
            if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                let headings = anchors(&std::fs::read_to_string(&file).unwrap());
                if !headings.iter().any(|h| h == anchor) {
                    broken.push(format!("{name}: {target}: no heading #{anchor} in {}", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 50, "{checked} links checked");
}

#[test]
fn the_anchor_of_a_heading_is_github_s() {
    let text = "# Parquet (`--format parquet`)\n## The Spark job's dataset (`scripts/spark/x_y.py`)\n\
                ```\n# not a heading\n```\n## Usage\n## Usage\n#nope\n";
    assert_eq!(
        anchors(text),
        ["parquet---format-parquet", "the-spark-jobs-dataset-scriptssparkx_ypy", "usage", "usage-1"]
    );
}

/// The lines of the README's code (fenced blocks and indented ones).
fn readme_code() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            out.push(line.trim().to_string());
        } else if let Some(code) = line.strip_prefix("    ") {
            out.push(code.trim().to_string());
        }
    }
    out
}

#[test]
fn the_readme_s_tuplecorr_commands_run() {
    let dir = tempfile::tempdir().unwrap();
    let lab = root().join("testdata/lab/masquerade-node");
    for point in ["decap", "egress", "backend"] {
        std::fs::copy(lab.join(format!("{point}.pcap")), dir.path().join(format!("{point}.pcap"))).unwrap();
    }
    std::os::unix::fs::symlink(root().join("testdata"), dir.path().join("testdata")).unwrap();
    let mut ran = 0;
    for line in readme_code() {
        let Some(args) = line.strip_prefix("tuplecorr ") else { continue };
        let args = args.split(" #").next().unwrap();
        assert!(!args.contains(['\'', '"', '|', '>', '$']), "write this README command plainly: {line}");
        let words: Vec<&str> = args.split_whitespace().collect();
        if words.iter().any(|w| w.starts_with("man|") || *w == "NAMESPACE/POD:/tmp/tuplecorr") {
            continue; // a synopsis, not a command
        }
        let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .args(&words)
            .current_dir(dir.path())
            .env("COLUMNS", "200")
            .output()
            .unwrap();
        let parquet_only = !cfg!(feature = "parquet") && args.contains("parquet");
        assert!(
            o.status.success() || parquet_only,
            "README: `{line}` exited {:?}: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10, "{ran} README commands ran");
    for written in ["report.html", "merged.pcapng", "report.json", "before.json", "after.json"] {
        assert!(dir.path().join(written).exists(), "the README's commands write {written}");
    }
}

#[test]
fn the_files_and_scripts_the_readme_names_exist_and_its_test_command_is_ci_s() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut named = 0;
    for word in text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | '[' | ']' | '"')) {
        let word = word.trim_end_matches(['.', ',', ':', ';']);
        let path = ["scripts/", "testdata/", "docs/", "src/", ".ci/"].iter().find(|p| word.starts_with(**p));
        if path.is_none() || word.contains(['*', '<', '|']) || word.starts_with("target/") {
            continue;
        }
        assert!(root().join(word).exists(), "README names {word}, which does not exist");
        named += 1;
    }
    assert!(named > 10, "{named} paths named");
    for line in readme_code() {
        if let Some(script) = line.split_whitespace().next().filter(|w| w.starts_with("scripts/")) {
            let mode = std::os::unix::fs::PermissionsExt::mode(
                &root().join(script).metadata().unwrap().permissions(),
            );
            assert!(mode & 0o111 != 0, "README runs {script}, which is not executable");
        }
        if let Some(args) = line.strip_prefix("cargo run --release -- ") {
            for capture in args.split_whitespace() {
                assert!(root().join(capture).is_file(), "README's first command reads {capture}");
            }
        }
    }
    let code = readme_code();
    assert!(code.iter().any(|l| l == "cargo test"), "the README's test command is `cargo test`");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim_start().starts_with("cargo test 2>&1")),
        "CI runs the README's test command"
    );
}
