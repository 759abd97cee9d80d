import RelayCore
import RelayTestSupport
import RelayTribunal
import Testing

@Suite("quick → POST /keyboard/quick")
struct QuickTests {
    @Test func translateSendsTheLanguageCodeAndDecodesTheAnswer() async throws {
        try await withTribunal { h in
            let french = try #require(Language.lookup("fr"))
            let result = try await h.client.quick(QuickRequest(action: .translate(to: french), text: "Good morning"))
            #expect(result.text == "[translate:fr] Good morning")
            #expect(result.model == "fake-mini")
            #expect(result.elapsed == .milliseconds(10))

            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath))
            #expect(sent.method == "POST")
            #expect(sent["text"] == "Good morning")
            #expect(sent["action"] == "translate")
            #expect(sent["target_lang"] == "fr")
            #expect(sent["style"] == "")
            #expect(sent.header("content-type") == "application/json")
        }
    }

    @Test func translateToALanguageTheServerTableLacksSendsItsName() async throws {
        try await withTribunal { h in
            let filipino = try #require(Language.lookup("fil"))
            let result = try await h.client.quick(QuickRequest(action: .translate(to: filipino), text: "Salamat"))
            #expect(result.text == "[translate:Filipino] Salamat")
            #expect(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath)?["target_lang"] == "Filipino")
        }
    }

    @Test func rewriteWithoutStyleSendsEmptyStyleWhichTheServerReadsAsClearer() async throws {
        try await withTribunal { h in
            let clearer = try await h.client.quick(QuickRequest(action: .rewrite(style: nil), text: "pls fix asap"))
            #expect(clearer.text == "[rewrite:clearer] pls fix asap")
            #expect(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath)?["style"] == "")

            let formal = try await h.client.quick(QuickRequest(action: .rewrite(style: .formal), text: "hey"))
            #expect(formal.text == "[rewrite:formal] hey")
            let sent = await h.fake.lastRequest(path: FakeRheaTribunal.quickPath)
            #expect(sent?["action"] == "rewrite")
            #expect(sent?["style"] == "formal")
        }
    }

    @Test(arguments: [QuickAction.grammar, .summarize, .explain, .freeform])
    func directActionsMapOneToOne(action: QuickAction) async throws {
        try await withTribunal { h in
            let result = try await h.client.quick(QuickRequest(action: action, text: "some text"))
            #expect(result.text == "[\(action.name)] some text")
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath))
            #expect(sent["action"]?.stringValue == action.name)
            #expect(sent["text"] == "some text")
        }
    }

    @Test func extractIsSentAsFreeformWithAnInstruction() async throws {
        try await withTribunal { h in
            let text = "Ana ships the release on Friday. The budget is 10k."
            let result = try await h.client.quick(QuickRequest(action: .extract, text: text))
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath))
            #expect(sent["action"] == "freeform")
            let prompt = try #require(sent["text"]?.stringValue)
            #expect(prompt.contains("key facts"))
            #expect(prompt.contains("action items"))
            #expect(prompt.contains("bulleted list"))
            #expect(prompt.hasSuffix(text))
            #expect(result.text.hasPrefix("[freeform] "))
        }
    }

    /// The gateway fixes `/keyboard/quick` to its cheap tier and ignores unknown fields; a relay
    /// serving the API reads `tier`, so an escalated chain block runs at the tier it escalated to.
    @Test func tierIsSentInTheGatewaysVocabularyForARelayThatServesTheAPI() async throws {
        try await withTribunal { h in
            _ = try await h.client.quick(QuickRequest(action: .grammar, text: "their going", tier: .frontier))
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath))
            #expect(sent["tier"] == "expensive")
            #expect(Set(sent.body?.objectValue?.keys.map { $0 } ?? []) == ["text", "action", "target_lang", "style", "tier"])
        }
    }

    @Test func overLongTextIsRejectedWithoutCallingTheServer() async throws {
        try await withTribunal { h in
            let text = String(repeating: "a", count: 5001)
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .summarize, text: text)) })
            guard case .rejected(let detail) = error else {
                Issue.record("expected .rejected, got \(error)")
                return
            }
            #expect(detail.contains("5001"))
            #expect(detail.contains("5000"))
            expectPresentable(error)
            #expect(await h.fake.requestCount() == 0)
        }
    }

    @Test func extractCountsItsInstructionAgainstTheLimit() async throws {
        try await withTribunal { h in
            let text = String(repeating: "b", count: 4990)
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .extract, text: text)) })
            guard case .rejected(let detail) = error else {
                Issue.record("expected .rejected, got \(error)")
                return
            }
            #expect(detail.contains("4990"))
            #expect(await h.fake.requestCount() == 0)
        }
    }

    @Test func errorTextIn200IsAProviderFailure() async throws {
        try await withTribunal { h in
            await h.fake.failProviderNext(path: FakeRheaTribunal.quickPath)
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .grammar, text: "x")) })
            #expect(error == .providerFailed(detail: "All cheap tier candidates failed. Last error: fake provider timed out"))
            expectPresentable(error)
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.quickPath) == 1)
        }
    }

    @Test func quickNeedsNoCredentials() async throws {
        try await withTribunal { h in
            _ = try await h.client.quick(QuickRequest(action: .explain, text: "TCP"))
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.quickPath))
            #expect(sent.header("authorization") == nil)
            #expect(sent.header("x-api-key") == nil)
        }
    }
}
