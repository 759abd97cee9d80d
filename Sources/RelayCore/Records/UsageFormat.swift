import Foundation

/// How tokens and dollars read in `/usage` and a reply's receipt.
public enum UsageFormat {
    /// `$0.0008`, `$0.042`, `$1.23`, `$1,204.50`: four decimals below a cent, where a call's cost
    /// lives; cents above a dollar; two significant digits between. `$0` for nothing.
    public static func dollars(_ value: Double) -> String {
        guard value.isFinite, value > 0 else { return "$0" }
        if value < 0.01 { return "$" + trimmed(value, decimals: value < 0.0001 ? 6 : 4) }
        if value < 1 { return "$" + trimmed(value, decimals: 3) }
        return "$" + grouped(value, decimals: 2)
    }

    /// `412 tokens`, `12,480 tokens`.
    public static func tokens(_ count: Int) -> String {
        "\(grouped(Double(count), decimals: 0)) token\(count == 1 ? "" : "s")"
    }

    /// "412 tokens · $0.0008" (`/settings receipts on`): "~" before an estimate, no cost where no
    /// call had a price.
    public static func receipt(_ calls: [ModelUsage]) -> String? {
        guard !calls.isEmpty else { return nil }
        let tokens = (calls.anyEstimated ? "~" : "") + tokens(calls.tokens)
        guard let cost = calls.cost else { return tokens }
        return "\(tokens) · \(dollars(cost))"
    }

    private static func trimmed(_ value: Double, decimals: Int) -> String {
        var text = String(format: "%.\(decimals)f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Thousands separated with commas.
    private static func grouped(_ value: Double, decimals: Int) -> String {
        let text = String(format: "%.\(decimals)f", value)
        let parts = text.split(separator: ".", maxSplits: 1)
        var whole = String(parts[0])
        var groups: [String] = []
        while whole.count > 3 {
            groups.insert(String(whole.suffix(3)), at: 0)
            whole.removeLast(3)
        }
        groups.insert(whole, at: 0)
        return groups.joined(separator: ",") + (parts.count > 1 ? "." + parts[1] : "")
    }
}
