import Logging
public import RelayCore
public import RelayPipeline
import RelayPlatform

/// Answers the relay's questions about a Telegram chat, when a command needs them: whether the
/// asker administers the group (`getChatMember`), and the messages a `/summarize` sent as a reply
/// reads — from the replied-to message on, as far as the bot has seen them (`TelegramChatLog`) —
/// and the audio of a voice note (`getFile`, then the file under the configured API base).
public struct TelegramConversationReader: ConversationReader {
    let api: any TelegramBotAPI
    let log: TelegramChatLog
    let logger: Logger

    public var platformAdmins: String { "the Telegram group's creator and administrators (in a private chat, its person)" }

    /// A person the message names with their id (`TelegramInbound.mentions`), still in the group
    /// (`getChatMember`). A plain `@username` names nobody the bot can tell: replying to one of
    /// their messages does.
    public func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup {
        let found = MentionedUserLookup.among(event.mentions, mention)
        guard case .person(let id, let name) = found else {
            guard case .nobody = found else { return found }
            return .nobody(
                "Telegram does not tell a bot who `\(mention)` is: reply to one of their messages with `/admin grant \(mention)`, or pick a person without a username from the list after `@`."
            )
        }
        guard let chat = Int64(event.channel), let user = Int64(id) else { return found }
        do throws(TelegramAPIError) {
            let status = try await memberStatus(chat: chat, user: user)
            if status == "left" || status == "kicked" { return .nobody("\(name) is not in this group.") }
            return found
        } catch {
            return .unavailable("Telegram did not answer `getChatMember` (\(error.reason))")
        }
    }

    public func isAdmin(_ event: Event) async -> Bool? {
        // A private chat is its person's own team.
        if event.team.hasPrefix("dm:") { return true }
        guard let chat = Int64(event.channel), let user = Int64(event.user) else { return false }
        do throws(TelegramAPIError) {
            let status = try await memberStatus(chat: chat, user: user)
            return status == "creator" || status == "administrator"
        } catch {
            logger.notice("telegram: could not tell whether a user administers a group", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    /// `getChatMember`'s `status`: `creator`, `administrator`, `member`, `left`, `kicked`…
    private func memberStatus(chat: Int64, user: Int64) async throws(TelegramAPIError) -> String? {
        try await api.call("getChatMember", ["chat_id": .int(Int(chat)), "user_id": .int(Int(user))])
            .decode(TelegramChatMember.self, method: "getChatMember").status
    }

    public func threadMessages(_ event: Event, limit: Int) async -> [String] {
        guard let chat = Int64(event.channel), let first = event.thread.flatMap({ Int64($0) }) else { return [] }
        return log.messages(chat: chat, from: first, limit: limit).map { entry in
            entry.author.map { "\($0): \(entry.text)" } ?? entry.text
        }
    }

    /// Bots may download files of up to 20 MB (`getFile` refuses larger ones: "file is too big").
    static let botFileLimit = 20 * 1024 * 1024
    /// The whole download; a 20 MB file over a slow link.
    static let downloadTimeout: Duration = .seconds(60)

    public func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        if let size = clip.byteSize, size > maxBytes { throw .tooLarge(limit: maxBytes, size: size) }
        let file: TelegramFile
        do throws(TelegramAPIError) {
            file = try await api.call("getFile", ["file_id": .string(clip.file)]).decode(TelegramFile.self, method: "getFile")
        } catch {
            if case .refused(_, .error(400, let description)) = error, description.lowercased().contains("file is too big") {
                throw .tooLarge(limit: min(maxBytes, Self.botFileLimit), size: nil)
            }
            throw .unavailable(reason: error.reason)
        }
        if let size = UntrustedNumber.checked(file.fileSize, in: 0...Int.max, source: "telegram", field: "file_size"), size > maxBytes {
            throw .tooLarge(limit: maxBytes, size: size)
        }
        guard let path = file.filePath else { throw .unavailable(reason: "getFile: no file_path in the answer") }
        let download: TelegramFileDownload
        do throws(TelegramAPIError) {
            download = try await api.downloadFile(path: path, maxBytes: maxBytes, timeout: Self.downloadTimeout)
        } catch {
            throw .unavailable(reason: error.reason)
        }
        switch download {
        case .bytes(let bytes): return bytes
        case .tooLarge(let declared): throw .tooLarge(limit: maxBytes, size: declared)
        }
    }
}
