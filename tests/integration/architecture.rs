//! The layering kept by a test: `src/lib.rs` writes the stack of modules once
//! (top first, groups apart by `>`), and every `crate::` path of a module's
//! files must name a module of a group below its own. A module missing from
//! the stack, or named twice, fails too.

use std::collections::BTreeMap;
use std::path::Path;

/// The stack of `src/lib.rs`: each module and its group's height (0: top).
fn stack(lib: &str) -> BTreeMap<String, usize> {
    let start = lib.find("//! The stack, top first").expect("lib.rs writes the stack");
    let text: String = (lib[start..].lines())
        .skip_while(|l| !l.contains("```text"))
        .skip(1)
        .take_while(|l| !l.contains("```"))
        .map(|l| l.trim_start_matches("//!").to_string() + " ")
        .collect();
    let mut out = BTreeMap::new();
    for (height, group) in text.split('>').enumerate() {
        for name in group.split_whitespace() {
            assert!(out.insert(name.to_string(), height).is_none(), "{name} named twice in lib.rs's stack");
        }
    }
    out
}

/// The top module a file of `src/` belongs to (`src/flows/tcp.rs`: `flows`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The modules `code` names by `crate::NAME` or `use crate::{NAME, ...}`,
/// with their lines (comments left out).
fn named(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name: String =
                        item.trim().chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                    out.push((name, n + 1));
                }
            } else {
                let name: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                out.push((name, n + 1));
            }
        }
    }
    out
}

#[test]
fn every_import_runs_down_the_stack_that_lib_rs_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let stack = stack(&lib);
    // Every module of lib.rs stands in the stack.
    let declared: Vec<&str> = (lib.lines())
        .filter_map(|l| l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod ")))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    assert!(declared.len() > 20, "{declared:?}");
    for m in &declared {
        assert!(stack.contains_key(*m), "module {m} is not in lib.rs's stack");
    }
    for m in stack.keys() {
        assert!(declared.contains(&m.as_str()), "lib.rs's stack names {m}, which lib.rs does not declare");
    }
    let files = crate::util::files_under(&src, "rs");
    let mut wrong = Vec::new();
    let mut imports = 0;
    for file in &files {
        let from = module_of(&src, file);
        let Some(&height) = stack.get(&from) else { continue }; // lib.rs, main.rs
        let code = std::fs::read_to_string(file).unwrap();
        for (to, line) in named(&code) {
            let Some(&to_height) = stack.get(&to) else { continue }; // an item of lib.rs
            if to == from {
                continue;
            }
            imports += 1;
            if to_height <= height {
                wrong.push(format!("{}:{line}: {from} takes from {to}, not below it", file.display()));
            }
        }
    }
    assert!(imports > 200, "{imports} imports read: the reader is broken");
    assert!(wrong.is_empty(), "imports running up or sideways:\n{}", wrong.join("\n"));
}

#[test]
fn the_stack_reader_sees_groups_and_grouped_imports() {
    let lib = "//! The stack, top first: ...\n//!\n//! ```text\n//! a > b c\n//!   > d\n//! ```\n";
    let s = stack(lib);
    assert_eq!((s["a"], s["b"], s["c"], s["d"]), (0, 1, 1, 2));
    let code = "use crate::{flows::Flow, read};\nlet x = crate::time::rfc3339(0); // crate::report\n";
    assert_eq!(named(code), [("flows".into(), 1), ("read".into(), 1), ("time".into(), 2)]);
}
