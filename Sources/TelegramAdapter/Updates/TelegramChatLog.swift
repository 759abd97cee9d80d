import Synchronization

/// The recent messages of each chat that the bot has seen or sent, in memory and bounded.
///
/// The Bot API cannot fetch a message by id or read a chat's history, so what a reaction points
/// at, and what `/summarize` sent as a reply reads "from that message on", is only what passed
/// through the relay: with privacy mode on (BotFather's default), commands, mentions and replies
/// to the bot; with it off or as an admin, every message. Lost at a restart, by design: it is a
/// cache of chat text, which the relay keeps nowhere else.
public final class TelegramChatLog: Sendable {
    public struct Entry: Sendable, Hashable {
        public var id: Int64
        public var text: String
        /// "Ada: " in summaries; nil for the relay's own messages.
        public var author: String?
        public var fromRelay: Bool
    }

    /// Messages kept per chat, newest last.
    let perChat: Int
    /// Chats remembered; the one first seen is forgotten first.
    let chats: Int

    private struct State {
        var log: [Int64: [Entry]] = [:]
        var order: [Int64] = []
    }

    private let state = Mutex(State())

    public init(perChat: Int = 200, chats: Int = 2000) {
        self.perChat = perChat
        self.chats = chats
    }

    public func record(chat: Int64, _ entry: Entry) {
        guard !entry.text.isEmpty else { return }
        state.withLock { state in
            var entries = state.log[chat] ?? []
            if let index = entries.firstIndex(where: { $0.id == entry.id }) {
                entries[index] = entry
            } else {
                // Ids grow within a chat; keep the list sorted for "from that message on".
                let position = entries.lastIndex(where: { $0.id < entry.id }).map { $0 + 1 } ?? 0
                entries.insert(entry, at: position)
                if entries.count > perChat { entries.removeFirst(entries.count - perChat) }
            }
            if state.log[chat] == nil {
                state.order.append(chat)
                if state.order.count > chats {
                    let forgotten = state.order.removeFirst()
                    state.log[forgotten] = nil
                }
            }
            state.log[chat] = entries
        }
    }

    public func message(chat: Int64, id: Int64) -> Entry? {
        state.withLock { $0.log[chat]?.first { $0.id == id } }
    }

    /// The chat's messages from `id` on (itself included), oldest first, at most `limit` (the
    /// oldest of them).
    public func messages(chat: Int64, from id: Int64, limit: Int) -> [Entry] {
        state.withLock { state in
            Array((state.log[chat] ?? []).filter { $0.id >= id }.prefix(limit))
        }
    }
}
