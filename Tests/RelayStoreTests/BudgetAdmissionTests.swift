import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 44, point 4, in the store: admission holds a run's estimated cost of its team's month
/// in the same step as the item's insert, refuses (marks over) what would pass the budget, and
/// the hold goes with the run's end, when its calls' real cost is written.
@Suite("Store: budgets held at admission", .tags(.peers))
struct BudgetAdmissionTests {
    static let route = ReplyRoute(platform: "slack", conversation: "slack:T1:C1", address: "C1")
    static let month = UsageMonth(year: 2026, month: 12)!

    static func event(_ text: String = "/fix a", team: String = "T1") -> Event {
        Event(platform: "slack", team: team, channel: "C1", user: "alice", text: text)
    }

    static func hold(_ reserve: Double, limit: Double = 1.0, team: String = "T1") -> BudgetHold {
        BudgetHold(platform: "slack", team: team, defaultLimit: limit, reserve: reserve, month: month)
    }

    static func admit(_ store: any Store, _ hold: BudgetHold?, team: String = "T1", at seconds: Double = 0) async throws -> Admitted {
        try #require(
            try await store.admit(
                event(team: team), route: route, dedupeKey: nil, expiresAt: month.start + 600, now: month.start + seconds, leaseUntil: nil,
                budget: hold))
    }

    /// The run's end: its calls' cost written with it, its hold gone.
    static func finish(_ store: any Store, _ id: Int64, cost: Double, at seconds: Double = 10) async throws {
        let usage = RunUsage(
            platform: "slack", team: "T1", user: "alice", command: "fix", run: "run-\(id)", at: month.start + seconds,
            calls: [ModelUsage(model: "mini", tokensIn: 100, tokensOut: 20, estimated: false, cost: cost, elapsed: .milliseconds(5))])
        try await store.finishRun(id: id, record: RunRecord(usage: usage), replies: [], leaseUntil: nil)
    }

    @Test("Holds add up to the budget, the rest is marked over, and the run's end settles its hold", arguments: StoreKind.allCases)
    func holdsAndSettles(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let first = try await Self.admit(store, Self.hold(0.4))
            let second = try await Self.admit(store, Self.hold(0.4))
            let third = try await Self.admit(store, Self.hold(0.4))
            #expect([first.overBudget, second.overBudget, third.overBudget] == [false, false, true])
            var standing = try await store.budgetStanding(platform: "slack", team: "T1", from: Self.month.start, to: Self.month.end)
            #expect(standing == BudgetStanding(spent: 0, reserved: 0.8))
            // Another team's budget is its own; an item without a hold holds nothing.
            #expect(try await Self.admit(store, Self.hold(0.9, team: "T2"), team: "T2").overBudget == false)
            _ = try await Self.admit(store, nil)

            // The claimed items say what admission decided.
            let claimed = try await store.claimInbox(now: Self.month.start + 1, leaseUntil: Self.month.start + 100, limit: 10)
            let budgets = Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, $0.event.budget) })
            #expect(budgets[first.id] == .within && budgets[third.id] == .over)

            // The first run spent less than it held: its hold goes, its cost stays.
            try await Self.finish(store, first.id, cost: 0.1)
            standing = try await store.budgetStanding(platform: "slack", team: "T1", from: Self.month.start, to: Self.month.end)
            #expect(abs(standing.spent - 0.1) < 1e-12 && abs(standing.reserved - 0.4) < 1e-12)
            #expect(try await Self.admit(store, Self.hold(0.4), at: 20).overBudget == false, "0.1 + 0.4 + 0.4 fits in 1.0")
            #expect(try await Self.admit(store, Self.hold(0.2), at: 21).overBudget == true, "0.1 + 0.8 + 0.2 does not")
            // Spend of another month is not this one's.
            let december = try await store.budgetStanding(platform: "slack", team: "T1", from: Self.month.end, to: Self.month.end + 86_400 * 31)
            #expect(december.spent == 0)
        }
    }

    /// Three replicas on one PostgreSQL admit a burst for one team at once: exactly as many
    /// holds as fit are given, whichever replica admits them.
    @Test("Three replicas admitting a burst at once keep one count")
    func threeReplicasKeepOneCount() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            var replicas: [PostgresStore] = []
            for _ in 0..<3 { replicas.append(try await openTestStore(database.url)) }
            do {
                let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<30 {
                        let replica = replicas[index % 3]
                        group.addTask { try await Self.admit(replica, Self.hold(0.1), at: Double(index)).overBudget }
                    }
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                // 0.1 each in a budget of 1.0: ten fit (within rounding), twenty are over.
                #expect(results.filter { !$0 }.count == 10, "\(results)")
                let standing = try await replicas[0].budgetStanding(platform: "slack", team: "T1", from: Self.month.start, to: Self.month.end)
                #expect(standing.reserved <= 1.0 + 1e-9)
            } catch {
                for replica in replicas { try? await replica.close() }
                throw error
            }
            for replica in replicas { try await replica.close() }
        }
    }
}
