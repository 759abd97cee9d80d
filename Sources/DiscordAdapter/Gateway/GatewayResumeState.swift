import RelayCore

/// What a gateway connection needs to continue a session: its id, the last sequence number
/// received, where to resume, and the bot's user id (which only READY tells). Kept in the
/// gateway lease's state, so a replica taking the gateway over (or the next start of this one)
/// RESUMEs where the last holder stopped, and Discord replays what was missed in between
/// instead of losing it.
public struct GatewayResumeState: Sendable, Hashable {
    public var sessionID: String
    public var sequence: Int
    /// READY's `resume_gateway_url` (or the gateway URL when READY named none).
    public var resumeURL: String
    /// READY's `user.id`: mentions of the bot carry it.
    public var botUserID: String?

    public init(sessionID: String, sequence: Int, resumeURL: String, botUserID: String? = nil) {
        self.sessionID = sessionID
        self.sequence = sequence
        self.resumeURL = resumeURL
        self.botUserID = botUserID
    }

    /// Reads what `saved` wrote; nil for anything else (an empty state: no session to resume).
    /// The resume URL is checked as READY's is: RESUME sends the token there, and the store is
    /// not a place a URL should be trusted from unchecked.
    public init?(saved text: String) {
        guard let saved = try? PayloadDecoding.json(Saved.self, from: Array(text.utf8), as: "Discord resume state") else { return nil }
        self.init(sessionID: saved.sessionID, sequence: saved.sequence, resumeURL: saved.resumeURL, botUserID: saved.botUserID)
    }

    /// What `saved` writes, read back with READY's checks.
    private struct Saved: Decodable {
        var sessionID: String
        var sequence: Int
        var resumeURL: String
        var botUserID: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: DiscordKey.self)
            sessionID = try container.decode(String.self, forKey: "session_id")
            sequence = try container.decode(Int.self, forKey: "seq")
            let url = try container.decode(String.self, forKey: "resume_gateway_url")
            guard (1...256).contains(sessionID.utf8.count), GatewayFrame.sequenceRange.contains(sequence), let resumeURL = GatewayReady.acceptedResumeURL(url)
            else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a resumable session")) }
            self.resumeURL = resumeURL
            botUserID = container.optionalSnowflake("user_id")
        }
    }

    /// As kept in the lease's state: JSON, named as RESUME's and READY's fields are.
    public var saved: String {
        var fields: [String: JSONValue] = ["session_id": .string(sessionID), "seq": .int(sequence), "resume_gateway_url": .string(resumeURL)]
        if let botUserID { fields["user_id"] = .string(botUserID) }
        return String(decoding: JSONValue.object(fields).encoded(), as: UTF8.self)
    }
}
