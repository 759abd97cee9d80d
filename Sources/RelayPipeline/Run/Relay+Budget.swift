import Foundation
public import RelayCore

// A team's monthly budget (docs/admin.md, "Budgets"): held at admission, refused past it, its
// admins told once at 80 %.
extension Relay {
    /// What admission should hold of the team's budget for `event`, from the event alone (no
    /// read: admission answers the platform in seconds, also while the store is slow): nil when
    /// the line asks no model, or no priced one. The store reads the team's budget in the same
    /// step (`InboxStore.admit`).
    public func budgetHold(for event: Event) -> BudgetHold? {
        // A custom command is taken as one (it asks a model), before the team's are read.
        guard case .command(let command) = event.command, command.kind.asksModels else { return nil }
        let reserve = estimatedCost(of: command, event: event)
        guard reserve > 0 else { return nil }
        return BudgetHold(
            platform: event.platform, team: event.team, defaultLimit: configuration.monthlyBudget, reserve: reserve,
            month: UsageMonth(containing: now()))
    }

    /// The team's own budget, else the operator's default; nil: none.
    public func monthlyBudget(platform: String, team: String) async throws -> Double? {
        try await store.settings(.team(platform: platform, team: team)).budget ?? configuration.monthlyBudget
    }

    /// The most `command` may cost (`CostEstimate`), from the event alone: at the tier it names,
    /// else at the dearest (a person's or channel's tier setting is not read); a chain as many
    /// quick answers as a chain may make (`ChainLimits.maxModelCalls`), as its blocks are not read.
    func estimatedCost(of command: Command, event: Event) -> Double {
        let tiers = command.options.tier.map { [$0] } ?? Tier.allCases
        let rosters = tiers.compactMap { tribunal.roster(for: $0) }
        let roster = TierRoster(hasOwnModels: true, writers: rosters.flatMap(\.writers), judges: rosters.flatMap(\.judges))
        let k = command.options.k ?? configuration.defaultK
        let text = TokenEstimate.text([command.text, event.repliedTo ?? "", event.threadText ?? ""].joined(separator: "\n"))
        switch command.kind {
        case .tribunal: return CostEstimate.consensus(text, roster, k: k)
        case .chain(.run): return CostEstimate.quick(text, roster) * Double(configuration.chainLimits.maxModelCalls)
        default: return CostEstimate.quick(text, roster)
        }
    }

    /// Why a command that would ask models is refused: the team's month has reached its budget,
    /// or this run's hold would take it past.
    func overBudgetReply(platform: String, team: String) async throws -> Reply {
        let month = UsageMonth(containing: now())
        let limit = try await monthlyBudget(platform: platform, team: team) ?? 0
        let standing = try await store.budgetStanding(platform: platform, team: team, from: month.start, to: month.end)
        let next = UsageMonth(containing: month.end)
        let spent = "\(UsageFormat.dollars(standing.spent)) of \(UsageFormat.dollars(limit))"
        let why =
            standing.spent >= limit
            ? "This team has reached its model budget for \(month.name): \(spent) spent."
            : "This command could take this team past its model budget for \(month.name): \(spent) spent, \(UsageFormat.dollars(standing.reserved)) held by commands under way."
        return .error(
            "\(why) Commands that ask models are refused until \(next.name) begins (UTC) or an admin raises the budget (`/admin budget \(Self.raised(limit))`); other commands work as before."
        )
    }

    /// A round figure above `limit`, for the example in a refusal.
    static func raised(_ limit: Double) -> String {
        let figure = max(1, (limit * 1.5).rounded(.up))
        return figure == figure.rounded() ? String(Int(figure)) : String(figure)
    }

    /// The once-a-month word to the team when a run takes its spend past 80 % of its budget:
    /// nil unless this run crossed it and no other run (on any replica) told it first.
    func budgetNotice(_ event: Event, limit: Double, spentBefore: Double, spentNow: Double) async -> String? {
        let threshold = limit * 0.8
        guard spentBefore < threshold, spentNow >= threshold else { return nil }
        let month = UsageMonth(containing: now())
        // Once per team and month, whichever replica's run crosses it: the dedupe key claims it.
        let key = "budget-80:\(event.platform):\(event.team):\(month)"
        guard (try? await store.claimEvent(key: key, expiresAt: month.end.addingTimeInterval(40 * 86_400), now: now())) == true else { return nil }
        let percent = Int((spentNow / limit * 100).rounded(.down))
        return
            "⚠️ For this team's admins: \(percent) % of the model budget for \(month.name) is spent (\(UsageFormat.dollars(spentNow)) of \(UsageFormat.dollars(limit))). At 100 % commands that ask models are refused until the month turns; `/admin budget \(Self.raised(limit))` raises it, `/usage team` shows where it went."
    }
}

// `/admin budget`.
extension Relay {
    func budgetCommand(_ change: BudgetChange, _ request: RequestContext) async throws -> Reply {
        let event = request.event
        let scope = SettingsScope.team(platform: event.platform, team: event.team)
        var own = try await store.settings(scope)
        let fallback =
            configuration.monthlyBudget.map { "the operator's default, \(UsageFormat.dollars($0)) a month" } ?? "no budget (the operator set no default)"
        switch change {
        case .show:
            return .info(try await budgetLines(platform: event.platform, team: event.team, own: own.budget).joined(separator: "\n"), title: "Budget")
        case .set(let dollars):
            own.budget = dollars
            request.recorder.keep(.saveSettings(own, scope))
            let lines = try await budgetLines(platform: event.platform, team: event.team, own: dollars)
            return .info((["This team's model budget is now \(UsageFormat.dollars(dollars)) a month."] + lines.dropFirst()).joined(separator: "\n"))
        case .reset:
            guard own.budget != nil else { return .info("This team has no budget of its own: it has \(fallback).") }
            own.budget = nil
            request.recorder.keep(.saveSettings(own, scope))
            return .info("This team's own budget is gone: it has \(fallback).")
        }
    }

    /// "This team's model budget: $20 a month (its own).", then this month's spend against it.
    func budgetLines(platform: String, team: String, own: Double?) async throws -> [String] {
        let month = UsageMonth(containing: now())
        let standing = try await store.budgetStanding(platform: platform, team: team, from: month.start, to: month.end)
        guard let limit = own ?? configuration.monthlyBudget else {
            return [
                "This team has no model budget: nothing stops its spending. An admin sets one with `/admin budget 20` (US dollars a month).",
                "\(month.name): \(UsageFormat.dollars(standing.spent)) spent (`/usage team` shows where).",
            ]
        }
        let whose = own != nil ? "its own" : "the operator's default"
        let percent = limit > 0 ? Int((standing.spent / limit * 100).rounded(.down)) : 0
        var spent = "\(month.name): \(UsageFormat.dollars(standing.spent)) spent (\(percent) %)"
        if standing.reserved > 0 { spent += ", \(UsageFormat.dollars(standing.reserved)) held by commands under way" }
        return [
            "This team's model budget: \(UsageFormat.dollars(limit)) a month (\(whose)).", spent + ".",
            "At 80 % its admins are told once; at 100 % commands that ask models are refused until the month turns (UTC). Models without a price cost nothing here.",
        ]
    }
}
