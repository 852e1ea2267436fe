//! Unit tests of the configuration: layers, positions of bad values,
//! secret sources.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::check::parse_file;
use super::*;
use crate::browser::LaunchOptions;
use crate::environment::ApprovalMode;
use crate::llm::LlmConfig;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "webagent-config-unit-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_builtin_defaults_match_the_parts_defaults() {
    let config = Config::builtin();
    let llm = config.llm_config(&BTreeMap::new());
    assert_eq!(llm, LlmConfig::default());
    let launch = config.launch_options();
    assert_eq!(launch.window, LaunchOptions::default().window);
    assert!(!launch.headed);
    assert_eq!(config.agent.max_steps, crate::agent::default_max_steps());
    assert_eq!(config.agent.approve, ApprovalMode::Risky);
    assert_eq!(
        config.paths.sessions,
        PathBuf::from(crate::events::DEFAULT_SESSIONS_DIR)
    );
    assert!(config.allowed_domains.is_empty());
    assert!(!config.allow_javascript);
}

#[test]
fn later_layers_win_and_maps_merge_by_key() {
    let dir = temp("layers");
    let user = write(
        &dir,
        "user.yaml",
        "llm:\n  model: from-user\n  temperature: 0.5\nsecrets:\n  a: env:A\n  b: env:B\n",
    );
    let project = write(
        &dir,
        "project.yaml",
        "llm:\n  model: from-project\nsecrets:\n  b: env:B2\nagent:\n",
    );
    let mut env = BTreeMap::new();
    env.insert("WEBAGENT_CHROME".to_string(), "/opt/chrome".to_string());
    let sources = ConfigSources {
        user_file: Some(user.clone()),
        project_file: Some(project.clone()),
        project_required: false,
        env,
    };
    let mut config = Config::load(&sources, &Overrides::default()).unwrap();
    assert_eq!(config.llm.model, "from-project");
    assert_eq!(config.llm.temperature, Some(0.5));
    assert_eq!(config.secrets["a"].from, SecretSource::Env("A".into()));
    assert_eq!(config.secrets["b"].from, SecretSource::Env("B2".into()));
    assert_eq!(
        config.browser.executable,
        Some(PathBuf::from("/opt/chrome"))
    );
    assert_eq!(config.origin("llm.temperature"), Source::UserFile(user));
    assert_eq!(config.origin("llm.model"), Source::ProjectFile(project));
    assert_eq!(config.origin("agent.max_steps"), Source::Default);
    config
        .apply(&Overrides {
            model: Some("from-flag".into()),
            ..Overrides::default()
        })
        .unwrap();
    assert_eq!(config.llm.model, "from-flag");
    assert_eq!(config.origin("llm.model"), Source::Flag("--model".into()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_key_is_reported_at_its_position() {
    let dir = temp("unknown");
    let file = write(&dir, "w.yaml", "llm:\n  model: x\n  modle: y\n");
    let err = parse_file(&file, &std::fs::read_to_string(&file).unwrap()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}:3:3: ", file.display())),
        "{text}"
    );
    assert!(text.contains("unknown field `modle`"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_null_for_a_required_value_names_the_file() {
    let dir = temp("null");
    let project = write(
        &dir,
        "p.yaml",
        "allowed_domains: ~\nagent:\n  max_steps: ~\n",
    );
    let sources = ConfigSources {
        project_file: Some(project.clone()),
        ..ConfigSources::default()
    };
    let err = Config::load(&sources, &Overrides::default()).unwrap_err();
    let text = err.to_string();
    assert_eq!(
        text,
        format!(
            "{}:1:18: allowed_domains: invalid type: unit value, expected a list (`[a, b]` or `- ` lines)",
            project.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_secret_written_as_its_value_is_refused() {
    let err = "hunter2".parse::<SecretSource>().unwrap_err();
    assert!(err.contains("env:VARIABLE or file:PATH"), "{err}");
    assert_eq!(
        "file:pw.txt".parse::<SecretSource>(),
        Ok(SecretSource::File("pw.txt".into()))
    );
}

#[test]
fn a_totp_secret_reads_its_seed_and_fills_with_a_code() {
    let source: SecretSource = "totp:env:OTP_SEED".parse().unwrap();
    assert_eq!(
        source,
        SecretSource::Totp(Box::new(SecretSource::Env("OTP_SEED".into())))
    );
    assert_eq!(source.to_string(), "totp:env:OTP_SEED");
    assert!("totp:hunter2".parse::<SecretSource>().is_err());
    let mut config = Config::builtin();
    config.secrets.insert("otp".into(), source.into());
    let env: BTreeMap<String, String> = [(
        "OTP_SEED".to_string(),
        "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ".to_string(),
    )]
    .into();
    let secrets = config.resolve_secrets(&env).unwrap();
    let filled = secrets.fill("<secret>otp</secret>");
    assert!(
        filled.len() == 6 && filled.chars().all(|c| c.is_ascii_digit()),
        "{filled}"
    );
    let bad: BTreeMap<String, String> = [("OTP_SEED".to_string(), "0189".to_string())].into();
    let error = config.resolve_secrets(&bad).unwrap_err().to_string();
    assert!(
        error.contains("secret otp") && error.contains("base32"),
        "{error}"
    );
    assert!(
        !error.contains("0189"),
        "the seed stays out of errors: {error}"
    );
}

/// The error's position is said once, in front (`FILE:LINE:COLUMN: `): the
/// ` at line L column C` serde_yaml ends its message with is stripped (see
/// `crate::yaml::YamlError::parsing`), while words that only look like a
/// position, here in a key's name, stay as written.
#[test]
fn positions_are_stripped_only_when_they_end_the_message() {
    let dir = temp("positions");
    let problem = |text: &str| {
        let file = write(&dir, "p.yaml", text);
        match parse_file(&file, text) {
            Err(ConfigError::Invalid(problem)) => problem,
            other => panic!("expected a positioned error, got {other:?}"),
        }
    };
    let unknown = problem("llm:\n  model: x\n  modle: y\n");
    assert_eq!((unknown.line, unknown.column), (3, 3));
    assert!(
        unknown
            .message
            .starts_with("llm: unknown field `modle`, expected one of"),
        "{unknown:?}"
    );
    assert!(!unknown.message.contains(" at line "), "{unknown:?}");
    let wrong_type = problem("agent:\n  max_steps: many\n");
    assert_eq!(
        wrong_type.message,
        "agent.max_steps: invalid type: string \"many\", expected a whole number ≥ 0"
    );
    let lookalike = problem("llm:\n  bad at line three: 1\n");
    assert_eq!((lookalike.line, lookalike.column), (2, 3));
    assert!(
        lookalike
            .message
            .starts_with("llm: unknown field `bad at line three`, expected one of"),
        "{lookalike:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_secret_may_name_its_sites_and_a_relative_file_is_read_beside_the_config() {
    let dir = temp("bound");
    let project = write(
        &dir,
        "p.yaml",
        "secrets:\n  admin_password:\n    from: file:pw.txt\n    domains: [\"https://admin.example.com\", \"*.example.com\"]\n  plain: env:PLAIN\n",
    );
    let sources = ConfigSources {
        project_file: Some(project.clone()),
        ..ConfigSources::default()
    };
    let config = Config::load(&sources, &Overrides::default()).unwrap();
    let spec = &config.secrets["admin_password"];
    assert_eq!(spec.from, SecretSource::File(dir.join("pw.txt")));
    assert_eq!(
        spec.domains,
        vec![
            "https://admin.example.com".to_string(),
            "*.example.com".to_string()
        ]
    );
    assert!(config.secrets["plain"].domains.is_empty());
    let warnings = config.unbound_secrets();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("`plain` is bound to no site"),
        "{warnings:?}"
    );
    // The long form prints as written; the short one stays short.
    let printed = config.to_annotated_yaml(&BTreeMap::new());
    assert!(printed.contains("domains:"), "{printed}");
    assert!(printed.contains("plain: env:PLAIN"), "{printed}");

    let wrong = write(
        &dir,
        "w.yaml",
        "secrets:\n  pw:\n    from: env:PW\n    domain: [example.com]\n",
    );
    let err = parse_file(&wrong, &std::fs::read_to_string(&wrong).unwrap()).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with(&format!("{}:", wrong.display())), "{text}");
    assert!(text.contains("unknown field `domain`"), "{text}");
    assert!(text.contains("did you mean `domains`"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
