import Foundation
import RelayCore
import RelayTestSupport
import Synchronization

/// Matrix in the parity suite: `line` typed in a room as `!cmd …` (`--private` appended when
/// private) by a person on a real Synapse; what the room, and the person's direct room with the
/// bot, then show. A delivery sent several times is one message a client sent again under the
/// same transaction id, as clients retry.
struct MatrixUnderTest: PlatformUnderTest {
    let relay: MatrixRelay
    /// The room the scenarios type in.
    let room: String
    var kind: PlatformKind { .matrix }
    var tribunal: FakeRheaTribunal { relay.tribunal }
    /// The direct room the bot opened with the person, once it has.
    private let direct = DirectRoom()

    init(relay: MatrixRelay, room: String) {
        self.relay = relay
        self.room = room
    }

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let text = "!" + line.dropFirst() + (`private` ? " --private" : "")
        let directBefore = try await directMessages().count
        let roomBefore = try await relay.botMessages(in: room).count
        let transaction = "parity-\(delivery)-\(UUID().uuidString)"
        var command = ""
        for _ in 0..<times {
            let answer = try await relay.alice.call(
                .PUT, "/rooms/\(MatrixTestUser.encode(room))/send/m.room.message/\(transaction)", body: ["msgtype": "m.text", "body": .string(text)])
            command = answer["event_id"]?.stringValue ?? ""
        }
        try await eventually("an answer to \(text)") {
            if try await relay.botMessages(in: room).contains(where: { $0.replyTo == command }) { return true }
            if try await joinInvitations() { return true }
            return try await directMessages().count > directBefore
        }
        try await relay.settled()
        _ = try await joinInvitations()
        var seen = SeenReply(acknowledgement: 200)
        // The reply to the command, and the parts after its first (which reply to nothing).
        for message in try await relay.botMessages(in: room).dropFirst(roomBefore) where message.replyTo == command || message.replyTo == nil {
            seen.progress += message.history.filter { $0.contains("Running…") }
            if message.text.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(message.text)
            } else {
                seen.finals.append(message.text)
                seen.publicMessages += 1
            }
        }
        seen.finals += try await directMessages().dropFirst(directBefore).map(\.text)
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    /// The bot's messages in the direct room, oldest first; none before it exists.
    private func directMessages() async throws -> [MatrixShownMessage] {
        guard let direct = direct.room.withLock({ $0 }) else { return [] }
        return try await relay.botMessages(in: direct)
    }

    /// Joins the direct room the bot invited the person to; whether there was one.
    private func joinInvitations() async throws -> Bool {
        guard let invited = try await relay.alice.invitations().first else { return false }
        try await relay.alice.join(invited)
        direct.room.withLock { $0 = invited }
        return true
    }
}

/// The direct room, shared by the copies of a `MatrixUnderTest`.
private final class DirectRoom: Sendable {
    let room = Mutex<String?>(nil)
}
