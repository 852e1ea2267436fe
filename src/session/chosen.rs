//! One action chosen outside any run: typed at the workbench's `:` line,
//! given to `webagent exec`, or a suite's check. It travels the same
//! [`Road`](crate::environment::Road) as a model's or a recipe's action
//! (the policy, the approval gate, the environment, the model's side of
//! `extract`, the `tool_call` / `action_request` / `tool_result` events);
//! only the approver differs, and the caller hands it in.

use crate::actions::Action;
use crate::dom::PageState;
use crate::environment::{Approver, Environment, Passage, Road};

use super::assemble::Session;

/// Where an action chosen outside any run stands, for the road's records.
#[derive(Debug, Clone, Copy)]
pub struct Errand<'a> {
    /// Its number in its caller's sequence (`exec`'s action number, the
    /// workbench's next recorded step), as approvals and events name it.
    pub step: usize,
    /// The page it was chosen on, whose listing names its index target;
    /// `None`: the page now, as far as its URL.
    pub page: Option<&'a PageState>,
    /// Who chose it, as an approval request shows it in place of a goal.
    pub goal: &'a str,
}

impl Session {
    /// The road an action of this session takes with `approver` asked
    /// when the configured approval mode says so: the catalog now, the
    /// policy, the model for `extract` when there is one, the events.
    pub fn road(&self, approver: Box<dyn Approver>) -> Road {
        self.agent_setup().road(approver)
    }

    /// Runs `action`, chosen outside any run, along the session's road
    /// with `approver`: refused by the policy before anyone is asked,
    /// then approved (or not) as the approval mode says, then run on the
    /// session's environment (secrets filled, the result masked).
    pub async fn perform(
        &mut self,
        action: Action,
        approver: Box<dyn Approver>,
        errand: Errand<'_>,
    ) -> Passage {
        let mut road = self.road(approver);
        let stand_in;
        let page = match errand.page {
            Some(page) => page,
            None => {
                let url = self.environment.current_url().await.unwrap_or_default();
                stand_in = PageState::stand_in(url);
                &stand_in
            }
        };
        road.travel(
            &mut self.environment,
            errand.step,
            action,
            page,
            errand.goal,
        )
        .await
    }
}
