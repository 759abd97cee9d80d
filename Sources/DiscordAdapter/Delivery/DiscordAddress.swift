import Crypto
public import Foundation
import RelayCore
public import RelayPipeline
public import RelayPlatform

/// Where a Discord reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
///
/// An interaction's reply goes through its webhook (the token sealed with `DiscordSecretBox`,
/// with the time Discord stops taking it); anything else, and an interaction's reply after its
/// 15 minutes, goes by the bot token into the channel.
public struct DiscordAddress: Sendable, Hashable, Codable {
    /// How an interaction's webhook is used.
    public enum Webhook: String, Sendable, Hashable, Codable {
        /// A deferred response: the first part edits `@original`, later parts are follow-ups.
        case original
        /// Every part is a follow-up (a button's deferred update: `@original` is the message
        /// holding the button, which stays).
        case followup
    }

    /// The guild, or `dm:<user>` for a direct message: the tenant.
    public var team: String
    public var channel: String
    /// Who asked: private results go only to them.
    public var user: String
    /// The message to answer as a reply (mentions, DMs, reactions).
    public var replyTo: String?
    public var applicationID: String?
    /// The interaction token, sealed.
    public var sealedToken: String?
    /// When Discord stops taking the token (15 minutes after the interaction).
    public var tokenExpiresAt: Date?
    public var webhook: Webhook?
    /// The deferred response was ephemeral (`private`), so `@original` is seen only by `user`.
    public var ephemeral: Bool?

    /// How long an interaction token is good for, less a margin for the request's own time.
    public static let tokenLifetime: Duration = .seconds(15 * 60 - 30)

    public init(
        team: String, channel: String, user: String, replyTo: String? = nil, applicationID: String? = nil, sealedToken: String? = nil,
        tokenExpiresAt: Date? = nil, webhook: Webhook? = nil, ephemeral: Bool? = nil
    ) {
        self.team = team
        self.channel = channel
        self.user = user
        self.replyTo = replyTo
        self.applicationID = applicationID
        self.sealedToken = sealedToken
        self.tokenExpiresAt = tokenExpiresAt
        self.webhook = webhook
        self.ephemeral = ephemeral
    }

    /// The outbox's ordering and pacing key: bot posts to one channel go together (Discord
    /// limits per channel); an interaction's answers are ordered per person.
    public var conversation: String {
        sealedToken == nil ? "discord:\(team):\(channel)" : "discord:\(team):\(channel):\(user)"
    }

    public var route: ReplyRoute {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ReplyRoute(platform: DiscordPlatform.name, conversation: conversation, address: json)
    }

    public static func decode(_ address: String) -> DiscordAddress? {
        try? JSONDecoder().decode(DiscordAddress.self, from: Data(address.utf8))
    }

    /// Whether the interaction token can still be used at `now`.
    func tokenUsable(at now: Date) -> Bool {
        guard sealedToken != nil, applicationID != nil else { return false }
        return tokenExpiresAt.map { now < $0 } ?? true
    }
}

/// Interaction tokens wait in the outbox sealed with the outbox's box, keyed from the bot token
/// (without one, from a key made at start: a token sealed before a restart then no longer opens,
/// and the reply has no way to Discord but the bot token, which is not set either).
public typealias DiscordSecretBox = OutboxSecretBox

extension OutboxSecretBox {
    /// The box for Discord's values.
    public init(secret: DiscordToken?) {
        self.init(secret: secret?.secret, purpose: "discord")
    }
}
