import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport

/// A relay with the console on, over an in-memory store and a manual clock, and its routes on a
/// Hummingbird router driven by HummingbirdTesting. `ada` administers team `T1` on `test`.
struct ConsoleHarness {
    static let settings = ConsoleSettings(enabled: true, publicURL: "https://relay.example.com")
    static let admins = try! OperatorAdmins(parsing: "test:T1:ada", platforms: ["test"])

    let relay: Relay
    let store: MemoryStore
    let clock: ManualClock
    let tokens: ConsoleTokens

    init(settings: ConsoleSettings = ConsoleHarness.settings, monthlyBudget: Double? = nil) {
        store = MemoryStore()
        clock = ManualClock(now: Date(timeIntervalSince1970: 1_796_500_000))  // 2026-12-05
        var configuration = RelayConfiguration()
        configuration.operatorAdmins = Self.admins
        configuration.monthlyBudget = monthlyBudget
        var relay = Relay(tribunal: ScriptedTribunal(), store: store, configuration: configuration, clock: clock)
        tokens = ConsoleTokens(relaySecret: "a relay secret of at least thirty-two bytes", settings: settings)
        relay.console = tokens
        self.relay = relay
    }

    /// `/admin console` typed by `user` in team `T1`.
    func ask(_ text: String = "/admin console", user: String = "ada", team: String = "T1") async -> Reply {
        await relay.handle(Event(platform: "test", team: team, channel: "c", user: user, userName: user.capitalized, text: text)) ?? .info("<duplicate>")
    }

    /// The link's path and query, as a browser asks for it.
    static func path(of reply: Reply) -> String? {
        guard let range = reply.body.range(of: #"https://relay\.example\.com(/console/signin\?t=[A-Za-z0-9._-]+)"#, options: .regularExpression) else {
            return nil
        }
        return String(reply.body[range].dropFirst("https://relay.example.com".count))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let router = Router()
        ConsoleRoutes(relay: relay, tokens: tokens, clock: clock, logger: Logger(label: "console-test")).add(to: router)
        try await Application(router: router).test(.router, body)
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    /// The session cookie this response sets, whole (`rhea_console=…; Max-Age=…; …`).
    var sessionCookie: String? { headers[values: .setCookie].first { $0.hasPrefix("rhea_console=") } }
}

/// What a browser sends back of a `Set-Cookie`: `name=value`.
func cookieHeader(_ setCookie: String) -> String { String(setCookie.prefix { $0 != ";" }) }

/// A form body.
func form(_ fields: [String: String]) -> ByteBuffer {
    ByteBuffer(string: fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&"))
}
