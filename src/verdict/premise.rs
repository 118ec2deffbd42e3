//! Premises of a verdict (issue 29): a capture's silence about a request is
//! evidence only while that capture was recording. A capture with no flow at
//! all, or whose flows (first packet of the earliest to last packet of the
//! latest, on capture 1's clock) do not reach into a request's life at capture
//! 1, is *blind* to that request: it can say nothing of where a RST or an ICMP
//! error entered the path next to it, or whether the request went further.
//! Takes flows and their clocks; gives capture indices. Never formats text.

use crate::flows::Flow;

/// When a capture recorded flows, as it recorded them: the first packet of its
/// earliest flow and the last packet of its latest; None without any flow.
pub fn recorded(flows: &[Flow]) -> Option<(i64, i64)> {
    let first = flows.iter().map(|f| f.first_ns).min()?;
    let last = flows.iter().map(|f| f.last_ns).max()?;
    Some((first, last))
}

/// The captures blind to a request that lived `life` (first and last packet at
/// capture 1, on its clock), given each capture's recorded times on capture
/// 1's clock (`spans`). Capture 1 saw the request, so it is never blind.
pub(crate) fn blind(spans: &[Option<(i64, i64)>], life: (i64, i64)) -> Vec<usize> {
    let (start, end) = life;
    (1..spans.len())
        .filter(|&c| match spans[c] {
            None => true,
            Some((first, last)) => last < start || first > end,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::test_flow;

    #[test]
    fn a_capture_records_from_its_earliest_first_to_its_latest_last_packet() {
        let mut a = test_flow(("198.18.90.42", 40000), ("198.19.96.10", 80), 10);
        a.last_ns = 50;
        let mut b = test_flow(("198.18.90.42", 40001), ("198.19.96.10", 80), 20);
        b.last_ns = 30;
        let c = test_flow(("198.18.90.42", 40002), ("198.19.96.10", 80), 5);
        assert_eq!(recorded(&[a.clone(), b.clone(), c]), Some((5, 50)));
        assert_eq!(recorded(&[b, a]), Some((10, 50)));
        assert_eq!(recorded(&[]), None);
    }

    #[test]
    fn a_capture_is_blind_when_empty_or_when_its_times_miss_the_request() {
        let spans = [Some((0, 100)), None, Some((10, 20)), Some((21, 30)), Some((0, 9)), Some((20, 40))];
        // The request lived 10..=20 at capture 1: capture 2 touches it at both
        // ends, capture 3 began after it, capture 4 ended before it, capture 5 at its end.
        assert_eq!(blind(&spans, (10, 20)), [1, 3, 4]);
        // Touching at one nanosecond is recording.
        assert_eq!(blind(&[Some((0, 1)), Some((20, 20)), Some((10, 10))], (10, 20)), Vec::<usize>::new());
        assert_eq!(blind(&[None, Some((21, 21)), Some((9, 9))], (10, 20)), [1, 2]);
        // Capture 1 is never blind (it saw the request), even without a span.
        assert_eq!(blind(&[None], (10, 20)), Vec::<usize>::new());
    }
}
