//! The layering kept by a test. ARCHITECTURE.md writes the stack of modules
//! once ("Modules and layers": top first, groups apart by `>`); every import
//! of a module's files must name a module of a group below its own, and the
//! files of one folder (the submodules of one module) import each other in no
//! circle. A module missing from the stack, or named twice, fails too.
//!
//! The imports are read from the module tree as the compiler builds it: the
//! `mod NAME;` declarations from `src/lib.rs` down (`#[path]` included, so
//! every file of `src/` but `main.rs` is reached), `use` trees whole (over
//! several lines, nested groups, `self`, globs, aliases) and every `crate::`,
//! `super::` and `self::` path anywhere in the code, each resolved to the
//! module it names; comments and string literals are left out. What only a
//! test build compiles (`#[cfg(test)]` items and files, `#[test]` functions,
//! `mod tests`) is kept apart: a test may take from anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Imports of the code as it is that break the rules, each allowed here with
/// its reason: a circle among the submodules of one module, as (module, its
/// submodules in the circle). The test fails on any other, and on an allowance
/// that no longer holds (remove it then).
const ALLOWED_CIRCLES: &[(&str, &[&str])] = &[];

/// Module paths (`["report", "csv"]`; the crate root is empty).
type ModPath = Vec<String>;

/// The stack in `doc`: each module and its group's height (0: top). The stack
/// is the first ```` ```text ```` block after the words "The stack, top first".
fn stack(doc: &str) -> BTreeMap<String, usize> {
    let start = doc.find("The stack, top first").expect("ARCHITECTURE.md writes the stack");
    let text: String = (doc[start..].lines())
        .skip_while(|l| !l.contains("```text"))
        .skip(1)
        .take_while(|l| !l.contains("```"))
        .map(|l| l.trim_start().trim_start_matches("//!").to_string() + " ")
        .collect();
    let mut out = BTreeMap::new();
    for (height, group) in text.split('>').enumerate() {
        for name in group.split_whitespace() {
            assert!(out.insert(name.to_string(), height).is_none(), "{name} named twice in the stack");
        }
    }
    out
}

/// One token of Rust source, as much as imports need: names, `::`, string
/// literals (for `#[path]`) and single punctuation. Comments, whitespace,
/// numbers and character literals give none.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Colons,
    Str(String),
    Punct(char),
}

