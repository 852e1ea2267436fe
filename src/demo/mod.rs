//! The built-in Acme demo site that `webagent demo` serves: a small admin app
//! with sign-in, a dashboard, orders (list with filters, new, detail with
//! ship / refund / cancel), and settings (profile, team, billing, API keys).
//!
//! It is a real multi-page app, so an agent meets what it meets on real
//! sites: form posts answered by `303` redirects, a cookie session, pages
//! behind sign-in that send you to `/login?next=…`, an admin-only page,
//! buttons disabled with a reason, and an in-page confirmation dialog. State
//! lives in memory and starts from the same seed every time.
//!
//! ```no_run
//! # async fn demo() -> Result<(), webagent::demo::DemoError> {
//! let site = webagent::demo::DemoSite::start().await?;
//! println!("open {}", site.url("/login"));
//! # Ok(()) }
//! ```
//!
//! The pages match `sitemaps/acme.yaml`; [`PAGE_PATHS`] lists them in the
//! sitemap's pattern form so tests can check the two agree.

mod files;
mod html;
mod pages;
mod store;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use crate::serve::{PageServer, Request, Response, ServeError};

pub use files::{write_files, WriteError, FILES, RECIPES_DIR, SITEMAP_FILE};

use html::{cookie, FormFields};
use pages::Notice;
use store::{OrderOp, OrderStatus, Plan, Role, Store, User, FIRST_ORDER};

/// The administrator's sign-in email (shown on the sign-in page).
pub const DEMO_EMAIL: &str = "admin@acme.test";
/// A member's sign-in email: everything but billing.
pub const MEMBER_EMAIL: &str = "member@acme.test";
/// The password of both demo accounts.
pub const DEMO_PASSWORD: &str = "demo";
/// The session cookie's name is this plus `_` and the port: browsers share
/// cookies between ports of one host, so two demo sites on 127.0.0.1 (or a
/// demo and another local app) would otherwise sign each other out.
pub const SESSION_COOKIE_PREFIX: &str = "acme_session";
/// The first seeded order number; 25 orders follow from it.
pub const FIRST_ORDER_ID: u32 = FIRST_ORDER;

/// Every page a browser can open, as sitemap patterns (`:id` for an order
/// number). Form posts go to the same paths, plus `/logout`.
pub const PAGE_PATHS: &[&str] = &[
    "/login",
    "/dashboard",
    "/orders",
    "/orders/new",
    "/orders/:id",
    "/settings",
    "/settings/profile",
    "/settings/team",
    "/settings/billing",
    "/settings/api-keys",
];

/// Why the demo site could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The HTTP server did not start (port taken, no runtime).
    #[error("could not start the Acme demo site: {0} (try another --port, or 0 for any free one)")]
    Serve(#[from] ServeError),
}

/// The running demo site; dropping it stops the server.
pub struct DemoSite {
    server: Arc<PageServer>,
}

impl std::fmt::Debug for DemoSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoSite")
            .field("origin", &self.origin())
            .finish()
    }
}

impl DemoSite {
    /// Serves the demo on a free port of 127.0.0.1, on the current tokio
    /// runtime.
    pub async fn start() -> Result<DemoSite, DemoError> {
        Self::start_on(0).await
    }

    /// Serves the demo on `port` of 127.0.0.1 (0 picks a free one).
    pub async fn start_on(port: u16) -> Result<DemoSite, DemoError> {
        let server = Arc::new(PageServer::start_on(port).await?);
        let app = Arc::new(App {
            store: Mutex::new(Store::seeded()),
            server: OnceLock::new(),
            cookie_name: session_cookie_name(server.addr().port()),
        });
        // The routes hold the app and the app only a weak handle on the
        // server, so dropping the site still drops the server.
        let _ = app.server.set(Arc::downgrade(&server));
        for path in ["/", "/login", "/logout"]
            .into_iter()
            .chain(PAGE_PATHS.iter().copied().filter(|p| !p.contains(':')))
        {
            app.route(&server, path);
        }
        let ids: Vec<u32> = app.store().orders.keys().copied().collect();
        for id in ids {
            app.route(&server, &format!("/orders/{id}"));
        }
        tracing::info!(origin = %server.origin(), "Acme demo site serving");
        Ok(DemoSite { server })
    }

