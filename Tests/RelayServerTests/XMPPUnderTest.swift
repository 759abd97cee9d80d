import Foundation
import RelayTestSupport
import XMPPAdapter

/// XMPP in the parity suite: `line` said in the room as `!cmd …` (`--private` appended when
/// private) by a person on a real Prosody (slixmpp, a client that reads corrections); what the
/// room, and the room's private messages from the relay to the person, then show.
///
/// A message is read as a client that reads Last Message Correction shows it: each message as
/// its last correction says (the placeholder and the progress it showed are its earlier
/// versions). A delivery sent again is the same stanza (one id) relayed twice.
struct XMPPUnderTest: PlatformUnderTest {
    let relay: XMPPRelay
    var kind: PlatformKind { .xmpp }
    var tribunal: FakeRheaTribunal { relay.tribunal }

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let text = "!" + line.dropFirst() + (`private` ? " --private" : "")
        let (bot, room) = (XMPPFakes.nick, XMPPFakes.room)
        let human = try await relay.fakes.human(
            plan: [
                .waitJoin(bot, room: room), .sayInRoom(text, room: room, id: "said-\(delivery)", times: times), .mark("said"),
                .waitSignal("settled", timeout: 170),
            ], limit: .seconds(200))
        try await eventually("an answer to \(text)") { !human.messages(from: bot).filter { !($0.text ?? "").hasPrefix("⏳") }.isEmpty }
        try await relay.settled()
        // Sent and confirmed by the server: on their way to the person, there in a moment.
        try await Task.sleep(for: .milliseconds(300))
        try human.signal("settled")
        return Self.read(try await human.finish().messages(from: bot))
    }

    static func read(_ messages: [XMPPHuman.Record]) -> SeenReply {
        var seen = SeenReply(acknowledgement: 200)
        for chain in XMPPHuman.chains(messages) {
            let texts = chain.map { $0.text ?? "" }
            let last = texts.last ?? ""
            seen.progress += texts.filter { $0.hasPrefix("⏳") }
            if last.hasPrefix("⏳") { continue }
            if chain.first?.type == "groupchat" {
                if last.hasPrefix(SeenReply.privateNotice) {
                    seen.notices.append(last)
                } else {
                    seen.finals.append(Self.withoutAddress(last))
                    seen.publicMessages += 1
                }
            } else {
                seen.finals.append(last)
            }
        }
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    /// A room's answer starts with the asker's nick (`ada: `): the answer is what follows.
    static func withoutAddress(_ text: String) -> String {
        text.hasPrefix("ada: ") ? String(text.dropFirst(5)) : text
    }

    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let text = "!" + line.dropFirst()
        let (bot, room) = (XMPPFakes.nick, XMPPFakes.room)
        let human = try await relay.fakes.human(
            plan: [.waitJoin(bot, room: room), .sayInRoom(text, room: room), .mark("said"), .waitSignal("settled", timeout: 170)], limit: .seconds(200))
        try await eventually("an answer to \(text)") { human.messages(from: bot).contains { ($0.text ?? "").contains(marker) } }
        try await relay.settled()
        try await Task.sleep(for: .milliseconds(300))
        try human.signal("settled")
        let chains = XMPPHuman.chains(try await human.finish().messages(from: bot).filter { $0.type == "groupchat" })
        let holding = chains.filter { $0.contains { ($0.text ?? "").contains(marker) } }
        let versions = (holding.first ?? []).map { record in
            ShownVersion(raw: record.text ?? "", shown: Self.withoutAddress(record.text ?? ""), at: Date(timeIntervalSince1970: record.time))
        }
        return WrittenAnswer(versions: versions, messages: holding.count, refusals: 0)
    }
}
