//! Estimating token counts from text, for servers that report none and
//! for fitting a prompt into a context window before it is sent.
//!
//! One rule serves both, so the figure shown as an estimate and the figure
//! the prompt is cut by agree.

/// Characters per token assumed by [`estimate_tokens`], times ten.
///
/// English prose runs near four characters a token; the element listing,
/// JSON schemas and URLs are denser (brackets, digits and short names each
/// cost a token), so 3.5 overestimates prose a little and keeps a prompt
/// that "fits" from overflowing a real server.
const CHARS_PER_TOKEN_X10: u64 = 35;

/// The estimated tokens of a text of `chars` characters (never 0 for a
/// non-empty text).
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64 * 10).div_ceil(CHARS_PER_TOKEN_X10)
}

/// The characters that about `tokens` tokens hold: the inverse of
/// [`estimate_tokens`], for cutting text to a budget.
pub fn chars_for_tokens(tokens: u64) -> usize {
    (tokens * CHARS_PER_TOKEN_X10 / 10) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_up_and_invert() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(35), 10);
        assert_eq!(estimate_tokens(36), 11);
        assert!(estimate_tokens(chars_for_tokens(1000)) <= 1000);
    }
}
