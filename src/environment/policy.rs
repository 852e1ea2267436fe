//! What the configuration refuses whoever asks and whatever the approval
//! mode: JavaScript when it is off, a destination the allowed domains
//! refuse, a file to upload from outside the allowed paths or one that
//! holds the session's own secrets. The road checks it before anyone is
//! asked, so a person (or `--yes`) is never asked about what could not
//! run anyway, and a refusal reads `blocked`, never `denied`.

use std::path::{Component, Path, PathBuf};

use crate::actions::{resolve_url, Action, ActionResult, RiskFacts};
use crate::browser::{DomainPolicy, Verdict};

/// What the configuration switches off.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    /// `execute_javascript` may run (`allow_javascript`).
    pub allow_javascript: bool,
    /// Where the browser may go (`allowed_domains`); empty allows every
    /// host.
    pub domains: DomainPolicy,
    /// Which local files `upload_file` may hand to a page.
    pub uploads: UploadPolicy,
}

impl Policy {
    /// Why `action` may not run at all, given what is known of its page
    /// and target (`facts`), as the result the caller gets.
    pub fn refusal(&self, action: &Action, facts: &RiskFacts) -> Option<ActionResult> {
        match action {
            Action::ExecuteJavascript { .. } if !self.allow_javascript => {
                Some(ActionResult::blocked(
                    "execute_javascript is off; enable it with `allow_javascript: true` in the config or --allow-javascript",
                ))
            }
            Action::Navigate { url } => self.destination_refused("navigate", url, facts),
            Action::Click { .. } => {
                let link = facts
                    .target
                    .as_ref()
                    .filter(|t| matches!(t.tag.as_str(), "a" | "area") && !t.download)?;
                self.destination_refused("click (a link)", link.href.as_deref()?, facts)
            }
            Action::UploadFile { path, .. } => self.uploads.refusal(path).map(ActionResult::blocked),
            _ => None,
        }
    }

    /// A refusal when `address`, read from `facts`' page, leads where the
    /// allowed domains do not let the browser go. An address that does
    /// not resolve is left to the browser, which says what is wrong.
    fn destination_refused(
        &self,
        what: &str,
        address: &str,
        facts: &RiskFacts,
    ) -> Option<ActionResult> {
        if !self.domains.is_active() {
            return None;
        }
        let page = facts.page_url.as_deref().filter(|u| !u.is_empty());
        let url = resolve_url(page, address).ok()?;
        match self.domains.check(&url) {
            Verdict::Allowed => None,
            Verdict::Blocked(why) => Some(ActionResult::blocked(format!(
                "{what} to {url} refused by the allowed domains: {why}; nothing was loaded \
                 (the list is `allowed_domains` in the config, or --allow-domain)"
            ))),
        }
    }
}

/// Which local files `upload_file` may read: only inside the allowed
/// folders (`uploads.allowed_paths`; none given means the working folder),
/// and never a file that holds the session's secrets or its settings
/// (the secrets file, a `file:` secret, a config file, the browser
/// profile, a state file), wherever it lies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UploadPolicy {
    /// Folders (or files) uploads may come from, as configured.
    allowed: Vec<PathBuf>,
    /// Files and folders never uploaded, each with what it is.
    protected: Vec<(PathBuf, String)>,
}

impl UploadPolicy {
    /// Uploads from inside `allowed` (empty: the working folder), never
    /// from `protected` (each path with what it is, e.g. "the secrets
    /// file (secrets_file)").
    pub fn new(allowed: Vec<PathBuf>, protected: Vec<(PathBuf, String)>) -> Self {
        UploadPolicy { allowed, protected }
    }

    /// Why `path` may not be uploaded, naming the path and the setting.
    pub fn refusal(&self, path: &str) -> Option<String> {
        let file = settled(Path::new(path.trim()));
        for (protected, what) in &self.protected {
            if file.starts_with(settled(protected)) {
                return Some(format!(
                    "upload_file.path: {path} is {what}; a file holding the session's secrets \
                     or settings is never uploaded, whatever uploads.allowed_paths says"
                ));
            }
        }
        let working = vec![PathBuf::from(".")];
        let allowed = if self.allowed.is_empty() {
            &working
        } else {
            &self.allowed
        };
        if allowed.iter().any(|a| file.starts_with(settled(a))) {
            return None;
        }
        let shown: Vec<String> = allowed
            .iter()
            .map(|a| settled(a).display().to_string())
            .collect();
        Some(format!(
            "upload_file.path: {path} is outside the folders uploads may come from ({}); \
             add its folder to `uploads.allowed_paths` in the config to allow it",
            shown.join(", ")
        ))
    }
}

