//! What an installed tuplecorr brings besides the report (issue 35): the man
//! page and shell completions written by `tuplecorr generate`, checked
//! against `--help` (every long option of every subcommand is in them), the
//! `generate` subcommand never taking a capture file's place, and `--version`.

use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run(args: &[&str]) -> String {
    let o = bin().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    stdout(&o)
}

/// The subcommands `tuplecorr --help` lists (`help` left out).
fn subcommands() -> Vec<String> {
    let help = run(&["--help"]);
    let list = help.split("Commands:\n").nth(1).expect("--help lists its commands");
    list.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// The long options an options line of `--help` starts with (`-q, --quiet`, `--format <FORMAT>`).
fn long_options(help: &str) -> Vec<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split([' ', ',']).find(|w| w.starts_with("--") && w.len() > 2))
        .map(String::from)
        .collect()
}

#[test]
fn generate_writes_a_man_page_and_completions_that_name_every_long_option_of_every_subcommand() {
    let man = run(&["generate", "man"]).replace("\\-", "-");
    assert!(man.contains(".TH tuplecorr 1"), "{}", &man[..man.len().min(400)]);
    let bash = run(&["generate", "bash"]);
    assert!(bash.contains("complete -F _tuplecorr"), "bash completion registers itself");
    let zsh = run(&["generate", "zsh"]);
    assert!(zsh.starts_with("#compdef tuplecorr"), "zsh completion: {}", &zsh[..zsh.len().min(80)]);
    let fish = run(&["generate", "fish"]);
    assert!(fish.contains("complete -c tuplecorr"), "fish completion");

    let subs = subcommands();
    assert_eq!(subs, ["inspect", "compare", "preview", "generate"]);
    let mut checked = 0;
    for sub in [None].into_iter().chain(subs.iter().map(Some)) {
        let help = match sub {
            None => run(&["--help"]),
            Some(s) => run(&[s, "--help"]),
        };
        let options = long_options(&help);
        assert!(options.contains(&"--help".to_string()), "{sub:?}: {options:?}");
        for option in options {
            let form = sub.map_or("the main form".into(), |s| format!("tuplecorr {s}"));
            assert!(man.contains(&option), "the man page lacks {option} of {form}");
            assert!(bash.contains(&option), "the bash completion lacks {option} of {form}");
            for (shell, text) in [("zsh", &zsh), ("fish", &fish)] {
                let bare = option.trim_start_matches('-');
                assert!(text.contains(bare), "the {shell} completion lacks {option} of {form}");
            }
            checked += 1;
        }
        if let Some(s) = sub {
            assert!(man.contains(&format!(".SH \"TUPLECORR {}\"", s.to_uppercase())), "man section of {s}");
        }
    }
    assert!(checked > 40, "{checked} long options checked");
    // Choices are completed by value.
    assert!(bash.contains("table csv json ndjson html parquet"), "bash completes --format's values");
}

#[test]
fn generate_refuses_anything_else_with_its_choices() {
    let o = bin().args(["generate", "powershell"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("man, bash, zsh, fish"), "{err}");
}

/// A capture literally named `generate` (a plausible name for a generated
/// capture) stays a capture of the main form unless `generate` is followed
/// by exactly one of its words.
#[test]
fn a_capture_file_named_generate_is_still_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab/reject");
    std::fs::copy(lab.join("decap.pcap"), dir.path().join("generate")).unwrap();
    std::fs::copy(lab.join("egress.pcap"), dir.path().join("egress.pcap")).unwrap();
    let at = |args: &[&str]| bin().args(args).current_dir(dir.path()).output().unwrap();
    let want = stdout(&at(&["--quiet", "./generate", "egress.pcap"]));
    assert!(want.contains("generate            →  egress"), "{want}");
    for args in [
        &["generate", "egress.pcap", "--quiet"][..],
        &["--quiet", "generate", "egress.pcap"],
        &["generate", "egress.pcap", "--format", "table", "-q"],
    ] {
        let o = at(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(stdout(&o), want, "{args:?}");
    }
    let csv = stdout(&at(&["generate", "egress.pcap", "--format", "csv"]));
    assert!(csv.starts_with("request,proto,first_seen,client,service,generate_client,"), "{csv}");
    // `generate WHAT` alone is still the subcommand, file or not.
    assert!(stdout(&at(&["generate", "man"])).contains(".TH tuplecorr 1"));
    // Without such a file, `generate` with a capture is a usage error naming the choices.
    std::fs::remove_file(dir.path().join("generate")).unwrap();
    let o = at(&["generate", "egress.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("possible values: man, bash, zsh, fish"));
}

#[test]
fn version_names_version_commit_and_features() {
    let v = run(&["--version"]);
    let features = if cfg!(feature = "parquet") { "features: parquet)" } else { "features: none)" };
    let head = format!("tuplecorr {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(v.starts_with(&head) && v.trim_end().ends_with(features), "{v}");
    let commit = v[head.len()..].split(',').next().unwrap();
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{v}"
    );
}
