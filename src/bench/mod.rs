//! Benchmarks behind `webagent bench …` that are not tied to one command's
//! code (the others live next to what they measure, under `cli`).

pub mod prompt;
