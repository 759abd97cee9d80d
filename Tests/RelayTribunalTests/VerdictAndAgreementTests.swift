import RelayCore
import RelayTribunal
import Testing

@Suite("Council: verdict parsing and the agreement formula")
struct VerdictAndAgreementTests {
    @Test(
        "a JSON verdict is found anywhere in the text",
        arguments: [
            (#"{"verdict":"true","confidence":0.9,"answer":"Yes."}"#, Verdict.true, 0.9, "Yes."),
            ("Sure!\n```json\n{\"verdict\": \"false\", \"confidence\": 80, \"answer\": \"No {really}.\"}\n```\nHope this helps.", .false, 0.8, "No {really}."),
            (#"Verdict below {"note": "x"} then {"Verdict": "Partly True", "confidence": "0.6", "answer": "Half."}"#, .partly, 0.6, "Half."),
            (#"{"verdict": true, "confidence": 1, "reason": "Because."}"#, .true, 1.0, "Because."),
            (#"{"verdict": "unknown", "confidence": 0.3, "answer": "?"}"#, .unverifiable, 0.3, "?"),
        ])
    func json(text: String, verdict: Verdict, confidence: Double, answer: String) {
        let parsed = VerdictParser.parse(text)
        #expect(parsed.verdict == verdict)
        #expect(parsed.confidence == confidence)
        #expect(parsed.answer == answer)
    }

    @Test(
        "prose falls back to keywords, negations first",
        arguments: [
            ("I think that is correct, it is true.", Verdict?.some(.true)),
            ("That is not true at all.", .false),
            ("It is partly right.", .partly),
            ("This cannot be verified from public sources.", .unverifiable),
            ("Bananas are yellow.", nil),
            (#"{"verdict": "true", "confidence": "#, .true),  // broken JSON: keywords still see "true"
        ])
    func keywords(text: String, verdict: Verdict?) {
        let parsed = VerdictParser.parse(text)
        #expect(parsed.verdict == verdict)
        #expect(parsed.confidence == nil)
    }

    func ballot(_ model: String, _ verdict: Verdict?, _ confidence: Double?, weight: Double = 1) -> Ballot {
        Ballot(model: model, weight: weight, parsed: ParsedVerdict(verdict: verdict, confidence: confidence, answer: "\(model) says"))
    }

    @Test func agreementIsTheConfidenceWeightedShareOfThePlurality() {
        let outcome = Agreement.compute([ballot("a", .true, 0.9), ballot("b", .true, 0.9), ballot("c", .false, 0.8)])
        #expect(outcome.verdict == .true)
        #expect(abs(outcome.agreement - 1.8 / 2.6) < 1e-9)
        #expect(outcome.dissenters.map(\.model) == ["c"])
        #expect(outcome.supporters.map(\.model) == ["a", "b"])
    }

    @Test func weightsCanOutvoteAHeadcount() {
        let outcome = Agreement.compute([ballot("a", .true, 0.9), ballot("b", .true, 0.9), ballot("c", .false, 0.8, weight: 3)])
        #expect(outcome.verdict == .false)
        #expect(abs(outcome.agreement - 2.4 / 4.2) < 1e-9)
    }

    @Test func answersWithoutAVerdictLowerAgreementButAreNotDissent() {
        let outcome = Agreement.compute([ballot("a", .true, 1), ballot("b", nil, nil)])
        #expect(outcome.verdict == .true)
        #expect(abs(outcome.agreement - 1 / 1.5) < 1e-9)
        #expect(outcome.dissenters.isEmpty)
        let none = Agreement.compute([ballot("a", nil, nil)])
        #expect(none.verdict == nil && none.agreement == 0)
    }

    @Test func tiesGoToMoreVotesThenToTheLessAlarmingVerdict() {
        #expect(Agreement.compute([ballot("a", .false, 0.8), ballot("b", .true, 0.4), ballot("c", .true, 0.4)]).verdict == .true)
        #expect(Agreement.compute([ballot("a", .false, 0.5), ballot("b", .true, 0.5)]).verdict == .true)
    }
}
