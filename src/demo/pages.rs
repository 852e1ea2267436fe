//! The demo app's HTML, one function per page. Every value that came from a
//! request or from the store passes through [`escape`] on its way in; the
//! fixed markup around it is written here by hand.

use std::fmt::Write as _;

use super::html::{encode_query_value, escape, money, FormFields};
use super::store::{ApiKey, Order, OrderOp, OrderStatus, Plan, Store, User, PRODUCTS};

const STYLE: &str = include_str!("assets/style.css");
const SCRIPT: &str = include_str!("assets/app.js");

/// A message banner at the top of a page.
#[derive(Debug, Clone)]
pub struct Notice {
    /// Green (something worked) or red (something was refused).
    pub ok: bool,
    /// The message, plain text.
    pub text: String,
}

impl Notice {
    /// A success banner.
    pub fn ok(text: impl Into<String>) -> Notice {
        Notice {
            ok: true,
            text: text.into(),
        }
    }

    /// An error banner.
    pub fn error(text: impl Into<String>) -> Notice {
        Notice {
            ok: false,
            text: text.into(),
        }
    }

    fn render(&self) -> String {
        let (class, role) = if self.ok {
            ("ok", "status")
        } else {
            ("error", "alert")
        };
        format!(
            r#"<div class="notice {class}" role="{role}" data-testid="notice">{}</div>"#,
            escape(&self.text)
        )
    }
}

fn notice_html(notice: Option<&Notice>) -> String {
    notice.map(Notice::render).unwrap_or_default()
}

/// Which sidebar entry is current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The dashboard.
    Dashboard,
    /// The orders list and details.
    Orders,
    /// The new-order form.
    NewOrder,
    /// A settings page.
    Settings(SettingsTab),
}

/// Which settings page is current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsTab {
    /// The settings overview.
    Overview,
    /// Profile.
    Profile,
    /// Team.
    Team,
    /// Billing.
    Billing,
    /// API keys.
    ApiKeys,
}

fn current(is: bool) -> &'static str {
    if is {
        r#" aria-current="page""#
    } else {
        ""
    }
}

fn document(title: &str, body_class: &str, body: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Acme</title>
<style>{STYLE}</style>
</head>
<body class="{body_class}">
{body}
<script>{SCRIPT}</script>
</body>
</html>
"#,
        title = escape(title),
    )
}

/// The signed-in frame: sidebar, top bar with the user and sign-out, and the
/// shared confirmation dialog.
fn layout(title: &str, section: Section, user: &User, content: &str) -> String {
    let settings = matches!(section, Section::Settings(_));
    let team = section == Section::Settings(SettingsTab::Team);
    let billing = section == Section::Settings(SettingsTab::Billing);
    let initials: String = user
        .name
        .split_whitespace()
        .filter_map(|w| w.chars().next())
        .take(2)
        .collect();
    let body = format!(
        r#"<div class="shell">
<aside class="sidebar">
  <div class="brand"><span class="logo" aria-hidden="true">A</span>Acme Admin</div>
  <nav aria-label="Main">
    <a href="/dashboard" data-testid="nav-dashboard"{dash}>Dashboard</a>
    <a href="/orders" data-testid="nav-orders"{orders}>Orders</a>
    <a href="/orders/new" data-testid="nav-new-order"{new}>New order</a>
    <div class="section">Workspace</div>
    <a href="/settings" data-testid="nav-settings"{settings}>Settings</a>
    <a href="/settings/team" data-testid="nav-team"{team}>Team</a>
    <a href="/settings/billing" data-testid="nav-billing"{billing}>Billing</a>
  </nav>
</aside>
<div class="main">
  <header class="topbar">
    <div class="muted">Acme Inc. · Production workspace</div>
    <div class="who">
      <span class="avatar" aria-hidden="true">{initials}</span>
      <span data-testid="current-user">{name} ({role})</span>
      <form method="post" action="/logout" class="inline"><button type="submit" class="btn" id="sign-out" data-testid="sign-out">Sign out</button></form>
    </div>
  </header>
  <main class="content">
{content}
  </main>
</div>
</div>
<div class="modal-backdrop" id="confirm-modal" aria-hidden="true">
  <div class="modal" role="dialog" aria-modal="true" aria-labelledby="confirm-title">
    <h2 id="confirm-title">Are you sure?</h2>
    <p id="confirm-message"></p>
    <div class="actions">
      <button type="button" class="btn" id="confirm-cancel" data-testid="confirm-cancel">Go back</button>
      <button type="button" class="btn danger" id="confirm-yes" data-testid="confirm-yes">Confirm</button>
    </div>
  </div>
</div>"#,
        dash = current(section == Section::Dashboard),
        orders = current(section == Section::Orders),
        new = current(section == Section::NewOrder),
        settings = current(settings && !team && !billing),
        team = current(team),
        billing = current(billing),
        initials = escape(&initials),
        name = escape(&user.name),
        role = user.role.label(),
    );
    document(title, "app", &body)
}

