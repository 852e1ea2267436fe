//! One-time codes (RFC 6238, TOTP) for `totp:` secrets: a sign-in that
//! asks for a second factor replays with the code of the moment.
//!
//! The seed is what authenticator apps are given: base32 text (spaces,
//! dashes, lower case and `=` padding are accepted). Codes are the usual
//! ones: HMAC-SHA1, 30-second steps from the Unix epoch, 6 digits.

use sha1::{Digest, Sha1};

/// Seconds one code is valid for.
pub const STEP_SECONDS: u64 = 30;
/// Digits of a code.
pub const DIGITS: u32 = 6;

/// Why a seed could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotpError {
    /// A character outside the base32 alphabet. The character itself is
    /// not said: it is part of a secret.
    #[error("the TOTP seed is not base32: character {position} is not A–Z or 2–7")]
    NotBase32 {
        /// Its 1-based position in the seed.
        position: usize,
    },
    /// Nothing is left once spaces and padding are taken out.
    #[error("the TOTP seed is empty")]
    Empty,
}

/// The seed's bytes from its base32 text.
pub fn decode_seed(text: &str) -> Result<Vec<u8>, TotpError> {
    let mut bits: u64 = 0;
    let mut held = 0u32;
    let mut out = Vec::new();
    let mut any = false;
    for (i, c) in text.chars().enumerate() {
        if c.is_whitespace() || c == '-' || c == '=' {
            continue;
        }
        let value = match c.to_ascii_uppercase() {
            c @ 'A'..='Z' => c as u64 - 'A' as u64,
            c @ '2'..='7' => c as u64 - '2' as u64 + 26,
            _ => return Err(TotpError::NotBase32 { position: i + 1 }),
        };
        any = true;
        bits = (bits << 5) | value;
        held += 5;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    if !any || out.is_empty() {
        return Err(TotpError::Empty);
    }
    Ok(out)
}

/// HMAC-SHA1 (RFC 2104) of `message` under `key`.
fn hmac_sha1(key: &[u8], message: &[u8]) -> [u8; 20] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..20].copy_from_slice(&Sha1::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha1::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha1::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

/// The HOTP value (RFC 4226) of `counter`, as `digits` digits with leading
/// zeros.
pub fn hotp(seed: &[u8], counter: u64, digits: u32) -> String {
    let mac = hmac_sha1(seed, &counter.to_be_bytes());
    let offset = usize::from(mac[19] & 0x0f);
    let truncated = u32::from_be_bytes([
        mac[offset] & 0x7f,
        mac[offset + 1],
        mac[offset + 2],
        mac[offset + 3],
    ]);
    let code = u64::from(truncated) % 10u64.pow(digits);
    format!("{code:0width$}", width = digits as usize)
}

/// The code at `unix_seconds` with `digits` digits.
pub fn code_at(seed: &[u8], unix_seconds: u64, digits: u32) -> String {
    hotp(seed, unix_seconds / STEP_SECONDS, digits)
}

/// Seconds since the Unix epoch now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The code a site accepts now (6 digits).
pub fn current_code(seed: &[u8]) -> String {
    code_at(seed, now(), DIGITS)
}

/// The codes of the step before, this one and the next: what a page may
/// still show or echo, so each is masked.
pub fn nearby_codes(seed: &[u8]) -> [String; 3] {
    let step = now() / STEP_SECONDS;
    [
        hotp(seed, step.saturating_sub(1), DIGITS),
        hotp(seed, step, DIGITS),
        hotp(seed, step + 1, DIGITS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238, appendix B: the SHA-1 rows (8 digits, seed
    /// "12345678901234567890").
    #[test]
    fn the_rfc_6238_test_vectors_hold() {
        let seed = b"12345678901234567890";
        for (time, expected) in [
            (59, "94287082"),
            (1_111_111_109, "07081804"),
            (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"),
            (20_000_000_000, "65353130"),
        ] {
            assert_eq!(code_at(seed, time, 8), expected, "at T={time}");
        }
        // The 6-digit code sites use is the same value's last six digits.
        assert_eq!(code_at(seed, 59, 6), "287082");
    }

    /// RFC 4226, appendix D: HOTP values 0 to 9 of the same seed.
    #[test]
    fn the_rfc_4226_hotp_values_hold() {
        let expected = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583",
            "399871", "520489",
        ];
        for (counter, code) in expected.iter().enumerate() {
            assert_eq!(hotp(b"12345678901234567890", counter as u64, 6), *code);
        }
    }

    #[test]
    fn seeds_decode_as_authenticator_apps_write_them() {
        // "12345678901234567890" in base32.
        let written = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
        assert_eq!(decode_seed(written).unwrap(), b"12345678901234567890");
        assert_eq!(
            decode_seed("gezd gnbv gy3t qojq-gezd gnbv gy3t qojq").unwrap(),
            b"12345678901234567890"
        );
        assert_eq!(decode_seed("MZXW6===").unwrap(), b"foo");
        assert_eq!(
            decode_seed("MZX1"),
            Err(TotpError::NotBase32 { position: 4 })
        );
        assert_eq!(decode_seed("  == "), Err(TotpError::Empty));
    }

    #[test]
    fn a_long_key_is_hashed_first() {
        // RFC 2202 test case 6: an 80-byte key.
        let key = [0xaa; 80];
        let mac = hmac_sha1(
            &key,
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "aa4ae5e15272d00e95705637ce8a3b55ed402112");
    }
}
