import Foundation
import Hummingbird
import HummingbirdTesting
import MattermostAdapter
import RelayCore
import RelayTestSupport

/// Mattermost in the parity suite: `line` typed as a slash command (the form, its token in the
/// header and the field; `--private` appended when private) in a channel of its own; what the
/// channel then shows: the bot's posts (a progress post patched into the result), the answers
/// at the command's `response_url`, ephemeral ones seen by the asker only.
struct MattermostUnderTest: PlatformUnderTest {
    let relay: MattermostRelay
    var kind: PlatformKind { .mattermost }
    var tribunal: FakeRheaTribunal { relay.tribunal }

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let (command, text) = SlackUnderTest.split(line)
        let letters = String(delivery.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20))
        let channel = "ch" + letters + String(repeating: "0", count: max(0, 24 - letters.count))
        relay.mattermost.addChannel(channel)
        let responseURL = relay.mattermost.makeResponseURL(channel: channel)
        var status = 0
        var acks: [JSONValue] = []
        for _ in 0..<times {
            let response = try await relay.slashCommand(
                command, text: `private` ? text + " --private" : text, channel: channel, responseURL: responseURL, triggerID: "trigger-\(delivery)")
            status = Int(response.status.code)
            let ack = JSONValue.parse(response.body.readableBytesView)
            // An answer in the acknowledgement itself, rather than "⏳ Working on it…".
            if let ack, ack["text"]?.stringValue?.hasPrefix("⏳") == false { acks.append(ack) }
        }
        try await relay.settled()
        var seen = SeenReply(acknowledgement: status)
        for ack in acks {
            seen.finals.append(MattermostMarkdown.unescape(ack["text"]?.stringValue ?? ""))
            if ack["response_type"]?.stringValue == "in_channel" { seen.publicMessages += 1 }
        }
        for post in relay.botPosts(channel: channel) {
            seen.progress += post.history.filter { $0.contains("Running…") }
            if post.message.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(post.message)
                continue
            }
            guard !post.message.contains("Running…") else { continue }
            seen.finals.append(post.message)
            if post.ephemeralFor == nil { seen.publicMessages += 1 }
        }
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }
}
