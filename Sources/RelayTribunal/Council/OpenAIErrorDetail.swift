import Foundation

/// Turns an error body from an OpenAI-compatible server into one short, key-free line.
///
/// Shapes seen in the wild: OpenAI and vLLM `{"error": {"message": …}}`, Ollama
/// `{"error": "…"}`, FastAPI-based proxies `{"detail": …}`, and plain text or HTML from
/// whatever proxy sits in front.
enum OpenAIErrorDetail {
    /// Long enough for OpenAI's messages, short enough for a dissent note.
    static let maxLength = 200

    static func readable(from body: [UInt8], status: Int, apiKey: String?) -> String {
        clean(message(in: body) ?? plainText(body) ?? "HTTP \(status)", apiKey: apiKey)
    }

    /// `text` on one line, without the key, at most `maxLength` characters.
    static func clean(_ text: String, apiKey: String?) -> String {
        shorten(redact(text.trimmingWhitespace, apiKey: apiKey))
    }

    private static func message(in body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return nil
        }
        if let error = object["error"] as? [String: Any], let message = error["message"] as? String,
            !message.trimmingWhitespace.isEmpty
        {
            return message
        }
        if let error = object["error"] as? String, !error.trimmingWhitespace.isEmpty {
            return error
        }
        if object["detail"] != nil {
            // FastAPI's shapes, including validation lists, are already handled there.
            return ErrorDetail.readable(from: body, status: 0)
        }
        if let message = object["message"] as? String, !message.trimmingWhitespace.isEmpty {
            return message
        }
        return nil
    }

    /// The body as text, unless it is empty or an HTML page (nothing useful fits in a line).
    private static func plainText(_ body: [UInt8]) -> String? {
        let text = String(decoding: body.prefix(4096), as: UTF8.self).trimmingWhitespace
        return text.isEmpty || text.hasPrefix("<") ? nil : text
    }

    /// Removes the key and anything that looks like one.
    ///
    /// OpenAI echoes a masked key in its 401 message ("Incorrect API key provided: sk-ab***wxyz"),
    /// which still gives away part of it.
    static func redact(_ text: String, apiKey: String?) -> String {
        var text = text
        if let key = apiKey?.trimmingWhitespace, key.count >= 4 {
            text = text.replacingOccurrences(of: key, with: "[key]")
        }
        let words = text.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            let looksLikeKey = word.hasPrefix("sk-") || word.hasPrefix("sk_") || word.contains("***")
            guard looksLikeKey else { return String(word) }
            // Keep the sentence's punctuation, drop the key.
            if let last = word.last, ".,;:".contains(last) { return "[key]\(last)" }
            return "[key]"
        }
        return words.joined(separator: " ")
    }

    private static func shorten(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard line.count > maxLength else { return line }
        return String(line.prefix(maxLength - 1)) + "…"
    }
}
