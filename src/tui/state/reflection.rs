//! The reflection of the current step as it streams in: the fields fill
//! in from the model's partial answer, read as labelled lines or as JSON.

/// The reflection of the current step, filled in as the model streams.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReflectionView {
    /// The step it belongs to.
    pub step: usize,
    /// How the previous step went.
    pub evaluation: String,
    /// What the model keeps in mind.
    pub memory: String,
    /// What this step is for.
    pub next_goal: String,
    /// The proposed action, `click {"index":3}`.
    pub action: Option<String>,
    /// The streamed text so far.
    pub raw: String,
    /// Whether the model is still answering.
    pub streaming: bool,
    /// The fields still show this earlier step while the model has not
    /// written anything for the current one (a model that does not stream
    /// would otherwise leave the pane blank for the whole call).
    pub shown_step: Option<usize>,
}

/// The value of a string field in JSON that may still be arriving: the
/// text after `"name":"` up to the closing quote or the end so far, with
/// escapes decoded. `None` until the field has begun.
pub fn partial_field(raw: &str, name: &str) -> Option<String> {
    let key = format!("\"{name}\"");
    let after_key = raw.find(&key)? + key.len();
    let rest = raw[after_key..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let mut chars = rest.strip_prefix('"')?.chars();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if let Some(decoded) =
                        u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                    {
                        out.push(decoded);
                    }
                }
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

impl ReflectionView {
    /// Adds streamed text and refreshes the fields it has reached.
    ///
    /// The agent streams the fields as readable `label: value` lines;
    /// a model that writes its JSON as plain text is read as JSON.
    pub fn push_stream(&mut self, text: &str) {
        self.raw.push_str(text);
        self.streaming = true;
        if !self.raw.trim_start().starts_with('{') {
            self.read_labelled();
            return;
        }
        for (name, field) in [
            ("evaluation_previous_goal", &mut self.evaluation),
            ("memory", &mut self.memory),
            ("next_goal", &mut self.next_goal),
        ] {
            if let Some(value) = partial_field(&self.raw, name) {
                *field = value;
            }
        }
    }
}

impl ReflectionView {
    /// Reads `evaluation: …`, `memory: …`, `next goal: …` lines; a line
    /// without a label continues the field above it.
    fn read_labelled(&mut self) {
        let mut current: Option<usize> = None;
        let mut fields = [String::new(), String::new(), String::new()];
        for line in self.raw.split('\n') {
            let labelled = [("evaluation:", 0), ("memory:", 1), ("next goal:", 2)]
                .iter()
                .find_map(|(label, at)| line.strip_prefix(label).map(|rest| (*at, rest)));
            match (labelled, current) {
                (Some((at, rest)), _) => {
                    current = Some(at);
                    fields[at] = rest.trim_start().to_string();
                }
                (None, Some(at)) => {
                    fields[at].push('\n');
                    fields[at].push_str(line);
                }
                (None, None) => {}
            }
        }
        let [evaluation, memory, next_goal] = fields;
        self.evaluation = evaluation;
        self.memory = memory;
        self.next_goal = next_goal;
    }
}

#[cfg(test)]
mod tests {
    use super::{partial_field, ReflectionView};

    #[test]
    fn fields_appear_while_the_json_streams() {
        let mut view = ReflectionView::default();
        view.push_stream(r#"{"evaluation_previous_goal": "Signed in", "mem"#);
        assert_eq!(view.evaluation, "Signed in");
        assert_eq!(view.memory, "");
        view.push_stream(r#"ory":"orders at /ord"#);
        assert_eq!(view.memory, "orders at /ord");
        view.push_stream(r#"ers\n", "next_goal":"Open \"Orders\""}"#);
        assert_eq!(view.memory, "orders at /orders\n");
        assert_eq!(view.next_goal, "Open \"Orders\"");
    }

    #[test]
    fn the_agents_readable_stream_fills_the_fields() {
        let mut view = ReflectionView::default();
        view.push_stream("evaluation: Signed");
        view.push_stream(" in\nmemory: two orders");
        assert_eq!(view.evaluation, "Signed in");
        assert_eq!(view.memory, "two orders");
        view.push_stream("\nstill pending\nnext goal: open Orders");
        assert_eq!(view.memory, "two orders\nstill pending");
        assert_eq!(view.next_goal, "open Orders");
    }

    #[test]
    fn a_field_that_has_not_begun_is_none() {
        assert_eq!(partial_field(r#"{"memory"#, "memory"), None);
        assert_eq!(partial_field(r#"{"memory": "#, "memory"), None);
        assert_eq!(
            partial_field(r#"{"memory": ""#, "memory"),
            Some(String::new())
        );
    }
}
