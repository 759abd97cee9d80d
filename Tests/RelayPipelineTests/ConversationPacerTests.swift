import Foundation
import RelayCore
import Testing

@testable import RelayPipeline

/// The outbox's pacing per conversation (`minimumInterval`, `Retry-After`), across many
/// conversations: still kept for each, and slots that hold nothing back any more dropped, in
/// amortized time (a flood of 20 000 threads once made it O(n²)).
@Suite("The outbox's pacing per conversation")
struct ConversationPacerTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func eachConversationKeepsItsIntervalAmongThousands() {
        let pacer = ConversationPacer()
        for index in 0..<10_000 { #expect(pacer.reserve("c\(index)", interval: .milliseconds(250), now: Self.start) == .zero) }
        #expect(pacer.count == 10_000, "recent slots are all kept")
        #expect(pacer.reserve("c7", interval: .milliseconds(250), now: Self.start) == .milliseconds(250))
        let left = pacer.wait("c9999", interval: .milliseconds(250), now: Self.start + .milliseconds(100))
        #expect(abs((left - .milliseconds(150)).seconds) < 0.001, "\(left)")
    }

    @Test func slotsThatHoldNothingBackAreDropped() {
        let pacer = ConversationPacer()
        for index in 0..<10_000 { _ = pacer.reserve("old\(index)", interval: .seconds(1), now: Self.start) }
        pacer.hold("held", for: .seconds(3 * 3600), now: Self.start)
        let later = Self.start + .seconds(2 * 3600)
        for index in 0..<10_000 { _ = pacer.reserve("new\(index)", interval: .seconds(1), now: later) }
        #expect(pacer.count < 20_001, "slots an hour old were dropped: \(pacer.count)")
        #expect(pacer.wait("held", interval: .seconds(1), now: later) == .seconds(3600), "a Retry-After still running is kept")
        #expect(pacer.wait("new9999", interval: .seconds(1), now: later) == .seconds(1))
    }
}
