public import Foundation
public import RelayPipeline

/// Where a Slack reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
public struct SlackAddress: Sendable, Hashable, Codable {
    public var team: String
    public var channel: String
    /// Who asked: private results go only to them.
    public var user: String
    /// The thread to answer in (mentions, reactions, DMs in a thread).
    public var threadTS: String?
    /// The `response_url` of a slash command or button, sealed with `SlackSecretBox`.
    public var sealedResponseURL: String?
    /// When Slack stops taking posts to the `response_url` (30 minutes after it was issued);
    /// after it, replies go by the bot token instead of meeting `expired_url`.
    public var responseURLExpiresAt: Date?
    /// The `response_url` is a slash command's (not a button's): its answer's first part
    /// replaces whatever an earlier post to it left (`replace_original`), so a resend after a
    /// crash shows once. Nil (absent) for every other route.
    public var answersSlashCommand: Bool?

    /// How long Slack accepts posts to a `response_url`.
    public static let responseURLLifetime: Duration = .seconds(30 * 60)
    /// How many posts Slack accepts to one `response_url`.
    public static let responseURLUses = 5

    public init(
        team: String, channel: String, user: String, threadTS: String? = nil, sealedResponseURL: String? = nil, responseURLExpiresAt: Date? = nil,
        answersSlashCommand: Bool? = nil
    ) {
        self.team = team
        self.channel = channel
        self.user = user
        self.threadTS = threadTS
        self.sealedResponseURL = sealedResponseURL
        self.responseURLExpiresAt = responseURLExpiresAt
        self.answersSlashCommand = answersSlashCommand
    }

    /// The outbox's ordering and pacing key. Web API posts to one channel are paced and ordered
    /// together (Slack's per-channel limit); answers through a `response_url` (slash commands,
    /// buttons) are ordered per person, so one user's slow chain never holds up another's reply.
    public var conversation: String {
        sealedResponseURL == nil ? "slack:\(team):\(channel)" : "slack:\(team):\(channel):\(user)"
    }

    public var route: ReplyRoute {
        let json = (try? JSONEncoder.sorted.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ReplyRoute(platform: SlackEventMapping.platform, conversation: conversation, address: json)
    }

    public static func decode(_ address: String) -> SlackAddress? {
        try? JSONDecoder().decode(SlackAddress.self, from: Data(address.utf8))
    }
}

extension JSONEncoder {
    fileprivate static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
