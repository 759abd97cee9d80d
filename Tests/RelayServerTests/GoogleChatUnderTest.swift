import Foundation
import GoogleChatAdapter
import HTTPTypes
import HummingbirdTesting
import RelayCore
import RelayTestSupport

/// Google Chat in the parity suite: `line` typed after a mention of the app in a thread of its
/// own (`--private` appended when private); what Google Chat then shows: the app's messages in
/// that thread — the event's own answer, or messages made and patched through the Chat API —
/// those with a `privateMessageViewer` seen by Alice alone.
struct GoogleChatUnderTest: PlatformUnderTest {
    let relay: GoogleChatRelay
    var kind: PlatformKind { .googleChat }
    var tribunal: FakeRheaTribunal { relay.tribunal }

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let thread = FakeGoogleChat.space + "/threads/" + String(delivery.filter { $0.isLetter || $0.isNumber }.prefix(24))
        // `@Rhea /transalte …`: the catch-all `/rhea` is Slack's and Mattermost's.
        let typed = line.hasPrefix("/rhea ") ? "/" + line.dropFirst("/rhea ".count) : line
        let text = `private` ? typed + " --private" : typed
        let before = Set(relay.google.messages().map(\.name))
        var status = 0
        for _ in 0..<times {
            status = Int(try await relay.post(relay.google.message(text, thread: thread, id: "m-\(delivery)")).status.code)
        }
        try await relay.settled()
        var seen = SeenReply(acknowledgement: status)
        for message in relay.google.messages() where !before.contains(message.name) && message.thread == thread {
            let shown = message.text
            seen.progress += message.shownHistory.filter { $0.hasPrefix("⏳") }
            if shown.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(shown)
                continue
            }
            guard !shown.hasPrefix("⏳") else { continue }
            seen.finals.append(shown)
            if message.viewer == nil { seen.publicMessages += 1 }
        }
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    /// A mention in a thread of its own: the first text made through the API, then each patch.
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let thread = FakeGoogleChat.space + "/threads/watch" + String(UUID().uuidString.prefix(8))
        try await relay.post(relay.google.message(line, thread: thread, id: "watch-\(UUID().uuidString)"))
        try await relay.settled()
        let messages = relay.google.messages().filter { $0.thread == thread }
        var versions: [ShownVersion] = []
        for message in messages {
            for (body, at) in zip(message.history, message.times) {
                versions.append(ShownVersion(raw: FakeGoogleChatMessage.raw(body), shown: FakeGoogleChatMessage.seen(body), at: at))
            }
        }
        versions.sort { $0.at < $1.at }
        let holding = messages.filter { $0.text.contains(marker) }.count
        // The fake enforces no quota: the pace is checked on the versions' times.
        return WrittenAnswer(versions: versions, messages: holding, refusals: 0)
    }
}
