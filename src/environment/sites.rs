//! The sites each secret belongs to. A secret bound to its sites is filled
//! only where both the top page and the document holding the field are on
//! them, whoever asked (the model, a recipe, a custom action, MCP, the `:`
//! line): a prompt injection on another allowed page, or a frame of
//! another site inside the right page, gets `blocked` instead of the value.
//! A secret with no sites (no `domains:` and no allowed domains) is filled
//! anywhere, as before; `webagent config` warns about it.

use crate::browser::{DomainPolicy, GuardError};
use crate::secrets::Secrets;

use super::FieldLocation;

/// The sites of every bound secret, ready to check URLs against.
#[derive(Debug, Clone, Default)]
pub struct SecretSites {
    bound: Vec<(String, DomainPolicy)>,
}

impl SecretSites {
    /// The bindings `secrets` carries; a pattern that cannot be read is an
    /// error (check them where they are written, before a session starts).
    pub fn of(secrets: &Secrets) -> Result<SecretSites, (String, GuardError)> {
        let mut bound = Vec::new();
        for (name, patterns) in secrets.bindings() {
            let policy = DomainPolicy::new(patterns).map_err(|e| (name.to_string(), e))?;
            bound.push((name.to_string(), policy));
        }
        Ok(SecretSites { bound })
    }

    /// `name` bound to sites that cannot be read: it is never filled.
    pub fn refusing(name: &str) -> SecretSites {
        // A policy that no URL passes: only the local `data:` scheme, and
        // no secret is typed into a `data:` page's field.
        // ok: a `data:` pattern is parsed as a whole-URL glob, which has no
        // host to be missing and cannot be empty, so it never fails.
        let nowhere =
            DomainPolicy::new(&["data:refused-nowhere"]).expect("a data: pattern always reads");
        SecretSites {
            bound: vec![(name.to_string(), nowhere)],
        }
    }

    /// Whether `name` is bound to sites.
    pub fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|(n, _)| n == name)
    }

    /// Why the secrets `used` may not be typed at `location` (`Err`: where
    /// that is cannot be told), naming each secret and its sites, never a
    /// value; `None` when every bound one is on its sites.
    pub fn refusal(
        &self,
        used: &[String],
        location: &Result<FieldLocation, String>,
    ) -> Option<String> {
        let bound: Vec<&(String, DomainPolicy)> = self
            .bound
            .iter()
            .filter(|(name, _)| used.contains(name))
            .collect();
        let (name, policy) = bound.first()?;
        let sites = policy.patterns().join(", ");
        let location = match location {
            Ok(location) => location,
            Err(why) => {
                return Some(format!(
                    "the secret `{name}` may only be typed on {sites}, and where this field is \
                     cannot be told ({why}); it was not filled"
                ))
            }
        };
        for (name, policy) in &bound {
            let sites = policy.patterns().join(", ");
            if policy.check(&location.top).is_blocked() {
                return Some(format!(
                    "the secret `{name}` may only be typed on {sites}, not on this page ({}); \
                     it was not filled",
                    origin(&location.top)
                ));
            }
            if policy.check(&location.frame).is_blocked() {
                return Some(format!(
                    "the secret `{name}` may only be typed on {sites}; this field is in a frame \
                     of {}, so it was not filled",
                    origin(&location.frame)
                ));
            }
        }
        None
    }
}

/// The origin of `url` as a person reads it (`https://example.com`),
/// without the path or query, which may hold tokens.
fn origin(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) if parsed.origin().is_tuple() => parsed.origin().ascii_serialization(),
        Ok(parsed) => format!("{}:", parsed.scheme()),
        Err(_) => "an address that cannot be read".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(top: &str, frame: &str) -> Result<FieldLocation, String> {
        Ok(FieldLocation {
            top: top.into(),
            frame: frame.into(),
        })
    }

    fn bound(pairs: &[(&str, &[&str])]) -> SecretSites {
        let mut secrets = Secrets::new();
        for (name, patterns) in pairs {
            secrets.insert(*name, "value");
            secrets.bind(name, patterns.iter().map(|p| p.to_string()).collect());
        }
        SecretSites::of(&secrets).expect("patterns")
    }

    #[test]
    fn a_bound_secret_goes_only_where_top_page_and_frame_are_its_sites() {
        let sites = bound(&[(
            "admin_password",
            &["https://admin.example.com", "*.example.org"],
        )]);
        let used = vec!["admin_password".to_string()];
        let home = "https://admin.example.com/login";
        assert_eq!(sites.refusal(&used, &at(home, home)), None);
        assert_eq!(
            sites.refusal(
                &used,
                &at("https://shop.example.org/a", "https://shop.example.org/a")
            ),
            None
        );
        let elsewhere = sites
            .refusal(
                &used,
                &at("https://evil.test/x?t=1", "https://evil.test/x?t=1"),
            )
            .expect("refused");
        assert!(
            elsewhere.contains(
                "`admin_password` may only be typed on https://admin.example.com, *.example.org"
            ) && elsewhere.contains("(https://evil.test)")
                && !elsewhere.contains("t=1"),
            "{elsewhere}"
        );
        let framed = sites
            .refusal(&used, &at(home, "https://evil.test/frame"))
            .expect("refused");
        assert!(
            framed.contains("in a frame of https://evil.test"),
            "{framed}"
        );
        let unknown = sites.refusal(&used, &Err("the frame is gone".into()));
        assert!(unknown.is_some_and(|u| u.contains("the frame is gone")));
    }

    #[test]
    fn an_unbound_or_unused_secret_is_never_refused() {
        let sites = bound(&[("pw", &["example.com"]), ("token", &[])]);
        let evil = at("https://evil.test/", "https://evil.test/");
        assert_eq!(sites.refusal(&["token".to_string()], &evil), None);
        assert_eq!(sites.refusal(&[], &evil), None);
        assert!(!sites.is_bound("token"));
        assert!(sites.is_bound("pw"));
    }
}
