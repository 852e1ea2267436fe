//! The demo app's data: users and sessions, orders with their life cycle,
//! the team, the billing plan and API keys. It lives in memory behind one
//! mutex for the lifetime of a [`super::DemoSite`], so every run starts from
//! the same seeded state.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};

use super::html::today;

/// What a signed-in user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Everything, billing included.
    Admin,
    /// Orders and their own profile, but not billing.
    Member,
    /// Read-only access.
    Viewer,
}

impl Role {
    /// The label shown in tables and selects.
    pub fn label(self) -> &'static str {
        match self {
            Role::Admin => "Admin",
            Role::Member => "Member",
            Role::Viewer => "Viewer",
        }
    }

    /// Reads a role from a form value.
    pub fn parse(value: &str) -> Option<Role> {
        match value {
            "admin" => Some(Role::Admin),
            "member" => Some(Role::Member),
            "viewer" => Some(Role::Viewer),
            _ => None,
        }
    }
}

/// An account that can sign in.
#[derive(Debug, Clone)]
pub struct User {
    /// Display name, editable on the profile page.
    pub name: String,
    /// Sign-in email (fixed: it is the account's identity).
    pub email: String,
    /// The demo password.
    pub password: &'static str,
    /// Permissions.
    pub role: Role,
    /// Preferred language code, editable on the profile page.
    pub language: String,
    /// Time zone name, editable on the profile page.
    pub timezone: String,
}

/// Where an order is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    /// Placed, payment not captured yet.
    Pending,
    /// Paid, waiting to ship.
    Paid,
    /// Handed to the carrier.
    Shipped,
    /// Shipped, then refunded.
    Refunded,
    /// Cancelled before it shipped.
    Cancelled,
}

impl OrderStatus {
    /// Every status, in the order filters list them.
    pub const ALL: [OrderStatus; 5] = [
        OrderStatus::Pending,
        OrderStatus::Paid,
        OrderStatus::Shipped,
        OrderStatus::Refunded,
        OrderStatus::Cancelled,
    ];

    /// The value used in URLs and `data-status` attributes.
    pub fn key(self) -> &'static str {
        match self {
            OrderStatus::Pending => "pending",
            OrderStatus::Paid => "paid",
            OrderStatus::Shipped => "shipped",
            OrderStatus::Refunded => "refunded",
            OrderStatus::Cancelled => "cancelled",
        }
    }

    /// The label shown on badges.
    pub fn label(self) -> &'static str {
        match self {
            OrderStatus::Pending => "Pending",
            OrderStatus::Paid => "Paid",
            OrderStatus::Shipped => "Shipped",
            OrderStatus::Refunded => "Refunded",
            OrderStatus::Cancelled => "Cancelled",
        }
    }

    /// Reads a status from a URL value.
    pub fn parse(value: &str) -> Option<OrderStatus> {
        OrderStatus::ALL.into_iter().find(|s| s.key() == value)
    }
}

/// Something a person can do to an order from its detail page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderOp {
    /// Hand it to the carrier.
    Ship,
    /// Return the money for a shipped order.
    Refund,
    /// Call off an order that has not shipped.
    Cancel,
}

