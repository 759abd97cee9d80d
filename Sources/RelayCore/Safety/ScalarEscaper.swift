/// Escapes text one Unicode scalar at a time: the primitive every renderer's output safety
/// stands on (Slack's `& < >`, and the escapes later platforms need).
///
/// Never by `Character`: a grapheme cluster can hold a `<` together with a Unicode "Prepend"
/// character before it or a combining mark after it (`"\u{600}<"`, `"<\u{301}"`), and such a
/// cluster is not equal to `"<"`, so an escaper that compares characters lets it through — and
/// the platform, which reads scalars, sees a raw `<`. Comparing scalars cannot be fooled that way.
public struct ScalarEscaper: Sendable {
    /// What each special scalar is written as; every other scalar is kept as it is.
    public let replacements: [Unicode.Scalar: String]

    public init(_ replacements: [Unicode.Scalar: String]) {
        self.replacements = replacements
    }

    /// `text` with every special scalar replaced.
    public func escape(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let replacement = replacements[scalar] {
                out.append(contentsOf: replacement.unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// How many UTF-16 code units `text` takes once escaped (the unit Slack and Discord count
    /// their limits in).
    public func escapedUTF16Count(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            total + (replacements[scalar].map { $0.utf16.count } ?? scalar.utf16.count)
        }
    }
}
