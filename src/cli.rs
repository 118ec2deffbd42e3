//! The command line (ARCHITECTURE.md "The command line"): clap derive `Args`
//! turned into a plain `run::Run` before any work. Takes the arguments;
//! gives a `Run` or a `UsageError`. The only clap user: nothing else sees a
//! clap type, and the value names of every choice come from the type itself
//! (`report::Choice`, written beside each choice's type). `UsageError`, a
//! command line that makes no sense, is here.

use crate::compare::CompareFormat;
use crate::compare::{Expectation, SourceWant};
use crate::correlate::CorrelateConfig;
use crate::drive::shard::Shard;
use crate::drive::Config;
use crate::flows::FlowConfig;
use crate::read::{CaptureSpec, ReadConfig, Source};
use crate::report::when::{TimeFormat, TimeStyle, Zone};
use crate::report::wire::WireName;
use crate::report::{Choice, FailOn, Format};
use crate::report::{Filter, TimeBound};
use crate::run::CompareSide;
use crate::run::{ColorChoice, InspectFormat, Output};
use crate::run::{CompareRun, CorrelateRun, Generate, InspectRun, Run};
use crate::verdict::{OutcomeKind, ReplyPath};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::io::{self, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// A command line that parsed but makes no sense (exit status 2).
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<crate::output::Refused> for UsageError {
    fn from(e: crate::output::Refused) -> UsageError {
        UsageError(e.0)
    }
}

/// A shard boundary: RFC 3339 (`2026-11-30T10:00:00Z`, fraction and offset
/// allowed) or seconds since the Unix epoch with an optional fraction
/// (`1795995638.25`), read exactly (no floating point).
pub fn parse_instant_ns(text: &str) -> Option<i64> {
    let t = text.trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if digits(whole) && (frac.is_empty() && !t.ends_with('.') || digits(frac) && frac.len() <= 9) {
        let secs: i64 = whole.parse().ok()?;
        let mut ns: i64 = 0;
        for b in frac.bytes().chain(std::iter::repeat(b'0')).take(9) {
            ns = ns * 10 + i64::from(b - b'0');
        }
        return secs.checked_mul(1_000_000_000)?.checked_add(ns);
    }
    crate::time::parse_rfc3339(t)
}

const AFTER_HELP: &str = "\
Captures are given in path order, client side first (2 to 8; one alone when it holds several
observation points, as tcpdump -i any on a forwarding host does): LABEL=PATH, PATH, or - for
standard input.
Labels default to the file name without .gz/.pcap/.pcapng/.cap.

Time shards: --shard-start/--shard-end report the requests whose first packet at capture 1 lies in
[start, end), reading only the rotated files they need; join shards on (proto, capture 1 client, raw_time).

Exit status: 0 report written (warnings allowed); 1 --fail-on matched;
2 usage error, or a capture that cannot be opened or is not a capture at all.";

/// `tuplecorr --version`: the version, the commit it was built from and its
/// cargo features (from build.rs), e.g. `0.1.0 (commit 6eb390d, features: parquet)`.
pub const VERSION_LINE: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("TUPLECORR_BUILD"), ")");

/// Correlate one request across captures taken at several points of a path.
#[derive(Debug, Parser)]
#[command(name = "tuplecorr", version = VERSION_LINE, about, after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub correlate: CorrelateArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Describe each capture: format, interfaces, link types, packets, protocols, warnings.
    Inspect(InspectArgs),
    /// Compare two runs (reports or comma-separated capture lists) for a change record.
    Compare(CompareArgs),
    /// Before a change: the captures of a run, and the ConfigMap or ruleset proposed for a host
    /// (--masq-agent-after, --rules-after): each request's source after it, and who will see
    /// another sender.
    Preview(Box<PreviewArgs>),
    /// Write the man page or a shell's completion script to standard output.
    Generate(GenerateArgs),
}

/// A clap value parser for a `Choice`: its possible values are the names
/// its type writes once.
fn choice<T: Choice>() -> impl clap::builder::TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::NAMES.iter().map(|(name, _)| *name))
        .map(|name| T::from_name(&name).expect("clap accepts only the listed names"))
}

