/// One REST call as the rate limiter sees it: the route (method and path template), the major
/// parameter that splits a route's limit per resource, and the concrete path.
///
/// Discord keys limits by bucket plus "major parameter": the channel, the guild, or the
/// webhook (id and token). `description` shows only the method and template, never the path,
/// which may hold an interaction token.
public struct DiscordRoute: Sendable, Hashable, CustomStringConvertible {
    /// `GET`, `POST`, `PATCH`, `PUT`, `DELETE`.
    public var method: String
    /// The path with placeholders: `/channels/{channel_id}/messages`.
    public var template: String
    /// The path to request, under `/api/v10`.
    public var path: String
    /// The channel id, guild id or webhook id + token the limit is counted per; empty for none.
    public var majorParameter: String
    /// Interaction endpoints are not bound to the bot's global limit.
    public var exemptFromGlobalLimit: Bool

    public init(method: String, template: String, path: String, majorParameter: String, exemptFromGlobalLimit: Bool = false) {
        self.method = method
        self.template = template
        self.path = path
        self.majorParameter = majorParameter
        self.exemptFromGlobalLimit = exemptFromGlobalLimit
    }

    /// The route without its parameters: what `X-RateLimit-Bucket` is learned for.
    var routeKey: String { method + " " + template }

    public var description: String { "\(method) \(template)" }
}

extension DiscordRoute {
    /// `POST /channels/{channel_id}/messages`.
    public static func createMessage(channelID: String) -> DiscordRoute {
        DiscordRoute(method: "POST", template: "/channels/{channel_id}/messages", path: "/channels/\(channelID)/messages", majorParameter: channelID)
    }

    /// `PATCH /channels/{channel_id}/messages/{message_id}`.
    public static func editMessage(channelID: String, messageID: String) -> DiscordRoute {
        DiscordRoute(
            method: "PATCH", template: "/channels/{channel_id}/messages/{message_id}", path: "/channels/\(channelID)/messages/\(messageID)",
            majorParameter: channelID)
    }

    /// `GET /channels/{channel_id}/messages/{message_id}`.
    public static func getMessage(channelID: String, messageID: String) -> DiscordRoute {
        DiscordRoute(
            method: "GET", template: "/channels/{channel_id}/messages/{message_id}", path: "/channels/\(channelID)/messages/\(messageID)",
            majorParameter: channelID)
    }

    /// `GET /channels/{channel_id}/messages` (a thread's or channel's recent messages).
    public static func getMessages(channelID: String) -> DiscordRoute {
        DiscordRoute(method: "GET", template: "/channels/{channel_id}/messages", path: "/channels/\(channelID)/messages", majorParameter: channelID)
    }

    /// `POST /interactions/{interaction_id}/{interaction_token}/callback`.
    public static func interactionCallback(interactionID: String, token: String) -> DiscordRoute {
        DiscordRoute(
            method: "POST", template: "/interactions/{interaction_id}/{interaction_token}/callback",
            path: "/interactions/\(interactionID)/\(token)/callback", majorParameter: interactionID + "/" + token, exemptFromGlobalLimit: true)
    }

    /// `PATCH /webhooks/{application_id}/{interaction_token}/messages/@original`.
    public static func editOriginalResponse(applicationID: String, token: String) -> DiscordRoute {
        DiscordRoute(
            method: "PATCH", template: "/webhooks/{application_id}/{interaction_token}/messages/@original",
            path: "/webhooks/\(applicationID)/\(token)/messages/@original", majorParameter: applicationID + "/" + token, exemptFromGlobalLimit: true)
    }

    /// `POST /webhooks/{application_id}/{interaction_token}` (a follow-up message).
    public static func createFollowup(applicationID: String, token: String) -> DiscordRoute {
        DiscordRoute(
            method: "POST", template: "/webhooks/{application_id}/{interaction_token}", path: "/webhooks/\(applicationID)/\(token)",
            majorParameter: applicationID + "/" + token, exemptFromGlobalLimit: true)
    }

    /// `PUT /applications/{application_id}/commands`, or the guild's when `guildID` is given.
    public static func bulkOverwriteCommands(applicationID: String, guildID: String? = nil) -> DiscordRoute {
        guard let guildID else {
            return DiscordRoute(
                method: "PUT", template: "/applications/{application_id}/commands", path: "/applications/\(applicationID)/commands",
                majorParameter: "")
        }
        return DiscordRoute(
            method: "PUT", template: "/applications/{application_id}/guilds/{guild_id}/commands",
            path: "/applications/\(applicationID)/guilds/\(guildID)/commands", majorParameter: guildID)
    }

    /// `GET /gateway/bot`.
    public static let gatewayBot = DiscordRoute(method: "GET", template: "/gateway/bot", path: "/gateway/bot", majorParameter: "")
}
