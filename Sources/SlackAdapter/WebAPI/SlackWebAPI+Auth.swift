import RelayCore
public import RelayPlatform

extension SlackWebAPI {
    /// `auth.test`: whose the bot token is — `(user, team)` names, as Slack gives them.
    public func authTest() async throws(SlackAPIError) -> (user: String, team: String) {
        let method = "auth.test"
        let answer = try await send(SlackWebRequest(.method(method), body: [:], encoding: .form))
        let identity = try answer.decode(SlackAuthTestAnswer.self, method: method)
        return (identity.user ?? identity.userID ?? "?", identity.team ?? identity.teamID ?? "?")
    }
}

/// `auth.test`'s answer: the token's user and workspace.
struct SlackAuthTestAnswer: Decodable {
    var user: String?
    var userID: String?
    var team: String?
    var teamID: String?

    enum CodingKeys: String, CodingKey {
        case user, team
        case userID = "user_id"
        case teamID = "team_id"
    }
}