/// Options of the main form.
#[derive(Debug, clap::Args, Default)]
#[group(skip)]
#[command(group(clap::ArgGroup::new("windowed").args(["stream", "follow"]).multiple(true)))]
pub struct CorrelateArgs {
    /// Captures in path order, client side first: LABEL=PATH, PATH or -.
    #[arg(value_name = "CAPTURE")]
    pub captures: Vec<String>,
    /// Output format (default table; inferred from -o's extension when absent).
    #[arg(long, value_parser = choice::<Format>())]
    pub format: Option<Format>,
    /// Write the report to FILE (atomically: temporary file, then rename).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print only the summary.
    #[arg(long)]
    pub summary: bool,
    /// Also write one pcapng of all captures merged in corrected-time order, each
    /// packet of a request annotated with a comment: `frame.comment contains "request 17 at "`
    /// shows request 17 at every point (the ` at ` keeps out requests 170-179).
    #[arg(long, value_name = "FILE")]
    pub pcapng: Option<PathBuf>,
    /// With --pcapng: leave out packets that belong to no reported request.
    #[arg(long, requires = "pcapng")]
    pub pcapng_only_requests: bool,
    /// Also list flows of later captures that matched no request.
    #[arg(long)]
    pub all: bool,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
    /// Colour the table: auto honours NO_COLOR and terminals.
    #[arg(long, value_parser = choice::<ColorChoice>(), default_value = "auto")]
    pub color: Option<ColorChoice>,
    /// Worker threads, 1 to 1024 (default: one per core).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub threads: Option<i64>,
    /// Clock offset of a capture relative to capture 1 (positive: it runs ahead), within ±315360000
    /// seconds (10 years); overrides the estimate. LABEL may be a side's (node(out)): its
    /// capture's one clock.
    #[arg(long, value_name = "LABEL=SECONDS")]
    pub offset: Vec<String>,
    /// Largest clock offset searched, seconds (0 to 31536000, a year).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, allow_negative_numbers = true)]
    pub max_offset: f64,
    /// Time tolerance after clock correction, ms, 0 to 60000 (default: 5 × offset spread + 1 ms, at
    /// most 200 ms).
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    pub tolerance: Option<f64>,
    /// A UDP exchange silent for longer than this is split, seconds (more than 0, at most 31536000).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, allow_negative_numbers = true)]
    pub udp_idle: f64,
    /// Exit 1 when any reported request has one of these (comma-separated).
    #[arg(long, value_parser = choice::<FailOn>(), value_delimiter = ',', value_name = "LIST")]
    pub fail_on: Vec<FailOn>,
    /// Report only requests that involve this address at any capture (repeatable).
    #[arg(long, value_name = "ADDR")]
    pub host: Vec<IpAddr>,
    /// Report only requests with an address in this network at any capture.
    #[arg(long, value_name = "CIDR")]
    pub net: Vec<String>,
    /// Report only requests with this port at any capture.
    #[arg(long, value_name = "N")]
    pub port: Vec<u16>,
    /// Report only requests of this protocol.
    #[arg(long, value_parser = ["tcp", "udp", "icmp"])]
    pub proto: Vec<String>,
    /// Report only requests first seen at or after this time (RFC 3339, or seconds from the first packet).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Report only requests first seen before this time (RFC 3339, or seconds from the first packet).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Name addresses from FILE (repeatable): /etc/hosts lines, a CSV address,name, or the
    /// output of `kubectl get pods -A -o wide`, `kubectl get nodes -o wide`, `kubectl get svc -A`
    /// (text or -o json). Names appear beside addresses, never instead of them.
    #[arg(long, value_name = "FILE")]
    pub names: Vec<PathBuf>,
    /// The nat rules of a host, WHERE=FILE (repeatable): `iptables-save`, `ip6tables-save` or
    /// `nft [-j] list ruleset` output. WHERE: a boundary as reports print it (egress->backend) or the
    /// label of a split capture (node); WHERE@FILE for one host of a point captured on several
    /// (the host whose files include FILE). Each change there names the rule that made it.
    #[arg(long, value_name = "WHERE=FILE")]
    pub rules: Vec<String>,
    /// The conntrack table or events of a host, WHERE=FILE (repeatable): `conntrack -L` or
    /// `conntrack -E [-o timestamp,extended]` output. Each change there names the entry that records it.
    #[arg(long, value_name = "WHERE=FILE")]
    pub conntrack: Vec<String>,
    /// The ip-masq-agent ConfigMap of a host, WHERE=FILE: `kubectl get cm -n kube-system
    /// ip-masq-agent -o yaml` (or json), or its config key alone; checked against the host's
    /// IP-MASQ-AGENT chain (with --rules) and the packets (intent findings).
    #[arg(long, value_name = "WHERE=FILE")]
    pub masq_agent: Vec<String>,
    /// The routes of a host, WHERE=FILE: `ip rule`, `ip -6 rule`, `ip route show table all`,
    /// `ip -6 route show table all` output, together in one file. A request or
    /// reply lost inside that host is checked against them: no route, a refusing route, the
    /// reverse-path filter (with --sysctl), a dead next hop (with --neigh).
    #[arg(long, value_name = "WHERE=FILE")]
    pub routes: Vec<String>,
    /// The sysctls of a host, WHERE=FILE: `sysctl -a` output, or just its `rp_filter`,
    /// `src_valid_mark` and `ip_forward` lines (the reverse-path filter, forwarding).
    #[arg(long, value_name = "WHERE=FILE")]
    pub sysctl: Vec<String>,
    /// The neighbours of a host, WHERE=FILE: `ip neigh` output (a next hop FAILED or INCOMPLETE).
    #[arg(long, value_name = "WHERE=FILE")]
    pub neigh: Vec<String>,
    /// Preview a masquerade change, WHERE=FILE: the ip-masq-agent ConfigMap proposed for that
    /// host. Each request that crossed it gets the source it would leave with after the change
    /// (JSON `predicted`), and each destination that would see another sender a `blast_radius` line.
    #[arg(long, value_name = "WHERE=FILE")]
    pub masq_agent_after: Vec<String>,
    /// Preview a ruleset change, WHERE=FILE: the host's nat rules as edited (`iptables-save`,
    /// `nft [-j] list ruleset`). Like --masq-agent-after, from the rule each request would meet.
    #[arg(long, value_name = "WHERE=FILE")]
    pub rules_after: Vec<String>,
    /// With --masq-agent-after or --rules-after: also write what the change will do, per service,
    /// client and host, to FILE (JSON, atomically), for `tuplecorr compare --expectations FILE` to
    /// prove on captures taken after the change (or, with --rollback, after rolling it back).
    #[arg(long, value_name = "FILE")]
    pub expectations: Option<PathBuf>,
    /// Every file of a host at once, WHERE=DIR (repeatable): the folder `tuplecorr generate
    /// collect` writes on the host (its rules, conntrack, routes, sysctl, neighbours, ConfigMap).
    #[arg(long, value_name = "WHERE=DIR")]
    pub host_dir: Vec<String>,
    /// Time zone of the table, summary and CSV: UTC, local, ±HH:MM or Area/City (JSON stays UTC).
    #[arg(long, value_name = "ZONE", allow_hyphen_values = true)]
    pub tz: Option<String>,
    /// Times in the CSV: rfc3339 (default), spreadsheet (YYYY-MM-DD HH:MM:SS.ffffff) or epoch seconds.
    #[arg(long, value_parser = choice::<TimeFormat>())]
    pub time_format: Option<TimeFormat>,
    /// Table columns in this order, comma-separated, as `ps -o`: request, proto, service, time,
    /// hops, source, reply, outcome, match, identity, all, or a capture label (default
    /// request,service,hops,reply,outcome,match; on a terminal, without this option, the columns
    /// that fit its width: request,service,source,reply,outcome). A `tcpdump -i any` capture split
    /// into its sides: node(out) names one, node both.
    #[arg(long, value_name = "LIST")]
    pub columns: Option<String>,
    /// Also write the warnings to FILE (CSV when it ends in .csv, else the lines printed on stderr).
    #[arg(long, value_name = "FILE")]
    pub warnings_to: Option<PathBuf>,
    /// Report only the requests whose first packet at capture 1 (its own clock) is at or after
    /// TIME (RFC 3339 or epoch seconds), reading only the files they need; with --shard-end.
    #[arg(long, value_name = "TIME", requires = "shard_end")]
    pub shard_start: Option<String>,
    /// ... and before TIME (RFC 3339 or epoch seconds); with --shard-start.
    #[arg(long, value_name = "TIME", requires = "shard_start")]
    pub shard_end: Option<String>,
    /// With --shard-start/--shard-end: how far outside the shard files are still read, seconds
    /// (0 to 31536000).
    #[arg(long, value_name = "SECONDS", requires = "shard_start", allow_negative_numbers = true)]
    pub shard_margin: Option<f64>,
    /// Use the clock offsets, spreads and boundary delays of this tuplecorr JSON report (of the
    /// same captures) instead of estimating them: shards then union exactly to that run.
    #[arg(long, value_name = "REPORT")]
    pub clocks_from: Option<PathBuf>,
    /// Read each capture once and correlate window by window of capture 1's time, writing each
    /// window's requests as soon as they are known: memory grows with a window's flows, not with
    /// the captures' length (for hours of captures). Every format but HTML; the same requests and
    /// numbers as without it, clocks estimated from the first window.
    #[arg(long)]
    pub stream: bool,
    /// With --stream or --follow: the window, seconds of capture 1's time, 1 to 31536000 (default
    /// 300; 1 with --follow).
    #[arg(long, value_name = "SECONDS", requires = "windowed", allow_negative_numbers = true)]
    pub stream_window: Option<f64>,
    /// With --stream or --follow: how long the stream waits for a connection still open, after its
    /// last packet and at most past its window (and margin), before it reports the window's requests
    /// with what was seen by then, saying which, 0 to 31536000 (default 600; 10 with --follow).
    /// Longer waits hold the windows after it in memory meanwhile.
    #[arg(long, value_name = "SECONDS", requires = "windowed", allow_negative_numbers = true)]
    pub stream_hold: Option<f64>,
    /// Correlate captures that are still being written (FIFOs, `<(ssh host tcpdump -U -w -)`, `-`,
    /// files tcpdump is writing): each request is written as a table row (fixed widths), a CSV
    /// row or an NDJSON line seconds after it ended, and flushed; the run ends when every input has ended or been silent for
    /// --follow-idle, on Ctrl-C/SIGTERM, or at the first request matching --fail-on; the summary
    /// follows. One input per point: a file, a pipe, or a quoted pattern of rotated files
    /// ('decap=decap.pcap*', tcpdump -C/-G) followed from file to file.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: an input that gives no byte for this long is taken as stopped, seconds, 1 to
    /// 31536000 (default 60).
    #[arg(long, value_name = "SECONDS", requires = "follow", allow_negative_numbers = true)]
    pub follow_idle: Option<f64>,
    /// Test-only: split uncompressed captures into chunks of this many bytes.
    #[arg(long, hide = true, value_name = "BYTES")]
    pub chunk_bytes: Option<u64>,
}

const INSPECT_AFTER_HELP: &str = "\
Each capture is read by its own task. Table (default) or JSON: an array with one object per capture read
(file, format, byte_order, interfaces, packets, first_time, last_time, protocols, truncated, undecodable,
top_flows, warnings). Warnings go to stderr too.

Exit status: 0 every capture was read (warnings allowed); 2 a capture could not be opened or is not a
capture at all: it is named on stderr and left out of the report, the other captures are still reported.";

