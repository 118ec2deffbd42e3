//! Streaming correlation (`--stream`): each point's files are read once, and
//! the run is correlated window by window of capture 1's time, each window's
//! requests handed on as soon as no packet still to be read can change them,
//! and then freed. Memory grows with the flows of a window and its margins,
//! not with the length of the captures. Takes settings and captures; gives
//! each window's findings in time order, then the run's own warnings. Never
//! formats a report.
//!
//! A window is a time shard (see `shard`): the requests whose first packet at
//! capture 1 (its own clock) lies in `[k·W, (k+1)·W)`, correlated from the
//! flows of every point that began within the shard margin plus the clock
//! allowance (`--max-offset`) of it, each read to its end. One pass feeds every
//! record to the windows whose reach holds it (two where windows overlap);
//! after its reach a window takes only packets of the flows it holds, and it
//! is finished once none of them may take more: every TCP connection closed or
//! reset, or silent for 130 s (the reach of a SYN retransmission), every
//! datagram exchange silent for `--udp-idle`, and all of them silent for
//! [`LINGER_NS`]. So a window holds what a shard run on a whole file holds,
//! except packets of a flow after such a silence (a connection idle for over
//! 130 s, then resumed, becomes a second flow, as with a shard's skipped file).
//! A connection that goes on (a database pool's, a watch) would hold its
//! window, and every window after it, to its end: so a window waits
//! `--stream-hold` after the last packet of its flows that may go on, and at
//! most that long past its reach, then is correlated with what it has, as a
//! shard whose later file was skipped is, and its requests that hold a flow
//! still open are counted in a warning. Memory is then bounded by the windows
//! within window + 2 × reach + hold of the reading, whatever the connections.
//!
//! Clocks are estimated from the first window that gives every point an
//! offset, and pinned for the windows after it (as `--clocks-from` pins them;
//! a later window whose own estimate differs is warned about). A window's
//! requests are numbered on from the window before: the numbers of the whole
//! run, whose order is capture 1's time too.

use super::ingest::{self, Builder, CaptureResult, Cut, Ingested, Sink};
use super::shard::Shard;
use super::Config;
use super::{pipeline, shard};
use crate::correlate::PinnedClocks;
use crate::flows::points::PointKey;
use crate::flows::Flow;
use crate::read::{CaptureInfo, Progress, ReadError};
use crate::verdict::Findings;
use crate::warning::Warning;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::OnceLock;
use std::time::Instant;

/// How a streaming run (`--stream`) cuts and waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// `--stream-window`: ns of capture 1's time per window.
    pub window_ns: i64,
    /// `--stream-hold`: how long past its reach a window waits for a
    /// connection still open before it is correlated with what was seen.
    pub hold_ns: i64,
    /// `--follow`: the captures are live (see `Follow`).
    pub follow: Option<Follow>,
}

/// How a live run (`--follow`) reads and settles: each input read as it
/// grows, a point's clock taken to run on with the wall clock while it is
/// silent, and windows settled with a short margin and linger so a request
/// is written seconds after it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Follow {
    /// `--follow-idle`: an input that gives no byte this long is stopped.
    pub idle_ns: i64,
    /// The shard margin of a live window (the batch run's is 140 s).
    pub margin_ns: i64,
    /// How long a window past its reach waits for its flows to fall silent
    /// (the batch stream's linger is 60 s).
    pub linger_ns: i64,
}

/// Default `--follow-idle`: a minute.
pub const DEFAULT_FOLLOW_IDLE_NS: i64 = 60_000_000_000;
/// A live window's margin: the time gate of one matching step (tolerance and
/// delay) with room; an earlier attempt further back is not looked for live.
pub const FOLLOW_MARGIN_NS: i64 = 5_000_000_000;
/// A live window's linger: a final ACK or FIN retransmission comes within it.
pub const FOLLOW_LINGER_NS: i64 = 2_000_000_000;
/// Default `--stream-window` with `--follow`: one second.
pub const FOLLOW_WINDOW_NS: i64 = 1_000_000_000;
/// Default `--stream-hold` with `--follow`: a connection still open 10 s past
/// its window's reach is written as seen so far.
pub const FOLLOW_HOLD_NS: i64 = 10_000_000_000;

/// Set (by a SIGINT/SIGTERM handler) to end a live run (`--follow`): every
/// input ends at once, the windows still open are written with what was read.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Set with [`STOP`] when a request matched `--fail-on` (not a signal).
pub static FAILED_ON: AtomicBool = AtomicBool::new(false);

/// A live point's clock is taken to run on with the wall clock this far
/// behind its last packet (packets on their way through a pipe or ssh).
const LIVE_SLACK_NS: i64 = 1_000_000_000;

/// How far a live point's clock, measured against the wall clock as its
/// packets arrive, may be off when its windows are settled: a window is
/// settled this much later than the measured clock puts it.
const LIVE_CLOCK_SLACK_NS: i64 = 2_000_000_000;

/// How much more around them a live point's windows read while its clock is
/// only measured against the wall clock: the first packets of a point can
/// reach tuplecorr seconds late (a busy machine, ssh starting), which makes
/// the measured clock run ahead until later packets correct it.
const LIVE_FEED_SLACK_NS: i64 = 10_000_000_000;

/// Default `--stream-window`: five minutes of capture 1's time.
pub const DEFAULT_WINDOW_NS: i64 = 300_000_000_000;

/// Default `--stream-hold`: ten minutes past a window's reach, so a connection
/// shorter than about 15 minutes is always read to its end.
pub const DEFAULT_HOLD_NS: i64 = 600_000_000_000;

/// A window past its reach is finished only when all its flows have been
/// silent this long (a final ACK, a retransmitted FIN in TIME-WAIT).
pub const LINGER_NS: i64 = 60_000_000_000;

/// How often, in capture time, a window past its reach checks its flows.
const CHECK_EVERY_NS: i64 = 1_000_000_000;

/// Why a streaming run stopped.
#[derive(Debug)]
pub enum StreamError {
    /// A capture could not be read (the windows before were handed on).
    Read(ReadError),
    /// The caller could not take a window (its report could not be written).
    Emit(std::io::Error),
}

/// Windows of `window_ns` and how far around one every point is read.
#[derive(Clone, Copy, Debug)]
struct Plan {
    window_ns: i64,
    /// The shard margin (capture 1) plus the clock allowance (the others).
    reach_ns: [i64; 2],
    margin_ns: i64,
    udp_idle_ns: i64,
    /// How long past its reach a window waits for flows that go on.
    hold_ns: i64,
    /// How long all its flows must be silent before a window past its reach is finished.
    linger_ns: i64,
}

impl Plan {
    fn of(config: &Config, stream: StreamConfig) -> Plan {
        let margin_ns = stream.follow.map_or(shard::DEFAULT_SHARD_MARGIN_NS, |f| f.margin_ns);
        let max = config.correlate.max_offset_ns.unwrap_or(crate::correlate::clock::DEFAULT_MAX_OFFSET_NS);
        let manual = config.correlate.offsets_ns.iter().map(|(_, o)| o.saturating_abs()).max().unwrap_or(0);
        let pinned = (config.clocks_from.iter().flat_map(|p| &p.clocks))
            .map(|(_, o, _)| o.saturating_abs())
            .max()
            .unwrap_or(0);
        let allowance = max.saturating_abs().max(manual).max(pinned);
        Plan {
            window_ns: stream.window_ns.max(1),
            reach_ns: [margin_ns, margin_ns.saturating_add(allowance)],
            margin_ns,
            udp_idle_ns: config.flows.udp_idle_ns,
            hold_ns: stream.hold_ns.max(0),
            linger_ns: stream.follow.map_or(LINGER_NS, |f| f.linger_ns),
        }
    }

