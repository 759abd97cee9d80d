import CoreMetrics
import Logging

// What the relay does not control, made safe: model and user text escaped and split to fit a
// platform's limits (`ScalarEscaper`, `EscapedTextSplitter`), and numbers read from backends'
// and platforms' answers checked against sane ranges (`UntrustedNumber`), hex from signature
// headers read strictly (`Hex`).

/// Splits raw text into pieces that fit a platform's limit once escaped — one splitter for every
/// platform, each giving its own escaped length.
///
/// Pieces are cut between characters (grapheme clusters) of the raw text and escaped only
/// afterwards, each whole, so a piece never ends inside a scalar, a surrogate pair or an escape,
/// which exist only once it is escaped. A character longer than the limit once escaped
/// (thousands of combining marks) is broken into runs of whole scalars that fit. A cut prefers
/// the end of a paragraph, then of a line, then of a word, as long as the piece stays at least
/// half full; otherwise it is cut at the limit. The whitespace a cut happens at, and at the end
/// of a piece, is dropped; leading spaces stay (indentation); every other character is kept, in
/// order.
public struct EscapedTextSplitter: Sendable {
    /// The length of a text once escaped, in the limit's unit (an upper bound is enough).
    let escapedLength: @Sendable (String) -> Int

    public init(escapedLength: @escaping @Sendable (String) -> Int) {
        self.escapedLength = escapedLength
    }

    /// The pieces, each at most `limit` once escaped (a piece holds at least one scalar).
    public func split(_ text: String, limit: Int) -> [String] {
        precondition(limit > 0, "a piece must hold something")
        // Most text fits whole: one piece, its trailing whitespace dropped, without walking it.
        if escapedLength(text) <= limit {
            guard let last = text.lastIndex(where: { !Self.isWhitespace(String($0)) }) else { return [] }
            return [String(text[...last])]
        }
        let units = self.units(of: text, limit: limit)
        let costs = units.map(escapedLength)
        var pieces: [String] = []
        var start = 0
        while start < units.count {
            var end = start
            var cost = 0
            while end < units.count, cost + costs[end] <= limit {
                cost += costs[end]
                end += 1
            }
            if end == units.count {
                Self.append(units[start..<end], to: &pieces)
                break
            }
            let (cut, next) = Self.boundary(in: units, start: start, end: end)
            Self.append(units[start..<cut], to: &pieces)
            start = next
        }
        return pieces
    }

    /// `text` cut to `limit` once escaped, ending with "…" when something was cut.
    public func truncate(_ text: String, limit: Int) -> String {
        let pieces = split(text, limit: limit)
        guard pieces.count > 1 else { return pieces.first ?? "" }
        return (limit > 1 ? split(text, limit: limit - 1).first ?? "" : "") + "…"
    }

    /// Where the piece `start..<end` ends (`end` being the first unit that does not fit), and
    /// where the next starts.
    private static func boundary(in units: [String], start: Int, end: Int) -> (cut: Int, next: Int) {
        let minimum = start + max(1, (end - start) / 2)
        func last(where isBoundary: (Int) -> Bool) -> Int? {
            stride(from: end, through: minimum, by: -1).first(where: isBoundary)
        }
        if let cut = last(where: { isNewline(units[$0]) && $0 > start && isNewline(units[$0 - 1]) }) {
            // A blank line: the piece ends before it, the next starts after all its newlines.
            var first = cut
            while first > start, isNewline(units[first - 1]) { first -= 1 }
            var next = cut
            while next < units.count, isNewline(units[next]) { next += 1 }
            return (first, next)
        }
        if let cut = last(where: { isNewline(units[$0]) }) { return (cut, cut + 1) }
        if let cut = last(where: { isWhitespace(units[$0]) }) { return (cut, cut + 1) }
        return (end, end)
    }

    /// Adds a piece without its trailing whitespace.
    private static func append(_ units: ArraySlice<String>, to pieces: inout [String]) {
        guard let last = units.lastIndex(where: { !isWhitespace($0) }) else { return }
        pieces.append(units[...last].joined())
    }

    // By scalars: a space followed by a combining mark is one `Character` that Swift calls
    // whitespace, and dropping it would drop the mark too.
    private static func isNewline(_ unit: String) -> Bool {
        !unit.isEmpty && unit.unicodeScalars.allSatisfy { $0 == "\n" || $0 == "\r" || $0 == "\u{2028}" || $0 == "\u{2029}" || $0 == "\u{85}" }
    }

    private static func isWhitespace(_ unit: String) -> Bool {
        !unit.isEmpty && unit.unicodeScalars.allSatisfy(\.properties.isWhitespace)
    }

