import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

@testable import IRCAdapter

/// How a reply is cut into IRC messages (issue 43, points 2–4): the asker's nick first in a
/// channel, a bounded number of lines there and the rest privately, every line within 512 bytes
/// as relayed, and no member highlighted.
@Suite("IRC: replies as lines")
struct IRCDeliveryTests {
    let link = IRCLink(nick: "Rhea", clock: ManualClock())

    func delivery(channelLines: Int = 4) -> IRCDelivery {
        IRCDelivery(link: link, pacer: IRCPacer(), configuredNick: "Rhea", channelLines: channelLines, logger: Logger(label: "test"))
    }

    @Test func aShortResultIsOneLineStartingWithTheAskersNick() {
        let reply = Reply(kind: .result, title: "Translation · French", body: "Bonjour", notes: ["fake-mini · 0.4 s"], models: ["fake-mini"])
        let messages = delivery().render(reply, entryID: "e", address: IRCAddress(channel: "#rhea", nick: "ada"))
        #expect(messages == [IRCOutgoing(lines: ["ada: Bonjour"], privately: false)])
        let privately = delivery().render(reply, entryID: "e", address: IRCAddress(channel: nil, nick: "ada"))
        #expect(privately == [IRCOutgoing(lines: ["Bonjour"], privately: true)])
    }

    @Test func aLongResultShowsFourLinesInTheChannelAndTheRestPrivatelyWithNothingLost() {
        link.update(IRCLink.Presence(nick: "Rhea", members: ["#rhea": ["ada", "bob", "Carol"]]))
        let words = (1...300).map { "mot\($0)é😀" }
        let reply = Reply(kind: .result, body: words.joined(separator: " ") + " bob carol")
        let messages = delivery().render(reply, entryID: "e", address: IRCAddress(channel: "#rhea", nick: "ada"))
        let channel = messages[0]
        #expect(!channel.privately && channel.lines.count == 4)
        #expect(channel.lines[0].hasPrefix("ada: "))
        #expect(channel.lines[3].hasPrefix("… ") && channel.lines[3].hasSuffix("in a private message to ada."), "\(channel.lines[3])")
        #expect(messages.dropFirst().allSatisfy { $0.privately })
        let lines = Array(channel.lines.dropLast()) + messages.dropFirst().flatMap(\.lines)
        for line in lines {
            let relayed = ":Rhea__!~rhea_____@" + String(repeating: "h", count: 63) + " PRIVMSG #rhea :" + line + "\r\n"
            #expect(relayed.utf8.count <= 512, "\(relayed.utf8.count)")
        }
        let shown = lines.joined(separator: " ").dropFirst("ada: ".count).split(separator: " ").map(String.init)
        #expect(
            shown == words + ["b\u{200B}ob", "c\u{200B}arol"],
            "\(zip(shown, words + ["b\u{200B}ob", "c\u{200B}arol"]).first { $0 != $1 }.map { "\($0)" } ?? "")")
    }

    @Test func progressShowsOnlyTheStartOrTheFirstStep() {
        #expect(delivery().render(RunProgress.started("/run polish")).lines == ["⏳ Working on !run polish…"])
        #expect(delivery().render(RunProgress(completed: 1, total: 3, block: "grammar")).lines == ["⏳ Running… 1/3 (grammar)"])
        #expect(delivery().render(RunProgress(completed: 2, total: 3, block: "rewrite:formal")).lines.isEmpty)
        #expect(delivery().render(RunProgress.voting(1, of: 3)).lines.isEmpty)
    }
}

extension IRCDeliveryTests {
    @Test func aLongFactCheckKeepsItsAgreementInTheChannel() {
        let footer = AgreementFooter(ConsensusResult(answer: "", verdict: .true, agreement: 0.9, answered: 3, asked: 3, elapsed: .seconds(1)))
        let body = (1...12).map { "reason \($0)" }.joined(separator: "\n")
        let reply = Reply(kind: .result, title: "Tribunal", body: body, footer: footer, models: ["a", "b", "c"])
        let messages = delivery(channelLines: 6).render(reply, entryID: "e", address: IRCAddress(channel: "#rhea", nick: "ada"))
        #expect(messages[0].lines == ["ada: reason 1", "reason 2", "reason 3", "reason 4", "… 8 more lines in a private message to ada.", footer.summary])
        #expect(messages.dropFirst().flatMap(\.lines) == (5...12).map { "reason \($0)" })
    }
}

/// The flood pace (issue 43, point 3), on a made-up timeline: 4 seconds' worth at once, then a
/// line a second, long lines by their bytes at 256 a second.
@Suite("IRC: the flood pace")
struct IRCPacerTests {
    @Test func aBurstOfFourThenALineASecond() {
        let pacer = IRCPacer()
        let now = Date(timeIntervalSince1970: 1_000)
        let waits = (0..<7).map { _ in pacer.reserve(pacer.cost(ofLineBytes: 40), now: now) }
        #expect(waits == [.zero, .zero, .zero, .zero, .seconds(1), .seconds(2), .seconds(3)])
        #expect(pacer.wait(now: now) == .seconds(4))
        #expect(pacer.wait(now: now + .seconds(4)) == .zero)
        #expect(pacer.cost(ofLineBytes: 400) == .milliseconds(1_562))
    }

    @Test func aFasterPaceWhereTheServerAllowsIt() {
        let pacer = IRCPacer(linesPerSecond: 4)
        let now = Date(timeIntervalSince1970: 1_000)
        let waits = (0..<6).map { _ in pacer.reserve(pacer.cost(ofLineBytes: 40), now: now) }
        #expect(waits == [.zero, .zero, .zero, .zero, .milliseconds(250), .milliseconds(500)])
    }
}