/// Options of `tuplecorr inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = INSPECT_AFTER_HELP)]
pub struct InspectArgs {
    /// Captures to describe: LABEL=PATH, PATH or - for standard input.
    #[arg(value_name = "CAPTURE", required = true)]
    pub captures: Vec<String>,
    /// Output format.
    #[arg(long, value_parser = choice::<InspectFormat>(), default_value = "table")]
    pub format: InspectFormat,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
}

const COMPARE_AFTER_HELP: &str = "\
Requests pair by service (protocol + server endpoint at capture 1) and client (its address at
capture 1, not the port): a client or service on one side only is reported as only before/after.
Expectations are checked on the after run and may be combined:
  --expect-source 198.19.3.17 --at backend    --expect-source 198.19.0.0/16    --expect-source preserved
  --expect-unchanged (eviction retest)         --expect-reply same-path         --expect-outcome completed
  --expectations exp.json: what `tuplecorr preview --expectations exp.json` predicted, per service and
  client, at the host changed (--rollback: the sources of before the change, after rolling it back)

A service and client got worse (a regression) when a request of it completed before and one after
ended no-reply, reset, icmp-error, handshake-only or data-stopped, or a reply came back on the same
path before and one after was lost, missing or went around a capture. midstream is not ranked; a
failure already seen before counts only when nothing of the pairing succeeds after.

Exit status: 0 every expectation holds for every matching request (or none was given) and nothing
got worse (or --allow-regressions);
1 an expectation does not hold, or a regression (the requests are listed in the report and on stderr);
2 usage error, or a side or the expectations file that cannot be read.";

/// Options of `tuplecorr compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = COMPARE_AFTER_HELP)]
pub struct CompareArgs {
    /// Before: a tuplecorr report (JSON, NDJSON, CSV or Parquet) or a comma-separated list of captures.
    pub before: String,
    /// After: a tuplecorr report (JSON, NDJSON, CSV or Parquet) or a comma-separated list of captures.
    pub after: String,
    /// Output format: table (the change-record block as text, the default), markdown (the same block to
    /// paste into a change record), csv, json or ndjson; inferred from -o's extension when absent.
    #[arg(long, value_parser = choice::<CompareFormat>())]
    pub format: Option<CompareFormat>,
    /// Write the comparison to FILE (atomically: temporary file, then rename).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress bars (when a side is captures).
    #[arg(short, long)]
    pub quiet: bool,
    /// Expect every request after the change to have this source at --at's capture (default: the
    /// last): an address, a network (CIDR) or `preserved` (the client's own address). Repeatable.
    #[arg(long, value_name = "ADDR|CIDR|preserved")]
    pub expect_source: Vec<String>,
    /// The capture label --expect-source looks at: once for all of them, or once per --expect-source in order.
    /// A side of a split capture by its label, node(out).
    #[arg(long, value_name = "LABEL", requires = "expect_source")]
    pub at: Vec<String>,
    /// Expect every service and client to have the same source, reply path and outcome before and after.
    #[arg(long)]
    pub expect_unchanged: bool,
    /// Expect every request after the change to have this reply path.
    #[arg(long, value_name = "PATH", value_parser = PossibleValuesParser::new(wire_names::<ReplyPath>()))]
    pub expect_reply: Option<String>,
    /// Expect every request after the change to end this way.
    #[arg(long, value_name = "OUTCOME", value_parser = PossibleValuesParser::new(wire_names::<OutcomeKind>()))]
    pub expect_outcome: Option<String>,
    /// Report a service and client whose outcome or reply path got worse as a note only: it no
    /// longer makes the exit status 1 (by default it does, with or without expectations).
    #[arg(long)]
    pub allow_regressions: bool,
    /// Expect what a preview predicted: the file --expectations wrote on a run with
    /// --masq-agent-after or --rules-after. Each service and client's requests after the change must
    /// leave the host with the source predicted; one with no request after is "not exercised".
    #[arg(long = "expectations", value_name = "FILE")]
    pub expectations_file: Option<PathBuf>,
    /// With --expectations: expect today's sources instead (the change rolled back: AFTER is the
    /// run after the rollback).
    #[arg(long, requires = "expectations_file")]
    pub rollback: bool,
}

const GENERATE_AFTER_HELP: &str = "\
Install them where man and the shells look:
  tuplecorr generate man  > /usr/local/share/man/man1/tuplecorr.1
  tuplecorr generate bash > /usr/local/share/bash-completion/completions/tuplecorr
  tuplecorr generate zsh  > /usr/local/share/zsh/site-functions/_tuplecorr
  tuplecorr generate fish > ~/.config/fish/completions/tuplecorr.fish
(the .deb package installs all four). On a host the requests crossed, as root:
  tuplecorr generate collect > collect.sh && sh collect.sh node-a
writes the folder --host-dir 'WHERE=node-a' reads. A capture file named generate in the working directory is a
capture, not this command, unless one of man, bash, zsh, fish, collect alone follows it; ./generate always is.";

/// Options of `tuplecorr preview`: those of a run (captures, filters,
/// formats, host files), of which `--masq-agent-after` or `--rules-after`.
#[derive(Debug, clap::Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    pub correlate: CorrelateArgs,
}

/// Options of `tuplecorr generate`.
#[derive(Debug, clap::Args)]
#[command(after_help = GENERATE_AFTER_HELP)]
pub struct GenerateArgs {
    /// What to write: man (the man page, roff), the completion script of bash, zsh or fish, or
    /// collect (a shell script that writes what --host-dir reads, run on the host).
    #[arg(value_name = "WHAT", value_parser = choice::<Generate>())]
    pub what: Generate,
}

/// The name `generate` is renamed to when it names a capture file (see
/// [`command_for`]): nothing a user types.
const GENERATE_HIDDEN: &str = "\u{0}generate";

/// The command line's definition for `argv`. `tuplecorr generate` is the
/// subcommand, except when a file named `generate` is in the working directory
/// (`generate_file`) and what follows is not exactly one of man, bash, zsh,
/// fish (or --help): then `generate` is a capture of the main form
/// (`tuplecorr generate other.pcap`), as it was before the subcommand existed.
pub fn command_for(argv: &[OsString], generate_file: bool) -> clap::Command {
    let cmd = Args::command();
    let words: Vec<Option<&str>> = argv.iter().skip(1).map(|a| a.to_str()).collect();
    let is_generate = |w: &Option<&str>| {
        w.is_some_and(|w| Generate::from_name(w).is_some() || ["--help", "-h"].contains(&w))
    };
    let generate_form = matches!(words.as_slice(), [Some("generate"), what] if is_generate(what));
    if generate_file && words.first() == Some(&Some("generate")) && !generate_form {
        cmd.mut_subcommand("generate", |c| c.name(GENERATE_HIDDEN).hide(true))
    } else {
        cmd
    }
}

