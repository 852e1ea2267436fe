//! Secrets the model must never see: it writes `<secret>name</secret>` and
//! the value is filled in only when the action runs; anywhere text leaves
//! the process the value is replaced by the placeholder.
//!
//! [`Secrets`] is the one masker. It is applied where text crosses out of
//! the process's reach, and nowhere else: at the environment's boundary
//! (`environment::Masked`, so pages and results arrive masked), at the
//! event sink (`events::EventSink`: trace, `--json`, the panes), on each
//! request to the model, and in the log writer ([`mask_in_logs`],
//! [`mask_log_line`]).
//!
//! A value rarely comes back as written: results are JSON (quotes and
//! backslashes escaped), a GET form puts it in the next page's URL
//! (percent-encoded), and the element listing squeezes whitespace, turns
//! `"` into `'` and clips long attribute values, while it shows a field's
//! value JSON-escaped and clipped at [`FIELD_VALUE_LIMIT`] characters (as
//! `read_page` does). Masking covers each of these forms (see
//! [`encoded_forms`]); a page that transforms the value some other way
//! (upper-casing it, showing a part of it) is not covered.

use std::borrow::Cow;
use std::fmt;
use std::sync::RwLock;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::actions::{Action, ActionError, Catalog};
use crate::dom::{PageState, FIELD_VALUE_LIMIT};

/// A secret's value: text that must not be printed, logged or sent by
/// accident.
///
/// Modelled on the `secrecy` crate's `SecretString`, written here rather
/// than taken as a dependency because it is a few lines: `Debug` and
/// `Display` print `[REDACTED]`, there is no `Serialize`, and the text is
/// read only through [`SecretValue::expose`], so every place that reads it
/// says so. Unlike `secrecy` it does not wipe its memory when dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        SecretValue(value.into())
    }

    /// The value itself. Call it only where the value is used: to fill a
    /// placeholder, to mask or blank the value, to send it where it is
    /// meant to go.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the value is empty (then there is nothing to hide).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for SecretValue {
    fn from(value: String) -> Self {
        SecretValue(value)
    }
}

