public import RelayCore
public import RelayPlatform

/// Slack's Web API as the adapter sees it: one primitive, with typed helpers in extensions
/// (`postMessage`, `update`, `postEphemeral`, `respond(to:body:)`; `threadReplies`,
/// `message(channel:ts:)`, `userInfo(user:)`; `openSocketModeConnection(appToken:)`), so a test
/// double implements a single method.
///
/// `SlackWebClient` is the implementation over HTTP.
public protocol SlackWebAPI: Sendable {
    /// Sends `request` and returns Slack's answer, a JSON object that said `"ok": true`
    /// (`{}` for a `response_url` that answered with plain text).
    ///
    /// - Throws: a `SlackAPIError` for every failure, `ok: false` answers included; its
    ///   `deliveryOutcome` says whether to retry.
    func send(_ request: SlackWebRequest) async throws(SlackAPIError) -> JSONValue
}

extension SlackWebAPI {
    /// Asks `apps.connections.open` for a Socket Mode websocket URL.
    ///
    /// The URL carries a one-use ticket: connect to it soon, once, and never log it.
    ///
    /// - Parameter appToken: the app-level token (`xapp-…`, scope `connections:write`); a bot
    ///   token is refused with `not_allowed_token_type`.
    public func openSocketModeConnection(appToken: String) async throws(SlackAPIError) -> String {
        let method = "apps.connections.open"
        let answer = try await send(SlackWebRequest(.method(method, token: appToken), body: [:]))
        let url = try Self.string("url", in: answer, method: method)
        let lowered = url.lowercased()
        guard lowered.hasPrefix("wss://") || lowered.hasPrefix("ws://") else {
            throw .malformed(endpoint: method, reason: "the url is not a websocket URL")
        }
        return url
    }
}