/// `path` as it lies on disk: absolute, links followed; for a path that
/// does not exist, absolute with `.` and `..` worked out, so a missing
/// file is judged by where it would be.
fn settled(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    // The part that exists may sit behind a link.
    match (out.parent(), out.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or(out),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{Catalog, TargetFacts};
    use serde_json::{json, Value};

    fn action(value: Value) -> Action {
        Catalog::builtin().parse(&value).expect("a valid action")
    }

    fn on(url: &str) -> RiskFacts {
        RiskFacts {
            page_url: Some(url.into()),
            target: None,
        }
    }

    #[test]
    fn the_policy_refuses_javascript_when_off_and_only_then() {
        let script = action(json!({"execute_javascript": {"script": "1"}}));
        let facts = RiskFacts::default();
        let off = Policy::default().refusal(&script, &facts).expect("refused");
        assert!(format!("{off:?}").contains("allow_javascript"), "{off:?}");
        let on = Policy {
            allow_javascript: true,
            ..Policy::default()
        };
        assert!(on.refusal(&script, &facts).is_none());
        assert!(Policy::default()
            .refusal(&action(json!({"click": {"index": 1}})), &facts)
            .is_none());
    }

    #[test]
    fn a_destination_off_the_allowed_domains_is_refused_and_one_on_them_is_not() {
        let policy = Policy {
            domains: DomainPolicy::new(&["127.0.0.1:*"]).expect("a pattern"),
            ..Policy::default()
        };
        let page = on("http://127.0.0.1:8080/start");
        let away = action(json!({"navigate": {"url": "https://evil.example/x"}}));
        let refused = policy.refusal(&away, &page).expect("refused");
        assert_eq!(
            refused.reason(),
            Some(crate::actions::FailureReason::Blocked)
        );
        assert!(format!("{refused:?}").contains("https://evil.example/x"));
        let path = action(json!({"navigate": {"url": "/orders"}}));
        assert!(policy.refusal(&path, &page).is_none());
        let link = RiskFacts {
            page_url: Some("http://127.0.0.1:8080/start".into()),
            target: Some(TargetFacts {
                tag: "a".into(),
                href: Some("//evil.example/".into()),
                ..TargetFacts::default()
            }),
        };
        let click = action(json!({"click": {"index": 1}}));
        assert!(policy.refusal(&click, &link).is_some());
        // Without a list, nothing is refused.
        assert!(Policy::default().refusal(&away, &page).is_none());
    }

    #[test]
    fn uploads_come_from_the_allowed_folders_and_never_from_a_protected_file() {
        let dir = std::env::temp_dir().join(format!("webagent-uploads-{}", std::process::id()));
        let inside = dir.join("docs");
        std::fs::create_dir_all(&inside).expect("a folder");
        let report = inside.join("report.pdf");
        std::fs::write(&report, "pdf").expect("a file");
        let secrets = inside.join("secrets.env");
        std::fs::write(&secrets, "PW=x").expect("a file");
        let policy = UploadPolicy::new(
            vec![inside.clone()],
            vec![(secrets.clone(), "the secrets file (secrets_file)".into())],
        );
        assert_eq!(policy.refusal(&report.to_string_lossy()), None);
        let refused = policy.refusal(&secrets.to_string_lossy()).expect("refused");
        assert!(refused.contains("secrets_file"), "{refused}");
        let sneaky = format!("{}/../docs/secrets.env", inside.display());
        assert!(policy.refusal(&sneaky).is_some());
        let outside = policy.refusal("/etc/passwd").expect("refused");
        assert!(
            outside.contains("/etc/passwd") && outside.contains("uploads.allowed_paths"),
            "{outside}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
