import RelayCore
import RelayPlatform
import Testing

@testable import MatrixAdapter

/// `/sync` answers and events decode into the adapter's models of the client-server API's shapes:
/// what the bot ignores reads as such, and only an event that is not an object is dropped.
@Suite("Matrix sync answers, decoded")
struct MatrixSyncDecodingTests {
    static func sync(_ json: String) throws -> MatrixSyncResponse {
        try MatrixAnswer(body: Array(json.utf8)).decode(MatrixSyncResponse.self, endpoint: "sync")
    }

    @Test func timelinesStateAndInvitationsAreRead() throws {
        let answer = try Self.sync(
            #"""
            {"next_batch": "s2", "rooms": {
              "invite": {"!inv:x": {"invite_state": {"events": [{"type": "m.room.member", "state_key": "@bot:x", "sender": "@ann:x"}, 7]}}},
              "join": {"!r:x": {
                "state": {"events": [{"type": "m.room.encryption", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]},
                "timeline": {"events": [
                  {"event_id": "$1", "type": "m.room.message", "sender": "@ann:x",
                   "content": {"msgtype": "m.text", "body": "> <@b:x> old\n\n!fix teh", "m.mentions": {"user_ids": ["@bot:x", 5]},
                               "m.relates_to": {"m.in_reply_to": {"event_id": "$0"}}}},
                  "not an event",
                  {"event_id": "$2", "type": "m.reaction", "sender": "@ann:x", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$1", "key": "🔎"}}},
                  {"event_id": "$3", "type": "m.room.message", "content": "odd"}
                ]}}}}}
            """#)
        #expect(answer.nextBatch == "s2")
        #expect(answer.invites["!inv:x"]?.map(\.sender) == ["@ann:x"], "the stripped state's odd element is left out")
        let room = try #require(answer.joined["!r:x"])
        #expect(room.state.map(\.type) == ["m.room.encryption"])
        #expect(room.timeline.count == 4)
        let message = try room.timeline[0].get()
        #expect(message.content.relation?.replyTo == "$0")
        #expect(message.text == "!fix teh", "the reply fallback is not the command")
        #expect(message.content.mentionedUsers == ["@bot:x"])
        guard case .failure(let problem) = room.timeline[1] else {
            Issue.record("a string read as an event")
            return
        }
        #expect(problem.payload == "Matrix event")
        #expect(problem.problem.hasSuffix("timeline.events[1]` is not an object"), "\(problem)")
        #expect(try room.timeline[2].get().content.relation?.key == "🔎")
        #expect(try room.timeline[3].get().content == MatrixContent(), "content of another shape reads as empty")
    }

    @Test func anAnswerWithoutItsPositionIsMalformed() {
        #expect(throws: MatrixAPIError.malformed(endpoint: "sync", reason: "missing field `next_batch`")) { try Self.sync(#"{"rooms": {}}"#) }
        #expect(throws: MatrixAPIError.malformed(endpoint: "sync", reason: "field `next_batch` is not a string")) { try Self.sync(#"{"next_batch": 1}"#) }
    }

    @Test func powerLevelsSayWhoAdministersARoom() throws {
        let levels = try MatrixAnswer(
            body: Array(#"{"users": {"@ann:x": 100, "@bob:x": "50"}, "users_default": 0, "events": {"m.room.power_levels": 100}}"#.utf8)
        )
        .decode(MatrixPowerLevels.self, endpoint: "power_levels")
        #expect(levels.administers("@ann:x"))
        #expect(!levels.administers("@bob:x"), "a level that is no number counts as none")
        #expect(!levels.administers("@cy:x"))
    }
}
