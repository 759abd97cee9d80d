public import Crypto
import Foundation
public import RelayCore

/// Signs interaction requests as Discord does: Ed25519 over `X-Signature-Timestamp` followed by
/// the raw body, with a key pair made in the test (its public key is what the relay is
/// configured with).
public struct FakeDiscordSigner: Sendable {
    public let privateKey: Curve25519.Signing.PrivateKey

    public init(privateKey: Curve25519.Signing.PrivateKey = Curve25519.Signing.PrivateKey()) {
        self.privateKey = privateKey
    }

    /// The public key as 64 hex digits (`DISCORD_PUBLIC_KEY`).
    public var publicKeyHex: String { Self.hex(privateKey.publicKey.rawRepresentation) }

    /// The signature of `timestamp` + `body`, as 128 hex digits.
    public func signature(body: String, timestamp: String) -> String {
        let signature = (try? privateKey.signature(for: Data((timestamp + body).utf8))) ?? Data()
        return Self.hex(signature)
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// Interactions as Discord POSTs them, shaped like the recorded ones (guild member, channel,
/// token, version).
public enum FakeDiscordInteractions {
    public static let guild = "1100000000000000001"
    public static let channel = "1100000000000000002"
    /// The person who asks.
    public static let asker = "1000000000000000042"
    /// Someone else in the channel.
    public static let other = "1000000000000000043"

    /// A PING.
    public static func ping(id: String = "1300000000000000001") -> JSONValue {
        ["type": 1, "id": .string(id), "application_id": .string(FakeDiscordAPI.applicationID), "token": "ping-token", "version": 1]
    }

    /// A slash command `/name` with `options` (`[("text", .string("…"))]`; booleans as `.bool`),
    /// from a member with `permissions` in the channel (by default Send Messages and no more;
    /// `managerPermissions` are a server manager's).
    public static func command(
        _ name: String, options: [(String, JSONValue)], id: String, token: String, user: String = asker, channel: String = channel,
        permissions: String = memberPermissions
    ) -> JSONValue {
        let list: [JSONValue] = options.map { name, value in
            let type: Int
            switch value {
            case .bool: type = 5
            case .int: type = 4
            default: type = 3
            }
            return ["name": .string(name), "type": .int(type), "value": value]
        }
        return base(
            type: 2, id: id, token: token, user: user, channel: channel,
            data: ["id": "1200000000000000001", "name": .string(name), "type": 1, "options": .array(list)], permissions: permissions)
    }

    /// A message context-menu command (`Fact-check`, `Summarize thread`) on a message.
    public static func messageCommand(_ name: String, message: String, content: String, id: String, token: String, user: String = asker) -> JSONValue {
        base(
            type: 2, id: id, token: token, user: user, channel: channel,
            data: [
                "id": "1200000000000000009", "name": .string(name), "type": 3, "target_id": .string(message),
                "resolved": [
                    "messages": [
                        message: ["id": .string(message), "channel_id": .string(channel), "content": .string(content), "author": ["id": .string(other)]]
                    ]
                ],
            ])
    }

    /// A click on a button with `customID` under message `message`.
    public static func click(_ customID: String, message: String = "1400000000000000001", id: String, token: String, user: String = asker) -> JSONValue {
        var interaction = base(type: 3, id: id, token: token, user: user, channel: channel, data: ["component_type": 2, "custom_id": .string(customID)])
        if case .object(var object) = interaction {
            object["message"] = ["id": .string(message), "channel_id": .string(channel), "flags": 64]
            interaction = .object(object)
        }
        return interaction
    }

    /// Send Messages (2048): a member's permissions in a channel, no more.
    public static let memberPermissions = "2048"
    /// Send Messages and Manage Server (32): a server manager's.
    public static let managerPermissions = "2080"

    static func base(
        type: Int, id: String, token: String, user: String, channel: String, data: JSONValue, permissions: String = memberPermissions
    ) -> JSONValue {
        [
            "type": .int(type), "id": .string(id), "application_id": .string(FakeDiscordAPI.applicationID), "token": .string(token), "version": 1,
            "guild_id": .string(guild), "channel_id": .string(channel), "locale": "en-US", "app_permissions": "562949953601536",
            "member": ["permissions": .string(permissions), "user": ["id": .string(user), "username": "ada", "global_name": "Ada"]],
            "data": data,
        ]
    }

    /// A MESSAGE_CREATE that mentions the bot, then `text`.
    public static func mention(_ text: String, id: String, user: String = asker, channel: String = channel) -> JSONValue {
        [
            "id": .string(id), "channel_id": .string(channel), "guild_id": .string(guild), "content": .string("<@\(FakeDiscordAPI.botUserID)> \(text)"),
            "author": ["id": .string(user), "username": "ada"],
            "mentions": [["id": .string(FakeDiscordAPI.botUserID), "username": "Rhea", "bot": true]],
        ]
    }

    /// A MESSAGE_REACTION_ADD of `emoji` by `user` on `message`.
    public static func reaction(_ emoji: String, message: String, user: String = asker, channel: String = channel, author: String? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "user_id": .string(user), "channel_id": .string(channel), "message_id": .string(message), "guild_id": .string(guild),
            "emoji": ["id": nil, "name": .string(emoji)],
        ]
        // Discord names the reacted message's author (`message_author_id`) when it knows it.
        if let author { fields["message_author_id"] = .string(author) }
        return .object(fields)
    }
}
