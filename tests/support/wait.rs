//! Waiting for what a test cannot make happen at once: a bound on a
//! failing test, never a sleep a passing one depends on.

use std::time::{Duration, Instant};

/// Waits (up to 10 s) until `check` holds, and says whether it did; the
/// deadline only bounds a failing test, it is not what the test asserts.
pub async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    check()
}
