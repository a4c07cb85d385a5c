//! Ctrl-C (SIGINT) and SIGTERM while `cargo sparkds spark` runs Spark. Without a handler a
//! signal ends the command before any destructor runs, and the files that hold the source's
//! options and the Connect server's token stay behind. With [`Guard`], a signal removes them at
//! once, and passes SIGTERM on to the child; the command then ends when the child does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use sparkds::{Error, Result};

/// What a signal does while the guard lives.
#[derive(Default)]
struct State {
    /// The files to remove.
    files: Mutex<Vec<PathBuf>>,
    /// The child to pass SIGTERM to, 0 until it starts.
    child: AtomicU32,
    /// Whether a signal came.
    received: AtomicBool,
}

/// Handles SIGINT and SIGTERM until dropped.
pub struct Guard {
    state: Arc<State>,
    #[cfg(unix)]
    handle: signal_hook::iterator::Handle,
    #[cfg(unix)]
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Guard {
    /// Installs the handler. `interrupt_child`: whether Ctrl-C is passed on to the child, for a
    /// child that ignores the terminal's (Spark's JVM, which the Connect server runs, does not:
    /// an interactive Python shell handles Ctrl-C itself, as a cancel).
    ///
    /// # Errors
    ///
    /// When the handler cannot be installed.
    pub fn install(interrupt_child: bool) -> Result<Guard> {
        let state = Arc::new(State::default());
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
                .map_err(|e| Error::io("cannot handle Ctrl-C", e))?;
            let handle = signals.handle();
            let shared = Arc::clone(&state);
            let thread = std::thread::spawn(move || {
                for signal in signals.forever() {
                    shared.received.store(true, Ordering::SeqCst);
                    remove_all(&shared);
                    if signal == SIGTERM || interrupt_child {
                        terminate(shared.child.load(Ordering::SeqCst));
                    }
                }
            });
            Ok(Guard {
                state,
                handle,
                thread: Some(thread),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = interrupt_child;
            Ok(Guard { state })
        }
    }

    /// Removes `path` when a signal comes.
    pub fn remove_on_signal(&self, path: &Path) {
        self.state
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(path.to_path_buf());
    }

    /// Passes signals on to the child `pid`.
    pub fn child(&self, pid: u32) {
        self.state.child.store(pid, Ordering::SeqCst);
    }

    /// Whether a signal came.
    pub fn received(&self) -> bool {
        self.state.received.load(Ordering::SeqCst)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            self.handle.close();
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        }
        remove_all(&self.state);
    }
}

fn remove_all(state: &State) {
    for file in state
        .files
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        let _ = std::fs::remove_file(file);
    }
}

/// Sends SIGTERM to `pid`, when a child was started.
#[cfg(unix)]
fn terminate(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid > 0 {
        // SAFETY: kill takes plain integers and touches no memory of this process. `pid` is
        // this process's child; the caller forgets it (`child(0)`) once it has waited for it.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}
