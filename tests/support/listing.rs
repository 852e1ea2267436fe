//! Reading the element listing the way a model does, for tests that pick a
//! target by what an element says.

/// The index of the first listed element whose line contains `text`
/// (`[3]<button>Save</button>` or `*[3]…` for a new one); the test fails
/// with the listing when none does.
pub fn index_of(listing: &str, text: &str) -> u64 {
    listing
        .lines()
        .find(|l| l.contains(text))
        .and_then(|l| {
            let l = l.trim_start().trim_start_matches('*');
            l.strip_prefix('[')?.split(']').next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("{text:?} is not listed:\n{listing}"))
}
