public import Hummingbird

/// The `X-Slack-*` HTTP headers the adapter reads or writes.
public enum SlackHeaders {
    // Hummingbird re-exports `HTTPFields` but not `HTTPField`; its element type names the same
    // `HTTPField.Name` without an import of HTTPTypes, which this target does not list.
    public typealias Name = HTTPFields.Element.Name

    /// Unix time, in seconds, at which Slack signed the request.
    public static let requestTimestamp = Name("X-Slack-Request-Timestamp")!
    /// `v0=<lowercase hex HMAC-SHA256>` of `v0:<timestamp>:<raw body>`.
    public static let signature = Name("X-Slack-Signature")!
    /// On an Events API redelivery: which attempt (1…3).
    public static let retryNumber = Name("X-Slack-Retry-Num")!
    /// On an Events API redelivery: why (`http_timeout`, `http_error`…).
    public static let retryReason = Name("X-Slack-Retry-Reason")!
    /// Sent back with an error (`1`): Slack then does not redeliver the event.
    public static let noRetry = Name("X-Slack-No-Retry")!
}
