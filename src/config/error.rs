//! Why a configuration could not be loaded or used: one error for every
//! layer, each naming the file, setting or secret at fault.

use std::path::PathBuf;

/// Why a configuration could not be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file that must be read (one given with `--config`, a secret's
    /// file) could not be.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A config file is not valid YAML, has an unknown key, or a value of
    /// the wrong type.
    #[error(transparent)]
    Invalid(crate::yaml::YamlError),
    /// A config file is wrong in a way YAML gives no position for.
    #[error("{}: {message}", file.display())]
    InvalidFile {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The merged configuration is not valid (a flag or an environment
    /// variable set a bad value).
    #[error("{setting} {message}")]
    Merged {
        /// The setting and where its value came from: the flag itself
        /// (`--max-steps`), or `agent.max_steps (from project file …)`.
        setting: String,
        /// What is wrong.
        message: String,
    },
    /// A secret refers to an environment variable that is not set.
    #[error("secret {name}: the environment variable {variable} is not set or empty (named in {origin})")]
    SecretVariableMissing {
        /// The secret's name.
        name: String,
        /// The variable it reads.
        variable: String,
        /// The config layer that named it.
        origin: String,
    },
    /// A secret's file could not be read or is empty.
    #[error("secret {name}: {}: {problem}", path.display())]
    SecretFile {
        /// The secret's name.
        name: String,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        problem: String,
    },
    /// A `totp:` secret's seed is not base32.
    #[error("secret {name} ({origin}): {problem}")]
    SecretSeed {
        /// The secret's name.
        name: String,
        /// The config layer that named it.
        origin: String,
        /// What is wrong with the seed (never the seed itself).
        problem: String,
    },
    /// A line of the secrets (dotenv) file is not `NAME=value`.
    #[error("{}:{line}: {message}", file.display())]
    SecretsFileSyntax {
        /// The dotenv file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl ConfigError {
    /// Why a config file could not be read as text.
    pub fn from_reading(error: crate::yaml::ReadError) -> Self {
        match error {
            crate::yaml::ReadError::Io { file, source } => ConfigError::Read { path: file, source },
            crate::yaml::ReadError::NotText(problem) => ConfigError::Invalid(problem),
            crate::yaml::ReadError::TooBig { file, bytes } => ConfigError::InvalidFile {
                file,
                message: crate::yaml::too_big(bytes),
            },
        }
    }
}
