//! The probe of `python/bench/bridge_layers.py`: what a thin pyo3 layer over the Rust host
//! would run for a batch read, to measure it against the pure-Python bridge.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Loads a library with the Rust host and reads every partition of its batch read: the rows,
/// and the batches (what a thin layer would hand pyarrow through the C stream interface).
#[pyfunction]
fn read_all(path: &str, options: Vec<(String, String)>) -> PyResult<(usize, usize)> {
    let library =
        sparkds::Library::load(path).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let mut read = library.batch_read();
    for (k, v) in options {
        read = read.option(k, v);
    }
    let outcome = read
        .run()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let batches = outcome.batches();
    Ok((outcome.num_rows(), batches.len()))
}

#[pymodule]
fn native_bridge_probe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_all, m)?)
}
