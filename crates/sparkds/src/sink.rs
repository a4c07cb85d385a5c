//! `SparkDsSink`: the callback through which a library returns byte arrays (partitions, states,
//! commit messages, offsets).
//!
//! The `sink` pointer that the host passes is not a pointer at all but an ID into a registry,
//! so that a library that keeps the sink and calls it after the call returned (rule 10) is
//! caught and reported, instead of writing through a dangling pointer.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

use crate::error::Violation;

const RULE: u32 = 10;
const DUTY: &str = "call the sink only during the call, on the calling thread";

struct Open {
    thread: ThreadId,
    items: Vec<Vec<u8>>,
    violation: Option<Violation>,
}

#[derive(Default)]
struct Registry {
    open: HashMap<usize, Open>,
    /// The last sinks handed out, by ID: their function and the library they belong to, to
    /// report a late call. Bounded, since a host such as a JVM plugin opens sinks for as long as
    /// it runs: a call later than `REMEMBERED_SINKS` sinks is ignored rather than reported.
    names: BTreeMap<usize, (&'static str, usize)>,
    /// Late calls, per library ID (at most `REMEMBERED_LATE_CALLS`).
    late: Vec<(usize, Violation)>,
}

const REMEMBERED_SINKS: usize = 4096;
const REMEMBERED_LATE_CALLS: usize = 64;

impl Registry {
    /// Remembers sink `id`, forgetting the oldest ones beyond `REMEMBERED_SINKS`.
    fn remember(&mut self, id: usize, function: &'static str, library: usize) {
        self.names.insert(id, (function, library));
        while self.names.len() > REMEMBERED_SINKS {
            let Some(oldest) = self.names.keys().next().copied() else {
                break;
            };
            if self.open.contains_key(&oldest) {
                // Still inside its call: kept until it closes.
                break;
            }
            self.names.remove(&oldest);
        }
    }
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    // A poisoned lock only means another thread panicked while holding it; the maps stay
    // consistent because every update is a single insert or remove.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A sink open for the duration of one call into the library.
pub(crate) struct Sink {
    id: usize,
    function: &'static str,
}

impl Sink {
    /// Opens a sink for a call of `function`, on the current thread, for the library `library`.
    pub(crate) fn open(function: &'static str, library: usize) -> Sink {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let mut guard = registry();
        let registry = guard.get_or_insert_with(Registry::default);
        registry.open.insert(
            id,
            Open {
                thread: std::thread::current().id(),
                items: Vec::new(),
                violation: None,
            },
        );
        registry.remember(id, function, library);
        Sink { id, function }
    }

    /// The callback to pass to the library.
    pub(crate) fn callback(&self) -> spark_datasource_abi::v1::SparkDsSink {
        sink_callback
    }

    /// The `sink` argument to pass to the library.
    pub(crate) fn context(&self) -> *mut c_void {
        self.id as *mut c_void
    }

    /// Closes the sink, once the call returned, and gives what the library passed to it.
    ///
    /// # Errors
    ///
    /// A violation of rule 10 when the library called the sink from another thread.
    pub(crate) fn finish(self) -> Result<Vec<Vec<u8>>, Violation> {
        let open = registry().as_mut().and_then(|r| r.open.remove(&self.id));
        let open = open.ok_or_else(|| {
            Violation::new(self.function, RULE, "the sink disappeared during the call")
        })?;
        match open.violation {
            Some(v) => Err(v),
            None => Ok(open.items),
        }
    }