    /// [`Plan::reach`] for a point whose clock is `shift` = (offset, how much
    /// it may be off) from capture 1's (None: unknown): its window moved by
    /// the offset, widened by the margin and that much (pinned clocks: the
    /// margin only, as a shard with `--clocks-from` reads it).
    fn reach_pinned(&self, k: i64, first: bool, shift: Option<(i64, i64)>) -> (i64, i64) {
        match shift {
            None => self.reach(k, first),
            Some((o, extra)) => {
                let (lo, hi) = self.reach(k, true);
                (lo.saturating_add(o).saturating_sub(extra), hi.saturating_add(o).saturating_add(extra))
            }
        }
    }

    /// Where window `k`'s reach ends on a point (`hi`: as it was opened): once
    /// the point's clock is known (`shift`), a window opened before with the
    /// whole clock allowance ends where that clock puts it.
    fn reach_end(&self, k: i64, first: bool, hi: i64, shift: Option<(i64, i64)>) -> i64 {
        shift.map_or(hi, |s| hi.min(self.reach_pinned(k, first, Some(s)).1))
    }

    /// [`Plan::windows_at`] for a point whose clock is `shift` (offset, and
    /// how much it may be off) from capture 1's.
    fn windows_at_pinned(&self, t: i64, first: bool, shift: Option<(i64, i64)>) -> (i64, i64) {
        match shift {
            None => self.windows_at(t, first),
            Some((o, extra)) => {
                self.windows_within(t.saturating_sub(o), self.reach_ns[0].saturating_add(extra))
            }
        }
    }

    /// Raw times of window `k` that a point (`first`: capture 1) reads.
    fn reach(&self, k: i64, first: bool) -> (i64, i64) {
        let r = self.reach_ns[usize::from(!first)];
        let (start, end) = self.own(k);
        (start.saturating_sub(r), end.saturating_add(r))
    }

    /// Window `k`'s own times: `[k·W, (k+1)·W)`.
    fn own(&self, k: i64) -> (i64, i64) {
        (k.saturating_mul(self.window_ns), k.saturating_add(1).saturating_mul(self.window_ns))
    }

    /// The windows whose reach (both ends included) holds time `t`: from the
    /// first whose reach ends at or after it to the last that begins by it.
    fn windows_at(&self, t: i64, first: bool) -> (i64, i64) {
        self.windows_within(t, self.reach_ns[usize::from(!first)])
    }

    /// The windows that reach `r` around their own times holds `t`.
    fn windows_within(&self, t: i64, r: i64) -> (i64, i64) {
        let w = self.window_ns;
        (t.saturating_sub(r).saturating_sub(1).div_euclid(w), t.saturating_add(r).div_euclid(w))
    }
}

/// Whether a flow a window holds may still take packets at `t` (`linger_ns`:
/// how long a flow that has ended may still take a last packet).
fn may_go_on(f: &Flow, t: i64, udp_idle_ns: i64, linger_ns: i64) -> bool {
    f.last_ns.saturating_add(linger_ns) > t || shard::may_continue_later(f, t, udp_idle_ns)
}

/// What a window past its reach does at `t`.
#[derive(Debug, PartialEq, Eq)]
enum Past {
    /// No flow of it may take more packets: finished.
    Done,
    /// Flows may go on, but it has waited the hold: finished with what it read.
    Cut,
    /// Flows may go on: checked again by `until` at the latest.
    Wait { until: i64 },
}

/// A window past its reach (`hi`) at `t`, whose flows that may still take
/// packets saw their latest at `open_last` (None: no flow may): it waits the
/// hold after that packet, so a request whose connection fell silent (a SYN
/// never answered, a datagram within `--udp-idle`) comes the hold after its
/// last packet, and at most the hold past the reach, so a connection that
/// goes on holds its window no longer than that.
fn past_reach(open_last: Option<i64>, t: i64, hi: i64, hold_ns: i64) -> Past {
    let Some(last) = open_last else { return Past::Done };
    let due = last.saturating_add(hold_ns).min(hi.saturating_add(hold_ns));
    if t > due {
        Past::Cut
    } else {
        Past::Wait { until: due.saturating_add(1) }
    }
}

/// Fewest samples an estimated clock needs to be pinned for the windows after.
const MIN_PIN_SAMPLES: u64 = 20;

/// What a point's reader tells the coordinator.
enum Msg {
    /// A window's part.
    Part(Box<Part>),
    /// A live point sends no part of a window before this one any more (its
    /// clock has passed their reach).
    Upto(i64),
    /// A live point's input ended, its last packet at this time (its clock;
    /// `i64::MIN`: none): sent before the parts it then finishes.
    Stopped(i64),
}

/// One window of one point, as its reader sends it.
struct Part {
    k: i64,
    result: CaptureResult,
    /// Copies of flows (`-i any`) folded among the flows that began in the
    /// window's own times: each copy counted in one window.
    copies: u64,
    /// Flows answered on another interface (a multi-homed end host), likewise.
    answered: ingest::Elsewhere,
}

/// A window being read by one point.
enum Slot {
    Building {
        builder: Box<Builder>,
        /// Raw times of this point the window reads (`Plan::reach`, or moved
        /// by the point's pinned clock for a live window opened after the pin).
        reach: (i64, i64),
        next_check: i64,
        /// Where its reading began when records before its reach were left
        /// out (it opened after the point's first record, or a record stepped
        /// back before it).
        cut_from: Option<i64>,
        /// Where the hold ended its reading while flows went on.
        cut_until: Option<i64>,
    },
    Done(Box<Part>),
}

/// One point's side of a streaming run: every record to the point's tally
/// (counts, damage, read warnings) and to the windows whose reach holds it.
struct Reader<'a> {
    config: &'a Config,
    plan: Plan,
    first: bool,
    label: &'a str,
    names: &'a str,
    /// What a window finished before the end of the files is told about them.
    info: CaptureInfo,
    tally: Builder,
    /// Open windows in order.
    slots: VecDeque<(i64, Slot)>,
    /// The next window to open (None before the first record).
    next: Option<i64>,
    tx: SyncSender<Msg>,
    /// The coordinator stopped listening.
    gone: bool,
    /// Most windows open or waiting to be sent at once.
    most_held: usize,
    /// The observation points of the first window finished with flows: every
    /// window after it is split into them (as the run without --stream splits
    /// the whole capture once).
    keys: Option<Vec<Option<PointKey>>>,
    /// Flows in the windows' own times on interfaces none of those points is.
    elsewhere: u64,
    /// `--follow`: what a live point keeps to run its clock on while it is silent.
    live: Option<LiveClock<'a>>,
}

/// A live point's clock and what it has told the coordinator.
struct LiveClock<'a> {
    /// This point's index among the points.
    point: usize,
    /// Per point, its clock's shift from capture 1's, once the run pinned them.
    pins: &'a OnceLock<Vec<i64>>,
    /// The latest record time any point has read (raw): the clock of a point
    /// that has read nothing yet is taken from it.
    latest: &'a AtomicI64,
    /// Per point, the largest (record time − arrival time since `epoch`) seen:
    /// its clock against the wall clock, arrival delays aside.
    skews: &'a [AtomicI64],
    epoch: Instant,
    /// How far apart two points' clocks may be (`--max-offset` and given offsets).
    allowance_ns: i64,
    /// This point's latest record time.
    last: Option<i64>,
    /// The latest time a silent tick moved this point's clock to.
    ticked: i64,
    /// The window this point has told the coordinator it sends nothing before.
    upto: i64,
    /// Records that came after the windows their time belongs to were settled.
    late: u64,
}