    /// The address the site listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The origin, e.g. `http://127.0.0.1:41234`.
    pub fn origin(&self) -> String {
        self.server.origin()
    }

    /// The full URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// The name of this site's session cookie.
    pub fn session_cookie(&self) -> String {
        session_cookie_name(self.addr().port())
    }
}

fn session_cookie_name(port: u16) -> String {
    format!("{SESSION_COOKIE_PREFIX}_{port}")
}

/// The app behind every route: the store plus a way to add routes for
/// orders created while it runs (the server matches exact paths only).
struct App {
    store: Mutex<Store>,
    server: OnceLock<Weak<PageServer>>,
    cookie_name: String,
}

/// Who is asking: the session token and the user behind it.
struct Visitor {
    token: String,
    user: User,
}

fn redirect(location: &str) -> Response {
    Response::html(format!(
        r#"<a href="{0}">Continue to {0}</a>"#,
        html::escape(location)
    ))
    .with_status(303)
    .with_header("Location", location)
}

/// Only local paths are followed after sign-in, so `next=` cannot send a
/// person to another site.
fn safe_next(next: &str) -> &str {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && !next.starts_with("/login");
    if local {
        next
    } else {
        "/dashboard"
    }
}

/// The banner for a `?notice=` code set by a redirect after a form post.
/// Codes, not messages, travel in the URL so nobody can put words on the
/// page through a link.
fn notice_for(query: &FormFields) -> Option<Notice> {
    let text = match query.get("notice") {
        "created" => "Order created. It is pending until you ship it.",
        "ship" => "Order shipped. The customer has been emailed a tracking link.",
        "refund" => "Refund issued. The money is on its way back to the customer.",
        "cancel" => "Order cancelled.",
        "saved" => "Profile saved.",
        "invited" => "Invitation sent.",
        "plan" => "Your plan has been changed.",
        "plan-cancelled" => "Subscription cancelled. You are back on the Starter plan.",
        "key-created" => "API key created.",
        "key-revoked" => "API key revoked. Requests using it are now refused.",
        _ => return None,
    };
    Some(Notice::ok(text))
}

