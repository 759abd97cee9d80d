import RelayCore
import RelayPipeline
import RelayTestSupport
import Synchronization
import Testing

@Suite("Relay: chains, custom commands, settings, history")
struct RelayTeamTests {
    @Test func chainsSaveListShowRunExportDelete() async throws {
        try await RelayHarness.with { relay in
            let saved = await relay.send("/chain save polish = input -> grammar > rewrite:professional > verify:80 > output")
            #expect(saved.body.contains("Saved chain `polish`: `input > grammar > rewrite:professional > verify:80 > output`"))
            #expect(await relay.send("/chain list").body.contains("`polish` = `input > grammar > rewrite:professional > verify:80 > output` (by ada)"))
            #expect(await relay.send("/chain show polish").body.contains("Created by ada"))

            let progress = Mutex<[String]>([])
            let run = await relay.send("/run polish we has shipped") { p in progress.withLock { $0.append(p.line) } }
            #expect(run.kind == .result)
            #expect(run.body == "[rewrite:professional@cheap] [grammar@cheap] we has shipped")
            #expect(run.footer?.percent == 82)
            #expect(progress.withLock { $0 }.first == "Running… 1/5 (input)")
            #expect(progress.withLock { $0 }.last == "Running… 5/5 (output)")

            #expect(await relay.send("/chain export").body.hasPrefix("polish = input > grammar > rewrite:professional > verify:80 > output"))
            #expect(await relay.send("/chain delete polish").body == "Deleted chain `polish`.")
            let gone = await relay.send("/run polish x")
            #expect(gone.kind == .error)
            #expect(gone.body.contains("There is no chain `polish`"))
        }
    }

    @Test func aChainThatFailsItsGateReportsWhereAndWhy() async throws {
        try await RelayHarness.with(tribunal: ScriptedTribunal(agreement: { _, _ in 0.3 })) { relay in
            await relay.send("/chain save strict = grammar > verify:90 > translate:fr")
            let reply = await relay.send("/run strict hello")
            #expect(reply.kind == .error)
            #expect(reply.title == "Chain strict stopped")
            #expect(reply.body.contains("Stopped at block 2 (`verify:90`): agreement 30% is below 90%"))
            #expect(reply.footer?.percent == 30)
        }
    }

