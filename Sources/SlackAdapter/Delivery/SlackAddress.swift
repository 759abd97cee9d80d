import Foundation
public import RelayCore

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

    public init(team: String, channel: String, user: String, threadTS: String? = nil, sealedResponseURL: String? = nil) {
        self.team = team
        self.channel = channel
        self.user = user
        self.threadTS = threadTS
        self.sealedResponseURL = sealedResponseURL
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