/// See [`LiveClock::shifts`].
#[derive(Clone, Copy, Default)]
struct Shifts {
    feed: Option<(i64, i64)>,
    settle: Option<(i64, i64)>,
}

impl LiveClock<'_> {
    /// This point's clock from capture 1's: pinned by the run (exact), else
    /// measured against the wall clock as both points' packets arrived (off
    /// by up to [`LIVE_CLOCK_SLACK_NS`]), else unknown.
    /// `(offset, exact)`.
    fn clock(&self) -> Option<(i64, bool)> {
        if self.point == 0 {
            return Some((0, true));
        }
        if let Some(o) = self.pins.get().and_then(|p| p.get(self.point).copied()) {
            return Some((o, true));
        }
        let mine = self.skews.get(self.point)?.load(Ordering::Relaxed);
        let first = self.skews.first()?.load(Ordering::Relaxed);
        (mine != i64::MIN && first != i64::MIN).then(|| (mine.saturating_sub(first), false))
    }

    /// The shifts of a live point's windows from its clock (read once per
    /// record): the one they read by, widened by [`LIVE_FEED_SLACK_NS`] while the
    /// clock is only measured, and the one they are settled by, widened by
    /// [`LIVE_CLOCK_SLACK_NS`]. None for a point that is not live.
    fn shifts(live: Option<&LiveClock<'_>>) -> Shifts {
        let clock = live.and_then(LiveClock::clock);
        let widen = |slack| clock.map(|(o, exact)| (o, if exact { 0 } else { slack }));
        Shifts { feed: widen(LIVE_FEED_SLACK_NS), settle: widen(LIVE_CLOCK_SLACK_NS) }
    }

    /// Notes a record of time `t` read now.
    fn note(&mut self, t: i64) {
        self.latest.fetch_max(t, Ordering::Relaxed);
        let now = Instant::now();
        self.last = Some(self.last.map_or(t, |last| last.max(t)));
        let arrived = i64::try_from(now.duration_since(self.epoch).as_nanos()).unwrap_or(i64::MAX);
        if let Some(skew) = self.skews.get(self.point) {
            skew.fetch_max(t.saturating_sub(arrived), Ordering::Relaxed);
        }
    }
}

impl Reader<'_> {
    /// Opens the windows whose reach begins by `t` (skipping those whose
    /// reach ended before it: nothing of this point is in them).
    fn open(&mut self, t: i64, shift: Option<(i64, i64)>) {
        let floor = self.live.as_ref().map_or(i64::MIN, |l| l.upto);
        let (from, to) = self.plan.windows_at_pinned(t, self.first, shift);
        let started = self.next.is_some();
        let mut k = self.next.unwrap_or(from).max(from).max(floor);
        while k <= to {
            let reach = self.plan.reach_pinned(k, self.first, shift);
            // A live window opens as the point's time reaches it: nothing before
            // its reach was left out (the live margin is short by design, said once).
            let cut_from = (started && self.live.is_none()).then_some(reach.0);
            let builder = Box::new(Builder::new(self.config));
            let slot = Slot::Building { builder, reach, next_check: i64::MIN, cut_from, cut_until: None };
            self.slots.push_back((k, slot));
            k += 1;
        }
        self.most_held = self.most_held.max(self.slots.len());
        self.next = Some(self.next.map_or(k, |n| n.max(k)));
    }

    /// Finishes window `k` into the part its reader sends.
    fn part(&mut self, k: i64, builder: Builder, cut: Cut, info: CaptureInfo) -> Part {
        let (mut result, elsewhere) = builder.finish_as(self.label, self.names, info, self.keys.as_deref());
        // The run says once how many copies it folded, from the windows' own counts.
        result.warnings.clear();
        result.cut = cut;
        let (start, end) = self.plan.own(k);
        let own = |f: &&Flow| f.first_ns >= start && f.first_ns < end;
        let flows = || result.points.iter().flat_map(|p| &p.1.flows);
        let copies = flows().filter(own).map(|f| u64::from(f.copies)).sum();
        // only of a capture that is one point (see `Builder::finish_as`)
        let one = result.points.len() == 1;
        let elsewhere_flows = ingest::Elsewhere::of(flows().filter(own).filter(|_| one));
        if elsewhere > 0 {
            // Those flows went to the first point (split_as): count the window's own.
            let first = result.points.first().map(|p| &p.1.flows[..]).unwrap_or_default();
            let keys = self.keys.as_deref().unwrap_or_default();
            let foreign = |f: &&Flow| !keys.iter().flatten().any(|key| key.holds_flow(f));
            self.elsewhere += first.iter().filter(own).filter(foreign).count() as u64;
        }
        if self.keys.is_none() && flows().next().is_some() {
            self.keys = Some(result.points.iter().map(|p| p.0).collect());
        }
        Part { k, result, copies, answered: elsewhere_flows }
    }

    /// Finishes the windows at `done` (positions in `slots`), or all still
    /// open, and sends those at the front that are finished, in order.
    fn finish(&mut self, done: Option<&[usize]>, info: &CaptureInfo) {
        for i in 0..self.slots.len() {
            if done.is_some_and(|d| !d.contains(&i)) || matches!(self.slots[i].1, Slot::Done(_)) {
                continue;
            }
            let k = self.slots[i].0;
            let empty = Slot::Done(Box::new(Part {
                k,
                result: empty_result(),
                copies: 0,
                answered: Default::default(),
            }));
            if let Slot::Building { builder, cut_from, cut_until, .. } =
                std::mem::replace(&mut self.slots[i].1, empty)
            {
                let cut = Cut { read_from: cut_from, read_until: cut_until };
                let part = self.part(k, *builder, cut, info.clone());
                self.slots[i].1 = Slot::Done(Box::new(part));
            }
        }
        while matches!(self.slots.front(), Some((_, Slot::Done(_)))) {
            let Some((_, Slot::Done(part))) = self.slots.pop_front() else { break };
            if !self.gone && self.tx.send(Msg::Part(part)).is_err() {
                self.gone = true;
            }
        }
    }
}

impl Sink for Reader<'_> {
    fn add(&mut self, rec: &Ingested<'_>) {
        self.tally.tally(rec);
        if self.gone {
            return;
        }
        let t = rec.ts_ns;
        if let Some(live) = &mut self.live {
            live.note(t);
        }
        let shifts = LiveClock::shifts(self.live.as_ref());
        if let Some(live) = &mut self.live {
            if self.plan.windows_at_pinned(t, self.first, shifts.feed).1 < live.upto {
                // Every window this record belongs to was settled without it.
                live.late += 1;
            }
        }
        self.open(t, shifts.feed);
        let (plan, first, shift) = (self.plan, self.first, shifts.settle);
        for (k, slot) in self.slots.iter_mut() {
            let Slot::Building { builder, reach: (lo, hi), cut_from, .. } = slot else { continue };
            if t < *lo {
                // A record stepping back before the window's reach: left out, as a shard does.
                cut_from.get_or_insert(*lo);
                continue;
            }
            builder.table().set_closed(t > plan.reach_end(*k, first, *hi, shift));
            builder.add_flow(rec);
        }
        self.settle(t, shifts.settle);
    }
}

