//! The reply path of one request (DESIGN.md step 5, normative): a reply at a
//! capture is any server→client packet of that capture's flow (SYN-ACK, data,
//! FIN, RST) or an ICMP error quoting it. `same-path` when every capture that saw
//! the request saw a reply — or every one up to where a reply was forged in
//! between; `reply-lost` when a reply seen at B is missing at the capture A before
//! it; `bypassed` when replies were seen on both sides of a capture that saw the
//! request but no reply; `no-reply` when none was seen anywhere.
//! Takes a chain's flows per capture; gives a typed `Reply`. Never formats text.

use super::model::{Between, Reply, ReplyPath};
use crate::flows::Flow;

pub(crate) fn reply(flows: &[Option<&Flow>]) -> Reply {
    let seen: Vec<usize> = (0..flows.len()).filter(|&c| flows[c].is_some()).collect();
    let replied: Vec<bool> = seen.iter().map(|&c| flows[c].is_some_and(|f| f.reply_seen())).collect();
    let reached = seen.last().copied();
    let mut r = Reply { path: ReplyPath::SamePath, lost_between: None, bypassed: None, reached };
    if !replied.iter().any(|&x| x) {
        r.path = ReplyPath::NoReply;
        return r;
    }
    // A capture without reply between two with replies: the reply went around it.
    for k in 1..seen.len().saturating_sub(1) {
        if !replied[k] && replied[..k].iter().any(|&x| x) && replied[k + 1..].iter().any(|&x| x) {
            r.path = ReplyPath::Bypassed;
            r.bypassed = Some(seen[k]);
            return r;
        }
    }
    // The nearest-to-client capture with a reply; if one before it lacks it, lost.
    if let Some(k) = replied.iter().position(|&x| x) {
        if k > 0 {
            r.path = ReplyPath::ReplyLost;
            r.lost_between = Some(Between { from: seen[k - 1], to: seen[k] });
        }
    }
    r
}
