//! When to send a failed request again, and how long to wait first.
//!
//! Waits grow exponentially from `base_delay` up to `max_delay`, with
//! jitter so that many runs hitting the same rate limit do not come back in
//! lockstep. A server's `Retry-After` (seconds or an HTTP date) replaces the
//! computed wait, but never beyond `max_retry_after`.

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Retry settings of the LLM client.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// How many times a failed request is sent again (0 = never).
    pub max_retries: u32,
    /// The wait before the first retry, before jitter.
    pub base_delay: Duration,
    /// The longest computed wait between two attempts.
    pub max_delay: Duration,
    /// The longest wait a server's `Retry-After` can impose.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: crate::defaults::number(&["llm", "max_retries"]) as u32,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first retry).
    ///
    /// With a `Retry-After` from the server, that value (capped) is used as
    /// is: the server knows when it will take requests again. Otherwise the
    /// exponential delay is jittered into its upper half, so the wait never
    /// collapses to nothing yet spreads concurrent clients apart.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let exponent = retry.saturating_sub(1).min(30);
        let full = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        let half = full / 2;
        let spread = full.saturating_sub(half).as_nanos() as u64;
        let jitter = if spread == 0 {
            0
        } else {
            random_u64() % (spread + 1)
        };
        half + Duration::from_nanos(jitter)
    }
}

/// A random number for jitter; std's hasher keys are random per process and
/// per call, which is plenty for spreading retries and needs no crate.
fn random_u64() -> u64 {
    RandomState::new().hash_one(SystemTime::now())
}

/// Reads a `Retry-After` (or OpenAI's `retry-after-ms`) value.
///
/// Accepts delay seconds (`"2"`, `"1.5"`) and HTTP dates
/// (`"Sun, 06 Nov 1994 08:49:37 GMT"`); a date in the past means "now".
/// Anything else is ignored rather than failing the request.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = parse_http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into seconds
/// since the Unix epoch. The obsolete RFC 850 and asctime forms are not
/// sent by any chat-completions server we know of, so they are not read.
pub fn parse_http_date(value: &str) -> Option<u64> {
    let rest = value.trim().split_once(',')?.1.trim();
    let mut parts = rest.split_ascii_whitespace();
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()?.to_ascii_lowercase().as_str() {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "may" => 5,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if !parts.next()?.eq_ignore_ascii_case("GMT")
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year, month, day as i64);
    let seconds = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64;
    u64::try_from(seconds).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm), so dates need no calendar crate.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_become_unix_seconds() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("06 Nov 1994"), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        // A date already past means the server takes requests again now.
        let later = now + Duration::from_secs(100);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", later),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn retry_after_wins_over_backoff_but_is_capped() {
        let policy = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            max_retry_after: Duration::from_secs(5),
        };
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(600))),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn backoff_grows_and_stays_within_bounds() {
        let policy = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(5),
        };
        for _ in 0..50 {
            let first = policy.delay(1, None);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.delay(3, None);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let late = policy.delay(40, None);
            assert!(late >= Duration::from_millis(500) && late <= Duration::from_secs(1));
        }
    }
}
