//! The tabs that are the session's: a session shares its browser with
//! other pages (a person's own tabs, another session's), and only its own
//! are shown to the model or taken for a tab an action opened.

/// The tabs a session owns: the ones it opened or took over, and every
/// page whose chain of openers leads to one of them (found afresh at each
/// listing). The other pages of the browser (a person's own tabs when
/// attached with `--cdp`, another session's on a shared browser) are
/// neither listed to the model nor taken for a tab an action opened.
#[derive(Debug, Default)]
pub(crate) struct TabFamily(std::sync::Mutex<std::collections::HashSet<String>>);

impl TabFamily {
    /// Counts the tab `id` as the session's.
    pub fn add(&self, id: &str) {
        if let Ok(mut ids) = self.0.lock() {
            ids.insert(id.to_string());
        }
    }

    /// The page targets among `targets` that belong to the session, in
    /// their order.
    pub fn members<'a>(
        &self,
        targets: &'a [chromiumoxide::cdp::browser_protocol::target::TargetInfo],
    ) -> Vec<&'a chromiumoxide::cdp::browser_protocol::target::TargetInfo> {
        let mut ids = self.0.lock().map(|ids| ids.clone()).unwrap_or_default();
        // Each pass adds the pages opened by a member; openers form
        // chains, so this ends after at most one pass per page.
        loop {
            let before = ids.len();
            for t in targets {
                if let Some(opener) = &t.opener_id {
                    if ids.contains(opener.inner()) {
                        ids.insert(t.target_id.inner().clone());
                    }
                }
            }
            if ids.len() == before {
                break;
            }
        }
        targets
            .iter()
            .filter(|t| t.r#type == "page" && ids.contains(t.target_id.inner()))
            .collect()
    }
}
