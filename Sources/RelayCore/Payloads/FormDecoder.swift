import Foundation

/// Reads an `application/x-www-form-urlencoded` body — Slack's slash commands and interactivity
/// posts, Mattermost's slash commands — into a `Decodable` type with flat string fields.
///
/// Both platforms' forms are flat `key=value` pairs, so this does only that: split on `&` and
/// `=`, `+` as space, `%XX` escapes, UTF-8; each field once. Hummingbird's `URLEncodedFormDecoder` reads
/// nested forms too and built a tree per body: profiled, a twentieth of the relay's CPU per
/// command went to it.
public enum FormDecoder {
    /// What was wrong with the body itself (a field's absence or type is a `DecodingError`).
    public enum Failure: Error, Equatable, Sendable {
        case badPercentEncoding
        case notUTF8
        case duplicate(String)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>) throws -> T {
        try T(from: FieldsDecoder(fields: try fields(of: body)))
    }

    /// The body's fields, decoded.
    public static func fields(of body: some Collection<UInt8>) throws(Failure) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try unescape(parts[0])
            let value = parts.count > 1 ? try unescape(parts[1]) : ""
            guard fields.updateValue(value, forKey: name) == nil else { throw .duplicate(name) }
        }
        return fields
    }

    /// `+` as a space and `%XX` as its byte; the result must be UTF-8.
    private static func unescape(_ bytes: some Collection<UInt8>) throws(Failure) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var escaped = false
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { throw .badPercentEncoding }
                index = bytes.index(after: index)
                guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { throw .badPercentEncoding }
                index = bytes.index(after: index)
                out.append(high << 4 | low)
                escaped = true
            default: out.append(byte)
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw escaped ? .badPercentEncoding : .notUTF8 }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A `Decoder` over flat string fields: keyed containers of strings (and what parses from one).
private struct FieldsDecoder: Decoder {
    let fields: [String: String]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FieldsContainer<Key>(fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a form is flat fields"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(String.self, .init(codingPath: [], debugDescription: "a form is flat fields"))
    }
}

private struct FieldsContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: String]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { fields.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue] == nil }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let value = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "no such field"))
        }
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        switch try decode(String.self, forKey: key) {
        case "true", "1": return true
        case "false", "0": return false
        default: throw mismatch(Bool.self, key)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = try decode(String.self, forKey: key)
        if let value = value as? T { return value }
        if T.self == Int.self, let number = Int(value) { return number as! T }
        throw mismatch(T.self, key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw mismatch([String: Any].self, key)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw mismatch([Any].self, key)
    }

    func superDecoder() throws -> any Decoder { FieldsDecoder(fields: fields) }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw mismatch([String: Any].self, key) }

    private func mismatch(_ type: Any.Type, _ key: Key) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [key], debugDescription: "a form field is a string"))
    }
}
