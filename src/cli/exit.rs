//! Exit codes the commands share, apart from any one command so each file
//! that returns one can name it without importing another command.

/// Exit code for a configuration that cannot be used.
pub const EXIT_BAD_CONFIG: u8 = 2;
