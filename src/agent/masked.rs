//! The one way text leaves for a model: a request with every secret value
//! masked. A step's request and `extract`'s both pass here, so it stands
//! below each.

use crate::llm::ChatRequest;
use crate::secrets::Secrets;

/// A request to the model with every secret value masked in its text:
/// the one way text leaves for a model (a task the person typed with a
/// value in it, say). Pictures are pixels, covered before the capture.
pub(crate) fn masked_request(mut request: ChatRequest, secrets: &Secrets) -> ChatRequest {
    if secrets.is_empty() {
        return request;
    }
    for message in &mut request.messages {
        message.content = secrets.mask(&message.content);
        for call in &mut message.tool_calls {
            call.arguments = secrets.mask(&call.arguments);
        }
    }
    request
}
