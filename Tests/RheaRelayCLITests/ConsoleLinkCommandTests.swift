import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 45, point 1: the operator's one-time link (`rhea-relay console-link`), signed as `serve`
/// signs them, signs in once to that team's console on a running `serve`.
@Suite("rhea-relay console-link", .tags(.peers))
struct ConsoleLinkCommandTests {
    @Test func theOperatorsLinkSignsInToThatTeamOnceOnServe() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let environment = [
            "CONSOLE_ENABLED": "1", "STORE_PATH": cli.directory.appendingPathComponent("relay.sqlite").path, "TRIBUNAL_URL": "http://127.0.0.1:9",
        ]
        let off = try await cli.run(["console-link", "--team", "T9", "--platform", "slack"], environment: environment)
        #expect(off.status == 2 && off.stderr.contains("console.enabled (CONSOLE_ENABLED) needs publicURL (PUBLIC_URL)"), "\(off.stderr)")

        let server = try await ServeProcess(environment: environment.merging(["PUBLIC_URL": "http://127.0.0.1:1"]) { $1 }, directory: cli.directory)
        do {
            try await Self.linkSignsInOnce(cli: cli, server: server, environment: environment)
        } catch {
            _ = await server.stop()
            throw error
        }
        _ = await server.stop()
    }

    static func linkSignsInOnce(cli: CLIProcess, server: ServeProcess, environment: [String: String]) async throws {
        var environment = environment
        environment["PUBLIC_URL"] = "http://127.0.0.1:\(server.port)"
        let noPlatform = try await cli.run(["console-link", "--team", "T9"], environment: environment)
        #expect(noPlatform.status == 64 && noPlatform.stderr.contains("Name the team's platform with --platform"), "\(noPlatform.stderr)")
        let made = try await cli.run(["console-link", "--team", "T9", "--platform", "slack", "--as", "ops"], environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        let link = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let prefix = "http://127.0.0.1:\(server.port)/console/signin?t="
        #expect(link.hasPrefix(prefix), "\(link)")
        let token = String(link.dropFirst(prefix.count))

        let page = try await server.get("/console/signin?t=\(token)")
        #expect(page.status == 200 && page.body.contains("Sign in as <strong>ops</strong> to the console of <strong>T9</strong> on slack."), "\(page.body)")
        let first = try await Self.signIn(token, port: server.port)
        #expect(first.status == 303 && first.location == "/console/slack/T9", "\(first)")
        #expect(first.cookie?.contains("HttpOnly") == true && first.cookie?.contains("SameSite=Strict") == true)
        let again = try await Self.signIn(token, port: server.port)
        #expect(again.status == 410 && again.cookie == nil)
    }

    static func signIn(_ token: String, port: Int) async throws -> (status: UInt, location: String?, cookie: String?) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/console/signin")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "t=\(token)"))
        // Not followed: the redirect and its cookie are what is checked.
        let client = HTTPClient(configuration: .init(redirectConfiguration: .disallow))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(10))
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return (response.status.code, response.headers.first(name: "Location"), response.headers["Set-Cookie"].first { $0.hasPrefix("rhea_console=") })
    }
}
