//! Colour themes: YAML files of semantic colour roles (`border_focus`,
//! `new_element`, `error`), never widget names, so one theme fits every
//! pane.
//!
//! The dark theme in `themes/default.yaml` is compiled in and names every
//! role; a user theme is a partial patch merged over it. A file is checked
//! whole before anything is swapped in, so a broken edit keeps the last good
//! theme and the error (file:line:column) goes to the status line.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::watch::{FileWatcher, WatchBatch};

/// The built-in dark theme, complete.
pub const DEFAULT_THEME_YAML: &str = include_str!("../../themes/default.yaml");
/// The shipped light theme, compiled in so `--theme light` works anywhere.
pub const LIGHT_THEME_YAML: &str = include_str!("../../themes/light.yaml");

/// Why a theme could not be used; the last good theme stays on screen.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// A theme file could not be read.
    #[error("{}: could not read the theme: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A theme file is not valid YAML or names unknown roles or colours.
    #[error(transparent)]
    Parse(crate::yaml::YamlError),
    /// `--theme` named neither a file nor a shipped theme.
    #[error("no theme `{0}`: give a file path, or one of dark, light (or a name in themes/)")]
    NotFound(String),
    /// The theme file cannot be watched for edits.
    #[error("{}: cannot watch the theme for edits: {message}", path.display())]
    Watch {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// Reads one colour, or says where the bad one is: serde_yaml only knows
/// the position of the enclosing mapping, so the role's own line is found
/// in the text.
fn parse_color(value: &str, role: &str, text: &str, path: &Path) -> Result<Color, ThemeError> {
    Color::from_str(value.trim()).map_err(|_| {
        let key = format!("{role}:");
        let (line, column) = text
            .lines()
            .enumerate()
            .find_map(|(i, l)| {
                let trimmed = l.trim_start();
                trimmed.starts_with(&key).then(|| {
                    let indent = l.len() - trimmed.len();
                    let after = &trimmed[key.len()..];
                    let value_at = indent + key.len() + (after.len() - after.trim_start().len());
                    (i + 1, l[..value_at].chars().count() + 1)
                })
            })
            .unwrap_or((0, 0));
        ThemeError::Parse(crate::yaml::YamlError::at(
            path,
            (line, column),
            format!(
                "`{value}` is not a colour for {role}; write a name (dark_gray, light_cyan, \
                 reset), an xterm index 0-255 or \"#rrggbb\""
            ),
        ))
    })
}

/// Declares the colour roles once: the theme's fields, the file's patch
/// fields and the merge all come from this list, so they cannot drift.
macro_rules! roles {
    ($($(#[doc = $doc:literal])* $name:ident),* $(,)?) => {
        /// Every colour the workbench draws with, by meaning.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Palette {
            $($(#[doc = $doc])* pub $name: Color,)*
        }

        /// The roles a theme file sets, as written.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct PaletteText {
            $(#[serde(default)] $name: Option<String>,)*
        }

        impl PaletteText {
            /// Every colour read, or the first bad one with its position.
            fn parse(&self, text: &str, path: &Path) -> Result<PalettePatch, ThemeError> {
                Ok(PalettePatch {
                    $($name: match &self.$name {
                        Some(value) => Some(parse_color(value, stringify!($name), text, path)?),
                        None => None,
                    },)*
                })
            }
        }

        /// The roles a theme file sets; the rest come from the base.
        #[derive(Debug, Default)]
        struct PalettePatch {
            $($name: Option<Color>,)*
        }

        impl PalettePatch {
            /// The patch over `base`.
            fn apply(&self, base: &Palette) -> Palette {
                Palette {
                    $($name: self.$name.unwrap_or(base.$name),)*
                }
            }

            /// The palette when the patch names every role, else the first
            /// missing role.
            fn complete(&self) -> Result<Palette, &'static str> {
                Ok(Palette {
                    $($name: self.$name.ok_or(stringify!($name))?,)*
                })
            }
        }

        /// The role names as written in theme files.
        pub const ROLE_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

roles! {
    /// Behind everything.
    background,
    /// Ordinary text.
    text,
    /// Secondary text: hints, counts, placeholders.
    muted,
    /// Pane borders.
    border,
    /// The border of the focused pane.
    border_focus,
    /// Pane titles.
    title,
    /// Things to notice: the current sitemap page, the proposed action.
    accent,
    /// Elements that are new since the previous observation (`*[12]`).
    new_element,
    /// The background of the selected row.
    selection,
    /// The text of the selected row.
    selection_text,
    /// Success.
    ok,
    /// Warnings and things waiting for the person.
    warn,
    /// Failures.
    error,
    /// Behind modal dialogs.
    modal_background,
    /// Key names in help and hints.
    key,
}

/// What a theme file holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    colors: PaletteText,
}

/// A theme ready to draw with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Its name, for the status line.
    pub name: String,
    /// The file it came from; `None` for a built-in theme.
    pub source: Option<PathBuf>,
    /// Its colours.
    pub palette: Palette,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::builtin()
    }
}

impl Theme {
    /// The compiled-in dark theme.
    pub fn builtin() -> Theme {
        match parse_complete(DEFAULT_THEME_YAML, Path::new("themes/default.yaml")) {
            Ok(theme) => theme,
            // ok: the file is compiled in and a unit test parses it; this
            // arm only keeps the program drawing if someone breaks it.
            Err(error) => {
                tracing::error!(%error, "the built-in theme does not parse");
                Theme {
                    name: "fallback".into(),
                    source: None,
                    palette: FALLBACK,
                }
            }
        }
    }

    /// The shipped light theme (merged over the default, like any user
    /// theme).
    pub fn light() -> Theme {
        Theme::parse(LIGHT_THEME_YAML, Path::new("themes/light.yaml"))
            .map(|mut t| {
                t.source = None;
                t
            })
            .unwrap_or_else(|_| Theme::builtin())
    }

    /// A theme by name or path: an existing file is read; `dark`,
    /// `default` and `light` are the built-in ones; any other name is
    /// looked up as `themes/NAME.yaml`.
    pub fn find(spec: &str) -> Result<Theme, ThemeError> {
        let path = Path::new(spec);
        if path.is_file() {
            return Theme::load(path);
        }
        let local = Path::new("themes").join(format!("{spec}.yaml"));
        if local.is_file() {
            return Theme::load(&local);
        }
        match spec {
            "dark" | "default" => Ok(Theme::builtin()),
            "light" => Ok(Theme::light()),
            _ => Err(ThemeError::NotFound(spec.to_string())),
        }
    }

    /// Reads a user theme file and merges it over the built-in one.
    pub fn load(path: &Path) -> Result<Theme, ThemeError> {
        let text = std::fs::read_to_string(path).map_err(|e| ThemeError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Theme::parse(&text, path)
    }

    /// Parses theme text (as if read from `path`) and merges it over the
    /// built-in theme.
    pub fn parse(text: &str, path: &Path) -> Result<Theme, ThemeError> {
        let file = parse_file(text, path)?;
        let patch = file.colors.parse(text, path)?;
        let base = Theme::builtin();
        Ok(Theme {
            name: file.name.clone().unwrap_or_else(|| stem(path)),
            source: Some(path.to_path_buf()),
            palette: patch.apply(&base.palette),
        })
    }

    /// Plain text on the background.
    pub fn text(&self) -> Style {
        Style::default()
            .fg(self.palette.text)
            .bg(self.palette.background)
    }

    /// Secondary text.
    pub fn muted(&self) -> Style {
        Style::default().fg(self.palette.muted)
    }

    /// Text in one role's colour.
    pub fn fg(&self, color: Color) -> Style {
        Style::default().fg(color)
    }

    /// A pane border, brighter when the pane has the focus.
    pub fn border(&self, focused: bool) -> Style {
        Style::default().fg(if focused {
            self.palette.border_focus
        } else {
            self.palette.border
        })
    }

    /// A pane title.
    pub fn title(&self, focused: bool) -> Style {
        let style = Style::default().fg(self.palette.title);
        if focused {
            style.add_modifier(Modifier::BOLD)
        } else {
            style
        }
    }

    /// The selected row.
    pub fn selection(&self) -> Style {
        Style::default()
            .fg(self.palette.selection_text)
            .bg(self.palette.selection)
    }

    /// A key name in help and hints.
    pub fn key(&self) -> Style {
        Style::default()
            .fg(self.palette.key)
            .add_modifier(Modifier::BOLD)
    }
}

/// Watches one theme file and reports every good or broken version.
///
/// The directory is watched, not the file: editors that save by writing a
/// new file and renaming it replace the inode a file watch would follow.
/// Dropping the watcher stops it.
pub struct ThemeWatcher {
    _watcher: FileWatcher,
}

impl std::fmt::Debug for ThemeWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThemeWatcher").finish_non_exhaustive()
    }
}

impl ThemeWatcher {
    /// Starts watching `path`; `on_change` gets the merged theme or the
    /// reason it was refused, on the watcher's thread (send it on).
    pub fn start<F>(path: &Path, mut on_change: F) -> Result<ThemeWatcher, ThemeError>
    where
        F: FnMut(Result<Theme, ThemeError>) + Send + 'static,
    {
        let shown = path.to_path_buf();
        let handler = move |batch: WatchBatch| match batch {
            // A deleted file keeps the theme in use; the next save brings
            // it back.
            Ok(files) => {
                if files.iter().any(|f| f.canonical.exists()) {
                    on_change(Theme::load(&shown));
                }
            }
            Err(errors) => {
                for error in errors {
                    tracing::warn!(path = %error.path.display(), message = %error.message, "watching the theme");
                }
            }
        };
        // Only the named file counts; no directory is named.
        let (watcher, _present) = FileWatcher::start(&[path.to_path_buf()], |_| false, handler)
            .map_err(|e| ThemeError::Watch {
                path: e.path,
                message: e.message,
            })?;
        Ok(ThemeWatcher { _watcher: watcher })
    }
}

/// Colours used only if the compiled-in theme were broken.
const FALLBACK: Palette = Palette {
    background: Color::Reset,
    text: Color::Reset,
    muted: Color::DarkGray,
    border: Color::DarkGray,
    border_focus: Color::Cyan,
    title: Color::Reset,
    accent: Color::Cyan,
    new_element: Color::Green,
    selection: Color::DarkGray,
    selection_text: Color::White,
    ok: Color::Green,
    warn: Color::Yellow,
    error: Color::Red,
    modal_background: Color::Reset,
    key: Color::Magenta,
};

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("theme")
        .to_string()
}

