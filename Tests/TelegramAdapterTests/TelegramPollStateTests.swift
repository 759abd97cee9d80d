import Foundation
import RelayCore
import Testing

@testable import TelegramAdapter

/// The offset a poller leaves in its lease is used by the next only when it fits: the same bot,
/// saved within Telegram's 24 hours.
@Suite("Telegram: the saved polling offset")
struct TelegramPollStateTests {
    static let saved = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theSavedOffsetReadsBack() {
        let state = TelegramPollState(bot: "123456789", offset: 700_000_001, savedAt: Self.saved)
        #expect(TelegramPollState(saved: state.saved) == state)
        #expect(TelegramPollState(saved: "701") == nil, "not a state this version wrote")
        #expect(TelegramPollState(saved: "") == nil)
    }

    @Test func anotherBotsOrAStaleOffsetIsNotUsed() {
        let state = TelegramPollState(bot: "123456789", offset: 701, savedAt: Self.saved)
        #expect(state.offset(for: "123456789", now: Self.saved + .seconds(3600)) == 701)
        // A new token's bot numbers its updates from elsewhere: the old offset would drop them.
        #expect(state.offset(for: "987654321", now: Self.saved) == nil)
        #expect(state.offset(for: "123456789", now: Self.saved + .seconds(86_400)) == nil, "older than Telegram keeps updates")
    }
}
