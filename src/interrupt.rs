//! SIGINT/SIGTERM while fixes are written. The handler only raises a flag; the writer checks it
//! between files, so the file in flight is finished (or, for `--commit`, every file is put back),
//! and the run says what it wrote and exits 130. Outside the write phase the signals keep their
//! default action: nothing is half-done then.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// The exit code of a run stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A stop request set by SIGINT/SIGTERM from `catch` until `release`.
pub struct StopRequest {
    stop: Arc<AtomicBool>,
    /// Once set, the signals take their default action again (the handlers stay registered:
    /// signal-hook cannot put the default back by unregistering).
    released: Arc<AtomicBool>,
}

impl StopRequest {
    /// Catches SIGINT and SIGTERM. If the handlers cannot be set, the signals keep their default
    /// action (the writes are atomic per file all the same).
    pub fn catch() -> StopRequest {
        let request = StopRequest {
            stop: Arc::new(AtomicBool::new(false)),
            released: Arc::new(AtomicBool::new(false)),
        };
        for signal in [SIGINT, SIGTERM] {
            // Order matters: once released, the default action runs before the flag is set.
            let registered = flag::register_conditional_default(signal, request.released.clone())
                .and_then(|_| flag::register(signal, request.stop.clone()));
            if registered.is_err() {
                request.released.store(true, Ordering::SeqCst);
            }
        }
        request
    }

    /// The flag the writer checks between files.
    pub fn flag(&self) -> &AtomicBool {
        &self.stop
    }

    pub fn requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Gives SIGINT and SIGTERM their default action back.
    pub fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
    }
}

impl Drop for StopRequest {
    fn drop(&mut self) {
        self.release();
    }
}
