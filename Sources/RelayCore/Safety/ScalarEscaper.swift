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
    /// The replacements of ASCII scalars, by value, when every special scalar is ASCII: then the
    /// text is walked as UTF-8 bytes, where a byte below 0x80 is always a whole scalar (never
    /// part of a longer one) — the same scalars, compared without decoding or hashing.
    private let ascii: [[UInt8]?]?
    /// For each ASCII special scalar, how many UTF-16 units its replacement adds beyond its own one.
    private let asciiExtraUTF16: [Int]

    public init(_ replacements: [Unicode.Scalar: String]) {
        self.replacements = replacements
        var table: [[UInt8]?] = Array(repeating: nil, count: 128)
        var extra = Array(repeating: 0, count: 128)
        for (scalar, replacement) in replacements where scalar.isASCII {
            table[Int(scalar.value)] = Array(replacement.utf8)
            extra[Int(scalar.value)] = replacement.utf16.count - 1
        }
        ascii = replacements.keys.allSatisfy(\.isASCII) ? table : nil
        asciiExtraUTF16 = extra
    }

    /// `text` with every special scalar replaced.
    public func escape(_ text: some StringProtocol) -> String {
        guard let ascii else { return escapeScalars(text) }
        var out: [UInt8] = []
        var changed = false
        for byte in text.utf8 {
            if byte < 0x80, let replacement = ascii[Int(byte)] {
                if !changed {
                    changed = true
                    out.reserveCapacity(text.utf8.count + 16)
                    // Everything before the first special byte, unchanged.
                    out += text.utf8.prefix { $0 >= 0x80 || ascii[Int($0)] == nil }
                }
                out += replacement
            } else if changed {
                out.append(byte)
            }
        }
        return changed ? String(decoding: out, as: UTF8.self) : String(text)
    }

    /// How many UTF-16 code units `text` takes once escaped (the unit Slack and Discord count
    /// their limits in).
    public func escapedUTF16Count(_ text: some StringProtocol) -> Int {
        guard ascii != nil else {
            return text.unicodeScalars.reduce(0) { total, scalar in
                total + (replacements[scalar].map { $0.utf16.count } ?? scalar.utf16.count)
            }
        }
        var extra = 0
        for byte in text.utf8 where byte < 0x80 { extra += asciiExtraUTF16[Int(byte)] }
        return text.utf16.count + extra
    }

    private func escapeScalars(_ text: some StringProtocol) -> String {
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
}
