//! Text made safe inside HTML and XML, said once for every page and file
//! webagent writes: the demo's pages, a suite's report and its JUnit XML.

/// `text` for use inside an element or a quoted attribute of HTML or XML.
/// Characters XML 1.0 does not allow at all (most control characters) are
/// dropped, so the same text is valid in both.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_are_made_safe() {
        assert_eq!(
            escape("<a href=\"x\">Tom & 'Jerry'</a>\u{7}\n"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;\n"
        );
    }
}