/// The tokens of `code`, each with its line.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // The end of a string literal whose text starts at `i` (after its quote),
    // raw with `hashes` `#` when `raw`; the text and the index after it.
    let string = |mut i: usize, raw: bool, hashes: usize, line: &mut usize| {
        let start = i;
        while i < c.len() {
            match c[i] {
                '\\' if !raw => {
                    i += 1;
                    *line += usize::from(at(i) == '\n');
                }
                '"' if (1..=hashes).all(|h| at(i + h) == '#') => {
                    return (c[start..i].iter().collect::<String>(), i + 1 + hashes);
                }
                '\n' => *line += 1,
                _ => {}
            }
            i += 1;
        }
        (c[start..].iter().collect(), c.len())
    };
    while i < c.len() {
        let ch = c[i];
        let first_line = line;
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' {
            let (text, end) = string(i + 1, false, 0, &mut line);
            out.push((Tok::Str(text), first_line));
            i = end;
        } else if ch == '\'' {
            // A character literal ('x', '\n', '\u{7f}', '\''), or a lifetime or
            // label, whose name then reads as a name of no consequence.
            if at(i + 1) == '\\' {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::Colons, line));
            i += 2;
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw = matches!(word.as_str(), "r" | "br" | "cr");
            let hashes = (i..).take_while(|&j| at(j) == '#').count();
            if raw && at(i + hashes) == '"' {
                let (text, end) = string(i + hashes + 1, true, hashes, &mut line);
                out.push((Tok::Str(text), first_line));
                i = end;
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                let (text, end) = string(i + 1, false, 0, &mut line);
                out.push((Tok::Str(text), first_line));
                i = end;
            } else if word == "r" && hashes == 1 {
                i += 1; // a raw identifier: its name follows
            } else if word == "b" && at(i) == '\'' {
                // a byte literal: the quote is read next as a character literal
            } else {
                out.push((Tok::Name(word), line));
            }
        } else if ch.is_ascii_digit() {
            while i < c.len()
                && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.' && at(i + 1).is_ascii_digit())
            {
                i += 1;
            }
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// A path written in the code: in which module, its names as written
/// (`["super", "schema", "WireName"]`), whether a `use` tree gave it, whether
/// only a test build compiles it, and its line.
#[derive(Clone, Debug)]
struct Written {
    within: ModPath,
    path: Vec<String>,
    used: bool,
    test: bool,
    line: usize,
}

/// A `mod NAME;` declaration: the module it stands in, the name, its
/// `#[path]`, whether only a test build compiles it.
#[derive(Clone, Debug)]
struct Decl {
    within: ModPath,
    name: String,
    path: Option<String>,
    test: bool,
}

/// What one file's code gives.
#[derive(Default, Debug)]
struct Reading {
    paths: Vec<Written>,
    decls: Vec<Decl>,
    /// Inline modules (`mod field { ... }`).
    inline: Vec<ModPath>,
}

/// A brace's scope: the module it is in, whether only a test build compiles
/// it, and the item being read in it (open parentheses and brackets, a test
/// attribute, a `#[path]`, a `mod NAME` whose body comes next).
#[derive(Clone, Default)]
struct Scope {
    module: ModPath,
    test: bool,
    nesting: usize,
    test_item: bool,
    path_attr: Option<String>,
    inline_mod: Option<String>,
}

/// Whether an attribute's tokens (inside `#[...]`) make its item test-only:
/// `#[test]`, or a `cfg` that names `test` and neither `not` nor `any`.
fn test_attribute(attr: &[(Tok, usize)]) -> bool {
    let names: Vec<&str> = (attr.iter())
        .filter_map(|(t, _)| if let Tok::Name(n) = t { Some(n.as_str()) } else { None })
        .collect();
    match names.first() {
        Some(&"test") => names.len() == 1,
        Some(&"cfg") => names.contains(&"test") && !names.contains(&"not") && !names.contains(&"any"),
        _ => false,
    }
}

/// A `use` tree from `t[*i]` on, its paths flattened after `prefix`: a group's
/// `self` names the prefix itself, `as` aliases are dropped, a glob ends in
/// `*`, a leading `::` is kept as a name (a path outside the crate).
fn use_tree(t: &[(Tok, usize)], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    while let Some((tok, _)) = t.get(*i) {
        *i += 1;
        match tok {
            Tok::Colons if path.is_empty() => path.push("::".into()),
            Tok::Colons => {}
            Tok::Punct('*') => {
                path.push("*".into());
                break;
            }
            Tok::Punct('{') => {
                while let Some((tok, _)) = t.get(*i) {
                    match tok {
                        Tok::Punct('}') => {
                            *i += 1;
                            return;
                        }
                        Tok::Punct(',') => *i += 1,
                        Tok::Punct(';') => return,
                        _ => {
                            let before = *i;
                            use_tree(t, i, path.clone(), out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
                return;
            }
            Tok::Name(n) => {
                if n != "self" || path.is_empty() {
                    path.push(n.clone());
                }
                if t.get(*i).map(|x| &x.0) == Some(&Tok::Colons) {
                    continue;
                }
                if t.get(*i).map(|x| &x.0) == Some(&Tok::Name("as".into())) {
                    *i += 2;
                }
                break;
            }
            _ => {
                *i -= 1;
                return;
            }
        }
    }
    out.push(path);
}

/// The paths and `mod` declarations of one file's `code`, the file being
/// module `module`, compiled only in a test build when `test`.
fn read(code: &str, module: &[String], test: bool) -> Reading {
    let t = tokens(code);
    let name = |i: usize| match t.get(i) {
        Some((Tok::Name(n), _)) => Some(n.as_str()),
        _ => None,
    };
    let is = |i: usize, tok: Tok| t.get(i).map(|x| &x.0) == Some(&tok);
    let mut out = Reading::default();
    let mut scopes = vec![Scope { module: module.to_vec(), test, ..Scope::default() }];
    let mut i = 0;
    while i < t.len() {
        let (tok, line) = (&t[i].0, t[i].1);
        let s = scopes.last_mut().unwrap();
        let test_here = s.test || s.test_item;
        match tok {
            Tok::Punct('#') if is(i + 1, Tok::Punct('[')) || is(i + 1, Tok::Punct('!')) => {
                let inner = is(i + 1, Tok::Punct('!'));
                let open = i + 1 + usize::from(inner);
                let (mut depth, mut end) = (0, open);
                while end < t.len() {
                    match t[end].0 {
                        Tok::Punct('[') => depth += 1,
                        Tok::Punct(']') => depth -= 1,
                        _ => {}
                    }
                    end += 1;
                    if depth == 0 {
                        break;
                    }
                }
                let attr = &t[(open + 1).min(end)..end.saturating_sub(1).max(open + 1)];
                if test_attribute(attr) {
                    if inner {
                        s.test = true;
                    } else {
                        s.test_item = true;
                    }
                }
                if let [(Tok::Name(p), _), (Tok::Punct('='), _), (Tok::Str(file), _)] = attr {
                    if p == "path" {
                        s.path_attr = Some(file.clone());
                    }
                }
                i = end;
                continue;
            }
            Tok::Name(m) if m == "mod" && name(i + 1).is_some() => {
                let n = name(i + 1).unwrap().to_string();
                let test = test_here || n == "tests";
                if is(i + 2, Tok::Punct(';')) {
                    let path = s.path_attr.take();
                    out.decls.push(Decl { within: s.module.clone(), name: n, path, test });
                    s.test_item = false;
                    i += 3;
                    continue;
                }
                s.test_item = test;
                s.inline_mod = Some(n);
                i += 2;
                continue;
            }
            Tok::Name(u) if u == "use" => {
                let mut paths = Vec::new();
                i += 1;
                use_tree(&t, &mut i, Vec::new(), &mut paths);
                for path in paths {
                    out.paths.push(Written {
                        within: s.module.clone(),
                        path,
                        used: true,
                        test: test_here,
                        line,
                    });
                }
                while i < t.len() && !is(i, Tok::Punct(';')) {
                    i += 1;
                }
                s.test_item = false;
                s.path_attr = None;
            }
            Tok::Name(first)
                if matches!(first.as_str(), "crate" | "super" | "self")
                    && is(i + 1, Tok::Colons)
                    && !(i > 0 && is(i - 1, Tok::Colons)) =>
            {
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while is(j, Tok::Colons) {
                    let Some(n) = name(j + 1) else { break };
                    path.push(n.to_string());
                    j += 2;
                }
                out.paths.push(Written {
                    within: s.module.clone(),
                    path,
                    used: false,
                    test: test_here,
                    line,
                });
                i = j;
                continue;
            }
            Tok::Punct('(') | Tok::Punct('[') => s.nesting += 1,
            Tok::Punct(')') | Tok::Punct(']') => s.nesting = s.nesting.saturating_sub(1),
            Tok::Punct(';') if s.nesting == 0 => {
                s.test_item = false;
                s.path_attr = None;
            }
            Tok::Punct('{') => {
                let mut module = s.module.clone();
                if let Some(m) = s.inline_mod.take() {
                    module.push(m);
                    out.inline.push(module.clone());
                }
                // The item's body: the item ends where it closes.
                s.test_item = false;
                s.path_attr = None;
                scopes.push(Scope { module, test: test_here, ..Scope::default() });
            }
            Tok::Punct('}') if scopes.len() > 1 => {
                scopes.pop();
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The module `path`, written in module `within`, names: the longest module
/// of `modules` its names lead to (the crate root is the empty path). None
/// for a path that leaves the crate: another crate's, or a bare name that is
/// no submodule of `within` (outside a `use` tree only `crate`, `super` and
/// `self` paths are taken).
fn resolve(within: &[String], path: &[String], used: bool, modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let (mut at, mut rest): (ModPath, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (within.to_vec(), &path[1..]),
        Some("super") => {
            let mut at = within.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|n| n == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
            (at, rest)
        }
        Some(first) if used && modules.contains(&[within, &[first.to_string()][..]].concat()) => {
            (within.to_vec(), path)
        }
        _ => return None,
    };
    while let Some(n) = rest.first() {
        let next = [at.as_slice(), std::slice::from_ref(n)].concat();
        if !modules.contains(&next) {
            break;
        }
        at = next;
        rest = &rest[1..];
    }
    Some(at)
}

/// One import: the file and line, the module it stands in, the module it
/// names, and whether only a test build compiles it.
#[derive(Clone, Debug)]
struct Import {
    file: PathBuf,
    line: usize,
    from: ModPath,
    to: ModPath,
    test: bool,
}

/// The file of a `mod` declaration made in `file` (module `file_mod`): the
/// compiler's rule (`NAME.rs` or `NAME/mod.rs` in the folder of the file's
/// submodules, inline modules adding their folders) or its `#[path]`.
fn file_of(file: &Path, file_mod: &[String], decl: &Decl) -> PathBuf {
    let here = file.parent().unwrap();
    if let Some(p) = &decl.path {
        return here.join(p);
    }
    let stem = file.file_stem().unwrap().to_string_lossy();
    let mut dir =
        if matches!(stem.as_ref(), "mod" | "lib" | "main") { here.to_path_buf() } else { here.join(&*stem) };
    for inline in &decl.within[file_mod.len()..] {
        dir = dir.join(inline);
    }
    let flat = dir.join(format!("{}.rs", decl.name));
    if flat.exists() {
        flat
    } else {
        dir.join(&decl.name).join("mod.rs")
    }
}

/// Every module of the crate at `src/lib.rs` and every import of its files.
fn crate_imports(src: &Path) -> (BTreeSet<ModPath>, Vec<PathBuf>, Vec<Import>) {
    let mut modules = BTreeSet::from([ModPath::new()]);
    let mut files = Vec::new();
    let mut written: Vec<(PathBuf, Written)> = Vec::new();
    let mut todo = vec![(src.join("lib.rs"), ModPath::new(), false)];
    while let Some((file, module, test)) = todo.pop() {
        let code = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let reading = read(&code, &module, test);
        for decl in &reading.decls {
            let path = [decl.within.as_slice(), std::slice::from_ref(&decl.name)].concat();
            modules.insert(path.clone());
            todo.push((file_of(&file, &module, decl), path, decl.test));
        }
        modules.extend(reading.inline);
        written.extend(reading.paths.into_iter().map(|w| (file.clone(), w)));
        files.push(file);
    }
    let imports = (written.into_iter())
        .filter_map(|(file, w)| {
            let to = resolve(&w.within, &w.path, w.used, &modules)?;
            Some(Import { file, line: w.line, from: w.within, to, test: w.test })
        })
        .collect();
    files.sort();
    files.dedup();
    (modules, files, imports)
}

/// The circles among the submodules of each module, from the imports that a
/// build without tests compiles: (module, the submodules of one circle).
fn circles(imports: &[Import]) -> BTreeSet<(String, Vec<String>)> {
    let mut graph: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for im in imports.iter().filter(|im| !im.test) {
        let k = im.from.iter().zip(&im.to).take_while(|(a, b)| a == b).count();
        if k >= 1 && k < im.from.len() && k < im.to.len() {
            let parent = im.from[..k].to_vec();
            (graph.entry(parent).or_default().entry(im.from[k].clone()).or_default())
                .insert(im.to[k].clone());
        }
    }
    let mut out = BTreeSet::new();
    for (parent, edges) in &graph {
        let reach = |a: &str| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![a.to_string()];
            while let Some(n) = todo.pop() {
                for m in edges.get(&n).into_iter().flatten() {
                    if seen.insert(m.clone()) {
                        todo.push(m.clone());
                    }
                }
            }
            seen
        };
        for a in edges.keys() {
            let from_a = reach(a);
            if !from_a.contains(a) {
                continue;
            }
            let circle: Vec<String> = from_a.iter().filter(|b| reach(b).contains(a)).cloned().collect();
            out.insert((parent.join("::"), circle));
        }
    }
    out
}

#[test]
fn every_import_runs_down_the_stack_that_architecture_md_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let stack = stack(&doc);
    let (modules, files, imports) = crate_imports(&src);
    // Every module of lib.rs stands in the stack, and only those.
    let top: BTreeSet<&str> = modules.iter().filter(|m| m.len() == 1).map(|m| m[0].as_str()).collect();
    assert!(top.len() > 20, "{top:?}");
    for m in &top {
        assert!(stack.contains_key(*m), "module {m} is not in ARCHITECTURE.md's stack");
    }
    for m in stack.keys() {
        assert!(top.contains(m.as_str()), "ARCHITECTURE.md's stack names {m}, which lib.rs does not declare");
    }
    // The module tree reaches every file of src/ (main.rs is the binary's).
    let unread: Vec<_> = (crate::util::files_under(&src, "rs").into_iter())
        .filter(|f| !files.contains(f) && f != &src.join("main.rs"))
        .collect();
    assert!(unread.is_empty(), "files no `mod` declaration reaches: {unread:?}");
    let mut wrong = Vec::new();
    let (mut real, mut test_only) = (0, 0);
    for im in &imports {
        let (Some(from), Some(to)) = (im.from.first(), im.to.first()) else { continue };
        if from == to {
            continue;
        }
        if im.test {
            test_only += 1;
            continue;
        }
        real += 1;
        if stack[to] <= stack[from] {
            let rel = im.file.strip_prefix(root).unwrap().display();
            wrong.push(format!("{rel}:{}: {} takes from {}, not below it", im.line, from, im.to.join("::")));
        }
    }
    assert!(
        real > 300 && test_only > 50,
        "{real} imports and {test_only} test-only ones read: the reader is broken"
    );
    wrong.dedup();
    assert!(wrong.is_empty(), "imports running up or sideways:\n{}", wrong.join("\n"));
    let found = circles(&imports);
    let allowed: BTreeSet<(String, Vec<String>)> = (ALLOWED_CIRCLES.iter())
        .map(|(m, c)| (m.to_string(), c.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert!(found.is_subset(&allowed), "circles among submodules: {:?}", found.difference(&allowed));
    assert!(
        allowed.is_subset(&found),
        "allowed circles that are gone (remove them): {:?}",
        allowed.difference(&found)
    );
}

/// The imports of `code` written in module `within` (with the modules of a
/// small crate), as `(module named, line, test-only)`.
fn imports_of(code: &str, within: &[&str]) -> Vec<(String, usize, bool)> {
    let modules: BTreeSet<ModPath> = ["", "flows", "read", "time", "verdict", "report", "report::csv"]
        .iter()
        .chain(&["report::schema", "report::table", "report::csv::inner"])
        .map(|m| m.split("::").filter(|s| !s.is_empty()).map(String::from).collect())
        .collect();
    let within: ModPath = within.iter().map(|s| s.to_string()).collect();
    (read(code, &within, false).paths.iter())
        .filter_map(|w| {
            let to = resolve(&w.within, &w.path, w.used, &modules)?;
            Some((to.join("::"), w.line, w.test))
        })
        .collect()
}

#[test]
fn the_stack_reader_sees_groups() {
    let doc = "The stack, top first: ...\n\n```text\na > b c\n  > d\n```\n";
    let s = stack(doc);
    assert_eq!((s["a"], s["b"], s["c"], s["d"]), (0, 1, 1, 2));
}

#[test]
fn a_use_list_over_several_lines_gives_each_module() {
    let code = "use crate::{\n    flows::Flow,\n    read, // crate::report\n    time::{rfc3339},\n};\n";
    let got = imports_of(code, &["verdict", "rewrite"]);
    assert_eq!(got, [("flows".into(), 1, false), ("read".into(), 1, false), ("time".into(), 1, false)]);
}

#[test]
fn a_nested_group_gives_each_module_it_names() {
    let code = "pub use crate::{report::{schema::{self, WireName}, table::Style}, verdict as v, *};\n";
    let got: Vec<String> = imports_of(code, &["why"]).into_iter().map(|(m, _, _)| m).collect();
    assert_eq!(got, ["report::schema", "report::schema", "report::table", "verdict", ""]);
}

#[test]
fn super_and_self_paths_name_the_module_they_resolve_to() {
    let code = "use super::schema::WireName;\nuse super::{table, super::time};\n\
                fn f() { let x = super::super::flows::Flow::new(); self::inner::g(crate::read::x()); }\n\
                use inner::h;\nuse serde::Serialize;\n";
    let got = imports_of(code, &["report", "csv"]);
    let want = [
        ("report::schema", 1),
        ("report::table", 2),
        ("time", 2),
        ("flows", 3),
        ("report::csv::inner", 3),
        ("read", 3),
        ("report::csv::inner", 4),
    ];
    assert_eq!(got, want.map(|(m, l)| (m.to_string(), l, false)));
}

#[test]
fn test_only_imports_are_kept_apart() {
    let code = "#[cfg(test)]\nuse crate::time;\n\
                #[cfg(all(test, feature = \"x\"))]\nfn fixture() -> crate::flows::Flow { crate::read::x() }\n\
                mod tests { use crate::verdict::Findings; }\n\
                #[cfg(test)]\nmod helpers;\n\
                #[test]\nfn t() { let _ = crate::report::x(); }\n\
                #[cfg(not(test))]\nuse crate::read;\n\
                fn real() -> [u8; 4] { crate::flows::f() }\n";
    let got = imports_of(code, &["report", "csv"]);
    let test_only: Vec<&str> = got.iter().filter(|g| g.2).map(|g| g.0.as_str()).collect();
    let real: Vec<&str> = got.iter().filter(|g| !g.2).map(|g| g.0.as_str()).collect();
    assert_eq!(test_only, ["time", "flows", "read", "verdict", "report"]);
    assert_eq!(real, ["read", "flows"]);
    let decls = read(code, &["report".into(), "csv".into()], false).decls;
    assert!(decls.len() == 1 && decls[0].name == "helpers" && decls[0].test);
}

#[test]
fn comments_strings_and_characters_hold_no_import() {
    let code = "/* use crate::report; /* nested */ crate::read */\nlet a = \"crate::time {\";\n\
                let b = r#\"crate::flows\"#; let c = '{'; let d = b'}'; let e = '\\'';\n\
                fn f<'a>(x: &'a str) { crate::verdict::g() }\n";
    assert_eq!(imports_of(code, &["why"]), [("verdict".to_string(), 4, false)]);
}

#[test]
fn a_mod_declaration_names_the_file_the_compiler_reads() {
    let decl = |within: &[&str], name: &str, path: Option<&str>| Decl {
        within: within.iter().map(|s| s.to_string()).collect(),
        name: name.into(),
        path: path.map(String::from),
        test: false,
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let report = src.join("report/mod.rs");
    let m = ["report".to_string()];
    assert_eq!(file_of(&report, &m, &decl(&["report"], "csv", None)), src.join("report/csv.rs"));
    assert_eq!(
        file_of(&report, &m, &decl(&["report"], "parquet", Some("parquet_off.rs"))),
        src.join("report/parquet_off.rs")
    );
    assert_eq!(file_of(&src.join("lib.rs"), &[], &decl(&[], "report", None)), src.join("report/mod.rs"));
    let csv = src.join("report/csv.rs");
    let inner = decl(&["report", "csv", "a"], "b", None);
    assert_eq!(file_of(&csv, &["report".into(), "csv".into()], &inner), src.join("report/csv/a/b/mod.rs"));
}