    /// Closes the sink and expects exactly one byte array, as the functions that return a
    /// state, an offset or a commit message do.
    pub(crate) fn finish_one(self) -> Result<Vec<u8>, Violation> {
        let function = self.function;
        let mut items = self.finish()?;
        if items.len() != 1 {
            return Err(Violation::new(
                function,
                RULE,
                format!(
                    "called the sink {} times; it must call it exactly once",
                    items.len()
                ),
            ));
        }
        Ok(items.remove(0))
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(r) = registry().as_mut() {
            r.open.remove(&self.id);
        }
    }
}

/// Takes the first late sink call of `library`, if any.
pub(crate) fn take_late_call(library: usize) -> Option<Violation> {
    let mut guard = registry();
    let registry = guard.as_mut()?;
    let index = registry.late.iter().position(|(l, _)| *l == library)?;
    Some(registry.late.remove(index).1)
}

/// # Safety
///
/// Called by the library with the `sink` it was given and `length` readable bytes at `data`
/// (or NULL and 0). The ID in `sink` is checked against the registry, never dereferenced.
unsafe extern "C" fn sink_callback(sink: *mut c_void, data: *const u8, length: i64) {
    // A panic must not unwind into the library's C frames; the registry records what happened.
    let _ = std::panic::catch_unwind(|| {
        let bytes = if length <= 0 || data.is_null() {
            Vec::new()
        } else {
            // SAFETY: the library passes `length` readable bytes at `data` (SparkDsSink).
            unsafe { std::slice::from_raw_parts(data, length as usize) }.to_vec()
        };
        record(sink as usize, bytes, length, data.is_null());
    });
}

fn record(id: usize, bytes: Vec<u8>, length: i64, null: bool) {
    let mut guard = registry();
    let Some(registry) = guard.as_mut() else {
        return;
    };
    let Some(open) = registry.open.get_mut(&id) else {
        if let Some((function, library)) = registry.names.get(&id).copied() {
            let v = Violation::new(
                function,
                RULE,
                format!("called its sink after it returned; {DUTY}"),
            );
            if registry.late.len() < REMEMBERED_LATE_CALLS {
                registry.late.push((library, v));
            }
        }
        return;
    };
    let function = registry.names.get(&id).map(|n| n.0).unwrap_or("?");
    if open.violation.is_some() {
        return;
    }
    if open.thread != std::thread::current().id() {
        open.violation = Some(Violation::new(
            function,
            RULE,
            format!("called its sink from another thread; {DUTY}"),
        ));
    } else if length < 0 || (null && length > 0) {
        open.violation = Some(Violation::new(
            function,
            RULE,
            format!("called its sink with a length of {length} and data {}; pass a pointer to `length` bytes", if null { "NULL" } else { "non-NULL" }),
        ));
    } else {
        open.items.push(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_remembers_a_bounded_number_of_sinks() {
        let mut registry = Registry::default();
        for id in 1..=REMEMBERED_SINKS + 100 {
            registry.remember(id, "partitions", 0);
        }
        assert_eq!(registry.names.len(), REMEMBERED_SINKS);
        assert_eq!(
            registry.names.keys().next(),
            Some(&101),
            "the oldest are forgotten"
        );
    }

    #[test]
    fn a_sink_copies_what_it_is_given() {
        let sink = Sink::open("partitions", 0);
        // SAFETY: the data is 3 readable bytes and the sink is open.
        unsafe { (sink.callback())(sink.context(), b"abc".as_ptr(), 3) };
        assert_eq!(sink.finish(), Ok(vec![b"abc".to_vec()]));
    }

    #[test]
    fn a_sink_called_after_the_call_is_reported() {
        let sink = Sink::open("partitions", 7);
        let (callback, context) = (sink.callback(), sink.context());
        assert_eq!(sink.finish(), Ok(vec![]));
        // SAFETY: the sink is closed; the callback only looks its ID up.
        unsafe { callback(context, b"x".as_ptr(), 1) };
        assert_eq!(
            take_late_call(7).map(|v| v.to_string()),
            Some("`partitions`: called its sink after it returned; call the sink only during the call, on the calling thread (rule 10: sinks are called only during the call; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-10)".to_string())
        );
    }

    #[test]
    fn a_sink_called_from_another_thread_is_reported() {
        let sink = Sink::open("initial_offset", 0);
        let (callback, context) = (sink.callback(), sink.context() as usize);
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: the data is 1 readable byte and the sink is open.
                unsafe { callback(context as *mut c_void, b"x".as_ptr(), 1) }
            });
        });
        assert_eq!(sink.finish().map_err(|v| v.rule), Err(10));
    }
}