impl Reader<'_> {
    /// Finishes the windows past their reach at `t` whose flows can take no
    /// more packets, or that have waited the hold.
    fn settle(&mut self, t: i64, shift: Option<(i64, i64)>) {
        let mut done = Vec::new();
        let (plan, first) = (self.plan, self.first);
        for (i, (k, slot)) in self.slots.iter_mut().enumerate() {
            let Slot::Building { builder, reach: (_, hi), next_check, cut_until, .. } = slot else {
                continue;
            };
            let hi = &plan.reach_end(*k, first, *hi, shift);
            if t > *hi && t >= *next_check {
                *next_check = t.saturating_add(CHECK_EVERY_NS);
                let (idle, linger) = (self.plan.udp_idle_ns, self.plan.linger_ns);
                let open_last = (builder.table().flows().iter())
                    .filter(|f| may_go_on(f, t, idle, linger))
                    .map(|f| f.last_ns)
                    .max();
                match past_reach(open_last, t, *hi, self.plan.hold_ns) {
                    Past::Done => done.push(i),
                    Past::Cut => {
                        // Waited long enough: what it read is what it has.
                        *cut_until = Some(t);
                        done.push(i);
                    }
                    Past::Wait { until } => *next_check = (*next_check).min(until),
                }
            }
        }
        if !done.is_empty() {
            let info = self.info.clone();
            self.finish(Some(&done), &info);
        }
    }

    /// A live point that is silent: its clock runs on with the wall clock
    /// (behind its last packet by [`LIVE_SLACK_NS`]; before its first packet,
    /// behind the latest packet of any point by twice the clock allowance),
    /// the windows it passes are settled, and the coordinator is told which
    /// windows it holds nothing of any more.
    fn tick(&mut self, data_at: Instant) {
        let Some(live) = &self.live else { return };
        let t = match live.last {
            Some(ts) => {
                // From when its bytes were read, not when the record was taken:
                // a reader held up by the run took its last records late.
                let elapsed = i64::try_from(data_at.elapsed().as_nanos()).unwrap_or(i64::MAX);
                ts.saturating_add(elapsed).saturating_sub(LIVE_SLACK_NS)
            }
            None => match live.latest.load(Ordering::Relaxed) {
                i64::MIN => return,
                l => l.saturating_sub(live.allowance_ns.saturating_mul(2)).saturating_sub(LIVE_SLACK_NS),
            },
        };
        if t <= live.ticked || live.last.is_some_and(|ts| t <= ts) {
            return;
        }
        let shifts = LiveClock::shifts(Some(live));
        if let Some(live) = &mut self.live {
            live.ticked = t;
        }
        self.settle(t, shifts.settle);
        let from = self.plan.windows_at_pinned(t, self.first, shifts.feed).0;
        let future = self.next.map_or(from, |n| n.max(from));
        let floor = self.slots.front().map_or(future, |(k, _)| (*k).min(future));
        let Some(live) = &mut self.live else { return };
        if floor > live.upto && !self.gone {
            match self.tx.try_send(Msg::Upto(floor)) {
                Ok(()) => live.upto = floor,
                Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => self.gone = true,
            }
        }
    }
}

/// A reader shared between its input (which ticks it while silent) and the
/// records it is given.
struct SharedReader<'r, 'a>(&'r RefCell<Reader<'a>>);

impl Sink for SharedReader<'_, '_> {
    fn add(&mut self, rec: &Ingested<'_>) {
        self.0.borrow_mut().add(rec);
    }
}

/// A window's part of a point that holds nothing of it.
fn empty_result() -> CaptureResult {
    empty_result_with(None)
}

/// [`empty_result`] with the points `keys` (None: one).
fn empty_result_with(keys: Option<&[Option<PointKey>]>) -> CaptureResult {
    let keys = keys.unwrap_or(&[None]);
    CaptureResult {
        info: placeholder_info(),
        points: keys.iter().map(|&k| (k, crate::flows::Flows::default(), 0)).collect(),
        overlays: vec![Vec::new(); keys.len()],
        undecodable: 0,
        warnings: Vec::new(),
        cut: Default::default(),
        hosts: Vec::new(),
    }
}

/// What windows are told of a file whose beginning could not be peeked (standard input).
fn placeholder_info() -> CaptureInfo {
    CaptureInfo {
        format: crate::read::Format::Pcap,
        byte_order: crate::read::ByteOrder::Little,
        gzip: false,
        interfaces: Vec::new(),
        packets: 0,
        bytes: 0,
        warnings: Vec::new(),
    }
}

/// Reads one point's files (`order`: reading order) once, sending each
/// window's part as soon as it is finished; gives the point's tally (its
/// read warnings, counts and what its files were) and the most windows it
/// held at once.
#[allow(clippy::too_many_arguments)]
fn read_point(
    config: &Config,
    plan: Plan,
    capture: usize,
    order: &[usize],
    points: usize,
    (label, names): (&str, &str),
    progress: &dyn Progress,
    tx: SyncSender<Msg>,
    live: Option<&Shared>,
) -> Result<(CaptureResult, usize, ingest::PointCounts), ReadError> {
    let specs = &config.captures;
    let peeked = order.first().and_then(|&f| crate::read::peek_info(&specs[f]));
    let mut r = Reader {
        config,
        plan,
        first: capture == 0,
        label,
        names,
        info: peeked.unwrap_or_else(placeholder_info),
        tally: Builder::new(config),
        slots: VecDeque::new(),
        next: None,
        tx,
        gone: false,
        most_held: 0,
        keys: None,
        elsewhere: 0,
        live: live.map(|shared| LiveClock {
            point: capture,
            pins: &shared.pins,
            latest: &shared.latest,
            skews: &shared.skews,
            epoch: shared.epoch,
            allowance_ns: plan.reach_ns[1].saturating_sub(plan.margin_ns),
            last: None,
            ticked: i64::MIN,
            upto: i64::MIN,
            late: 0,
        }),
    };
    let limit = config.flows.payload_limit();
    if let (Some(follow), [f]) = (config.stream.and_then(|s| s.follow), order) {
        return read_live_point(r, &specs[*f], *f, follow, progress);
    }
    let mut info = None;
    let mut files = ingest::Overlaps::default();
    for &f in order {
        let spec = &specs[f];
        let file_info = ingest::ingest(spec, f, &config.read, points, limit, progress, &mut r)?;
        let span = r.tally.end_file(label, &spec.display_name(), &file_info.warnings);
        files.note(specs, f, span, label);
        info = Some(ingest::merge_info(info, file_info));
    }
    let info =
        info.ok_or_else(|| ReadError { file: label.to_string(), kind: crate::read::ReadErrorKind::Empty })?;
    r.finish(None, &info);
    let most_held = r.most_held;
    if r.elsewhere > 0 {
        r.tally.warnings_mut().push(elsewhere_warning(label, names, r.elsewhere, r.keys.as_deref()));
    }
    let mut tally = r.tally;
    files.finish(tally.warnings_mut(), order.len());
    let counts = tally.counts().clone();
    Ok((tally.finish(label, names, info), most_held, counts))
}

