import Foundation

/// How a reply names its fact-check, so that a 👍 or 👎 on it marks the right entry: the
/// summary line ends with `fact-check #12`, which platforms keep in the message's own text.
public enum LedgerReference {
    /// `fact-check #12`.
    public static func label(_ id: Int64) -> String { "fact-check #\(id)" }

    /// The fact-check a message's text names (its last `fact-check #N`), or nil.
    public static func id(in text: String) -> Int64? {
        guard let range = text.range(of: "fact-check #", options: .backwards) else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 18, let id = Int64(digits), id > 0 else { return nil }
        return id
    }

    /// The command a 👍 (`right`) or 👎 (`wrong`) on a fact-check's reply stands for.
    public static func markCommand(_ id: Int64, right: Bool) -> String { "/ledger mark \(id) \(right ? "right" : "wrong")" }

    /// Whether a Unicode reaction says a fact-check's verdict was right (👍) or wrong (👎), any
    /// skin tone or variation selector included; nil for other emoji.
    public static func mark(fromEmoji emoji: String) -> Bool? {
        let base = String(
            String.UnicodeScalarView(emoji.unicodeScalars.filter { !(0xFE00...0xFE0F).contains($0.value) && !(0x1F3FB...0x1F3FF).contains($0.value) }))
        switch base {
        case "👍": return true
        case "👎": return false
        default: return nil
        }
    }
}
