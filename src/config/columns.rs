//! The columns of the table (`--columns`): a setting, named here so the
//! settings need nothing of the report that draws them (`report::table`).

/// A column of the table (`--columns`, as `ps -o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Request,
    Proto,
    /// Protocol and server endpoint at capture 1, with its name.
    Service,
    /// Time at capture 1 in the `--tz` zone.
    Time,
    /// Every capture point, in path order.
    Hops,
    /// Where the source changed, before → after (and where the destination
    /// did, marked `dst`); `-` when neither did.
    Source,
    /// One capture point (by its position in the run).
    Hop(usize),
    /// The points a name of `--columns` stands for, known once the captures
    /// are read: one point (`node(out)`), or every side of a capture
    /// split into several (`node`). Expanded to [`Column::Hop`]s before use.
    Label(&'static str),
    Reply,
    Outcome,
    Match,
    /// Who the backend thinks the client is: the identity carrier and where
    /// it was added (`-` without one).
    Identity,
}

/// The columns `--columns` names, besides capture labels and `all`.
pub const COLUMN_NAMES: [&str; 10] =
    ["request", "proto", "service", "time", "hops", "source", "reply", "outcome", "match", "identity"];

/// `--columns all`: every column, in the order of [`COLUMN_NAMES`].
pub const ALL_COLUMNS: [Column; 10] = [
    Column::Request,
    Column::Proto,
    Column::Service,
    Column::Time,
    Column::Hops,
    Column::Source,
    Column::Reply,
    Column::Outcome,
    Column::Match,
    Column::Identity,
];

/// The default columns.
pub const DEFAULT_COLUMNS: [Column; 6] =
    [Column::Request, Column::Service, Column::Hops, Column::Reply, Column::Outcome, Column::Match];

/// The default columns when `--tz` is given: the time in that zone after the number.
pub const DEFAULT_COLUMNS_WITH_TIME: [Column; 7] = [
    Column::Request,
    Column::Time,
    Column::Service,
    Column::Hops,
    Column::Reply,
    Column::Outcome,
    Column::Match,
];

impl Column {
    /// `--columns request,service,hops,...` (a capture label names its own
    /// column, or its sub-points' columns when it is split into several; a
    /// side's label, `node(out)`, names that one; `#` is `request`);
    /// says which names are read otherwise. `labels`: the captures' labels.
    pub fn parse_list(text: &str, labels: &[&str]) -> Result<Vec<Column>, String> {
        let mut out = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name.eq_ignore_ascii_case("all") {
                out.extend(ALL_COLUMNS);
                continue;
            }
            let column = match COLUMN_NAMES.iter().position(|c| c.eq_ignore_ascii_case(name)) {
                Some(i) => ALL_COLUMNS[i],
                None if name == "#" => Column::Request,
                // Parsed once per run: the few names live as long as the process.
                None if super::names_a_capture(name, labels) => {
                    Column::Label(Box::leak(name.to_string().into_boxed_str()))
                }
                None => {
                    return Err(format!(
                    "--columns: no column {name:?}; columns are {} (all: every one), a capture label ({}) or \
                         a side's label such as {}(out)",
                    COLUMN_NAMES.join(", "),
                    labels.join(", "),
                    labels.last().unwrap_or(&"node")
                ))
                }
            };
            out.push(column);
        }
        if out.is_empty() {
            return Err(format!("--columns: give at least one of {}", COLUMN_NAMES.join(", ")));
        }
        Ok(out)
    }
}
