import Logging
public import RelayCore
public import RelayPipeline
import RelayPlatform

/// Answers the relay's questions about a Telegram chat, when a command needs them: whether the
/// asker administers the group (`getChatMember`), and the messages a `/summarize` sent as a reply
/// reads — from the replied-to message on, as far as the bot has seen them (`TelegramChatLog`).
public struct TelegramConversationReader: ConversationReader {
    let api: any TelegramBotAPI
    let log: TelegramChatLog
    let logger: Logger

    public func isAdmin(_ event: Event) async -> Bool {
        // A private chat is its person's own team.
        if event.team.hasPrefix("dm:") { return true }
        guard let chat = Int64(event.channel), let user = Int64(event.user) else { return false }
        do throws(TelegramAPIError) {
            let member = try await api.call("getChatMember", ["chat_id": .int(Int(chat)), "user_id": .int(Int(user))])
            let status = member["status"]?.stringValue
            return status == "creator" || status == "administrator"
        } catch {
            logger.notice("telegram: could not tell whether a user administers a group", metadata: ["reason": "\(error.reason)"])
            return false
        }
    }

    public func threadMessages(_ event: Event, limit: Int) async -> [String] {
        guard let chat = Int64(event.channel), let first = event.thread.flatMap({ Int64($0) }) else { return [] }
        return log.messages(chat: chat, from: first, limit: limit).map { entry in
            entry.author.map { "\($0): \(entry.text)" } ?? entry.text
        }
    }
}
