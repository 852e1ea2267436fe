//! Walls only a person can pass, seen on real pages in Chromium: the
//! step prompt names a CAPTCHA frame, a one-time-code field with no
//! `totp:` secret and a password field with no secret, and says nothing
//! once a secret can fill the field.

use webagent::secrets::Secrets;

use crate::answers::done;
use crate::run::{run_on_page, Setup};
use crate::support::chromium::shared;

/// The first prompt of a run on `body` served at `path`.
fn first_prompt(path: &str, body: &str, secrets: Secrets) -> String {
    let run = run_on_page(
        path,
        body,
        "Sign in",
        vec![done("stopped at the wall", false)],
        Setup {
            secrets,
            ..Setup::default()
        },
    );
    run.prompt(0)
}

#[test]
fn the_prompt_names_a_wall_only_a_person_can_pass() {
    let s = shared();
    s.server
        .html("/turnstile/frame", "<html><body>checking</body></html>");
    let captcha = first_prompt(
        "/wall-captcha",
        "<iframe src=\"/turnstile/frame\" title=\"Widget\"></iframe><button>Go</button>",
        Secrets::new(),
    );
    assert!(
        captcha.contains("<wall>The page shows a CAPTCHA frame."),
        "{captcha}"
    );
    let code = first_prompt(
        "/wall-code",
        "<label>Code <input name=\"otp\" inputmode=\"numeric\" maxlength=\"6\"></label>",
        Secrets::new(),
    );
    assert!(
        code.contains("<wall>The page shows a one-time-code field"),
        "{code}"
    );
    let password = first_prompt(
        "/wall-password",
        "<input name=\"user\"><input type=\"password\" name=\"pw\"><button>Sign in</button>",
        Secrets::new(),
    );
    assert!(
        password.contains("<wall>The page shows a password field"),
        "{password}"
    );
    let mut secrets = Secrets::new();
    secrets.insert("password", "hunter2-for-the-test");
    let signed = first_prompt(
        "/wall-password-known",
        "<input name=\"user\"><input type=\"password\" name=\"pw\"><button>Sign in</button>",
        secrets,
    );
    assert!(
        !signed.contains("<wall>"),
        "a secret fills it: no wall\n{signed}"
    );
}