/// [`read_point`] of a live point (`--follow`): its one input read as it
/// comes, the reader ticked while it is silent.
fn read_live_point(
    r: Reader<'_>,
    spec: &crate::read::CaptureSpec,
    f: usize,
    follow: Follow,
    progress: &dyn Progress,
) -> Result<(CaptureResult, usize, ingest::PointCounts), ReadError> {
    let (label, names) = (r.label, r.names);
    let cell = RefCell::new(r);
    let on_quiet = |data_at: Instant| {
        if let Ok(mut r) = cell.try_borrow_mut() {
            r.tick(data_at);
        }
    };
    let idle = std::time::Duration::from_nanos(u64::try_from(follow.idle_ns).unwrap_or(0));
    let live = crate::read::Live { idle, stop: &STOP, on_quiet: &on_quiet };
    let read = ingest::ingest_live(spec, f, progress, live, &mut SharedReader(&cell));
    let mut r = cell.into_inner();
    let (info, end) = read?;
    r.tally.end_file(label, &spec.display_name(), &info.warnings);
    // The coordinator learns that this point stopped before the windows it
    // now finishes: the requests after its last packet find it blind.
    let last = r.live.as_ref().and_then(|l| l.last).unwrap_or(i64::MIN);
    if !r.gone && r.tx.send(Msg::Stopped(last)).is_err() {
        r.gone = true;
    }
    r.finish(None, &info);
    let most_held = r.most_held;
    let late = r.live.as_ref().map_or(0, |l| l.late);
    let mut tally = r.tally;
    let warnings = tally.warnings_mut();
    match end {
        crate::read::LiveEnd::Eof => {}
        crate::read::LiveEnd::Idle => warnings.push(Warning::of_run(
            label,
            format!(
                "no byte came for {} s (--follow-idle): this input is taken as stopped",
                follow.idle_ns as f64 / 1e9
            ),
            "the requests that begin after its last packet list it as blind (its silence is no evidence) \
             instead of blaming it",
        )),
        crate::read::LiveEnd::Stopped => warnings.push(Warning::of_run(
            label,
            if FAILED_ON.load(Ordering::SeqCst) {
                "the run was ended by --fail-on (a request matched) while this input was still open".into()
            } else {
                "the run was stopped (SIGINT or SIGTERM) while this input was still open".into()
            },
            "requests whose connections were still open are written with what was read by then (their \
             outcome as of then)",
        )),
    }
    if late > 0 {
        warnings.push(Warning::of_run(
            label,
            format!(
                "{late} packets came more than {} s after their time on this point's clock, once the \
                 windows they belong to were written",
                LIVE_SLACK_NS as f64 / 1e9
            ),
            "they are not in the report (a capture buffered on its way: give tcpdump -U)",
        ));
    }
    let counts = tally.counts().clone();
    Ok((tally.finish(label, names, info), most_held, counts))
}

/// What the points of a live run share: the clocks' shifts once the run
/// pinned them, the latest packet time read, each point's clock against the
/// wall clock.
struct Shared {
    pins: OnceLock<Vec<i64>>,
    latest: AtomicI64,
    skews: Vec<AtomicI64>,
    epoch: Instant,
}

/// What the coordinator keeps from window to window.
struct Run<'a> {
    config: &'a Config,
    stream: StreamConfig,
    plan: Plan,
    names: &'a [(String, String)],
    /// The clocks the windows use: `--clocks-from`, else those of the first
    /// window that estimated every point's.
    pins: Option<PinnedClocks>,
    /// Requests handed on so far.
    numbered: u64,
    /// Per point: copies of flows folded in the windows' own times.
    copies: Vec<u64>,
    /// Per point: flows answered on another interface, likewise.
    answered: Vec<ingest::Elsewhere>,
    /// What the windows owned, summed: the run's captures, boundaries and
    /// unmatched flows.
    totals: Totals,
    /// Per point: its observation points, from the first part with flows.
    keys: Vec<Option<Vec<Option<PointKey>>>>,
    /// Live: per point, the time (its clock) its input stopped at, once it has.
    stopped: Vec<Option<i64>>,
    /// Live: per point, the requests that began after it stopped (blind there).
    blind_after_stop: Vec<u64>,
}

/// The run's totals, window by window.
#[derive(Default)]
struct Totals {
    /// Each capture's observation points, as the first window split them.
    keys: Option<Vec<Vec<Option<PointKey>>>>,
    /// The run's findings without requests and warnings: their clocks (those
    /// pinned, or the first window's), and the windows' sums.
    findings: Option<Findings>,
    boundaries: Vec<crate::verdict::BoundaryTally>,
    /// Windows whose points were split otherwise than the first's (left out of the sums).
    split_otherwise: Vec<i64>,
    /// Whose clocks the run reports.
    clocks_from: ClocksFrom,
    /// Windows without capture 1 before the first with it (whose clocks they need).
    early: Vec<EarlyWindow>,
    /// `--all`: the unmatched flows are listed, not only counted.
    list_unmatched: bool,
}

/// Adds what a window owned to the run's counts of flows and unmatched flows,
/// and its captures' recorded times to the run's.
fn add_owned(
    run: &mut Findings,
    flows: &[u64],
    unmatched: Vec<crate::verdict::Unmatched>,
    recorded: &[Option<(i64, i64)>],
) {
    for (c, n) in run.captures.iter_mut().zip(flows) {
        c.flows += n;
    }
    for (c, more) in run.captures.iter_mut().zip(recorded) {
        c.recorded = match (c.recorded, *more) {
            (Some((a, b)), Some((x, y))) => Some((a.min(x), b.max(y))),
            (mine, theirs) => mine.or(theirs),
        };
    }
    for (u, more) in run.unmatched.iter_mut().zip(unmatched) {
        u.count += more.count;
        u.flows.extend(more.flows);
    }
}

/// A window's times and, per capture, what it read (None: nothing).
type EarlyWindow = ((i64, i64), Vec<Option<CaptureResult>>);

/// Which window's clocks a stream's report gives as the run's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum ClocksFrom {
    /// The first window's, until a window with requests comes.
    #[default]
    First,
    /// The window with requests whose estimates had the most samples (this many) so far.
    Best(u64),
    /// The window they were pinned from, used by every window after it.
    Pinned,
}

impl Totals {
    /// Adds what a window (`own`: its times) without capture 1 owns (`results`:
    /// per capture, None where it holds nothing): flows and unmatched flows of
    /// the later captures, on the run's clocks so far.
    fn add_without_requests(&mut self, own: (i64, i64), results: Vec<Option<CaptureResult>>) {
        let (Some(run), Some(keys)) = (&mut self.findings, &self.keys) else {
            self.early.push((own, results));
            return;
        };
        // The run's points, each with this window's flows of it.
        let mut flows: Vec<crate::flows::Flows> = Vec::new();
        for (result, keys) in results.into_iter().zip(keys) {
            match result {
                None => flows.extend(keys.iter().map(|_| crate::flows::Flows::default())),
                Some(r) if r.points.iter().map(|p| p.0).eq(keys.iter().copied()) => {
                    flows.extend(r.points.into_iter().map(|p| p.1))
                }
                Some(_) => {
                    self.split_otherwise.push(own.0);
                    return;
                }
            }
        }
        if flows.len() != run.captures.len() {
            self.split_otherwise.push(own.0);
            return;
        }
        let clock = |c: &crate::verdict::CaptureSummary| crate::correlate::ClockEstimate {
            offset_ns: c.clock_offset_ns,
            spread_ns: c.offset_spread_ns,
            samples: c.offset_samples as usize,
            method: c.offset_method,
        };
        let correlation = crate::correlate::Correlation {
            clocks: run.captures.iter().map(clock).collect(),
            delays_ns: vec![None; flows.len().saturating_sub(1)],
            chains: Vec::new(),
            unmatched: flows.iter().map(|f| (0..f.flows.len()).collect()).collect(),
            estimated: None,
        };
        let options = crate::verdict::VerdictOptions {
            list_unmatched: self.list_unmatched,
            part: true,
            ..Default::default()
        };
        let owned = crate::verdict::window_totals(&flows, &correlation, own, &options);
        let recorded: Vec<Option<(i64, i64)>> =
            flows.iter().map(|f| crate::verdict::recorded(&f.flows)).collect();
        add_owned(run, &owned.flows, owned.unmatched, &recorded);
    }