impl OrderOp {
    /// The form value of the operation.
    pub fn key(self) -> &'static str {
        match self {
            OrderOp::Ship => "ship",
            OrderOp::Refund => "refund",
            OrderOp::Cancel => "cancel",
        }
    }

    /// The button label.
    pub fn label(self) -> &'static str {
        match self {
            OrderOp::Ship => "Ship",
            OrderOp::Refund => "Refund",
            OrderOp::Cancel => "Cancel order",
        }
    }

    /// Reads an operation from a form value.
    pub fn parse(value: &str) -> Option<OrderOp> {
        [OrderOp::Ship, OrderOp::Refund, OrderOp::Cancel]
            .into_iter()
            .find(|op| op.key() == value)
    }

    /// Whether the detail page asks for confirmation first (the money- or
    /// customer-facing ones that cannot be undone).
    pub fn needs_confirmation(self) -> bool {
        matches!(self, OrderOp::Refund | OrderOp::Cancel)
    }

    /// Whether the operation is allowed in `status`, and if not, the reason a
    /// person sees next to the disabled button.
    pub fn check(self, status: OrderStatus) -> Result<(), &'static str> {
        use OrderStatus::*;
        match (self, status) {
            (OrderOp::Ship, Pending | Paid) => Ok(()),
            (OrderOp::Ship, Shipped | Refunded) => Err("This order has already shipped."),
            (OrderOp::Ship, Cancelled) => Err("Cancelled orders cannot be shipped."),
            (OrderOp::Refund, Shipped) => Ok(()),
            (OrderOp::Refund, Pending | Paid) => {
                Err("Refunds are available once the order has shipped. Ship it first, or cancel it instead.")
            }
            (OrderOp::Refund, Refunded) => Err("This order has already been refunded."),
            (OrderOp::Refund, Cancelled) => Err("Cancelled orders have nothing to refund."),
            (OrderOp::Cancel, Pending | Paid) => Ok(()),
            (OrderOp::Cancel, Shipped | Refunded) => {
                Err("Shipped orders cannot be cancelled; refund them instead.")
            }
            (OrderOp::Cancel, Cancelled) => Err("This order is already cancelled."),
        }
    }

    /// The status after the operation succeeds.
    fn outcome(self) -> OrderStatus {
        match self {
            OrderOp::Ship => OrderStatus::Shipped,
            OrderOp::Refund => OrderStatus::Refunded,
            OrderOp::Cancel => OrderStatus::Cancelled,
        }
    }
}

/// Something the shop sells.
#[derive(Debug)]
pub struct Product {
    /// Stock keeping unit, the value of the product select.
    pub sku: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Unit price in cents.
    pub price_cents: u64,
}

/// The catalogue offered on the new-order form.
pub const PRODUCTS: &[Product] = &[
    Product {
        sku: "KB-01",
        name: "Mechanical keyboard",
        price_cents: 12900,
    },
    Product {
        sku: "MS-02",
        name: "Wireless mouse",
        price_cents: 4900,
    },
    Product {
        sku: "MN-27",
        name: "27\" 4K monitor",
        price_cents: 38900,
    },
    Product {
        sku: "DK-03",
        name: "Standing desk",
        price_cents: 54900,
    },
    Product {
        sku: "HS-04",
        name: "Noise-cancelling headset",
        price_cents: 19900,
    },
    Product {
        sku: "CB-05",
        name: "USB-C dock",
        price_cents: 8950,
    },
];

/// Looks a product up by SKU.
pub fn product(sku: &str) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.sku == sku)
}

/// One line of an order's history.
#[derive(Debug, Clone)]
pub struct OrderEvent {
    /// When, as `YYYY-MM-DD`.
    pub date: String,
    /// What happened.
    pub text: String,
}

/// A customer order.
#[derive(Debug, Clone)]
pub struct Order {
    /// The order number, also its URL segment.
    pub id: u32,
    /// Customer name.
    pub customer: String,
    /// What was bought.
    pub product: &'static Product,
    /// How many.
    pub quantity: u32,
    /// Free-text notes from whoever placed it.
    pub notes: String,
    /// Where it is in its life cycle.
    pub status: OrderStatus,
    /// When it was placed, `YYYY-MM-DD`.
    pub placed: String,
    /// What happened to it, oldest first.
    pub history: Vec<OrderEvent>,
}

impl Order {
    /// Price times quantity, in cents.
    pub fn total_cents(&self) -> u64 {
        self.product.price_cents * u64::from(self.quantity)
    }
}

/// A person on the team page.
#[derive(Debug, Clone)]
pub struct Member {
    /// Display name (the email's local part for invitations).
    pub name: String,
    /// Email address.
    pub email: String,
    /// Permissions.
    pub role: Role,
    /// Whether they have accepted the invitation yet.
    pub invited: bool,
}

