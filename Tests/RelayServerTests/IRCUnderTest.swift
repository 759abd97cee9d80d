import Foundation
import RelayTestSupport

/// IRC in the parity suite: `line` said in `#rhea` as `!cmd …` (`--private` appended when
/// private) by a person on a real ngIRCd (the `irc` library); what the channel, and the person's
/// private messages from the relay, then show.
///
/// A reply's lines are read as the messages they were sent as: the channel's lines one message,
/// the private lines in messages of `IRCDelivery`'s ten. IRC has no retries to send again: the
/// server relays each line once, and a line sent again is a new command; `times` sends it once.
/// The relay does not stream on IRC (no edits): it joins no streaming suite.
struct IRCUnderTest: PlatformUnderTest {
    let relay: IRCRelay
    var kind: PlatformKind { .irc }
    var tribunal: FakeRheaTribunal { relay.tribunal }

    static let person = "ada"
    static let privateLines = 10

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let text = "!" + line.dropFirst() + (`private` ? " --private" : "")
        let (bot, channel) = (IRCFakes.nick, IRCFakes.channel)
        let human = try await IRCHuman(
            on: relay.fakes.server, nick: Self.person, channels: [channel],
            plan: [.waitJoin(bot, channel: channel), .say(text, to: channel), .mark("said"), .waitSignal("settled", timeout: 170)], limit: .seconds(200))
        try await eventually("an answer to \(text)") { !human.messages(from: bot).isEmpty }
        try await relay.settled()
        // Sent and confirmed by the server: on their way to the person, there in a moment.
        try await Task.sleep(for: .milliseconds(300))
        try human.signal("settled")
        let records = try await human.finish()
        return Self.read(records.filter { $0.event == "message" && $0.from == bot })
    }

    static func read(_ lines: [IRCHuman.Record]) -> SeenReply {
        var seen = SeenReply(acknowledgement: 200)
        var channelLines: [String] = []
        var privateLines: [String] = []
        for line in lines {
            let text = line.text ?? ""
            if text.hasPrefix("⏳") {
                seen.progress.append(text)
            } else if line.target == IRCFakes.channel {
                channelLines.append(text)
            } else {
                privateLines.append(text)
            }
        }
        if !channelLines.isEmpty {
            seen.finals.append(channelLines.joined(separator: "\n"))
            seen.publicMessages = 1
        }
        seen.finals += stride(from: 0, to: privateLines.count, by: Self.privateLines).map {
            privateLines[$0..<min(privateLines.count, $0 + Self.privateLines)].joined(separator: "\n")
        }
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        // Never asked: IRC is in no streaming suite (`PlatformKind.streaming`).
        let seen = try await send(line, private: false, delivery: UUID().uuidString, times: 1)
        let versions = seen.finals.map { ShownVersion(raw: $0, shown: $0, at: Date()) }
        return WrittenAnswer(versions: versions, messages: seen.finals.filter { $0.contains(marker) }.count, refusals: 0)
    }
}
