//! Why a request's address changed: the nat rule that did it (from
//! `iptables-save`, `ip6tables-save` or `nft list ruleset` of the host), the
//! kernel's own record of it (`conntrack -L`/`-E`), and what the
//! ip-masq-agent ConfigMap intended. Every file is untrusted text: bounded,
//! parsed strictly, each line it cannot read named by number.
//! A post-pass beside the verdicts: it never changes one.

pub mod conntrack;
pub mod eval;
pub mod ipt;
pub mod masq;
pub mod model;
pub mod nft;
pub mod text;
