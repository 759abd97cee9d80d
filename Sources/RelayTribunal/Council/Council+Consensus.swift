import Foundation
import Logging
public import RelayCore

extension Council {
    /// What one judge did before the deadline.
    enum Vote: Sendable {
        case answered(CouncilModel, ChatCompletion)
        case failed(CouncilModel, ModelCallError)
        case deadline

        /// The judge that voted; nil for the deadline.
        var model: CouncilModel? {
            switch self {
            case .answered(let model, _), .failed(let model, _): model
            case .deadline: nil
            }
        }
    }

    /// k models of the tier, in parallel, each for a JSON verdict. Answers with whoever replied by
    /// the deadline as long as a quorum did; never fails as a whole while a quorum answered.
    public func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try await consensus(request, counting: nil)
    }

    /// The same, telling `onVote` as each judge is done.
    public func consensus(_ request: ConsensusRequest, onVote: @escaping VoteCount) async throws(TribunalError) -> ConsensusResult {
        try await consensus(request, counting: .some(onVote))
    }

    private func consensus(_ request: ConsensusRequest, counting onVote: VoteCount?) async throws(TribunalError) -> ConsensusResult {
        let started = ContinuousClock.now
        // On the injected clock: whoever has not answered by then is cut off, and the chairman
        // writes only with time left before it.
        let deadline = clock.now + configuration.deadline
        let judges = configuration.judges(for: request.tier, k: request.k)
        guard !judges.isEmpty else { throw .notConfigured(detail: "the council has no models; add some under council.models.") }
        let quorum = min(configuration.quorum, judges.count)

        // In the order asked, not the order answered: ties, dissent lines and the judges' list
        // come out the same on every run.
        let votes = await collectVotes(judges, claim: request.claim, until: deadline, onVote: onVote)
        var ballots: [Ballot] = []
        var failures: [(CouncilModel, ModelCallError)] = []
        var judged: [JudgeVote] = []
        var usage: [ModelUsage] = []
        for judge in judges {
            switch Self.vote(of: judge, in: votes) {
            case .answered(_, let completion):
                let parsed = VerdictParser.parse(completion.text)
                usage.append(completion.usage)
                ballots.append(Ballot(model: judge.name, weight: judge.weight, parsed: parsed))
                judged.append(
                    JudgeVote(model: judge.name, verdict: parsed.verdict, confidence: parsed.confidence, answer: parsed.answer, latency: completion.elapsed))
            case .failed(_, let error):
                failures.append((judge, error))
                judged.append(JudgeVote(model: judge.name, answer: "", error: error.publicReason))
            case .deadline, nil:
                failures.append((judge, .cancelled))
                judged.append(JudgeVote(model: judge.name, answer: "", error: ModelCallError.cancelled.publicReason))
            }
        }

        guard ballots.count >= quorum else {
            let reasons = failures.map {
                "\($0.0.name): \($0.1 == .cancelled ? "no answer before the \(Self.seconds(configuration.deadline)) deadline" : $0.1.reason)"
            }
            throw .providerFailed(
                detail: "only \(ballots.count) of \(judges.count) models answered, fewer than the quorum of \(quorum) (\(reasons.joined(separator: "; ")))")
        }

        // With the ledger to learn from, votes weigh by each model's learned record and the score is
        // the probability that the verdict is right; without it, the agreement formula.
        let outcome: Agreement.Outcome
        var scoreMeaning = ScoreMeaning.agreement
        if let reliability {
            outcome = Self.learnedOutcome(ballots, await reliability.refreshed(unwritten: request.unwrittenFactChecks))
            scoreMeaning = .probabilityRight
        } else {
            outcome = Agreement.compute(ballots)
        }
        let (answer, chairmanUsage) = await synthesis(claim: request.claim, outcome: outcome, ballots: ballots, until: deadline)
        if let chairmanUsage { usage.append(chairmanUsage) }
        let dissent = outcome.dissenters.map {
            Dissent(
                model: $0.model, verdict: $0.parsed.verdict,
                reason: Self.oneLine($0.parsed.answer).isEmpty ? "judged it \($0.parsed.verdict?.rawValue ?? "differently")" : Self.oneLine($0.parsed.answer))
        }
        return ConsensusResult(
            answer: answer, verdict: outcome.verdict, agreement: outcome.agreement,
            confidence: outcome.supporters.first.map { _ in outcome.supporters.reduce(0) { $0 + $1.confidence } / Double(outcome.supporters.count) },
            answered: ballots.count, asked: judges.count, dissent: dissent, models: ballots.map(\.model),
            elapsed: started.duration(to: .now), scoreMeaning: scoreMeaning, judges: judged, backend: "council",
            promptsVersion: CouncilPrompts.version, agreeing: outcome.verdict == nil ? 0 : outcome.supporters.count, usage: usage)
    }

    /// The verdict the learned records make most probable, its calibrated probability, and who
    /// gave it (the most accurate first) and who gave another.
    static func learnedOutcome(_ ballots: [Ballot], _ snapshot: CouncilReliability.Snapshot) -> Agreement.Outcome {
        let posterior = snapshot.estimate.posterior(
            ballots.map { JudgedClaim.Vote(model: $0.model, verdict: $0.parsed.verdict, confidence: $0.parsed.confidence) })
        guard let verdict = posterior.verdict else { return Agreement.Outcome(verdict: nil, agreement: 0, dissenters: [], supporters: []) }
        let accuracy = { (ballot: Ballot) in snapshot.estimate.reliability(of: ballot.model).accuracy }
        let supporters = ballots.filter { $0.parsed.verdict == verdict }.sorted { accuracy($0) > accuracy($1) }
        let dissenters = ballots.filter { $0.parsed.verdict != nil && $0.parsed.verdict != verdict }
        let score = snapshot.calibrator.calibrated(posterior.score)
        return Agreement.Outcome(verdict: verdict, agreement: score.isFinite ? min(max(score, 0), 1) : 0, dissenters: dissenters, supporters: supporters)
    }

    /// What `judge` did, if it did anything before the deadline.
    private static func vote(of judge: CouncilModel, in votes: [Vote]) -> Vote? {
        votes.first { $0.model?.name == judge.name }
    }

    /// Asks every judge at once; at the deadline, cancels whoever has not answered.
    private func collectVotes(_ judges: [CouncilModel], claim: String, until deadline: Date, onVote: VoteCount?) async -> [Vote] {
        // Each call's own time limit stays within the deadline (on the transport's real time).
        let callLimit = configuration.deadline
        return await withTaskGroup(of: Vote.self) { group in
            for judge in judges {
                group.addTask {
                    let messages: [ChatMessage] = [.system(CouncilPrompts.judgeSystem), .user(claim)]
                    do throws(ModelCallError) {
                        let completion = try await self.client.complete(
                            judge, messages: messages, temperature: 0.2, maxTokens: AnswerLengths.verdict, timeout: min(self.timeout(for: judge), callLimit))
                        return .answered(judge, completion)
                    } catch {
                        return .failed(judge, error)
                    }
                }
            }
            group.addTask { [clock] in
                try? await clock.sleep(until: deadline)
                return .deadline
            }
            var votes: [Vote] = []
            for await vote in group {
                if case .deadline = vote {
                    if !Task.isCancelled { logger.info("council deadline passed", metadata: ["answered": "\(votes.count)", "asked": "\(judges.count)"]) }
                    group.cancelAll()
                    break
                }
                votes.append(vote)
                if votes.count < judges.count { await onVote?(votes.count, judges.count) }
                logger.debug(
                    "council vote counted", metadata: ["model": "\(vote.model?.name ?? "")", "answered": "\(votes.count)", "asked": "\(judges.count)"])
                if votes.count == judges.count {
                    group.cancelAll()  // stops the deadline timer
                    break
                }
            }
            return votes
        }
    }

    /// The chairman's text when configured and on time; otherwise the most confident plurality
    /// answer (never a single point of failure); with what the chairman's call used.
    private func synthesis(claim: String, outcome: Agreement.Outcome, ballots: [Ballot], until deadline: Date) async -> (String, ModelUsage?) {
        let fallback =
            outcome.supporters.first { !$0.parsed.answer.isEmpty }?.parsed.answer
            ?? ballots.max { $0.mass < $1.mass }?.parsed.answer ?? ""
        guard let name = configuration.chairman, let chairman = configuration.models.first(where: { $0.name == name }) else {
            return (fallback, nil)
        }
        let remaining = deadline.duration(since: clock.now)
        guard remaining > .milliseconds(500) else { return (fallback, nil) }
        let messages = CouncilPrompts.chairman(claim: claim, verdict: outcome.verdict, answers: ballots.map { ($0.model, $0.parsed.verdict, $0.parsed.answer) })
        do throws(ModelCallError) {
            let completion = try await client.complete(
                chairman, messages: messages, temperature: 0.2, maxTokens: AnswerLengths.verdict, timeout: min(timeout(for: chairman), remaining))
            return (completion.text, completion.usage)
        } catch {
            logger.warning("chairman failed; using the most confident plurality answer", metadata: ["model": "\(name)", "reason": "\(error.reason)"])
            return (fallback, nil)
        }
    }

    static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 140 ? String(line.prefix(139)) + "…" : line
    }

    static func seconds(_ duration: Duration) -> String {
        let value = duration.seconds
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