impl From<&str> for SecretValue {
    fn from(value: &str) -> Self {
        SecretValue(value.to_owned())
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// Named secret values for one run.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    entries: Vec<(String, SecretValue)>,
    /// (a form the value may take, its secret's name), longest first.
    forms: Vec<(String, String)>,
    /// One-time-code secrets: (name, seed bytes). The placeholder fills
    /// with the code of the moment; the seed's text is among `forms`.
    totp: Vec<(String, Vec<u8>)>,
    /// Values that are only ever masked: never filled, never named to the
    /// model (the model server's API key). Their forms are among `forms`.
    masked_only: Vec<(String, SecretValue)>,
    /// The sites a secret is bound to, as written (allowed-domain
    /// patterns); a secret not listed is filled on any page. The
    /// environment's boundary enforces them (`environment::SecretSites`).
    sites: Vec<(String, Vec<String>)>,
}

// Values must not reach a log through `{:?}`.
impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|(name, _)| name))
            .finish()
    }
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Secrets::default()
    }

    /// Adds a secret; empty values are ignored (masking an empty string
    /// would mangle every text).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<SecretValue>) {
        let (name, value) = (name.into(), value.into());
        if value.is_empty() {
            return;
        }
        self.take_name(&name, value.expose());
        self.entries.push((name, value));
        // Longest values first, so a secret containing another is masked
        // whole.
        self.entries
            .sort_by_key(|entry| std::cmp::Reverse(entry.1.expose().len()));
    }

    /// Adds a value that must leave the process on no channel but is no
    /// secret for the page: the model server's API key. It is masked
    /// wherever secrets are (as `<secret>NAME</secret>`), but the model is
    /// never told of it and its placeholder is never filled, so no page
    /// can have the model type it.
    pub fn insert_masked_only(&mut self, name: impl Into<String>, value: impl Into<SecretValue>) {
        let (name, value) = (name.into(), value.into());
        if value.is_empty() {
            return;
        }
        self.take_name(&name, value.expose());
        self.masked_only.push((name, value));
    }

    /// Adds a one-time-code secret from its base32 seed (RFC 6238): its
    /// placeholder fills with the code of the moment, and the seed and the
    /// codes around now are masked like any value.
    pub fn insert_totp(
        &mut self,
        name: impl Into<String>,
        seed: impl Into<SecretValue>,
    ) -> Result<(), crate::totp::TotpError> {
        let (name, seed) = (name.into(), seed.into());
        let bytes = crate::totp::decode_seed(seed.expose())?;
        self.take_name(&name, seed.expose().trim());
        self.totp.push((name, bytes));
        Ok(())
    }

    /// Forgets whatever `name` was, then masks every form of `value` as
    /// `name`, longest forms first (so a value containing another is
    /// masked whole).
    fn take_name(&mut self, name: &str, value: &str) {
        self.entries.retain(|(n, _)| n != name);
        self.totp.retain(|(n, _)| n != name);
        self.masked_only.retain(|(n, _)| n != name);
        self.forms.retain(|(_, n)| n != name);
        for form in encoded_forms(value) {
            self.forms.push((form, name.to_string()));
        }
        self.forms
            .sort_by_key(|form| std::cmp::Reverse(form.0.len()));
    }

    /// Whether a `totp:` secret is configured (it answers one-time-code
    /// fields).
    pub fn has_totp(&self) -> bool {
        !self.totp.is_empty()
    }

    /// Binds `name` to `sites` (allowed-domain patterns, checked by the
    /// caller); an empty list unbinds it.
    pub fn bind(&mut self, name: &str, sites: Vec<String>) {
        self.sites.retain(|(n, _)| n != name);
        if !sites.is_empty() {
            self.sites.push((name.to_string(), sites));
        }
    }

    /// Limits `name` to `sites` as well as to the sites it has: the value
    /// is filled only where every binding allows (a recipe's declaration
    /// on top of the session's).
    pub fn bind_also(&mut self, name: &str, sites: Vec<String>) {
        if !sites.is_empty() {
            self.sites.push((name.to_string(), sites));
        }
    }

    /// The sites `name` is bound to (its first binding); `None` when it may
    /// go anywhere.
    pub fn sites_of(&self, name: &str) -> Option<&[String]> {
        self.sites
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, sites)| sites.as_slice())
    }

    /// Every binding, by name.
    pub fn bindings(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.sites.iter().map(|(n, s)| (n.as_str(), s.as_slice()))
    }

    /// The names, for the system prompt.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .iter()
            .map(|(n, _)| n.clone())
            .chain(self.totp.iter().map(|(n, _)| n.clone()))
            .collect();
        names.sort();
        names
    }

    /// The names of the secrets whose placeholders `action` holds (only
    /// those that fill: the masked-only ones are never filled).
    pub fn used_in(&self, action: &Action) -> Vec<String> {
        if self.entries.is_empty() && self.totp.is_empty() {
            return Vec::new();
        }
        let text = action.to_json().to_string();
        self.names()
            .into_iter()
            .filter(|name| text.contains(&placeholder(name)))
            .collect()
    }

    /// The values themselves, for blanking them where text cannot be
    /// masked (a field a screenshot would show): a one-time code's seed is
    /// among them, and so is the code of the moment.
    pub fn values(&self) -> Vec<SecretValue> {
        let mut values: Vec<SecretValue> = self.entries.iter().map(|(_, v)| v.clone()).collect();
        for (_, seed) in &self.totp {
            values.push(SecretValue::new(crate::totp::current_code(seed)));
        }
        values
    }

    /// Whether there are none (nothing to fill, nothing to mask).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.totp.is_empty() && self.masked_only.is_empty()
    }

    /// (form, name) pairs of one-time codes valid around now: they change
    /// every 30 seconds, so they are worked out at each masking.
    fn code_forms(&self) -> Vec<(String, String)> {
        self.totp
            .iter()
            .flat_map(|(name, seed)| {
                crate::totp::nearby_codes(seed)
                    .into_iter()
                    .map(move |code| (code, name.clone()))
            })
            .collect()
    }

    /// Whether `text` holds any form of any value.
    fn shows_any(&self, text: &str, codes: &[(String, String)]) -> bool {
        self.forms
            .iter()
            .chain(codes)
            .any(|(form, _)| text.contains(form.as_str()))
    }

    /// `text` with every secret value replaced by its placeholder.
    pub fn mask(&self, text: &str) -> String {
        let codes = self.code_forms();
        self.mask_with(text, &codes)
    }

    fn mask_with(&self, text: &str, codes: &[(String, String)]) -> String {
        let mut out = text.to_string();
        for (form, name) in self.forms.iter().chain(codes) {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), &placeholder(name));
            }
        }
        out
    }

    /// `text` with placeholders replaced by their values (a one-time
    /// code's placeholder by the code of the moment).
    pub fn fill(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in &self.entries {
            out = out.replace(&placeholder(name), value.expose());
        }
        for (name, seed) in &self.totp {
            let wanted = placeholder(name);
            if out.contains(&wanted) {
                out = out.replace(&wanted, &crate::totp::current_code(seed));
            }
        }
        out
    }

    /// A locator with placeholders in its text filled in.
    pub fn filled_locator(&self, locator: &crate::dom::Locator) -> crate::dom::Locator {
        if self.is_empty() {
            return locator.clone();
        }
        crate::dom::Locator::parse(&self.fill(&locator.to_string()))
            .unwrap_or_else(|_| locator.clone())
    }

    /// Masks every string inside a JSON value.
    pub fn mask_json(&self, value: &mut Value) {
        self.walk(value, &|s, text| s.mask(text));
    }

    /// Masks a page in place: every string the page wrote
    /// ([`PageState::page_strings_mut`]). Cheaper than [`Secrets::masked`] on
    /// a listing of thousands of elements, which it would serialize twice.
    pub fn mask_page(&self, page: &mut PageState) {
        if self.is_empty() {
            return;
        }
        let codes = self.code_forms();
        page.page_strings_mut(|text| {
            if self.shows_any(text, &codes) {
                *text = self.mask_with(text, &codes);
            }
        });
    }

    /// Fills placeholders in every string inside a JSON value.
    pub fn fill_json(&self, value: &mut Value) {
        self.walk(value, &|s, text| s.fill(text));
    }

    /// Any serializable value (an event, a page, a result) with every
    /// secret value masked in its strings. A value that does not survive
    /// the JSON round trip is returned as it was.
    pub fn masked<T: Serialize + DeserializeOwned>(&self, value: T) -> T {
        self.changed(value, &|s, text| s.mask(text))
    }

    /// Any serializable value with placeholders filled in.
    pub fn filled<T: Serialize + DeserializeOwned>(&self, value: T) -> T {
        self.changed(value, &|s, text| s.fill(text))
    }

    /// The action with its placeholders filled in, validated again by
    /// `catalog` (a value can break a limit its placeholder kept, such as
    /// a maximum length; the error then names the placeholder, never the
    /// value).
    pub fn fill_action(&self, catalog: &Catalog, action: &Action) -> Result<Action, ActionError> {
        if self.is_empty() {
            return Ok(action.clone());
        }
        let mut filled = action.to_json();
        self.fill_json(&mut filled);
        catalog.parse(&filled)
    }

    /// The action as it may be shown or recorded: values back to their
    /// placeholders.
    pub fn mask_action(&self, catalog: &Catalog, action: &Action) -> Action {
        if self.is_empty() {
            return action.clone();
        }
        let mut shown = action.to_json();
        self.mask_json(&mut shown);
        catalog.parse(&shown).unwrap_or_else(|_| action.clone())
    }

    fn changed<T: Serialize + DeserializeOwned>(
        &self,
        value: T,
        change: &dyn Fn(&Secrets, &str) -> String,
    ) -> T {
        if self.is_empty() {
            return value;
        }
        let Ok(mut json) = serde_json::to_value(&value) else {
            return value;
        };
        self.walk(&mut json, change);
        serde_json::from_value(json).unwrap_or(value)
    }

    fn walk(&self, value: &mut Value, change: &dyn Fn(&Secrets, &str) -> String) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(text) => *text = change(self, text),
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v, change)),
            Value::Object(fields) => fields.values_mut().for_each(|v| self.walk(v, change)),
            _ => {}
        }
    }
}

