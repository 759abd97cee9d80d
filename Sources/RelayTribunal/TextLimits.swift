import RelayCore

/// The gateway's length limits, checked before sending so an over-long text costs no request.
///
/// Pydantic counts code points, as Swift's `unicodeScalars` do (not grapheme clusters).
enum TextLimits {
    /// `text` of `/keyboard/quick` and `/dialog`.
    static let text = 5000
    /// `prompt` of `/tribunal`.
    static let prompt = 10000

    static func length(_ text: String) -> Int { text.unicodeScalars.count }

    /// Throws `.rejected` naming the length and the limit when `text` is empty or too long.
    static func check(_ text: String, limit: Int, what: String) throws(TribunalError) {
        let count = length(text)
        if text.trimmingWhitespace.isEmpty {
            throw .rejected(detail: "the \(what) is empty")
        }
        if count > limit {
            throw .rejected(
                detail: "the \(what) is \(count) characters long; the limit is \(limit) characters. Shorten it and try again.")
        }
    }
}
