//! The agent's environment on a real browser tab.
