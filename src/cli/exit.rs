//! Exit codes the commands share, apart from any one command so each file
//! that returns one can name it without importing another command.

/// Exit code for what the person must fix: bad usage, a flag, a setting
/// or a file that cannot be used.
pub const EXIT_USAGE: u8 = 2;
