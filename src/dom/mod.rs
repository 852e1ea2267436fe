//! (dom: being built)
