import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

@testable import TelegramAdapter

/// Telegram's three limits, kept together, on a manual clock.
@Suite("Telegram rate limiter")
struct TelegramRateLimiterTests {
    static let privateChat: Int64 = 42
    static let group: Int64 = -1_001_234_567_890

    /// The wait of a booking that must be granted.
    static func granted(_ limiter: TelegramRateLimiter, chat: Int64, at now: Date, maxWait: Duration? = nil) -> Duration? {
        guard case .granted(let wait) = limiter.reserve(chat: chat, now: now, maxWait: maxWait) else {
            Issue.record("expected a booking for chat \(chat)")
            return nil
        }
        return wait
    }

    @Test func aChatGetsOneMessageASecond() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        let waits = (0..<4).map { _ in Self.granted(limiter, chat: Self.privateChat, at: clock.now) }
        #expect(waits == [.zero, .seconds(1), .seconds(2), .seconds(3)])
        #expect(Self.granted(limiter, chat: 7, at: clock.now) == .zero, "another chat is not held back")
        clock.advance(by: .seconds(10))
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .zero, "the interval has long passed")
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now + .milliseconds(400)) == .milliseconds(600))
    }

    @Test func aMessageAnsweredLateHoldsItsChatASecondFromTheAnswer() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter(margin: .milliseconds(150))
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .zero)
        // A busy machine: the message left late and was answered 900 ms after its booked instant.
        // Telegram may have counted it as late as that, so a second before the next one counts
        // from there, not from the booking (which would allow it 250 ms later).
        clock.advance(by: .milliseconds(900))
        limiter.sent(chat: Self.privateChat, at: clock.now)
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .seconds(1))
        // An answer that came in time changes nothing: the booking's interval already covers it.
        clock.advance(by: .seconds(1))
        limiter.sent(chat: Self.privateChat, at: clock.now)
        clock.advance(by: .seconds(5))
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .zero)
        #expect(Self.granted(limiter, chat: 7, at: clock.now) == .zero, "another chat is not held back")
    }

    @Test func theMarginWidensEveryIntervalAndWindowAndTheStartIsQuiet() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter(quietUntil: clock.now + .seconds(1), margin: .milliseconds(150))
        // Nothing in the first second: a process just started cannot know what its predecessor sent.
        let first = Self.granted(limiter, chat: Self.privateChat, at: clock.now)
        #expect(first == .seconds(1))
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .milliseconds(2150), "one per 1.15 s in a chat")
        // Overall: 30 then a window of 1.15 s, across many chats.
        let waits = (0..<31).compactMap { index in Self.granted(limiter, chat: 1000 + Int64(index), at: clock.now) }
        #expect(waits.filter { $0 == .seconds(1) }.count == 29, "29 more fit the first window beside the first message")
        #expect(waits.last == .milliseconds(2150) || waits.last.map { $0 >= .milliseconds(2150) } == true, "\(waits.suffix(3))")
    }

    @Test func aGroupGetsTwentyAMinuteWhilePrivateChatsGoOn() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        for second in 0..<20 {
            #expect(Self.granted(limiter, chat: Self.group, at: clock.now) == .zero, "message \(second + 1)")
            clock.advance(by: .seconds(1))
        }
        // Twenty went at 0…19 s: the 21st waits until the first leaves the minute, at 60 s.
        #expect(Self.granted(limiter, chat: Self.group, at: clock.now) == .seconds(40))
        #expect(Self.granted(limiter, chat: Self.group, at: clock.now) == .seconds(41), "then one per slot freed")
        // A private chat only keeps its one a second.
        for _ in 0..<25 {
            #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .zero)
            clock.advance(by: .seconds(1))
        }
    }

    @Test func thirtyASecondOverallAcrossManyChats() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        let waits = (1...90).compactMap { Self.granted(limiter, chat: Int64($0), at: clock.now) }
        #expect(waits.count == 90)
        #expect(waits.prefix(30).allSatisfy { $0 == .zero })
        #expect(waits.dropFirst(30).prefix(30).allSatisfy { $0 == .seconds(1) })
        #expect(waits.dropFirst(60).allSatisfy { $0 == .seconds(2) })
        // Half a second later the first thirty still fill the window.
        #expect(Self.granted(limiter, chat: 1000, at: clock.now + .milliseconds(500)) == .milliseconds(2500))
    }

    @Test func aChatAlreadyBookedLaterDoesNotHoldTheGlobalWindowItLeftFree() {
        let limiter = TelegramRateLimiter()
        let now = ManualClock().now
        // 30 bookings 5 s from now (a paused chat's backlog) leave now free for others.
        limiter.pause(chat: 1, until: now + .seconds(5))
        for chat in 2...30 { limiter.pause(chat: Int64(chat), until: now + .seconds(5)) }
        for chat in 1...30 { #expect(Self.granted(limiter, chat: Int64(chat), at: now) == .seconds(5)) }
        #expect(Self.granted(limiter, chat: 99, at: now) == .zero)
        #expect(Self.granted(limiter, chat: 100, at: now + .seconds(5)) == .seconds(1), "the window at 5 s is full")
    }

    @Test func a429PausesTheChat() throws {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .zero)
        limiter.pause(chat: Self.privateChat, until: clock.now + .seconds(30))
        let until = try #require(limiter.pausedUntil(chat: Self.privateChat, now: clock.now))
        #expect(abs(until.timeIntervalSince(clock.now) - 30) < 0.001)
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .seconds(30))
        #expect(Self.granted(limiter, chat: 7, at: clock.now) == .zero, "other chats go on")
        // A shorter pause shortens nothing.
        limiter.pause(chat: Self.privateChat, until: clock.now + .seconds(2))
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now) == .seconds(31))
        clock.advance(by: .seconds(30))
        #expect(limiter.pausedUntil(chat: Self.privateChat, now: clock.now) == nil)
    }

    @Test func aSlotBeyondMaxWaitIsRefusedAndBooksNothing() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        for _ in 0..<6 { _ = Self.granted(limiter, chat: Self.privateChat, at: clock.now, maxWait: .seconds(5)) }
        #expect(limiter.reserve(chat: Self.privateChat, now: clock.now, maxWait: .seconds(5)) == .refused(wait: .seconds(6)))
        #expect(limiter.reserve(chat: Self.privateChat, now: clock.now, maxWait: .seconds(5)) == .refused(wait: .seconds(6)), "nothing was booked")
        limiter.pause(chat: 7, until: clock.now + .seconds(60))
        #expect(limiter.reserve(chat: 7, now: clock.now, maxWait: .seconds(5)) == .refused(wait: .seconds(60)))
        // The refused ones took no place in the global window either.
        let waits = (100..<129).compactMap { Self.granted(limiter, chat: Int64($0), at: clock.now) }
        #expect(waits.count == 29 && waits.allSatisfy { $0 == .zero }, "29 places were free besides the one booking at now")
        #expect(Self.granted(limiter, chat: 200, at: clock.now) == .seconds(1))
    }

    /// What the outbox asks before it starts a delivery: the wait a booking would get, with
    /// nothing booked by asking.
    @Test func askingWhenAMessageCouldGoPredictsTheBookingAndBooksNothing() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        #expect(limiter.wait(chat: Self.privateChat, now: clock.now) == .zero)
        #expect(limiter.wait(chat: Self.privateChat, now: clock.now) == .zero, "asking booked nothing")
        _ = Self.granted(limiter, chat: Self.privateChat, at: clock.now)
        #expect(limiter.wait(chat: Self.privateChat, now: clock.now) == .seconds(1))
        #expect(limiter.wait(chat: 7, now: clock.now) == .zero, "another chat can go")
        #expect(limiter.overallWait(now: clock.now) == .zero)
        // Twenty-nine more fill the second: now every chat waits for the window.
        for chat in 100..<129 { _ = Self.granted(limiter, chat: Int64(chat), at: clock.now) }
        #expect(limiter.overallWait(now: clock.now) == .seconds(1))
        #expect(limiter.wait(chat: 7, now: clock.now) == .seconds(1))
        #expect(Self.granted(limiter, chat: 7, at: clock.now) == .seconds(1), "as predicted")
        // A group's minute and a 429's pause are read too.
        for _ in 0..<20 {
            clock.advance(by: .seconds(2))
            _ = Self.granted(limiter, chat: Self.group, at: clock.now)
        }
        clock.advance(by: .seconds(2))
        #expect(limiter.wait(chat: Self.group, now: clock.now) == .seconds(20))
        limiter.pause(chat: Self.privateChat, until: clock.now + .seconds(30))
        #expect(limiter.wait(chat: Self.privateChat, now: clock.now) == .seconds(30))
    }

    /// The outbox takes a message's turn before it starts the delivery; the send then uses that
    /// turn instead of booking (and waiting for) another.
    @Test func aTurnTakenAheadIsUsedByTheSendAndNeverBookedTwice() throws {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        #expect(limiter.takeTurnIfNow(chat: Self.privateChat, now: clock.now) == .zero)
        // Taken: another message to the chat must wait its second.
        #expect(limiter.takeTurnIfNow(chat: Self.privateChat, now: clock.now) == .seconds(1), "nothing booked when it must wait")
        #expect(Self.granted(limiter, chat: Self.privateChat, at: clock.now + .milliseconds(50)) == .zero, "the send uses the taken turn")
        let next = try #require(Self.granted(limiter, chat: Self.privateChat, at: clock.now + .milliseconds(50)))
        #expect(abs((next - .milliseconds(950)).seconds) < 1e-6, "then the chat's next second, \(next)")
        // Thirty turns fill the overall second: the thirty-first must wait, and nothing is booked for it.
        for chat in 100..<130 { #expect(limiter.takeTurnIfNow(chat: Int64(chat), now: clock.now + .seconds(5)) == .zero) }
        #expect(limiter.takeTurnIfNow(chat: 7, now: clock.now + .seconds(5)) == .seconds(1))
        #expect(limiter.overallWait(now: clock.now + .seconds(5)) == .seconds(1))
        // A turn its send never used is undone by the chat's next booking, not kept for a later message.
        clock.advance(by: .seconds(10))
        #expect(Self.granted(limiter, chat: 100, at: clock.now) == .zero)
        #expect(Self.granted(limiter, chat: 100, at: clock.now) == .seconds(1))
    }

    /// Deliveries slow to start (a loaded machine, a slow store) come for their turns late. Kept,
    /// those turns would leave beside the turns booked after them: more in a second than
    /// Telegram takes, though each was booked within the limit. Each is booked again when it
    /// really leaves, so what leaves keeps the limit (issue 49).
    @Test func turnsUsedLateAreBookedAgainSoWhatLeavesKeepsTheOverallLimit() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        var departures: [Date] = []
        /// The worker's side: a delivery starts once its turn is taken (the clock moves on to
        /// it while it must wait), and its send goes at once, or `late` after.
        func deliver(_ chats: Range<Int64>, late: Duration = .zero, sendNow: Bool = true) -> [Int64] {
            for chat in chats {
                var wait = limiter.takeTurnIfNow(chat: chat, now: clock.now)
                while wait > .zero {
                    clock.advance(by: wait)
                    wait = limiter.takeTurnIfNow(chat: chat, now: clock.now)
                }
                if sendNow { send(chat) }
            }
            return Array(chats)
        }
        func send(_ chat: Int64) {
            guard case .granted(let wait) = limiter.reserve(chat: chat, now: clock.now, maxWait: .seconds(5)) else {
                Issue.record("chat \(chat): the send was handed back")
                return
            }
            departures.append(clock.now + wait)
        }
        // Thirty deliveries start at once; fifteen send at once, fifteen 600 ms later.
        _ = deliver(100..<115)
        let slow = deliver(115..<130, sendNow: false)
        clock.advance(by: .milliseconds(600))
        for chat in slow { send(chat) }
        // Thirty more, each as soon as the limiter lets it start.
        clock.advance(by: .milliseconds(400))
        _ = deliver(200..<230)
        departures.sort()
        #expect(departures.count == 60)
        let most = departures.indices.map { start in departures[start...].prefix { $0 < departures[start] + .seconds(1) }.count }.max() ?? 0
        #expect(most <= 30, "at most 30 leave in any second, \(most) did")
    }

    @Test func idleChatsAreForgotten() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        for chat in 1...500 { _ = limiter.reserve(chat: -Int64(chat), now: clock.now) }
        #expect(limiter.trackedChatCount == 500)
        clock.advance(by: .seconds(121))
        _ = limiter.reserve(chat: Self.privateChat, now: clock.now)
        #expect(limiter.trackedChatCount == 1)
    }

    @Test func aHundredConcurrentBookingsKeepEveryLimit() async {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        let now = clock.now
        // Five groups, five private chats, each hit by ten senders at once.
        let chats: [Int64] = [-1, -2, -3, -4, -5, 1, 2, 3, 4, 5]
        let bookings = await withTaskGroup(of: (Int64, Duration)?.self) { group in
            for index in 0..<100 {
                let chat = chats[index % chats.count]
                group.addTask {
                    guard case .granted(let wait) = limiter.reserve(chat: chat, now: now) else { return nil }
                    return (chat, wait)
                }
            }
            var bookings: [(Int64, Duration)] = []
            for await booking in group { if let booking { bookings.append(booking) } }
            return bookings
        }
        #expect(bookings.count == 100)
        let all = bookings.map(\.1).sorted()
        #expect(Self.violations(all, limit: 30, window: .seconds(1)) == 0, "at most 30 in any second overall")
        for chat in chats {
            let slots = bookings.filter { $0.0 == chat }.map(\.1).sorted()
            #expect(slots.count == 10)
            #expect(Self.violations(slots, limit: 1, window: .seconds(1)) == 0, "one a second in chat \(chat)")
            if chat < 0 { #expect(Self.violations(slots, limit: 20, window: .seconds(60)) == 0, "twenty a minute in group \(chat)") }
        }
        // Nothing waits longer than it must: ten a chat at one a second.
        #expect(all.last == .seconds(9))
    }

    @Test func aFullMinuteOfGroupTrafficUnderLoadKeepsEveryLimit() async {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        let now = clock.now
        // 40 messages to each of 3 groups and 30 to each of 2 private chats, all at once.
        let everyChat: [Int64] = [-7, -8, -9, 7, 8]
        let groups: [Int64] = [-7, -8, -9]
        let chats = Array(repeating: everyChat, count: 30).flatMap { $0 } + Array(repeating: groups, count: 10).flatMap { $0 }
        let bookings = await withTaskGroup(of: (Int64, Duration).self) { group in
            for chat in chats {
                group.addTask {
                    guard case .granted(let wait) = limiter.reserve(chat: chat, now: now) else { return (chat, .seconds(-1)) }
                    return (chat, wait)
                }
            }
            return await group.reduce(into: [(Int64, Duration)]()) { $0.append($1) }
        }
        #expect(bookings.allSatisfy { $0.1 >= .zero })
        #expect(Self.violations(bookings.map(\.1).sorted(), limit: 30, window: .seconds(1)) == 0)
        for chat in Set(chats) {
            let slots = bookings.filter { $0.0 == chat }.map(\.1).sorted()
            #expect(Self.violations(slots, limit: 1, window: .seconds(1)) == 0)
            if chat < 0 {
                #expect(Self.violations(slots, limit: 20, window: .seconds(60)) == 0)
                #expect(slots[20] == .seconds(60), "the 21st of a group waits for the minute")
            }
        }
    }

    @Test func aLongRandomMixOfBookingsAndPausesKeepsEveryLimit() {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        var random = SplitMix64(seed: 12)
        // Instants as the limiter counts them (nanoseconds since 1970), so nothing is lost to
        // `Date`'s rounding.
        var slots: [Int64: [Duration]] = [:]
        var pausedUntil: [Int64: Duration] = [:]
        for _ in 0..<3000 {
            clock.advance(by: .milliseconds(Int64(random.below(120))))
            let now = Duration.nanoseconds(TelegramRateLimiter.nanoseconds(clock.now))
            let chat = Int64(random.below(40)) - 20
            if random.below(50) == 0 {
                let until = clock.now + .milliseconds(Int64(random.below(10_000)))
                limiter.pause(chat: chat, until: until)
                pausedUntil[chat] = max(pausedUntil[chat] ?? .zero, .nanoseconds(TelegramRateLimiter.nanoseconds(until)))
                continue
            }
            let maxWait: Duration? = random.below(2) == 0 ? .seconds(5) : nil
            switch limiter.reserve(chat: chat, now: clock.now, maxWait: maxWait) {
            case .granted(let wait):
                #expect(maxWait.map { wait <= $0 } ?? true)
                #expect(now + wait >= pausedUntil[chat] ?? .zero, "no booking inside a pause")
                slots[chat, default: []].append(now + wait)
            case .refused(let wait):
                #expect(maxWait.map { wait > $0 } ?? false, "only a caller with a limit is refused")
            }
        }
        let all = slots.values.flatMap { $0 }.sorted()
        #expect(all.count > 1000)
        #expect(Self.violations(all, limit: 30, window: .seconds(1)) == 0)
        for (chat, chatSlots) in slots {
            let sorted = chatSlots.sorted()
            #expect(Self.violations(sorted, limit: 1, window: .seconds(1)) == 0, "chat \(chat)")
            if chat < 0 { #expect(Self.violations(sorted, limit: 20, window: .seconds(60)) == 0, "group \(chat)") }
        }
    }

    /// How many runs of `limit + 1` consecutive instants (sorted) fit inside one `window`.
    static func violations(_ sorted: [Duration], limit: Int, window: Duration) -> Int {
        guard sorted.count > limit else { return 0 }
        return (0..<(sorted.count - limit)).filter { sorted[$0 + limit] - sorted[$0] < window }.count
    }
}

/// Answers being written take the bot's spare sends only: while its 30 a second are all taken,
/// placeholders and whole answers go first.
@Suite("Telegram: edits of answers being written yield to whole answers")
struct TelegramPartialEditTests {
    @Test func noEditOfAnAnswerBeingWrittenWhileTheBotsThirtyAreTaken() async throws {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        try await TelegramBotClientTests.withClient(clock: clock, limiter: limiter) { client in
            let delivery = TelegramDelivery(api: client, log: TelegramChatLog(), logger: Logger(label: "test.telegram"), limiter: limiter)
            let address = TelegramAddress(team: "t", chat: 42, user: 42, isGroup: false).route.address
            #expect(delivery.admitsPartialEdit(at: address, now: clock.now), "a quiet bot takes it")
            // Thirty messages to thirty chats within the second: the bot's limit is reached.
            for chat in 1...30 { _ = limiter.reserve(chat: Int64(1000 + chat), now: clock.now, maxWait: nil) }
            #expect(!delivery.admitsPartialEdit(at: address, now: clock.now), "the bot's 30 are taken")
            clock.advance(by: .seconds(2))
            #expect(delivery.admitsPartialEdit(at: address, now: clock.now), "free again once the second has passed")
        }
    }
}