/// `tuplecorr generate WHAT`: the man page (the main form's, then each
/// subcommand's synopsis, options and notes) or a completion script, from
/// the clap definition itself.
pub fn generate(what: Generate, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = Args::command();
    cmd.build();
    let shell = match what {
        Generate::Man => return man_page(&cmd, out),
        Generate::Collect => return out.write_all(crate::why::COLLECT.as_bytes()),
        Generate::Bash => clap_complete::Shell::Bash,
        Generate::Zsh => clap_complete::Shell::Zsh,
        Generate::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(shell, &mut cmd, "tuplecorr", out);
    Ok(())
}

/// The man page: clap_mangen's page of the main form, then one section per
/// subcommand holding its own page's sections one level down (one page to
/// install: the subcommand list points down to them, not to other pages).
fn man_page(cmd: &clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let mut main = Vec::new();
    clap_mangen::Man::new(cmd.clone()).manual("tuplecorr manual").render(&mut main)?;
    let mut main = String::from_utf8_lossy(&main).replace(".SH EXTRA", ".SH NOTES");
    let subs: Vec<&clap::Command> =
        cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").collect();
    for sub in &subs {
        let name = sub.get_name();
        main = main.replace(&format!("tuplecorr\\-{name}(1)"), &format!("\\fBtuplecorr {name}\\fR (below)"));
    }
    let main = main.replace("tuplecorr\\-help(1)", "\\fBtuplecorr help\\fR [\\fISUBCOMMAND\\fR]");
    out.write_all(main.as_bytes())?;
    for sub in subs {
        let mut page = Vec::new();
        let man = clap_mangen::Man::new(sub.clone());
        man.render_description_section(&mut page)?;
        man.render_synopsis_section(&mut page)?;
        man.render_options_section(&mut page)?;
        if sub.get_after_help().is_some() {
            man.render_extra_section(&mut page)?;
        }
        writeln!(out, ".SH \"TUPLECORR {}\"", sub.get_name().to_uppercase())?;
        for line in String::from_utf8_lossy(&page).lines() {
            match line.strip_prefix(".SH ") {
                Some("DESCRIPTION") => {}
                Some("EXTRA") => writeln!(out, ".SS NOTES")?,
                Some(title) => writeln!(out, ".SS {title}")?,
                None => writeln!(out, "{line}")?,
            }
        }
    }
    Ok(())
}

/// The wire names of a verdict enum (the values its option accepts).
fn wire_names<T: WireName>() -> Vec<&'static str> {
    T::ALL.iter().map(|v| v.wire()).collect()
}

impl CompareArgs {
    /// The expectations, in the order: sources, unchanged, reply, outcome.
    fn expectations(&self) -> Result<Vec<Expectation>, UsageError> {
        let n = self.expect_source.len();
        if self.at.len() > 1 && self.at.len() != n {
            return Err(UsageError(format!(
                "--at: give it once (for every --expect-source) or once per --expect-source ({n}), not {} times",
                self.at.len()
            )));
        }
        let mut out = Vec::new();
        for (i, text) in self.expect_source.iter().enumerate() {
            let want = if text == "preserved" {
                SourceWant::Preserved
            } else {
                let (a, len) = parse_cidr(text).map_err(|_| {
                    UsageError(format!(
                        "--expect-source {text}: expected an address, a network (198.19.0.0/16) or preserved"
                    ))
                })?;
                SourceWant::Net(a, len)
            };
            let at = self.at.get(if self.at.len() == 1 { 0 } else { i }).cloned();
            out.push(Expectation::Source { want, at });
        }
        if self.expect_unchanged {
            out.push(Expectation::Unchanged);
        }
        if let Some(p) = self.expect_reply.as_deref().and_then(ReplyPath::from_wire) {
            out.push(Expectation::Reply(p));
        }
        if let Some(k) = self.expect_outcome.as_deref().and_then(OutcomeKind::from_wire) {
            out.push(Expectation::Outcome(k));
        }
        Ok(out)
    }
}

/// Parses the process's command line (clap prints help, version and syntax
/// errors itself and exits) into the plain settings of what was asked for.
pub fn parse_run() -> Result<Run, UsageError> {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let matches = command_for(&argv, Path::new("generate").exists()).get_matches_from(argv);
    Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit()).into_run()
}

impl Args {
    /// The plain settings of what was asked for.
    pub fn into_run(self) -> Result<Run, UsageError> {
        match self.command {
            None => self.correlate.to_run().map(|r| Run::Correlate(Box::new(r))),
            Some(Command::Inspect(a)) => Ok(Run::Inspect(InspectRun {
                captures: capture_specs(&a.captures)?,
                format: a.format,
                quiet: a.quiet,
            })),
            Some(Command::Compare(a)) => Ok(Run::Compare(CompareRun {
                format: compare_format(a.format, a.output.as_deref())?,
                before: compare_side(&a.before)?,
                after: compare_side(&a.after)?,
                expectations: a.expectations()?,
                allow_regressions: a.allow_regressions,
                expectations_file: a.expectations_file,
                rollback: a.rollback,
                path: a.output,
                quiet: a.quiet,
            })),
            Some(Command::Generate(a)) => Ok(Run::Generate(a.what)),
            Some(Command::Preview(a)) => {
                if a.correlate.masq_agent_after.is_empty() && a.correlate.rules_after.is_empty() {
                    return Err(UsageError(
                        "preview: give the proposed state of a host: --masq-agent-after WHERE=FILE (an \
                         ip-masq-agent ConfigMap) or --rules-after WHERE=FILE (an edited nat ruleset)"
                            .into(),
                    ));
                }
                a.correlate.to_run().map(|r| Run::Correlate(Box::new(r)))
            }
        }
    }
}

/// `--format`, else `-o`'s extension, else table.
fn output_format(format: Option<Format>, path: Option<&std::path::Path>) -> Format {
    format.or_else(|| Format::from_path(path)).unwrap_or(Format::Table)
}

/// `compare --format`, else `-o`'s extension, else table; `-o x.html` is refused
/// (the HTML page is the main form's).
fn compare_format(
    format: Option<CompareFormat>,
    path: Option<&std::path::Path>,
) -> Result<CompareFormat, UsageError> {
    if let Some(f) = format.or_else(|| CompareFormat::from_path(path)) {
        return Ok(f);
    }
    if let Some(f @ (Format::Html | Format::Parquet)) = Format::from_path(path) {
        let name = if f == Format::Html { "html" } else { "parquet" };
        return Err(UsageError(format!(
            "compare writes table, markdown, csv, json or ndjson; {name} is for the main form"
        )));
    }
    Ok(CompareFormat::Table)
}

/// One side of `compare`: a report file, or 2 to 8 comma-separated captures.
pub fn compare_side(arg: &str) -> Result<CompareSide, UsageError> {
    match crate::compare::side_of(arg) {
        crate::compare::Side::Report(path) => Ok(CompareSide::Report(path)),
        crate::compare::Side::Captures(list) => {
            let specs = capture_points(&list, 2).map_err(|e| UsageError(format!("{arg}: {}", e.0)))?;
            Ok(CompareSide::Captures(specs))
        }
    }
}

impl CorrelateArgs {
    /// `--rules`, `--conntrack`, `--masq-agent`, `--routes`, `--sysctl`, `--neigh`, in the order given per option.
    fn why_inputs(&self) -> Result<Vec<crate::why::Given>, UsageError> {
        use crate::why::{Given, InputKind};
        let kinds = [
            (InputKind::Rules, &self.rules),
            (InputKind::Conntrack, &self.conntrack),
            (InputKind::MasqAgent, &self.masq_agent),
            (InputKind::Routes, &self.routes),
            (InputKind::Sysctl, &self.sysctl),
            (InputKind::Neigh, &self.neigh),
            (InputKind::MasqAgentAfter, &self.masq_agent_after),
            (InputKind::RulesAfter, &self.rules_after),
        ];
        let mut out = Vec::new();
        for text in &self.host_dir {
            // a folder is read for the files it holds: WHERE=DIR as WHERE=FILE is
            let g = Given::parse(InputKind::Rules, text).map_err(|e| {
                UsageError(e.replacen("--rules", "--host-dir", 1).replace("WHERE=FILE", "WHERE=DIR"))
            })?;
            out.extend(crate::why::host_dir(&g.at, &g.path).map_err(UsageError)?);
        }
        for (kind, list) in kinds {
            for text in list {
                out.push(Given::parse(kind, text).map_err(UsageError)?);
            }
        }
        Ok(out)
    }
}

/// `WHAT: it needs NEEDS` for the first of `needs` whose condition holds.
fn refuse_without(what: &str, needs: &[(bool, &str)]) -> Result<(), UsageError> {
    match needs.iter().find(|(refused, _)| *refused) {
        Some((_, need)) => Err(UsageError(format!("{what}: it needs {need}"))),
        None => Ok(()),
    }
}