/// A subscription plan on the billing page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The free tier.
    Starter,
    /// The mid tier.
    Pro,
    /// The top tier.
    Business,
}

impl Plan {
    /// Every plan, cheapest first.
    pub const ALL: [Plan; 3] = [Plan::Starter, Plan::Pro, Plan::Business];

    /// The form value.
    pub fn key(self) -> &'static str {
        match self {
            Plan::Starter => "starter",
            Plan::Pro => "pro",
            Plan::Business => "business",
        }
    }

    /// The display name.
    pub fn label(self) -> &'static str {
        match self {
            Plan::Starter => "Starter",
            Plan::Pro => "Pro",
            Plan::Business => "Business",
        }
    }

    /// Monthly price in cents.
    pub fn price_cents(self) -> u64 {
        match self {
            Plan::Starter => 0,
            Plan::Pro => 4900,
            Plan::Business => 19900,
        }
    }

    /// What the plan includes, for its card.
    pub fn perks(self) -> &'static [&'static str] {
        match self {
            Plan::Starter => &[
                "Up to 3 team members",
                "100 orders a month",
                "Email support",
            ],
            Plan::Pro => &["Up to 20 team members", "Unlimited orders", "API access"],
            Plan::Business => &[
                "Unlimited team members",
                "SSO and audit log",
                "Priority support",
            ],
        }
    }

    /// Reads a plan from a form value.
    pub fn parse(value: &str) -> Option<Plan> {
        Plan::ALL.into_iter().find(|p| p.key() == value)
    }
}

/// An API key on the API keys page.
#[derive(Debug, Clone)]
pub struct ApiKey {
    /// Row id, used by the revoke form.
    pub id: u32,
    /// What the key is for.
    pub name: String,
    /// The first characters of the secret, shown so keys can be told apart.
    pub prefix: String,
    /// Creation date.
    pub created: String,
    /// Whether it has been revoked.
    pub revoked: bool,
}

/// Why a change to the store was refused; the text is shown to the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// The whole in-memory state of the demo app.
#[derive(Debug)]
pub struct Store {
    /// Accounts that can sign in.
    pub users: Vec<User>,
    sessions: HashMap<String, usize>,
    /// Orders by number.
    pub orders: BTreeMap<u32, Order>,
    next_order: u32,
    /// The team page's members.
    pub team: Vec<Member>,
    /// The current subscription.
    pub plan: Plan,
    /// API keys, newest last.
    pub api_keys: Vec<ApiKey>,
    next_key: u32,
    /// A freshly created secret, shown once to the session that made it.
    revealed_keys: HashMap<String, String>,
    hasher: RandomState,
    token_counter: u64,
}

/// Seed orders: customer, product index, quantity, status, placed date.
const SEED_ORDERS: &[(&str, usize, u32, OrderStatus, &str)] = {
    use OrderStatus::*;
    &[
        ("Ada Lovelace", 0, 1, Shipped, "2026-10-02"),
        ("Grace Hopper", 2, 2, Refunded, "2026-10-04"),
        ("Alan Turing", 1, 3, Shipped, "2026-10-05"),
        ("Katherine Johnson", 3, 1, Cancelled, "2026-10-07"),
        ("Linus Torvalds", 4, 1, Shipped, "2026-10-09"),
        ("Margaret Hamilton", 5, 2, Paid, "2026-10-11"),
        ("Dennis Ritchie", 0, 5, Shipped, "2026-10-12"),
        ("Barbara Liskov", 2, 1, Paid, "2026-10-14"),
        ("Ken Thompson", 1, 1, Pending, "2026-10-15"),
        ("Frances Allen", 4, 2, Shipped, "2026-10-17"),
        ("Donald Knuth", 3, 1, Refunded, "2026-10-19"),
        ("Radia Perlman", 5, 4, Paid, "2026-10-20"),
        ("John McCarthy", 0, 2, Shipped, "2026-10-22"),
        ("Hedy Lamarr", 1, 6, Pending, "2026-10-24"),
        ("Edsger Dijkstra", 2, 1, Shipped, "2026-10-25"),
        ("Sophie Wilson", 4, 1, Paid, "2026-10-27"),
        ("Tim Berners-Lee", 5, 1, Cancelled, "2026-10-29"),
        ("Joan Clarke", 3, 2, Paid, "2026-10-31"),
        ("Guido van Rossum", 0, 1, Pending, "2026-11-02"),
        ("Lin Qiao", 2, 3, Shipped, "2026-11-04"),
        ("Yukihiro Matsumoto", 1, 2, Paid, "2026-11-06"),
        ("Shafi Goldwasser", 4, 1, Pending, "2026-11-08"),
        ("Bjarne Stroustrup", 5, 2, Shipped, "2026-11-10"),
        ("Anita Borg", 3, 1, Paid, "2026-11-12"),
        ("Wang Xiaoyun", 0, 3, Pending, "2026-11-14"),
    ]
};

