//! Configuration: one [`Config`] for every command.
//!
//! Layers are merged in this order, later winning: the built-in defaults
//! (`defaults.yaml`, compiled in), the user file
//! (`$XDG_CONFIG_HOME/webagent/config.yaml`, else
//! `~/.config/webagent/config.yaml`), the project file (`./webagent.yaml`, or
//! the file given with `--config` or `WEBAGENT_CONFIG`), the environment (`OPENAI_BASE_URL`,
//! `WEBAGENT_MODEL`, `WEBAGENT_CHROME`; the API key is read from the variable
//! `llm.api_key_env` names, `OPENAI_API_KEY` by default), then command-line
//! flags ([`Overrides`]).
//!
//! A file is a partial patch: it names only the keys it changes, and maps
//! merge key by key (so a project file can add one secret to the user's).
//! Each file is checked on its own before it is merged, so an unknown key
//! or a wrong type is reported with that file's name, line and column.
//!
//! Secrets are named in config as references (`env:VAR`, `file:PATH`, or
//! every entry of a dotenv file); their values are read only by
//! [`Config::resolve_secrets`] and never stored in the config, so printing
//! a config cannot leak one.
//!
//! One file per concern: `settings` (the types), `load` (reading and
//! merging the layers), `overrides` (the flags' layer), `check` (each file
//! against the schema, the merged values against their limits),
//! `secret_source` (where a secret's value is read from), and `parts`
//! (what the model client, the browser and a session are handed).

mod browser_flags;
mod check;
mod dotenv;
mod error;
mod load;
mod origin;
mod overrides;
mod parts;
mod secret_source;
mod settings;

#[cfg(test)]
mod tests;

pub use browser_flags::BrowserOpts;
pub use error::ConfigError;
pub use load::{ConfigSources, CHROME_VAR, PROJECT_FILE};
pub use origin::Source;
pub use overrides::Overrides;
pub use secret_source::{SecretSource, SecretSpec};
pub use settings::{
    AgentSettings, BrowserSettings, Config, DownloadSettings, ListingMode, LlmSettings,
    LlmTimeouts, PathSettings, SessionSettings, UploadSettings, WindowSize,
};

/// The built-in defaults; every key a config file may set appears here.
pub use crate::defaults::DEFAULTS_YAML;
