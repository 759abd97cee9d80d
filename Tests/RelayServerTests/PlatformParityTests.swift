import RelayTestSupport
import RelayTestTags
import Testing

/// The same commands give the same answers on every chat platform, through the real server:
/// each scenario is sent the platform's way (a signed Slack slash command, a signed Discord
/// interaction) and checked on what the platform's fake received, as a person would see it.
@Suite("Same behaviour on every chat platform", .tags(.peers))
struct PlatformParityTests {
    @Test(arguments: PlatformKind.allCases)
    func aQuickActionIsAnsweredOnceWithTheText(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            let seen = try await platform.send("/translate fr Good morning")
            #expect(seen.acknowledgement == 200)
            #expect(seen.finals.count == 1, "\(seen.finals)")
            #expect(seen.text.contains("[translate:fr] Good morning"), "\(seen.text)")
            // No progress, but for the placeholder the answer is edited into where a resent
            // answer would otherwise show twice (Telegram: issue 28, point 3).
            #expect(seen.progress.allSatisfy { $0 == "⏳ Working on /translate…" }, "\(seen.progress)")
            #expect(seen.progress.isEmpty || kind == .telegram, "\(seen.progress)")
            #expect(!seen.isPrivate)
            #expect(await platform.modelRequests(FakeRheaTribunal.quickPath) == 1)
        }
    }

    @Test(arguments: PlatformKind.allCases)
    func aTribunalShowsTheAgreementFooter(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            await platform.tribunal.setDefaultAgreement(0.9)
            let seen = try await platform.send("/tribunal The Moon is made of cheese")
            #expect(seen.finals.count == 1, "\(seen.finals)")
            let agreement = try #require(seen.agreement, "\(seen.text)")
            #expect(agreement.verdict == "true")
            #expect(agreement.percent == 90)
            #expect(seen.text.contains("3/3 models"), "\(seen.text)")
        }
    }

    @Test(arguments: PlatformKind.allCases)
    func aPrivateCommandIsSeenOnlyByTheAsker(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            let seen = try await platform.send("/fix teh cat", private: true)
            #expect(seen.finals.count == 1, "\(seen.finals)")
            #expect(seen.text.contains("[grammar] teh cat"), "\(seen.text)")
            #expect(seen.isPrivate)
            #expect(seen.publicMessages == 0)
        }
    }

    @Test(arguments: PlatformKind.allCases)
    func aChainShowsProgressThenTheResult(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            let saved = try await platform.send("/chain save twostep = grammar > rewrite:formal", delivery: "save")
            #expect(saved.text.contains("Saved"), "\(saved.finals)")
            let seen = try await platform.send("/run twostep teh cat", delivery: "run")
            #expect(seen.acknowledgement == 200)
            #expect(!seen.progress.isEmpty)
            #expect(seen.progress.allSatisfy { $0.contains("Running…") || $0.contains("Working on /run twostep") }, "\(seen.progress)")
            #expect(seen.finals.count == 1, "\(seen.finals)")
            #expect(seen.text.contains("[rewrite:formal] [grammar] teh cat"), "\(seen.text)")
            #expect(!seen.isPrivate)
        }
    }

    @Test(arguments: PlatformKind.allCases)
    func anUnknownCommandIsAnsweredWithAClearError(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            let seen = try await platform.send("/rhea transalte fr Good morning")
            #expect(seen.acknowledgement == 200)
            #expect(seen.finals.count == 1, "\(seen.finals)")
            // As each platform shows code: in backticks, or (Telegram) as a code entity; each
            // names commands as its people type them (Matrix: `!translate`).
            let sigil = kind == .matrix ? "!" : "/"
            #expect(seen.text.replacing("`", with: "").contains("Unknown command \(sigil)transalte"), "\(seen.text)")
            #expect(seen.text.contains("\(sigil)translate"), "a suggestion: \(seen.text)")
            #expect(kind != .matrix || !seen.text.contains("/"), "no command a Matrix client would take as its own: \(seen.text)")
            #expect(seen.isPrivate, "an error is shown to the asker only")
            #expect(await platform.modelRequests(FakeRheaTribunal.quickPath) == 0)
        }
    }

    @Test(arguments: PlatformKind.allCases)
    func aDeliveryReceivedThreeTimesIsAnsweredOnce(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            let seen = try await platform.send("/translate fr Good morning", delivery: "thrice", times: 3)
            #expect(seen.acknowledgement == 200)
            #expect(seen.finals.count == 1, "\(seen.finals)")
            #expect(seen.text.contains("[translate:fr] Good morning"), "\(seen.text)")
            #expect(await platform.modelRequests(FakeRheaTribunal.quickPath) == 1)
        }
    }
}
