import Foundation
import HTTPTypes
import HummingbirdTesting
import RelayCore
import RelayTestSupport
import Testing

/// Issue 44 on Telegram: the group's administrators (`getChatMember`) grant the team's admin
/// role to a person by replying to one of their messages; a plain `@username` names nobody a bot
/// can tell, and is refused saying how.
@Suite("Telegram: team admins")
struct TelegramAdminTests {
    typealias Fakes = TelegramFakes

    /// What the bot answered to message `id`: in the group, or privately to its asker (the
    /// messages in the asker's chat after the first `seen`).
    static func answer(to id: Int, asker: Int64, seen: Int, _ relay: TelegramRelay) -> String {
        (relay.telegram.messages(chat: Fakes.group).filter { $0.replyToMessageID == id } + relay.telegram.messages(chat: asker).dropFirst(seen))
            .map(\.text).joined(separator: "\n")
            // The relay writes `@` with a word joiner after it, so no name it quotes notifies anyone.
            .replacingOccurrences(of: "\u{2060}", with: "")
    }

    @Test func anAdministratorGrantsTheRoleByReplyingAndRevokesIt() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                var update = 800
                func send(_ text: String, from: Int64, replyTo: (messageID: Int, text: String, fromID: Int64, isBot: Bool)? = nil) async throws -> String {
                    update += 1
                    let seen = relay.telegram.messages(chat: from).count
                    let message = TelegramUpdates.message(
                        updateID: update, messageID: update, chat: Fakes.group, chatType: "supergroup", chatTitle: "Team", from: from,
                        firstName: from == Fakes.bob ? "Bob" : "Alice", username: from == Fakes.bob ? "bob" : "alice", text: text, replyTo: replyTo)
                    #expect(try await relay.deliver(message).status == .ok)
                    try await relay.settled()
                    return Self.answer(to: update, asker: from, seen: seen, relay)
                }
                let bobSaid = (messageID: 700, text: "I can look after the chains", fromID: Fakes.bob, isBot: false)
                #expect(try await send("/chain save polish = grammar", from: Fakes.bob).contains("Only this team's admins can save"))
                let refused = try await send("/admin grant @bob", from: Fakes.alice, replyTo: bobSaid)
                #expect(refused.contains("Only this team's admins can grant the admin role"), "\(refused)")
                #expect(refused.contains("the Telegram group's creator and administrators"), "\(refused)")

                relay.telegram.makeAdministrator(Fakes.alice, of: Fakes.group)
                let plain = try await send("/admin grant @bob", from: Fakes.alice)
                #expect(plain.contains("Telegram does not tell a bot who @bob is"), "\(plain)")
                let granted = try await send("/admin grant @bob", from: Fakes.alice, replyTo: bobSaid)
                #expect(granted.contains("@bob is now an admin of this team."), "\(granted)")
                #expect(try await send("/chain save polish = grammar", from: Fakes.bob).contains("Saved chain"))

                let botSaid = (messageID: 701, text: "Translation", fromID: FakeTelegramBotAPI.defaultBotID, isBot: true)
                let bot = try await send("/admin grant @\(FakeTelegramBotAPI.defaultBotUsername)", from: Fakes.alice, replyTo: botSaid)
                #expect(bot.contains("is a bot: the admin role is for people."), "\(bot)")

                #expect(try await send("/admin revoke @bob", from: Fakes.alice).contains("Took the admin role back from @bob."))
                #expect(try await send("/chain delete polish", from: Fakes.bob).contains("Only this team's admins can delete"))
            }
        }
    }
}