/// The first order number; seed orders count up from here.
pub const FIRST_ORDER: u32 = 1001;

impl Store {
    /// The seeded state every demo starts from.
    pub fn seeded() -> Store {
        let users = vec![
            User {
                name: "Ada Admin".into(),
                email: super::DEMO_EMAIL.into(),
                password: super::DEMO_PASSWORD,
                role: Role::Admin,
                language: "en".into(),
                timezone: "UTC".into(),
            },
            User {
                name: "Max Member".into(),
                email: super::MEMBER_EMAIL.into(),
                password: super::DEMO_PASSWORD,
                role: Role::Member,
                language: "en".into(),
                timezone: "Asia/Taipei".into(),
            },
        ];
        let mut orders = BTreeMap::new();
        for (offset, &(customer, product, quantity, status, placed)) in
            SEED_ORDERS.iter().enumerate()
        {
            let id = FIRST_ORDER + offset as u32;
            let product = &PRODUCTS[product % PRODUCTS.len()];
            let mut history = vec![OrderEvent {
                date: placed.to_string(),
                text: "Order placed".into(),
            }];
            let later = |text: &str| OrderEvent {
                date: placed.to_string(),
                text: text.to_string(),
            };
            match status {
                OrderStatus::Pending => {}
                OrderStatus::Paid => history.push(later("Payment captured")),
                OrderStatus::Shipped => {
                    history.push(later("Payment captured"));
                    history.push(later("Shipped"));
                }
                OrderStatus::Refunded => {
                    history.push(later("Payment captured"));
                    history.push(later("Shipped"));
                    history.push(later("Refunded"));
                }
                OrderStatus::Cancelled => history.push(later("Cancelled")),
            }
            orders.insert(
                id,
                Order {
                    id,
                    customer: customer.to_string(),
                    product,
                    quantity,
                    notes: String::new(),
                    status,
                    placed: placed.to_string(),
                    history,
                },
            );
        }
        let team = vec![
            Member {
                name: "Ada Admin".into(),
                email: super::DEMO_EMAIL.into(),
                role: Role::Admin,
                invited: false,
            },
            Member {
                name: "Max Member".into(),
                email: super::MEMBER_EMAIL.into(),
                role: Role::Member,
                invited: false,
            },
            Member {
                name: "Chen Wei".into(),
                email: "chen.wei@acme.test".into(),
                role: Role::Viewer,
                invited: false,
            },
        ];
        let api_keys = vec![ApiKey {
            id: 1,
            name: "Warehouse sync".into(),
            prefix: "acme_live_7f3a".into(),
            created: "2026-09-30".into(),
            revoked: false,
        }];
        Store {
            users,
            sessions: HashMap::new(),
            next_order: FIRST_ORDER + SEED_ORDERS.len() as u32,
            orders,
            team,
            plan: Plan::Starter,
            api_keys,
            next_key: 2,
            revealed_keys: HashMap::new(),
            hasher: RandomState::new(),
            token_counter: 0,
        }
    }

