import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Synchronization
import Testing

/// Issue 44 on Matrix, on a real Synapse: the room's creator (room version 12: no `users`
/// entry) and members with power level 50 administer it; the creator grants the role by Matrix id
/// or by a pill (`m.mentions`); the bot, an unknown user and a bare word are refused.
@Suite("Matrix: team admins", .tags(.peers))
struct MatrixAdminTests {
    @Test func theRoomsCreatorGrantsTheRoleAndPowerLevelFiftyIsAnAdmin() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let bob = try await fakes.synapse.register("bob")
                _ = try await relay.alice.call(.POST, "/rooms/\(MatrixTestUser.encode(room))/invite", body: ["user_id": .string(bob.user)])
                try await bob.join(room)
                // The direct room the bot opened with each person, for answers only they see.
                let direct = Mutex<[String: String]>([:])
                func privately(_ person: MatrixTestUser) async throws -> [String] {
                    if direct.withLock({ $0[person.user] }) == nil, let invited = try await person.invitations().first {
                        try await person.join(invited)
                        direct.withLock { $0[person.user] = invited }
                    }
                    guard let dm = direct.withLock({ $0[person.user] }) else { return [] }
                    return try MatrixShownMessage.read(try await person.events(in: dm), from: relay.fakes.bot.user).map { $0.history.last ?? "" }
                }
                // The answer to `text`: a reply in the room, or a message in the person's direct room.
                func say(_ text: String, as person: MatrixTestUser, mentions: [String]? = nil) async throws -> String {
                    let before = try await privately(person).count
                    let id = try await person.send(text, in: room, mentions: mentions)
                    var answer = ""
                    try await eventually("the bot to answer \(text)") {
                        let replies = try await relay.botMessages(in: room).filter { $0.replyTo == id }.map { $0.history.last ?? "" }
                        let secret = try await privately(person).dropFirst(before)
                        answer = (replies + secret).joined(separator: "\n")
                        return !answer.isEmpty && !answer.hasPrefix("⏳")
                    }
                    try await relay.settled()
                    return answer
                }
                #expect(try await say("!chain save polish = grammar", as: bob).contains("Only this team's admins can save"))
                let granted = try await say("!admin grant \(bob.user)", as: relay.alice)
                #expect(granted.contains("\(bob.user) is now an admin of this team."), "\(granted)")
                #expect(try await say("!chain save polish = grammar", as: bob).contains("Saved chain"))
                #expect(try await say("!admin revoke Bob", as: relay.alice, mentions: [bob.user]).contains("Took the admin role back"))
                #expect(try await say("!chain delete polish", as: bob).contains("Only this team's admins can delete"))

                let botAnswer = try await say("!admin grant \(relay.fakes.bot.user)", as: relay.alice)
                #expect(botAnswer.contains("is a bot: the admin role is for people."), "\(botAnswer)")
                let ghost = try await say("!admin grant @ghost-0000:localhost", as: relay.alice)
                #expect(ghost.contains("The homeserver knows no user @ghost-0000:localhost."), "\(ghost)")
                let word = try await say("!admin grant bob", as: relay.alice)
                #expect(word.contains("names nobody"), "\(word)")

                // Power level 50, given in the room: an admin there, with no grant.
                let path = "/rooms/\(MatrixTestUser.encode(room))/state/m.room.power_levels"
                guard case .object(var levels) = try await relay.alice.call(.GET, path), case .object(var users)? = levels["users"] ?? .object([:]) else {
                    Issue.record("no power levels")
                    return
                }
                users[bob.user] = 50
                levels["users"] = .object(users)
                _ = try await relay.alice.call(.PUT, path, body: .object(levels))
                #expect(try await say("!chain delete polish", as: bob).contains("Deleted chain `polish`"))
            }
        }
    }
}