/// Capture arguments → specs with unique labels (docs/output.md "Captures and labels").
pub fn capture_specs(args: &[String]) -> Result<Vec<CaptureSpec>, UsageError> {
    let mut specs: Vec<CaptureSpec> = Vec::with_capacity(args.len());
    let mut explicit_labels: Vec<String> = Vec::new();
    let mut stdin_seen = false;
    for arg in args {
        let (label, source) = match split_label(arg) {
            Some((label, path)) => (label.to_string(), source_of(path)),
            None => {
                let source = source_of(arg);
                (default_label(&source), source)
            }
        };
        if source == Source::Stdin {
            if stdin_seen {
                return Err(UsageError("standard input (-) can be given only once".into()));
            }
            stdin_seen = true;
        }
        if label.is_empty() {
            return Err(UsageError(format!("{arg}: empty label")));
        }
        let explicit = split_label(arg).is_some();
        // A label given explicitly more than once joins those files into one
        // point (tcpdump -C/-G rotation); any other taken label gets numbered.
        let label = if explicit && explicit_labels.contains(&label) {
            if source == Source::Stdin || specs.iter().any(|s| s.label == label && s.source == Source::Stdin)
            {
                return Err(UsageError(format!(
                    "{arg}: standard input (-) cannot be one of several files of label {label}"
                )));
            }
            label
        } else {
            unique_label(&label, &specs)
        };
        if explicit {
            explicit_labels.push(label.clone());
        }
        specs.push(CaptureSpec { label, source });
    }
    once_each(&specs)?;
    Ok(specs)
}

/// Refuses an input readable only once (a FIFO, a pipe) given twice: two
/// readers of one pipe would each get part of its bytes (and a second open of
/// a FIFO can wait forever for a writer). Checked with `stat`, never opened.
fn once_each(specs: &[CaptureSpec]) -> Result<(), UsageError> {
    let mut pipes: Vec<((u64, u64), &CaptureSpec)> = Vec::new();
    for spec in specs {
        let Source::Path(path) = &spec.source else { continue };
        let Ok(meta) = std::fs::metadata(path) else { continue };
        let Some(id) = crate::output::file_id(&meta).filter(|_| !meta.is_file()) else { continue };
        if let Some((_, first)) = pipes.iter().find(|(seen, _)| *seen == id) {
            return Err(UsageError(format!(
                "{} ({}) and {} ({}) are the same pipe or FIFO: its bytes can be read only once; \
                 give each capture point its own",
                first.label,
                first.display_name(),
                spec.label,
                spec.display_name()
            )));
        }
        pipes.push((id, spec));
    }
    Ok(())
}

/// The capture specs as observation points, checked to be `min` (1 or 2) to 8
/// of them. One is enough for the main form when that capture splits into
/// several observation points (`tcpdump -i any` on a forwarding host); whether
/// it does is known once it is read (`app` refuses it then otherwise).
fn capture_points(args: &[String], min: usize) -> Result<Vec<CaptureSpec>, UsageError> {
    let specs = capture_specs(args)?;
    let points = crate::read::point_files(&specs).len();
    if !(min..=8).contains(&points) {
        let got = match specs.len() {
            f if f == points => format!("got {points}"),
            f => format!("got {points} from {f} files: the files of one LABEL= are one point"),
        };
        return Err(UsageError(format!(
            "give 2 to 8 capture points in path order, client side first ({got})"
        )));
    }
    Ok(specs)
}

fn source_of(path: &str) -> Source {
    if path == "-" {
        Source::Stdin
    } else {
        Source::Path(PathBuf::from(path))
    }
}

/// `LABEL=PATH` when the part before `=` looks like a label (no path separator).
fn split_label(arg: &str) -> Option<(&str, &str)> {
    let (label, path) = arg.split_once('=')?;
    if label.is_empty() || label.contains('/') || label.contains('\\') || path.is_empty() {
        return None;
    }
    Some((label, path))
}

/// File name without its capture and compression extensions; `stdin` for `-`.
pub fn default_label(source: &Source) -> String {
    let path = match source {
        Source::Stdin => return "stdin".to_string(),
        Source::Path(p) => p,
    };
    let mut name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let lower = name.to_ascii_lowercase();
        let stripped = [".gz", ".pcapng", ".pcap", ".cap"]
            .iter()
            .find(|ext| lower.ends_with(*ext) && lower.len() > ext.len())
            .map(|ext| name[..name.len() - ext.len()].to_string());
        match stripped {
            Some(s) => name = s,
            None => break,
        }
    }
    name
}

fn unique_label(label: &str, taken: &[CaptureSpec]) -> String {
    if !taken.iter().any(|s| s.label == label) {
        return label.to_string();
    }
    (2..).map(|n| format!("{label}-{n}")).find(|l| !taken.iter().any(|s| &s.label == l)).unwrap_or_default()
}

/// Parses `ADDR/LEN`.
pub fn parse_cidr(text: &str) -> Result<(IpAddr, u8), UsageError> {
    let bad = || UsageError(format!("--net {text}: expected ADDRESS/PREFIX, e.g. 198.18.0.0/15"));
    let (addr, len) = match text.split_once('/') {
        Some((a, l)) => (a.parse::<IpAddr>().map_err(|_| bad())?, l.parse::<u8>().map_err(|_| bad())?),
        None => {
            let a = text.parse::<IpAddr>().map_err(|_| bad())?;
            (a, if a.is_ipv4() { 32 } else { 128 })
        }
    };
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if len > max {
        return Err(bad());
    }
    Ok((addr, len))
}

/// A `--since` / `--until` value: RFC 3339, or seconds from the first request.
fn time_bound(option: &str, text: &str) -> Result<TimeBound, UsageError> {
    TimeBound::parse(text).ok_or_else(|| match crate::time::parse_rfc3339_checked(text) {
        // a date, but not a real one: say what is wrong with it
        Err(why) if text.trim().as_bytes().get(4) == Some(&b'-') => {
            UsageError(format!("{option} {text}: not an RFC 3339 time: {why}"))
        }
        _ => UsageError(format!(
            "{option} {text}: expected an RFC 3339 time (2026-11-29T23:40:38Z) or seconds from the first packet (30)"
        )),
    })
}

fn seconds_to_ns(s: f64) -> i64 {
    (s * 1e9).round() as i64
}

/// The longest duration an option in seconds takes (`--max-offset`, `--udp-idle`,
/// `--shard-margin`, `--stream-window`, `--stream-hold`): a year.
pub const MAX_SECONDS: f64 = 31_536_000.0;
/// The largest `--tolerance`, ms: a minute.
pub const MAX_TOLERANCE_MS: f64 = 60_000.0;
/// The largest `--offset` either way, seconds: 10 years.
pub const MAX_CLOCK_OFFSET_S: f64 = 315_360_000.0;
/// The most `--threads` (more threads than cores only cost: each is a stack
/// and a share of every parallel step).
pub const MAX_THREADS: i64 = 1024;

/// The lower end of an option's range.
#[derive(Clone, Copy)]
enum Bound {
    /// This value or more.
    From(f64),
    /// More than this value.
    Above(f64),
}

/// `value` of `option` when it is a finite number in its range, else a usage
/// error that names the option, the value and the range.
fn in_range(option: &str, value: f64, low: Bound, max: f64, unit: &str) -> Result<f64, UsageError> {
    let (fits, from) = match low {
        Bound::From(min) => (value >= min, format!("{min} to {max}")),
        Bound::Above(min) => (value > min, format!("more than {min}, at most {max}")),
    };
    // NaN fails both comparisons; infinities fail the upper bound
    if fits && value <= max {
        return Ok(value);
    }
    Err(UsageError(format!("{option} {value}: expected {unit}, {from}")))
}