impl App {
    fn store(&self) -> MutexGuard<'_, Store> {
        // A handler that panicked mid-request leaves the data readable; keep
        // serving rather than taking the whole demo down.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn route(self: &Arc<Self>, server: &PageServer, path: &str) {
        let app = self.clone();
        server.handle(path, move |req| app.respond(req));
    }

    fn register_order(self: &Arc<Self>, id: u32) {
        if let Some(server) = self.server.get().and_then(Weak::upgrade) {
            self.route(&server, &format!("/orders/{id}"));
        }
    }

    fn respond(self: &Arc<Self>, req: &Request) -> Response {
        let method = match req.method.as_str() {
            "GET" | "HEAD" => "GET",
            "POST" => "POST",
            _ => {
                return Response::text("use GET or POST")
                    .with_status(405)
                    .with_header("Allow", "GET, HEAD, POST")
            }
        };
        let query = FormFields::parse(req.query.as_bytes());
        let form = FormFields::parse(&req.body);
        let mut store = self.store();
        let visitor = req
            .headers
            .get("cookie")
            .and_then(|h| cookie(h, &self.cookie_name))
            .and_then(|token| {
                let user = store.session_user(token)?;
                Some(Visitor {
                    token: token.to_string(),
                    user: store.users.get(user)?.clone(),
                })
            });
        let path = req.path.as_str();

        match (method, path) {
            (_, "/") => redirect(if visitor.is_some() {
                "/dashboard"
            } else {
                "/login"
            }),
            ("GET", "/login") => match visitor {
                Some(_) => redirect(safe_next(query.get("next"))),
                None => Response::html(pages::login("", query.get("next"), None)),
            },
            ("POST", "/login") => {
                let next = safe_next(form.get("next")).to_string();
                match store.sign_in(form.get("email"), form.get("password")) {
                    Some(token) => {
                        tracing::debug!(email = form.get("email"), "demo sign-in");
                        redirect(&next).with_header(
                            "Set-Cookie",
                            &format!(
                                "{}={token}; Path=/; HttpOnly; SameSite=Lax",
                                self.cookie_name
                            ),
                        )
                    }
                    None => Response::html(pages::login(
                        form.get("email"),
                        form.get("next"),
                        Some("Wrong email or password. The demo accounts are shown above."),
                    ))
                    .with_status(401),
                }
            }
            (_, "/logout") => {
                if let Some(v) = &visitor {
                    store.sign_out(&v.token);
                }
                redirect("/login").with_header(
                    "Set-Cookie",
                    &format!("{}=; Path=/; Max-Age=0", self.cookie_name),
                )
            }
            _ => match visitor {
                None => {
                    let wanted = if req.query.is_empty() {
                        path.to_string()
                    } else {
                        format!("{path}?{}", req.query)
                    };
                    // A form post cannot be replayed after sign-in; come back
                    // to the page it was posted from instead.
                    redirect(&pages::login_redirect(&wanted))
                }
                Some(visitor) => {
                    drop(store);
                    self.signed_in(method, path, &query, &form, &visitor)
                }
            },
        }
    }

    fn signed_in(
        self: &Arc<Self>,
        method: &str,
        path: &str,
        query: &FormFields,
        form: &FormFields,
        visitor: &Visitor,
    ) -> Response {
        let user = &visitor.user;
        let notice = notice_for(query);
        let mut store = self.store();
        match (method, path) {
            ("GET", "/dashboard") => Response::html(pages::dashboard(&store, user)),
            ("GET", "/orders") => {
                let status = OrderStatus::parse(query.get("status"));
                Response::html(pages::orders(&store, user, status, query.get("q")))
            }
            ("GET", "/orders/new") => {
                Response::html(pages::new_order(user, &FormFields::default(), &[]))
            }
            ("POST", "/orders/new") => {
                match store.create_order(
                    form.get("customer"),
                    form.get("product"),
                    form.get("quantity"),
                    form.get("notes"),
                ) {
                    Ok(id) => {
                        drop(store);
                        self.register_order(id);
                        tracing::debug!(id, "demo order created");
                        redirect(&format!("/orders/{id}?notice=created"))
                    }
                    Err(errors) => {
                        Response::html(pages::new_order(user, form, &errors)).with_status(422)
                    }
                }
            }
            ("GET", "/settings") => Response::html(pages::settings_index(user)),
            ("GET", "/settings/profile") => Response::html(pages::profile(user, notice.as_ref())),
            ("POST", "/settings/profile") => {
                let name = form.get("name");
                if name.is_empty() || name.chars().count() > 80 {
                    let refused = Notice::error("Enter your name (up to 80 characters).");
                    return Response::html(pages::profile(user, Some(&refused))).with_status(422);
                }
                if let Some(account) = store.users.iter_mut().find(|u| u.email == user.email) {
                    account.name = name.to_string();
                    if !form.get("language").is_empty() {
                        account.language = form.get("language").to_string();
                    }
                    if !form.get("timezone").is_empty() {
                        account.timezone = form.get("timezone").to_string();
                    }
                }
                redirect("/settings/profile?notice=saved")
            }
            ("GET", "/settings/team") => {
                Response::html(pages::team(&store, user, notice.as_ref(), ""))
            }
            ("POST", "/settings/team") => match store.invite(form.get("email"), form.get("role")) {
                Ok(()) => redirect("/settings/team?notice=invited"),
                Err(refusal) => {
                    let refused = Notice::error(refusal.0);
                    Response::html(pages::team(&store, user, Some(&refused), form.get("email")))
                        .with_status(422)
                }
            },
            (_, "/settings/billing") if user.role != Role::Admin => {
                Response::html(pages::forbidden(user, "billing")).with_status(403)
            }
            ("GET", "/settings/billing") => {
                Response::html(pages::billing(&store, user, notice.as_ref()))
            }
            ("POST", "/settings/billing") => {
                match (form.get("op"), Plan::parse(form.get("plan"))) {
                    ("change", Some(plan)) => {
                        store.plan = plan;
                        redirect("/settings/billing?notice=plan")
                    }
                    ("cancel", _) => {
                        store.plan = Plan::Starter;
                        redirect("/settings/billing?notice=plan-cancelled")
                    }
                    _ => {
                        let refused = Notice::error("Choose a plan to switch to.");
                        Response::html(pages::billing(&store, user, Some(&refused)))
                            .with_status(422)
                    }
                }
            }
            ("GET", "/settings/api-keys") => {
                let revealed = store.take_revealed_key(&visitor.token);
                Response::html(pages::api_keys(
                    &store,
                    user,
                    revealed.as_deref(),
                    notice.as_ref(),
                ))
            }
            ("POST", "/settings/api-keys") => {
                let outcome = match form.get("op") {
                    "create" => store
                        .create_key(&visitor.token, form.get("name"))
                        .map(|()| "key-created"),
                    "revoke" => form
                        .get("key")
                        .parse()
                        .map_err(|_| store::Refusal("Choose a key to revoke.".into()))
                        .and_then(|id| store.revoke_key(id))
                        .map(|_| "key-revoked"),
                    _ => Err(store::Refusal(
                        "Unknown request; reload the page and try again.".into(),
                    )),
                };
                match outcome {
                    Ok(code) => redirect(&format!("/settings/api-keys?notice={code}")),
                    Err(refusal) => {
                        let refused = Notice::error(refusal.0);
                        Response::html(pages::api_keys(&store, user, None, Some(&refused)))
                            .with_status(422)
                    }
                }
            }
            _ => match path
                .strip_prefix("/orders/")
                .and_then(|id| id.parse::<u32>().ok())
            {
                Some(id) if store.orders.contains_key(&id) => {
                    order_page(&mut store, method, id, form, notice.as_ref(), user)
                }
                _ => Response::html(pages::not_found(user, path)).with_status(404),
            },
        }
    }
}