/// The sign-in page. `next` is where to go afterwards (already checked to be
/// a local path).
pub fn login(email: &str, next: &str, error: Option<&str>) -> String {
    let error = error
        .map(|e| {
            format!(
                r#"<div class="notice error" role="alert" data-testid="login-error">{}</div>"#,
                escape(e)
            )
        })
        .unwrap_or_default();
    let body = format!(
        r#"<div class="login-wrap">
<main class="login">
  <div class="brand"><span class="logo" aria-hidden="true" style="color:#fff">A</span>Acme Admin</div>
  <h1>Sign in</h1>
  <p class="sub">Welcome back. Sign in to manage orders.</p>
  <div class="demo-creds" data-testid="demo-credentials">
    Demo accounts (password <strong>{password}</strong>):<br>
    <strong>{admin}</strong> (admin) · <strong>{member}</strong> (member, no billing)
  </div>
  {error}
  <form method="post" action="/login" id="login-form" aria-label="Sign in">
    <input type="hidden" name="next" value="{next}">
    <div class="field">
      <label for="email">Email</label>
      <input type="email" id="email" name="email" autocomplete="username" placeholder="you@acme.test" value="{email}" required data-testid="login-email">
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password" required data-testid="login-password">
    </div>
    <button type="submit" class="btn primary" id="sign-in" data-testid="login-submit" style="width:100%;justify-content:center">Sign in</button>
  </form>
</main>
</div>"#,
        password = super::DEMO_PASSWORD,
        admin = super::DEMO_EMAIL,
        member = super::MEMBER_EMAIL,
        next = escape(next),
        email = escape(email),
    );
    document("Sign in", "login-page", &body)
}

fn badge(status: OrderStatus) -> String {
    format!(
        r#"<span class="badge {}" data-status="{}">{}</span>"#,
        status.key(),
        status.key(),
        status.label()
    )
}

fn order_row(order: &Order) -> String {
    let search = format!(
        "#{} {} {} {}",
        order.id,
        order.customer,
        order.product.name,
        order.status.key()
    )
    .to_lowercase();
    format!(
        r#"<tr data-order-row data-order-id="{id}" data-search="{search}">
  <td><a href="/orders/{id}" data-testid="order-link-{id}">#{id}</a></td>
  <td>{customer}</td>
  <td>{product} × {qty}</td>
  <td>{placed}</td>
  <td>{badge}</td>
  <td class="num">{total}</td>
</tr>"#,
        id = order.id,
        search = escape(&search),
        customer = escape(&order.customer),
        product = escape(order.product.name),
        qty = order.quantity,
        placed = escape(&order.placed),
        badge = badge(order.status),
        total = money(order.total_cents()),
    )
}

const ORDER_HEAD: &str = r#"<thead><tr><th>Order</th><th>Customer</th><th>Items</th><th>Placed</th><th>Status</th><th class="num">Total</th></tr></thead>"#;