    /// The run's findings (without requests and warnings) from the windows'
    /// sums and the captures' own counts (`results`: their tallies); a warning
    /// for windows left out.
    fn finish(
        &mut self,
        names: &[(String, String)],
        results: &[CaptureResult],
        links: &std::collections::BTreeMap<u32, String>,
        warnings: &mut Vec<Warning>,
    ) -> Findings {
        let mut run = self.findings.take().unwrap_or_else(|| Findings {
            tuplecorr: crate::VERSION.to_string(),
            captures: Vec::new(),
            boundaries: Vec::new(),
            requests: Vec::new(),
            unmatched: Vec::new(),
            warnings: Vec::new(),
        });
        let metas = pipeline::capture_metas(names, results, links);
        if metas.len() == run.captures.len() {
            for (c, m) in run.captures.iter_mut().zip(metas) {
                (c.label, c.file, c.format, c.link_types) = (m.label, m.file, m.format, m.link_types);
                (c.packets, c.overlays) = (m.packets, m.overlays);
            }
        }
        let delays: Vec<Option<i64>> = run.boundaries.iter().map(|b| b.delay_ns).collect();
        run.boundaries = crate::verdict::finish_boundaries(&self.boundaries, &delays);
        if let (Some(&first), Some(label)) = (self.split_otherwise.first(), names.first()) {
            warnings.push(split_warning(&label.0, self.split_otherwise.len(), first));
        }
        run
    }

    /// Adds the window beginning at `start_ns` (its points `keys`, its
    /// `findings`, what it owned). `pinned`: the clocks were pinned from this
    /// window; `requests`: it owns requests.
    fn add(
        &mut self,
        start_ns: i64,
        keys: Vec<Vec<Option<PointKey>>>,
        findings: &Findings,
        (pinned, requests): (bool, bool),
        owned: crate::verdict::WindowTotals,
    ) {
        let samples: u64 = findings.captures.iter().map(|c| c.offset_samples).sum();
        let clocks = match self.clocks_from {
            _ if pinned => Some(ClocksFrom::Pinned),
            ClocksFrom::Pinned => None,
            ClocksFrom::Best(best) => (requests && samples > best).then_some(ClocksFrom::Best(samples)),
            ClocksFrom::First => requests.then_some(ClocksFrom::Best(samples)),
        };
        if self.findings.is_none() {
            // The first window: the run's points, clocks and words, nothing counted yet.
            let mut run = Findings { requests: Vec::new(), warnings: Vec::new(), ..findings.clone() };
            run.captures.iter_mut().for_each(|c| (c.flows, c.recorded) = (0, None));
            run.unmatched.iter_mut().for_each(|u| (u.count, u.flows) = (0, Vec::new()));
            self.boundaries = vec![Default::default(); owned.boundaries.len()];
            self.keys = Some(keys.clone());
            self.findings = Some(run);
            // The windows without capture 1 before this one come first.
            for (own, results) in std::mem::take(&mut self.early) {
                self.add_without_requests(own, results);
            }
        }
        let Some(run) = &mut self.findings else { return };
        if self.keys.as_ref() != Some(&keys) || run.captures.len() != findings.captures.len() {
            self.split_otherwise.push(start_ns);
            return;
        }
        if let Some(from) = clocks {
            self.clocks_from = from;
            for (c, now) in run.captures.iter_mut().zip(&findings.captures) {
                (c.clock_offset_ns, c.offset_spread_ns) = (now.clock_offset_ns, now.offset_spread_ns);
                (c.offset_samples, c.offset_method) = (now.offset_samples, now.offset_method);
            }
            for (b, now) in run.boundaries.iter_mut().zip(&findings.boundaries) {
                b.delay_ns = now.delay_ns;
            }
        }
        let recorded: Vec<Option<(i64, i64)>> = findings.captures.iter().map(|c| c.recorded).collect();
        add_owned(run, &owned.flows, owned.unmatched, &recorded);
        for (b, more) in self.boundaries.iter_mut().zip(&owned.boundaries) {
            b.merge(more);
        }
    }
}

impl Run<'_> {
    /// Counts what window `k` owns of the later captures when capture 1
    /// holds nothing of it (so none of its flows is matched).
    fn without_requests(&mut self, k: i64, parts: Vec<Option<Part>>) {
        let results = (parts.into_iter().enumerate())
            .map(|(c, part)| {
                part.map(|p| {
                    self.copies[c] += p.copies;
                    self.answered[c].add(p.answered);
                    p.result
                })
            })
            .collect();
        self.totals.add_without_requests(self.plan.own(k), results);
    }

    /// Correlates window `k` from its parts (None: the point holds nothing of it)
    /// and gives its requests, numbered on.
    fn window(&mut self, k: i64, parts: Vec<Option<Part>>) -> Findings {
        let (start_ns, end_ns) = self.plan.own(k);
        let shard = Shard { start_ns, end_ns, margin_ns: self.plan.margin_ns };
        let mut results = Vec::with_capacity(parts.len());
        for (c, part) in parts.into_iter().enumerate() {
            results.push(match part {
                Some(p) => {
                    self.copies[c] += p.copies;
                    self.answered[c].add(p.answered);
                    if self.keys[c].is_none() && p.result.points.iter().any(|p| !p.1.flows.is_empty()) {
                        self.keys[c] = Some(p.result.points.iter().map(|p| p.0).collect());
                    }
                    p.result
                }
                // Nothing of this point here: its points as its reader splits it, empty.
                None => empty_result_with(self.keys[c].as_deref()),
            });
        }
        // Read from part-way (not from the files' start): its clocks are its own part's.
        let cut = results.iter().any(|r| r.cut.read_from.is_some());
        let keys: Vec<Vec<Option<PointKey>>> =
            results.iter().map(|r| r.points.iter().map(|p| p.0).collect()).collect();
        // Per sub-point (of a split capture), its point.
        let sub_points: Vec<usize> = (keys.iter().enumerate()).flat_map(|(c, k)| vec![c; k.len()]).collect();
        // A live point that stopped is blind to the requests after it (each of its sub-points).
        let stopped: Vec<Option<i64>> = if self.stopped.iter().any(Option::is_some) {
            sub_points.iter().map(|&c| self.stopped[c]).collect()
        } else {
            Vec::new()
        };
        let config = Config {
            shard: Some(shard),
            clocks_from: self.pins.clone(),
            stream: Some(self.stream),
            stopped,
            ..self.config.clone()
        };
        let own = Some((start_ns, end_ns));
        let (mut findings, _, totals) = pipeline::conclude_owning(&config, self.names, results, false, own);
        let unpinned = self.pins.is_none();
        if unpinned {
            self.pins = pins_of(&findings);
        }
        shard::keep_requests(&mut findings, &shard);
        if self.pins.is_none() && cut && self.names.len() > 1 && !findings.requests.is_empty() {
            findings.warnings.push((&unpinned_warning(&self.names[0].0, self.plan.window_ns)).into());
        }
        if let Some(totals) = totals {
            let pinned = unpinned && self.pins.is_some();
            self.totals.add(start_ns, keys, &findings, (pinned, !findings.requests.is_empty()), totals);
        }
        for r in &mut findings.requests {
            self.numbered += 1;
            r.request = self.numbered;
        }
        if !config.stopped.is_empty() {
            for b in findings.requests.iter().flat_map(|r| &r.blind) {
                if let Some(&c) = sub_points.get(*b) {
                    self.blind_after_stop[c] += 1;
                }
            }
        }
        findings
    }
}

/// Per point (`names`: label and files), its clock's shift from capture 1's in
/// `pins` (a split capture's sub-points, `node(in if2)`, share its clock);
/// None when a point has none.
fn shifts_of(pins: &PinnedClocks, names: &[(String, String)]) -> Option<Vec<i64>> {
    let of = |label: &str| {
        let prefix = format!("{label}(");
        (pins.clocks.iter()).find(|(l, _, _)| l == label || l.starts_with(&prefix)).map(|(_, o, _)| *o)
    };
    let base = of(&names.first()?.0)?;
    names.iter().map(|(label, _)| of(label).map(|o| o.saturating_sub(base))).collect()
}

