//! Calendar dates from the system clock, in UTC, without a date crate: the
//! trace files' names and the demo's dates need no more than this.

use std::time::{SystemTime, UNIX_EPOCH};

/// Year, month and day of a count of days since 1970-01-01 (the proleptic
/// Gregorian calendar; Howard Hinnant's well-known days-to-civil
/// algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds since 1970-01-01 of a moment (0 before it).
fn unix_seconds(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `2026-11-25` for a moment, in UTC.
pub fn utc_date(at: SystemTime) -> String {
    let (year, month, day) = civil_from_days((unix_seconds(at) / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `20261122T001652Z` for a moment, in UTC.
pub fn utc_stamp(at: SystemTime) -> String {
    let secs = unix_seconds(at);
    let rest = secs % 86_400;
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        (rest % 3600) / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_and_stamps_are_utc_calendar_times() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
        // A leap day.
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        let at = UNIX_EPOCH + Duration::from_secs(1_795_306_612);
        assert_eq!(utc_stamp(at), "20261122T001652Z");
        assert_eq!(utc_date(at), "2026-11-22");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_stamp(leap), "20000229T000000Z");
    }
}
