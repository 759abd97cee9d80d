import RelayCore
import Testing

/// Issue 13, point 3: the relay's own Rhea client, pointed at a relay that serves the Rhea API
/// over a council of fake models, gives the same replies as that council used directly — the
/// same text, titles, verdicts, agreement, model counts and dissent lines; only times differ.
@Suite("Rhea API served by the relay: the same replies as the council")
struct ServedAPIRoundTripTests {
    /// Each scenario: commands in order, and which cheap judges disagree before they run.
    static let scenarios: [(name: String, dissent: Bool, commands: [String])] = [
        ("quick actions", false, ["/fix teh cat", "/translate fr Good morning", "/rewrite formal hey, send it over", "/explain TCP slow start"]),
        ("a unanimous tribunal", false, ["/tribunal --k 3 Water boils at 100 °C at sea level"]),
        ("a tribunal with a dissenter", true, ["/tribunal --k 3 Coffee is healthy", "/factcheck --k 3 The Eiffel Tower is in Rome"]),
        (
            "a chain with a verify gate", true,
            [
                "/chain save polish = input > grammar > rewrite:formal > verify:80 > output", "/run polish we has shipped",
                "/chain save careful = grammar > verify:80 escalate > output", "/run careful its fine",
            ]
        ),
    ]

    @Test(arguments: scenarios.indices)
    func sameReplies(scenario index: Int) async throws {
        let scenario = Self.scenarios[index]
        let direct = try await Self.replies(.council, dissent: scenario.dissent, commands: scenario.commands)
        let served = try await Self.replies(.servedAPI, dissent: scenario.dissent, commands: scenario.commands)
        #expect(direct.count == scenario.commands.count)
        for (command, (council, api)) in zip(scenario.commands, zip(direct, served)) {
            #expect(api == council, "\(scenario.name): \(command)")
        }
        // The scenario did exercise what it names.
        if scenario.dissent, let tribunal = direct.first(where: { $0.footer != nil && !($0.footer?.dissent.isEmpty ?? true) }) {
            #expect(tribunal.footer?.dissent.isEmpty == false)
        }
    }

    static func replies(_ kind: BackendKind, dissent: Bool, commands: [String]) async throws -> [Reply] {
        try await BackendUnderTest.withRelay(kind) { relay, backend in
            if dissent { await backend.setTier(.cheap, agreeing: false) }
            var replies: [Reply] = []
            for command in commands { replies.append(normalized(await relay.send(command))) }
            return replies
        }
    }

    /// Only times may differ: a served council says what its score means (`score_meaning`), so the
    /// client shows its probability as a probability, with how many agreed (`agreement_score`).
    static func normalized(_ reply: Reply) -> Reply {
        var reply = reply
        reply.footer?.elapsed = .zero
        reply.notes = reply.notes.map { $0.replacing(/\d+(\.\d+)? ?s\b/, with: "N s") }
        return reply
    }
}