/// The clocks of a window's findings, when every point's was found (or given).
fn pins_of(findings: &Findings) -> Option<PinnedClocks> {
    use crate::verdict::OffsetMethod;
    let known = |c: &crate::verdict::CaptureSummary| match c.offset_method {
        OffsetMethod::None => false,
        OffsetMethod::RequestReply | OffsetMethod::OneWay | OffsetMethod::TimeFree => {
            c.offset_samples >= MIN_PIN_SAMPLES
        }
        OffsetMethod::Reference | OffsetMethod::Manual | OffsetMethod::SameCapture => true,
    };
    if !findings.captures.iter().all(known) {
        return None;
    }
    Some(PinnedClocks {
        source: PINS_SOURCE.into(),
        clocks: (findings.captures.iter())
            .map(|c| (c.label.clone(), c.clock_offset_ns, c.offset_spread_ns))
            .collect(),
        delays: (findings.boundaries.iter())
            .filter_map(|b| {
                let name = format!("{}->{}", findings.label(b.between.from), findings.label(b.between.to));
                b.delay_ns.map(|d| (name, Some(d)))
            })
            .collect(),
    })
}

/// The warning for a window that estimated its own clocks because no window
/// before gave every point's (too few requests crossed each boundary in one).
fn unpinned_warning(label: &str, window_ns: i64) -> Warning {
    Warning::of_run(
        label,
        format!(
            "{} s windows of the stream estimated the clocks from their own flows until one had \
             {MIN_PIN_SAMPLES} requests crossing every boundary (its clocks are then pinned for the rest; \
             maybe none had); the run without --stream estimates them from all flows and may place those \
             windows' requests slightly otherwise",
            window_ns as f64 / 1e9
        ),
        "give --clocks-from REPORT (a JSON report of these captures) or a longer --stream-window",
    )
}

/// The warning for windows whose captures were split into other observation
/// points than the first window's (`-i any` captures whose interfaces carried
/// copies only part of the time).
fn split_warning(label: &str, windows: usize, first_ns: i64) -> Warning {
    Warning::of_run(
        label,
        format!(
            "{windows} windows of the stream (the first beginning at {}) split a capture into other \
             observation points than the first window did",
            crate::time::rfc3339(first_ns)
        ),
        "their flows and unmatched flows are left out of the run's counts and boundary traits; their \
         requests are reported with their own points",
    )
}

/// The warning for flows on interfaces other than those the first window
/// split the capture into (they were counted at its first point).
fn elsewhere_warning(label: &str, file: &str, flows: u64, keys: Option<&[Option<PointKey>]>) -> Warning {
    let points = keys.map_or(0, <[_]>::len);
    Warning {
        file: file.to_string(),
        ..Warning::of_run(
            label,
            format!(
                "{flows} flows were on interfaces the stream's first window did not split this capture by \
                 (it split it into {points} observation points, as the first window's flows showed)"
            ),
            "they were counted at its first point; the run without --stream splits the capture by all of it",
        )
    }
}

/// How warnings name the clocks a streaming run pinned.
pub const PINS_SOURCE: &str = "the stream's first window";

/// What a streaming run gives at its end.
#[derive(Debug)]
pub struct Finished {
    /// The run's own warnings (reading, damage, copies), known only at the end.
    pub warnings: Vec<Warning>,
    /// Per point: the most windows it held at once (being read, or finished and
    /// waiting for the windows before them): what bounds the run's memory.
    pub most_held: Vec<usize>,
    /// The run's findings without requests and warnings: each capture's
    /// packets, flows and clock (the one pinned, else the first window's), the
    /// boundaries' traits over every request (delays as pinned), the unmatched
    /// flows: what the run without --stream reports, from the windows' sums.
    pub findings: Findings,
}

