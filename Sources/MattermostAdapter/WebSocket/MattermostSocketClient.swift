import Logging
import NIOWebSocket
import RelayCore
import RelayHTTP
import RelayPlatform
import ServiceLifecycle
import Synchronization
import WSClient

/// Holds the bot's websocket (`GET /api/v4/websocket`) and hands mentions and reactions to
/// `MattermostInbound`, reconnecting with backoff for as long as it runs.
///
/// Each connection: learn who the bot is (`GET /users/me`, once), connect, send the
/// `authentication_challenge` with the bot token, then read frames through
/// `MattermostSocketSession`. A connection that authenticated resets the backoff; a refused
/// token, a refused connection or a dropped one waits the next backoff delay (1 s doubling to
/// 60 s, with jitter) and tries again. Events are handled in order, one at a time: each is a
/// store write (and, for a reaction, one REST read), so none holds the others up for long. The
/// token and the server's frames are never logged. Runs only while this replica holds the
/// `mattermost.websocket` lease (see `MattermostConnection.services`).
struct MattermostSocketClient: Sendable {
    let url: String
    let token: MattermostToken
    let api: any MattermostAPI
    let inbound: MattermostInbound
    let clock: any RelayClock
    /// Told when Mattermost refuses the bot token (a 401, a refused challenge) and when it takes
    /// it again: a refusal is in /readyz and logged once a minute, not at every retry.
    let credentials: CredentialReporter
    let logger: Logger
    var backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(60), jitter: 0.5)
    static let maxFrameBytes = 4 * 1024 * 1024

    /// `https://chat.example.com` → `wss://chat.example.com/api/v4/websocket`.
    static func socketURL(serverURL: String) -> String {
        let lowered = serverURL.lowercased()
        let rest = lowered.hasPrefix("https://") ? "wss://" + serverURL.dropFirst(8) : "ws://" + serverURL.dropFirst(lowered.hasPrefix("http://") ? 7 : 0)
        return rest + "/api/v4/websocket"
    }

    /// Connects and keeps connected until cancelled or a graceful shutdown.
    func run() async {
        await cancelWhenGracefulShutdown {
            var backoff = self.backoff
            var bot: MattermostUser?
            while !Task.isCancelled {
                if bot == nil {
                    do throws(MattermostAPIError) {
                        bot = try await api.me()
                        credentials.accepted("MATTERMOST_BOT_TOKEN")
                    } catch {
                        if error.refusesCredentials {
                            credentials.refused("MATTERMOST_BOT_TOKEN", reason: error.reason)
                        } else {
                            logger.error("mattermost: could not learn who the bot is (GET /users/me); trying again", metadata: ["reason": "\(error.reason)"])
                        }
                    }
                }
                if let bot, await connectOnce(bot: bot) { backoff.reset() }
                guard !Task.isCancelled else { return }
                try? await clock.sleep(for: backoff.next())
            }
        }
    }

    /// One connection, until it closes; true when it authenticated.
    private func connectOnce(bot: MattermostUser) async -> Bool {
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: Self.maxFrameBytes, closeTimeout: .seconds(5), autoPing: .enabled(timePeriod: .seconds(30)), validateUTF8: true)
        let (token, inbound, credentials, logger) = (token, inbound, credentials, logger)
        let authenticated = ReadyFlag()
        do {
            _ = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { frames, outbound, _ in
                var session = MattermostSocketSession()
                try await outbound.write(.text(String(decoding: MattermostSocketSession.challenge(token: token.secret).encoded(), as: UTF8.self)))
                for try await message in frames.messages(maxSize: Self.maxFrameBytes) {
                    guard case .text(let text) = message else { continue }
                    switch session.receive(text) {
                    case .none:
                        continue
                    case .ready:
                        authenticated.raise()
                        credentials.accepted("MATTERMOST_BOT_TOKEN")
                        logger.notice("mattermost: websocket connected and authenticated")
                    case .refused(let reason):
                        credentials.refused("MATTERMOST_BOT_TOKEN", reason: "the websocket refused the bot token (\(reason))")
                        try await outbound.close(.normalClosure, reason: nil)
                        return
                    case .event(let event):
                        await inbound.socketEvent(event, bot: bot)
                    case .dropped(let problem):
                        PayloadDecoding.dropped(problem, platform: "mattermost", logger: logger)
                    }
                }
            }
        } catch {
            // A fixed phrase: an error's own text could quote the URL.
            let reason = (error as? WebSocketClientError).map { "\($0)" } ?? ConnectionFailure.reason(error)
            logger.info("mattermost: websocket failed; reconnecting", metadata: ["reason": "\(reason)"])
        }
        return authenticated.isRaised
    }
}

/// Whether a connection authenticated, set from inside its handler.
private final class ReadyFlag: Sendable {
    private let raised = Mutex(false)
    func raise() { raised.withLock { $0 = true } }
    var isRaised: Bool { raised.withLock { $0 } }
}
