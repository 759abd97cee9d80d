import Foundation
import RelayPipeline
import Testing

/// `EditBudget`: the edits of answers being written that a platform takes across conversations.
@Suite("Edits of answers being written: a budget across conversations")
struct EditBudgetTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aBurstThenTheAverageAndEachKeyApart() {
        let budget = EditBudget(perMinute: 30, burst: 10)
        let burst = (0..<12).map { _ in budget.take("T1", now: start) }
        #expect(burst.filter { $0 }.count == 10, "\(burst)")
        // 30 a minute: one more every 2 s.
        #expect(!budget.take("T1", now: start.addingTimeInterval(1.9)))
        #expect(budget.take("T1", now: start.addingTimeInterval(2.1)))
        #expect(!budget.take("T1", now: start.addingTimeInterval(2.2)))
        // Another workspace has its own.
        #expect(budget.take("T2", now: start.addingTimeInterval(2.2)))
        // A quiet minute refills it, to the burst and no more.
        let later = start.addingTimeInterval(120)
        #expect((0..<15).map { _ in budget.take("T1", now: later) }.filter { $0 }.count == 10)
    }

    @Test func aClockThatGoesBackGivesNothing() {
        let budget = EditBudget(perMinute: 60, burst: 1)
        #expect(budget.take(now: start))
        #expect(!budget.take(now: start.addingTimeInterval(-30)))
    }
}
