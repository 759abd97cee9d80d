import Foundation

/// A message the bot posted, as the outbox keeps it (`OutboxEntry.platformRef`): the room and
/// the event, for the edit (`m.replace`) that later takes its place. Stored as JSON, encoded
/// here and nowhere else; the store's migrations rewrote the `<room> <event>` form that
/// earlier versions kept (SQLite version 8, PostgreSQL version 6).
struct MatrixMessageRef: Codable, Hashable, Sendable {
    var room: String
    var event: String

    /// The stored form. Keys sorted and slashes left alone, so one message is always the same
    /// text (the deliverer compares a stored reference with the one a placeholder carries).
    var stored: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    init(room: String, event: String) {
        self.room = room
        self.event = event
    }

    /// Reads a stored reference; nil when it is not one (the entry's edit then fails for good).
    init?(stored: String) {
        guard let ref = try? JSONDecoder().decode(Self.self, from: Data(stored.utf8)) else { return nil }
        self = ref
    }
}
