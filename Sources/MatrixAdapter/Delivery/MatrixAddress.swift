import Foundation
public import RelayPipeline

/// Where a Matrix reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
///
/// Replies go to the room the command came from, as a reply to the command's event (and in its
/// thread when it was in one). A private result goes to a direct room with the asker instead,
/// found or made when it is delivered (`MatrixDirectRooms`).
public struct MatrixAddress: Sendable, Hashable, Codable {
    /// The tenant: one team per room (`mx:!room:server`).
    public var team: String
    public var room: String
    /// Who asked: private results go only to them.
    public var user: String
    /// The event to answer as a reply (the command's, or the message a reaction was put on).
    public var replyTo: String?
    /// The thread's root, when the command was in a thread.
    public var thread: String?

    public init(team: String, room: String, user: String, replyTo: String? = nil, thread: String? = nil) {
        self.team = team
        self.room = room
        self.user = user
        self.replyTo = replyTo
        self.thread = thread
    }

    /// The team of a room: each room is its own tenant, as each Slack workspace or Telegram group.
    public static func team(room: String) -> String { "mx:" + room }

    public var route: ReplyRoute {
        ReplyRoute(platform: MatrixPlatform.name, conversation: "matrix:" + room, address: encoded)
    }

    var encoded: String {
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public static func decode(_ text: String) -> MatrixAddress? {
        try? JSONDecoder().decode(MatrixAddress.self, from: Data(text.utf8))
    }
}
