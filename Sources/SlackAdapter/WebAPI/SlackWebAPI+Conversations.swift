import RelayCore

/// A message as `conversations.replies` returns it.
public struct SlackFetchedMessage: Sendable, Hashable {
    public var ts: String
    public var text: String
    /// Its thread's parent `ts`, when it is in a thread.
    public var threadTS: String?
}

extension SlackWebAPI {
    /// One message's text and thread, for the tribunal reaction (which names only the
    /// message's `ts`). `conversations.replies` finds a message whether or not it is in a
    /// thread; read methods take a form, not JSON.
    public func message(channel: String, ts: String) async throws(SlackAPIError) -> SlackFetchedMessage {
        let method = "conversations.replies"
        let answer = try await send(
            SlackWebRequest(.method(method), body: ["channel": .string(channel), "ts": .string(ts), "limit": 200], encoding: .form))
        let messages = (answer["messages"]?.arrayValue ?? []).compactMap { message -> SlackFetchedMessage? in
            guard let messageTS = message["ts"]?.stringValue else { return nil }
            return SlackFetchedMessage(ts: messageTS, text: message["text"]?.stringValue ?? "", threadTS: message["thread_ts"]?.stringValue)
        }
        guard let message = messages.first(where: { $0.ts == ts }) else {
            throw .malformed(method: method, reason: "the message is not in the answer")
        }
        return message
    }
}
