import RelayCore

/// The keys of Discord's payloads, written as their JSON names (`"guild_id"`): one key type
/// for every model here, so a model lists the fields it reads where it reads them.
struct DiscordKey: CodingKey, ExpressibleByStringLiteral {
    var stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { stringValue = value }
}

/// An object of which only the id is read (`channel`, `message`, `author`).
struct DiscordObjectID: Decodable {
    var id: String

    init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: DiscordKey.self).snowflake("id")
    }
}

/// `member` (an interaction's, a reaction's): who acted in a server, and their permissions there.
struct DiscordMember: Decodable {
    var user: DiscordUser?
    var permissions: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        user = container.lenient(DiscordUser.self, "user")
        permissions = container.lenient(String.self, "permissions")
    }
}

extension KeyedDecodingContainer where Key == DiscordKey {
    /// A required id: a snowflake (decimal digits, at most 20), else the field is invalid.
    func snowflake(_ key: Key) throws -> String {
        let value = try decode(String.self, forKey: key)
        guard DiscordSnowflake.isValid(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not a Discord id")
        }
        return value
    }

    /// An id the relay can do without: nil when absent, null, or not a snowflake.
    func optionalSnowflake(_ key: Key) -> String? {
        lenient(String.self, key).flatMap { DiscordSnowflake.isValid($0) ? $0 : nil }
    }

    /// A string within `limit` UTF-8 bytes (a bound on any other unit), else nil.
    func text(_ key: Key, limit: Int = DiscordInteraction.stringLimit) -> String? {
        lenient(String.self, key).flatMap { $0.utf8.count <= limit ? $0 : nil }
    }
}