/// Runs the pipeline streaming (see the module): `emit` gets each window's
/// findings (its requests, numbered on; its warnings) in time order, windows
/// without a request included.
pub fn run(
    config: &Config,
    stream: StreamConfig,
    progress: &dyn Progress,
    emit: &mut dyn FnMut(Findings) -> std::io::Result<()>,
) -> Result<Finished, StreamError> {
    let plan = Plan::of(config, stream);
    let specs = &config.captures;
    let points = crate::read::point_files(specs);
    let orders: Vec<Vec<usize>> = points.iter().map(|files| ingest::reading_order(specs, files).0).collect();
    let names: Vec<(String, String)> = (orders.iter())
        .map(|o| {
            let files: Vec<String> = o.iter().map(|&f| specs[f].display_name()).collect();
            (specs[o[0]].label.clone(), files.join(", "))
        })
        .collect();
    let n = points.len();
    let live = stream.follow.is_some();
    let shared = Shared {
        pins: OnceLock::new(),
        latest: AtomicI64::new(i64::MIN),
        skews: (0..n).map(|_| AtomicI64::new(i64::MIN)).collect(),
        epoch: Instant::now(),
    };
    if let (true, Some(pins)) = (live, &config.clocks_from) {
        if let Some(shifts) = shifts_of(pins, &names) {
            let _ = shared.pins.set(shifts);
        }
    }
    let (pins_lock, shared) = (&shared.pins, &shared);
    std::thread::scope(|s| {
        let mut rxs: Vec<Receiver<Msg>> = Vec::with_capacity(n);
        let mut readers = Vec::with_capacity(n);
        for (c, order) in orders.iter().enumerate() {
            // A rendezvous: a reader hands a window over only when the
            // coordinator takes it, so one far ahead of a slow one does not
            // pile up finished windows (their flows) meanwhile.
            let (tx, rx) = sync_channel::<Msg>(0);
            rxs.push(rx);
            let (label, files) = (&names[c].0, &names[c].1);
            let shared = live.then_some(shared);
            readers.push(Some(
                s.spawn(move || read_point(config, plan, c, order, n, (label, files), progress, tx, shared)),
            ));
        }
        let mut run = Run {
            config,
            stream,
            plan,
            names: &names,
            pins: config.clocks_from.clone(),
            numbered: 0,
            copies: vec![0; n],
            answered: vec![Default::default(); n],
            totals: Totals { list_unmatched: config.list_unmatched, ..Totals::default() },
            keys: vec![None; n],
            stopped: vec![None; n],
            blind_after_stop: vec![0; n],
        };
        let mut pending: Vec<Option<Part>> = (0..n).map(|_| None).collect();
        let mut tallies: Vec<Option<(CaptureResult, ingest::PointCounts)>> = (0..n).map(|_| None).collect();
        let mut most_held = vec![0; n];
        // Per point: it sends no part before this window (live points say so while silent).
        let mut floors = vec![i64::MIN; n];
        let mut emitted = false;
        loop {
            let next = pending.iter().flatten().map(|p| p.k).min();
            for c in 0..n {
                if pending[c].is_some() || tallies[c].is_some() || next.is_some_and(|k| floors[c] > k) {
                    continue;
                }
                match rxs[c].recv() {
                    Ok(Msg::Part(part)) => pending[c] = Some(*part),
                    Ok(Msg::Upto(k)) => floors[c] = floors[c].max(k),
                    Ok(Msg::Stopped(t)) => run.stopped[c] = Some(t),
                    Err(_) => {
                        let reader = readers[c].take().expect("a reader is joined once");
                        match reader.join() {
                            Ok(Ok((tally, held, counts))) => {
                                tallies[c] = Some((tally, counts));
                                most_held[c] = held;
                            }
                            Ok(Err(e)) => return Err(StreamError::Read(e)),
                            Err(panic) => std::panic::resume_unwind(panic),
                        }
                    }
                }
            }
            let Some(k) = pending.iter().flatten().map(|p| p.k).min() else {
                if tallies.iter().all(Option::is_some) {
                    break;
                }
                continue;
            };
            // A live point that may still send a part of window k: wait for it.
            if (0..n).any(|c| pending[c].is_none() && tallies[c].is_none() && floors[c] <= k) {
                continue;
            }
            let parts: Vec<Option<Part>> = (pending.iter_mut())
                .map(|p| if p.as_ref().is_some_and(|p| p.k == k) { p.take() } else { None })
                .collect();
            // No flow of capture 1 there: no request begins in it, and every
            // flow of the others it owns is unmatched.
            if parts[0].is_none() {
                run.without_requests(k, parts);
                continue;
            }
            let findings = run.window(k, parts);
            if let (true, None, Some(pins)) = (live, pins_lock.get(), &run.pins) {
                if let Some(shifts) = shifts_of(pins, &names) {
                    let _ = pins_lock.set(shifts);
                }
            }
            emit(findings).map_err(StreamError::Emit)?;
            emitted = true;
        }
        if !emitted {
            // Capture 1 held no record: one empty window, as the run without --stream reports it.
            emit(run.window(0, (0..n).map(|_| None).collect())).map_err(StreamError::Emit)?;
        }
        let mut warnings = Vec::new();
        for (c, &blind) in run.blind_after_stop.iter().enumerate().filter(|(_, &b)| b > 0) {
            let at = run.stopped[c]
                .filter(|&t| t != i64::MIN)
                .map_or("its start".to_string(), crate::time::rfc3339);
            warnings.push(Warning::of_run(
                &names[c].0,
                format!("this input ended (its last packet at {at}) while the other capture points went on"),
                &format!(
                    "{blind} requests that began after it list it as blind: its silence is no evidence, so \
                     nothing is blamed on it"
                ),
            ));
        }
        let mut results = Vec::with_capacity(n);
        let keys = run.totals.keys.take().unwrap_or_default();
        for (c, tally) in tallies.into_iter().enumerate() {
            let Some((mut tally, counts)) = tally else { continue };
            warnings.extend(std::mem::take(&mut tally.warnings));
            warnings.extend(ingest::duplicate_flows_warning(&names[c].0, &names[c].1, run.copies[c]));
            warnings.extend(run.answered[c].warning(&names[c].0, &names[c].1));
            // The run's points are the first window's; their packets are the files'.
            let keys = keys.get(c).cloned().unwrap_or_else(|| vec![None]);
            let (packets, overlays) = counts.of(&keys, tally.info.packets);
            tally.points =
                keys.into_iter().zip(packets).map(|(k, n)| (k, crate::flows::Flows::default(), n)).collect();
            tally.overlays = overlays;
            results.push(tally);
        }
        let findings = run.totals.finish(&names, &results, &run.config.link_names, &mut warnings);
        Ok(Finished { warnings, most_held, findings })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_past_its_reach_waits_the_hold_after_its_open_flows_last_packet_at_most_past_the_reach() {
        // Nothing may go on: done.
        assert_eq!(past_reach(None, 101, 100, 10), Past::Done);
        // A flow silent since 95: cut once the hold has passed since then (at
        // 106), not the hold past the reach (110); checked again right then.
        assert_eq!(past_reach(Some(95), 101, 100, 10), Past::Wait { until: 106 });
        assert_eq!(past_reach(Some(95), 105, 100, 10), Past::Wait { until: 106 });
        assert_eq!(past_reach(Some(95), 106, 100, 10), Past::Cut);
        // A flow that goes on (packets up to now): at most the hold past the reach.
        assert_eq!(past_reach(Some(109), 110, 100, 10), Past::Wait { until: 111 });
        assert_eq!(past_reach(Some(111), 111, 100, 10), Past::Cut);
        // No overflow at the ends of time.
        assert_eq!(
            past_reach(Some(i64::MAX), i64::MAX, i64::MAX - 1, i64::MAX),
            Past::Wait { until: i64::MAX }
        );
    }

    #[test]
    fn a_time_opens_exactly_the_windows_whose_reach_holds_it() {
        let plan = Plan {
            window_ns: 300,
            reach_ns: [140, 200],
            margin_ns: 140,
            udp_idle_ns: 10,
            hold_ns: 600,
            linger_ns: 60,
        };
        for first in [true, false] {
            for t in -1_000..1_000 {
                let (from, to) = plan.windows_at(t, first);
                assert!(from <= to, "t {t}: {from}..{to}");
                for k in from - 3..=to + 3 {
                    let (lo, hi) = plan.reach(k, first);
                    assert_eq!(
                        (from..=to).contains(&k),
                        lo <= t && t <= hi,
                        "t {t}, window {k}: {lo}..={hi}"
                    );
                }
            }
        }
        // A window's own times are within its reach on every point, and the
        // windows' own times tile the clock.
        for k in -3..3 {
            let (start, end) = plan.own(k);
            assert_eq!(plan.own(k + 1).0, end);
            assert_eq!(plan.reach(k, true), (start - 140, end + 140));
            assert_eq!(plan.reach(k, false), (start - 200, end + 200));
        }
    }

    #[test]
    fn the_reach_of_other_captures_covers_given_and_pinned_offsets() {
        let mut config = Config::default();
        let stream = StreamConfig { window_ns: 300, hold_ns: DEFAULT_HOLD_NS, follow: None };
        assert_eq!(Plan::of(&config, stream).reach_ns, [140_000_000_000, 200_000_000_000]);
        config.correlate.offsets_ns = vec![(1, -90_000_000_000)];
        assert_eq!(
            Plan::of(&config, stream).reach_ns[1],
            230_000_000_000,
            "a 90 s offset beyond --max-offset"
        );
        config.correlate.max_offset_ns = Some(5_000_000_000);
        config.correlate.offsets_ns.clear();
        assert_eq!(Plan::of(&config, stream).reach_ns[1], 145_000_000_000);
    }

    #[test]
    fn a_window_waits_for_its_flows_to_end_or_fall_silent() {
        use crate::flows::{Endpoint, FlowProto, Ns, Orientation};
        let ep = |port| Endpoint { addr: "198.18.0.1".parse().unwrap(), port };
        let s = 1_000_000_000;
        let mut tcp = Flow::new(FlowProto::Tcp, false, ep(40000), ep(80), Orientation::Syn, 0);
        tcp.last_ns = 10 * s;
        // Open and heard from 100 s ago: a SYN retransmission could still come.
        assert!(may_go_on(&tcp, 110 * s, 10 * s, LINGER_NS));
        // Silent for the reach of a SYN retransmission: given up.
        assert!(!may_go_on(&tcp, 141 * s, 10 * s, LINGER_NS));
        // Closed both ways: only the linger.
        tcp.client_fin_ns = Ns::at(9 * s);
        tcp.server_fin_ns = Ns::at(10 * s);
        assert!(may_go_on(&tcp, 69 * s, 10 * s, LINGER_NS));
        assert!(!may_go_on(&tcp, 71 * s, 10 * s, LINGER_NS));
        let mut udp = Flow::new(FlowProto::Udp, false, ep(5353), ep(53), Orientation::FirstPacket, 0);
        udp.last_ns = 10 * s;
        assert!(may_go_on(&udp, 69 * s, 10 * s, LINGER_NS), "the linger outlasts --udp-idle");
        assert!(!may_go_on(&udp, 71 * s, 10 * s, LINGER_NS));
    }
}
