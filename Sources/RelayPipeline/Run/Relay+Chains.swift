import Foundation
import RelayCore

extension Relay {
    func chainParser(_ request: RequestContext) -> ChainParser {
        ChainParser(limits: configuration.chainLimits, customCommands: Set(request.customs.map(\.name)), verifyModels: request.k)
    }

    func chainCommand(_ sub: ChainSubcommand, _ request: RequestContext, progress: @escaping @Sendable (RunProgress) async -> Void) async throws -> Reply {
        let team = request.event.team
        switch sub {
        case .save(let name, let source):
            let chain = try parseChain(source, name: name, request)
            try await saveChain(name: name, chain: chain, request)
            return .info("Saved chain `\(name)`: `\(chain.dsl)`\nRun it with `/run \(name) <text>`.")
        case .run(let name):
            return try await runChain(name, request, progress: progress)
        case .list:
            let chains = try await store.chains(team: team)
            guard !chains.isEmpty else {
                return .info("No chains yet. Save one with `/chain save polish = input > grammar > rewrite:professional > output`.")
            }
            return .info(chains.map { "• `\($0.name)` = `\($0.source)` (by \($0.creator))" }.joined(separator: "\n"), title: "Chains")
        case .show(let name):
            let chain = try await existingChain(name, team: team)
            return .info("`\(chain.name)` = `\(chain.source)`\nCreated by \(chain.creator).", title: "Chain \(chain.name)")
        case .delete(let name):
            _ = try await existingChain(name, team: team)
            request.recorder.keep(.deleteChain(team: team, name: name))
            return .info("Deleted chain `\(name)`.")
        case .export(let name):
            let chains = if let name { [try await existingChain(name, team: team)] } else { try await store.chains(team: team) }
            guard !chains.isEmpty else { return .info("No chains to export.") }
            let lines = chains.map(\.exportLine).joined(separator: "\n")
            return .info(lines + "\n\nImport with `/chain import` followed by these lines.", title: "Export")
        case .importDefinitions(let definitions):
            return try await importChains(definitions, request)
        }
    }

    private func parseChain(_ source: String, name: String, _ request: RequestContext) throws -> Chain {
        do throws(ChainParseError) {
            return try chainParser(request).parse(source)
        } catch {
            throw RelayFailure("Chain `\(name)` not saved. \(error.description)")
        }
    }

    /// Checks the save and leaves it to the run's end; returns whether the chain is new.
    /// `newBefore` counts the new chains this run already saves (an import's earlier lines),
    /// which the store shows only once the run ends.
    @discardableResult
    private func saveChain(name: String, chain: Chain, _ request: RequestContext, newBefore: Int = 0) async throws -> Bool {
        let team = request.event.team
        let now = now()
        if let existing = try await store.chain(team: team, name: name) {
            request.recorder.keep(
                .saveChain(SavedChain(team: team, name: name, source: chain.dsl, creator: existing.creator, createdAt: existing.createdAt, updatedAt: now)))
            return false
        }
        let count = try await store.chains(team: team).count + newBefore
        guard count < configuration.maxChainsPerTeam else {
            throw RelayFailure("This team has \(count) chains, the limit. Delete one with `/chain delete NAME` first.")
        }
        request.recorder.keep(.saveChain(SavedChain(team: team, name: name, source: chain.dsl, creator: request.event.user, createdAt: now, updatedAt: now)))
        return true
    }

    private func existingChain(_ name: String, team: String) async throws -> SavedChain {
        if let chain = try await store.chain(team: team, name: name) { return chain }
        let names = try await store.chains(team: team).map(\.name)
        var message = "There is no chain `\(name)` in this team."
        if let close = names.min(by: { EditDistance.between(name, $0) < EditDistance.between(name, $1) }), EditDistance.between(name, close) <= 2 {
            message += " Did you mean `\(close)`?"
        }
        throw RelayFailure(message + " `/chain list` shows the saved chains.")
    }

