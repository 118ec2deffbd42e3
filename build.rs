//! Build facts for `tuplecorr --version`: the git commit the binary was built
//! from (`git rev-parse --short HEAD`; "unknown" without git or outside a
//! checkout, e.g. a crates.io tarball; `TUPLECORR_COMMIT` overrides it) and the
//! cargo features enabled. Never fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TUPLECORR_COMMIT");
    let commit = match std::env::var("TUPLECORR_COMMIT") {
        Ok(c) if !c.is_empty() => c,
        _ => {
            // Rebuild when HEAD moves: HEAD itself, the branch it names, packed refs.
            if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
                let common = git(&["rev-parse", "--git-common-dir"]).map(PathBuf::from);
                let head = dir.join("HEAD");
                let mut watch = vec![head.clone()];
                if let Some(name) = std::fs::read_to_string(&head)
                    .ok()
                    .and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_string()))
                {
                    watch.push(dir.join(&name));
                    if let Some(c) = &common {
                        watch.push(c.join(&name));
                        watch.push(c.join("packed-refs"));
                    }
                }
                for path in watch.iter().filter(|p| Path::new(p).exists()) {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
            git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into())
        }
    };
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_ascii_lowercase().replace('_', "-"))
        })
        .filter(|f| f != "default")
        .collect();
    features.sort();
    let features = if features.is_empty() { "none".to_string() } else { features.join(",") };
    println!("cargo:rustc-env=TUPLECORR_BUILD=commit {commit}, features: {features}");
}
