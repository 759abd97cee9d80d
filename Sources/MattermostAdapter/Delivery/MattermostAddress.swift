public import Foundation
public import RelayPipeline

/// Where a Mattermost reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
public struct MattermostAddress: Sendable, Hashable, Codable {
    /// The tenant: the Mattermost team's id, or `dm:<user id>` for a direct message.
    public var team: String
    public var channel: String
    /// Who asked: private results go only to them.
    public var user: String
    /// The thread to answer in (`root_id`): a mention's thread, or the post reacted to.
    public var rootID: String?
    /// The slash command's `response_url`, sealed with the platform's `OutboxSecretBox`.
    public var sealedResponseURL: String?
    /// When Mattermost stops taking posts to the `response_url` (30 minutes after it was issued).
    public var responseURLExpiresAt: Date?

    /// How long Mattermost accepts posts to a `response_url` (`CommandWebhookLifetime`).
    public static let responseURLLifetime: Duration = .seconds(30 * 60)
    /// How many posts Mattermost accepts to one `response_url` (`TryUse(hook.Id, 5)`).
    public static let responseURLUses = 5

    public init(
        team: String, channel: String, user: String, rootID: String? = nil, sealedResponseURL: String? = nil, responseURLExpiresAt: Date? = nil
    ) {
        self.team = team
        self.channel = channel
        self.user = user
        self.rootID = rootID
        self.sealedResponseURL = sealedResponseURL
        self.responseURLExpiresAt = responseURLExpiresAt
    }

    /// The outbox's ordering and pacing key: one channel's REST posts go in order; answers at a
    /// `response_url` are ordered per person, so one user's slow chain holds up no one else.
    public var conversation: String {
        sealedResponseURL == nil ? "mattermost:\(channel)" : "mattermost:\(channel):\(user)"
    }

    public var route: ReplyRoute {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ReplyRoute(platform: MattermostPlatform.name, conversation: conversation, address: json)
    }

    public static func decode(_ address: String) -> MattermostAddress? {
        try? JSONDecoder().decode(MattermostAddress.self, from: Data(address.utf8))
    }
}
