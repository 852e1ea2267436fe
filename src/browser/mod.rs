//! (browser: being built)
