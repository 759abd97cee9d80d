import Foundation
import HTTPTypes
import HummingbirdTesting
import RelayCore
import RelayTestSupport
import TeamsAdapter

/// Teams in the parity suite: `line` typed after a mention of the bot in a channel thread of its
/// own (`--private` appended when private); what Teams then shows: the bot's messages in the
/// thread (a placeholder updated into the answer) and in Alice's personal chat with the bot,
/// where a private answer goes.
struct TeamsUnderTest: PlatformUnderTest {
    let relay: TeamsRelay
    var kind: PlatformKind { .teams }
    var tribunal: FakeRheaTribunal { relay.tribunal }

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let thread = FakeBotFramework.thread(delivery)
        // `@Rhea /transalte …`: the catch-all `/rhea` is Slack's and Mattermost's.
        let typed = line.hasPrefix("/rhea ") ? "/" + line.dropFirst("/rhea ".count) : line
        let text = `private` ? typed + " --private" : typed
        let before = Set(relay.framework.messages().map(\.id))
        var status = 0
        for _ in 0..<times {
            status = Int(try await relay.post(relay.message(text, conversation: thread, id: "activity-\(delivery)")).status.code)
        }
        try await relay.settled()
        var seen = SeenReply(acknowledgement: status)
        let personal = relay.framework.personalChat(with: TeamsRelay.alice)
        for message in relay.framework.messages() where !before.contains(message.id) && (message.conversation == thread || message.conversation == personal) {
            let shown = message.text
            seen.progress += message.shownHistory.filter { $0.hasPrefix("⏳") }
            if shown.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(shown)
                continue
            }
            guard !shown.hasPrefix("⏳") else { continue }
            seen.finals.append(shown)
            if message.conversation == thread { seen.publicMessages += 1 }
        }
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    /// A mention in a thread of its own: the placeholder, then each update as the answer grows.
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let thread = FakeBotFramework.thread("watch\(UUID().uuidString)")
        _ = try await relay.post(relay.message(line, conversation: thread, id: "watch-\(UUID().uuidString)"))
        try await relay.settled()
        let messages = relay.framework.messages(in: thread)
        var versions: [ShownVersion] = []
        for message in messages {
            for (activity, at) in zip(message.history, message.times) {
                versions.append(ShownVersion(raw: FakeTeamsMessage.raw(activity), shown: FakeTeamsMessage.seen(activity), at: at))
            }
        }
        versions.sort { $0.at < $1.at }
        let holding = messages.filter { $0.text.contains(marker) }.count
        return WrittenAnswer(versions: versions, messages: holding, refusals: 0)
    }
}
