//! The Spark job of issue 16 (scripts/spark/tuplecorr_spark.py) in local mode:
//! scripts/spark/test_spark.py runs it on rotated lab captures and a generated
//! set spread over 10 minutes, in uneven shards, and checks with DuckDB that
//! its dataset equals one tuplecorr run over the same files with the same
//! clocks, request by request and column by column, and that a failing shard
//! fails the job naming the shard and quoting tuplecorr. Skips with one line
//! without java, pyspark or duckdb; CI sets [`REQUIRE_SPARK`] so it never skips.

use std::path::Path;
use std::process::Command;

/// Set (CI sets it) to make the test fail, not skip, without java and pyspark.
const REQUIRE_SPARK: &str = "TUPLECORR_REQUIRE_SPARK";

/// Whether java runs and python3 imports pyspark and duckdb; without them the
/// test skips with one line, or fails when [`REQUIRE_SPARK`] is set.
fn spark_available() -> bool {
    let java = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    let python = Command::new("python3")
        .args(["-c", "import pyspark, duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    let required = std::env::var_os(REQUIRE_SPARK).is_some_and(|v| !v.is_empty() && v != "0");
    assert!(
        (java && python) || !required,
        "{REQUIRE_SPARK} is set but java runs: {java}, python3 imports pyspark and duckdb: {python}"
    );
    if !(java && python) {
        let line = "skipped: spark_job_dataset_equals_the_single_run (java, or python3 with pyspark and duckdb, is missing; apt-get install openjdk-17-jre-headless, pip install pyspark duckdb)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    java && python
}

#[test]
fn spark_job_dataset_equals_the_single_run() {
    if !spark_available() {
        return;
    }
    let set = tempfile::tempdir().unwrap();
    // 600 requests, one a second: the script rotates them into 60 s files.
    crate::util::write_spread_mix_set(set.path(), 600, 999_800_000);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/spark/test_spark.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--tuplecorr", env!("CARGO_BIN_EXE_tuplecorr"), "--generated"])
        .arg(set.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}\n{err}");
    for scenario in
        ["masquerade-pod", "udp-icmp", "healthcheck", "syn-retransmit", "concurrent", "dnat-service"]
    {
        assert!(said.contains(&format!("test_spark: {scenario}: ")), "{scenario} not checked: {said}");
    }
    assert!(said.contains("test_spark: generated: 600 requests, "), "{said}");
    assert!(
        said.contains("a failing shard fails the job with its bounds and tuplecorr's stderr: ok"),
        "{said}"
    );
    assert_eq!(said.matches(": ok\n").count(), 8, "{said}");
}
