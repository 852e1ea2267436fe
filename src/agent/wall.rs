//! Walls only a person can pass: a CAPTCHA's frame, a one-time-code
//! field with no `totp:` secret, a password field with no secret at all.
//! The step prompt names the one it sees in a short line of its own, so
//! the model hands over (`hand_over`) instead of guessing or looping.
//! The line is the host's words from facts of the listing; nothing the
//! page wrote goes into it.

use crate::dom::{InteractiveElement, PageState};

/// Hosts whose frames are CAPTCHAs (reCAPTCHA, hCaptcha, Cloudflare
/// Turnstile).
const CAPTCHA_HOSTS: [&str; 5] = [
    "google.com/recaptcha",
    "recaptcha.net",
    "hcaptcha.com",
    "challenges.cloudflare.com",
    "turnstile",
];

/// Words that name a one-time code in a field's name, label or
/// placeholder.
const CODE_WORDS: [&str; 9] = [
    "otp",
    "one-time",
    "one time",
    "totp",
    "2fa",
    "mfa",
    "verification code",
    "security code",
    "authentication code",
];

/// What the secrets of the session can fill, for telling a wall from a
/// sign-in the agent can do itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SecretsAtHand {
    /// Any secret is configured.
    pub any: bool,
    /// A `totp:` secret is configured.
    pub totp: bool,
}

/// A wall the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wall {
    /// A CAPTCHA provider's frame.
    Captcha,
    /// A one-time-code field, and no `totp:` secret.
    OneTimeCode,
    /// A password field, and no secret.
    Password,
}

impl Wall {
    /// The prompt's line about it.
    pub fn hint(self) -> String {
        let what = match self {
            Wall::Captcha => "a CAPTCHA frame",
            Wall::OneTimeCode => "a one-time-code field, and no totp secret is configured",
            Wall::Password => "a password field, and no secret is configured",
        };
        format!(
            "<wall>The page shows {what}. If only a person can get past it, call hand_over \
             with what they must do; do not guess.</wall>\n"
        )
    }
}

/// The wall `page` shows, if any, given what the secrets can fill.
pub fn wall_on(page: &PageState, secrets: SecretsAtHand) -> Option<Wall> {
    let elements = &page.elements;
    if elements.iter().any(is_captcha_frame) {
        return Some(Wall::Captcha);
    }
    if !secrets.totp && elements.iter().any(is_code_field) {
        return Some(Wall::OneTimeCode);
    }
    if !secrets.any
        && elements
            .iter()
            .any(|e| e.tag == "input" && e.attribute("type") == Some("password"))
    {
        return Some(Wall::Password);
    }
    None
}

fn is_captcha_frame(element: &InteractiveElement) -> bool {
    element.tag == "iframe"
        && element.attribute("src").is_some_and(|src| {
            let src = src.to_ascii_lowercase();
            CAPTCHA_HOSTS.iter().any(|host| src.contains(host))
        })
}

fn is_code_field(element: &InteractiveElement) -> bool {
    if element.tag != "input" {
        return false;
    }
    ["name", "id", "placeholder", "aria-label", "label", "name~"]
        .iter()
        .filter_map(|key| element.attribute(key))
        .any(|words| {
            let words = words.to_ascii_lowercase();
            CODE_WORDS.iter().any(|code| words.contains(code))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(tag: &str, attributes: &[(&str, &str)]) -> InteractiveElement {
        InteractiveElement {
            index: crate::dom::ElementIndex(0),
            tag: tag.into(),
            attributes: attributes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            text: String::new(),
            is_new: false,
            depth: 0,
            parent: None,
            in_shadow_root: false,
            frame: None,
            cross_origin_frame: false,
            node: None,
        }
    }

    fn page(elements: Vec<InteractiveElement>) -> PageState {
        let mut page = PageState::stand_in("http://a.test/".into());
        page.elements = elements;
        page
    }

    #[test]
    fn captchas_codes_and_passwords_are_walls_unless_a_secret_fills_them() {
        let none = SecretsAtHand::default();
        let captcha = page(vec![element(
            "iframe",
            &[("src", "https://www.google.com/recaptcha/api2/anchor?k=x")],
        )]);
        assert_eq!(wall_on(&captcha, none), Some(Wall::Captcha));
        let code = page(vec![element("input", &[("name", "otp_code")])]);
        assert_eq!(wall_on(&code, none), Some(Wall::OneTimeCode));
        let with_totp = SecretsAtHand {
            any: true,
            totp: true,
        };
        assert_eq!(wall_on(&code, with_totp), None);
        let password = page(vec![element("input", &[("type", "password")])]);
        assert_eq!(wall_on(&password, none), Some(Wall::Password));
        let with_secret = SecretsAtHand {
            any: true,
            totp: false,
        };
        assert_eq!(wall_on(&password, with_secret), None);
        let promo = page(vec![element("input", &[("name", "promo_code")])]);
        assert_eq!(
            wall_on(&promo, none),
            None,
            "any code is not a one-time code"
        );
        assert!(Wall::Captcha.hint().contains("hand_over"));
    }
}