/// `--threads N`: 1 to [`MAX_THREADS`].
fn threads(n: i64) -> Result<usize, UsageError> {
    match usize::try_from(n) {
        Ok(n @ 1..) if n as i64 <= MAX_THREADS => Ok(n),
        _ => Err(UsageError(format!(
            "--threads {n}: expected 1 to {MAX_THREADS} worker threads (leave it out for one per core)"
        ))),
    }
}

impl CorrelateArgs {
    /// The plain settings of the main form.
    pub fn to_config(&self) -> Result<Config, UsageError> {
        let captures = capture_points(&self.captures, 1)?;
        let points = crate::read::point_files(&captures);
        let mut offsets_ns = Vec::new();
        for o in &self.offset {
            let (label, secs) = o
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--offset {o}: expected LABEL=SECONDS")))?;
            let secs: f64 = secs
                .trim()
                .parse()
                .map_err(|_| UsageError(format!("--offset {o}: {secs} is not a number of seconds")))?;
            if !(secs.is_finite() && secs.abs() <= MAX_CLOCK_OFFSET_S) {
                return Err(UsageError(format!(
                    "--offset {o}: expected a clock offset in seconds within ±{MAX_CLOCK_OFFSET_S} (10 years)"
                )));
            }
            // A side (`node(out)`) reads its capture's clock: the offset is the capture's.
            let capture = |l: &str| points.iter().position(|p| captures[p[0]].label == l);
            let index = capture(label).or_else(|| capture(crate::read::capture_of_point(label))).ok_or_else(
                || {
                    let labels: Vec<&str> = points.iter().map(|p| captures[p[0]].label.as_str()).collect();
                    UsageError(format!(
                    "--offset {o}: no capture is labelled {label} (labels: {}; a side of a split capture, \
                     node(out), stands for its capture)",
                    labels.join(", ")
                ))
                },
            )?;
            offsets_ns.push((index, seconds_to_ns(secs)));
        }
        let nets = self.net.iter().map(|n| parse_cidr(n)).collect::<Result<Vec<_>, _>>()?;
        let udp_idle = in_range("--udp-idle", self.udp_idle, Bound::Above(0.0), MAX_SECONDS, "seconds")?;
        let max_offset = in_range("--max-offset", self.max_offset, Bound::From(0.0), MAX_SECONDS, "seconds")?;
        let tolerance = (self.tolerance)
            .map(|ms| in_range("--tolerance", ms, Bound::From(0.0), MAX_TOLERANCE_MS, "milliseconds"))
            .transpose()?;
        let threads = self.threads.map(threads).transpose()?;
        let shard = self.shard()?;
        let mut read = ReadConfig::default();
        if let Some(c) = self.chunk_bytes {
            read.chunk_bytes = c.max(1);
            read.force_chunks = true;
        }
        Ok(Config {
            captures,
            read,
            flows: FlowConfig { udp_idle_ns: seconds_to_ns(udp_idle), ..FlowConfig::default() },
            correlate: CorrelateConfig {
                offsets_ns,
                max_offset_ns: Some(seconds_to_ns(max_offset)),
                tolerance_ns: tolerance.map(|ms| (ms * 1e6).round() as i64),
                clock_of: Vec::new(),
                pinned: None,
            },
            filter: Filter {
                hosts: self.host.clone(),
                nets,
                ports: self.port.clone(),
                protos: self.proto.clone(),
                since: self.since.as_deref().map(|t| time_bound("--since", t)).transpose()?,
                until: self.until.as_deref().map(|t| time_bound("--until", t)).transpose()?,
            },
            threads,
            quiet: self.quiet,
            list_unmatched: self.all,
            shard,
            clocks_from: None,
            link_names: Default::default(),
            stopped: Vec::new(),
            stream: self.stream()?,
        })
    }

    /// `--stream`, `--stream-window`, `--stream-hold`.
    fn stream(&self) -> Result<Option<crate::drive::stream::StreamConfig>, UsageError> {
        if self.follow {
            use crate::drive::stream::{
                Follow, DEFAULT_FOLLOW_IDLE_NS, FOLLOW_HOLD_NS, FOLLOW_LINGER_NS, FOLLOW_MARGIN_NS,
                FOLLOW_WINDOW_NS,
            };
            let idle_ns = match self.follow_idle {
                None => DEFAULT_FOLLOW_IDLE_NS,
                Some(s) => {
                    seconds_to_ns(in_range("--follow-idle", s, Bound::From(1.0), MAX_SECONDS, "seconds")?)
                }
            };
            let follow = Follow { idle_ns, margin_ns: FOLLOW_MARGIN_NS, linger_ns: FOLLOW_LINGER_NS };
            let (window_ns, hold_ns) = self.window_and_hold(FOLLOW_WINDOW_NS, FOLLOW_HOLD_NS)?;
            return Ok(Some(crate::drive::stream::StreamConfig { window_ns, hold_ns, follow: Some(follow) }));
        }
        if !self.stream {
            return Ok(None);
        }
        let (window_ns, hold_ns) = self.window_and_hold(
            crate::drive::stream::DEFAULT_WINDOW_NS,
            crate::drive::stream::DEFAULT_HOLD_NS,
        )?;
        Ok(Some(crate::drive::stream::StreamConfig { window_ns, hold_ns, follow: None }))
    }

    /// `--stream-window` and `--stream-hold`, or the defaults given.
    fn window_and_hold(&self, window: i64, hold: i64) -> Result<(i64, i64), UsageError> {
        let window_ns = match self.stream_window {
            None => window,
            Some(w) => {
                seconds_to_ns(in_range("--stream-window", w, Bound::From(1.0), MAX_SECONDS, "seconds")?)
            }
        };
        let hold_ns = match self.stream_hold {
            None => hold,
            Some(h) => seconds_to_ns(in_range("--stream-hold", h, Bound::From(0.0), MAX_SECONDS, "seconds")?),
        };
        Ok((window_ns, hold_ns))
    }

    /// `--shard-start`, `--shard-end`, `--shard-margin` (clap makes the first two
    /// go together).
    fn shard(&self) -> Result<Option<Shard>, UsageError> {
        let (Some(start), Some(end)) = (&self.shard_start, &self.shard_end) else { return Ok(None) };
        let instant = |option: &str, text: &str| {
            parse_instant_ns(text).ok_or_else(|| {
                UsageError(format!(
                    "{option} {text}: expected an RFC 3339 time (2026-11-30T10:00:00Z, a fraction and a \
                     ±HH:MM zone allowed) or seconds since the Unix epoch (1795995638.5)"
                ))
            })
        };
        let (start_ns, end_ns) = (instant("--shard-start", start)?, instant("--shard-end", end)?);
        if end_ns <= start_ns {
            return Err(UsageError(format!(
                "--shard-end {end} is not after --shard-start {start}: a shard is [start, end)"
            )));
        }
        let margin_ns = match self.shard_margin {
            None => crate::drive::shard::DEFAULT_SHARD_MARGIN_NS,
            Some(m) => {
                seconds_to_ns(in_range("--shard-margin", m, Bound::From(0.0), MAX_SECONDS, "seconds")?)
            }
        };
        Ok(Some(Shard { start_ns, end_ns, margin_ns }))
    }

