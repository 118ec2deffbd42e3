//! The reply path of one request (docs/output.md "Verdicts", normative): a reply at a
//! capture is any server→client packet of that capture's flow (SYN-ACK, data,
//! FIN, RST) or an ICMP error quoting it. `same-path` when every capture that saw
//! the request saw a reply — or every one up to where a reply was forged in
//! between; `reply-lost` when a reply seen at B is missing at the capture A before
//! it; `bypassed` when replies were seen on both sides of a capture that saw the
//! request but no reply; `no-reply` when none was seen anywhere.
//! Takes a chain's flows per capture; gives a typed `Reply`. Never formats text.

use super::model::{Between, IcmpCode, LostCause, Reply, ReplyPath};
use crate::flows::Flow;

pub(crate) fn reply(flows: &[Option<&Flow>]) -> Reply {
    let seen: Vec<usize> = (0..flows.len()).filter(|&c| flows[c].is_some()).collect();
    let replied: Vec<bool> = seen.iter().map(|&c| flows[c].is_some_and(|f| f.reply_seen())).collect();
    let reached = seen.last().copied();
    let lost_cause = lost_cause(flows);
    let mut r = Reply {
        path: ReplyPath::SamePath,
        lost_between: None,
        bypassed: None,
        reached,
        lost_cause,
        unexpected_source: None,
    };
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

/// The first ICMP error quoting a server → client packet, at the capture
/// nearest the client that saw one (the nearest to its sender).
fn lost_cause(flows: &[Option<&Flow>]) -> Option<LostCause> {
    flows.iter().enumerate().find_map(|(c, f)| {
        let e = (*f)?.icmp_errors.iter().filter(|e| !e.about_request).min_by_key(|e| e.ts_ns)?;
        Some(LostCause { icmp: IcmpCode { ty: e.icmp_type, code: e.code }, by: e.sender, seen_at: c })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{answered, test_flow};

    fn flows(replied: &[Option<bool>]) -> Vec<Option<Flow>> {
        replied
            .iter()
            .map(|r| {
                r.map(|yes| {
                    let f = test_flow(("198.18.90.42", 51514), ("198.19.96.10", 80), 0);
                    if yes {
                        answered(f, 10)
                    } else {
                        f
                    }
                })
            })
            .collect()
    }

    fn verdict(replied: &[Option<bool>]) -> Reply {
        let owned = flows(replied);
        let refs: Vec<Option<&Flow>> = owned.iter().map(Option::as_ref).collect();
        reply(&refs)
    }

    #[test]
    fn replies_everywhere_are_same_path_and_reached_is_the_last_seen_capture() {
        let r = verdict(&[Some(true), Some(true), None]);
        assert_eq!((r.path, r.reached, r.lost_between), (ReplyPath::SamePath, Some(1), None));
    }

    #[test]
    fn reply_missing_before_the_first_capture_with_one_is_lost_there() {
        let r = verdict(&[Some(false), Some(false), Some(true)]);
        assert_eq!(r.path, ReplyPath::ReplyLost);
        assert_eq!(r.lost_between, Some(Between { from: 1, to: 2 }));
        // A capture that did not see the request is skipped: the boundary spans it.
        let r = verdict(&[Some(false), None, Some(true)]);
        assert_eq!(r.lost_between, Some(Between { from: 0, to: 2 }));
    }

    #[test]
    fn a_capture_without_reply_between_two_with_replies_was_bypassed() {
        let r = verdict(&[Some(true), Some(false), Some(true)]);
        assert_eq!((r.path, r.bypassed), (ReplyPath::Bypassed, Some(1)));
    }

    #[test]
    fn no_reply_anywhere_is_no_reply() {
        let r = verdict(&[Some(false), Some(false), None]);
        assert_eq!((r.path, r.reached), (ReplyPath::NoReply, Some(1)));
    }

    #[test]
    fn an_icmp_error_quoting_the_reply_is_the_lost_cause_at_the_capture_nearest_the_client() {
        use crate::flows::IcmpError;
        let err = |ts_ns, code, about_request| IcmpError {
            ts_ns,
            sender: "198.19.3.17".parse().unwrap(),
            v6: false,
            icmp_type: 3,
            code,
            ttl: 64,
            about_request,
        };
        let mut owned = flows(&[Some(false), Some(false), Some(true)]);
        // an error about the request is the outcome's business, not a lost reply
        owned[1].as_mut().unwrap().icmp_errors.push(err(5, 13, true));
        owned[2].as_mut().unwrap().icmp_errors.extend([err(30, 1, false), err(20, 0, false)]);
        let refs: Vec<Option<&Flow>> = owned.iter().map(Option::as_ref).collect();
        let cause = reply(&refs).lost_cause.expect("the error about the reply");
        assert_eq!((cause.icmp.ty, cause.icmp.code, cause.seen_at), (3, 0, 2), "the first one, where seen");
        assert_eq!(cause.by, "198.19.3.17".parse::<std::net::IpAddr>().unwrap());
        owned[2].as_mut().unwrap().icmp_errors.clear();
        let refs: Vec<Option<&Flow>> = owned.iter().map(Option::as_ref).collect();
        assert_eq!(reply(&refs).lost_cause, None);
    }
}