/// The forms a value takes on its way back from a page: as written,
/// JSON-escaped, percent-encoded (by forms, by `encodeURIComponent`, and
/// fully), as the element listing shows attributes (whitespace squeezed,
/// `"` as `'`, clipped to 60 or 80 characters with `…`), and as it shows a
/// field's value (JSON-escaped, clipped to its first
/// [`FIELD_VALUE_LIMIT`] characters).
/// Derived forms shorter than four characters are left out (masking them
/// would mangle ordinary text); the value itself is always kept.
pub fn encoded_forms(value: &str) -> Vec<String> {
    let json = serde_json::to_string(value).unwrap_or_else(|_| format!("\"{value}\""));
    let squeezed = value.split_whitespace().collect::<Vec<_>>().join(" ");
    let listed = squeezed.replace('"', "'");
    let mut forms = vec![
        value.to_string(),
        json[1..json.len() - 1].to_string(),
        url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        percent_encode(value, |b| {
            b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b)
        }),
        percent_encode(value, |b| b.is_ascii_alphanumeric()),
        squeezed.clone(),
        listed.clone(),
    ];
    // The listing clips attribute values (hrefs at 80 characters, others
    // at 60) to their first n - 1 characters plus an ellipsis.
    for limit in [60, 80] {
        for shown in [&squeezed, &listed] {
            if shown.chars().count() > limit {
                let head: String = shown.chars().take(limit - 1).collect();
                forms.push(format!("{head}…"));
            }
        }
    }
    if value.chars().count() > FIELD_VALUE_LIMIT {
        let head: String = value.chars().take(FIELD_VALUE_LIMIT).collect();
        let json = serde_json::to_string(&head).unwrap_or_else(|_| format!("\"{head}\""));
        forms.push(json[1..json.len() - 1].to_string());
        forms.push(head);
    }
    // A JSON payload quoted again (a result holding JSON text, a CDP
    // message a library logs with `{:?}`) escapes each form once more.
    let json_again = |s: &str| {
        let quoted = serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""));
        quoted[1..quoted.len() - 1].to_string()
    };
    let debug = |s: &str| {
        let quoted = format!("{s:?}");
        quoted[1..quoted.len() - 1].to_string()
    };
    let escaped: Vec<String> = forms
        .iter()
        .flat_map(|form| [json_again(form), debug(form), debug(&json_again(form))])
        .collect();
    forms.extend(escaped);
    forms.retain(|form| form == value || form.chars().count() >= 4);
    forms.sort();
    forms.dedup();
    forms
}