    /// An unguessable hex token (128 bits from the process's random SipHash
    /// keys), for session cookies and API key secrets.
    fn token(&mut self) -> String {
        let mut halves = [0u64; 2];
        for half in &mut halves {
            self.token_counter += 1;
            let mut h = self.hasher.build_hasher();
            h.write_u64(self.token_counter);
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            *half = h.finish();
        }
        format!("{:016x}{:016x}", halves[0], halves[1])
    }

    /// Checks the credentials and opens a session; returns its token.
    pub fn sign_in(&mut self, email: &str, password: &str) -> Option<String> {
        let user = self
            .users
            .iter()
            .position(|u| u.email.eq_ignore_ascii_case(email) && u.password == password)?;
        let token = self.token();
        self.sessions.insert(token.clone(), user);
        Some(token)
    }

    /// Ends a session.
    pub fn sign_out(&mut self, token: &str) {
        self.sessions.remove(token);
        self.revealed_keys.remove(token);
    }

    /// The user index behind a session token.
    pub fn session_user(&self, token: &str) -> Option<usize> {
        self.sessions.get(token).copied()
    }

    /// Creates an order after checking the form; returns its number.
    pub fn create_order(
        &mut self,
        customer: &str,
        sku: &str,
        quantity: &str,
        notes: &str,
    ) -> Result<u32, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        if customer.is_empty() {
            errors.push(("customer", "Enter the customer's name.".to_string()));
        } else if customer.chars().count() > 80 {
            errors.push(("customer", "Keep the name under 80 characters.".to_string()));
        }
        let product = product(sku);
        if product.is_none() {
            errors.push(("product", "Choose a product.".to_string()));
        }
        let quantity = match quantity.parse::<u32>() {
            Ok(q @ 1..=99) => Some(q),
            _ => {
                errors.push((
                    "quantity",
                    "Quantity must be a whole number from 1 to 99.".to_string(),
                ));
                None
            }
        };
        if notes.chars().count() > 500 {
            errors.push(("notes", "Keep notes under 500 characters.".to_string()));
        }
        let (Some(product), Some(quantity), true) = (product, quantity, errors.is_empty()) else {
            return Err(errors);
        };
        let id = self.next_order;
        self.next_order += 1;
        let placed = today();
        self.orders.insert(
            id,
            Order {
                id,
                customer: customer.to_string(),
                product,
                quantity,
                notes: notes.to_string(),
                status: OrderStatus::Pending,
                history: vec![OrderEvent {
                    date: placed.clone(),
                    text: "Order placed".into(),
                }],
                placed,
            },
        );
        Ok(id)
    }

    /// Applies an operation to an order if its status allows it.
    pub fn apply(&mut self, id: u32, op: OrderOp) -> Result<(), Refusal> {
        let order = self
            .orders
            .get_mut(&id)
            .ok_or_else(|| Refusal(format!("There is no order #{id}.")))?;
        op.check(order.status)
            .map_err(|why| Refusal(why.to_string()))?;
        order.status = op.outcome();
        let text = match op {
            OrderOp::Ship => "Shipped",
            OrderOp::Refund => "Refunded",
            OrderOp::Cancel => "Cancelled",
        };
        order.history.push(OrderEvent {
            date: today(),
            text: text.into(),
        });
        Ok(())
    }

    /// Invites a teammate.
    pub fn invite(&mut self, email: &str, role: &str) -> Result<(), Refusal> {
        let valid = email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }) && !email.contains(char::is_whitespace);
        if !valid {
            return Err(Refusal(
                "Enter a valid email address, like name@example.com.".into(),
            ));
        }
        let role = Role::parse(role).ok_or_else(|| Refusal("Choose a role.".into()))?;
        if self
            .team
            .iter()
            .any(|m| m.email.eq_ignore_ascii_case(email))
        {
            return Err(Refusal(format!("{email} is already on the team.")));
        }
        let name = email.split('@').next().unwrap_or(email).to_string();
        self.team.push(Member {
            name,
            email: email.to_string(),
            role,
            invited: true,
        });
        Ok(())
    }

    /// Creates an API key; its full secret is kept for `session` to see once.
    pub fn create_key(&mut self, session: &str, name: &str) -> Result<(), Refusal> {
        if name.is_empty() {
            return Err(Refusal(
                "Give the key a name so you can recognise it later.".into(),
            ));
        }
        if name.chars().count() > 60 {
            return Err(Refusal("Keep the name under 60 characters.".into()));
        }
        let secret = format!("acme_live_{}", self.token());
        self.api_keys.push(ApiKey {
            id: self.next_key,
            name: name.to_string(),
            prefix: secret.chars().take(14).collect(),
            created: today(),
            revoked: false,
        });
        self.next_key += 1;
        self.revealed_keys.insert(session.to_string(), secret);
        Ok(())
    }

    /// Takes the secret created for `session`, if any (it is shown once).
    pub fn take_revealed_key(&mut self, session: &str) -> Option<String> {
        self.revealed_keys.remove(session)
    }

    /// Revokes a key.
    pub fn revoke_key(&mut self, id: u32) -> Result<String, Refusal> {
        let key = self
            .api_keys
            .iter_mut()
            .find(|k| k.id == id && !k.revoked)
            .ok_or_else(|| Refusal("That key does not exist or is already revoked.".into()))?;
        key.revoked = true;
        Ok(key.name.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_has_every_status_and_twenty_five_orders() {
        let store = Store::seeded();
        assert_eq!(store.orders.len(), 25);
        for status in OrderStatus::ALL {
            assert!(
                store.orders.values().any(|o| o.status == status),
                "{status:?}"
            );
        }
    }

    #[test]
    fn refund_needs_ship_first_and_cancel_only_before_shipping() {
        let mut store = Store::seeded();
        let id = store.create_order("Q", "KB-01", "2", "").unwrap();
        let refused = store.apply(id, OrderOp::Refund).unwrap_err();
        assert!(
            refused.0.contains("once the order has shipped"),
            "{refused:?}"
        );
        store.apply(id, OrderOp::Ship).unwrap();
        assert!(store.apply(id, OrderOp::Cancel).is_err());
        store.apply(id, OrderOp::Refund).unwrap();
        assert_eq!(store.orders[&id].status, OrderStatus::Refunded);
        assert_eq!(store.orders[&id].total_cents(), 25800);
    }

    #[test]
    fn invalid_orders_name_each_bad_field() {
        let mut store = Store::seeded();
        let errors = store.create_order("", "nope", "0", "").unwrap_err();
        let fields: Vec<_> = errors.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["customer", "product", "quantity"]);
    }

    #[test]
    fn sessions_are_distinct_and_wrong_passwords_fail() {
        let mut store = Store::seeded();
        assert!(store.sign_in(crate::demo::DEMO_EMAIL, "wrong").is_none());
        let a = store
            .sign_in(crate::demo::DEMO_EMAIL, crate::demo::DEMO_PASSWORD)
            .unwrap();
        let b = store
            .sign_in(crate::demo::DEMO_EMAIL, crate::demo::DEMO_PASSWORD)
            .unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        store.sign_out(&a);
        assert!(store.session_user(&a).is_none());
        assert!(store.session_user(&b).is_some());
    }

    #[test]
    fn invitations_reject_bad_and_duplicate_emails() {
        let mut store = Store::seeded();
        assert!(store.invite("not-an-email", "member").is_err());
        assert!(store.invite(crate::demo::MEMBER_EMAIL, "member").is_err());
        store.invite("new@acme.test", "viewer").unwrap();
        assert!(store
            .team
            .iter()
            .any(|m| m.email == "new@acme.test" && m.invited));
    }
}