/// The dashboard: headline numbers, orders by status, recent orders and the
/// ones waiting to ship.
pub fn dashboard(store: &Store, user: &User) -> String {
    let orders: Vec<&Order> = store.orders.values().collect();
    let count = |s: OrderStatus| orders.iter().filter(|o| o.status == s).count();
    let revenue: u64 = orders
        .iter()
        .filter(|o| matches!(o.status, OrderStatus::Paid | OrderStatus::Shipped))
        .map(|o| o.total_cents())
        .sum();
    let open = count(OrderStatus::Pending) + count(OrderStatus::Paid);
    let mut bars = String::new();
    let most = OrderStatus::ALL
        .iter()
        .map(|s| count(*s))
        .max()
        .unwrap_or(1)
        .max(1);
    for status in OrderStatus::ALL {
        let n = count(status);
        let _ = write!(
            bars,
            r#"<div class="bar"><span>{label}</span><div class="track"><div class="fill" style="width:{pct}%"></div></div><a href="/orders?status={key}">{n}</a></div>"#,
            label = status.label(),
            pct = n * 100 / most,
            key = status.key(),
        );
    }
    let recent: String = orders.iter().rev().take(6).map(|o| order_row(o)).collect();
    let to_ship: String = orders
        .iter()
        .filter(|o| o.status == OrderStatus::Paid)
        .take(5)
        .map(|o| {
            format!(
                r#"<li><a href="/orders/{id}">#{id}</a> · {customer} <span class="muted">{total}</span></li>"#,
                id = o.id,
                customer = escape(&o.customer),
                total = money(o.total_cents())
            )
        })
        .collect();
    let first = user.name.split_whitespace().next().unwrap_or("there");
    let content = format!(
        r#"<div class="page-head">
  <div><h1>Dashboard</h1><p class="sub">Good to see you, {first}. Here is how the shop is doing.</p></div>
  <a class="btn primary" href="/orders/new" data-testid="dashboard-new-order">+ New order</a>
</div>
<section class="grid" aria-label="Key figures">
  <div class="card stat"><div class="label">Revenue</div><div class="value" data-testid="stat-revenue">{revenue}</div><div class="muted">paid and shipped orders</div></div>
  <div class="card stat"><div class="label">Orders</div><div class="value" data-testid="stat-orders">{total}</div><div class="muted">all time</div></div>
  <div class="card stat"><div class="label">Open</div><div class="value" data-testid="stat-open">{open}</div><div class="muted">pending or paid</div></div>
  <div class="card stat"><div class="label">Refunded</div><div class="value" data-testid="stat-refunded">{refunded}</div><div class="muted">returned to customers</div></div>
</section>
<div class="two">
  <section class="card" aria-label="Recent orders">
    <div class="page-head"><h2>Recent orders</h2><a href="/orders">View all →</a></div>
    <table>{ORDER_HEAD}<tbody>{recent}</tbody></table>
  </section>
  <div>
    <section class="card bars" aria-label="Orders by status"><h2>Orders by status</h2>{bars}</section>
    <section class="card" aria-label="Ready to ship"><h2>Ready to ship</h2><ul>{to_ship}</ul></section>
  </div>
</div>"#,
        first = escape(first),
        revenue = money(revenue),
        total = orders.len(),
        refunded = count(OrderStatus::Refunded),
    );
    layout("Dashboard", Section::Dashboard, user, &content)
}