    /// All lines are checked before any is saved, so a bad paste changes nothing (each line was
    /// split into its name and source where the command was read).
    private func importChains(_ definitions: [ChainDefinition], _ request: RequestContext) async throws -> Reply {
        var parsed: [(String, Chain)] = []
        for definition in definitions {
            do {
                parsed.append((definition.name, try parseChain(definition.source, name: definition.name, request)))
            } catch let error as RelayFailure {
                throw RelayFailure("Nothing imported: line \(definition.line): \(error.message)")
            }
        }
        var replaced = Set<String>()
        for (name, _) in parsed {
            if try await store.chain(team: request.event.team, name: name) != nil { replaced.insert(name) }
        }
        // Every save is checked before the run's end writes them all, in one transaction.
        var added = Set<String>()
        for (name, chain) in parsed where try await saveChain(name: name, chain: chain, request, newBefore: added.count) {
            added.insert(name)
        }
        // Which ones replaced a chain of the same name: an import can overwrite the team's work.
        let names = parsed.map { "`\($0.0)`" + (replaced.contains($0.0) ? " (replaced)" : " (new)") }
        return .info("Imported \(parsed.count) chain\(parsed.count == 1 ? "" : "s"): \(names.joined(separator: ", ")).")
    }

    private func runChain(_ name: String, _ request: RequestContext, progress: @escaping @Sendable (RunProgress) async -> Void) async throws -> Reply {
        let saved = try await existingChain(name, team: request.event.team)
        let chain: Chain
        do throws(ChainParseError) {
            chain = try chainParser(request).parse(saved.source)
        } catch {
            throw RelayFailure("The chain `\(name)` can no longer run: \(error.description) Fix it with `/chain save \(name) = …`.")
        }
        let event = request.event
        let input = InputResolver.resolve(typed: request.command.text, event: event, sources: .replyOrThread)
        let needsThread = chain.blocks.first == .input(thread: true)
        if input == nil && !needsThread {
            if let unreadable = event.unreadableReply {
                return .error("\(unreadable) `/run \(name)` needs text: add it after the name (`/run \(name) your text`), or run it inside a thread.")
            }
            return .error(
                "`/run \(name)` needs text: add it after the name (`/run \(name) your text`), reply to a message with `/run \(name)`, or run it inside a thread."
            )
        }
        let context = RunContext(
            input: input, thread: event.threadText, tier: request.tier, k: request.k, language: request.language,
            customCommands: Dictionary(request.customs.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }), userName: event.userName)
        let started = ContinuousClock.now
        // A private run shows no progress: the progress line is a message in the channel, and
        // it would show the channel what runs while only the caller may see the result.
        let isPrivate = request.isPrivate || chain.blocks.contains(.output(isPrivate: true))
        let shown: @Sendable (RunProgress) async -> Void = { step in if !isPrivate { await progress(step) } }
        let runner = ChainRunner(tribunal: tribunal, limits: configuration.chainLimits) { text, result in
            self.recordConsensus(result, claim: text, origin: .verify, request)
        }
        let outcome = await runner.run(chain, context: context, writingTitle: "Chain \(name)", progress: shown)
        let reply = Self.chainReply(name, outcome, isPrivate: request.isPrivate)
        record(request, command: "run \(name)", reply: reply, consensus: outcome.lastVerification, elapsed: started.duration(to: .now))
        return reply
    }

    static func chainReply(_ name: String, _ outcome: ChainOutcome, isPrivate: Bool) -> Reply {
        let footer = outcome.lastVerification.map(AgreementFooter.init)
        switch outcome.status {
        case .completed:
            return Reply(
                kind: .result, title: "Chain \(name)", body: outcome.text, footer: footer, notes: outcome.log, isPrivate: isPrivate || outcome.isPrivate,
                models: outcome.models)
        case .stopped(let why):
            return Reply(kind: .error, title: "Chain \(name) stopped", body: why, footer: footer, notes: outcome.log, isPrivate: true)
        case .failed(let error):
            return Reply(kind: .error, title: "Chain \(name) failed", body: error.userMessage, footer: footer, notes: outcome.log, isPrivate: true)
        }
    }
}
