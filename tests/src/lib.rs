//! Shared code of the template test suite lives in each test binary's helpers module.