/// The orders list, filtered by status and a search text.
pub fn orders(store: &Store, user: &User, status: Option<OrderStatus>, query: &str) -> String {
    let needle = query.to_lowercase();
    let matching: Vec<&Order> = store
        .orders
        .values()
        .rev()
        .filter(|o| status.is_none_or(|s| o.status == s))
        .filter(|o| {
            needle.is_empty()
                || o.customer.to_lowercase().contains(&needle)
                || o.product.name.to_lowercase().contains(&needle)
                || format!("#{}", o.id).contains(&needle)
        })
        .collect();
    let mut options = String::from(r#"<option value="">All statuses</option>"#);
    for s in OrderStatus::ALL {
        let selected = if status == Some(s) { " selected" } else { "" };
        let _ = write!(
            options,
            r#"<option value="{}"{selected}>{}</option>"#,
            s.key(),
            s.label()
        );
    }
    let rows: String = matching.iter().map(|o| order_row(o)).collect();
    let table = if matching.is_empty() {
        r#"<div class="empty" data-testid="orders-empty">No orders match these filters. <a href="/orders">Clear filters</a></div>"#.to_string()
    } else {
        format!(
            r#"<table id="orders-table" data-testid="orders-table">{ORDER_HEAD}<tbody>{rows}</tbody></table>"#
        )
    };
    let n = matching.len();
    let content = format!(
        r#"<div class="page-head">
  <div><h1>Orders</h1><p class="sub">Every order placed in the shop. Filter by status or search by customer, product or number.</p></div>
  <a class="btn primary" href="/orders/new" id="new-order" data-testid="new-order">+ New order</a>
</div>
<section class="card">
  <form method="get" action="/orders" class="filters" role="search" aria-label="Filter orders">
    <div class="field"><label for="status-filter">Status</label><select id="status-filter" name="status" data-testid="status-filter">{options}</select></div>
    <div class="field grow"><label for="order-search">Search</label><input type="search" id="order-search" name="q" value="{query}" placeholder="Customer, product or #number" data-testid="order-search" aria-label="Search orders"></div>
    <button type="submit" class="btn" data-testid="apply-filters">Apply</button>
  </form>
  <p class="muted" id="order-count" data-testid="order-count">{n} {noun}</p>
  {table}
</section>"#,
        query = escape(query),
        noun = if n == 1 { "order" } else { "orders" },
    );
    layout("Orders", Section::Orders, user, &content)
}

/// The new-order form, refilled with `values` and showing `errors` (field
/// name and message) after a refused submit.
pub fn new_order(user: &User, values: &FormFields, errors: &[(&str, String)]) -> String {
    let error_for = |field: &str| -> String {
        errors
            .iter()
            .filter(|(f, _)| *f == field)
            .map(|(_, msg)| {
                format!(
                    r#"<p class="error-text" id="{field}-error">{}</p>"#,
                    escape(msg)
                )
            })
            .collect()
    };
    let invalid = |field: &str| {
        if errors.iter().any(|(f, _)| *f == field) {
            format!(r#" aria-invalid="true" aria-describedby="{field}-error""#)
        } else {
            String::new()
        }
    };
    let mut products = String::from(r#"<option value="">Choose a product…</option>"#);
    for p in PRODUCTS {
        let selected = if values.get("product") == p.sku {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            products,
            r#"<option value="{sku}"{selected}>{name} — {price}</option>"#,
            sku = p.sku,
            name = escape(p.name),
            price = money(p.price_cents)
        );
    }
    let quantity = if values.get("quantity").is_empty() {
        "1"
    } else {
        values.get("quantity")
    };
    let summary = if errors.is_empty() {
        String::new()
    } else {
        Notice::error("The order was not created. Fix the fields marked below.").render()
    };
    let content = format!(
        r#"<h1>New order</h1>
<p class="sub">Place an order on behalf of a customer. It starts as pending until it ships.</p>
{summary}
<section class="card" style="max-width:640px">
  <form method="post" action="/orders/new" id="new-order-form" aria-label="New order" novalidate>
    <div class="field"><label for="customer">Customer</label>
      <input type="text" id="customer" name="customer" value="{customer}" placeholder="Full name" data-testid="order-customer"{inv_customer}>{err_customer}</div>
    <div class="field"><label for="product">Product</label>
      <select id="product" name="product" data-testid="order-product"{inv_product}>{products}</select>{err_product}</div>
    <div class="field"><label for="quantity">Quantity</label>
      <input type="number" id="quantity" name="quantity" min="1" max="99" value="{quantity}" data-testid="order-quantity"{inv_quantity}>{err_quantity}</div>
    <div class="field"><label for="notes">Notes</label>
      <textarea id="notes" name="notes" rows="3" placeholder="Delivery instructions, gift message…" data-testid="order-notes"{inv_notes}>{notes}</textarea>{err_notes}</div>
    <div class="actions">
      <button type="submit" class="btn primary" id="create-order" data-testid="create-order">Create order</button>
      <a class="btn" href="/orders">Discard</a>
    </div>
  </form>
</section>"#,
        customer = escape(values.get("customer")),
        quantity = escape(quantity),
        notes = escape(values.get("notes")),
        inv_customer = invalid("customer"),
        inv_product = invalid("product"),
        inv_quantity = invalid("quantity"),
        inv_notes = invalid("notes"),
        err_customer = error_for("customer"),
        err_product = error_for("product"),
        err_quantity = error_for("quantity"),
        err_notes = error_for("notes"),
    );
    layout("New order", Section::NewOrder, user, &content)
}

fn op_form(order: &Order, op: OrderOp) -> String {
    let key = op.key();
    let id = order.id;
    let class = match op {
        OrderOp::Ship => "btn primary",
        OrderOp::Refund | OrderOp::Cancel => "btn danger-outline",
    };
    match op.check(order.status) {
        Ok(()) => {
            let confirm = if op.needs_confirmation() {
                let (title, text, yes) = match op {
                    OrderOp::Refund => (
                        "Refund this order?",
                        format!("{} will be returned to {}. This cannot be undone.", money(order.total_cents()), order.customer),
                        "Yes, refund",
                    ),
                    _ => (
                        "Cancel this order?",
                        format!("Order #{id} for {} will be cancelled and will not ship. This cannot be undone.", order.customer),
                        "Yes, cancel order",
                    ),
                };
                format!(
                    r#" data-confirm="{}" data-confirm-title="{title}" data-confirm-yes="{yes}""#,
                    escape(&text)
                )
            } else {
                String::new()
            };
            format!(
                r#"<div class="action"><form method="post" action="/orders/{id}"{confirm}>
<input type="hidden" name="op" value="{key}"><input type="hidden" name="confirm" value="">
<button type="submit" class="{class}" id="{key}-order" data-testid="{key}-order">{label}</button></form></div>"#,
                label = op.label(),
            )
        }
        Err(reason) => format!(
            r#"<div class="action"><button type="button" class="{class}" id="{key}-order" data-testid="{key}-order" disabled aria-disabled="true" aria-describedby="{key}-reason" title="{reason}">{label}</button>
<p class="hint" id="{key}-reason" data-testid="{key}-reason">{reason}</p></div>"#,
            label = op.label(),
            reason = escape(reason),
        ),
    }
}

/// One order with its actions; a disabled action says why next to it.
pub fn order_detail(user: &User, order: &Order, notice: Option<&Notice>) -> String {
    let history: String = order
        .history
        .iter()
        .map(|e| {
            format!(
                r#"<li><strong>{}</strong> <span class="muted">{}</span></li>"#,
                escape(&e.text),
                escape(&e.date)
            )
        })
        .collect();
    let notes = if order.notes.is_empty() {
        r#"<span class="muted">None</span>"#.to_string()
    } else {
        escape(&order.notes)
    };
    let actions: String = [OrderOp::Ship, OrderOp::Refund, OrderOp::Cancel]
        .into_iter()
        .map(|op| op_form(order, op))
        .collect();
    let content = format!(
        r#"<p><a href="/orders">← All orders</a></p>
<div class="page-head">
  <div><h1 data-testid="order-title">Order #{id} {badge}</h1><p class="sub">Placed {placed} by {customer}</p></div>
</div>
{notice}
<div class="two">
  <section class="card" aria-label="Order details">
    <h2>Details</h2>
    <dl class="facts">
      <dt>Customer</dt><dd data-testid="order-customer">{customer}</dd>
      <dt>Product</dt><dd>{product} <span class="muted">({sku})</span></dd>
      <dt>Quantity</dt><dd data-testid="order-quantity">{qty}</dd>
      <dt>Unit price</dt><dd>{unit}</dd>
      <dt>Total</dt><dd data-testid="order-total"><strong>{total}</strong></dd>
      <dt>Status</dt><dd data-testid="order-status">{status}</dd>
      <dt>Notes</dt><dd>{notes}</dd>
    </dl>
  </section>
  <div>
    <section class="card" aria-label="Order actions"><h2>Actions</h2><div class="op-list">{actions}</div></section>
    <section class="card" aria-label="History"><h2>History</h2><ol class="timeline">{history}</ol></section>
  </div>
</div>"#,
        id = order.id,
        badge = badge(order.status),
        placed = escape(&order.placed),
        customer = escape(&order.customer),
        notice = notice_html(notice),
        product = escape(order.product.name),
        sku = order.product.sku,
        qty = order.quantity,
        unit = money(order.product.price_cents),
        total = money(order.total_cents()),
        status = order.status.label(),
    );
    layout(
        &format!("Order #{}", order.id),
        Section::Orders,
        user,
        &content,
    )
}

/// The server's own confirmation step for a destructive operation posted
/// without `confirm=yes` (no JavaScript, or an agent posting directly).
pub fn confirm_op(user: &User, order: &Order, op: OrderOp) -> String {
    let what = match op {
        OrderOp::Refund => format!(
            "Refund {} to {}?",
            money(order.total_cents()),
            order.customer
        ),
        _ => format!("Cancel order #{} for {}?", order.id, order.customer),
    };
    let content = format!(
        r#"<h1>Please confirm</h1>
<section class="card" style="max-width:560px" role="alertdialog" aria-labelledby="confirm-what">
  <p id="confirm-what" data-testid="confirm-what"><strong>{what}</strong></p>
  <p class="muted">This cannot be undone.</p>
  <form method="post" action="/orders/{id}" class="actions">
    <input type="hidden" name="op" value="{key}"><input type="hidden" name="confirm" value="yes">
    <button type="submit" class="btn danger" id="confirm-{key}" data-testid="confirm-{key}">Yes, {verb}</button>
    <a class="btn" href="/orders/{id}">Go back</a>
  </form>
</section>"#,
        what = escape(&what),
        id = order.id,
        key = op.key(),
        verb = if op == OrderOp::Refund {
            "refund"
        } else {
            "cancel order"
        },
    );
    layout("Confirm", Section::Orders, user, &content)
}

fn settings_frame(title: &str, tab: SettingsTab, user: &User, inner: &str) -> String {
    let content = format!(
        r#"<h1>Settings</h1>
<p class="sub">Your account and the workspace.</p>
<div class="settings">
  <nav aria-label="Settings">
    <a href="/settings/profile" data-testid="settings-profile"{p}>Profile</a>
    <a href="/settings/team" data-testid="settings-team"{t}>Team</a>
    <a href="/settings/billing" data-testid="settings-billing"{b}>Billing</a>
    <a href="/settings/api-keys" data-testid="settings-api-keys"{k}>API keys</a>
  </nav>
  <div>{inner}</div>
</div>"#,
        p = current(tab == SettingsTab::Profile),
        t = current(tab == SettingsTab::Team),
        b = current(tab == SettingsTab::Billing),
        k = current(tab == SettingsTab::ApiKeys),
    );
    layout(title, Section::Settings(tab), user, &content)
}

/// The settings overview: one card per settings page.
pub fn settings_index(user: &User) -> String {
    let inner = r#"<section class="card"><h2><a href="/settings/profile">Profile</a></h2><p class="muted">Your name, language and time zone.</p></section>
<section class="card"><h2><a href="/settings/team">Team</a></h2><p class="muted">Who can sign in to this workspace; invite new members.</p></section>
<section class="card"><h2><a href="/settings/billing">Billing</a></h2><p class="muted">Your plan, payment method and invoices (admins only).</p></section>
<section class="card"><h2><a href="/settings/api-keys">API keys</a></h2><p class="muted">Keys for scripts and integrations.</p></section>"#;
    settings_frame("Settings", SettingsTab::Overview, user, inner)
}

/// The profile form.
pub fn profile(user: &User, notice: Option<&Notice>) -> String {
    let mut languages = String::new();
    for (code, label) in [
        ("en", "English"),
        ("zh-Hant", "繁體中文"),
        ("zh-Hans", "简体中文"),
        ("de", "Deutsch"),
    ] {
        let selected = if user.language == code {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            languages,
            r#"<option value="{code}"{selected}>{label}</option>"#
        );
    }
    let mut zones = String::new();
    for zone in [
        "UTC",
        "Europe/Berlin",
        "America/New_York",
        "Asia/Taipei",
        "Asia/Shanghai",
    ] {
        let selected = if user.timezone == zone {
            " selected"
        } else {
            ""
        };
        let _ = write!(zones, r#"<option value="{zone}"{selected}>{zone}</option>"#);
    }
    let inner = format!(
        r#"{notice}<section class="card">
  <h2>Profile</h2>
  <form method="post" action="/settings/profile" id="profile-form" aria-label="Profile">
    <div class="field"><label for="profile-name">Full name</label><input type="text" id="profile-name" name="name" value="{name}" data-testid="profile-name"></div>
    <div class="field"><label for="profile-email">Email</label><input type="email" id="profile-email" value="{email}" disabled><p class="hint">Your sign-in email cannot be changed here.</p></div>
    <div class="field"><label for="profile-language">Language</label><select id="profile-language" name="language" data-testid="profile-language">{languages}</select></div>
    <div class="field"><label for="profile-timezone">Time zone</label><select id="profile-timezone" name="timezone" data-testid="profile-timezone">{zones}</select></div>
    <button type="submit" class="btn primary" id="save-profile" data-testid="save-profile">Save profile</button>
  </form>
</section>"#,
        notice = notice_html(notice),
        name = escape(&user.name),
        email = escape(&user.email),
    );
    settings_frame("Profile", SettingsTab::Profile, user, &inner)
}

/// The team list and the invitation form.
pub fn team(store: &Store, user: &User, notice: Option<&Notice>, email: &str) -> String {
    let rows: String = store
        .team
        .iter()
        .map(|m| {
            let state = if m.invited {
                r#"<span class="badge invited">Invited</span>"#
            } else {
                r#"<span class="badge shipped">Active</span>"#
            };
            format!(
                r#"<tr data-member="{email}"><td>{name}</td><td>{email}</td><td>{role}</td><td>{state}</td></tr>"#,
                name = escape(&m.name),
                email = escape(&m.email),
                role = m.role.label(),
            )
        })
        .collect();
    let inner = format!(
        r#"{notice}<section class="card">
  <h2>Team members</h2>
  <table data-testid="team-table"><thead><tr><th>Name</th><th>Email</th><th>Role</th><th>Status</th></tr></thead><tbody>{rows}</tbody></table>
</section>
<section class="card">
  <h2>Invite a member</h2>
  <form method="post" action="/settings/team" class="filters" id="invite-form" aria-label="Invite a member">
    <div class="field grow"><label for="invite-email">Email</label><input type="email" id="invite-email" name="email" value="{email}" placeholder="name@example.com" data-testid="invite-email"></div>
    <div class="field"><label for="invite-role">Role</label><select id="invite-role" name="role" data-testid="invite-role"><option value="member">Member</option><option value="viewer">Viewer</option><option value="admin">Admin</option></select></div>
    <button type="submit" class="btn primary" id="send-invite" data-testid="send-invite">Send invite</button>
  </form>
</section>"#,
        notice = notice_html(notice),
        email = escape(email),
    );
    settings_frame("Team", SettingsTab::Team, user, &inner)
}

/// The billing page: the current plan, the others with upgrade buttons, and
/// a cancel-subscription button on paid plans.
pub fn billing(store: &Store, user: &User, notice: Option<&Notice>) -> String {
    let mut cards = String::new();
    for plan in Plan::ALL {
        let is_current = plan == store.plan;
        let perks: String = plan
            .perks()
            .iter()
            .map(|p| format!("<li>{p}</li>"))
            .collect();
        let action = if is_current {
            r#"<button type="button" class="btn" disabled aria-disabled="true">Current plan</button>"#.to_string()
        } else {
            let upgrade = plan.price_cents() > store.plan.price_cents();
            let verb = if upgrade { "Upgrade" } else { "Switch" };
            format!(
                r#"<form method="post" action="/settings/billing" data-confirm="Your card will be charged {price} a month from today." data-confirm-title="{verb} to {label}?" data-confirm-yes="{verb} to {label}">
<input type="hidden" name="op" value="change"><input type="hidden" name="plan" value="{key}"><input type="hidden" name="confirm" value="">
<button type="submit" class="btn primary" id="plan-{key}" data-testid="plan-{key}">{verb} to {label}</button></form>"#,
                price = money(plan.price_cents()),
                label = plan.label(),
                key = plan.key(),
            )
        };
        let _ = write!(
            cards,
            r#"<div class="plan{cur}" data-plan="{key}"><h2>{label}</h2><div class="price">{price}<span class="muted" style="font-size:13px;font-weight:400"> / month</span></div><ul>{perks}</ul>{action}</div>"#,
            cur = if is_current { " current" } else { "" },
            key = plan.key(),
            label = plan.label(),
            price = money(plan.price_cents()),
        );
    }
    let cancel = if store.plan == Plan::Starter {
        String::new()
    } else {
        r#"<section class="card"><h2>Cancel subscription</h2><p class="muted">You will move back to the free Starter plan at the end of the billing period.</p>
<form method="post" action="/settings/billing" data-confirm="Your workspace moves to the Starter plan and loses API access." data-confirm-title="Cancel your subscription?" data-confirm-yes="Cancel subscription">
<input type="hidden" name="op" value="cancel"><input type="hidden" name="confirm" value="">
<button type="submit" class="btn danger-outline" id="cancel-subscription" data-testid="cancel-subscription">Cancel subscription</button></form></section>"#.to_string()
    };
    let inner = format!(
        r#"{notice}<section class="card">
  <h2>Plan</h2>
  <p>You are on the <strong data-testid="current-plan">{current}</strong> plan.</p>
  <div class="plans">{cards}</div>
</section>
<section class="card"><h2>Payment method</h2><p>Visa ending in 4242 · expires 08/28</p></section>
{cancel}"#,
        notice = notice_html(notice),
        current = store.plan.label(),
    );
    settings_frame("Billing", SettingsTab::Billing, user, &inner)
}

fn key_row(key: &ApiKey) -> String {
    let action = if key.revoked {
        r#"<span class="badge revoked">Revoked</span>"#.to_string()
    } else {
        format!(
            r#"<form method="post" action="/settings/api-keys" class="inline" data-confirm="Anything using “{name}” will stop working immediately." data-confirm-title="Revoke this key?" data-confirm-yes="Revoke key">
<input type="hidden" name="op" value="revoke"><input type="hidden" name="key" value="{id}"><input type="hidden" name="confirm" value="">
<button type="submit" class="btn danger-outline" data-testid="revoke-key-{id}" aria-label="Revoke {name}">Revoke</button></form>"#,
            id = key.id,
            name = escape(&key.name),
        )
    };
    format!(
        r#"<tr data-key-id="{id}"><td>{name}</td><td><code>{prefix}…</code></td><td>{created}</td><td>{action}</td></tr>"#,
        id = key.id,
        name = escape(&key.name),
        prefix = escape(&key.prefix),
        created = escape(&key.created),
    )
}

/// The API keys page; `revealed` is a new secret shown this once.
pub fn api_keys(
    store: &Store,
    user: &User,
    revealed: Option<&str>,
    notice: Option<&Notice>,
) -> String {
    let revealed = revealed
        .map(|k| format!(r#"<div class="notice ok" role="status">Copy your new key now; it will not be shown again: <code data-testid="new-key">{}</code></div>"#, escape(k)))
        .unwrap_or_default();
    let rows: String = store.api_keys.iter().map(key_row).collect();
    let inner = format!(
        r#"{revealed}{notice}<section class="card">
  <h2>API keys</h2>
  <p class="muted">Keys let scripts and integrations call the Acme API on behalf of this workspace.</p>
  <table data-testid="keys-table"><thead><tr><th>Name</th><th>Key</th><th>Created</th><th></th></tr></thead><tbody>{rows}</tbody></table>
</section>
<section class="card">
  <h2>Create a key</h2>
  <form method="post" action="/settings/api-keys" class="filters" id="create-key-form" aria-label="Create an API key">
    <input type="hidden" name="op" value="create">
    <div class="field grow"><label for="key-name">Name</label><input type="text" id="key-name" name="name" placeholder="e.g. Warehouse sync" data-testid="key-name"></div>
    <button type="submit" class="btn primary" id="create-key" data-testid="create-key">Create key</button>
  </form>
</section>"#,
        notice = notice_html(notice),
    );
    settings_frame("API keys", SettingsTab::ApiKeys, user, &inner)
}

/// A signed-in page the user's role may not see.
pub fn forbidden(user: &User, what: &str) -> String {
    let content = format!(
        r#"<h1>Not allowed</h1><section class="card" role="alert" data-testid="forbidden"><p>Only administrators can open {}. Ask an admin for access, or <a href="/dashboard">go back to the dashboard</a>.</p></section>"#,
        escape(what)
    );
    layout("Not allowed", Section::Dashboard, user, &content)
}

/// A path under the app that has no page (e.g. an unknown order number).
pub fn not_found(user: &User, path: &str) -> String {
    let content = format!(
        r#"<h1>Page not found</h1><section class="card" data-testid="not-found"><p>There is nothing at <code>{}</code>. <a href="/orders">Browse orders</a> or <a href="/dashboard">go to the dashboard</a>.</p></section>"#,
        escape(path)
    );
    layout("Not found", Section::Dashboard, user, &content)
}

/// The sign-in URL that returns to `path_and_query` afterwards.
pub fn login_redirect(path_and_query: &str) -> String {
    format!("/login?next={}", encode_query_value(path_and_query))
}
