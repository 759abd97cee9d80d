import Logging
public import RelayCore
public import RelayPipeline
import RelayPlatform

/// Answers the relay's questions about a Matrix room, when a command needs them: whether the
/// asker administers the room (their power level allows changing the room's power levels), and
/// the messages of a thread (`/relations`, its root first).
public struct MatrixConversationReader: ConversationReader {
    let api: any MatrixAPI
    let logger: Logger

    public func isAdmin(_ event: Event) async -> Bool {
        do throws(MatrixAPIError) {
            let levels = try await api.powerLevels(room: event.channel)
            let level = levels["users"]?[event.user]?.intValue ?? levels["users_default"]?.intValue ?? 0
            let needed = levels["events"]?["m.room.power_levels"]?.intValue ?? levels["state_default"]?.intValue ?? 50
            return level >= needed
        } catch {
            logger.notice("matrix: could not tell whether a user administers a room", metadata: ["reason": "\(error.reason)"])
            return false
        }
    }

    public func threadMessages(_ event: Event, limit: Int) async -> [String] {
        guard let root = event.thread else { return [] }
        do throws(MatrixAPIError) {
            let first = try await api.event(room: event.channel, id: root)
            let rest = try await api.threadEvents(room: event.channel, root: root, limit: limit)
            return ([first] + rest).prefix(limit).compactMap { item in
                guard item["type"]?.stringValue == "m.room.message", let body = item["content"]?["body"]?.stringValue, !body.isEmpty else { return nil }
                let text = item["content"]?["m.relates_to"]?["m.in_reply_to"] == nil ? body : MatrixText.withoutReplyFallback(body)
                return item["sender"]?.stringValue.map { "\(MatrixID.localpart(of: $0)): \(text)" } ?? text
            }
        } catch {
            logger.notice("matrix: could not read a thread", metadata: ["reason": "\(error.reason)"])
            return []
        }
    }
}