fn parse_file(text: &str, path: &Path) -> Result<ThemeFile, ThemeError> {
    if text.trim().is_empty() {
        return Err(ThemeError::Parse(crate::yaml::YamlError::at(
            path,
            (1, 1),
            "the file is empty; write `colors:` with the roles to change",
        )));
    }
    serde_yaml::from_str::<ThemeFile>(text)
        .map_err(|e| ThemeError::Parse(crate::yaml::YamlError::parsing(path, &e, (0, 0))))
}

fn parse_complete(text: &str, path: &Path) -> Result<Theme, ThemeError> {
    let file = parse_file(text, path)?;
    let palette = file.colors.parse(text, path)?.complete().map_err(|role| {
        ThemeError::Parse(crate::yaml::YamlError::at(
            path,
            (0, 0),
            format!("the base theme must name every role; `{role}` is missing"),
        ))
    })?;
    Ok(Theme {
        name: file.name.unwrap_or_else(|| stem(path)),
        source: None,
        palette,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ratatui::style::Color;

    use super::{parse_complete, Theme, DEFAULT_THEME_YAML, LIGHT_THEME_YAML, ROLE_NAMES};

    #[test]
    fn builtin_theme_names_every_role() {
        let theme = parse_complete(DEFAULT_THEME_YAML, Path::new("themes/default.yaml"))
            .expect("the compiled-in theme parses and is complete");
        assert_eq!(theme.name, "dark");
        assert_ne!(theme.palette.error, theme.palette.ok);
    }

    #[test]
    fn light_theme_is_complete_on_its_own() {
        parse_complete(LIGHT_THEME_YAML, Path::new("themes/light.yaml"))
            .expect("the light theme names every role");
        assert_ne!(Theme::light().palette, Theme::builtin().palette);
    }

    #[test]
    fn a_user_theme_changes_only_what_it_names() {
        let theme = Theme::parse(
            "colors:\n  error: \"#ff0000\"\n  border: blue\n",
            Path::new("mine.yaml"),
        )
        .expect("valid patch");
        let base = Theme::builtin().palette;
        assert_eq!(theme.palette.error, Color::Rgb(255, 0, 0));
        assert_eq!(theme.palette.border, Color::Blue);
        assert_eq!(theme.palette.ok, base.ok);
        assert_eq!(theme.name, "mine");
    }

    #[test]
    fn a_bad_colour_is_reported_with_its_position() {
        let error = Theme::parse(
            "name: x\ncolors:\n  ok: green\n  error: blurple\n",
            Path::new("themes/x.yaml"),
        )
        .expect_err("blurple is not a colour");
        let text = error.to_string();
        assert!(text.starts_with("themes/x.yaml:4:10:"), "{text}");
        assert!(text.contains("blurple"), "{text}");
    }

    #[test]
    fn an_unknown_role_is_an_error_naming_it() {
        let error =
            Theme::parse("colors:\n  eror: red\n", Path::new("t.yaml")).expect_err("misspelt role");
        let text = error.to_string();
        assert!(text.starts_with("t.yaml:2:"), "{text}");
        assert!(text.contains("eror"), "{text}");
    }

    #[test]
    fn role_names_cover_the_palette() {
        assert!(ROLE_NAMES.contains(&"new_element"));
        assert!(ROLE_NAMES.contains(&"border_focus"));
        assert_eq!(ROLE_NAMES.len(), 15);
    }
}
