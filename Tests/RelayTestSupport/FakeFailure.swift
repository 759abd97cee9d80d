/// Something a `FakeRheaTribunal` path does instead of its normal answer, once per request.
public enum FakeFailure: Sendable, Hashable {
    /// An HTTP error status. `detail` nil picks the contract's text for the status (401, 402,
    /// 429) or a generic one; 422 answers the contract's pydantic array for `k` = 1; 500
    /// answers plain text "Internal Server Error", as Starlette does for an unhandled
    /// exception. 429 never carries `Retry-After`, as observed.
    case status(Int, detail: String? = nil)
    /// A 429 that does carry `Retry-After: seconds` (a proxy might add one).
    case rateLimitedWithRetryAfter(seconds: Int)
    /// The model provider failed, reported the gateway's way: a 200 with `Error: …` text
    /// (`/keyboard/quick`, `/dialog`) or with every model response erroring (`/tribunal`).
    case providerFailure
    /// A 200 whose body is not JSON.
    case malformedJSON
    /// A 200 with exactly this body: a broken or hostile gateway's answer.
    case body(String)
}