/// The secrets masked in the log file, for the rest of the process.
static LOGGED: RwLock<Option<Secrets>> = RwLock::new(None);

/// Masks these secrets in every log line written from now on: the log
/// also receives text from libraries (at `debug` the CDP client logs the
/// script that types a password), which no other sink sees.
pub fn mask_in_logs(secrets: &Secrets) {
    if secrets.is_empty() {
        return;
    }
    let mut logged = LOGGED.write().unwrap_or_else(|e| e.into_inner());
    let all = logged.get_or_insert_with(Secrets::new);
    for (name, value) in &secrets.entries {
        all.insert(name.clone(), value.clone());
    }
    for (name, seed) in &secrets.totp {
        all.totp.retain(|(n, _)| n != name);
        all.totp.push((name.clone(), seed.clone()));
    }
    for (form, name) in &secrets.forms {
        if secrets.totp.iter().any(|(n, _)| n == name) {
            all.forms.push((form.clone(), name.clone()));
        }
    }
    for (name, value) in &secrets.masked_only {
        all.insert_masked_only(name.clone(), value.clone());
    }
    all.forms
        .sort_by_key(|form| std::cmp::Reverse(form.0.len()));
}

/// A log line with every secret registered by [`mask_in_logs`] masked.
pub fn mask_log_line(text: &str) -> Cow<'_, str> {
    let logged = LOGGED.read().unwrap_or_else(|e| e.into_inner());
    match logged.as_ref() {
        Some(secrets) => {
            let codes = secrets.code_forms();
            if secrets.shows_any(text, &codes) {
                Cow::Owned(secrets.mask_with(text, &codes))
            } else {
                Cow::Borrowed(text)
            }
        }
        None => Cow::Borrowed(text),
    }
}

