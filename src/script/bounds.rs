//! The sandbox's [`Limits`], and what keeps a script from hanging or
//! crashing the process beyond the limits Rhai enforces itself: the time
//! limit of a custom action (checked between operations, inside `sleep`
//! and while a host call is answered), an interruptible `sleep`, the depth
//! of values crossing to JSON, and the place (file and line) a limit was
//! hit, which Rhai does not keep for its own limit errors.
//!
//! How deeply a script can nest values itself is bounded by the size
//! limits: Rhai counts every nested entry of a map or array towards them,
//! so a 10,000-deep map holds 10,000 map entries. The script thread's
//! stack ([`SCRIPT_STACK`]) is sized for the deepest value those limits
//! allow, so dropping, printing or comparing one cannot overflow it.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use rhai::{Dynamic, Engine, EvalAltResult, Position};

/// The sandbox's limits. Every one is set on the engine; `Default` gives
/// values generous for recipes and small enough that a runaway script
/// ends in well under a second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Operations one call may run before it is stopped.
    pub operations: u64,
    /// Nested function calls.
    pub call_depth: usize,
    /// Nesting of one expression (top level).
    pub expr_depth: usize,
    /// Nesting of one expression inside functions.
    pub fn_expr_depth: usize,
    /// Bytes in one string.
    pub string_bytes: usize,
    /// Items in one array.
    pub array_items: usize,
    /// Entries in one map.
    pub map_entries: usize,
    /// Variables alive at once.
    pub variables: usize,
    /// Functions one file may define.
    pub functions: usize,
    /// How long one custom action may run, its steps included; in a
    /// recipe, the longest one `sleep` may be.
    pub action_time: std::time::Duration,
    /// How deeply a value a script hands over (an action's parameters,
    /// what a custom action or recipe returns) may nest maps and arrays.
    pub value_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            operations: 5_000_000,
            call_depth: 48,
            expr_depth: 64,
            fn_expr_depth: 32,
            string_bytes: 1 << 20,
            array_items: 10_000,
            map_entries: 10_000,
            variables: 1_000,
            functions: 500,
            action_time: std::time::Duration::from_secs(60),
            value_depth: 64,
        }
    }
}

/// The stack of a script thread: room for dropping, printing and
/// comparing the deepest value the size limits let a script build
/// (every level one entry: 20,000 levels at the default limits).
pub(crate) const SCRIPT_STACK: usize = 64 << 20;

/// The token a script stopped by its time limit ends with.
const TIME_LIMIT: &str = "time limit: ";

/// The token a cancelled script ends with.
pub(crate) const CANCELLED: &str = "cancelled";

/// How often a sleeping script looks at the cancel flag and the clock.
const SLEEP_SLICE: Duration = Duration::from_millis(20);

thread_local! {
    /// The limits of the engine running on this thread.
    static LIMITS: RefCell<Limits> = RefCell::new(Limits::default());
    /// When the call running on this thread must end, if it must.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The script and position last evaluated on this thread.
    static PLACE: RefCell<(String, Position)> = const { RefCell::new((String::new(), Position::NONE)) };
}

/// Sets up this (script) thread for one call: its limits, and when it
/// must end (`None`: when it is done or cancelled).
pub(crate) fn enter(limits: &Limits, deadline: Option<Instant>) {
    LIMITS.with(|l| *l.borrow_mut() = limits.clone());
    DEADLINE.with(|d| d.set(deadline));
    PLACE.with(|p| *p.borrow_mut() = (String::new(), Position::NONE));
}

/// The limits of the call on this thread.
pub(crate) fn limits() -> Limits {
    LIMITS.with(|l| l.borrow().clone())
}

/// Whether the call on this thread ran out of time.
pub(crate) fn timed_out() -> bool {
    DEADLINE
        .with(Cell::get)
        .is_some_and(|d| Instant::now() >= d)
}

/// What a call that ran out of time ends with (see
/// [`time_limit_message`]).
pub(crate) fn time_limit_token() -> Dynamic {
    Dynamic::from(format!(
        "{TIME_LIMIT}the custom action ran for its whole time limit ({}) and was stopped",
        seconds(limits().action_time)
    ))
}

/// The error that ends a call that ran out of time.
pub(crate) fn time_limit_error(pos: Position) -> Box<EvalAltResult> {
    EvalAltResult::ErrorTerminated(time_limit_token(), pos).into()
}

/// The message of a time-limit stop, when `token` (an `ErrorTerminated`
/// value) is one.
pub(crate) fn time_limit_message(token: &Dynamic) -> Option<String> {
    let text = token.clone().into_immutable_string().ok()?;
    text.starts_with(TIME_LIMIT).then(|| text.to_string())
}

/// `12 s`, `1.5 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}

