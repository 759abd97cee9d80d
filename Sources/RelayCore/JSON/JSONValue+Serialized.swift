extension JSONValue {
    /// Compact JSON with keys in byte order, or nil when a number is not finite (JSON has no
    /// NaN or infinity). Written straight to bytes: every reply's body goes through here, and
    /// `JSONEncoder` spent more on its containers than on the text.
    public func serialized() -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        return write(into: &out) ? out : nil
    }

    /// Appends this value; false when a number is not finite.
    private func write(into out: inout [UInt8]) -> Bool {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .int(let value): out += String(value).utf8
        case .double(let value):
            guard value.isFinite else { return false }
            out += String(value).utf8
        case .string(let value): Self.write(string: value, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                guard item.write(into: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.write(string: key, into: &out)
                out.append(UInt8(ascii: ":"))
                guard members[key]!.write(into: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// A JSON string: quote, backslash and control characters escaped (RFC 8259 §7); everything
    /// else, `/` and non-ASCII included, as its UTF-8 bytes.
    private static func write(string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            case 0x08: out += #"\b"#.utf8
            case 0x0C: out += #"\f"#.utf8
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
