//! (actions: being built)
