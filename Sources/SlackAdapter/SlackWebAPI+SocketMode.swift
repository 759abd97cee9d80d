import RelayCore

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
            throw .malformed(method: method, reason: "the url is not a websocket URL")
        }
        return url
    }
}