    /// The main form's run: its config and how to write the report.
    pub fn to_run(&self) -> Result<CorrelateRun, UsageError> {
        let format = output_format(self.format, self.output.as_deref());
        if self.summary && format != Format::Table {
            return Err(UsageError(
                "--summary is the table's summary only; leave it out for CSV, JSON, NDJSON, HTML or Parquet"
                    .into(),
            ));
        }
        if format == Format::Parquet && !cfg!(feature = "parquet") {
            return Err(UsageError(crate::report::PARQUET_MISSING.into()));
        }
        let to_stdout = self.output.as_deref().is_none_or(|p| p.as_os_str() == "-");
        if format == Format::Parquet && to_stdout {
            return Err(UsageError(
                "--format parquet writes a binary file: give it with -o FILE.parquet (not standard output)"
                    .into(),
            ));
        }
        if self.follow {
            refuse_without(
                "--follow writes each request as soon as it is settled",
                &[
                    (
                        !matches!(format, Format::Csv | Format::Ndjson | Format::Table),
                        "--format table, csv or ndjson (written request by request as they are settled; the \
                         other formats open with the run's totals or lay out every request at once)",
                    ),
                    (self.summary, "no --summary (it writes each request)"),
                    (self.stream, "no --stream (it is a stream already, with live windows)"),
                    (self.shard_start.is_some(), "no --shard-start"),
                    (self.pcapng.is_some(), "no --pcapng (it reads every capture again)"),
                ],
            )?;
        }
        let why = self.why_inputs()?;
        if let Some(path) = &self.expectations {
            if self.masq_agent_after.is_empty() && self.rules_after.is_empty() {
                return Err(UsageError(format!(
                    "--expectations {}: it writes what a proposed state will do: give --masq-agent-after \
                     WHERE=FILE or --rules-after WHERE=FILE",
                    path.display()
                )));
            }
        }
        if !why.is_empty() {
            refuse_without(
                "--rules, --conntrack, --masq-agent, --routes, --sysctl, --neigh, --host-dir, --masq-agent-after and --rules-after explain a finished run",
                &[(
                    self.stream || self.follow,
                    "no --stream or --follow (the run's intent findings need every request)",
                )],
            )?;
        }
        if self.stream {
            refuse_without(
                "--stream writes each window's requests as it goes",
                &[
                    (
                        format == Format::Html,
                        "another --format than html (its page draws every request's ladder at once)",
                    ),
                    (
                        self.shard_start.is_some(),
                        "no --shard-start (a stream is all of the captures' windows)",
                    ),
                    (self.pcapng.is_some(), "no --pcapng (it needs every request at the end)"),
                ],
            )?;
        }
        let config = self.to_config()?;
        if self.follow {
            if let Some(files) = crate::read::point_files(&config.captures).iter().find(|f| f.len() > 1) {
                return Err(UsageError(format!(
                    "--follow reads one input per capture point: {} is given {} files",
                    config.captures[files[0]].label,
                    files.len()
                )));
            }
        }
        // A capture readable only once: standard input, or an existing path that is
        // no regular file (a FIFO, a pipe from process substitution).
        let once = config.captures.iter().find(|c| match &c.source {
            Source::Stdin => true,
            Source::Path(p) => std::fs::metadata(p).is_ok_and(|m| !m.is_file()),
        });
        if let (Some(path), Some(once)) = (&self.pcapng, once) {
            return Err(UsageError(format!(
                "--pcapng {}: the merged pcapng reads every capture again, and {} ({}) is standard input, \
                 a pipe or a FIFO, which cannot be read twice; give that capture as a file",
                path.display(),
                once.label,
                once.display_name()
            )));
        }
        let time = match (&self.tz, self.time_format) {
            (None, None) => None,
            (tz, format) => Some(TimeStyle {
                zone: tz.as_deref().map(Zone::parse).transpose().map_err(UsageError)?.unwrap_or_default(),
                format: format.unwrap_or_default(),
            }),
        };
        let columns = match &self.columns {
            Some(list) => {
                let labels: Vec<&str> = config.captures.iter().map(|c| c.label.as_str()).collect();
                Some(crate::report::table::Column::parse_list(list, &labels).map_err(UsageError)?)
            }
            // --tz alone: the table shows the time in that zone
            None if self.tz.is_some() => Some(crate::report::table::DEFAULT_COLUMNS_WITH_TIME.to_vec()),
            None => None,
        };
        Ok(CorrelateRun {
            config,
            names: self.names.clone(),
            why,
            time,
            columns,
            columns_given: self.columns.is_some(),
            warnings_to: self.warnings_to.clone(),
            clocks_from: self.clocks_from.clone(),
            output: Output { path: self.output.clone(), format },
            pcapng: self.pcapng.clone(),
            pcapng_only_requests: self.pcapng_only_requests,
            summary_only: self.summary,
            color: self.color.unwrap_or(ColorChoice::Auto),
            fail_on: self.fail_on.clone(),
            expectations: self.expectations.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_instants_are_rfc3339_or_exact_epoch_seconds() {
        assert_eq!(parse_instant_ns("1795995638"), Some(1_795_995_638_000_000_000));
        assert_eq!(parse_instant_ns("1795995638.123456789"), Some(1_795_995_638_123_456_789));
        assert_eq!(parse_instant_ns("1795995638.5"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_instant_ns("2026-11-29T23:40:38.5Z"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_instant_ns("2026-11-30T00:40:38.5+01:00"), Some(1_795_995_638_500_000_000));
        for bad in ["", "1.", ".5", "-1", "1e9", "1.0000000001", "12:00", "noon", "99999999999999999999"] {
            assert_eq!(parse_instant_ns(bad), None, "{bad}");
        }
    }
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn labels_strip_capture_and_compression_extensions() {
        assert_eq!(default_label(&Source::Path("x/decap.pcap.gz".into())), "decap");
        assert_eq!(default_label(&Source::Path("egress.pcapng".into())), "egress");
        assert_eq!(default_label(&Source::Path("b.cap".into())), "b");
        assert_eq!(default_label(&Source::Stdin), "stdin");
    }

    #[test]
    fn taken_labels_get_numbered_and_explicit_labels_win() {
        let args: Vec<String> =
            ["a/x.pcap", "b/x.pcap", "x.pcapng", "lab=c/y.pcap"].iter().map(|s| s.to_string()).collect();
        let labels: Vec<String> = capture_specs(&args).unwrap().into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["x", "x-2", "x-3", "lab"]);
    }

    #[test]
    fn an_explicit_label_given_again_joins_its_files_into_one_point() {
        let args: Vec<String> = ["d=a.pcap", "x.pcap", "d=b.pcap", "x.pcap", "y=x.pcap", "d.pcap"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let specs = capture_specs(&args).unwrap();
        let labels: Vec<&str> = specs.iter().map(|s| s.label.as_str()).collect();
        // derived labels (x, x, d) still get numbered; only explicit d= repeats
        assert_eq!(labels, ["d", "x", "d", "x-2", "y", "d-2"]);
        assert_eq!(crate::read::point_files(&specs), [vec![0, 2], vec![1], vec![3], vec![4], vec![5]]);
        let one_point: Vec<String> = ["d=a.pcap", "d=b.pcap"].iter().map(|s| s.to_string()).collect();
        let e = capture_points(&one_point, 2).unwrap_err().0;
        assert!(e.contains("got 1 from 2 files"), "{e}");
        let stdin: Vec<String> = ["d=a.pcap", "d=-"].iter().map(|s| s.to_string()).collect();
        assert!(capture_specs(&stdin).unwrap_err().0.contains("standard input"));
    }

    #[test]
    fn stdin_only_once() {
        let args: Vec<String> = ["-", "-"].iter().map(|s| s.to_string()).collect();
        assert!(capture_specs(&args).is_err());
    }

    #[test]
    fn main_form_and_subcommands_parse() {
        let a = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "--format", "csv"]).unwrap();
        assert!(a.command.is_none());
        assert_eq!(a.correlate.captures.len(), 2);
        let a = Args::try_parse_from(["tuplecorr", "inspect", "a.pcap"]).unwrap();
        assert!(matches!(a.command, Some(Command::Inspect(_))));
    }

    #[test]
    fn choices_parse_by_their_config_names_only() {
        let a = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "--fail-on", "reply-lost,icmp-error"])
            .unwrap();
        assert_eq!(a.correlate.fail_on, [FailOn::ReplyLost, FailOn::IcmpError]);
        assert!(Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "--fail-on", "lost"]).is_err());
        let Run::Inspect(i) = Args::try_parse_from(["tuplecorr", "inspect", "a.pcap", "--format", "json"])
            .unwrap()
            .into_run()
            .unwrap()
        else {
            panic!("inspect parses as inspect")
        };
        assert_eq!(i.format, InspectFormat::Json);
    }

    #[test]
    fn compare_with_too_few_captures_is_a_usage_error_before_any_work() {
        let a = Args::try_parse_from(["tuplecorr", "compare", "a.pcap,", "b.json"]).unwrap();
        assert!(a.into_run().unwrap_err().0.contains("give 2 to 8"));
    }

    #[test]
    fn since_and_until_parse_absolute_and_relative_times() {
        let a = Args::try_parse_from([
            "tuplecorr",
            "a.pcap",
            "b.pcap",
            "--since",
            "2.5",
            "--until",
            "1970-01-01T00:01:00Z",
        ])
        .unwrap();
        let f = a.correlate.to_config().unwrap().filter;
        assert_eq!(f.since, Some(TimeBound::FromStartNs(2_500_000_000)));
        assert_eq!(f.until, Some(TimeBound::UnixNs(60_000_000_000)));
        let a = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "--since", "noon"]).unwrap();
        assert!(a.correlate.to_config().unwrap_err().0.contains("--since noon"));
    }

    #[test]
    fn format_is_inferred_from_output_extension() {
        let a = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "-o", "r.csv"]).unwrap();
        assert_eq!(a.correlate.to_run().unwrap().output.format, Format::Csv);
        let a = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "-o", "r.csv", "--format", "json"])
            .unwrap();
        assert_eq!(a.correlate.to_run().unwrap().output.format, Format::Json);
        let a = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "-o", "report.HTML"]).unwrap();
        assert_eq!(a.correlate.to_run().unwrap().output.format, Format::Html);
    }

    #[test]
    fn tz_time_format_and_columns_become_the_run_s_view() {
        use crate::report::table::Column;
        let run = |args: &[&str]| {
            let mut all = vec!["tuplecorr", "a.pcap", "b.pcap"];
            all.extend(args);
            Args::try_parse_from(all).unwrap().correlate.to_run()
        };
        let r = run(&[]).unwrap();
        assert_eq!((r.time, r.columns), (None, None));
        let r = run(&["--time-format", "epoch"]).unwrap();
        assert_eq!(r.time, Some(TimeStyle { zone: Zone::Utc, format: TimeFormat::Epoch }));
        assert_eq!(r.columns, None);
        // a negative offset is a value, not an option; --tz alone adds the time column
        let r = run(&["--tz", "-05:00"]).unwrap();
        assert_eq!(r.time.unwrap().rfc3339(0), "1969-12-31T19:00:00.000000000-05:00");
        assert_eq!(r.columns.unwrap()[1], Column::Time);
        let r = run(&["--tz", "UTC", "--columns", "b,#", "--names", "x", "--names", "y"]).unwrap();
        assert_eq!(r.columns.unwrap(), [Column::Label("b"), Column::Request]);
        assert_eq!(r.names, [PathBuf::from("x"), PathBuf::from("y")]);
        assert!(run(&["--tz", "Nowhere/Special"]).unwrap_err().0.contains("--tz Nowhere/Special"));
    }

    #[test]
    fn numbers_out_of_range_nan_and_infinity_are_refused_naming_option_value_and_range() {
        let run = |args: &[&str]| {
            let mut all = vec!["tuplecorr", "a.pcap", "b.pcap", "--shard-start", "0", "--shard-end", "1"];
            all.extend(args);
            Args::try_parse_from(all).map_err(|e| e.to_string())?.correlate.to_run().map_err(|e| e.0)
        };
        for (args, says) in [
            (&["--threads", "0"][..], "--threads 0: expected 1 to 1024 worker threads"),
            (&["--threads", "100000"], "--threads 100000: expected 1 to 1024"),
            (&["--threads", "-1"], "--threads -1: expected 1 to 1024"),
            (&["--tolerance", "1e9"], "--tolerance 1000000000: expected milliseconds, 0 to 60000"),
            (&["--tolerance", "NaN"], "--tolerance NaN: expected milliseconds, 0 to 60000"),
            (&["--tolerance", "-1"], "--tolerance -1: expected milliseconds"),
            (&["--max-offset", "inf"], "--max-offset inf: expected seconds, 0 to 31536000"),
            (&["--max-offset", "-5"], "--max-offset -5: expected seconds, 0 to 31536000"),
            (&["--udp-idle", "0"], "--udp-idle 0: expected seconds, more than 0, at most 31536000"),
            (&["--udp-idle", "NaN"], "--udp-idle NaN: expected seconds"),
            (&["--shard-margin", "-10"], "--shard-margin -10: expected seconds, 0 to 31536000"),
            (&["--shard-margin", "1e12"], "--shard-margin 1000000000000: expected seconds"),
            (
                &["--offset", "b=1e12"],
                "--offset b=1e12: expected a clock offset in seconds within ±315360000",
            ),
            (&["--offset", "b=inf"], "--offset b=inf: expected a clock offset"),
            (&["--offset", "b=NaN"], "--offset b=NaN: expected a clock offset"),
            (&["--offset", "b=-1e12"], "--offset b=-1e12: expected a clock offset"),
        ] {
            let e = run(args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
        }
        let r = run(&["--threads", "1024", "--tolerance", "0", "--max-offset", "0", "--offset", "b=-2.5"])
            .unwrap();
        assert_eq!(r.config.threads, Some(1024));
        assert_eq!(r.config.correlate.offsets_ns, [(1, -2_500_000_000)]);
        let stream = |args: &[&str]| {
            let mut all = vec!["tuplecorr", "a.pcap", "b.pcap", "--stream"];
            all.extend(args);
            Args::try_parse_from(all).unwrap().correlate.to_run().map_err(|e| e.0)
        };
        assert!(stream(&["--stream-window", "0.5"])
            .unwrap_err()
            .contains("--stream-window 0.5: expected seconds, 1 to"));
        assert!(stream(&["--stream-hold", "-1"])
            .unwrap_err()
            .contains("--stream-hold -1: expected seconds, 0 to"));
        assert!(stream(&["--stream-hold", "0", "--stream-window", "1"]).is_ok());
    }

    #[test]
    fn parquet_is_refused_with_how_to_get_it_only_in_a_build_without_the_feature() {
        for args in [&["--format", "parquet", "-o", "r.parquet"][..], &["-o", "r.parquet"]] {
            let mut all = vec!["tuplecorr", "a.pcap", "b.pcap"];
            all.extend(args);
            let run = Args::try_parse_from(all).unwrap().correlate.to_run();
            if cfg!(feature = "parquet") {
                assert_eq!(run.unwrap().output.format, Format::Parquet);
            } else {
                let e = run.unwrap_err().0;
                assert!(e.contains("without Parquet") && e.contains("--features parquet"), "{e}");
            }
        }
    }

    #[test]
    fn version_names_the_commit_and_the_features() {
        assert!(VERSION_LINE.starts_with(concat!(env!("CARGO_PKG_VERSION"), " (commit ")), "{VERSION_LINE}");
        let features = if cfg!(feature = "parquet") { "features: parquet)" } else { "features: none)" };
        assert!(VERSION_LINE.ends_with(features), "{VERSION_LINE}");
    }

    #[test]
    fn pcapng_only_requests_needs_pcapng() {
        assert!(Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "--pcapng-only-requests"]).is_err());
        let a =
            Args::try_parse_from(["tuplecorr", "a", "b", "--pcapng", "m.pcapng", "--pcapng-only-requests"])
                .unwrap();
        let run = a.correlate.to_run().unwrap();
        assert_eq!(run.pcapng.as_deref(), Some(std::path::Path::new("m.pcapng")));
        assert!(run.pcapng_only_requests);
    }
}
