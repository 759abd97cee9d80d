import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 45, point 2: chains and custom commands, listed, edited with the chat's own checks (a
/// refusal shown beside what was typed), imported and exported.
@Suite("Console: chains and custom commands")
struct ConsoleChainsTests {
    static func post(_ client: any TestClientProtocol, _ path: String, cookie: String, _ fields: [String: String]) async throws -> TestResponse {
        try await client.execute(
            uri: "/console/test/T1/\(path)", method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
            body: form(fields))
    }

    @Test func aChainIsSavedRefusedWithItsErrorEditedImportedExportedAndDeleted() async throws {
        let harness = ConsoleHarness()
        try await harness.test { client in
            let cookie = try await ConsoleOverviewTests.signedIn(harness, client)
            let empty = try await client.execute(uri: "/console/test/T1/chains", method: .get, headers: [.cookie: cookie])
            #expect(empty.status == .ok && empty.text.contains("No chains yet."))
            let csrf = String(try #require(empty.text.firstMatch(of: /name="csrf" value="([A-Za-z0-9_-]+)"/)?.1))

            // A mistake: refused with the chat's own words, what was typed kept in the form.
            let wrong = try await Self.post(client, "chains/save", cookie: cookie, ["csrf": csrf, "name": "polish", "source": "input > gramar > output"])
            #expect(wrong.status == .badRequest)
            #expect(wrong.text.contains(#"id="error""#) && wrong.text.contains("Chain <code>polish</code> not saved."), "\(wrong.text)")
            #expect(wrong.text.contains(#"value="input &gt; gramar &gt; output""#))
            #expect(try await harness.store.chains(team: "T1").isEmpty)

            let saved = try await Self.post(client, "chains/save", cookie: cookie, ["csrf": csrf, "name": "polish", "source": "input > grammar > output"])
            #expect(saved.status == .ok && saved.text.contains(#"id="notice""#), "\(saved.text)")
            #expect(try await harness.store.chain(team: "T1", name: "polish")?.source == "input > grammar > output")
            // Edited in place.
            _ = try await Self.post(
                client, "chains/save", cookie: cookie, ["csrf": csrf, "name": "polish", "source": "input > grammar > rewrite:formal > output"])
            #expect(try await harness.store.chain(team: "T1", name: "polish")?.source == "input > grammar > rewrite:formal > output")

            let imported = try await Self.post(
                client, "chains/import", cookie: cookie,
                ["csrf": csrf, "text": "short = input > rewrite:shorter > output\nkind = input > rewrite:friendly > output"])
            #expect(imported.status == .ok, "\(imported.text)")
            let exported = try await client.execute(uri: "/console/test/T1/chains/export", method: .get, headers: [.cookie: cookie])
            #expect(exported.headers[.contentType] == "text/plain; charset=utf-8")
            #expect(
                exported.text
                    == "kind = input > rewrite:friendly > output\npolish = input > grammar > rewrite:formal > output\nshort = input > rewrite:shorter > output\n"
            )

            _ = try await Self.post(client, "chains/delete", cookie: cookie, ["csrf": csrf, "name": "short"])
            #expect(try await harness.store.chains(team: "T1").map(\.name) == ["kind", "polish"])
            // Past what a form may send: refused, saying so.
            let huge = try await Self.post(client, "chains/import", cookie: cookie, ["csrf": csrf, "text": String(repeating: "x", count: 300_000)])
            #expect(huge.status == .contentTooLarge && huge.text.contains("A form may send at most 256 KB"), "\(huge.status)")
            // Without the session's token, nothing changes.
            let forged = try await Self.post(client, "chains/delete", cookie: cookie, ["csrf": "x", "name": "kind"])
            #expect(forged.status == .forbidden)
            #expect(try await harness.store.chains(team: "T1").count == 2)
        }
    }

    @Test func aCustomCommandIsAddedRefusedWithItsErrorAndRemoved() async throws {
        let harness = ConsoleHarness()
        try await harness.test { client in
            let cookie = try await ConsoleOverviewTests.signedIn(harness, client)
            let page = try await client.execute(uri: "/console/test/T1/chains", method: .get, headers: [.cookie: cookie])
            let csrf = String(try #require(page.text.firstMatch(of: /name="csrf" value="([A-Za-z0-9_-]+)"/)?.1))
            let builtin = try await Self.post(client, "commands/add", cookie: cookie, ["csrf": csrf, "name": "translate", "template": "Say {input}"])
            #expect(builtin.status == .badRequest && builtin.text.contains("is a built-in command or chain block"), "\(builtin.text)")
            #expect(builtin.text.contains(#"value="Say {input}""#))
            let added = try await Self.post(
                client, "commands/add", cookie: cookie, ["csrf": csrf, "name": "boss", "template": "Summarize for a manager: {input}"])
            #expect(added.status == .ok, "\(added.text)")
            #expect(added.text.contains("<td>/boss</td><td>Summarize for a manager: {input}</td>"))
            _ = try await Self.post(client, "commands/remove", cookie: cookie, ["csrf": csrf, "name": "boss"])
            #expect(try await harness.store.customCommands(team: "T1").isEmpty)
        }
    }
}
