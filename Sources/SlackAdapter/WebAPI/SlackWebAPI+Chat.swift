public import RelayCore
public import RelayPlatform

extension SlackWebAPI {
    /// Posts a message with `chat.postMessage` and returns its `ts`, the id later edits need.
    ///
    /// - Parameters:
    ///   - text: mrkdwn, already escaped; with `blocks` it is the notification fallback.
    ///   - threadTS: the parent's `ts` to answer in its thread.
    @discardableResult
    public func postMessage(
        channel: String, text: String, blocks: [JSONValue]? = nil, threadTS: String? = nil
    ) async throws(SlackAPIError) -> String {
        // No previews: a model's answer must not make Slack fetch whatever URL it names.
        var body: [String: JSONValue] = ["channel": .string(channel), "text": .string(text), "unfurl_links": false, "unfurl_media": false]
        if let blocks { body["blocks"] = .array(blocks) }
        if let threadTS { body["thread_ts"] = .string(threadTS) }
        let answer = try await send(.method("chat.postMessage", body: .object(body)))
        return try Self.string("ts", in: answer, method: "chat.postMessage")
    }

    /// Replaces the text (and blocks) of the message `ts` with `chat.update`; returns its `ts`.
    @discardableResult
    public func update(
        channel: String, ts: String, text: String, blocks: [JSONValue]? = nil
    ) async throws(SlackAPIError) -> String {
        var body: [String: JSONValue] = ["channel": .string(channel), "ts": .string(ts), "text": .string(text)]
        if let blocks { body["blocks"] = .array(blocks) }
        let answer = try await send(.method("chat.update", body: .object(body)))
        return answer["ts"]?.stringValue ?? ts
    }

    /// Shows a message only `user` can see with `chat.postEphemeral`; returns its
    /// `message_ts` (ephemeral messages cannot be edited through the Web API).
    @discardableResult
    public func postEphemeral(
        channel: String, user: String, text: String, blocks: [JSONValue]? = nil, threadTS: String? = nil
    ) async throws(SlackAPIError) -> String {
        var body: [String: JSONValue] = ["channel": .string(channel), "user": .string(user), "text": .string(text)]
        if let blocks { body["blocks"] = .array(blocks) }
        if let threadTS { body["thread_ts"] = .string(threadTS) }
        let answer = try await send(.method("chat.postEphemeral", body: .object(body)))
        return try Self.string("message_ts", in: answer, method: "chat.postEphemeral")
    }

    /// Posts `body` (`text`, `blocks`, `response_type`, `replace_original`…) to a slash
    /// command's or an interaction's `response_url`: no token, at most 5 times in 30 minutes.
    public func respond(to responseURL: String, body: JSONValue) async throws(SlackAPIError) {
        _ = try await send(SlackWebRequest(.responseURL(responseURL), body: body))
    }

    /// The member `key` of an answer, which Slack always sends on success.
    static func string(_ key: String, in answer: JSONValue, method: String) throws(SlackAPIError) -> String {
        guard let value = answer[key]?.stringValue, !value.isEmpty else {
            throw .malformed(endpoint: method, reason: "no \"\(key)\" in the answer")
        }
        return value
    }
}
