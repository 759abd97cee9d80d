import Foundation
public import Logging
public import RelayCore
import RelayHTTP
public import RelayPipeline
import RelayPlatform
import Synchronization

/// What the relay may ask Slack about an event's surroundings (`ConversationReader`): whether
/// its user is a workspace admin (`users.info`) and what its thread says
/// (`conversations.replies`).
///
/// Asked from a run, never while Slack waits for an acknowledgement; the pipeline keeps admin
/// answers briefly (`TeamRoles`), and a failed call answers nil, which it does not keep. Thread
/// reads are bounded by `Limits.threadPageSize` and `Limits.maxThreadPages`. Failures are
/// logged with Slack's reason only, never a token.
public final class SlackConversationReader: ConversationReader {
    /// How much the reader keeps and reads; out-of-range values are brought into range.
    public struct Limits: Sendable, Hashable {
        /// Messages asked for per `conversations.replies` page (Slack suggests at most 200).
        public let threadPageSize: Int
        /// Pages read for one thread at most, whatever `limit` asks.
        public let maxThreadPages: Int

        public init(threadPageSize: Int = 200, maxThreadPages: Int = 10) {
            self.threadPageSize = min(200, max(1, threadPageSize))
            self.maxThreadPages = max(1, maxThreadPages)
        }
    }

    private let api: any SlackWebAPI
    private let logger: Logger
    /// The limits it was made with.
    public let limits: Limits

    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - api: the Web API client, with a bot token that has `users:read` and the
    ///     `*:history` scopes of the conversations it reads.
    /// Slack's private-file host without a trailing slash (`slack.filesURL`).
    private let filesURL: String

    public init(
        api: any SlackWebAPI, logger: Logger, limits: Limits = Limits(), filesURL: String = SlackConfiguration.defaultFilesURL
    ) {
        self.api = api
        var logger = logger
        logger[metadataKey: "platform"] = "slack"
        self.logger = logger
        self.limits = limits
        var base = filesURL
        while base.hasSuffix("/") { base.removeLast() }
        self.filesURL = base
    }

    /// The whole download of an audio file.
    static let downloadTimeout: Duration = .seconds(60)

    /// An audio file's bytes, from the configured file host only (the bot token goes with the
    /// request): a URL on any other host, or outside `/files-pri/`, is refused without one.
    public func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        if let size = clip.byteSize, size > maxBytes { throw .tooLarge(limit: maxBytes, size: size) }
        guard Self.isPrivateFile(clip.file, host: filesURL) else {
            throw .unavailable(reason: "file: the URL is not on the configured file host (slack.filesURL)")
        }
        let download: HTTPTransport.Download
        do throws(SlackAPIError) {
            download = try await api.downloadFile(url: clip.file, maxBytes: maxBytes, timeout: Self.downloadTimeout)
        } catch {
            throw .unavailable(reason: error.reason)
        }
        return try download.voiceBytes(limit: maxBytes) { "file: Slack answered HTTP \($0.status)" }
    }

    /// The audio file of the message a thread hangs from, for a mention later in the thread
    /// (`@Rhea translate fr` under a voice clip): the first message `conversations.replies`
    /// gives, when it is the parent itself. A mention that starts no thread has its own ts as
    /// `thread`, so its "parent" is the mention, whose files came with the event. A failed read
    /// is logged and answers nil: the command then runs as if the parent had no audio.
    public func threadVoice(_ event: Event) async -> VoiceClip? {
        guard let thread = event.thread else { return nil }
        do throws(SlackAPIError) {
            let page = try await api.threadReplies(channel: event.channel, ts: thread, limit: 1)
            guard let parent = page.messages.first, parent.ts == thread else { return nil }
            return parent.voice
        } catch {
            logger.warning(
                "slack: could not read a thread's parent for its audio",
                metadata: ["slack.channel": "\(event.channel)", "slack.thread": "\(thread)", "reason": "\(error.reason)"])
            return nil
        }
    }

    /// `<host>/files-pri/<segments>` with plain segments (no `..`, no other host, no user info).
    public static func isPrivateFile(_ url: String, host: String) -> Bool {
        guard let parsed = URLComponents(string: url), let base = URLComponents(string: host), parsed.user == nil, parsed.password == nil,
            parsed.scheme?.lowercased() == base.scheme?.lowercased(), parsed.host?.lowercased() == base.host?.lowercased(), parsed.port == base.port
        else { return false }
        let prefix = base.path + "/files-pri/"
        guard parsed.path.hasPrefix(prefix) else { return false }
        return parsed.path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0 != "." && $0 != ".."
        }
    }

    public var platformAdmins: String { "Slack workspace admins and owners" }

    public func isAdmin(_ event: Event) async -> Bool? {
        do throws(SlackAPIError) {
            return try await api.userInfo(user: event.user).administersWorkspace
        } catch {
            logger.warning(
                "slack: could not tell whether a user is a workspace admin",
                metadata: ["slack.user": "\(event.user)", "reason": "\(error.reason)"])
            return nil
        }
    }

    /// A mention the message carried (`<@U123|ann>`), checked with `users.info`: a bot or a
    /// deactivated account cannot take the role. `@ann` typed as plain text says nothing of who
    /// it is: Slack sends it so from a slash command that does not escape mentions (`/rhea`).
    public func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup {
        let found = MentionedUserLookup.among(event.mentions, mention)
        guard case .person(let id, let name) = found else {
            guard case .nobody = found else { return found }
            return .nobody(
                "Slack sent `\(mention)` as plain text, without who it is: use `/admin grant @name` (the /admin command), or mention the bot and the person in a message (`@Rhea admin grant @name`), picking the person from the list after `@`."
            )
        }
        do throws(SlackAPIError) {
            let info = try await api.userInfo(user: id)
            if info.isBot { return .bot(name: name) }
            if info.isDeleted { return .nobody("\(name)'s account is deactivated.") }
            return .person(id: id, name: name)
        } catch {
            if case .refused(_, let refusal) = error, refusal.code == "user_not_found" { return .nobody("Slack knows no user \(name).") }
            return .unavailable("Slack did not answer `users.info` (\(error.reason))")
        }
    }

    public func threadMessages(_ event: Event, limit: Int) async -> [String] {
        guard let thread = event.thread, limit > 0 else { return [] }
        var texts: [String] = []
        // Whether Slack repeats the parent at the head of later pages is not documented: each
        // message is read once, whatever page it comes on.
        var seen = Set<String>()
        var cursor: String?
        do throws(SlackAPIError) {
            for _ in 0..<limits.maxThreadPages {
                let page = try await api.threadReplies(
                    channel: event.channel, ts: thread, cursor: cursor, limit: min(limits.threadPageSize, limit - texts.count))
                for message in page.messages where seen.insert(message.ts).inserted {
                    let text = SlackIncomingText.normalize(message.text).trimmingCharacters(in: .whitespacesAndNewlines)
                    // A file or an attachment without words says nothing a model could read.
                    guard !text.isEmpty else { continue }
                    texts.append(text)
                    if texts.count == limit { return texts }
                }
                guard let next = page.nextCursor else { break }
                cursor = next
            }
        } catch {
            // A thread read in part could be taken for the whole: none is better.
            logger.warning(
                "slack: could not read a thread",
                metadata: ["slack.channel": "\(event.channel)", "slack.thread": "\(thread)", "reason": "\(error.reason)"])
            return []
        }
        return texts
    }
}
