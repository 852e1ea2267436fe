//! An incremental Server-Sent Events parser.
//!
//! Bytes arrive in whatever pieces the network delivers: an event, a line,
//! or a UTF-8 character can be split anywhere. The parser keeps the
//! unfinished line as bytes and decodes only whole lines, so a split
//! multibyte character is never mangled. Lines end in LF, CRLF or a lone
//! CR (a CR at the very end of a piece waits to see whether LF follows).
//! Comment lines (`:` first) are skipped, `data:` works with or without the
//! space, several `data` lines join with `\n`, and a blank line ends the
//! event. An event still open when the body ends is returned by
//! [`SseParser::finish`], so a server that closes without a final blank
//! line loses nothing.

/// One complete event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the server named the event type.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// The parser state between pieces of the body.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The current line, not yet terminated.
    line: Vec<u8>,
    /// The previous piece ended in CR, so a leading LF belongs to it.
    after_cr: bool,
    /// Data lines of the event being assembled.
    data: Option<String>,
    /// The event type of the event being assembled.
    event: Option<String>,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next piece of the body and returns the events it
    /// completed, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if bytes.is_empty() {
            // Keeps a pending CR waiting for the piece that may start with LF.
            return events;
        }
        let mut rest = bytes;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let terminator = rest[end];
            rest = &rest[end + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        events
    }

    /// Ends the stream: an unterminated last line and an event that was
    /// not closed by a blank line still count.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        self.after_cr = false;
        if !line.is_empty() {
            if let Some(event) = self.take_line(&line) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    fn take_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            // `id` and `retry` steer browser reconnection; a completion
            // stream is never resumed, so they are ignored like unknown
            // fields.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        // An event with no data line is dropped, as the SSE spec says.
        let data = self.data.take()?;
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(text: &str) -> SseEvent {
        SseEvent {
            event: None,
            data: text.to_owned(),
        }
    }

    fn parse_in_pieces(body: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&body.len())) {
            events.extend(parser.push(&body[start..cut]));
            start = cut;
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn lf_crlf_and_cr_line_ends_all_work() {
        for body in [
            "data: a\n\ndata: b\n\n",
            "data: a\r\n\r\ndata: b\r\n\r\n",
            "data: a\r\rdata: b\r\r",
        ] {
            let events = parse_in_pieces(body.as_bytes(), &[]);
            assert_eq!(events, vec![data("a"), data("b")], "{body:?}");
        }
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let body = "event: message\r\ndata: {\"t\":\"héllo 世界\"}\r\n\r\n: keep-alive\r\n\r\ndata:x\ndata: y\n\ndata: [DONE]\n\n";
        let whole = parse_in_pieces(body.as_bytes(), &[]);
        assert_eq!(
            whole,
            vec![
                SseEvent {
                    event: Some("message".into()),
                    data: "{\"t\":\"héllo 世界\"}".into()
                },
                data("x\ny"),
                data("[DONE]"),
            ]
        );
        let bytes = body.as_bytes();
        for cut in 1..bytes.len() {
            assert_eq!(parse_in_pieces(bytes, &[cut]), whole, "split at byte {cut}");
        }
        // One byte at a time: every CR/LF pair and every multibyte
        // character is split.
        let all: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(parse_in_pieces(bytes, &all), whole);
    }

    #[test]
    fn comments_and_dataless_events_yield_nothing() {
        let events = parse_in_pieces(b": ping\n\nevent: ping\n\nretry: 10\nid: 4\n\n", &[]);
        assert!(events.is_empty());
    }

    #[test]
    fn data_without_space_keeps_further_spaces() {
        let events = parse_in_pieces(b"data:  two spaces\ndata\n\n", &[]);
        assert_eq!(events, vec![data(" two spaces\n")]);
    }

    #[test]
    fn an_unterminated_last_event_is_kept_at_the_end() {
        let events = parse_in_pieces(b"data: first\n\ndata: last", &[]);
        assert_eq!(events, vec![data("first"), data("last")]);
        let events = parse_in_pieces(b"data: last\n", &[]);
        assert_eq!(events, vec![data("last")]);
    }
}
