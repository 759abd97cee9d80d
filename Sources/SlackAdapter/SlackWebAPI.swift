public import RelayCore

/// Slack's Web API as the adapter sees it: one primitive, with typed helpers in extensions
/// (`postMessage`, `update`, `postEphemeral`, `respond(to:body:)`,
/// `openSocketModeConnection(appToken:)`), so a test double implements a single method.
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