    @Test func saveErrorsNameTheBlockAndColumn() async throws {
        try await RelayHarness.with { relay in
            let reply = await relay.send("/chain save bad = input > verify:abc")
            #expect(reply.kind == .error)
            #expect(
                reply.body == "Chain `bad` not saved. Block 2 at column 16: `verify` expects an agreement threshold from 50 to 100 (`verify:80`), found `abc`.")
            #expect(await relay.send("/chain list").body.contains("No chains yet"))
        }
    }

    @Test func onlyAdminsChangeTheTeamsChainsAndCommandsEveryoneRunsThem() async throws {
        try await RelayHarness.with { relay in
            await relay.send("/chain save mine = grammar", user: "ada")
            let other = await relay.send("/chain save mine = explain", user: "bob")
            #expect(other.kind == .error)
            #expect(other.body.hasPrefix("Only this team's admins can save the team's chains. Admins are:"))
            #expect(other.body.contains("`/admin grant @name`"))
            #expect(await relay.send("/chain delete mine", user: "bob").body.hasPrefix("Only this team's admins can delete the team's chains."))
            #expect(await relay.send("/chain import x = grammar", user: "bob").body.hasPrefix("Only this team's admins can import chains."))
            #expect(await relay.send("/command add eli5 {input}", user: "bob").body.hasPrefix("Only this team's admins can add custom commands."))
            #expect(await relay.send("/command add eli5 Explain: {input}", user: "ada").kind == .info)
            #expect(await relay.send("/command remove eli5", user: "bob").body.hasPrefix("Only this team's admins can remove custom commands."))
            #expect(await relay.send("/eli5 gravity", user: "bob").body == "[freeform@cheap] Explain: gravity")  // anyone can run
            #expect(await relay.send("/settings channel lang fr", user: "bob").body.hasPrefix("Only this team's admins can change this channel's settings"))
            #expect(await relay.send("/settings channel reset", user: "bob").body.hasPrefix("Only this team's admins can change this channel's settings"))
            #expect(await relay.send("/settings lang fr", user: "bob").kind == .info)  // one's own settings stay one's own
            #expect(await relay.send("/chain list", user: "bob").body.contains("`mine`"))
            #expect(await relay.send("/run mine x", user: "bob").body == "[grammar@cheap] x")  // anyone can run
            #expect(await relay.send("/chain save mine = explain", user: "root", admin: true).kind == .info)
            #expect(await relay.send("/chain show mine").body.contains("`mine` = `explain`"))
        }
    }

    @Test func importIsAllOrNothing() async throws {
        try await RelayHarness.with { relay in
            let bad = await relay.send("/chain import a = grammar\nb = nonsense > output")
            #expect(bad.kind == .error)
            #expect(bad.body.contains("Nothing imported: line 2"))
            #expect(bad.body.contains("unknown block `nonsense`"))
            let good = await relay.send("/chain import a = grammar\n\nb = explain > output")
            #expect(good.body == "Imported 2 chains: `a` (new), `b` (new).")
            #expect(await relay.send("/chain show b").body.contains("explain > output"))
            // Importing again says which chains it overwrote.
            let again = await relay.send("/chain import b = grammar > output\nc = explain")
            #expect(again.body == "Imported 2 chains: `b` (replaced), `c` (new).")
        }
    }

    @Test func chainLimitsPerTeamAreEnforced() async throws {
        try await RelayHarness.with(configuration: RelayConfiguration(maxChainsPerTeam: 1)) { relay in
            await relay.send("/chain save one = grammar")
            let second = await relay.send("/chain save two = grammar")
            #expect(second.kind == .error)
            #expect(second.body.contains("the limit"))
        }
    }

    @Test func customCommandsAddRunListRemove() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/command add eli5 Explain like I'm five, {user}: {input}").body == "Added `/eli5`. Try `/eli5 <text>`.")
            #expect(await relay.send("/eli5 black holes").body == "[freeform@cheap] Explain like I'm five, ada: black holes")
            #expect(await relay.send("/eli5", repliedTo: "gravity").body.hasSuffix("ada: gravity"))
            let missing = await relay.send("/eli5")
            #expect(missing.kind == .error && missing.body.contains("`/eli5` needs"))
            #expect(await relay.send("/command list").body.contains("`/eli5`"))
            #expect(await relay.send("/help").body.contains("This team's commands: /eli5"))
            // A custom command can be a chain block.
            await relay.send("/chain save kid = grammar > eli5")
            #expect(await relay.send("/run kid atoms").body == "[freeform@cheap] Explain like I'm five, ada: [grammar@cheap] atoms")
            #expect(await relay.send("/command remove eli5", user: "bob").kind == .error)
            #expect(await relay.send("/command remove eli5").body == "Removed `/eli5`.")
            #expect(await relay.send("/eli5 x").body.contains("Unknown command `/eli5`"))
            // The chain that used it now says why it cannot run.
            #expect(await relay.send("/run kid atoms").body.contains("can no longer run"))
        }
    }

    @Test func customCommandsCannotShadowBuiltinsAndRespectLimits() async throws {
        try await RelayHarness.with(configuration: RelayConfiguration(maxCustomCommandsPerTeam: 1)) { relay in
            #expect(await relay.send("/command add translate x {input}").body.contains("built-in"))
            #expect(await relay.send("/command add grammar x {input}").body.contains("built-in"))
            #expect(await relay.send("/command add verify x {input}").body.contains("built-in"))
            let long = String(repeating: "a", count: 2001)
            #expect(await relay.send("/command add big \(long)").body.contains("2001 characters; the limit is 2000"))
            #expect(await relay.send("/command add odd Hi {name}: {input}").body.contains("Unknown placeholder `{name}`"))
            #expect(await relay.send("/command add one {input}").kind == .info)
            #expect(await relay.send("/command add two {input}").body.contains("the limit"))
        }
    }

    @Test func settingsShowSetAndResetPerUserAndChannel() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/settings lang fr").body == "Your lang is now French (fr).")
            #expect(await relay.send("/settings channel tier mid", user: "bob").kind == .error)  // not an admin
            #expect(await relay.send("/settings channel tier mid", admin: true).body == "This channel's tier is now mid.")
            let shown = await relay.send("/settings", user: "bob")
            #expect(shown.body.contains("tier: mid — from this channel"))
            #expect(shown.body.contains("lang: English (en) — from default"))
            #expect(await relay.send("/settings lang reset").body == "Your lang is reset to the default.")
            #expect(await relay.send("/settings").body.contains("lang: English (en) — from default"))
        }
    }

    /// `/settings [channel] reset`, as `/help settings` says: every key of that scope back to the default.
    @Test func settingsResetClearsEveryKeyOfItsScope() async throws {
        try await RelayHarness.with { relay in
            await relay.send("/settings lang fr")
            await relay.send("/settings tier mid")
            await relay.send("/settings channel retention metadata", admin: true)
            #expect(await relay.send("/settings reset").body == "Your lang and tier are reset to the default.")
            let shown = await relay.send("/settings").body
            #expect(shown.contains("lang: English (en) — from default"), "\(shown)")
            #expect(shown.contains("tier: cheap — from default"), "\(shown)")
            #expect(shown.contains("this channel's (metadata)"), "the channel's settings are not the user's: \(shown)")
            #expect(await relay.send("/settings reset").body == "Your settings were already all at their defaults.")
            #expect(await relay.send("/settings channel reset", user: "bob").kind == .error)  // not an admin
            #expect(await relay.send("/settings channel reset", admin: true).body == "This channel's retention is reset to the default.")
            #expect(await relay.send("/settings").body.contains("this channel's (unset)"))
            #expect(await relay.send("/help settings").body.contains("/settings [channel] reset"))
        }
    }

    @Test func historyKeepsWhatRetentionAllows() async throws {
        try await RelayHarness.with { relay in
            await relay.send("/fix teh cat")
            await relay.send("/tribunal sky is blue")
            let full = await relay.send("/history")
            #expect(full.body.contains("fix · ok"))
            #expect(full.body.contains("[grammar@cheap] teh cat"))
            // The score in the reply's words (the scripted backend scores agreement).
            #expect(full.body.contains("tribunal · ok · Agreement 82% · 3/3 models"), "\(full.body)")

            await relay.send("/settings retention metadata")
            await relay.send("/fix secret text")
            let entries = try await relay.store.history(team: "t", user: "ada", limit: 10)
            #expect(entries.first?.command == "fix")
            #expect(entries.first?.resultText == nil && entries.first?.commandLine == nil)

            await relay.send("/settings retention off")
            await relay.send("/fix not kept")
            #expect(try await relay.store.history(team: "t", user: "ada", limit: 10).count == 3)
            // Another user's history is their own.
            #expect(await relay.send("/history", user: "bob").body.hasPrefix("No results yet"))
        }
    }

    /// `/history last PAGE` (issue 47, point 8): the last result whole, a page at a time.
    @Test func historyLastShowsTheLastResultWholeAPageAtATime() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/history last").body.hasPrefix("No results yet"))
            await relay.send("/fix teh cat")
            let last = await relay.send("/history last")
            #expect(last.kind == .result && last.isPrivate)
            #expect(last.title == "Your last result · fix")
            #expect(last.body.contains("[grammar@cheap] teh cat"))
            #expect(last.notes.isEmpty, "one page: no next")
            #expect(await relay.send("/history last 2").body.contains("has 1 page: `/history last 1` is the last one"))

            await relay.send("/settings retention metadata")
            await relay.send("/fix secret text")
            #expect(await relay.send("/history last").body.contains("kept without its text (retention `metadata`)"))
        }
    }
}

