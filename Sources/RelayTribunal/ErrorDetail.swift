import Foundation

/// Turns a FastAPI error body into one readable line for `TribunalError` details.
///
/// FastAPI answers `{"detail": "text"}` for HTTP errors and, for body validation (422),
/// `{"detail": [{"loc": ["body", "k"], "msg": "Input should be …", …}]}`; proxies in front of
/// it (Fly) may answer plain text or HTML.
enum ErrorDetail {
    /// The longest detail kept; server texts can be long HTML pages.
    static let maxLength = 300

    static func readable(from body: [UInt8], status: Int) -> String {
        if let object = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]),
            let dictionary = object as? [String: Any],
            let detail = dictionary["detail"]
        {
            if let text = describe(detail), !text.isEmpty {
                return truncate(text)
            }
        }
        let text = String(decoding: body, as: UTF8.self).trimmingWhitespace
        if text.isEmpty || text.hasPrefix("<") {
            return "HTTP \(status)"
        }
        return truncate(text)
    }

    private static func describe(_ detail: Any) -> String? {
        switch detail {
        case let text as String:
            return text
        case let items as [Any]:
            let lines = items.compactMap(describeValidationItem)
            return lines.isEmpty ? nil : lines.joined(separator: "; ")
        case let object as [String: Any]:
            // `/office/send` style: an object detail; its message is the useful part.
            if let message = object["message"] as? String ?? object["msg"] as? String { return message }
            return nil
        default:
            return nil
        }
    }

    /// `{"loc": ["body", "k"], "msg": "…"}` → `k: …`. The echoed `input` is dropped: it can
    /// be the whole prompt.
    private static func describeValidationItem(_ item: Any) -> String? {
        if let text = item as? String { return text }
        guard let object = item as? [String: Any] else { return nil }
        let message = (object["msg"] as? String) ?? (object["type"] as? String) ?? "invalid"
        let location = (object["loc"] as? [Any] ?? [])
            .map { "\($0)" }
        // "body" only says where FastAPI looked; the field name is what a user can act on.
        let field = (location.first == "body" && location.count > 1 ? Array(location.dropFirst()) : location)
            .joined(separator: ".")
        return field.isEmpty ? message : "\(field): \(message)"
    }

    private static func truncate(_ text: String) -> String {
        let singleLine = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard singleLine.count > maxLength else { return singleLine }
        return String(singleLine.prefix(maxLength - 1)) + "…"
    }
}