/// Registers `sleep`, which the cancel flag and the time limit end. (The
/// place each statement runs at is kept by the engine's one debugger
/// hook, through [`keep_place`].)
pub(crate) fn install(engine: &mut Engine, cancelled: fn() -> bool) {
    // Rhai's own `sleep` blocks the thread, deaf to Ctrl-C and the time
    // limit; these replace it (the engine's own functions come first).
    engine.register_fn(
        "sleep",
        move |ctx: rhai::NativeCallContext, seconds: i64| {
            sleep(seconds as f64, cancelled, ctx.call_position())
        },
    );
    engine.register_fn(
        "sleep",
        move |ctx: rhai::NativeCallContext, seconds: f64| {
            sleep(seconds, cancelled, ctx.call_position())
        },
    );
}

/// The file and position last evaluated on this thread, when known.
pub(crate) fn last_place() -> Option<(String, Position)> {
    PLACE.with(|p| {
        let place = p.borrow();
        (!place.1.is_none()).then(|| place.clone())
    })
}

/// `message` at the place last evaluated (in `file` when the script
/// names no other).
pub(crate) fn located_here(file: &str, message: String) -> super::Located {
    let (source, pos) = last_place().unwrap_or_default();
    let file = if source.is_empty() { file } else { &source };
    super::Located::at(file, pos, message)
}

/// `FILE:LINE:COLUMN` of the place last evaluated (in `file` when the
/// script names no other).
pub(crate) fn here(file: &str) -> String {
    let place = located_here(file, String::new());
    format!("{}:{}:{}", place.file, place.line, place.column)
}

/// Sleeps `wanted` seconds in slices, ending early with an error when the
/// script is cancelled or its time runs out. A sleep that cannot end
/// before the deadline (a custom action's, or in a recipe one action's
/// time limit from now) is refused at once.
fn sleep(wanted: f64, cancelled: fn() -> bool, pos: Position) -> Result<(), Box<EvalAltResult>> {
    if wanted.is_nan() || wanted <= 0.0 {
        return Ok(());
    }
    let limit = limits().action_time;
    let started = Instant::now();
    let deadline = DEADLINE.with(Cell::get).unwrap_or(started + limit);
    let wake = Duration::try_from_secs_f64(wanted)
        .ok()
        .and_then(|d| started.checked_add(d))
        .filter(|wake| *wake <= deadline);
    let Some(wake) = wake else {
        return Err(EvalAltResult::ErrorTerminated(
            Dynamic::from(format!(
                "{TIME_LIMIT}sleep({wanted}) would run past the time limit of an action ({}); \
                 wait_for(...) waits for the page instead",
                seconds(limit)
            )),
            pos,
        )
        .into());
    };
    loop {
        if cancelled() {
            return Err(EvalAltResult::ErrorTerminated(Dynamic::from(CANCELLED), pos).into());
        }
        let now = Instant::now();
        if now >= wake {
            return Ok(());
        }
        std::thread::sleep((wake - now).min(SLEEP_SLICE));
    }
}

/// Whether `value` nests deeper than `limit` (a scalar is 0 deep, a map
/// or array one more than its deepest item). Looks no deeper than
/// `limit`, so the check itself cannot overflow.
pub(crate) fn deeper_than(value: &Dynamic, limit: usize) -> bool {
    if let Ok(array) = value.as_array_ref() {
        return limit == 0 || array.iter().any(|v| deeper_than(v, limit - 1));
    }
    if let Ok(map) = value.as_map_ref() {
        return limit == 0 || map.values().any(|v| deeper_than(v, limit - 1));
    }
    false
}

/// Refuses a value nested deeper than the limit before it becomes JSON.
pub(crate) fn check_depth(value: &Dynamic, what: &str) -> Result<(), String> {
    let limit = limits().value_depth;
    if deeper_than(value, limit) {
        return Err(format!(
            "script limit: {what} nests maps and arrays more than {limit} deep"
        ));
    }
    Ok(())
}

/// Keeps the place a statement starts running at, so a limit error (which
/// Rhai reports at the outermost call) can name its line.
pub(crate) fn keep_place(source: Option<&str>, pos: Position) {
    PLACE.with(|place| {
        let mut place = place.borrow_mut();
        if let Some(source) = source {
            if place.0 != source {
                place.0 = source.to_string();
            }
        }
        if !pos.is_none() {
            place.1 = pos;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_counted_without_looking_past_the_limit() {
        let mut value = Dynamic::from(1_i64);
        for _ in 0..5 {
            value = Dynamic::from_array(vec![value]);
        }
        assert!(deeper_than(&value, 4));
        assert!(!deeper_than(&value, 5));
        assert!(!deeper_than(&Dynamic::from(1_i64), 0));
        assert!(deeper_than(&Dynamic::from_array(Vec::new()), 0));
        assert_eq!(seconds(Duration::from_secs(60)), "60 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }
}
