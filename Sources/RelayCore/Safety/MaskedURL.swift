import Foundation

/// A URL as it may be shown — in the start-up banner, a log line, `/readyz`, an error, a chat
/// reply — with the password of its user part masked: `http://ada:***@host/`. A base URL may
/// carry credentials (`TRIBUNAL_URL=https://user:pass@…`); they stay in the configuration and
/// in the requests, never in what people read.
public enum MaskedURL {
    public static func display(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        // The authority ends at the first `/`, `?` or `#`; its user part at the last `@` in it.
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return url }
        let userInfo = authority[..<at]
        let user = userInfo.firstIndex(of: ":").map { userInfo[..<$0] } ?? userInfo
        let shown = userInfo.contains(":") ? "\(user):***" : "***"
        return String(url[..<schemeEnd.upperBound]) + shown + String(rest[at...])
    }
}