    /// The text's characters, except that one longer than `limit` once escaped is broken into
    /// runs of whole scalars that fit.
    private func units(of text: String, limit: Int) -> [String] {
        var out: [String] = []
        for character in text {
            let unit = String(character)
            guard escapedLength(unit) > limit else {
                out.append(unit)
                continue
            }
            var run = ""
            var runCost = 0
            for scalar in character.unicodeScalars {
                let cost = escapedLength(String(scalar))
                if !run.isEmpty, runCost + cost > limit {
                    out.append(run)
                    run = ""
                    runCost = 0
                }
                run.unicodeScalars.append(scalar)
                runCost += cost
            }
            if !run.isEmpty { out.append(run) }
        }
        return out
    }
}

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

/// Checks a number that came from outside (a backend's answer, a platform's payload or header)
/// before anything uses it: the one place where such numbers are judged, so every adapter and
/// backend does it the same way.
///
/// A value inside its range passes unchanged. Anything else — out of range, or NaN — is
/// replaced (nil for `checked`, the nearest bound for `clamped`), logged once at warning level
/// with its source and field, and counted in `relay_untrusted_values_clamped_total{source,field}`.
/// Absent values (nil in) are not reported: an optional field may be missing.
///
/// `source` and `field` become metric labels: pass literals from the code ("rhea",
/// "agreement_score"), never text from the payload, so the label set stays bounded.
///
/// Why here: RelayCore is the module every backend and platform adapter depends on, and
/// swift-log and swift-metrics are API packages without I/O (`serve` bootstraps the backends),
/// so the primitive reports directly instead of through a reporter each caller must pass in.
public enum UntrustedNumber {
    /// The counter every replaced value increments.
    public static let metricName = "relay_untrusted_values_clamped_total"

    /// What a report says; `Observer` receives it instead of the log and the counter.
    public struct Report: Sendable, Hashable {
        public var source: String
        public var field: String
        /// The value as received, for the log line.
        public var value: String
        /// What was used instead ("nil" when the caller's fallback applies).
        public var replacement: String
    }

    /// Receives every report made in the current task instead of the log and the counter.
    /// A class around the closure: a task-local holding a bare optional closure crashed the
    /// release build in `swift_task_localValuePush`.
    public final class Observer: Sendable {
        let observe: @Sendable (Report) -> Void

        public init(_ observe: @escaping @Sendable (Report) -> Void) {
            self.observe = observe
        }
    }

    /// Set for a task (the fuzzer) that replaces reporting: millions of hostile inputs would
    /// otherwise flood the log and the process-wide counter that tests and operators read.
    @TaskLocal public static var observer: Observer?

    /// `value` when `range` contains it; otherwise nil (the caller's fallback applies), reported.
    public static func checked<Value: Comparable & Sendable>(
        _ value: Value?, in range: ClosedRange<Value>, source: String, field: String
    ) -> Value? {
        guard let value else { return nil }
        if range.contains(value) { return value }
        report(source: source, field: field, value: "\(value)", replacement: "nil")
        return nil
    }

    /// `value` when `range` contains it; the nearest bound when it lies outside; nil when it is
    /// not comparable at all (NaN). Every replacement is reported.
    public static func clamped<Value: Comparable & Sendable>(
        _ value: Value?, to range: ClosedRange<Value>, source: String, field: String
    ) -> Value? {
        guard let value else { return nil }
        if range.contains(value) { return value }
        let replacement: Value? =
            if value < range.lowerBound { range.lowerBound } else if value > range.upperBound { range.upperBound } else { nil }
        report(source: source, field: field, value: "\(value)", replacement: replacement.map { "\($0)" } ?? "nil")
        return replacement
    }

    /// Seconds as a `Duration` when they are finite and within `range`; otherwise nil
    /// (the caller's fallback applies), reported.
    public static func seconds(_ value: Double?, in range: ClosedRange<Duration>, source: String, field: String) -> Duration? {
        guard let value else { return nil }
        guard value.isFinite, value >= range.lowerBound.seconds, value <= range.upperBound.seconds else {
            report(source: source, field: field, value: "\(value)", replacement: "nil")
            return nil
        }
        return min(range.upperBound, max(range.lowerBound, Duration.clampedSeconds(value, maximum: range.upperBound)))
    }

    /// Logs and counts one replaced value (or hands it to the task's `observer`).
    public static func report(source: String, field: String, value: String, replacement: String) {
        // A hostile value can be a megabyte of digits: the log keeps its start.
        let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
        let report = Report(source: source, field: field, value: shown, replacement: replacement)
        if let observer {
            observer.observe(report)
            return
        }
        Logger(label: "rhea-relay.untrusted").warning(
            "untrusted number out of range; replaced",
            metadata: [
                "untrusted.source": "\(source)", "untrusted.field": "\(field)", "untrusted.value": "\(shown)",
                "untrusted.used": "\(replacement)",
            ])
        Counter(label: metricName, dimensions: [("source", source), ("field", field)]).increment()
    }
}

/// Hex digits to bytes, as signatures and keys arrive in headers and configuration.
package enum Hex {
    /// The bytes of exactly `count` × 2 hex digits (either case), or nil.
    package static func decode(_ text: some StringProtocol, count: Int) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == count * 2 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Lowercase hex of `bytes`.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
