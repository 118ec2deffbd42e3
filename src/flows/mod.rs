//! Packets of ONE capture → flow summaries (TCP connections, UDP exchanges, ICMP
//! echo sequences) with stream fingerprints. Knows nothing of other captures.
