import RelayCore
import Testing

/// The voice memory budget (issue 47, point 4): room is taken in turn, given back, and a waiter
/// whose patience runs out is told so.
@Suite("Byte budget")
struct ByteBudgetTests {
    @Test func whatFitsIsTakenAtOnceAndOneItemLargerThanTheWholeBudgetStillGoesAlone() async {
        let budget = ByteBudget(capacity: 100)
        #expect(await budget.take(60, waitingAtMost: .zero) == 60)
        #expect(await budget.take(40, waitingAtMost: .zero) == 40)
        #expect(budget.used == 100)
        budget.give(60)
        budget.give(40)
        #expect(await budget.take(500, waitingAtMost: .zero) == 100, "clamped to the whole budget")
        budget.give(100)
        #expect(budget.used == 0)
    }

    @Test func aWaiterGoesWhenRoomIsGivenBackAndInTurn() async throws {
        let budget = ByteBudget(capacity: 100)
        let first = await budget.take(90, waitingAtMost: .zero)
        #expect(first == 90)
        let (order, record) = AsyncStream.makeStream(of: Int.self)
        // A large waiter, then a small one: the small one waits its turn though it would fit.
        let large = Task {
            let taken = await budget.take(80, waitingAtMost: .seconds(600))
            record.yield(80)
            return taken
        }
        try await waitUntil { budget.waiting == 1 }
        let small = Task {
            let taken = await budget.take(10, waitingAtMost: .seconds(600))
            record.yield(10)
            return taken
        }
        try await waitUntil { budget.waiting == 2 }
        budget.give(90)
        #expect(await large.value == 80)
        #expect(await small.value == 10)
        record.finish()
        var seen: [Int] = []
        for await size in order { seen.append(size) }
        #expect(seen == [80, 10])
        #expect(budget.used == 90)
    }

    @Test func aWaiterWhosePatienceRunsOutGetsNothingAndThoseBehindItGo() async throws {
        let budget = ByteBudget(capacity: 100)
        #expect(await budget.take(95, waitingAtMost: .zero) == 95)
        #expect(await budget.take(50, waitingAtMost: .milliseconds(20)) == nil)
        #expect(budget.used == 95 && budget.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheLine() async throws {
        let budget = ByteBudget(capacity: 100)
        #expect(await budget.take(100, waitingAtMost: .zero) == 100)
        let waiter = Task { await budget.take(10, waitingAtMost: .seconds(600)) }
        try await waitUntil { budget.waiting == 1 }
        waiter.cancel()
        #expect(await waiter.value == nil)
        #expect(budget.waiting == 0)
    }

    /// Polls `condition` (bounded: 2 s at most), for a task to reach its wait.
    func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<2_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        try #require(condition())
    }
}
