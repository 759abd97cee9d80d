public import Hummingbird

/// A request body from Slack that could not be read: not the expected form or JSON, or missing
/// a field the adapter needs.
///
/// Surfaces as HTTP 400 with `{"error": "<description>"}` and `X-Slack-No-Retry: 1` (the same
/// body can only fail again). The body is checked only after its signature, so the message
/// may say what was wrong in detail.
public struct SlackPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which kind of body it was.
    public enum Payload: String, Sendable, Hashable {
        case slashCommand = "slash command"
        case events = "Events API body"
        case interaction = "interactivity body"
    }

    public var payload: Payload
    /// What was wrong, for the sender and the log ("missing field `team_id`").
    public var problem: String

    public init(_ payload: Payload, _ problem: String) {
        self.payload = payload
        self.problem = problem
    }

    public var description: String { "\(payload.rawValue): \(problem)" }
}

extension SlackPayloadError: HTTPResponseError {
    public var status: HTTPResponse.Status { .badRequest }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        SlackErrorResponse.json(status: status, error: description, noRetry: true)
    }
}
