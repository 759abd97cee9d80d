public import RelayCore
public import RelayPlatform

/// A message as `conversations.replies` returns it.
public struct SlackFetchedMessage: Sendable, Hashable {
    public var ts: String
    /// As Slack sends it: escaped, with its `<…>` markup (see `SlackIncomingText`).
    public var text: String
    /// Its thread's parent `ts`, when it is in a thread.
    public var threadTS: String?
    /// Who wrote it; absent for some bot and app messages.
    public var user: String?
    /// The first audio file shared with it, as a clip of origin `.repliedTo` (a thread's parent
    /// heard by a mention later in the thread).
    public var voice: VoiceClip?

    public init(ts: String, text: String, threadTS: String? = nil, user: String? = nil, voice: VoiceClip? = nil) {
        self.ts = ts
        self.text = text
        self.threadTS = threadTS
        self.user = user
        self.voice = voice
    }
}

/// One page of a thread from `conversations.replies`.
public struct SlackThreadPage: Sendable, Hashable {
    /// Oldest first, as Slack orders them.
    public var messages: [SlackFetchedMessage]
    /// The `cursor` for the next page; nil on the last one (Slack sends an empty one, or none).
    public var nextCursor: String?

    public init(messages: [SlackFetchedMessage], nextCursor: String? = nil) {
        self.messages = messages
        self.nextCursor = nextCursor
    }
}

extension SlackWebAPI {
    /// One page of the thread `ts` belongs to (its parent, then the replies), with
    /// `conversations.replies`. Read methods take a form, not JSON.
    ///
    /// - Parameters:
    ///   - ts: the thread's parent, or any message in it.
    ///   - cursor: the previous page's `nextCursor`; nil for the first page.
    ///   - limit: the most messages on this page (Slack may send fewer).
    public func threadReplies(
        channel: String, ts: String, cursor: String? = nil, limit: Int = 200
    ) async throws(SlackAPIError) -> SlackThreadPage {
        var body: [String: JSONValue] = ["channel": .string(channel), "ts": .string(ts), "limit": .int(max(1, limit))]
        if let cursor { body["cursor"] = .string(cursor) }
        let method = "conversations.replies"
        let answer = try await send(SlackWebRequest(.method(method), body: .object(body), encoding: .form))
        let page = try answer.decode(SlackRepliesAnswer.self, method: method)
        let messages = page.messages.map { message in
            SlackFetchedMessage(
                ts: message.ts, text: message.text ?? "", threadTS: message.threadTS, user: message.user,
                voice: SlackFile.audioClip(in: message.files ?? [], origin: .repliedTo))
        }
        let next = page.responseMetadata?.nextCursor
        return SlackThreadPage(messages: messages, nextCursor: next.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// One message's text and thread, for the tribunal reaction (which names only the
    /// message's `ts`). `conversations.replies` finds a message whether or not it is in a
    /// thread.
    public func message(channel: String, ts: String) async throws(SlackAPIError) -> SlackFetchedMessage {
        let page = try await threadReplies(channel: channel, ts: ts)
        guard let message = page.messages.first(where: { $0.ts == ts }) else {
            throw .malformed(endpoint: "conversations.replies", reason: "the message is not in the answer")
        }
        return message
    }
}

/// `conversations.replies`' answer: the page's messages and the cursor of the next.
struct SlackRepliesAnswer: Decodable {
    struct Message: Decodable {
        var ts: String
        var text: String?
        var threadTS: String?
        var user: String?
        var files: [SlackFile]?

        enum CodingKeys: String, CodingKey {
            case ts, text, user, files
            case threadTS = "thread_ts"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            ts = try container.decode(String.self, forKey: .ts)
            text = try container.decodeIfPresent(String.self, forKey: .text)
            threadTS = try container.decodeIfPresent(String.self, forKey: .threadTS)
            user = try container.decodeIfPresent(String.self, forKey: .user)
            // As in events: files of another shape (a canvas, a huddle) leave the message readable.
            files = (try? container.decodeIfPresent([SlackFile].self, forKey: .files)) ?? nil
        }
    }

    struct Metadata: Decodable {
        var nextCursor: String?

        enum CodingKeys: String, CodingKey {
            case nextCursor = "next_cursor"
        }
    }

    var messages: [Message] = []
    var responseMetadata: Metadata?

    enum CodingKeys: String, CodingKey {
        case messages
        case responseMetadata = "response_metadata"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messages = try container.decodeIfPresent([Message].self, forKey: .messages) ?? []
        responseMetadata = try container.decodeIfPresent(Metadata.self, forKey: .responseMetadata)
    }
}
