import RelayCore
import Testing

/// The runner, verify (with escalate), chains and /tribunal behave the same on the Rhea
/// gateway and on the council: every scenario runs against both.
@Suite("Same behaviour on both backends")
struct BackendParityTests {
    @Test(arguments: BackendKind.allCases)
    func tribunalRepliesWithAgreementAndModelCounts(kind: BackendKind) async throws {
        try await BackendUnderTest.withRelay(kind) { relay, _ in
            let reply = await relay.send("/tribunal --k 3 Water boils at 100 °C at sea level")
            #expect(reply.kind == .result, "\(reply.body)")
            #expect(!reply.body.isEmpty)
            #expect(reply.footer?.answered == 3)
            #expect(reply.footer?.asked == 3)
            #expect((reply.footer?.percent ?? 0) >= 80)
            // The council says how likely its verdict is right, and how many agreed (issue 14);
            // so does a relay serving it (`score_meaning`); the gateway's number is agreement.
            if kind == .council || kind == .servedAPI {
                #expect(reply.footer?.scoreMeaning == .probabilityRight)
                #expect(reply.footer?.agreeing == 3)
                #expect(reply.footer?.summary.contains("likely right · 3 of 3 agree") == true)
            } else {
                #expect(reply.footer?.scoreMeaning == .agreement)
            }
        }
    }

    @Test(arguments: BackendKind.allCases)
    func quickActionsAnswerWithTheText(kind: BackendKind) async throws {
        try await BackendUnderTest.withRelay(kind) { relay, _ in
            let reply = await relay.send("/fix teh cat")
            #expect(reply.kind == .result)
            #expect(reply.body.contains("teh cat"))
            #expect(reply.title == "Fixed")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aVerifyGatePassesWhenModelsAgreeAndStopsWhenTheyDoNot(kind: BackendKind) async throws {
        try await BackendUnderTest.withRelay(kind) { relay, backend in
            _ = await relay.send("/chain save polish = input > grammar > model:cheap \"Polish: {input}\" > rewrite:formal > verify:80 > output")
            let passed = await relay.send("/run polish we has shipped")
            #expect(passed.kind == .result, "\(passed.body)")
            #expect(passed.body.contains("we has shipped"))
            #expect((passed.footer?.percent ?? 0) >= 80)

            await backend.setTier(.cheap, agreeing: false)
            let stopped = await relay.send("/run polish we has shipped")
            #expect(stopped.kind == .error)
            #expect(stopped.title == "Chain polish stopped")
            #expect(stopped.body.contains("Stopped at block 5 (`verify:80`)"))
            #expect(stopped.body.contains("below 80%"))
        }
    }

    /// Models that agree a claim is false do not pass a verify gate, however high their
    /// agreement: on the gateway the verdict comes from the models' stances (issue 13, point 4).
    @Test(arguments: BackendKind.allCases)
    func aVerifyGateStopsWhenTheModelsAgreeTheClaimIsFalse(kind: BackendKind) async throws {
        try await BackendUnderTest.withRelay(kind) { relay, backend in
            await backend.rejectEverything()
            let tribunal = await relay.send("/tribunal --k 3 The moon is made of cheese")
            #expect(tribunal.kind == .result, "\(tribunal.body)")
            #expect(tribunal.footer?.verdict == .false)
            #expect((tribunal.footer?.percent ?? 0) >= 80)

            _ = await relay.send("/chain save check = input > verify:80 > output")
            let stopped = await relay.send("/run check The moon is made of cheese")
            #expect(stopped.kind == .error, "\(stopped.body)")
            #expect(stopped.title == "Chain check stopped")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func escalateRetriesOneTierHigher(kind: BackendKind) async throws {
        try await BackendUnderTest.withRelay(kind) { relay, backend in
            await backend.setTier(.cheap, agreeing: false)
            _ = await relay.send("/chain save careful = grammar > verify:80 escalate > output")
            let reply = await relay.send("/run careful its fine")
            #expect(reply.kind == .result, "\(reply.body)")
            #expect(reply.notes.contains { $0.contains("escalating to mid") })
            #expect(reply.notes.contains { $0.contains("passed") && $0.contains("mid") })

            await backend.setTier(.mid, agreeing: false)
            await backend.setTier(.frontier, agreeing: false)
            let exhausted = await relay.send("/run careful its fine")
            #expect(exhausted.kind == .error)
            #expect(exhausted.body.contains("even at the top tier"))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func factCheckingARepliedToMessageWorks(kind: BackendKind) async throws {
        try await BackendUnderTest.withRelay(kind) { relay, _ in
            let reply = await relay.send("/factcheck", repliedTo: "The Eiffel Tower is in Paris")
            #expect(reply.kind == .result)
            #expect(reply.footer != nil)
        }
    }
}