@Suite("Long replies: cut for the chat, read on in pages")
struct LongReplyTests {
    @Test func pagesAreFixedStretchesOfTheText() throws {
        let text = String(repeating: "a", count: LongReply.pageCharacters * 2 + 5)
        #expect(LongReply.page(1, of: text)?.pages == 3)
        #expect(LongReply.page(3, of: text)?.text.count == 5)
        #expect(LongReply.page(4, of: text) == nil)
        #expect(LongReply.page(0, of: text) == nil)
        #expect(LongReply.page(1, of: "")?.pages == 1)
        #expect(LongReply.page(holding: LongReply.pageCharacters - 1) == 1)
        #expect(LongReply.page(holding: LongReply.pageCharacters) == 2)
    }

    @Test func aCutEndsAtAWordAndNamesThePageThatHoldsTheRest() {
        let reply = Reply(kind: .result, body: String(repeating: "word ", count: 4_000), notes: ["answered by a"])
        let cut = LongReply.cut(reply, keeping: 10_002)
        #expect(cut.body.hasSuffix("word …"))
        #expect(cut.body.count == 9_999 + 2)
        #expect(cut.notes.first == "answered by a")
        #expect(cut.notes.last?.contains("reads on with `/history last 2`") == true)
        // The relay's own long texts are not kept in history: no page to point at.
        let export = LongReply.cut(Reply.info(String(repeating: "line\n", count: 4_000)), keeping: 10_000, maxParts: 6)
        #expect(export.notes.last == "Cut here: the whole answer is longer than 6 messages.")
    }
}
