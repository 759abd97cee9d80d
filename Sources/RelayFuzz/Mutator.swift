/// Makes hostile inputs from real ones: each input is a recorded payload with one to four
/// mutations stacked — bit flips, interesting bytes and tokens (`1e309`, `-0`, `NaN`,
/// `9223372036854775808`, lone surrogates, Unicode Prepend and Extend characters), numbers
/// replaced by extreme ones, deletions, duplications, truncation, splicing with another seed,
/// and deep nesting. Deterministic for a given `FuzzRandom`.
public struct Mutator: Sendable {
    /// Inputs never grow past this (a decoder's body cap is far smaller than this for Slack,
    /// larger for backends; the point is hostile shape, not size).
    public var maxLength: Int

    public init(maxLength: Int = 64 * 1024) {
        self.maxLength = maxLength
    }

    /// Numbers that break naive conversions: overflow `Int`, overflow `Double`, negative zero,
    /// non-finite spellings, tiny and huge exponents.
    static let numbers: [String] = [
        "1e309", "-1e309", "-0", "-0.0", "NaN", "nan", "Infinity", "-Infinity", "inf", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e-400",
        "4.9e-324", "1.7976931348623157e308", "1e300", "-1e300", "99999999999999999999999", "0.5", "-1", "-5", "0",
        "1e15", "1e16", "2147483648", "1E+2", "01", "1.", ".5", "0x10", "1_000",
    ]

    /// Fragments that break parsers and escapers.
    static let tokens: [String] =
        numbers + [
            "null", "true", "false", "[]", "{}", "\"\"", "\"", "\\", "\\u0000", "\\ud800", "\\udfff", "\\ud83d\\ude00", ",", ":",
            "%", "%zz", "%00", "%ff", "&", "=", "+", "&&==", "<!channel>", "<@U1>", "\u{600}<", ">\u{301}", "\u{200D}",
            "\u{FE0F}", "\u{202E}", "\u{FFFD}", "\u{10FFFF}", "{\"verdict\":", "\"confidence\":", "\"type\":\"hello\"",
            "\"envelope_id\":\"x\"", "payload=", "\r\n", "\t", " ",
        ]

    /// Single bytes worth inserting: structure, escapes, invalid UTF-8 (a lone continuation byte,
    /// a truncated sequence, an encoded surrogate).
    static let bytes: [UInt8] = [
        0x00, 0xFF, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x2D, 0x30, 0x65, 0x2E, 0x25, 0x26, 0x3D, 0x2B, 0x80, 0xC0, 0xED, 0xF4, 0x0A,
    ]

    /// A mutated copy of one of `seeds` (which must not be empty).
    public func mutate(_ seeds: [[UInt8]], random: inout FuzzRandom) -> [UInt8] {
        var input = seeds[random.below(seeds.count)]
        let rounds = 1 + random.below(4)
        for _ in 0..<rounds {
            mutateOnce(&input, seeds: seeds, random: &random)
        }
        if input.count > maxLength { input.removeLast(input.count - maxLength) }
        return input
    }

    private func mutateOnce(_ input: inout [UInt8], seeds: [[UInt8]], random: inout FuzzRandom) {
        let position = random.below(input.count + 1)
        switch random.below(11) {
        case 0:
            // Flip a bit.
            guard !input.isEmpty else { return }
            let index = random.below(input.count)
            input[index] ^= UInt8(1 << random.below(8))
        case 1:
            // Overwrite a byte with an interesting one.
            guard !input.isEmpty else { return }
            input[random.below(input.count)] = Self.bytes[random.below(Self.bytes.count)]
        case 2:
            input.insert(Self.bytes[random.below(Self.bytes.count)], at: position)
        case 3:
            input.insert(contentsOf: Array(Self.tokens[random.below(Self.tokens.count)].utf8), at: position)
        case 4, 5:
            replaceNumber(&input, random: &random)
        case 6:
            // Delete a range.
            guard !input.isEmpty else { return }
            let start = random.below(input.count)
            let length = 1 + random.below(min(64, input.count - start))
            input.removeSubrange(start..<(start + length))
        case 7:
            // Duplicate a range somewhere else.
            guard !input.isEmpty else { return }
            let start = random.below(input.count)
            let length = 1 + random.below(min(256, input.count - start))
            input.insert(contentsOf: Array(input[start..<(start + length)]), at: position)
        case 8:
            // Truncate.
            input.removeSubrange(position..<input.count)
        case 9:
            // Splice: this input's head, another seed's tail.
            let other = seeds[random.below(seeds.count)]
            let cut = random.below(other.count + 1)
            input = Array(input[..<position]) + Array(other[cut...])
        default:
            // Deep nesting, balanced or not.
            let depth = random.oneIn(4) ? 10_000 + random.below(50_000) : 1 + random.below(600)
            let (open, close): (UInt8, UInt8) = random.oneIn(2) ? (0x5B, 0x5D) : (0x7B, 0x7D)
            var nest = [UInt8](repeating: open, count: depth)
            if open == 0x7B {
                // `{"a":{"a":…` is valid JSON all the way down.
                nest = Array(String(repeating: "{\"a\":", count: min(depth, 20_000)).utf8)
            }
            if random.oneIn(2) { nest += [UInt8](repeating: close, count: random.oneIn(3) ? depth / 2 : depth) }
            input.insert(contentsOf: nest, at: position)
        }
    }

    /// Replaces one run of digits (with its sign, fraction and exponent) by an extreme number.
    private func replaceNumber(_ input: inout [UInt8], random: inout FuzzRandom) {
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        let starts = input.indices.filter { isDigit(input[$0]) && ($0 == 0 || !isDigit(input[$0 - 1])) }
        guard !starts.isEmpty else {
            input.insert(contentsOf: Array(Self.numbers[random.below(Self.numbers.count)].utf8), at: random.below(input.count + 1))
            return
        }
        var start = starts[random.below(starts.count)]
        if start > 0, input[start - 1] == 0x2D { start -= 1 }
        var end = start
        let numberBytes: Set<UInt8> = [0x2D, 0x2B, 0x2E, 0x65, 0x45]
        while end < input.count, isDigit(input[end]) || numberBytes.contains(input[end]) { end += 1 }
        input.replaceSubrange(start..<end, with: Array(Self.numbers[random.below(Self.numbers.count)].utf8))
    }
}
