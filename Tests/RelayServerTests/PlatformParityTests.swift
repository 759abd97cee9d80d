import Foundation
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
            // answer would otherwise show twice (Telegram: issue 28, point 3; Teams likewise).
            #expect(seen.progress.allSatisfy { $0 == "⏳ Working on \(kind.sigil)translate…" }, "\(seen.progress)")
            #expect(seen.progress.isEmpty || kind == .telegram || kind == .teams || kind == .xmpp, "\(seen.progress)")
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

    /// A console sign-in link (a secret) asked for in the team's shared room reaches the asker
    /// alone, on every platform: never in the room, not even as a fallback (issue 45, point 1).
    @Test(arguments: PlatformKind.allCases)
    func anAdminsConsoleLinkReachesThemAlone(kind: PlatformKind) async throws {
        try await withPlatform(kind, console: true) { platform in
            let seen = try await platform.send("/rhea admin console")
            #expect(seen.finals.count == 1, "\(seen.finals)")
            #expect(seen.text.contains("https://relay.example.com/console/signin?t="), "\(seen.finals)")
            #expect(seen.isPrivate)
            #expect(seen.publicMessages == 0)
            #expect(!seen.notices.contains { $0.contains("signin") }, "\(seen.notices)")
        }
    }

    /// Teams: where the asker's personal chat cannot be made (the app is not installed for
    /// them), the link is not posted in the channel instead; they are told there why it did
    /// not come (Telegram's and Mattermost's cases: TelegramChatTests, MattermostEndToEndTests).
    @Test func aConsoleLinkIsNeverPostedInTheTeamsChannelWhenThePersonalChatIsRefused() async throws {
        try await withPlatform(.teams, console: true) { platform in
            let teams = try #require(platform as? TeamsUnderTest)
            teams.relay.framework.refusesPersonalChats = true
            let seen = try await platform.send("/rhea admin console")
            #expect(!seen.finals.contains { $0.contains("/console/signin") }, "\(seen.finals)")
            #expect(seen.finals.contains { $0.contains("Ask again in a direct message with the bot") }, "\(seen.finals)")
        }
    }

    /// Matrix's own test has a second person in the room (`MatrixAdminTests`): here the asker made
    /// the room, and so administers it.
    @Test(arguments: PlatformKind.allCases.filter { $0 != .matrix })
    func onlyTheTeamsAdminsChangeWhatTheTeamShares(kind: PlatformKind) async throws {
        try await withPlatform(kind, askerIsAdmin: false) { platform in
            let refused = try await platform.send("/chain save twostep = grammar", delivery: "refused")
            #expect(refused.text.contains("Only this team's admins can save the team's chains."), "\(refused.finals)")
            #expect(refused.text.contains("Admins are:"), "\(refused.finals)")
            let shown = try await platform.send("/rhea admin", delivery: "shown")
            #expect(shown.text.contains("You do not administer this team."), "\(shown.finals)")
            #expect(shown.text.contains("\(kind.rawValue):"), "the entry for the operator's list: \(shown.finals)")
            let listed = try await platform.send("/chain list", delivery: "listed")
            #expect(listed.text.contains("No chains"), "\(listed.finals)")
        }
        try await withPlatform(kind) { platform in
            let shown = try await platform.send("/rhea admin", delivery: "shown")
            #expect(shown.text.contains("You administer this team"), "\(shown.finals)")
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
            #expect(seen.progress.allSatisfy { $0.contains("Running…") || $0.contains("Working on \(kind.sigil)run twostep") }, "\(seen.progress)")
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
            // names commands as its people type them (Matrix and IRC: `!translate`).
            let sigil = kind.sigil
            #expect(seen.text.replacing("`", with: "").contains("Unknown command \(sigil)transalte"), "\(seen.text)")
            #expect(seen.text.contains("\(sigil)translate"), "a suggestion: \(seen.text)")
            #expect(kind.sigil == "/" || !seen.text.contains("/"), "no command a Matrix or IRC client would take as its own: \(seen.text)")
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

    /// Issue 47, point 8: a 300 KB answer (it was 28 Matrix messages) is cut after 8 messages,
    /// ending in " …" and a note naming the page to read on from; `/history last PAGE` then shows
    /// the text that follows, privately and within 8 messages too.
    @Test(arguments: PlatformKind.allCases)
    func aVeryLongAnswerIsCutAfterEightMessagesAndReadOnWithHistoryLast(kind: PlatformKind) async throws {
        try await withPlatform(kind) { platform in
            // 37 500 words of 8 characters: a page (8 000 characters) holds 1 000 whole words.
            let answer = (1...37_500).map { String(format: "w%06d ", $0) }.joined()
            await platform.tribunal.setQuickAnswer { _ in answer }
            let seen = try await platform.send("/ai tell me everything")
            #expect((2...8).contains(seen.finals.count), "\(seen.finals.count) messages")
            // As a reader reads them, whatever order a platform's fake keeps them in.
            let shown = seen.finals.joined(separator: "\n")
            #expect(shown.contains("w000001"))
            #expect(shown.contains(" …"))
            let sigil = kind.sigil
            let note = try #require(shown.firstMatch(of: /reads on with `?([!\/])history last (\d+)/), "\(seen.finals.map { $0.suffix(300) })")
            #expect(String(note.output.1) == sigil)
            let page = try #require(Int(note.output.2))
            // The last word shown: the page named holds the cut.
            let lastShown = try #require(shown.matches(of: /w(\d{6})/).compactMap { Int($0.output.1) }.max())
            #expect(lastShown < 37_500, "cut before the end")
            #expect((lastShown - 1) / 1_000 + 1 == page, "page \(page) holds the cut after word \(lastShown)")

            let more = try await platform.send("/history last \(page)", delivery: "more")
            #expect((1...8).contains(more.finals.count), "\(more.finals.count) messages")
            let pageText = more.finals.joined(separator: " ")
            #expect(more.isPrivate)
            #expect(
                pageText.contains(String(format: "w%06d", lastShown + 1)) || pageText.contains(String(format: "w%06d", page * 1_000)), "\(pageText.prefix(200))"
            )
            #expect(pageText.contains("page \(page) of 38"), "\(pageText.prefix(200))")
        }
    }
}
