//! Fragment findings, after the verdicts (issue 32): per request, its
//! fragmented datagrams at each capture (each way) and the boundaries where
//! datagrams whole on one side arrived with fragments missing on the other;
//! per neighbour boundary, what fragmented datagrams did there. A post-pass
//! over the findings, from the flows' counts (`flows::FragFlow`, made by
//! `flows::reassembly`): the verdict stage knows nothing of fragments. A run
//! whose flows hold no fragmented datagram pays one scan of its flows.

use crate::correlate::Correlation;
use crate::flows::{Flows, FragDir, FragFlow};
use crate::verdict::{Between, BoundaryFragments, Findings, FragLoss, Fragments};

/// Fills `Request::fragments` and `Boundary::fragmentation` of `findings`,
/// made from `captures` and `corr` (request n is the chain
/// `verdict::request_order` puts at n - 1).
pub fn add(findings: &mut Findings, captures: &[Flows], corr: &Correlation) {
    if !captures.iter().any(|c| c.flows.iter().any(|f| f.frags.is_some())) {
        return;
    }
    let order = crate::verdict::request_order(captures, corr);
    let mut tallies = vec![BoundaryFragments::default(); findings.boundaries.len()];
    for r in &mut findings.requests {
        let Some(&chain) = usize::try_from(r.request).ok().and_then(|n| order.get(n.checked_sub(1)?)) else {
            continue;
        };
        let hops = &corr.chains[chain].hops;
        let seen: Vec<usize> =
            (0..captures.len()).filter(|&c| hops.get(c).copied().flatten().is_some()).collect();
        let per: Vec<Option<FragFlow>> = (0..captures.len())
            .map(|c| {
                let f = hops.get(c).copied().flatten()?;
                captures[c].flows.get(f)?.frags.as_deref().copied()
            })
            .collect();
        if per.iter().all(Option::is_none) {
            continue;
        }
        let mut lost = Vec::new();
        for pair in seen.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let at = |c: usize| per[c].unwrap_or_default();
            let between = Between { from: a, to: b };
            // The request's datagrams go a -> b, the reply's b -> a.
            for (to_server, sent, arrived) in
                [(true, at(a).to_server, at(b).to_server), (false, at(b).to_client, at(a).to_client)]
            {
                let whole_there = sent.datagrams > 0 && sent.incomplete == 0;
                if whole_there && arrived.incomplete > 0 {
                    lost.push(FragLoss { between, to_server, sent, arrived });
                }
                if b == a + 1 {
                    if let Some(t) = tallies.get_mut(a) {
                        tally(t, whole_there, sent, arrived);
                    }
                }
            }
        }
        lost.sort_by_key(|l| !l.to_server);
        r.fragments = Some(Box::new(Fragments { captures: per, lost }));
    }
    for (b, t) in findings.boundaries.iter_mut().zip(tallies) {
        if t.datagrams > 0 || t.largest_fragment.is_some() {
            b.fragmentation = Some(t);
        }
    }
}

/// What one direction of one request adds to its boundary's traits.
fn tally(t: &mut BoundaryFragments, whole_there: bool, sent: FragDir, arrived: FragDir) {
    if whole_there {
        t.datagrams += u64::from(sent.datagrams);
        if arrived.incomplete > 0 {
            t.incomplete += u64::from(arrived.incomplete.min(sent.datagrams));
            t.fragments_lost += u64::from(sent.fragments.saturating_sub(arrived.fragments));
        }
    }
    if sent.largest_fragment > 0 && arrived.largest_fragment > 0 {
        let crossed = sent.largest_fragment.min(arrived.largest_fragment);
        t.largest_fragment = t.largest_fragment.max(Some(crossed));
    }
}
