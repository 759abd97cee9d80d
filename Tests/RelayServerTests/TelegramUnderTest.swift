import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayTestSupport
import Synchronization

/// Telegram in the parity suite: `line` typed in a group (`--private` appended when private),
/// delivered to the webhook; what the group and the asker's private chat then show.
struct TelegramUnderTest: PlatformUnderTest {
    let relay: TelegramRelay
    var kind: PlatformKind { .telegram }
    var tribunal: FakeRheaTribunal { relay.tribunal }
    private static let counter = Atomic<Int>(0)
    /// Update ids by delivery name: the same delivery twice is one update delivered twice.
    private static let updates = Mutex<[String: (update: Int, message: Int)]>([:])

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let ids = Self.updates.withLock { known in
            if let ids = known[delivery] { return ids }
            let next = Self.counter.wrappingAdd(1, ordering: .relaxed).oldValue + 1
            known[delivery] = (update: 10_000 + next, message: 3_000 + next)
            return known[delivery]!
        }
        let group = TelegramFakes.group
        let asker = TelegramFakes.alice
        let privateBefore = Set(relay.telegram.messages(chat: asker).map(\.messageID))
        let groupBefore = Set(relay.telegram.messages(chat: group).map(\.messageID))
        let text = `private` ? line + " --private" : line
        let update = relay.message(text, update: ids.update, id: ids.message, chat: group)
        var status = 0
        for _ in 0..<times {
            status = Int(try await relay.deliver(update).status.code)
        }
        // A bound, not a wait: an answer of 8 parts in a group takes 20 s or more at Telegram's
        // 20 messages a minute per group.
        try await relay.settled(safety: .seconds(90))
        var seen = SeenReply(acknowledgement: status)
        // The reply to the command, and the parts after its first (which reply to nothing).
        let inGroup = relay.telegram.messages(chat: group).filter {
            $0.replyToMessageID == ids.message || ($0.replyToMessageID == nil && !groupBefore.contains($0.messageID))
        }
        let inPrivate = relay.telegram.messages(chat: asker).filter { !privateBefore.contains($0.messageID) }
        for message in inGroup {
            // The placeholder a run posts as it starts ("⏳ Working on /run twostep…") is progress too.
            seen.progress += message.history.map(\.text).filter { $0.contains("Running…") || $0.contains("Working on /") }
            if message.text.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(message.text)
            } else {
                seen.finals.append(message.text)
                seen.publicMessages += 1
            }
        }
        seen.finals += inPrivate.map(\.text)
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }
}
