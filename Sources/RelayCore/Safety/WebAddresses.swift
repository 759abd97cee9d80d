/// Where a platform's autolinker finds web addresses in text (`http://` or `https://`, any case,
/// then a host), so an escaper can leave them whole: an escape inside one would break the link the
/// platform makes of it. Platforms differ in what an address may hold and where a word ends; what
/// they drop from a link's end (`. , : ; " ' ) ]`) is the same.
public struct WebAddresses: Sendable {
    /// What an address may hold after its scheme: it ends at the first scalar that is not this.
    let isAddressScalar: @Sendable (Unicode.Scalar) -> Bool
    /// A scalar that, just before the `h`, makes it part of a word, where no link starts.
    let continuesWord: @Sendable (Unicode.Scalar) -> Bool
    /// Left out of the end of a link: punctuation after an address is the sentence's.
    static let tail: Set<Unicode.Scalar> = [".", ",", ":", ";", "\"", "'", ")", "]"]

    public init(
        isAddressScalar: @escaping @Sendable (Unicode.Scalar) -> Bool,
        continuesWord: @escaping @Sendable (Unicode.Scalar) -> Bool = WebAddresses.isASCIIAlphanumeric
    ) {
        self.isAddressScalar = isAddressScalar
        self.continuesWord = continuesWord
    }

    /// The scalar ranges of the addresses in `scalars`, in order, their dropped tails left out.
    public func ranges(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "h" || scalars[index] == "H", index == 0 || !continuesWord(scalars[index - 1]),
                let hostStart = Self.schemeEnd(in: scalars, at: index), hostStart < scalars.count, Self.isASCIIAlphanumeric(scalars[hostStart])
            else {
                index += 1
                continue
            }
            var end = hostStart
            while end < scalars.count, isAddressScalar(scalars[end]) { end += 1 }
            var linked = end
            while linked > hostStart, Self.tail.contains(scalars[linked - 1]) { linked -= 1 }
            ranges.append(index..<linked)
            index = end
        }
        return ranges
    }

    /// Where the host starts when `http://` or `https://` (any case) begins at `index`.
    static func schemeEnd(in scalars: [Unicode.Scalar], at index: Int) -> Int? {
        for scheme in ["https://", "http://"] {
            let pattern = Array(scheme.unicodeScalars)
            guard index + pattern.count <= scalars.count else { continue }
            if zip(scalars[index..<(index + pattern.count)], pattern).allSatisfy({ lowercased($0) == $1 }) { return index + pattern.count }
        }
        return nil
    }

    /// Whether the `@` at `index` is an e-mail address's: a word character before it, and after
    /// it a domain with a dot (`ada@example.com`). Anything else (`x@channel`, `@here`) is a
    /// mention's shape, which a platform's escaper neutralises.
    public static func isInEmailAddress(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        // A domain starts with a letter or digit (`a@..b` is none).
        guard index > 0, isWordScalar(scalars[index - 1]), index + 1 < scalars.count, isASCIIAlphanumeric(scalars[index + 1]) else { return false }
        var end = index + 1
        var sawDot = false
        while end < scalars.count, isASCIIAlphanumeric(scalars[end]) || scalars[end] == "-" || scalars[end] == "." {
            if scalars[end] == ".", end > index + 1, end + 1 < scalars.count, isASCIIAlphanumeric(scalars[end + 1]) { sawDot = true }
            end += 1
        }
        return sawDot
    }

    /// A letter or digit (any script) or `.`, `_`, `-`, `+`: what an e-mail address's local part
    /// ends with, and what a link does not start after.
    public static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil || [".", "_", "-", "+"].contains(scalar)
    }

    public static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: false
        }
    }

    static func lowercased(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        (0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(scalar.value + 0x20)! : scalar
    }
}
