//! indicatif progress bars (bytes of each capture) implementing `read::Progress`;
//! hidden when stderr is not a terminal and with `--quiet`. The only indicatif user.

use crate::read::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// One bar per capture on stderr.
pub struct Bars {
    multi: MultiProgress,
    bars: Mutex<Vec<Option<ProgressBar>>>,
}

impl Bars {
    /// Bars for `captures` captures; drawn only when `visible` and stderr is a terminal.
    pub fn new(captures: usize, visible: bool) -> Bars {
        let target = if visible && std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Bars { multi: MultiProgress::with_draw_target(target), bars: Mutex::new(vec![None; captures]) }
    }

    fn with_bar(&self, capture: usize, f: impl FnOnce(&ProgressBar)) {
        if let Ok(bars) = self.bars.lock() {
            if let Some(Some(bar)) = bars.get(capture) {
                f(bar);
            }
        }
    }
}

impl Progress for Bars {
    fn start(&self, capture: usize, label: &str, total: u64) {
        let bar =
            self.multi.add(if total > 0 { ProgressBar::new(total) } else { ProgressBar::new_spinner() });
        let style =
            ProgressStyle::with_template("{prefix:>10} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        if let Ok(mut bars) = self.bars.lock() {
            if let Some(slot) = bars.get_mut(capture) {
                *slot = Some(bar);
            }
        }
    }

    fn bytes_read(&self, capture: usize, bytes: u64) {
        self.with_bar(capture, |b| b.inc(bytes));
    }

    fn finish(&self, capture: usize) {
        self.with_bar(capture, |b| b.finish_and_clear());
    }
}
