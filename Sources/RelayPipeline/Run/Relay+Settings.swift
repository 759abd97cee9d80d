import Foundation
import RelayCore

extension Relay {
    func settingsCommand(_ sub: SettingsSubcommand, _ request: RequestContext) async throws -> Reply {
        let event = request.event
        switch sub {
        case .show:
            func source(_ user: (some Any)?, _ channel: (some Any)?) -> String {
                user != nil ? "you" : channel != nil ? "this channel" : "default"
            }
            let user = request.userSettings
            let channel = request.channelSettings
            let lines = [
                "lang: \(request.language.name) (\(request.language.code)) — from \(source(user.lang, channel.lang))",
                "tier: \(user.tier ?? channel.tier ?? configuration.defaultTier) — from \(source(user.tier, channel.tier))",
                "voice: \((user.voice ?? channel.voice ?? .transcript).rawValue) — from \(source(user.voice, channel.voice)) (what a voice note without a command gets)",
                "receipts: \((user.receipts ?? channel.receipts ?? false) ? "on" : "off") — from \(source(user.receipts, channel.receipts)) (each reply's tokens and cost in its footer)",
                "retention: \(request.retention.rawValue) — the strictest of yours (\(user.retention?.rawValue ?? "unset")), this channel's (\(channel.retention?.rawValue ?? "unset")) and the default (\(configuration.defaultRetention.rawValue))",
            ]
            return .info(
                lines.joined(separator: "\n")
                    + "\n\nChange with `/settings lang fr` or `/settings channel tier mid`; `/settings lang reset` clears one, `/settings reset` all of yours.",
                title: "Settings")
        case .reset(let target):
            let scope: SettingsScope = target == .me ? .user(team: event.team, user: event.user) : .channel(team: event.team, channel: event.channel)
            let before = target == .me ? request.userSettings : request.channelSettings
            let whose = target == .me ? "Your" : "This channel's"
            guard !before.isEmpty else { return .info("\(whose) settings were already all at their defaults.") }
            request.recorder.keep(.saveSettings(Settings(), scope))
            let cleared = [
                before.lang.map { _ in "lang" }, before.tier.map { _ in "tier" }, before.retention.map { _ in "retention" }, before.voice.map { _ in "voice" },
                before.receipts.map { _ in "receipts" },
            ]
            .compactMap { $0 }
            return .info("\(whose) \(Self.listed(cleared)) \(cleared.count == 1 ? "is" : "are") reset to the default.")
        case .set(let target, let key, let value):
            let scope: SettingsScope = target == .me ? .user(team: event.team, user: event.user) : .channel(team: event.team, channel: event.channel)
            var settings = target == .me ? request.userSettings : request.channelSettings
            switch key {
            case .lang: settings.lang = value
            case .tier: settings.tier = value.flatMap(Tier.init(rawValue:))
            case .retention: settings.retention = value.flatMap(Retention.init(rawValue:))
            case .voice: settings.voice = value.flatMap(VoiceAction.init(rawValue:))
            case .receipts: settings.receipts = value.map { $0 == "on" }
            }
            request.recorder.keep(.saveSettings(settings, scope))
            let whose = target == .me ? "Your" : "This channel's"
            let shown = key == .lang ? value.flatMap(Language.lookup).map { "\($0.name) (\($0.code))" } : value
            let verb = key == .receipts ? "are" : "is"
            return .info(shown.map { "\(whose) \(key.rawValue) \(verb) now \($0)." } ?? "\(whose) \(key.rawValue) \(verb) reset to the default.")
        }
    }

    /// `lang`, `lang and tier`, `lang, tier and retention`.
    static func listed(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " and " + words.last!
    }

    func historyCommand(_ sub: HistorySubcommand, _ request: RequestContext) async throws -> Reply {
        if sub == .clear {
            // What one asked the tribunal is theirs too: the fact-checks they asked go with it.
            let (deleted, checks) = try await store.keptCount(team: request.event.team, user: request.event.user)
            request.recorder.keep(.forget(team: request.event.team, user: request.event.user))
            guard deleted + checks > 0 else { return .info("Your history was already empty.") }
            var parts = ["\(deleted) result\(deleted == 1 ? "" : "s")"]
            if checks > 0 { parts.append("\(checks) fact-check\(checks == 1 ? "" : "s") you asked") }
            return .info("Deleted your history: \(parts.joined(separator: " and ")). Nothing of it is kept.")
        }
        if case .last(let page) = sub { return try await lastResult(page: page, request) }
        let entries = try await store.history(team: request.event.team, user: request.event.user, limit: configuration.historyLength)
        guard !entries.isEmpty else {
            let why = request.retention == .off ? " (your retention setting is `off`: `/settings retention full` turns history on)" : ""
            return .info("No results yet\(why).")
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        let lines = entries.map { entry -> String in
            var head = "\(formatter.string(from: entry.createdAt)) UTC · \(entry.command) · \(entry.succeeded ? "ok" : "failed")"
            if let agreement = entry.agreement {
                // In the reply's words where the row says what the score meant (rows from before
                // it was kept show the bare figure).
                head +=
                    " · "
                    + (entry.scoreMeaning.map {
                        ScoreWords.line(agreement, meaning: $0, verdict: entry.verdict, agreeing: entry.agreeing, answered: entry.modelsAnswered ?? 0)
                    } ?? "\(Int((agreement * 100).rounded()))%")
            }
            if let answered = entry.modelsAnswered, let asked = entry.modelsAsked { head += " · \(answered)/\(asked) models" }
            head += " · \(AgreementFooter.seconds(.clampedSeconds(entry.elapsed)))"
            guard let text = entry.resultText else { return head }
            let snippet = text.count > 120 ? String(text.prefix(119)) + "…" : text
            return head + "\n  " + snippet.replacingOccurrences(of: "\n", with: " ")
        }
        return .info(lines.joined(separator: "\n"), title: "Your last \(entries.count) results")
    }

    /// `/history last PAGE`: the asker's last result whole, a page at a time, privately — where
    /// an answer too long for the chat was cut (`LongReply`), the rest is here. A result, not
    /// info: it is a model's text, shown as the model wrote it.
    func lastResult(page: Int, _ request: RequestContext) async throws -> Reply {
        guard let last = try await store.history(team: request.event.team, user: request.event.user, limit: 1).first else {
            let why = request.retention == .off ? " (your retention setting is `off`: `/settings retention full` turns history on)" : ""
            return .info("No results yet\(why).")
        }
        guard let text = last.resultText else {
            return .info(
                "Your last result (`/\(last.command)`) was kept without its text (retention `\(request.retention.rawValue)`): `/settings retention full` keeps the next ones whole."
            )
        }
        guard let (shown, pages) = LongReply.page(page, of: text) else {
            let pages = LongReply.page(1, of: text)?.pages ?? 1
            return .error("Your last result has \(pages) page\(pages == 1 ? "" : "s"): `/history last \(pages)` is the last one.")
        }
        var notes: [String] = []
        if page < pages { notes.append("Page \(page) of \(pages). Next: `/history last \(page + 1)`.") }
        return Reply(
            kind: .result, title: "Your last result · \(last.command)\(pages > 1 ? ", page \(page) of \(pages)" : "")", body: String(shown), notes: notes,
            isPrivate: true)
    }
}