/// `%XX` for every byte `keep` refuses.
fn percent_encode(value: &str, keep: impl Fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if keep(byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// How the model writes a secret.
pub fn placeholder(name: &str) -> String {
    format!("<secret>{name}</secret>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::ActionResult;
    use crate::dom::{LeftOut, PageState, PageText, ScrollPosition};
    use serde_json::json;

    #[test]
    fn pages_and_results_come_back_masked_and_typed_placeholders_are_filled() {
        let mut secrets = Secrets::new();
        secrets.insert("pw", "Tq8-secret-5521");
        let page = PageState {
            observation: 1,
            url: "http://127.0.0.1/welcome".into(),
            title: "Welcome Tq8-secret-5521".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition::default(),
            elements: Vec::new(),
            left_out: LeftOut::default(),
            full_page: false,
            listing: "[0]<input value=Tq8-secret-5521 />\n".into(),
            page_text: PageText {
                text: "Your password is Tq8-secret-5521".into(),
                ..PageText::default()
            },
            extract_ms: 0.0,
        };
        let shown = secrets.masked(page);
        let text = serde_json::to_string(&shown).unwrap_or_default();
        assert!(!text.contains("Tq8-secret-5521"), "{text}");
        assert_eq!(shown.listing, "[0]<input value=<secret>pw</secret> />\n");
        assert_eq!(shown.page_text.text, "Your password is <secret>pw</secret>");

        let catalog = Catalog::builtin();
        let typed = catalog
            .parse_command("input_text 0 <secret>pw</secret>")
            .expect("the command parses");
        let filled = secrets.fill_action(&catalog, &typed).expect("still valid");
        assert_eq!(filled.to_json()["input_text"]["text"], "Tq8-secret-5521");
        let echoed = ActionResult::ok_with(json!({"value": "Tq8-secret-5521"}));
        let shown = serde_json::to_string(&secrets.masked(echoed)).unwrap_or_default();
        assert!(shown.contains("<secret>pw</secret>"), "{shown}");
        assert!(!shown.contains("Tq8-secret-5521"), "{shown}");
        assert_eq!(
            secrets.mask_action(&catalog, &filled).to_json()["input_text"]["text"],
            "<secret>pw</secret>"
        );
    }

    #[test]
    fn a_custom_actions_placeholder_is_filled_through_its_own_catalog() {
        let scripts = crate::script::Scripts::default();
        scripts
            .load_source(
                "login.rhai",
                "action(\"log_in\", #{ description: \"Signs in\", \
                 params: #{ password: #{ type: \"string\" } }, risk: \"commit\" });\n\
                 fn log_in(p) { p.password }\n",
            )
            .expect("the script loads");
        let catalog = scripts.catalog().expect("the action fits the catalog");
        let mut secrets = Secrets::new();
        secrets.insert("pw", "Zx9-hidden-0042");
        let typed = catalog
            .parse_command("log_in <secret>pw</secret>")
            .expect("the custom action parses");
        let filled = secrets.fill_action(&catalog, &typed).expect("still valid");
        assert_eq!(filled.to_json()["log_in"]["password"], "Zx9-hidden-0042");
        // The built-in catalog does not know the action: filling says so.
        assert!(secrets.fill_action(&Catalog::builtin(), &typed).is_err());
    }

    #[test]
    fn values_are_masked_and_filled_by_name() {
        let mut secrets = Secrets::new();
        secrets.insert("password", "hunter2");
        secrets.insert("pin", "");
        assert_eq!(secrets.names(), ["password"]);
        assert_eq!(
            secrets.mask("typed hunter2 twice: hunter2"),
            "typed <secret>password</secret> twice: <secret>password</secret>"
        );
        assert_eq!(secrets.fill("<secret>password</secret>!"), "hunter2!");
        let mut value = json!({"input_text": {"index": 2, "text": "<secret>password</secret>"}});
        secrets.fill_json(&mut value);
        assert_eq!(value["input_text"]["text"], "hunter2");
        secrets.mask_json(&mut value);
        assert_eq!(value["input_text"]["text"], "<secret>password</secret>");
        assert!(!format!("{secrets:?}").contains("hunter2"));
    }

    #[test]
    fn a_one_time_code_fills_with_the_current_code_and_both_it_and_the_seed_are_masked() {
        let mut secrets = Secrets::new();
        let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
        secrets.insert_totp("otp", seed).expect("a base32 seed");
        assert_eq!(secrets.names(), ["otp"]);
        let code = crate::totp::current_code(b"12345678901234567890");
        let filled = secrets.fill("code: <secret>otp</secret>");
        // A step boundary may pass between the two readings.
        let step = crate::totp::now() / crate::totp::STEP_SECONDS;
        let then = crate::totp::hotp(b"12345678901234567890", step, 6);
        assert!(
            filled == format!("code: {code}") || filled == format!("code: {then}"),
            "{filled}"
        );
        assert_eq!(
            secrets.mask(&format!("typed {then}, seed {seed}")),
            "typed <secret>otp</secret>, seed <secret>otp</secret>"
        );
        assert!(secrets.values().iter().any(|v| v.expose().len() == 6));
        assert!(Secrets::new().insert_totp("bad", "not base32!").is_err());
    }

    #[test]
    fn a_secret_value_prints_redacted_and_is_read_only_by_exposing_it() {
        let value = SecretValue::from("hunter2");
        assert_eq!(format!("{value}"), "[REDACTED]");
        assert_eq!(format!("{value:?}"), "[REDACTED]");
        assert_eq!(format!("{:?}", Some(value.clone())), "Some([REDACTED])");
        assert_eq!(value.expose(), "hunter2");
        let mut secrets = Secrets::new();
        secrets.insert("pw", value);
        let shown = format!("{:?}", secrets.values());
        assert_eq!(shown, "[[REDACTED]]");
    }

    #[test]
    fn a_short_value_is_still_masked_as_written() {
        let mut secrets = Secrets::new();
        secrets.insert("pin", "4&2");
        assert_eq!(
            secrets.mask("pin 4&2 sent"),
            "pin <secret>pin</secret> sent"
        );
    }

    #[test]
    fn encoded_and_listed_forms_are_masked_too() {
        let mut secrets = Secrets::new();
        let value = "Vx7 p@ss&Q=m/29\"41";
        secrets.insert("pw", value);
        let json = serde_json::to_string(value).unwrap();
        let page = format!(
            "result {{\"value\":{json}}} url /w?pw=Vx7+p%40ss%26Q%3Dm%2F29%2241&x=1 \
             js Vx7%20p%40ss%26Q%3Dm%2F29%2241 listed value=\"Vx7 p@ss&Q=m/29'41\""
        );
        let masked = secrets.mask(&page);
        assert_eq!(
            masked,
            "result {\"value\":\"<secret>pw</secret>\"} url /w?pw=<secret>pw</secret>&x=1 \
             js <secret>pw</secret> listed value=\"<secret>pw</secret>\""
        );
        // A long value the listing clipped.
        let long = format!("{} {}", "a".repeat(30), "b".repeat(40));
        secrets.insert("long", long.as_str());
        let clipped: String = long.chars().take(59).collect::<String>() + "…";
        assert_eq!(
            secrets.mask(&format!("[3]<input value=\"{clipped}\" />")),
            "[3]<input value=\"<secret>long</secret>\" />"
        );
    }

    #[test]
    fn a_field_value_is_masked_as_the_listing_shows_it_whole_or_clipped() {
        use crate::dom::{element_line, ElementIndex, InteractiveElement};
        let field = |value: &str, left: Option<usize>| {
            let mut attributes = vec![("value".to_string(), value.to_string())];
            if let Some(left) = left {
                attributes.push(("value+".into(), left.to_string()));
            }
            InteractiveElement {
                index: ElementIndex(7),
                tag: "textarea".into(),
                attributes,
                text: String::new(),
                is_new: false,
                depth: 0,
                parent: None,
                in_shadow_root: false,
                frame: None,
                cross_origin_frame: false,
                node: None,
            }
        };
        let mut secrets = Secrets::new();
        // Whitespace and quotes exact, as the listing now keeps them.
        let short = "key \"A\"\n  line two ";
        secrets.insert("short", short);
        assert_eq!(
            secrets.mask(&element_line(&field(short, None))),
            "[7]<textarea value=\"<secret>short</secret>\" />"
        );
        // Longer than the listing shows: the head it shows is masked.
        let long: String = (0..FIELD_VALUE_LIMIT + 50)
            .map(|i| if i % 7 == 0 { '"' } else { 'k' })
            .collect();
        secrets.insert("long", long.as_str());
        let head: String = long.chars().take(FIELD_VALUE_LIMIT).collect();
        let line = element_line(&field(&head, Some(50)));
        assert_eq!(
            secrets.mask(&line),
            "[7]<textarea value=\"<secret>long</secret>\" (+50 more characters) />"
        );
    }
}
