//! Waiting for what a test cannot make happen at once: a bound on a
//! failing test, never a sleep a passing one depends on.

use std::time::{Duration, Instant};

/// Waits (up to 10 s) until `check` holds, and says whether it did; the
/// deadline only bounds a failing test, it is not what the test asserts.
pub async fn eventually(check: impl FnMut() -> bool) -> bool {
    eventually_within(Duration::from_secs(10), check).await
}

/// [`eventually`] with a bound of its own, for what takes longer on a
/// busy machine (a process and its browser ending).
pub async fn eventually_within(bound: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    check()
}