fn order_page(
    store: &mut Store,
    method: &str,
    id: u32,
    form: &FormFields,
    notice: Option<&Notice>,
    user: &User,
) -> Response {
    // Orders are never removed, but answer a plain 404 rather than trust it.
    let render = |store: &Store, notice: Option<&Notice>, status: u16| match store.orders.get(&id) {
        Some(order) => Response::html(pages::order_detail(user, order, notice)).with_status(status),
        None => Response::html(pages::not_found(user, &format!("/orders/{id}"))).with_status(404),
    };
    if method == "GET" {
        return render(store, notice, 200);
    }
    let Some(op) = OrderOp::parse(form.get("op")) else {
        let refused = Notice::error("Unknown action; use Ship, Refund or Cancel.");
        return render(store, Some(&refused), 422);
    };
    // Ask before a destructive step unless the dialog (or this page) already
    // did; a step the status forbids skips the question and is refused below.
    if op.needs_confirmation() && form.get("confirm") != "yes" {
        if let Some(order) = store.orders.get(&id).filter(|o| op.check(o.status).is_ok()) {
            return Response::html(pages::confirm_op(user, order, op));
        }
    }
    match store.apply(id, op) {
        Ok(()) => {
            tracing::debug!(id, op = op.key(), "demo order updated");
            redirect(&format!("/orders/{id}?notice={}", op.key()))
        }
        Err(refusal) => {
            let refused = Notice::error(format!("{} was refused: {}", op.label(), refusal.0));
            render(store, Some(&refused), 409)
        }
    }
}
