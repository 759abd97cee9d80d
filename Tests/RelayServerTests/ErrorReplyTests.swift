import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// Issue 9, point 7: chat shows no internals. A failing backend's address, a file path and the
/// provider's own words stay in the log; the reply in Slack says what failed in the user's
/// terms, with an error id that finds the log line.
@Suite("serve: error replies show an error id, never internals")
struct ErrorReplyTests {
    static let quick = FakeRheaTribunal.quickPath

    /// What a careless backend puts in its error: an internal URL, a file path, raw provider text.
    static let internalURL = "https://models.internal.example:8443/v1"
    static let filePath = "/srv/rhea/app/providers/openai.py"
    static let providerText = "openai.APIError: quota exhausted for org-7f3a"
    static var hostileDetail: String { "upstream \(internalURL) failed at \(filePath), line 42: \(providerText)" }

    /// `7KQ2-M9`: four and two characters of Crockford's base 32.
    static func errorID(in text: String) -> String? {
        text.firstMatch(of: /error id ([0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{2})/).map { String($0.1) }
    }

    @Test func aBackend500ShowsAnErrorIdAndTheLogHoldsTheDetailsUnderIt() async throws {
        try await SlackFakes.with { fakes in
            let logs = LogCapture()
            // Every attempt fails (the harness retries once).
            await fakes.tribunal.failNext(path: Self.quick, status: 500, count: 2, detail: Self.hostileDetail)
            try await fakes.withRelay(fakes.configuration(), logger: logs.logger) { relay in
                let url = relay.slack.makeResponseURL()
                #expect(try await relay.slashCommand("/fix", text: "teh cat", responseURL: url).status == .ok)
                let answer = try #require(await relay.slack.next(responseURL: url))
                let shown = (answer.body?.shownTexts ?? []).joined(separator: "\n")
                let raw = answer.rawBody

                #expect(shown.contains("The AI backend failed"), "\(shown)")
                for secret in [Self.internalURL, "models.internal", Self.filePath, "providers/openai.py", Self.providerText, "quota", "500"] {
                    #expect(!raw.contains(secret), "the reply shows `\(secret)`: \(raw)")
                }
                let id = try #require(Self.errorID(in: shown), "no error id in \(shown)")

                // The log line with that id holds what the reply left out.
                let line = try #require(logs.text.split(separator: "\n").first { $0.contains(id) }, "no log line has \(id)")
                #expect(line.contains(Self.internalURL))
                #expect(line.contains(Self.filePath))
                #expect(line.contains(Self.providerText))
                #expect(line.contains("HTTP 500"))
                #expect(line.contains("T0E2E"), "the line says which team it happened to")
            }
        }
    }

    @Test func anUnreachableBackendShowsAnErrorIdAndNotItsAddress() async throws {
        try await SlackFakes.with { fakes in
            let logs = LogCapture()
            var configuration = fakes.configuration()
            configuration.tribunal.baseURL = "http://127.0.0.1:1"  // port 1 refuses
            try await fakes.withRelay(configuration, logger: logs.logger) { relay in
                let url = relay.slack.makeResponseURL()
                #expect(try await relay.slashCommand("/tribunal", text: "The Moon is made of cheese", responseURL: url).status == .ok)
                let answer = try #require(await relay.slack.next(responseURL: url))
                let shown = (answer.body?.shownTexts ?? []).joined(separator: "\n")
                let raw = answer.rawBody

                #expect(shown.contains("The AI backend could not be reached"), "\(shown)")
                #expect(shown.contains("Try again in a minute"))
                for secret in ["127.0.0.1", ":1", "TRIBUNAL_URL", "connection refused"] {
                    #expect(!raw.contains(secret), "the reply shows `\(secret)`: \(raw)")
                }
                let id = try #require(Self.errorID(in: shown), "no error id in \(shown)")
                let line = try #require(logs.text.split(separator: "\n").first { $0.contains(id) }, "no log line has \(id)")
                #expect(line.contains("http://127.0.0.1:1"))
                #expect(line.contains("connection refused"))
            }
        }
    }

    @Test func twoFailuresGetTwoIds() async throws {
        try await SlackFakes.with { fakes in
            var configuration = fakes.configuration()
            configuration.tribunal.baseURL = "http://127.0.0.1:1"
            try await fakes.withRelay(configuration) { relay in
                var ids: [String] = []
                for text in ["one", "two"] {
                    let url = relay.slack.makeResponseURL()
                    #expect(try await relay.slashCommand("/fix", text: text, responseURL: url).status == .ok)
                    let answer = try #require(await relay.slack.next(responseURL: url))
                    ids.append(try #require(Self.errorID(in: (answer.body?.shownTexts ?? []).joined())))
                }
                #expect(ids[0] != ids[1])
            }
        }
    }
}
