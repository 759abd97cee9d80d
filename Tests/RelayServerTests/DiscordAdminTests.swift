import Foundation
import RelayCore
import RelayTestSupport
import Testing

/// Issue 44 on Discord: a server manager (the interaction's permissions) grants the team's admin
/// role with Discord's mention (`<@id>`); a bot, an unknown user and plain text are refused.
@Suite("Discord: team admins")
struct DiscordAdminTests {
    static let mia = "1200000000000000077"

    /// The text of the answer to `/rhea line`, sent as `user` with `permissions`.
    static func ask(
        _ relay: DiscordRelay, _ line: String, user: String = FakeDiscordInteractions.asker,
        permissions: String = FakeDiscordInteractions.memberPermissions
    ) async throws -> String {
        let token = "token-\(UUID().uuidString.prefix(8))"
        let interaction = FakeDiscordInteractions.command(
            "rhea", options: [("line", .string(line))], id: String(1_300_000_000_000_600_000 + Int.random(in: 0..<99_999)), token: token,
            user: user, permissions: permissions)
        let ack = try await relay.interact(interaction)
        if ack.json?["type"] == 4, let data = ack.json?["data"] { return Self.text(data) }
        try await relay.settled()
        // A private answer is a follow-up; the original then says where it went.
        let answers = (relay.discord.requests(FakeDiscordAPI.followup) + relay.discord.requests(FakeDiscordAPI.editOriginal))
            .filter { $0.path.contains(token) }
        return answers.map { Self.text($0.body ?? .null) }.joined(separator: "\n")
    }

    static func text(_ body: JSONValue) -> String {
        ([body["content"]?.stringValue] + (body["embeds"]?.arrayValue ?? []).map { $0["description"]?.stringValue })
            .compactMap { $0 }.joined(separator: "\n").replacingOccurrences(of: "\\", with: "")
    }

    @Test func aServerManagerGrantsTheRoleByMentionAndRevokesIt() async throws {
        try await DiscordFakes.with { fakes in
            fakes.discord.seed(user: Self.mia, name: "mia")
            try await fakes.withRelay(fakes.configuration()) { relay in
                let manager = FakeDiscordInteractions.managerPermissions
                #expect(try await Self.ask(relay, "chain save polish = grammar", user: Self.mia).contains("Only this team's admins can save"))
                let refused = try await Self.ask(relay, "admin grant <@\(Self.mia)>", user: Self.mia)
                #expect(refused.contains("Only this team's admins can grant the admin role"), "\(refused)")
                let granted = try await Self.ask(relay, "admin grant <@!\(Self.mia)>", permissions: manager)
                #expect(granted.contains("is now an admin of this team"), "\(granted)")
                #expect(try await Self.ask(relay, "chain save polish = grammar", user: Self.mia).contains("Saved chain"))

                let bot = try await Self.ask(relay, "admin grant <@\(FakeDiscordAPI.botUserID)>", permissions: manager)
                #expect(bot.contains("is a bot: the admin role is for people."), "\(bot)")
                let ghost = try await Self.ask(relay, "admin grant <@1999999999999999999>", permissions: manager)
                #expect(ghost.contains("Discord knows no user"), "\(ghost)")
                let plain = try await Self.ask(relay, "admin grant mia", permissions: manager)
                #expect(plain.contains("is not a mention of anyone"), "\(plain)")

                let revoked = try await Self.ask(relay, "admin revoke <@\(Self.mia)>", permissions: manager)
                #expect(revoked.contains("Took the admin role back"), "\(revoked)")
                #expect(try await Self.ask(relay, "chain delete polish", user: Self.mia).contains("Only this team's admins can delete"))
            }
        }
    }
}
